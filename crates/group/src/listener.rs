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

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mooring_client::TopicPartition;
use tokio::time::Instant;
use tracing::{Instrument, Span};

#[cfg(doc)]
use super::GroupConfig;
use crate::assignor::RebalanceProtocol;
use crate::events::{EventSink, GroupEventKind};
use crate::trace;

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

/// One listener call as every member kind makes it: [`Callback::start`] gives the call, in its
/// span, for the member to await with its bound; [`ListenerCall::finish`] traces how it ended and
/// emits its event.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Callback {
    /// `revoked`, in a rebalance of this protocol.
    Revoked(RebalanceProtocol),
    Assigned,
    Lost,
}

/// A listener call under way, for [`ListenerCall::finish`] once the member stops awaiting it.
pub(crate) struct ListenerCall {
    kind: Callback,
    span: Span,
    started: Instant,
    partitions: Vec<TopicPartition>,
}

impl Callback {
    /// The call of `listener` with `partitions`, instrumented with its span.
    pub(crate) fn start<L: RebalanceListener>(
        self,
        listener: Arc<L>,
        partitions: Vec<TopicPartition>,
    ) -> (ListenerCall, impl Future<Output = ()> + Send) {
        let span = match self {
            Callback::Revoked(_) => trace::revoked(partitions.len()),
            Callback::Assigned => trace::assigned(partitions.len()),
            Callback::Lost => trace::lost(partitions.len()),
        };
        let given = partitions.clone();
        let call = async move {
            match self {
                Callback::Revoked(_) => listener.revoked(given).await,
                Callback::Assigned => listener.assigned(given).await,
                Callback::Lost => listener.lost(given).await,
            }
        };
        let under_way = ListenerCall {
            kind: self,
            span: span.clone(),
            started: Instant::now(),
            partitions,
        };
        (under_way, call.instrument(span))
    }
}

impl ListenerCall {
    /// Ends the call (its span closed, a warning when it timed out), emits its event and returns
    /// how long it took; `owned` is the member's assignment after it.
    pub(crate) fn finish(
        self,
        group: &str,
        owned: &BTreeSet<TopicPartition>,
        timed_out: bool,
        events: &EventSink,
    ) -> Duration {
        let ListenerCall {
            kind,
            span,
            started,
            partitions,
        } = self;
        trace::callback_ended(&span, timed_out);
        drop(span);
        let duration = started.elapsed();
        if timed_out {
            tracing::warn!(
                group,
                ?kind,
                ?duration,
                "rebalance listener timed out; going on"
            );
        }
        events.emit(match kind {
            Callback::Revoked(protocol) => GroupEventKind::PartitionsRevoked {
                partitions,
                protocol,
                duration,
                timed_out,
            },
            Callback::Assigned => GroupEventKind::PartitionsAssigned {
                added: partitions,
                assignment: owned.iter().cloned().collect(),
                duration,
                timed_out,
            },
            Callback::Lost => GroupEventKind::PartitionsLost {
                partitions,
                duration,
                timed_out,
            },
        });
        duration
    }
}
