//! mooring-coordinator: the Kafka group coordinator client.
//!
//! Async broker connections (tokio), metadata, FindCoordinator, the group membership state machine
//! (JoinGroup → SyncGroup → Heartbeat → LeaveGroup, generations, eager and cooperative
//! rebalancing, static membership), the partition assignors, offset commit/fetch and the admin
//! look-ups the sidecar needs.
//!
//! It depends on `mooring-wire` for every byte it sends or reads and must never depend on the
//! consumer runtime (`mooring-consumer`) or the sidecar: arrows only point down.

pub mod admin;
pub mod assignor;
pub mod client;
pub mod config;
pub mod conn;
pub mod error;
pub mod group;
pub mod metadata;
mod principal;
pub(crate) mod requests;
pub mod transport;

/// The README's examples, compiled by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub use client::Client;
pub use config::ClientConfig;
pub use error::{Error, Result};
pub use transport::{CoordinatorCall, GroupTransport};
