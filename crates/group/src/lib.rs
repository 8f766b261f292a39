//! mooring-group: the consumer group member, behind one handle whichever group protocol it speaks
//! (`group.protocol`):
//!
//! - [`classic`]: JoinGroup → SyncGroup → Heartbeat → LeaveGroup, the client-side assignors,
//!   eager and cooperative rebalancing, static membership (KIP-345);
//! - [`consumer`]: KIP-848's ConsumerGroupHeartbeat, the broker assigns and the member
//!   reconciles;
//! - [`share`]: KIP-932's ShareGroupHeartbeat, the broker assigns share-partitions that several
//!   members consume at once (records are acknowledged by the runtime, not committed).
//!
//! All three share the handle ([`GroupHandle`]: subscribe, commit, committed, state, close; a
//! share member refuses commits), the events ([`events`]), the rebalance listener contract
//! ([`listener`]), the commit path ([`offsets`]) and the style of their error tables
//! ([`reaction`]). The classic protocol's
//! client-side assignors are in [`assignor`]; the member reaches the broker through
//! [`GroupTransport`], which `mooring_client::Client` implements.
//!
//! It depends on `mooring-client` for the network and never on the consumer runtime or the
//! sidecar: arrows only point down.
//!
//! # Example
//!
//! ```no_run
//! # async fn demo<T: mooring_group::GroupTransport>(transport: std::sync::Arc<T>) -> mooring_client::Result<()> {
//! use std::collections::BTreeMap;
//! use mooring_group::{GroupConfig, GroupMember, NoopListener, OffsetAndMetadata, TopicPartition};
//!
//! let member = GroupMember::spawn(transport, GroupConfig::new("orders"), NoopListener)?;
//! member.subscribe(["orders"]).await?;
//! // ... once assigned and some records processed:
//! member.commit(BTreeMap::from([(TopicPartition::new("orders", 0), OffsetAndMetadata::new(42))])).await?;
//! println!("{:?}", member.state());
//! member.close().await?;
//! # Ok(()) }
//! ```

pub mod assignor;
mod by_topic_id;
pub mod classic;
mod command;
pub mod config;
pub mod consumer;
mod control;
pub mod events;
mod handle;
mod leave;
pub mod listener;
mod member_id;
pub mod offsets;
pub mod reaction;
mod requests;
pub mod share;
pub mod state;
mod trace;
pub mod transport;

pub use config::{FencedPolicy, GroupConfig, GroupProtocol};
pub use events::{
    EventReceiver, EventSink, GroupEvent, GroupEventKind, PhaseTimings, RebalanceCause,
    ReconcileTimings,
};
pub use handle::{GroupHandle, GroupMember, WeakGroupHandle};
pub use listener::{NoopListener, RebalanceListener};
pub use mooring_client::OffsetAndMetadata;
pub use mooring_client::TopicPartition;
pub use state::{ConsumerMemberState, MemberSnapshot, MemberState, ShareMemberState};
pub use transport::GroupTransport;

/// The README's examples, compiled by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
