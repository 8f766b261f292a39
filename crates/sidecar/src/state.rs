//! What the sidecar knows: the member (from its events and snapshots), the rebalance in progress
//! and the recent ones, rolling windows for the counted alerts, the group and lag as the broker
//! sees them, and when each loop last made progress. One `std` mutex guards it; no handler holds
//! it across an `.await`.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use mooring_telemetry_schema::{MemberIdentity, Phases, RebalanceCause, Snapshot, TopicPartition};
use serde::Serialize;

use crate::lag::LagSamples;

/// The member as its events describe it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MemberView {
    /// The member id.
    pub member_id: String,
    /// The generation (`-1`: none).
    pub generation: i32,
    /// Leads the generation.
    pub leader: bool,
    /// Has joined (and not left since).
    pub joined: bool,
    /// No rebalance in progress since the last completion.
    pub stable: bool,
    /// Partitions owned now.
    pub assignment: Vec<TopicPartition>,
    /// Was fenced (FENCED_INSTANCE_ID) and has not rejoined.
    pub fenced: bool,
    /// The fatal error the consumer stopped on (its `run` returned it), until a new consumer
    /// process reports.
    pub fatal_error: Option<FatalErrorView>,
    /// `classic` or `consumer` (`group.protocol`, as the member's lines say; `classic` when they
    /// do not, as an older consumer's).
    pub group_protocol: String,
    /// A `consumer`-protocol member's own state, from its last snapshot.
    pub consumer_state: Option<String>,
    /// The member's current epoch (`consumer` protocol; `-1`: none).
    pub member_epoch: i32,
    /// Reconciliations (`consumer` protocol), those that moved nothing included.
    pub reconciliations: u64,
    /// The wait for a `group.instance.id` still held by the process this member replaces
    /// (UNRELEASED_INSTANCE_ID), while it lasts.
    pub instance_id_unreleased: Option<InstanceWait>,
}

impl MemberView {
    /// Whether the member speaks the `consumer` protocol.
    pub fn is_consumer(&self) -> bool {
        self.group_protocol == "consumer"
    }

    /// Whether the member is a share consumer's (KIP-932).
    pub fn is_share(&self) -> bool {
        self.group_protocol == "share"
    }
}

/// A static member waiting for its `group.instance.id` (`consumer` protocol).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstanceWait {
    /// The instance id.
    pub instance_id: String,
    /// The last refused attempt (from 1; 0 when only a snapshot said the member waits).
    pub attempt: u32,
    /// When the member tries again (`None`: it gave up, its bound passed).
    pub retry_in_seconds: Option<f64>,
    /// When the first refusal was seen, ms since the epoch.
    pub since_ms: u64,
    /// The same, for durations.
    #[serde(skip)]
    pub since: Instant,
}

impl InstanceWait {
    /// The member still waits (it has not given up).
    pub fn waiting(&self) -> bool {
        self.retry_in_seconds.is_some()
    }

    /// Seconds since the first refusal.
    pub fn waited_seconds(&self, now: Instant) -> f64 {
        now.saturating_duration_since(self.since).as_secs_f64()
    }
}

/// A consumer's fatal error, as its `fatal_error` event said it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FatalErrorView {
    /// The kind (a `mooring_consumer_fatal_error` label value).
    pub kind: String,
    /// The error, as the consumer's `run` returned it.
    pub message: String,
    /// When, ms since the epoch.
    pub at_ms: u64,
    /// The event's sequence number: a lower one afterwards is a new exporter (a new process).
    #[serde(skip)]
    pub seq: u64,
}

/// A rebalance that started and has not ended.
#[derive(Debug, Clone)]
pub struct Pending {
    /// The cause the member reported.
    pub cause: RebalanceCause,
    /// Start time, ms since the epoch.
    pub started_ms: u64,
    /// Start, for durations.
    pub started: Instant,
    /// The generation before.
    pub generation_before: i32,
    /// `eager` or `cooperative`.
    pub protocol: String,
    /// The assignment before.
    pub assignment_before: Vec<TopicPartition>,
    /// Revoked during it.
    pub revoked: Vec<TopicPartition>,
    /// Newly assigned during it.
    pub assigned: Vec<TopicPartition>,
    /// Lost during it.
    pub lost: Vec<TopicPartition>,
    /// The group's members (ids) in the broker's last Stable view before it started.
    pub members_before: Option<BTreeSet<String>>,
}

