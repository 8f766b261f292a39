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
//!   the committable offset is the lowest unfinished offset, or the last finished + 1. A record
//!   handed out and given up unprocessed (a stream delivery dropped without `ack`) is
//!   *abandoned*: neither a success nor a failure (the failure policy never sees it), its offset
//!   stays unfinished for good while its slot is freed and later records go on, and
//!   [`ProcessingEvent::RecordAbandoned`] reports it.
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
//! - **Batches**: a [`BatchHandler`], given as [`Batches`], gets a partition's records a
//!   [`Batch`] at a time instead of one by one: what the partition's lane has queued when the
//!   call starts (every record submitted so far, from the oldest unstarted one), in offset order,
//!   at most [`ProcessingConfig::max_batch_records`]. Consecutive batches leave no record out
//!   (offsets skip only where the submitted records do). Ordering must be `Partition`: one batch
//!   of a partition runs at a time, and the concurrency bound counts running batches. A batch is
//!   one unit for the commit (the committable offset passes it once its handler succeeded, never
//!   midway), the failure policy (retry calls again with the whole batch; skip skips all of it;
//!   stop keeps all of it uncommitted; events and [`HandlerFailure`] name its first offset), the
//!   watchdog (from the batch's start), a revoke and a shutdown (which wait for the running
//!   batch within their bound). Metrics count records, and one latency per call.
//! - **Metrics**: [`ProcessingEngine::metrics`] returns plain data (in flight, per-partition
//!   buffers, latency histogram, counters) for the telemetry exporter.
//!
//! # Lanes
//! Each partition has one long-lived task, its *lane*, fed whole fetched batches (one channel
//! message per submit, never one per record) and awaiting the handler inline: no task is spawned
//! per record. With ordering `Partition` the lane runs one record at a time; with `Key` and `None`
//! it drives up to [`ProcessingConfig::concurrency`] handlers of its own (same key one at a time,
//! keys taking turns); with a batch handler, one batch at a time. The engine is generic over
//! [`Dispatch`] (every [`Handler`], or [`Batches`]), and which loop a lane runs is a constant of
//! that type: the per-record path carries nothing of the batch path. The global bound is a FIFO
//! semaphore: a lane keeps its permit from one record (or batch) to the next and hands it back
//! when it goes idle or another lane waits, so partitions take turns. The lane owns the
//! partition's [`OffsetTracker`] and publishes its committable offset, window and running record
//! (with its start time, for the watchdog) as atomics; the commit paths, the fetcher's
//! backpressure checks, the watchdog and the metrics read those.
//! Nothing on the way of a record takes a lock shared by partitions: the engine's table of lanes
//! is locked once per call (a submit is one batch), and counters reach the shared metrics every
//! few hundred records or when a lane goes idle. A revoke closes the lane and joins its task
//! (bounded); a loss closes it without waiting.
//!
//! # Wiring (what the fetcher and the rebalance listener do)
//! ```
//! use std::time::Duration;
//! use mooring_consumer::processing::{ConsumerRecord, ProcessingConfig, ProcessingEngine};
//! use mooring_consumer::subscription::{OffsetResetStrategy, SubscriptionState};
//! use mooring_consumer::TopicPartition;
//! use mooring_wire::records::Record;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tp = TopicPartition::new("orders", 0);
//! let mut subs = SubscriptionState::new(OffsetResetStrategy::Earliest);
//! subs.subscribe(["orders"])?;
//! let (engine, _events) = ProcessingEngine::new(
//!     ProcessingConfig::default(),
//!     |r: ConsumerRecord| async move { Ok::<(), String>(()) },
//! )?;
//!
//! // Assigned by the group: both sides learn the partition.
//! subs.assign_from_group([tp.clone()])?;
//! engine.add_partitions([tp.clone()]);
//! subs.seek(&tp, 0)?;
//!
//! // One fetch round: honour backpressure, fetch, submit, advance the position.
//! subs.sync_backpressure(&engine.backpressured_partitions());
//! for part in subs.fetchable_partitions() {
//!     let fetched: Vec<Record> = (0..5).map(|o| Record::new(o, 0, None, None)).collect();
//!     let submitted = engine.submit(&part, fetched)?;
//!     // Rejected records are fetched again: the position stops at the first one.
//!     let next = submitted.rejected.first().map_or(5, |r| r.offset);
//!     subs.seek(&part, next)?;
//! }
//!
//! // Revoke: wait for what runs, commit what finished, then forget the partition.
//! let report = engine.stop_partitions([tp.clone()], Duration::from_secs(30)).await;
//! subs.revoke(&[tp.clone()]);
//! // ... OffsetCommit with report.committable ...
//! assert!(report.committable.get(&tp).is_some_and(|&o| o <= 5));
//! # Ok(())
//! # }
//! ```

mod batch;
mod config;
mod context;
mod dispatch;
mod engine;
mod error;
mod events;
mod handler;
mod lane;
mod metrics;
mod queue;
mod record;
mod run;
mod signals;
pub(crate) mod spans;
mod task;
mod tracker;
mod watchdog;

pub use batch::{Batch, BatchHandler, Batches, InvalidBatch};
pub use config::{FailurePolicy, OnFailure, ProcessingConfig, ProcessingOrder};
pub use dispatch::Dispatch;
pub use engine::{ProcessingEngine, StopReport, Submitted};
pub use error::{EngineError, SubmitError};
pub use events::{FailureAction, HandlerFailure, ProcessingEvent, ProcessingEvents};
pub(crate) use handler::NotProcessed;
pub use handler::{Handler, HandlerError, HandlerPanicked};
pub use metrics::{LatencyHistogram, OverdueHandler, PartitionMetrics, ProcessingMetrics};
/// The wire types a [`ConsumerRecord`] exposes (headers, timestamp type), so handlers need no
/// `mooring-wire` dependency of their own.
pub use mooring_wire::records::{Header, HeaderKey, Headers, TimestampType};
pub use record::{BatchInfo, ConsumerRecord, FetchedBatch, FetchedRecords};
pub use tracker::{NotIncreasing, OffsetTracker};
