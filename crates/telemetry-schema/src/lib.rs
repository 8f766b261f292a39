//! mooring-telemetry-schema: the telemetry wire schema (version [`SCHEMA_VERSION`]) between a
//! Mooring consumer and its sidecar: what the consumer's exporter POSTs to the sidecar, one JSON
//! object per line (NDJSON, `Content-Type: application/x-ndjson`), and the ingest credential's
//! file both sides read ([`read_token`]). Both depend on this crate; neither on the other.
//!
//! Every line is an [`Envelope`]: the schema version, a sequence number per exporter, the time
//! the event happened (ms since the Unix epoch), the member's identity (group, member id,
//! instance id, client id) and the [`Event`], tagged by `type`:
//!
//! ```json
//! {"schema":1,"seq":7,"ts_ms":1764467000123,
//!  "member":{"group":"orders","member_id":"c-1-0f3…","instance_id":null,"client_id":"orders-svc"},
//!  "event":{"type":"rebalance_started","cause":"member_joined","generation":4,"protocol":"eager"}}
//! ```
//!
//! Rules that keep the schema stable: fields are only added (never renamed or retyped) within a
//! version; durations are `*_seconds` floats; a reader skips lines whose `type` it does not know
//! (and counts them) instead of failing the batch. The sidecar deserializes these same types.
//!
//! # The `consumer` group protocol (KIP-848)
//!
//! Added within version 1, by those rules: the member's `group_protocol` on every line
//! ([`MemberIdentity::group_protocol`]), the `reconciled` and `instance_id_unreleased` events
//! ([`Event::Reconciled`], [`Event::InstanceIdUnreleased`]) and the snapshot's `group_protocol`
//! and `consumer_state` ([`Snapshot`]). Each is absent from an older exporter's lines, and the
//! sidecar then reads the member as a classic one (what an older consumer is). An older sidecar
//! ignores the new fields and skips (and counts) the two new event types; the member's classic
//! events (`rebalance_started` … `rebalance_completed`, with the member epoch as generation) still
//! reach it, except a `rebalance_started` whose cause it does not know (`epoch_fenced`,
//! `instance_id_unreleased`), whose completion it then counts under `unknown`.

//!
//! # Share groups (KIP-932)
//!
//! Added within version 1, by the same rules: a share consumer's exporter says `share` as the
//! member's `group_protocol`, sends the share member's group events under their existing types
//! (`rebalance_started`, `joined`, `partitions_assigned`, `partitions_revoked`,
//! `partitions_lost`, `rebalance_completed` with the member epoch as generation, `heartbeat`,
//! `left`), its `fatal_error`, and instead of `snapshot` a periodic `share_snapshot`
//! ([`Event::ShareSnapshot`], [`ShareSnapshot`]): the member's state and the consumer's
//! cumulative counters (records acquired, accepted, released, rejected, lock renewals, locks that
//! ran out before a verdict, delivery counts). Per-record answers are not sent: the counters carry
//! them, at one line per snapshot interval whatever the record rate. An older sidecar skips (and
//! counts) `share_snapshot` lines and reads the member's events as a classic member's.

mod credential;

pub use credential::read_token;
use mooring_group::{ConsumerMemberState, ShareMemberState};
pub use mooring_group::{RebalanceCause, TopicPartition};
use serde::{Deserialize, Serialize};

/// The version written in every envelope's `schema` field.
pub const SCHEMA_VERSION: u32 = 1;

/// One NDJSON line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// Per exporter, from 0, +1 per event produced (dropped events too, so gaps show losses).
    pub seq: u64,
    /// When the event happened, ms since the Unix epoch.
    pub ts_ms: u64,
    /// Who sent it.
    pub member: MemberIdentity,
    /// What happened.
    pub event: Event,
}

/// The member's identity, on every line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberIdentity {
    /// `group.id` (empty for a consumer without a group).
    pub group: String,
    /// The member id the coordinator gave (empty before the first JoinGroup).
    pub member_id: String,
    /// `group.instance.id`, for a static member.
    pub instance_id: Option<String>,
    /// `client.id`.
    pub client_id: String,
    /// `group.protocol`: `classic` or `consumer`, or `share` for a share consumer (absent from
    /// older exporters, and for a consumer without a group: read as classic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_protocol: Option<String>,
}