/// What a `consumer`-protocol member said before its next reconciliation: the cause of the
/// rebalance it started, and whether it waited for its instance id.
#[derive(Debug, Clone, Default)]
pub struct ReconcileContext {
    /// The cause of the last `rebalance_started`, the member epoch held before it (see
    /// [`State::heartbeat_epoch`]), and when it happened (ms since the epoch, the member's
    /// clock: its lines may arrive later than the broker watch's views of what followed).
    pub started: Option<(RebalanceCause, i32, u64)>,
    /// An `instance_id_unreleased` came since the last reconciliation, the first one at this
    /// time (ms since the epoch).
    pub waited_since_ms: Option<u64>,
}

/// A `consumer`-protocol reconciliation in `/debug/rebalances`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ReconcileRecord {
    /// The member epoch before.
    pub member_epoch_before: i32,
    /// The member epoch the assignment came with: a revoke's is the epoch before (the
    /// coordinator moves a member to the new epoch once it has revoked).
    pub member_epoch: i32,
    /// Revoke, assign and acknowledge phases.
    pub phases: mooring_telemetry_schema::ReconcilePhases,
}

/// One finished rebalance, for `/debug/rebalances`.
#[derive(Debug, Clone, Serialize)]
pub struct RebalanceRecord {
    /// Increasing number, from 1.
    pub seq: u64,
    /// The cause used for the metrics (refined, see [`refine_cause`]).
    pub cause: RebalanceCause,
    /// The cause the member reported.
    pub reported_cause: RebalanceCause,
    /// `completed` or `failed`.
    pub outcome: &'static str,
    /// The error of a failed attempt.
    pub error: Option<String>,
    /// Start, ms since the epoch (0 when the start was not seen).
    pub started_ms: u64,
    /// End, ms since the epoch.
    pub ended_ms: u64,
    /// The generation before (`-1`: none).
    pub generation_before: i32,
    /// The generation after (completed only).
    pub generation: Option<i32>,
    /// `eager` or `cooperative`.
    pub protocol: String,
    /// Start to end.
    pub total_seconds: f64,
    /// Phase timings.
    pub phases: Phases,
    /// Revoked.
    pub revoked: Vec<TopicPartition>,
    /// Newly assigned.
    pub assigned: Vec<TopicPartition>,
    /// Lost.
    pub lost: Vec<TopicPartition>,
    /// Owned after.
    pub assignment: Vec<TopicPartition>,
    /// What the cause rests on: `member` (the member's own report), `broker_view` (members
    /// before vs after in DescribeGroups), `assignment` (the member's own assignment: no broker
    /// view), or `pending` (completed, waiting for the broker's view; not counted yet).
    pub cause_basis: &'static str,
    /// Members in the broker's view after and not before.
    pub members_joined: Vec<String>,
    /// Members in the broker's view before and not after.
    pub members_left: Vec<DepartedMember>,
    /// `consumer` protocol: the reconciliation (member epochs and phases); `None` for a classic
    /// rebalance.
    pub reconciliation: Option<ReconcileRecord>,
}

/// A member that left, as the broker watch saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DepartedMember {
    /// Its member id.
    pub member_id: String,
    /// How long its partitions' committed offsets stood still while records waited, up to its
    /// last sighting (0: it kept up, or was never seen with partitions).
    pub stalled_seconds: f64,
}

/// What the broker watch tracks of one member (also kept a while after it is gone).
#[derive(Debug, Clone)]
pub struct MemberWatch {
    /// Its partitions in the last Stable view.
    pub partitions: Vec<TopicPartition>,
    /// Their committed offsets then.
    pub committed: BTreeMap<TopicPartition, i64>,
    /// Last time it was listed.
    pub last_seen: Instant,
    /// Last time its commits moved or it had nothing waiting (or it got new partitions).
    pub last_progress: Instant,
    /// When it was first missing from a view.
    pub gone: Option<Instant>,
}

