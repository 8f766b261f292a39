//! Rebalance callbacks: how the runtime acts on revoke, assign and lost before the rebalance
//! goes on (KIP-429's `onPartitionsRevoked` / `onPartitionsAssigned` / `onPartitionsLost`).
//!
//! The member awaits each call, bounded by [`GroupConfig::listener_timeout`] (the rebalance
//! timeout, `max.poll.interval.ms`, less two heartbeat intervals) and, while closing, by the
//! close's deadline: a listener that takes longer is dropped (the event says `timed_out`) and the
//! rebalance goes on, in time for the member's JoinGroup to reach the coordinator before it evicts
//! the member. A listener that must undo something when dropped midway does it in a drop guard.
//! While it waits:
//! - heartbeats keep flowing: they run on their own task ([`super::classic::heartbeat`]), which never
//!   waits on the member task nor on the application;
//! - the member keeps reading its command channel (subscribe, metadata change; close is honoured
//!   once the call returns), and `GroupHandle::commit` does not go through the member task at all,
//!   so a listener that commits what finished from inside `revoked` cannot deadlock.
//!
//! Calls: eager protocol — `revoked(everything)` before JoinGroup, `assigned(everything)` after
//! SyncGroup. Cooperative — after SyncGroup `revoked(only what moved away)` (then a second join),
//! and `assigned(only what is new)`. `lost(everything)` when the generation is gone (UNKNOWN_MEMBER_ID,
//! ILLEGAL_GENERATION, FENCED_INSTANCE_ID): the partitions may already belong to someone else and
//! must not be committed.

use std::future::Future;

#[cfg(doc)]
use super::GroupConfig;
use mooring_client::TopicPartition;

/// Rebalance callbacks, the one listener trait of every Mooring crate: the consumer runtime
/// gives the member one, and an application gives the consumer one (as
/// `mooring_consumer::ConsumerRebalanceListener`). Each is awaited with a bound. Every method has
/// a default that does nothing, except `lost`, which calls `revoked` as Java's
/// `onPartitionsLost` does.
///
/// ```
/// use mooring_group::{RebalanceListener, TopicPartition};
///
/// struct Log;
///
/// impl RebalanceListener for Log {
///     async fn assigned(&self, partitions: Vec<TopicPartition>) {
///         println!("assigned {partitions:?}");
///     }
///     async fn revoked(&self, partitions: Vec<TopicPartition>) {
///         println!("revoked {partitions:?}");
///     }
/// }
/// ```
pub trait RebalanceListener: Send + Sync + 'static {
    /// Partitions about to be taken away (cooperative and the `consumer` protocol: only those
    /// moving): stop handing out their records, wait for in-flight work, commit what finished.
    /// The member still holds a valid generation.
    fn revoked(&self, partitions: Vec<TopicPartition>) -> impl Future<Output = ()> + Send {
        let _ = partitions;
        async {}
    }

    /// Partitions newly assigned (cooperative and the `consumer` protocol: only the new ones;
    /// eager: all).
    fn assigned(&self, partitions: Vec<TopicPartition>) -> impl Future<Output = ()> + Send {
        let _ = partitions;
        async {}
    }

    /// Partitions lost without a chance to commit (the generation is gone, or the member epoch
    /// fenced; someone else may own them now).
    fn lost(&self, partitions: Vec<TopicPartition>) -> impl Future<Output = ()> + Send {
        self.revoked(partitions)
    }
}

/// A listener that does nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopListener;

impl RebalanceListener for NoopListener {
    async fn revoked(&self, _: Vec<TopicPartition>) {}
    async fn assigned(&self, _: Vec<TopicPartition>) {}
    async fn lost(&self, _: Vec<TopicPartition>) {}
}
