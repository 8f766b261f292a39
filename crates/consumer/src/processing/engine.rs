//! [`ProcessingEngine`]: the handle the fetcher and the rebalance listener use. It owns the
//! bookkeeping behind a mutex that is never held across an `.await`, spawns handler tasks, and
//! wakes waiters (stop, shutdown) on every completion.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use mooring_wire::records::Record;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::core::{Core, Outcome, PartitionId, Start, TaskId};
use super::events::EventSink;
use super::{
    task, watchdog, BatchInfo, EngineError, EventReceiver, FailurePolicy, Handler, HandlerError,
    HandlerFailure, ProcessingConfig, ProcessingMetrics, SubmitError,
};
use crate::otel::spans::TraceInfo;
use crate::TopicPartition;

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

pub(crate) struct Shared<H> {
    core: Mutex<Core>,
    handler: H,
    policy: FailurePolicy,
    progress: Notify,
    runtime: tokio::runtime::Handle,
    trace: TraceInfo,
}

impl<H: Handler> Shared<H> {
    fn lock(&self) -> MutexGuard<'_, Core> {
        // A panic while holding the lock leaves consistent-enough counters; keep serving.
        self.core.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn handler(&self) -> &H {
        &self.handler
    }

    pub(crate) fn policy(&self) -> FailurePolicy {
        self.policy
    }

    pub(crate) fn trace(&self) -> &TraceInfo {
        &self.trace
    }

    pub(crate) fn retrying(
        &self,
        task: TaskId,
        attempt: u32,
        error: HandlerError,
        after: Duration,
    ) {
        self.lock().retrying(task, attempt, error, after);
    }

    pub(crate) fn complete(self: &Arc<Self>, task: TaskId, outcome: Outcome) {
        let starts = self.lock().complete(task, outcome, Instant::now());
        self.progress.notify_waiters();
        self.spawn(starts);
    }

    /// Returns whether the watchdog should keep running.
    pub(crate) fn watchdog_tick(&self, now: Instant) -> bool {
        let mut core = self.lock();
        core.scan_overdue(now);
        !(core.is_closed() && core.in_flight() == 0)
    }

    fn spawn(self: &Arc<Self>, starts: Vec<Start>) {
        for start in starts {
            self.runtime.spawn(task::run(Arc::clone(self), start));
        }
    }
}

/// Runs a [`Handler`] over the records the fetcher submits, with bounded concurrency, ordering
/// per partition (or key), bounded buffers with backpressure, a `max.poll.interval.ms` watchdog
/// and commit tracking. Cloning gives another handle to the same engine. Dropping every handle
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
pub struct ProcessingEngine<H: Handler> {
    shared: Arc<Shared<H>>,
}

impl<H: Handler> Clone for ProcessingEngine<H> {
    fn clone(&self) -> Self {
        ProcessingEngine {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<H: Handler> fmt::Debug for ProcessingEngine<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let core = self.shared.lock();
        f.debug_struct("ProcessingEngine")
            .field("in_flight", &core.in_flight())
            .field("closed", &core.is_closed())
            .finish_non_exhaustive()
    }
}

impl<H: Handler> ProcessingEngine<H> {
    /// Builds the engine and starts its watchdog. Must be called inside a Tokio runtime; handler
    /// tasks run on that runtime. Returns the engine and the receiver of its events.
    pub fn new(config: ProcessingConfig, handler: H) -> Result<(Self, EventReceiver), EngineError> {
        Self::with_trace(config, handler, TraceInfo::default())
    }

    /// As [`new`](Self::new), naming the group and client on the records' process spans.
    pub(crate) fn with_trace(
        config: ProcessingConfig,
        handler: H,
        trace: TraceInfo,
    ) -> Result<(Self, EventReceiver), EngineError> {
        config.validate()?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| EngineError::NoRuntime)?;
        let (sink, events) = EventSink::new(config.event_capacity);
        let period = config.effective_watchdog_interval();
        let shared = Arc::new(Shared {
            policy: config.failure_policy,
            core: Mutex::new(Core::new(config, sink, Instant::now())),
            handler,
            progress: Notify::new(),
            runtime,
            trace,
        });
        shared
            .runtime
            .spawn(watchdog::run(Arc::downgrade(&shared), period));
        Ok((ProcessingEngine { shared }, events))
    }

    /// Starts accepting records of these partitions (newly assigned). A partition already present
    /// keeps its state (cooperative rebalance: partitions that stay).
    pub fn add_partitions(&self, partitions: impl IntoIterator<Item = TopicPartition>) {
        self.shared.lock().add(partitions);
    }