impl MemberWatch {
    /// Stood still while records waited, up to the last sighting.
    pub fn stalled(&self) -> Duration {
        self.last_seen.saturating_duration_since(self.last_progress)
    }
}

/// A completed rebalance waiting for the broker's view to name its cause.
#[derive(Debug, Clone)]
pub struct Unclassified {
    /// Its record's `seq`.
    pub seq: u64,
    /// Completion.
    pub ended: Instant,
    /// Members before.
    pub members_before: BTreeSet<String>,
    /// The assignment-based fallback cause.
    pub fallback: RebalanceCause,
    /// `consumer` protocol: the member epochs before and after; the cause then comes from the
    /// group's members at those group epochs ([`State::epoch_views`]) instead of the Stable
    /// views.
    pub epochs: Option<(i32, i32)>,
}

/// [`GroupView::group_type`] of a classic group (DescribeGroups).
pub const GROUP_TYPE_CLASSIC: &str = "classic";
/// [`GroupView::group_type`] of a `consumer`-protocol group (ConsumerGroupDescribe).
pub const GROUP_TYPE_CONSUMER: &str = "consumer";
/// [`GroupView::group_type`] of a share group (ShareGroupDescribe).
pub const GROUP_TYPE_SHARE: &str = "share";

/// The group as DescribeGroups (classic) or ConsumerGroupDescribe (`consumer`) shows it.
#[derive(Debug, Clone, Serialize)]
pub struct GroupView {
    /// The group state (classic: `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty`,
    /// `Dead`; `consumer`: `Stable`, `Assigning`, `Reconciling`, `Empty`, `Dead`).
    pub state: String,
    /// The assignor (the one the classic leader picked, or the broker's).
    pub protocol: String,
    /// Members.
    pub members: Vec<GroupMemberView>,
    /// When it was read, ms since the epoch.
    pub observed_ms: u64,
    /// [`GROUP_TYPE_CLASSIC`], [`GROUP_TYPE_CONSUMER`] or [`GROUP_TYPE_SHARE`]: which look-up
    /// described it.
    pub group_type: &'static str,
    /// The group epoch (`consumer` and share groups).
    pub group_epoch: Option<i32>,
    /// The target assignment's epoch (`consumer` and share groups).
    pub assignment_epoch: Option<i32>,
}

/// One member in a [`GroupView`].
#[derive(Debug, Clone, Serialize)]
pub struct GroupMemberView {
    /// Member id.
    pub member_id: String,
    /// Instance id.
    pub instance_id: Option<String>,
    /// Client id.
    pub client_id: String,
    /// Client host.
    pub host: String,
    /// Assigned partitions (a classic group lists them only when Stable).
    pub partitions: Vec<TopicPartition>,
    /// Its member epoch (`consumer` groups; `-2`: a static member that left, its assignment held
    /// for its return until its session expires).
    pub member_epoch: Option<i32>,
    /// The topics it subscribed to by name.
    pub subscribed_topics: Vec<String>,
    /// Its broker-side regex subscription (`consumer` groups).
    pub subscribed_regex: Option<String>,
    /// What the coordinator wants it to own (`consumer` groups).
    pub target_partitions: Option<Vec<TopicPartition>>,
}

impl GroupMemberView {
    /// Who the member is across its processes: its `group.instance.id`, else its member id (a
    /// static member's replacement keeps the instance id under a new member id).
    pub fn key(&self) -> &str {
        self.instance_id.as_deref().unwrap_or(&self.member_id)
    }
}

/// The members of a `consumer` group at one group epoch, as the first view that showed that
/// epoch listed them (the epoch moves whenever the membership or a subscription changes).
#[derive(Debug, Clone, PartialEq)]
pub struct EpochView {
    /// Each member by [`GroupMemberView::key`].
    pub members: BTreeMap<String, EpochMember>,
    /// When that view's answer came back, ms since the epoch.
    pub answered_ms: u64,
}