/// Durations of one rebalance's phases, in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Revoke (or lost) listener before joining.
    pub revoke_seconds: f64,
    /// JoinGroup round trips, retries included.
    pub join_seconds: f64,
    /// The leader's assignment (zero for followers).
    pub assign_seconds: f64,
    /// SyncGroup round trip.
    pub sync_seconds: f64,
    /// Listener calls after SyncGroup.
    pub callbacks_seconds: f64,
}

/// Durations of one reconciliation's phases (`consumer` protocol), in seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ReconcilePhases {
    /// Revoking what the new target assignment no longer holds: handlers of the revoked
    /// partitions drained, what finished committed, the listener's `revoked`.
    pub revoke_seconds: f64,
    /// Taking what it adds: topic ids resolved to names, the listener's `assigned`.
    pub assign_seconds: f64,
    /// From the end of the assign to the heartbeat answer that acknowledged the assignment.
    pub acknowledge_seconds: f64,
}

/// What happened, tagged by `type` (snake_case variant names).
///
/// The snapshot variant is the large one (its per-broker fetch figures and member state); an
/// event is built once, serialized and dropped, at most a few a second, so its size costs
/// nothing worth a box at every construction and match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
#[allow(clippy::large_enum_variant)]
pub enum Event {
    /// A rebalance started.
    RebalanceStarted {
        /// Why.
        cause: RebalanceCause,
        /// The generation held when it started (`-1`: none).
        generation: i32,
        /// `eager` or `cooperative`.
        protocol: String,
    },
    /// The revoke listener ran.
    PartitionsRevoked {
        /// The partitions revoked.
        partitions: Vec<TopicPartition>,
        /// How long the listener (drain + commit + the application's callback) took.
        duration_seconds: f64,
        /// The listener hit its time limit.
        timed_out: bool,
    },
    /// JoinGroup succeeded.
    Joined {
        /// The new generation.
        generation: i32,
        /// This member's id.
        member_id: String,
        /// This member leads the generation.
        leader: bool,
        /// The assignor the coordinator chose.
        protocol_name: String,
        /// JoinGroup time.
        join_seconds: f64,
    },
    /// SyncGroup succeeded.
    Synced {
        /// The generation.
        generation: i32,
        /// SyncGroup time.
        sync_seconds: f64,
    },
    /// The assign listener ran.
    PartitionsAssigned {
        /// Partitions new to this member.
        added: Vec<TopicPartition>,
        /// Everything it owns now.
        assignment: Vec<TopicPartition>,
        /// Listener time.
        duration_seconds: f64,
        /// The listener hit its time limit.
        timed_out: bool,
    },
    /// Partitions were lost (no commit possible).
    PartitionsLost {
        /// The partitions.
        partitions: Vec<TopicPartition>,
        /// Listener time.
        duration_seconds: f64,
        /// The listener hit its time limit.
        timed_out: bool,
    },
    /// The member is stable in `generation`.
    RebalanceCompleted {
        /// The generation.
        generation: i32,
        /// From start to stable.
        total_seconds: f64,
        /// Phase timings.
        phases: Phases,
    },
    /// A static member's new process took its previous one's place in a stable group without a
    /// rebalance (KIP-345): `joined`, `synced` and `partitions_assigned` came before it, no
    /// `rebalance_started` or `rebalance_completed` surround it, and it is not a rebalance. The
    /// member is stable in `generation`, the group's unchanged one.
    StaticRejoin {
        /// The generation (the group's, unchanged).
        generation: i32,
        /// From the start of the join to the assignment handed to the application.
        total_seconds: f64,
        /// Phase timings.
        phases: Phases,
    },
    /// A rebalance attempt failed.
    RebalanceFailed {
        /// The error.
        error: String,
        /// The broker's error code, if any.
        code: Option<i16>,
        /// From start to failure.
        total_seconds: f64,
        /// Phase timings.
        phases: Phases,
    },
    /// A heartbeat round trip.
    Heartbeat {
        /// The generation.
        generation: i32,
        /// Response time.
        latency_seconds: f64,
        /// The error, if it failed.
        error: Option<String>,
    },
    /// An OffsetCommit (after its retries).
    Commit {
        /// The generation.
        generation: i32,
        /// Round-trip time.
        latency_seconds: f64,
        /// Partitions committed.
        partitions: usize,
        /// The error, if it failed.
        error: Option<String>,
    },
    /// FENCED_INSTANCE_ID: another process holds this `group.instance.id`.
    Fenced {
        /// The instance id.
        instance_id: String,
        /// When the member tries again (`None`: it does not).
        retry_in_seconds: Option<f64>,
    },
    /// `consumer` protocol: the member reconciled the coordinator's new target assignment; what
    /// moved at this epoch bump (either list may be empty). Under this protocol the member also
    /// sends the classic events where they apply (`rebalance_started` … `rebalance_completed`
    /// with the member epoch as generation, `partitions_revoked`/`_assigned`/`_lost`).
    Reconciled {
        /// The member epoch the assignment came with.
        member_epoch: i32,
        /// Partitions new to this member.
        added: Vec<TopicPartition>,
        /// Partitions it gave up.
        revoked: Vec<TopicPartition>,
        /// From the heartbeat answer carrying the assignment to its acknowledgement.
        total_seconds: f64,
        /// Phase timings.
        phases: ReconcilePhases,
    },
    /// `consumer` protocol: UNRELEASED_INSTANCE_ID, the process this static member replaces
    /// still holds `instance_id`; the member tries again (attempt `attempt`, from 1) after
    /// `retry_in_seconds`, or, `None`, has waited `mooring.unreleased.instance.timeout.ms` and
    /// fails.
    InstanceIdUnreleased {
        /// The instance id.
        instance_id: String,
        /// The attempt that was refused (from 1).
        attempt: u32,
        /// When it tries again (`None`: it does not).
        retry_in_seconds: Option<f64>,
    },
    /// The member left the group (or a static member closed without leaving).
    Left {
        /// A LeaveGroup was sent.
        sent_leave_group: bool,
        /// The error, if leaving failed.
        error: Option<String>,
    },
    /// A handler ran past `max.poll.interval.ms`.
    PollIntervalExceeded {
        /// The record's partition.
        partition: TopicPartition,
        /// The record's offset.
        offset: i64,
        /// How long it has run.
        elapsed_seconds: f64,
    },
    /// Backpressure paused (`paused: true`) or resumed fetching of a partition.
    Backpressure {
        /// The partition.
        partition: TopicPartition,
        /// Paused or resumed.
        paused: bool,
    },
    /// A handler failed.
    HandlerFailed {
        /// The record's partition.
        partition: TopicPartition,
        /// The record's offset.
        offset: i64,
        /// The attempt that failed (from 1).
        attempt: u32,
        /// The error.
        error: String,
    },
    /// A record was handed out and given up without being processed (a stream delivery dropped
    /// without acknowledgement): the partition's commits stop at `offset` until the partition is
    /// fetched again from its committed offset (a restart, or another owner).
    RecordAbandoned {
        /// The record's partition.
        partition: TopicPartition,
        /// The record's offset.
        offset: i64,
    },
    /// A Fetch failed.
    FetchError {
        /// The broker.
        node: i32,
        /// The partition, if the error was a partition's.
        partition: Option<TopicPartition>,
        /// The error.
        error: String,
    },
    /// An assigned topic is gone from the cluster (deleted, or not created yet): its partitions
    /// are no longer fetched (once per topic).
    TopicUnavailable {
        /// The topic.
        topic: String,
        /// Its assigned partitions, no longer fetched.
        partitions: Vec<TopicPartition>,
        /// The broker's error (e.g. `UNKNOWN_TOPIC_ID (100)`).
        error: String,
        /// When the topic is looked up again.
        recheck_in_seconds: f64,
    },
    /// `auto.offset.reset` (or a seek to the beginning/end) moved a position.
    OffsetReset {
        /// The partition.
        partition: TopicPartition,
        /// `earliest`, `latest` or `none`.
        strategy: String,
        /// The new position.
        offset: i64,
    },
    /// An auto-commit failed.
    CommitFailed {
        /// The error.
        error: String,
    },
    /// A fatal error stopped the consumer (`run` ends with it): once, before `shutdown`.
    FatalError {
        /// What kind of error, from a closed set (the sidecar's metric label):
        /// `authentication`, `tls`, `group_authorization`, `topic_authorization`,
        /// `cluster_authorization`, `fenced`, `handler_failed`, `no_offset`,
        /// `offset_out_of_range`, `corrupt_records`, `fetch_failed`, `unencodable`, `config`,
        /// `other`.
        kind: String,
        /// The error as `run` returns it (one line; never a secret).
        message: String,
    },
    /// The consumer shut down.
    Shutdown {
        /// From the request to the end.
        duration_seconds: f64,
        /// Partitions whose handlers were still running when the drain timed out.
        timed_out: Vec<TopicPartition>,
    },
    /// Events were lost (the consumer's stream or the exporter's buffer was full, or the
    /// sidecar was unreachable); sent as soon as the sidecar answers again.
    EventsDropped {
        /// Lost since the exporter started (monotonic: the sidecar exports it as a counter).
        dropped_total: u64,
        /// Lost since the previous `events_dropped` line.
        dropped_since_last: u64,
    },
    /// The consumer's state, every snapshot interval.
    Snapshot(Snapshot),
    /// A share consumer's state and counters, every snapshot interval (instead of `snapshot`).
    ShareSnapshot(ShareSnapshot),
}