    /// Hands records of one partition (increasing offsets, as fetched) to the engine. Accepts the
    /// prefix that fits the partition's buffer; see [`Submitted`]. The records' batch facts are
    /// [`BatchInfo::default`]; the fetcher uses [`submit_batches`](Self::submit_batches).
    pub fn submit(
        &self,
        partition: &TopicPartition,
        records: Vec<Record>,
    ) -> Result<Submitted, SubmitError> {
        self.submit_batches(partition, records, &[])
    }

    /// As [`submit`](Self::submit), with the batches the records came from: each batch's last
    /// offset and its [`BatchInfo`], in offset order. A record takes the facts of the first batch
    /// whose last offset is at or above its own (timestamp type, log-append time, leader epoch:
    /// see [`ConsumerRecord`](super::ConsumerRecord)).
    pub fn submit_batches(
        &self,
        partition: &TopicPartition,
        records: Vec<Record>,
        batches: &[(i64, BatchInfo)],
    ) -> Result<Submitted, SubmitError> {
        let (submitted, starts) =
            self.shared
                .lock()
                .submit(partition, records, batches, Instant::now())?;
        self.shared.spawn(starts);
        Ok(submitted)
    }

    /// The offsets a commit may carry now, for every partition processed (not being stopped).
    pub fn committable_offsets(&self) -> BTreeMap<TopicPartition, i64> {
        self.shared.lock().committable()
    }

    /// The offset a commit of this partition may carry now.
    pub fn committable_offset(&self, partition: &TopicPartition) -> Option<i64> {
        self.shared.lock().committable_of(partition)
    }

    /// The partitions whose fetching backpressure pauses now (level-triggered: the fetcher may
    /// read this every round instead of following events).
    pub fn backpressured_partitions(&self) -> Vec<TopicPartition> {
        self.shared.lock().backpressured()
    }

    /// The partitions the fetcher must not fetch now: those backpressure pauses, and those being
    /// stopped by a revoke (waiting for their handlers), whose records the engine refuses. Sorted.
    pub fn unfetchable_partitions(&self) -> Vec<TopicPartition> {
        let core = self.shared.lock();
        let mut all = core.backpressured();
        all.extend(core.stopping());
        all.sort();
        all.dedup();
        all
    }

    /// Revoke: stops dispatching these partitions, discards their unstarted records, waits up to
    /// `timeout` for their running handlers, then forgets them and returns what to commit.
    /// Other partitions keep running (cooperative rebalance) and their committable offsets stay
    /// available. One stop per partition at a time: the rebalance listener serializes them.
    pub async fn stop_partitions(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
        timeout: Duration,
    ) -> StopReport {
        let pids = self.shared.lock().begin_stop(partitions);
        self.wait_idle(&pids, Instant::now() + timeout).await;
        self.shared.lock().finish_stop(&pids)
    }

    /// Lost partitions: forgets them at once, without waiting and with nothing to commit. Returns
    /// the number of unstarted records discarded. Handlers still running finish unobserved.
    pub fn drop_partitions(&self, partitions: impl IntoIterator<Item = TopicPartition>) -> usize {
        self.shared.lock().drop_partitions(partitions)
    }

    /// Stops accepting records, discards unstarted ones, waits up to `timeout` for running
    /// handlers and returns the final committable offsets. Later calls return an empty report.
    pub async fn shutdown(&self, timeout: Duration) -> StopReport {
        let pids = self.shared.lock().begin_shutdown();
        self.wait_idle(&pids, Instant::now() + timeout).await;
        self.shared.lock().finish_stop(&pids)
    }

    /// Waits until every accepted record has finished (nothing buffered, nothing running), or
    /// dispatch halted after a failure and nothing runs. Returns `false` at the timeout.
    pub async fn drained(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            let notified = self.shared.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let drained = self.shared.lock().is_drained();
            if drained {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }

    /// The failure that stopped dispatching, under policy [`OnFailure::Stop`](super::OnFailure::Stop).
    pub fn failure(&self) -> Option<HandlerFailure> {
        self.shared.lock().failure().cloned()
    }

    /// A snapshot of the engine's metrics.
    pub fn metrics(&self) -> ProcessingMetrics {
        self.shared.lock().metrics(Instant::now())
    }

    async fn wait_idle(&self, pids: &[PartitionId], deadline: Instant) -> bool {
        loop {
            let notified = self.shared.progress.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let idle = self.shared.lock().in_flight_of(pids) == 0;
            if idle {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return false;
            }
        }
    }
}