/// One member in an [`EpochView`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EpochMember {
    /// Its member id then (the watch follows progress by member id).
    pub member_id: String,
    /// Its subscription: topic names sorted, then `regex:` and its regex if any.
    pub subscription: Vec<String>,
}

/// How many group epochs [`State::epoch_views`] keeps.
pub const EPOCH_VIEWS_KEPT: usize = 64;

/// Lag of one partition, from the broker's committed offset and log end.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PartitionLag {
    /// Committed offset (none: never committed).
    pub committed: Option<i64>,
    /// The log end (high watermark).
    pub end: Option<i64>,
    /// Records behind.
    pub lag_records: i64,
    /// Estimated seconds behind.
    pub lag_seconds: f64,
    /// The member that owns the partition, by its `group.instance.id` (else its member id), from
    /// the last Stable DescribeGroups (the broker lists no assignments while it rebalances).
    /// Never for a share group, whose partitions every member may fetch.
    pub owner: Option<String>,
    /// A share group's share-partition start offset (DescribeShareGroupOffsets); `committed`
    /// is the same then, and the lag is the broker's share-partition lag.
    pub start_offset: Option<i64>,
}

/// Everything, behind one mutex.
#[derive(Debug)]
pub struct State {
    /// When the sidecar started.
    pub started: Instant,
    /// The member's identity from its last line.
    pub identity: Option<MemberIdentity>,
    /// When the last line arrived.
    pub last_event: Option<Instant>,
    /// The last snapshot and when it arrived.
    pub snapshot: Option<(Instant, Snapshot)>,
    /// The member.
    pub member: MemberView,
    /// The rebalance in progress.
    pub pending: Option<Pending>,
    /// The cause of a failed attempt, for a completion that follows without a new start.
    pub carried_cause: Option<RebalanceCause>,
    /// Recent rebalances, oldest first, at most `rebalances.history`.
    pub history: VecDeque<RebalanceRecord>,
    /// The history's cap.
    pub history_cap: usize,
    /// Numbering for records.
    pub next_seq: u64,
    /// Completion times of rebalances (pruned to the alert window).
    pub rebalance_times: VecDeque<Instant>,
    /// Fencing times (pruned to the alert window).
    pub fenced_times: VecDeque<Instant>,
    /// The last completed rebalance's duration.
    pub last_rebalance_seconds: f64,
    /// The drop total the consumer last reported.
    pub dropped_seen: u64,
    /// Lines skipped (unknown type or malformed).
    pub skipped_lines: u64,
    /// The group from the broker.
    pub group: Option<GroupView>,
    /// Lag per partition.
    pub lag: BTreeMap<TopicPartition, PartitionLag>,
    /// Log-end samples per partition, for time lag.
    pub samples: BTreeMap<TopicPartition, LagSamples>,
    /// When the broker watch loop last ran (success or not).
    pub watch_tick: Option<Instant>,
    /// Its last error.
    pub watch_error: Option<String>,
    /// Member ids of the last view in state Stable, and when it was read.
    pub last_stable_members: Option<(Instant, BTreeSet<String>)>,
    /// Per member id, what the watch saw of its progress.
    pub member_watch: BTreeMap<String, MemberWatch>,
    /// Completed rebalances waiting for the broker's view, oldest first.
    pub unclassified: VecDeque<Unclassified>,
    /// Partitions lost outside a rebalance (an expired member loses everything, then rejoins):
    /// they go to the next one.
    pub lost_before_start: Vec<TopicPartition>,
    /// A `consumer` group's members per group epoch, the last [`EPOCH_VIEWS_KEPT`] epochs seen.
    pub epoch_views: BTreeMap<i32, EpochView>,
    /// What the `consumer`-protocol member said since its last reconciliation.
    pub reconcile: ReconcileContext,
    /// The epoch of the `consumer`-protocol member's last answered heartbeat: the answer that
    /// brings a new assignment with a new epoch follows a heartbeat sent with the one before.
    pub heartbeat_epoch: Option<i32>,
    /// When the last event that moved the member's epoch or its wait happened (ms since the
    /// epoch, the member's clock): a snapshot taken before it, which can reach the sidecar after
    /// it, does not undo it.
    pub member_event_ms: u64,
    /// A share consumer and its group (KIP-932).
    pub share: crate::share::view::ShareView,
    /// The group's commit windows and what the member said of its partitions, for the lag
    /// status.
    pub lag_status: crate::lag_status::LagStatusState,
    /// The scaling signal and what it is computed from.
    pub scaling: crate::scaling::ScalingState,
}