impl Event {
    /// The `type` tag (bounded: one per variant).
    pub fn type_name(&self) -> &'static str {
        match self {
            Event::RebalanceStarted { .. } => "rebalance_started",
            Event::PartitionsRevoked { .. } => "partitions_revoked",
            Event::Joined { .. } => "joined",
            Event::Synced { .. } => "synced",
            Event::PartitionsAssigned { .. } => "partitions_assigned",
            Event::PartitionsLost { .. } => "partitions_lost",
            Event::RebalanceCompleted { .. } => "rebalance_completed",
            Event::StaticRejoin { .. } => "static_rejoin",
            Event::RebalanceFailed { .. } => "rebalance_failed",
            Event::Heartbeat { .. } => "heartbeat",
            Event::Commit { .. } => "commit",
            Event::Fenced { .. } => "fenced",
            Event::Reconciled { .. } => "reconciled",
            Event::InstanceIdUnreleased { .. } => "instance_id_unreleased",
            Event::Left { .. } => "left",
            Event::PollIntervalExceeded { .. } => "poll_interval_exceeded",
            Event::Backpressure { .. } => "backpressure",
            Event::HandlerFailed { .. } => "handler_failed",
            Event::RecordAbandoned { .. } => "record_abandoned",
            Event::FetchError { .. } => "fetch_error",
            Event::TopicUnavailable { .. } => "topic_unavailable",
            Event::OffsetReset { .. } => "offset_reset",
            Event::CommitFailed { .. } => "commit_failed",
            Event::FatalError { .. } => "fatal_error",
            Event::Shutdown { .. } => "shutdown",
            Event::EventsDropped { .. } => "events_dropped",
            Event::Snapshot(_) => "snapshot",
            Event::ShareSnapshot(_) => "share_snapshot",
        }
    }
}

