//! The member's observable state: the seeds' state machine (UNJOINED → PREPARING_REBALANCE →
//! COMPLETING_REBALANCE → STABLE, plus our terminal and fenced states), the partition type the
//! member works with, and the snapshot [`GroupHandle::state`](super::GroupHandle::state) returns.
//!
//! The member task is the only writer; readers get a copy through a `watch` channel, so asking for
//! the state never waits on the member task.

use std::collections::BTreeSet;
use std::sync::Arc;

use mooring_client::TopicPartition;
use mooring_wire::consumer_protocol::TopicPartitions;
use mooring_wire::error_code::ErrorCode;

use super::config::GroupProtocol;
use crate::assignor::RebalanceProtocol;
use mooring_client::error::Error;

/// Flattens the consumer protocol's grouped form.
pub fn flatten(grouped: &[TopicPartitions]) -> BTreeSet<TopicPartition> {
    grouped
        .iter()
        .flat_map(|tp| {
            tp.partitions
                .iter()
                .map(move |&p| TopicPartition::new(tp.topic.clone(), p))
        })
        .collect()
}

/// Groups partitions by topic, topics and partitions sorted (as Java writes owned partitions).
pub fn group_by_topic<'a>(
    partitions: impl IntoIterator<Item = &'a TopicPartition>,
) -> Vec<TopicPartitions> {
    let mut out: Vec<TopicPartitions> = Vec::new();
    let sorted: BTreeSet<&TopicPartition> = partitions.into_iter().collect();
    for tp in sorted {
        match out.last_mut() {
            Some(last) if last.topic == tp.topic => last.partitions.push(tp.partition),
            _ => out.push(TopicPartitions::new(tp.topic.clone(), vec![tp.partition])),
        }
    }
    out
}

/// Where the member is in the group protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    /// Not in the group: before the first `subscribe`, after leaving, or after a fatal error.
    Unjoined,
    /// JoinGroup sent, waiting for every member to join (heartbeats paused).
    PreparingRebalance,
    /// Joined a generation, SyncGroup in flight (the leader assigns first). Heartbeats run.
    CompletingRebalance,
    /// Holding an assignment for the current generation. Heartbeats run.
    Stable,
    /// Another process took this member's `group.instance.id` (KIP-345). Out of the group; with
    /// `RetryAfter` it tries again later, with `Stop` it stays here.
    Fenced,
    /// A non-retriable error stopped the member (for example GROUP_AUTHORIZATION_FAILED or
    /// INCONSISTENT_GROUP_PROTOCOL), with the typed error in [`MemberSnapshot::failure`]. A new
    /// `subscribe` tries again. A request this client could not encode at the negotiated version
    /// stops it as UNSUPPORTED_VERSION (as Java's client raises `UnsupportedVersionException`
    /// for it); an authentication refused as the broker's SASL code, a TLS certificate refused
    /// as SASL_AUTHENTICATION_FAILED (Kafka has no code for it).
    Failed(ErrorCode),
    /// Closed (or left); the task has ended.
    Closed,
}

impl MemberState {
    /// Whether the member holds a generation the coordinator accepts for commits.
    pub fn has_generation(self) -> bool {
        matches!(
            self,
            MemberState::Stable
                | MemberState::PreparingRebalance
                | MemberState::CompletingRebalance
        )
    }
}

/// Where a `consumer`-protocol (KIP-848) member is, as Java's `ConsumerMembershipManager` names
/// its states, plus the wait for a `group.instance.id` still held by the process this one
/// replaces. [`MemberSnapshot::state`] maps them onto [`MemberState`] so the runtime treats both
/// protocols alike: `Unsubscribed` → `Unjoined`, `Joining`/`Fenced`/`InstanceIdUnreleased` →
/// `PreparingRebalance`, `Reconciling`/`Acknowledging` → `CompletingRebalance`, `Stable`/`Stale`
/// → `Stable`, `Leaving` → `Stable` until it has left, `Fatal` → `Failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsumerMemberState {
    /// Not subscribed: nothing is sent.
    Unsubscribed,
    /// The first heartbeat (epoch 0) is on its way, or the member rejoins after being fenced.
    Joining,
    /// A new target assignment is being applied: revoke, then assign.
    Reconciling,
    /// Reconciled; the next heartbeat tells the coordinator what the member owns now.
    Acknowledging,
    /// The coordinator's target assignment is the member's.
    Stable,
    /// FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: partitions lost, the member rejoins at epoch 0.
    Fenced,
    /// The processing loop missed `max.poll.interval.ms`: the member left the group (epoch -1),
    /// released its partitions, and rejoins when processing resumes.
    Stale,
    /// The leave heartbeat (epoch -1, or -2 for a static member) is on its way.
    Leaving,
    /// UNRELEASED_INSTANCE_ID: waiting, with a bounded back-off, for the process this static
    /// member replaces to release its `group.instance.id`.
    InstanceIdUnreleased,
    /// A non-retriable error stopped the member ([`MemberSnapshot::failure`]).
    Fatal,
}