impl State {
    /// Empty state.
    pub fn new(history_cap: usize) -> State {
        State {
            started: Instant::now(),
            identity: None,
            last_event: None,
            snapshot: None,
            member: MemberView {
                generation: -1,
                member_epoch: -1,
                group_protocol: "classic".to_string(),
                ..MemberView::default()
            },
            pending: None,
            carried_cause: None,
            history: VecDeque::new(),
            history_cap: history_cap.max(1),
            next_seq: 1,
            rebalance_times: VecDeque::new(),
            fenced_times: VecDeque::new(),
            last_rebalance_seconds: 0.0,
            dropped_seen: 0,
            skipped_lines: 0,
            group: None,
            lag: BTreeMap::new(),
            samples: BTreeMap::new(),
            watch_tick: None,
            watch_error: None,
            last_stable_members: None,
            member_watch: BTreeMap::new(),
            unclassified: VecDeque::new(),
            lost_before_start: Vec::new(),
            epoch_views: BTreeMap::new(),
            reconcile: ReconcileContext::default(),
            heartbeat_epoch: None,
            member_event_ms: 0,
            share: crate::share::view::ShareView::default(),
            lag_status: crate::lag_status::LagStatusState::default(),
            scaling: crate::scaling::ScalingState::default(),
        }
    }

    /// Keeps the members a `consumer` group had at `epoch`, from the first view that showed it.
    pub fn record_epoch_view(&mut self, epoch: i32, members: &[GroupMemberView], answered_ms: u64) {
        self.epoch_views.entry(epoch).or_insert_with(|| EpochView {
            members: members
                .iter()
                .map(|m| {
                    let mut subscription = m.subscribed_topics.clone();
                    subscription.sort();
                    subscription.extend(m.subscribed_regex.iter().map(|r| format!("regex:{r}")));
                    let member = EpochMember {
                        member_id: m.member_id.clone(),
                        subscription,
                    };
                    (m.key().to_string(), member)
                })
                .collect(),
            answered_ms,
        });
        while self.epoch_views.len() > EPOCH_VIEWS_KEPT {
            self.epoch_views.pop_first();
        }
    }

    /// Adds a record, keeping the cap; returns its `seq`.
    pub fn push_record(&mut self, mut record: RebalanceRecord) -> u64 {
        let seq = self.next_seq;
        record.seq = seq;
        self.next_seq += 1;
        while self.history.len() >= self.history_cap {
            self.history.pop_front();
        }
        self.history.push_back(record);
        seq
    }

    /// The record numbered `seq`, if still kept.
    pub fn record_mut(&mut self, seq: u64) -> Option<&mut RebalanceRecord> {
        self.history.iter_mut().find(|r| r.seq == seq)
    }

    /// Entries of `times` within `window` of `now` (pruning the rest).
    pub fn count_within(times: &mut VecDeque<Instant>, window: Duration, now: Instant) -> usize {
        while times
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) > window)
        {
            times.pop_front();
        }
        times.len()
    }
}

/// The cause to count. The member reports `member_joined` whenever the coordinator answers
/// REBALANCE_IN_PROGRESS (the protocol does not say why); the direction of its own assignment
/// tells a join from a leave: it grew without losing anything → a member left.
pub fn refine_cause(
    reported: RebalanceCause,
    pending: Option<&Pending>,
    assignment: &[TopicPartition],
) -> RebalanceCause {
    let Some(p) = pending else {
        return reported;
    };
    if reported != RebalanceCause::MemberJoined || p.generation_before < 0 {
        return reported;
    }
    let before: std::collections::BTreeSet<&TopicPartition> = p.assignment_before.iter().collect();
    let after: std::collections::BTreeSet<&TopicPartition> = assignment.iter().collect();
    if after.len() > before.len() && before.is_subset(&after) {
        RebalanceCause::MemberLeft
    } else {
        RebalanceCause::MemberJoined
    }
}

