//! [`ProcessingEngine`]: the handle the fetcher and the rebalance listener use. It keeps the
//! table of lanes (one task per partition, see the `run` module), hands each submitted batch to
//! its lane, and answers from the lanes' published state: committable offsets, backpressure,
//! metrics. The table's lock is taken once per call (per batch, never per record); the lanes
//! never take it. What changes is signalled (`signals.rs`): backpressure to the fetcher, a
//! handler starting to the watchdog, the halting failure to its watcher.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::Duration;

use mooring_wire::records::Record;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::context::{Context, Stats};
use super::lane::{Bounds, LaneHandle, LaneState};
use super::run::Lane;
use super::spans::TraceInfo;
use super::{
    watchdog, Dispatch, EngineError, FetchedRecords, HandlerFailure, ProcessingConfig,
    ProcessingEvents, ProcessingMetrics, SubmitError,
};
use crate::TopicPartition;
use mooring_group::EventSink;

/// What [`ProcessingEngine::submit`] accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    /// Records accepted (a prefix of the batch).
    pub accepted: usize,
    /// Records that did not fit, in order: the fetcher rewinds its position to the first one.
    /// Empty unless the fetcher kept fetching a backpressured partition.
    pub rejected: Vec<Record>,
    /// The partition is (now) paused by backpressure.
    pub paused_by_backpressure: bool,
}

/// What a stop (revoke) or a shutdown leaves.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StopReport {
    /// Per partition, the offset to commit: the lowest unfinished offset, or the last finished + 1.
    /// Absent for partitions that never received a record.
    pub committable: BTreeMap<TopicPartition, i64>,
    /// Partitions whose handlers were still running at the timeout; their offsets above the
    /// committable one are not committed and will be processed again by the next owner.
    pub timed_out: Vec<TopicPartition>,
}

/// The lanes: those live, and those being stopped (a revoke waiting for their handlers).
#[derive(Debug, Default)]
struct Table {
    live: HashMap<TopicPartition, LaneHandle>,
    stopping: Vec<(u64, TopicPartition)>,
    next_id: u64,
    closed: bool,
}

struct EngineState<H: Dispatch> {
    pub(crate) ctx: Arc<Context<H>>,
    table: RwLock<Table>,
    runtime: tokio::runtime::Handle,
}

impl<H: Dispatch> EngineState<H> {
    fn read(&self) -> RwLockReadGuard<'_, Table> {
        self.table.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Table> {
        self.table.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Reports records past `max.poll.interval.ms`; says when the watchdog should look again:
    /// at the earliest deadline of a running record, not until a handler starts when none runs,
    /// never once shut down with nothing running (`watchdog.rs`).
    fn watchdog_scan(&self, now: Instant) -> watchdog::Next {
        let ctx = &self.ctx;
        let table = self.read();
        if table.closed && ctx.in_flight() == 0 {
            return watchdog::Next::Stop;
        }
        if ctx.watchdog.sleep_unless(|| ctx.in_flight() > 0) {
            return watchdog::Next::Idle;
        }
        let recheck = ctx.config.effective_watchdog_interval();
        let now_ns = ctx.ns_of(now);
        let next = table
            .live
            .values()
            .filter_map(|lane| lane.state.scan_overdue(ctx, now_ns, recheck))
            .min();
        // Handlers run that no lane shows yet (a lane publishes its record as it starts it).
        watchdog::Next::At(next.map_or(now + recheck, |ns| ctx.instant_of(ns)))
    }

    /// Every accepted record finished (nothing buffered, nothing running), or dispatch halted
    /// after a failure and nothing runs.
    fn is_drained(&self) -> bool {
        self.ctx.in_flight() == 0
            && (self.ctx.is_halted()
                || self
                    .read()
                    .live
                    .values()
                    .all(|l| l.state.buffered_records() == 0))
    }
}

impl<H: Dispatch> Drop for EngineState<H> {
    /// The watchdog holds the engine weakly and may sleep until a handler starts: it is woken
    /// to find the engine gone and end.
    fn drop(&mut self) {
        self.ctx.watchdog.wake();
    }
}

/// Removes a stop's partitions from the stopping list however the stop ends (also when its
/// future is dropped).
struct StoppingGuard<'a, H: Dispatch> {
    shared: &'a EngineState<H>,
    ids: Vec<u64>,
}

impl<H: Dispatch> Drop for StoppingGuard<'_, H> {
    fn drop(&mut self) {
        self.shared
            .write()
            .stopping
            .retain(|(id, _)| !self.ids.contains(id));
        self.shared.ctx.backpressure.changed();
    }
}

