//! Typed, timed events of the group member, for the consumer runtime and the sidecar.
//!
//! Every phase of a rebalance (started with its cause, revoked, joined, synced, assigned, lost,
//! completed or failed with phase durations), every heartbeat and commit, fencing and leaving is an
//! event. They go to a bounded channel and the member never waits on it: when the channel is full
//! the event is dropped and counted ([`EventSink::dropped`]), so a slow or absent consumer of
//! events never slows the heartbeat or the rebalance.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use mooring_wire::error_code::ErrorCode;
use tokio::sync::mpsc;

use super::config::FencedPolicy;
use crate::assignor::RebalanceProtocol;
use mooring_client::TopicPartition;

/// Why a rebalance started: a closed set, the one cause type of every Mooring crate. Its
/// snake_case names (`member_joined`, ...) are the telemetry schema's wire values and the
/// sidecar's `cause` label values, so a variant is never renamed, only added.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum RebalanceCause {
    /// A member joined: this one (its first join, or after leaving or losing its member id), or
    /// another one (the coordinator answered REBALANCE_IN_PROGRESS; the protocol does not say
    /// who caused it, so this is the usual reading and the sidecar refines it from
    /// DescribeGroups).
    MemberJoined,
    /// A member left (reported by the runtime or the sidecar; the member itself cannot tell).
    MemberLeft,
    /// The coordinator forgot this member (UNKNOWN_MEMBER_ID): its session expired.
    SessionTimeout,
    /// The processing loop missed `max.poll.interval.ms` (KIP-62).
    PollIntervalExceeded,
    /// Partition counts of subscribed topics changed (leader's check).
    MetadataChange,
    /// The coordinator moved and the membership could not be kept.
    CoordinatorMoved,
    /// The member's generation was fenced (ILLEGAL_GENERATION), or it rejoins after
    /// FENCED_INSTANCE_ID.
    Fenced,
    /// The application changed its subscription.
    SubscriptionChange,
    /// The cooperative protocol's follow-up join after revoking partitions (KIP-429).
    CooperativeFollowUp,
    /// Anything else (also, for the sidecar: a completion whose start was not seen).
    Unknown,
    /// `consumer` protocol: the coordinator fenced this member's epoch (FENCED_MEMBER_EPOCH,
    /// UNKNOWN_MEMBER_ID): its partitions are lost and it rejoins at epoch 0.
    EpochFenced,
    /// `consumer` protocol: a static member's `group.instance.id` is still held by the process
    /// it replaces (UNRELEASED_INSTANCE_ID); it joins once that one releases it.
    InstanceIdUnreleased,
}

impl RebalanceCause {
    /// Every cause, in label order.
    pub const ALL: [RebalanceCause; 12] = [
        RebalanceCause::MemberJoined,
        RebalanceCause::MemberLeft,
        RebalanceCause::SessionTimeout,
        RebalanceCause::PollIntervalExceeded,
        RebalanceCause::MetadataChange,
        RebalanceCause::CoordinatorMoved,
        RebalanceCause::Fenced,
        RebalanceCause::SubscriptionChange,
        RebalanceCause::CooperativeFollowUp,
        RebalanceCause::Unknown,
        RebalanceCause::EpochFenced,
        RebalanceCause::InstanceIdUnreleased,
    ];

    /// The label value (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            RebalanceCause::MemberJoined => "member_joined",
            RebalanceCause::MemberLeft => "member_left",
            RebalanceCause::SessionTimeout => "session_timeout",
            RebalanceCause::PollIntervalExceeded => "poll_interval_exceeded",
            RebalanceCause::MetadataChange => "metadata_change",
            RebalanceCause::CoordinatorMoved => "coordinator_moved",
            RebalanceCause::Fenced => "fenced",
            RebalanceCause::SubscriptionChange => "subscription_change",
            RebalanceCause::CooperativeFollowUp => "cooperative_follow_up",
            RebalanceCause::Unknown => "unknown",
            RebalanceCause::EpochFenced => "epoch_fenced",
            RebalanceCause::InstanceIdUnreleased => "instance_id_unreleased",
        }
    }
}

