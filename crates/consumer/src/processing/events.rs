//! What the engine tells the application and the fetcher: backpressure pause/resume, a handler
//! past `max.poll.interval.ms`, handler failures, records given up unprocessed. Events go to a
//! bounded channel without waiting; when it is full the event is dropped and counted
//! ([`ProcessingMetrics::events_dropped_total`]). Everything an event reports can also be read
//! from the engine directly (backpressured partitions, overdue handlers, the failure, the
//! committable offsets), so a dropped event loses no state.
//!
//! [`ProcessingMetrics::events_dropped_total`]: super::ProcessingMetrics::events_dropped_total

use std::time::Duration;

use mooring_group::EventReceiver;

use super::HandlerError;
use crate::TopicPartition;

/// The receiving end of the engine's events.
pub type ProcessingEvents = EventReceiver<ProcessingEvent>;

/// Something the application or the fetcher should act on.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ProcessingEvent {
    /// The partition's buffer is full: stop fetching it.
    BackpressurePause {
        /// The partition.
        partition: TopicPartition,
        /// Records accepted and not yet committable.
        window_records: usize,
        /// Bytes buffered, not yet started.
        buffered_bytes: usize,
    },
    /// The partition's buffer drained below the low watermark: fetch it again.
    BackpressureResume {
        /// The partition.
        partition: TopicPartition,
        /// Records accepted and not yet committable.
        window_records: usize,
        /// Bytes buffered, not yet started.
        buffered_bytes: usize,
    },
    /// A handler has run longer than `max.poll.interval.ms` (reported once per record, or per
    /// batch). The runtime leaves the group and rejoins, as Java's poll timeout does.
    PollIntervalExceeded {
        /// The record's partition.
        partition: TopicPartition,
        /// The record's offset (a batch's first offset).
        offset: i64,
        /// How long it has run.
        elapsed: Duration,
    },
    /// A handler returned an error (or panicked); `action` says what the engine does next. For a
    /// batch handler, once per failed call, for the whole batch.
    HandlerFailed {
        /// The record's partition.
        partition: TopicPartition,
        /// The record's offset (a batch's first offset).
        offset: i64,
        /// 0 for the first attempt.
        attempt: u32,
        /// The handler's error.
        error: HandlerError,
        /// What follows.
        action: FailureAction,
    },
    /// A record was handed out and given up without being processed (a stream
    /// [`Delivery`](crate::Delivery) dropped without `ack` or `fail`). It is neither a success
    /// nor a failure: no commit of the partition passes it from now on, and it is processed again
    /// when the partition is next fetched from its committed offset (after a restart, or by the
    /// partition's next owner). Later records of the partition still go on, until its buffer
    /// (`mooring.buffer.max.records`) fills and backpressure pauses it.
    RecordAbandoned {
        /// The record's partition.
        partition: TopicPartition,
        /// The record's offset: the partition's commits stop here.
        offset: i64,
    },
}

/// What the engine does after a handler failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureAction {
    /// It retries after this back-off.
    Retry {
        /// The back-off.
        after: Duration,
    },
    /// It skips the record, or the whole batch (counted per record).
    Skip,
    /// It stops dispatching; the record (every record of the batch) stays uncommitted.
    Stop,
}

/// The failure that stopped dispatching (policy [`OnFailure::Stop`](super::OnFailure::Stop)).
#[derive(Debug, Clone)]
pub struct HandlerFailure {
    /// The record's partition.
    pub partition: TopicPartition,
    /// The record's offset (a batch's first offset): no commit of this partition passes it.
    pub offset: i64,
    /// Attempts made (1 + retries).
    pub attempts: u32,
    /// The handler's last error.
    pub error: HandlerError,
}