/// Every `kind` of a [`Event::FatalError`] (`mooring_consumer::ConsumerError::kind`):
/// the closed set of the sidecar's `mooring_consumer_fatal_error{kind}` label.
pub const FATAL_ERROR_KINDS: [&str; 14] = [
    "authentication",
    "tls",
    "group_authorization",
    "topic_authorization",
    "cluster_authorization",
    "fenced",
    "handler_failed",
    "no_offset",
    "offset_out_of_range",
    "corrupt_records",
    "fetch_failed",
    "unencodable",
    "config",
    "other",
];

/// The consumer's state at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The member state (`Unjoined`, `PreparingRebalance`, `CompletingRebalance`, `Stable`), when
    /// in a group.
    pub member_state: Option<String>,
    /// The generation, or the member epoch under the `consumer` protocol (`-1`: none).
    pub generation: i32,
    /// The leader's member id (classic protocol only: a `consumer` group has no leader).
    pub leader_id: Option<String>,
    /// The assignor of the current generation.
    pub protocol_name: Option<String>,
    /// Each assigned partition.
    pub partitions: Vec<PartitionSnapshot>,
    /// Handlers running now.
    pub in_flight: usize,
    /// The concurrency limit.
    pub concurrency: usize,
    /// Seconds since a handler last started or finished.
    pub since_last_progress_seconds: f64,
    /// Records fetched and not yet handled (all partitions).
    pub buffered_records: usize,
    /// Events the consumer's stream dropped so far (before the exporter saw them).
    pub stream_dropped_total: u64,
    /// The consumer is shutting down.
    pub shutting_down: bool,
    /// Iterations of the consumer's fetch loop so far (its poll loop; absent from older
    /// exporters). The loop iterates at least every 100 ms while the consumer runs, whatever
    /// its handlers do.
    #[serde(default)]
    pub loop_ticks: u64,
    /// Seconds since the fetch loop last began an iteration (`None`: not running). Growing past
    /// a fraction of a second means the consumer's runtime is stuck (a blocked thread, a lock
    /// never released), not that a handler is slow: handlers run in their own tasks.
    #[serde(default)]
    pub since_last_loop_tick_seconds: Option<f64>,
    /// Handler durations since the consumer started running (cumulative, so the sidecar exports
    /// a Prometheus histogram from it without one event per record).
    #[serde(default)]
    pub handler_latency: Option<HandlerLatency>,
    /// Bytes of record data held now (`Consumer::memory_in_use`; 0 from older exporters).
    #[serde(default)]
    pub memory_bytes: u64,
    /// `mooring.memory.max.bytes` (0 from older exporters).
    #[serde(default)]
    pub memory_limit_bytes: u64,
    /// What the fetcher fetched from each broker since the consumer was created, by node id
    /// (`Consumer::fetch_stats`; empty from older exporters): with `client.rack`, the share
    /// fetched from brokers of other racks.
    #[serde(default)]
    pub fetch_brokers: Vec<BrokerFetchSnapshot>,
    /// The consumer's `client.rack` (`None`: not set, or an older exporter): with the brokers'
    /// racks in `fetch_brokers`, which bytes crossed racks.
    #[serde(default)]
    pub client_rack: Option<String>,
    /// The member's group protocol, `classic` or `consumer`, when in a group (absent from older
    /// exporters: classic).
    #[serde(default)]
    pub group_protocol: Option<String>,
    /// A `consumer`-protocol member's own state (`unsubscribed`, `joining`, `reconciling`,
    /// `acknowledging`, `stable`, `fenced`, `stale`, `leaving`, `instance_id_unreleased`,
    /// `fatal`); `member_state` is its classic equivalent. `None` for a classic member.
    #[serde(default)]
    pub consumer_state: Option<String>,
}