/// Runs a [`Handler`](super::Handler) over the records the fetcher submits (or a
/// [`BatchHandler`](super::BatchHandler) over batches of them, given as
/// [`Batches`](super::Batches)), with bounded concurrency, ordering per partition (or key),
/// bounded buffers with backpressure, a `max.poll.interval.ms` watchdog and commit tracking. Cloning gives another handle to the same engine. Dropping every handle
/// without [`shutdown`](Self::shutdown) lets running handlers, and the records already buffered,
/// finish on the runtime; call `shutdown` to stop and learn what to commit.
///
/// ```
/// use std::time::Duration;
/// use mooring_consumer::processing::{ConsumerRecord, ProcessingConfig, ProcessingEngine};
/// use mooring_consumer::TopicPartition;
/// use mooring_wire::records::Record;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let handler = |record: ConsumerRecord| async move {
///     // ... process the record ...
///     Ok::<(), String>(())
/// };
/// let (engine, _events) = ProcessingEngine::new(ProcessingConfig::default(), handler)?;
/// let tp = TopicPartition::new("orders", 0);
/// engine.add_partitions([tp.clone()]);
/// let records = (100..110).map(|o| Record::new(o, 0, None, Some("v".into()))).collect();
/// engine.submit(&tp, records)?;
/// // On revoke (or shutdown): wait for in-flight handlers, then commit what finished.
/// let report = engine.shutdown(Duration::from_secs(5)).await;
/// assert!(report.committable[&tp] >= 100);
/// # Ok(())
/// # }
/// ```
pub struct ProcessingEngine<H: Dispatch> {
    shared: Arc<EngineState<H>>,
}

impl<H: Dispatch> Clone for ProcessingEngine<H> {
    fn clone(&self) -> Self {
        ProcessingEngine {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<H: Dispatch> fmt::Debug for ProcessingEngine<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProcessingEngine")
            .field("in_flight", &self.shared.ctx.in_flight())
            .field("closed", &self.shared.read().closed)
            .finish_non_exhaustive()
    }
}

impl<H: Dispatch> ProcessingEngine<H> {
    /// Builds the engine and starts its watchdog. Must be called inside a Tokio runtime; the
    /// lanes run on that runtime. Returns the engine and the receiver of its events. A batch
    /// handler needs ordering `Partition` ([`ProcessingConfig::validate_for_batches`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mooring_consumer::processing::{Batch, Batches, ProcessingConfig, ProcessingEngine};
    /// use mooring_consumer::TopicPartition;
    /// use mooring_wire::records::Record;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let (engine, _events) = ProcessingEngine::new(
    ///     ProcessingConfig::default(),
    ///     Batches(|batch: Batch| async move {
    ///         println!("{} records from {}", batch.len(), batch.first_offset());
    ///         Ok::<(), String>(())
    ///     }),
    /// )?;
    /// let tp = TopicPartition::new("orders", 0);
    /// engine.add_partitions([tp.clone()]);
    /// engine.submit(&tp, (0..10).map(|o| Record::new(o, 0, None, None)).collect())?;
    /// assert!(engine.drained(Duration::from_secs(5)).await);
    /// assert_eq!(engine.committable_offset(&tp), Some(10));
    /// # Ok(())
    /// # }
    /// ```
    pub fn new(
        config: ProcessingConfig,
        handler: H,
    ) -> Result<(Self, ProcessingEvents), EngineError> {
        Self::with_trace(config, handler, TraceInfo::default())
    }

    /// As [`new`](Self::new), naming the group and client on the records' process spans.
    pub(crate) fn with_trace(
        config: ProcessingConfig,
        handler: H,
        trace: TraceInfo,
    ) -> Result<(Self, ProcessingEvents), EngineError> {
        if H::BATCHES {
            config.validate_for_batches()?;
        } else {
            config.validate()?;
        }
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| EngineError::NoRuntime)?;
        let (sink, events) = EventSink::channel(config.event_capacity);
        let shared = Arc::new(EngineState {
            ctx: Arc::new(Context::new(config, handler, trace, sink)),
            table: RwLock::new(Table::default()),
            runtime,
        });
        let engine = Arc::downgrade(&shared);
        let wake = Arc::clone(&shared.ctx.watchdog);
        shared.runtime.spawn(watchdog::run(wake, move |now| {
            engine
                .upgrade()
                .map_or(watchdog::Next::Stop, |s| s.watchdog_scan(now))
        }));
        Ok((ProcessingEngine { shared }, events))
    }

    /// Starts accepting records of these partitions (newly assigned). A partition already present
    /// keeps its state (cooperative rebalance: partitions that stay).
    pub fn add_partitions(&self, partitions: impl IntoIterator<Item = TopicPartition>) {
        let mut table = self.shared.write();
        if table.closed {
            return;
        }
        let bounds = Bounds::from_config(&self.shared.ctx.config);
        for tp in partitions {
            if table.live.contains_key(&tp) {
                continue;
            }
            let id = table.next_id;
            table.next_id += 1;
            let state = Arc::new(LaneState::new(tp.clone(), bounds));
            let (tx, rx) = mpsc::unbounded_channel();
            let lane = Lane::new(Arc::clone(&self.shared.ctx), Arc::clone(&state), rx);
            let join = self.shared.runtime.spawn(lane.run());
            table.live.insert(tp, LaneHandle::new(id, state, tx, join));
        }
    }

