//! Async record processing with commit tracking: the part of the runtime between the fetcher and
//! the user's handler.
//!
//! - **Dispatch**: records submitted per partition go to an async [`Handler`], at most
//!   [`ProcessingConfig::concurrency`] at once over all partitions. [`ProcessingOrder`] keeps offset order
//!   per partition (default: one record of a partition in flight), per key inside a partition
//!   (same key in order, different keys concurrently), or not at all. Partitions and keys take
//!   turns for free slots.
//! - **Commit tracking**: an [`OffsetTracker`] per partition. A commit never passes a record whose
//!   handler has not finished, even when later records finished first (ordering `Key`/`None`):
//!   the committable offset is the lowest unfinished offset, or the last finished + 1.
//! - **Bounded buffers and backpressure**: per partition, records accepted and not yet committable
//!   are bounded by count, and unstarted records by bytes. Reaching a bound emits
//!   [`ProcessingEvent::BackpressurePause`] (the fetcher stops fetching the partition, see
//!   `SubscriptionState::set_paused_by_backpressure`); draining to the low watermark emits
//!   [`ProcessingEvent::BackpressureResume`]. [`ProcessingEngine::submit`] hands back records that
//!   do not fit: no queue is unbounded. The same state is readable with
//!   [`ProcessingEngine::backpressured_partitions`].
//! - **`max.poll.interval.ms`**: a watchdog reports every handler running longer than the limit
//!   ([`ProcessingEvent::PollIntervalExceeded`]); the runtime then leaves and rejoins the group.
//!   Heartbeats never wait on handlers: the group member runs elsewhere.
//! - **Revoke and loss**: [`ProcessingEngine::stop_partitions`] stops dispatching, discards unstarted
//!   records (the next owner fetches them again from the committed offset), waits (bounded) for
//!   running handlers and returns the committable offsets for the rebalance listener to commit;
//!   [`ProcessingEngine::drop_partitions`] forgets lost partitions without committing.
//! - **Failures**: [`FailurePolicy`]: stop (default; the error surfaces and nothing is committed
//!   past the record), skip (counted, logged, reported), or retry with exponential back-off and
//!   then stop or skip. Never a silent skip. A panicking handler is a failure too.
//! - **Shutdown**: [`ProcessingEngine::shutdown`] drains the running handlers (bounded) and returns
//!   the final committable offsets.
//! - **Metrics**: [`ProcessingEngine::metrics`] returns plain data (in flight, per-partition
//!   buffers, latency histogram, counters) for the telemetry exporter.

mod config;
mod core;
mod engine;
mod error;
mod events;
mod handler;
mod metrics;
mod partition;
mod record;
mod task;
mod tracker;
mod watchdog;

pub use config::{FailurePolicy, OnFailure, ProcessingConfig, ProcessingOrder};
pub use engine::{ProcessingEngine, StopReport, Submitted};
pub use error::{EngineError, SubmitError};
pub use events::{EventReceiver, FailureAction, HandlerFailure, ProcessingEvent};
pub use handler::{Handler, HandlerError, HandlerPanicked};
pub use metrics::{
    LatencyHistogram, OverdueHandler, PartitionMetrics, ProcessingMetrics, LATENCY_BUCKETS_SECONDS,
};
pub use record::ConsumerRecord;
pub use tracker::{NotIncreasing, OffsetTracker};
