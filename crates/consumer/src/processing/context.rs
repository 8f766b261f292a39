//! What every lane of the engine shares: the handler and its failure policy, the global
//! concurrency bound (a fair semaphore), the halt after a `Stop` failure, the counters and the
//! latency histogram, the events, the wake-up of whoever waits for the engine to drain, and the
//! signals to the fetcher, the watchdog and the failure's watcher (`signals.rs`).
//!
//! Nothing here is touched per record under a lock: a lane takes a concurrency permit per run of
//! records (it keeps it from one record to the next unless another lane waits for one), reads
//! the halt flag with a plain atomic load, and adds its counts to the shared [`Stats`] once per
//! few hundred records and whenever it goes idle.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::futures::Notified;
use tokio::sync::{Notify, Semaphore};
use tokio::time::Instant;

use super::signals::{BackpressureChanges, WatchdogWake};
use super::spans::TraceInfo;
use super::{
    Dispatch, FailurePolicy, HandlerFailure, LatencyHistogram, ProcessingConfig, ProcessingEvent,
};
use mooring_group::EventSink;

/// Locks a mutex whose data stays consistent enough for counters after a panic elsewhere.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Outcome counters and the latency histogram: a lane keeps its own and adds them here.
#[derive(Debug, Default, Clone)]
pub(crate) struct Stats {
    pub(crate) completed: u64,
    pub(crate) failed: u64,
    pub(crate) skipped: u64,
    pub(crate) retries: u64,
    pub(crate) discarded: u64,
    pub(crate) abandoned: u64,
    pub(crate) latency: LatencyHistogram,
}

impl Stats {
    pub(crate) fn add(&mut self, other: &Stats) {
        self.completed += other.completed;
        self.failed += other.failed;
        self.skipped += other.skipped;
        self.retries += other.retries;
        self.discarded += other.discarded;
        self.abandoned += other.abandoned;
        self.latency.merge(&other.latency);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.latency.count() == 0
            && self.failed + self.discarded + self.abandoned + self.completed == 0
    }
}

/// Wakes waiters of the engine's progress (drain, shutdown) without a cost per record when
/// nobody waits: lanes call [`Progress::notify`] when they go idle, halt or end.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    waiters: AtomicUsize,
    notify: Notify,
}

impl Progress {
    pub(crate) fn notify(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            self.notify.notify_waiters();
        }
    }

    /// Waits until `done()` holds or the deadline passes; returns whether it holds.
    pub(crate) async fn wait_until(&self, deadline: Instant, done: impl Fn() -> bool) -> bool {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        let held = loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if done() {
                break true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                break done();
            }
        };
        self.waiters.fetch_sub(1, Ordering::SeqCst);
        held
    }
}

/// The engine's shared state, held by every lane task and by the engine handle.
pub(crate) struct Context<H> {
    pub(crate) handler: H,
    pub(crate) config: ProcessingConfig,
    pub(crate) policy: FailurePolicy,
    pub(crate) trace: TraceInfo,
    pub(crate) events: EventSink<ProcessingEvent>,
    /// The global concurrency bound. Permits are taken with `forget` and given back with
    /// `add_permits`, so a lane counts the permits it holds.
    pub(crate) permits: Arc<Semaphore>,
    /// Lanes waiting for a permit: a lane holding one gives it up after its record when any does.
    pub(crate) waiting: AtomicUsize,
    pub(crate) max_in_flight_observed: AtomicUsize,
    halted: AtomicBool,
    failure: Mutex<Option<HandlerFailure>>,
    /// Wakes whoever waits for the failure that halts dispatching.
    failed: Notify,
    /// Lanes crossing their pause or resume levels, partitions stopped by a revoke: what the
    /// fetcher must not fetch changed.
    pub(crate) backpressure: BackpressureChanges,
    /// Wakes the watchdog when a handler starts while none ran.
    pub(crate) watchdog: Arc<WatchdogWake>,
    stats: Mutex<Stats>,
    pub(crate) poll_interval_exceeded: AtomicU64,
    pub(crate) progress: Progress,
    /// The origin of the lanes' timestamps (nanoseconds since it, plus one: 0 means none).
    epoch: Instant,
    /// The latest progress of a lane that has gone (stopped or dropped).
    gone_progress: AtomicU64,
}