    /// Hands records of one partition (increasing offsets, as fetched) to the engine. Accepts the
    /// prefix that fits the partition's buffer; see [`Submitted`]. The records' batch facts are
    /// [`BatchInfo::default`](super::BatchInfo::default); the fetcher uses [`submit_fetched`](Self::submit_fetched).
    pub fn submit(
        &self,
        partition: &TopicPartition,
        records: Vec<Record>,
    ) -> Result<Submitted, SubmitError> {
        self.submit_fetched(partition, FetchedRecords::from(records))
    }

    /// As [`submit`](Self::submit), with the batches the records came from
    /// ([`FetchedRecords`]): each record takes its batch's facts (timestamp type, log-append
    /// time, leader epoch: see [`ConsumerRecord`](super::ConsumerRecord)). The records go to the
    /// partition's lane in one message.
    pub fn submit_fetched(
        &self,
        partition: &TopicPartition,
        fetched: FetchedRecords,
    ) -> Result<Submitted, SubmitError> {
        let table = self.shared.read();
        if table.closed {
            return Err(SubmitError::Closed);
        }
        let lane = table
            .live
            .get(partition)
            .ok_or_else(|| SubmitError::UnknownPartition(partition.clone()))?;
        lane.submit(&self.shared.ctx, fetched)
    }

    /// The offsets a commit may carry now, for every partition processed (not being stopped).
    pub fn committable_offsets(&self) -> BTreeMap<TopicPartition, i64> {
        self.shared
            .read()
            .live
            .iter()
            .filter_map(|(tp, l)| Some((tp.clone(), l.state.committable()?)))
            .collect()
    }

    /// The offset a commit of this partition may carry now.
    pub fn committable_offset(&self, partition: &TopicPartition) -> Option<i64> {
        self.shared.read().live.get(partition)?.state.committable()
    }

    /// The partitions whose fetching backpressure pauses now (level-triggered: the fetcher may
    /// read this every round instead of following events).
    pub fn backpressured_partitions(&self) -> Vec<TopicPartition> {
        let mut v: Vec<TopicPartition> = self
            .shared
            .read()
            .live
            .values()
            .filter(|l| l.state.is_paused())
            .map(|l| l.state.tp.clone())
            .collect();
        v.sort();
        v
    }

    /// The partitions the fetcher must not fetch now: those backpressure pauses, and those being
    /// stopped by a revoke (waiting for their handlers), whose records the engine refuses. Sorted.
    pub fn unfetchable_partitions(&self) -> Vec<TopicPartition> {
        let mut all = self.backpressured_partitions();
        all.extend(self.shared.read().stopping.iter().map(|(_, tp)| tp.clone()));
        all.sort();
        all.dedup();
        all
    }

    /// Revoke: closes these partitions' lanes (unstarted records are discarded), waits up to
    /// `timeout` for their running handlers, then forgets them and returns what to commit.
    /// Other partitions keep running (cooperative rebalance) and their committable offsets stay
    /// available. One stop per partition at a time: the rebalance listener serializes them.
    pub async fn stop_partitions(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
        timeout: Duration,
    ) -> StopReport {
        let lanes = {
            let mut table = self.shared.write();
            let lanes: Vec<LaneHandle> = partitions
                .into_iter()
                .filter_map(|tp| table.live.remove(&tp))
                .collect();
            for l in &lanes {
                table.stopping.push((l.id, l.state.tp.clone()));
            }
            lanes
        };
        self.shared.ctx.backpressure.changed();
        self.stop_lanes(lanes, Instant::now() + timeout).await
    }

    async fn stop_lanes(&self, lanes: Vec<LaneHandle>, deadline: Instant) -> StopReport {
        let _guard = StoppingGuard {
            shared: &self.shared,
            ids: lanes.iter().map(|l| l.id).collect(),
        };
        let mut discarded = 0;
        let mut waits = Vec::with_capacity(lanes.len());
        for lane in lanes {
            discarded += lane.state.close();
            // Dropping the handle closes the lane's channel: an idle lane ends at once.
            let LaneHandle { state, join, .. } = lane;
            waits.push((state, join));
        }
        self.count_discarded(discarded);
        let mut report = StopReport::default();
        for (state, mut join) in waits {
            if tokio::time::timeout_at(deadline, &mut join).await.is_err() {
                // Left to finish unobserved; what it finishes now is not committed.
                report.timed_out.push(state.tp.clone());
            }
            if let Some(c) = state.committable() {
                report.committable.insert(state.tp.clone(), c);
            }
        }
        report.timed_out.sort();
        report
    }

