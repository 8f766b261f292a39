//! mooring-client: the Kafka network client.
//!
//! Async broker connections (tokio) with TLS and SASL, ApiVersions negotiation, metadata,
//! FindCoordinator, the requests every client sends, the admin look-ups (DescribeGroups,
//! ListGroups, OffsetFetch, ListOffsets), the budget for the record data a consumer holds, and
//! the partition type every Mooring crate uses ([`TopicPartition`]).
//!
//! It depends on `mooring-wire` for every byte it sends or reads and never on the group member
//! (`mooring-group`), the consumer runtime or the sidecar: arrows only point down.

pub mod admin;
pub mod client;
pub mod config;
pub mod conn;
pub mod error;
pub mod metadata;
pub mod offsets;
mod principal;
pub mod requests;
pub mod topic;

/// The README's examples, compiled by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use client::Client;
pub use client::CoordinatorCall;
pub use config::ClientConfig;
pub use error::{Error, Result};
pub use offsets::{OffsetAndMetadata, OffsetAndTimestamp, OffsetSpec};
pub use topic::{PartitionsPerTopic, TopicPartition};
