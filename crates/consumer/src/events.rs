//! Telemetry: one typed stream of everything the consumer does, for the application and the
//! sidecar's exporter. It carries the group member's events (rebalance phases with timings,
//! heartbeats, commits, fencing, leaving), the processing engine's (backpressure, handlers past
//! `max.poll.interval.ms`, handler failures) and the runtime's own (fetch errors, offset resets,
//! auto-commit failures, the fatal error that stopped it, shutdown).
//!
//! Like the member's and the engine's own channels, the stream is bounded and never waits: when
//! it is full an event is dropped and counted ([`Consumer::dropped_events`](crate::Consumer::dropped_events)).

use std::collections::BTreeMap;
use std::time::Duration;

use mooring_group::{EventReceiver, GroupEvent};
use mooring_wire::error_code::ErrorCode;

use crate::error::ConsumerError;
use crate::processing::ProcessingEvent;
use crate::subscription::OffsetResetStrategy;
use crate::TopicPartition;

/// One telemetry event.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConsumerEvent {
    /// From the group member (rebalances, heartbeats, commits, fencing, leaving).
    Group(GroupEvent),
    /// From the processing engine (backpressure, slow handlers, handler failures).
    Processing(ProcessingEvent),
    /// A Fetch to a broker failed, or a partition's answer carried an error.
    FetchError {
        /// The broker's node id.
        node: i32,
        /// The partition, when the error is a partition's.
        partition: Option<TopicPartition>,
        /// What went wrong.
        error: String,
    },
    /// An assigned topic is gone from the cluster (deleted, or not created yet): a Fetch answered
    /// UNKNOWN_TOPIC_ID or UNKNOWN_TOPIC_OR_PARTITION for it, or its leaders vanished, and fresh
    /// metadata does not list it. Said once per topic. Its partitions are no longer fetched: in a
    /// group, the group revokes them after the metadata change; with a manual assignment they stay
    /// assigned, and the topic is looked up again every `recheck_in` (`metadata.max.age.ms`),
    /// fetching resuming when it is back.
    TopicUnavailable {
        /// The topic.
        topic: String,
        /// Its assigned partitions, no longer fetched.
        partitions: Vec<TopicPartition>,
        /// What the broker said (UNKNOWN_TOPIC_OR_PARTITION when only the metadata told).
        code: ErrorCode,
        /// When the topic is looked up again.
        recheck_in: Duration,
    },
    /// A partition's position was reset by `auto.offset.reset` (or a seek to the beginning/end).
    OffsetReset {
        /// The partition.
        partition: TopicPartition,
        /// The strategy used.
        strategy: OffsetResetStrategy,
        /// The new position.
        offset: i64,
    },
    /// An auto-commit (or a commit during shutdown) failed; the next one retries.
    CommitFailed {
        /// The error.
        error: String,
    },
    /// A revoke or the shutdown could not commit these offsets in its time (or at all): the
    /// records before them were processed, and the next owner of the partitions processes those
    /// since the last commit again. Reported once (and logged as a warning).
    OffsetsNotCommitted {
        /// `"revoke"` or `"shutdown"`.
        during: &'static str,
        /// Per partition, the offset that was to be committed.
        offsets: BTreeMap<TopicPartition, i64>,
        /// Why (a `DeadlineExceeded` when the time ran out).
        error: String,
    },
    /// A fatal error stopped the consumer: `run` ends with it. Sent once, before the
    /// shutdown's events, the first fatal error only (later ones are the same failure seen by
    /// another task).
    FatalError {
        /// [`ConsumerError::kind`]: a short name from a closed set (`authentication`, `tls`,
        /// `group_authorization`, `topic_authorization`, ...).
        kind: &'static str,
        /// The error `run` returns.
        error: ConsumerError,
    },
    /// The consumer shut down.
    Shutdown {
        /// Time from the request to the end.
        duration: Duration,
        /// Partitions whose handlers were still running when the drain timed out.
        timed_out: Vec<TopicPartition>,
    },
}

/// The receiving end, from [`Consumer::events`](crate::Consumer::events).
pub type ConsumerEvents = EventReceiver<ConsumerEvent>;