/// One broker in a [`Snapshot`]: what the consumer fetched from it, and how many of its
/// partitions it reads from that broker as a follower now (KIP-392).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BrokerFetchSnapshot {
    /// The broker's node id.
    pub node_id: i32,
    /// Its `broker.rack` (`None`: not set, or not known).
    pub rack: Option<String>,
    /// Bytes of record data fetched from it, as on the wire (compressed batches at their
    /// compressed size).
    pub record_bytes_total: u64,
    /// Records read from them.
    pub records_total: u64,
    /// Partitions fetched from it as a follower now (the replica their leader named).
    pub follower_partitions: usize,
}

/// Every `consumer_state` of a [`Snapshot`]: the closed set of the sidecar's
/// `mooring_consumer_member_state{state}` label.
pub const CONSUMER_MEMBER_STATES: [&str; 10] = [
    "unsubscribed",
    "joining",
    "reconciling",
    "acknowledging",
    "stable",
    "fenced",
    "stale",
    "leaving",
    "instance_id_unreleased",
    "fatal",
];

/// The `consumer_state` label of `state`.
pub fn consumer_state_name(state: ConsumerMemberState) -> &'static str {
    match state {
        ConsumerMemberState::Unsubscribed => "unsubscribed",
        ConsumerMemberState::Joining => "joining",
        ConsumerMemberState::Reconciling => "reconciling",
        ConsumerMemberState::Acknowledging => "acknowledging",
        ConsumerMemberState::Stable => "stable",
        ConsumerMemberState::Fenced => "fenced",
        ConsumerMemberState::Stale => "stale",
        ConsumerMemberState::Leaving => "leaving",
        ConsumerMemberState::InstanceIdUnreleased => "instance_id_unreleased",
        ConsumerMemberState::Fatal => "fatal",
    }
}