impl<H: Dispatch> Context<H> {
    pub(crate) fn new(
        config: ProcessingConfig,
        handler: H,
        trace: TraceInfo,
        events: EventSink<ProcessingEvent>,
    ) -> Self {
        Context {
            handler,
            policy: config.failure_policy,
            permits: Arc::new(Semaphore::new(config.concurrency)),
            config,
            trace,
            events,
            waiting: AtomicUsize::new(0),
            max_in_flight_observed: AtomicUsize::new(0),
            halted: AtomicBool::new(false),
            failure: Mutex::new(None),
            failed: Notify::new(),
            backpressure: BackpressureChanges::default(),
            watchdog: Arc::new(WatchdogWake::default()),
            stats: Mutex::new(Stats::default()),
            poll_interval_exceeded: AtomicU64::new(0),
            progress: Progress::default(),
            epoch: Instant::now(),
            gone_progress: AtomicU64::new(0),
        }
    }
}

impl<H> Context<H> {
    /// Now, as a lane timestamp (never 0).
    pub(crate) fn now_ns(&self) -> u64 {
        self.ns_of(Instant::now())
    }

    /// The time of a lane timestamp.
    pub(crate) fn instant_of(&self, ns: u64) -> Instant {
        self.epoch + Duration::from_nanos(ns.saturating_sub(1))
    }

    pub(crate) fn ns_of(&self, t: Instant) -> u64 {
        u64::try_from((t - self.epoch).as_nanos())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1)
    }

    /// The time between two lane timestamps.
    pub(crate) fn between(from: u64, to: u64) -> Duration {
        Duration::from_nanos(to.saturating_sub(from))
    }

    /// Handlers running now (permits out, taken by a lane or by a submit for its first record).
    pub(crate) fn in_flight(&self) -> usize {
        self.config
            .concurrency
            .saturating_sub(self.permits.available_permits())
    }

    /// Called after taking permits: keeps the most ever out, and wakes the watchdog if it
    /// slept for want of a running handler.
    pub(crate) fn observe_in_flight(&self) {
        self.max_in_flight_observed
            .fetch_max(self.in_flight(), Ordering::Relaxed);
        self.watchdog.handler_started();
    }

    pub(crate) fn release(&self, n: usize) {
        if n > 0 {
            self.permits.add_permits(n);
        }
    }

    pub(crate) fn is_halted(&self) -> bool {
        self.halted.load(Ordering::Acquire)
    }

    /// Keeps the first failure and stops every lane from starting records.
    pub(crate) fn halt(&self, failure: HandlerFailure) {
        let mut kept = lock(&self.failure);
        if kept.is_none() {
            *kept = Some(failure);
        }
        self.halted.store(true, Ordering::Release);
        drop(kept);
        self.failed.notify_waiters();
    }

    /// Completes at the next halt. Enable it (or poll it) before reading [`failure`](Self::failure),
    /// so that a halt in between still wakes it.
    pub(crate) fn failed_notified(&self) -> Notified<'_> {
        self.failed.notified()
    }

    pub(crate) fn failure(&self) -> Option<HandlerFailure> {
        lock(&self.failure).clone()
    }

    pub(crate) fn add_stats(&self, stats: &Stats) {
        lock(&self.stats).add(stats);
    }

    pub(crate) fn stats(&self) -> Stats {
        lock(&self.stats).clone()
    }

    pub(crate) fn emit(&self, event: ProcessingEvent) {
        self.events.send(event);
    }

    pub(crate) fn lane_gone(&self, last_progress: u64) {
        self.gone_progress
            .fetch_max(last_progress, Ordering::Relaxed);
    }

    pub(crate) fn gone_progress(&self) -> u64 {
        self.gone_progress.load(Ordering::Relaxed)
    }
}