    fn count_discarded(&self, discarded: usize) {
        if discarded > 0 {
            self.shared.ctx.add_stats(&Stats {
                discarded: discarded as u64,
                ..Stats::default()
            });
        }
    }

    /// Lost partitions: forgets them at once, without waiting and with nothing to commit. Returns
    /// the number of unstarted records discarded. Handlers still running finish unobserved.
    pub fn drop_partitions(&self, partitions: impl IntoIterator<Item = TopicPartition>) -> usize {
        let mut discarded = 0;
        {
            let mut table = self.shared.write();
            for tp in partitions {
                if let Some(lane) = table.live.remove(&tp) {
                    discarded += lane.state.close();
                }
                table.stopping.retain(|(_, s)| *s != tp);
            }
        }
        self.shared.ctx.backpressure.changed();
        self.count_discarded(discarded);
        discarded
    }

    /// Stops accepting records, discards unstarted ones, waits up to `timeout` for running
    /// handlers and returns the final committable offsets. Later calls return an empty report.
    pub async fn shutdown(&self, timeout: Duration) -> StopReport {
        let lanes = {
            let mut table = self.shared.write();
            table.closed = true;
            let lanes: Vec<LaneHandle> = table.live.drain().map(|(_, l)| l).collect();
            for l in &lanes {
                table.stopping.push((l.id, l.state.tp.clone()));
            }
            lanes
        };
        self.shared.ctx.backpressure.changed();
        // Asleep for want of a handler, the watchdog ends now that the engine is closed.
        self.shared.ctx.watchdog.wake();
        self.stop_lanes(lanes, Instant::now() + timeout).await
    }

    /// Waits until every accepted record has finished (nothing buffered, nothing running), or
    /// dispatch halted after a failure and nothing runs. Returns `false` at the timeout.
    pub async fn drained(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let shared = &self.shared;
        shared
            .ctx
            .progress
            .wait_until(deadline, || shared.is_drained())
            .await
    }

    /// The failure that stopped dispatching, under policy [`OnFailure::Stop`](super::OnFailure::Stop).
    pub fn failure(&self) -> Option<HandlerFailure> {
        self.shared.ctx.failure()
    }

    /// Completes with the failure that stops dispatching, once there is one (at once if there
    /// is already).
    pub(crate) async fn failed(&self) -> HandlerFailure {
        let ctx = &self.shared.ctx;
        loop {
            let notified = ctx.failed_notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(failure) = ctx.failure() {
                return failure;
            }
            notified.await;
        }
    }

    /// Completes when what [`unfetchable_partitions`](Self::unfetchable_partitions) returns may
    /// have changed (a lane crossed its pause or resume level, a stop began or ended). One
    /// waiter, the fetcher: a change while it does not wait is kept for its next wait.
    pub(crate) fn backpressure_changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.shared.ctx.backpressure.notified()
    }

    /// A snapshot of the engine's metrics. Counts of a busy lane reach it every few hundred
    /// records (and whenever the lane goes idle).
    pub fn metrics(&self) -> ProcessingMetrics {
        let ctx = &self.shared.ctx;
        let now = ctx.now_ns();
        let table = self.shared.read();
        let mut partitions: Vec<_> = table.live.values().map(|l| l.state.metrics()).collect();
        partitions.sort_by(|a, b| a.partition.cmp(&b.partition));
        let mut overdue: Vec<_> = table
            .live
            .values()
            .filter_map(|l| l.state.overdue(ctx, now))
            .collect();
        overdue.sort_by(|a, b| (&a.partition, a.offset).cmp(&(&b.partition, b.offset)));
        let last_progress = table
            .live
            .values()
            .map(|l| {
                l.state
                    .last_progress
                    .load(std::sync::atomic::Ordering::Relaxed)
            })
            .fold(ctx.gone_progress(), u64::max);
        drop(table);
        let stats = ctx.stats();
        ProcessingMetrics {
            in_flight: ctx.in_flight(),
            concurrency: ctx.config.concurrency,
            max_in_flight_observed: ctx
                .max_in_flight_observed
                .load(std::sync::atomic::Ordering::Relaxed),
            partitions,
            handler_latency: stats.latency,
            completed_total: stats.completed,
            failed_total: stats.failed,
            skipped_total: stats.skipped,
            retries_total: stats.retries,
            poll_interval_exceeded_total: ctx
                .poll_interval_exceeded
                .load(std::sync::atomic::Ordering::Relaxed),
            events_dropped_total: ctx.events.dropped(),
            discarded_total: stats.discarded,
            abandoned_total: stats.abandoned,
            since_last_progress: Context::<H>::between(last_progress.max(1), now),
            overdue,
            halted: ctx.is_halted(),
        }
    }
}
