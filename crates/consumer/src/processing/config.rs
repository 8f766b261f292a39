//! Configuration of the processing engine: concurrency, ordering, buffer bounds, the
//! `max.poll.interval.ms` watchdog and the handler failure policy.

use std::time::Duration;

use super::EngineError;

/// Which records may run at the same time inside one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProcessingOrder {
    /// One record of a partition in flight at a time: records finish in offset order (default).
    #[default]
    Partition,
    /// Records with the same key run one at a time, in offset order; different keys of one
    /// partition run concurrently. All null-key records of a partition form one key.
    Key,
    /// No ordering: any record may run as soon as a slot is free. Commits still never pass an
    /// unfinished record.
    None,
}

/// What happens after a record's handler has exhausted its retries (or when there are none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OnFailure {
    /// Stop dispatching every partition; the error is kept ([`ProcessingEngine::failure`]) and
    /// reported as an event; the offset is never committed past the failed record (default).
    ///
    /// [`ProcessingEngine::failure`]: super::ProcessingEngine::failure
    #[default]
    Stop,
    /// Count it, report it as an event, log it, and treat the record as finished.
    Skip,
}

/// What to do when a handler returns an error (or panics).
///
/// ```
/// use std::time::Duration;
/// use mooring_consumer::processing::{FailurePolicy, OnFailure};
///
/// assert_eq!(FailurePolicy::default(), FailurePolicy::stop());
/// let retry = FailurePolicy::retry(3, Duration::from_millis(100), OnFailure::Skip);
/// assert_eq!(retry.max_retries, 3);
/// // Exponential back-off, capped.
/// assert_eq!(retry.backoff(0), Duration::from_millis(100));
/// assert_eq!(retry.backoff(2), Duration::from_millis(400));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FailurePolicy {
    /// Attempts after the first one (0: no retry).
    pub max_retries: u32,
    /// Back-off before the first retry; doubled for each later one.
    pub initial_backoff: Duration,
    /// The longest back-off.
    pub max_backoff: Duration,
    /// What happens when the retries are exhausted.
    pub then: OnFailure,
}

impl Default for FailurePolicy {
    fn default() -> Self {
        FailurePolicy::stop()
    }
}

impl FailurePolicy {
    /// No retry; the first error stops processing (the default: never skip silently).
    pub fn stop() -> Self {
        FailurePolicy {
            max_retries: 0,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(30),
            then: OnFailure::Stop,
        }
    }

    /// No retry; a failed record is counted, reported and skipped.
    pub fn skip() -> Self {
        FailurePolicy {
            then: OnFailure::Skip,
            ..FailurePolicy::stop()
        }
    }

    /// Retry `max_retries` times with exponential back-off from `initial_backoff` (capped at 30 s),
    /// then `then`. Retries keep the record's ordering slot and its concurrency slot: later
    /// records of its partition (or key) wait, and so does one unit of `concurrency`.
    pub fn retry(max_retries: u32, initial_backoff: Duration, then: OnFailure) -> Self {
        FailurePolicy {
            max_retries,
            initial_backoff,
            max_backoff: Duration::from_secs(30).max(initial_backoff),
            then,
        }
    }

    /// The back-off before retry number `retry` (0-based).
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry.min(31)).unwrap_or(u32::MAX);
        self.initial_backoff
            .checked_mul(factor)
            .unwrap_or(self.max_backoff)
            .min(self.max_backoff)
    }
}