/// Durations of the phases of one rebalance.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhaseTimings {
    /// Time spent in the revoke (or lost) listener before joining.
    pub revoke: Duration,
    /// JoinGroup round trips, including retries.
    pub join: Duration,
    /// Leader's assignment (metadata and assignor), zero for followers.
    pub assign: Duration,
    /// SyncGroup round trip.
    pub sync: Duration,
    /// Listener calls after SyncGroup (cooperative revoke and assigned).
    pub callbacks: Duration,
}

/// Durations of the phases of one reconciliation (`consumer` protocol): the member revokes what
/// its new target assignment no longer holds, then takes what it adds, then acknowledges both in
/// its next heartbeat.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReconcileTimings {
    /// The revoke: handlers of revoked partitions drained, what finished committed, the listener.
    pub revoke: Duration,
    /// Topic ids resolved to names, the listener's `assigned`.
    pub assign: Duration,
    /// From the end of the assign to the heartbeat answer that acknowledged the assignment.
    pub acknowledge: Duration,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum GroupEventKind {
    /// A rebalance started.
    RebalanceStarted {
        cause: RebalanceCause,
        /// The generation held when it started (`-1` if none).
        generation: i32,
        protocol: RebalanceProtocol,
    },
    /// The listener was told partitions are revoked (eager: all, before JoinGroup; cooperative:
    /// only those moving away, after SyncGroup).
    PartitionsRevoked {
        partitions: Vec<TopicPartition>,
        protocol: RebalanceProtocol,
        duration: Duration,
        timed_out: bool,
    },
    /// JoinGroup succeeded.
    Joined {
        generation: i32,
        member_id: String,
        leader: bool,
        protocol_name: String,
        join_time: Duration,
    },
    /// SyncGroup succeeded.
    Synced {
        generation: i32,
        sync_time: Duration,
    },
    /// The listener was told of newly assigned partitions; `assignment` is everything owned now.
    PartitionsAssigned {
        added: Vec<TopicPartition>,
        assignment: Vec<TopicPartition>,
        duration: Duration,
        timed_out: bool,
    },
    /// Partitions were lost (the generation is gone: no commit is possible for them).
    PartitionsLost {
        partitions: Vec<TopicPartition>,
        duration: Duration,
        timed_out: bool,
    },
    /// The rebalance finished: the member is stable in `generation`.
    RebalanceCompleted {
        generation: i32,
        total: Duration,
        phases: PhaseTimings,
    },
    /// KIP-345: this process, a static member (`group.instance.id`) joining for the first time,
    /// took its previous process's place in a Stable group without a rebalance: the coordinator
    /// answered JoinGroup in the group's current generation and SyncGroup with the assignment the
    /// instance held. Nothing moved for the other members, so it is not a rebalance: no
    /// `RebalanceStarted`/`RebalanceCompleted` surround it (`Joined`, `Synced` and
    /// `PartitionsAssigned` come before it as in a rebalance). The member expects it when, before
    /// joining, DescribeGroups shows the group Stable with its instance id among the members and
    /// a protocol it offers (then the coordinator does not rebalance); if the join fails instead,
    /// the usual `RebalanceStarted` (cause `MemberJoined`) comes before the `RebalanceFailed`.
    StaticRejoin {
        generation: i32,
        /// From the start (the DescribeGroups) to the assignment handed to the listener.
        total: Duration,
        phases: PhaseTimings,
    },
    /// An attempt failed; the member retries (or stops, per the error table).
    RebalanceFailed {
        error: String,
        code: Option<ErrorCode>,
        total: Duration,
        phases: PhaseTimings,
    },
    /// A heartbeat round trip.
    Heartbeat {
        generation: i32,
        latency: Duration,
        error: Option<String>,
    },
    /// An OffsetCommit (after its retries).
    Commit {
        generation: i32,
        latency: Duration,
        partitions: usize,
        error: Option<String>,
    },
    /// FENCED_INSTANCE_ID: another process holds this `group.instance.id`.
    Fenced {
        instance_id: String,
        policy: FencedPolicy,
        /// When the member tries again (`None`: it does not).
        retry_in: Option<Duration>,
    },
    /// `consumer` protocol: the member reconciled a new target assignment from the coordinator:
    /// `revoked` and `added` are what moved at this epoch bump (either may be empty).
    Reconciled {
        /// The member epoch the assignment came with.
        member_epoch: i32,
        added: Vec<TopicPartition>,
        revoked: Vec<TopicPartition>,
        /// From the heartbeat answer carrying the assignment to its acknowledgement.
        total: Duration,
        phases: ReconcileTimings,
    },
    /// `consumer` protocol: UNRELEASED_INSTANCE_ID, the process this static member replaces still
    /// holds `instance_id`. The member tries again after `retry_in`; `None`: the bound
    /// (`mooring.unreleased.instance.timeout.ms`) has passed and the member fails.
    InstanceIdUnreleased {
        instance_id: String,
        attempt: u32,
        retry_in: Option<Duration>,
    },
    /// The member left the group (or closed without leaving, for a static member).
    Left {
        sent_leave_group: bool,
        error: Option<String>,
    },
}