/// Where a share-group member (KIP-932) is, as Java's `ShareMembershipManager` names the states
/// it goes through. A share member has no revocation to acknowledge and no offsets to commit: a
/// new assignment is taken as soon as its topic ids have names. [`MemberSnapshot::state`] maps
/// them onto [`MemberState`]: `Unsubscribed` → `Unjoined`, `Joining`/`Fenced` →
/// `PreparingRebalance`, `Reconciling` → `CompletingRebalance`, `Stable` → `Stable`, `Leaving` →
/// `Stable` until it has left, `Fatal` → `Failed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShareMemberState {
    /// Not subscribed: nothing is sent.
    Unsubscribed,
    /// The first heartbeat (epoch 0) is on its way, or the member rejoins after being fenced.
    Joining,
    /// A new assignment is being taken: topic ids resolved, the listener told.
    Reconciling,
    /// The coordinator's assignment is the member's.
    Stable,
    /// FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID: partitions lost, the member rejoins at epoch 0.
    Fenced,
    /// The leave heartbeat (epoch -1) is on its way.
    Leaving,
    /// A non-retriable error stopped the member ([`MemberSnapshot::failure`]).
    Fatal,
}

/// A copy of the member's state, as `GroupHandle::state` returns it.
#[derive(Debug, Clone)]
pub struct MemberSnapshot {
    /// The state.
    pub state: MemberState,
    /// The member id the coordinator gave (empty before the first JoinGroup).
    pub member_id: String,
    /// `group.instance.id`, if static.
    pub group_instance_id: Option<String>,
    /// The generation (classic) or the member epoch (`consumer`), `-1` when none.
    pub generation: i32,
    /// The group protocol the member speaks.
    pub group_protocol: GroupProtocol,
    /// The `consumer` protocol's own state (`None` for other members).
    pub consumer_state: Option<ConsumerMemberState>,
    /// A share-group member's own state (`None` for other members).
    pub share_state: Option<ShareMemberState>,
    /// The assignor the coordinator picked for the current generation.
    pub protocol_name: Option<String>,
    /// Eager or cooperative (fixed by the configured strategies).
    pub rebalance_protocol: RebalanceProtocol,
    /// The leader's member id in the current generation.
    pub leader_id: Option<String>,
    /// The partitions this member owns now.
    pub assignment: BTreeSet<TopicPartition>,
    /// The topics this member subscribes to.
    pub subscription: BTreeSet<String>,
    /// The error that stopped the member (`Failed`): the broker's code as an error (an
    /// [`Error::Authorization`] naming the group and the principal for
    /// GROUP_AUTHORIZATION_FAILED), or this client's fatal failure ([`Error::is_fatal`]: a
    /// request it cannot encode, an authentication or TLS handshake refused).
    pub failure: Option<Arc<Error>>,
}

/// Field by field; failures are the same when they are the same failure (the member publishes
/// each one once), as the error type itself has no equality.
impl PartialEq for MemberSnapshot {
    fn eq(&self, other: &Self) -> bool {
        let same_failure = match (&self.failure, &other.failure) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        same_failure
            && self.state == other.state
            && self.member_id == other.member_id
            && self.group_instance_id == other.group_instance_id
            && self.generation == other.generation
            && self.group_protocol == other.group_protocol
            && self.consumer_state == other.consumer_state
            && self.share_state == other.share_state
            && self.protocol_name == other.protocol_name
            && self.rebalance_protocol == other.rebalance_protocol
            && self.leader_id == other.leader_id
            && self.assignment == other.assignment
            && self.subscription == other.subscription
    }
}

impl MemberSnapshot {
    /// Whether this member leads the current generation.
    pub fn is_leader(&self) -> bool {
        self.leader_id.as_deref() == Some(self.member_id.as_str()) && !self.member_id.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_by_topic_sorts_and_groups() {
        let parts = [
            TopicPartition::new("b", 1),
            TopicPartition::new("a", 2),
            TopicPartition::new("a", 0),
        ];
        let grouped = group_by_topic(parts.iter());
        assert_eq!(
            grouped,
            vec![
                TopicPartitions::new("a", vec![0, 2]),
                TopicPartitions::new("b", vec![1])
            ]
        );
        assert_eq!(flatten(&grouped), parts.into_iter().collect());
    }
}