/// The engine's settings. Field defaults follow the Java consumer where one exists.
///
/// ```
/// use std::time::Duration;
/// use mooring_consumer::processing::{ProcessingConfig, ProcessingOrder};
///
/// let config = ProcessingConfig {
///     concurrency: 32,
///     ordering: ProcessingOrder::Key,
///     max_poll_interval: Duration::from_secs(60),
///     ..ProcessingConfig::default()
/// };
/// assert!(config.validate().is_ok());
/// assert!(ProcessingConfig { concurrency: 0, ..config }.validate().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessingConfig {
    /// The most handlers running at once, over all partitions.
    pub concurrency: usize,
    /// Ordering inside a partition.
    pub ordering: ProcessingOrder,
    /// Per partition, the most records accepted and not yet committable (buffered, in flight, or
    /// finished above an unfinished one). Reaching it pauses fetching of the partition, and
    /// [`submit`](super::ProcessingEngine::submit) hands back what does not fit.
    pub max_buffered_records: usize,
    /// Per partition, the most bytes (keys, values, headers) buffered and not yet started.
    /// A record larger than this is still accepted into an empty buffer.
    pub max_buffered_bytes: usize,
    /// Fetching resumes once the window is at or below this many records ...
    pub resume_buffered_records: usize,
    /// ... and the buffered bytes at or below this.
    pub resume_buffered_bytes: usize,
    /// `max.poll.interval.ms`: a handler running longer than this is reported
    /// ([`ProcessingEvent::PollIntervalExceeded`](super::ProcessingEvent::PollIntervalExceeded)).
    pub max_poll_interval: Duration,
    /// How often the watchdog looks; `None`: a tenth of `max_poll_interval`, between 10 ms and 1 s.
    pub watchdog_interval: Option<Duration>,
    /// What a handler error does.
    pub failure_policy: FailurePolicy,
    /// The most records in one [`Batch`](super::Batch) handed to a
    /// [`BatchHandler`](super::BatchHandler) (`mooring.batch.max.records`); record handlers
    /// ignore it. A partition's buffer bounds a batch too: it never holds more than
    /// `max_buffered_records`.
    pub max_batch_records: usize,
    /// Capacity of the event channel; events that do not fit are dropped and counted.
    pub event_capacity: usize,
}

impl Default for ProcessingConfig {
    fn default() -> Self {
        ProcessingConfig {
            concurrency: 16,
            ordering: ProcessingOrder::Partition,
            max_buffered_records: 1000,
            max_buffered_bytes: 4 * 1024 * 1024,
            resume_buffered_records: 500,
            resume_buffered_bytes: 2 * 1024 * 1024,
            max_poll_interval: Duration::from_millis(300_000),
            watchdog_interval: None,
            failure_policy: FailurePolicy::default(),
            max_batch_records: 500,
            event_capacity: 1024,
        }
    }
}

impl ProcessingConfig {
    /// Checks the settings are usable; the error names the field.
    pub fn validate(&self) -> Result<(), EngineError> {
        let bad = |field: &'static str, reason: &str| {
            Err(EngineError::InvalidConfig {
                field,
                reason: reason.to_owned(),
            })
        };
        if self.concurrency == 0 {
            return bad("concurrency", "must be at least 1");
        }
        if self.max_buffered_records == 0 {
            return bad("max_buffered_records", "must be at least 1");
        }
        if self.max_buffered_bytes == 0 {
            return bad("max_buffered_bytes", "must be at least 1");
        }
        if self.resume_buffered_records >= self.max_buffered_records {
            return bad(
                "resume_buffered_records",
                "must be below max_buffered_records",
            );
        }
        if self.resume_buffered_bytes >= self.max_buffered_bytes {
            return bad("resume_buffered_bytes", "must be below max_buffered_bytes");
        }
        if self.max_poll_interval.is_zero() {
            return bad("max_poll_interval", "must be positive");
        }
        if self.watchdog_interval.is_some_and(|d| d.is_zero()) {
            return bad("watchdog_interval", "must be positive");
        }
        if self.event_capacity == 0 {
            return bad("event_capacity", "must be at least 1");
        }
        if self.max_batch_records == 0 {
            return bad("max_batch_records", "must be at least 1");
        }
        Ok(())
    }

    /// Checks the settings suit a [`BatchHandler`](super::BatchHandler): besides
    /// [`validate`](Self::validate), ordering `Partition` (one batch of a partition runs at a
    /// time, so ordering by key or none would not do what it says).
    pub fn validate_for_batches(&self) -> Result<(), EngineError> {
        self.validate()?;
        if self.ordering != ProcessingOrder::Partition {
            return Err(EngineError::InvalidConfig {
                field: "ordering",
                reason: format!(
                    "a batch handler runs one batch of a partition at a time: only Partition applies, not {:?}",
                    self.ordering
                ),
            });
        }
        Ok(())
    }

    /// The watchdog's period.
    pub fn effective_watchdog_interval(&self) -> Duration {
        self.watchdog_interval.unwrap_or_else(|| {
            (self.max_poll_interval / 10).clamp(Duration::from_millis(10), Duration::from_secs(1))
        })
    }
}