/// An event with its wall-clock time.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupEvent {
    /// When it happened.
    pub at: SystemTime,
    /// What happened.
    pub kind: GroupEventKind,
}

/// The receiving side of an event channel: the member's events by default, for the runtime or
/// the telemetry exporter; the consumer's and the processing engine's streams are the same
/// channel of their own event types.
pub type EventReceiver<E = GroupEvent> = mpsc::Receiver<E>;

/// The sending side of an event channel: never blocks, counts what it drops. Every event stream
/// of Mooring (the member's, the processing engine's, the consumer's) is one of these.
pub struct EventSink<E = GroupEvent> {
    tx: mpsc::Sender<E>,
    dropped: Arc<AtomicU64>,
}

impl<E> EventSink<E> {
    /// A sink and its receiver, `capacity` events deep (at least one).
    pub fn channel(capacity: usize) -> (EventSink<E>, EventReceiver<E>) {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        (
            EventSink {
                tx,
                dropped: Arc::new(AtomicU64::new(0)),
            },
            rx,
        )
    }

    /// Sends `event` if there is room; otherwise drops and counts it.
    pub fn send(&self, event: E) {
        if self.tx.try_send(event).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Events dropped because the channel was full (or nobody listens).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl EventSink<GroupEvent> {
    /// Sends what happened, stamped with the time now (see [`EventSink::send`]).
    pub fn emit(&self, kind: GroupEventKind) {
        self.send(GroupEvent {
            at: SystemTime::now(),
            kind,
        });
    }
}

// By hand: a derive would ask `E: Clone` / `E: Debug` of the events, which a sink never copies
// or prints.
impl<E> Clone for EventSink<E> {
    fn clone(&self) -> Self {
        EventSink {
            tx: self.tx.clone(),
            dropped: Arc::clone(&self.dropped),
        }
    }
}

impl<E> std::fmt::Debug for EventSink<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink")
            .field("capacity", &self.tx.max_capacity())
            .field("dropped", &self.dropped())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_channel_drops_and_counts() {
        let (sink, mut rx) = EventSink::channel(1);
        let left = || GroupEventKind::Left {
            sent_leave_group: false,
            error: None,
        };
        sink.emit(left());
        sink.emit(left());
        assert_eq!(sink.dropped(), 1);
        assert!(rx.try_recv().is_ok());
        assert!(rx.try_recv().is_err());
    }
}