/// A share consumer's state at one moment (`share_snapshot`): its member and its cumulative
/// counters since the consumer was made (a new process starts them at 0 again, which a reader
/// takes as a counter reset). Every field defaults, so a line with fewer fields still reads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShareSnapshot {
    /// The member's state in the classic terms of [`Snapshot::member_state`] (`None`: not
    /// running).
    pub member_state: Option<String>,
    /// The share member's own state, one of [`SHARE_MEMBER_STATES`] (`None`: not running).
    pub share_state: Option<String>,
    /// The member epoch (`-1`: none).
    pub member_epoch: i32,
    /// The share-partitions assigned to this member.
    pub assignment: Vec<TopicPartition>,
    /// `mooring.concurrency`: handlers that may run at once.
    pub concurrency: usize,
    /// Events the consumer's stream dropped so far (before the exporter saw them).
    pub stream_dropped_total: u64,
    /// Records acquired (handed to this member under a lock).
    pub acquired_total: u64,
    /// Records accepted, as the broker took the verdicts.
    pub accepted_total: u64,
    /// Records released (delivered again), as the broker took the verdicts.
    pub released_total: u64,
    /// Records rejected (poison: archived), as the broker took the verdicts.
    pub rejected_total: u64,
    /// Acquired offsets without a record (transaction markers, compacted records) given back.
    pub gaps_total: u64,
    /// Lock renewals the broker took.
    pub renewed_total: u64,
    /// Lock renewals the broker refused.
    pub renewals_refused_total: u64,
    /// Records whose lock was left to run out because they were held `max.poll.interval.ms`.
    pub renewals_given_up_total: u64,
    /// Verdicts that came after the record's lock ran out, or that the broker refused for it
    /// (the record is delivered again, to any member).
    pub lock_expired_total: u64,
    /// Verdicts lost otherwise (a leader moved, a session ended under them).
    pub acknowledgements_failed_total: u64,
    /// Records acquired at delivery count 1, 2, …: element `i` counts delivery count `i + 1`, the
    /// last element that count or more.
    pub acquired_by_delivery: Vec<u64>,
    /// Records released at delivery count 1, 2, …, as `acquired_by_delivery`: with the group's
    /// `share.delivery.count.limit`, the releases the broker archives instead of delivering
    /// again.
    pub released_by_delivery: Vec<u64>,
}

/// Every `share_state` of a [`ShareSnapshot`]: the closed set of the sidecar's
/// `mooring_share_member_state{state}` label.
pub const SHARE_MEMBER_STATES: [&str; 7] = [
    "unsubscribed",
    "joining",
    "reconciling",
    "stable",
    "fenced",
    "leaving",
    "fatal",
];

/// The `share_state` label of `state`.
pub fn share_state_name(state: ShareMemberState) -> &'static str {
    match state {
        ShareMemberState::Unsubscribed => "unsubscribed",
        ShareMemberState::Joining => "joining",
        ShareMemberState::Reconciling => "reconciling",
        ShareMemberState::Stable => "stable",
        ShareMemberState::Fenced => "fenced",
        ShareMemberState::Leaving => "leaving",
        ShareMemberState::Fatal => "fatal",
    }
}

/// Upper bounds (seconds) of [`HandlerLatency::buckets`], the `le` labels of
/// `mooring_handler_duration_seconds`: Prometheus' defaults widened to 5 minutes, the default
/// `max.poll.interval.ms`.
pub const HANDLER_LATENCY_BUCKETS_SECONDS: [f64; 14] = [
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 60.0, 300.0,
];

/// A cumulative histogram of handler durations (first attempt's start to final outcome, retries
/// included), in a [`Snapshot`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HandlerLatency {
    /// Cumulative counts: one per bound of [`HANDLER_LATENCY_BUCKETS_SECONDS`], then `+Inf`
    /// (equal to `count`).
    pub buckets: Vec<u64>,
    /// Sum of all durations, seconds.
    pub sum_seconds: f64,
    /// Handlers finished.
    pub count: u64,
}

/// One assigned partition in a [`Snapshot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartitionSnapshot {
    /// The topic.
    pub topic: String,
    /// The partition index.
    pub partition: i32,
    /// The next offset to fetch.
    pub position: Option<i64>,
    /// The committed offset.
    pub committed: Option<i64>,
    /// The high watermark from the last Fetch.
    pub high_watermark: Option<i64>,
    /// Paused by the application or by backpressure.
    pub paused: bool,
    /// Handlers running for this partition.
    pub in_flight: usize,
}