/// The cause of a rebalance the member reported as `member_joined` (the coordinator's
/// REBALANCE_IN_PROGRESS says nothing more), from the broker's view: the members of the last
/// Stable DescribeGroups before it started vs the first Stable one after it completed.
///
/// - A member left whose committed offsets stood still for at least `stall` while records waited
///   on its partitions (up to its last sighting) → `session_timeout`: it stopped working but
///   stayed listed until the coordinator expired it (a SIGKILL, a crash, a hang). A clean
///   LeaveGroup comes from a member that was keeping up.
/// - Otherwise a member left → `member_left`; only joins → `member_joined`.
/// - The same members → `None` (the caller falls back to the assignment rule).
///
/// Returns the cause, the joined ids and the departed members.
pub fn classify(
    before: &BTreeSet<String>,
    after: &BTreeSet<String>,
    watch: &BTreeMap<String, MemberWatch>,
    stall: Duration,
) -> (Option<RebalanceCause>, Vec<String>, Vec<DepartedMember>) {
    let joined: Vec<String> = after.difference(before).cloned().collect();
    let left: Vec<DepartedMember> = before
        .difference(after)
        .map(|id| DepartedMember {
            member_id: id.clone(),
            stalled_seconds: watch.get(id).map_or(0.0, |w| w.stalled().as_secs_f64()),
        })
        .collect();
    let cause = if left
        .iter()
        .any(|m| m.stalled_seconds >= stall.as_secs_f64() && m.stalled_seconds > 0.0)
    {
        Some(RebalanceCause::SessionTimeout)
    } else if !left.is_empty() {
        Some(RebalanceCause::MemberLeft)
    } else if !joined.is_empty() {
        Some(RebalanceCause::MemberJoined)
    } else {
        None
    };
    (cause, joined, left)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn watched(stalled: Duration) -> MemberWatch {
        let now = Instant::now();
        MemberWatch {
            partitions: Vec::new(),
            committed: BTreeMap::new(),
            last_seen: now + stalled,
            last_progress: now,
            gone: None,
        }
    }

    #[test]
    fn a_member_that_stopped_working_before_it_left_timed_out() {
        let mut watch = BTreeMap::new();
        watch.insert("dead".to_string(), watched(Duration::from_secs(3)));
        let (cause, joined, left) = classify(
            &ids(&["me", "dead"]),
            &ids(&["me"]),
            &watch,
            Duration::from_millis(1500),
        );
        assert_eq!(cause, Some(RebalanceCause::SessionTimeout));
        assert!(joined.is_empty());
        assert_eq!(left.len(), 1);
        assert!((left[0].stalled_seconds - 3.0).abs() < 0.01);
        // The same departure after a short stall is a clean leave.
        let (cause, ..) = classify(
            &ids(&["me", "dead"]),
            &ids(&["me"]),
            &watch,
            Duration::from_secs(10),
        );
        assert_eq!(cause, Some(RebalanceCause::MemberLeft));
    }

    #[test]
    fn joins_leaves_and_no_change() {
        let watch = BTreeMap::new();
        let stall = Duration::from_secs(10);
        let (cause, joined, _) = classify(&ids(&["me"]), &ids(&["me", "new"]), &watch, stall);
        assert_eq!(
            (cause, joined),
            (Some(RebalanceCause::MemberJoined), vec!["new".to_string()])
        );
        // Never seen with partitions: no evidence of a stall.
        let (cause, ..) = classify(&ids(&["me", "old"]), &ids(&["me"]), &watch, stall);
        assert_eq!(cause, Some(RebalanceCause::MemberLeft));
        let (cause, ..) = classify(&ids(&["me", "old"]), &ids(&["me", "new"]), &watch, stall);
        assert_eq!(cause, Some(RebalanceCause::MemberLeft));
        let (cause, ..) = classify(&ids(&["me"]), &ids(&["me"]), &watch, stall);
        assert_eq!(cause, None);
    }
}
