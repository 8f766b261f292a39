//! What the runtime's parts share: the configuration, the subscription state (behind a mutex that
//! is never held across an `.await`), the fetcher's network client and its per-broker counters,
//! the wake-up of the fetch loop, the first fatal error and the telemetry sink.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use mooring_client::conn::FrameMemory;
use mooring_client::Client;
use tokio::sync::{watch, Notify};

use crate::config::ConsumerConfig;
use crate::error::{ConsumerError, FirstFatal};
use mooring_group::EventSink;

use crate::events::ConsumerEvent;
use crate::fetcher::stats::FetchCounters;
use crate::latency::LatencyWindow;
use crate::metrics_push::state::{unix_nanos, PushState};
use crate::subscription::SubscriptionState;
use crate::telemetry::fatal::FatalDelivery;

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) config: ConsumerConfig,
    subs: Mutex<SubscriptionState>,
    /// The fetcher's own client: a long-polling Fetch must never queue behind, or ahead of, the
    /// member's heartbeats on one connection.
    pub(crate) fetch_client: Client,
    /// The record data the fetch client's frames hold (`mooring.memory.max.bytes`).
    pub(crate) memory: Arc<FrameMemory>,
    /// What the fetcher fetched from each broker (`Consumer::fetch_stats`).
    pub(crate) fetch_stats: FetchCounters,
    /// Wakes the fetch loop: assignment, pause/resume, seek, backpressure resume, shutdown.
    pub(crate) wake: Notify,
    fatal: FirstFatal,
    pub(crate) events: EventSink<ConsumerEvent>,
    /// `true` once shutdown is requested.
    pub(crate) shutdown: watch::Sender<bool>,
    /// When shutdown was first requested: the shutdown's bound runs from there.
    shutdown_at: OnceLock<tokio::time::Instant>,
    /// Bumped by every assignment change, so a committed-offset look-up that a rebalance
    /// overtook is not applied to the new assignment.
    assignment_epoch: AtomicU64,
    /// Iterations of the fetch loop (the consumer's poll loop): its liveness, apart from any
    /// handler's. Read by the telemetry snapshots.
    loop_ticks: AtomicU64,
    /// When the last iteration began: nanoseconds after `created`, plus one (0: never).
    loop_tick_nanos: AtomicU64,
    created: std::time::Instant,
    /// Whether a telemetry exporter delivered the fatal error.
    pub(crate) fatal_delivery: FatalDelivery,
    /// Fetch requests' latencies, for the metrics pushed to brokers.
    pub(crate) fetch_latency: LatencyWindow,
    /// Commits' latencies, likewise.
    pub(crate) commit_latency: LatencyWindow,
    /// What the metrics push learnt from the brokers (instance id, pushes).
    pub(crate) metrics_push: PushState,
    /// When the consumer was created, in Unix nanoseconds (the start of its cumulative sums).
    pub(crate) created_unix_nanos: u64,
}

impl Shared {
    pub(crate) fn new(
        config: ConsumerConfig,
        subs: SubscriptionState,
        fetch_client: Client,
        memory: Arc<FrameMemory>,
        events: EventSink<ConsumerEvent>,
    ) -> Self {
        Shared {
            config,
            subs: Mutex::new(subs),
            fetch_client,
            memory,
            fetch_stats: FetchCounters::default(),
            wake: Notify::new(),
            fatal: FirstFatal::default(),
            events,
            shutdown: watch::Sender::new(false),
            shutdown_at: OnceLock::new(),
            assignment_epoch: AtomicU64::new(0),
            loop_ticks: AtomicU64::new(0),
            loop_tick_nanos: AtomicU64::new(0),
            created: std::time::Instant::now(),
            fatal_delivery: FatalDelivery::default(),
            fetch_latency: LatencyWindow::default(),
            commit_latency: LatencyWindow::default(),
            metrics_push: PushState::default(),
            created_unix_nanos: unix_nanos(),
        }
    }

    /// The subscription state. Never hold the guard across an `.await`.
    pub(crate) fn subs(&self) -> MutexGuard<'_, SubscriptionState> {
        self.subs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The assignment epoch (see the field).
    pub(crate) fn assignment_epoch(&self) -> u64 {
        self.assignment_epoch.load(Ordering::SeqCst)
    }

    /// One iteration of the fetch loop began (see [`loop_progress`](Self::loop_progress)).
    pub(crate) fn loop_tick(&self) {
        self.loop_ticks.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(self.created.elapsed().as_nanos()).unwrap_or(u64::MAX - 1);
        self.loop_tick_nanos.store(nanos + 1, Ordering::Relaxed);
    }

    /// The fetch loop's iterations so far and the time since the last one began (`None`: it
    /// never ran). The loop iterates at least once a second while it runs, whatever the handlers
    /// do, so a growing figure means the consumer's runtime is stuck, not a slow handler.
    pub(crate) fn loop_progress(&self) -> (u64, Option<std::time::Duration>) {
        let ticks = self.loop_ticks.load(Ordering::Relaxed);
        let at = self.loop_tick_nanos.load(Ordering::Relaxed);
        let since = (at > 0).then(|| {
            self.created
                .elapsed()
                .saturating_sub(std::time::Duration::from_nanos(at - 1))
        });
        (ticks, since)
    }

    /// The assignment changed (assign, revoke, loss).
    pub(crate) fn assignment_changed(&self) {
        self.assignment_epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// Records a fatal error and stops the consumer. The first one wins and is said once: one
    /// error line, one `FatalError` event. Later ones (the same failure, seen by another task:
    /// the fetcher and the member share the brokers' refusal) are only debug lines.
    pub(crate) fn fail(&self, error: ConsumerError) {
        if self.fatal.keep(&error) {
            let kind = error.kind();
            tracing::error!(%error, kind, "consumer stopping on a fatal error");
            self.emit(ConsumerEvent::FatalError { kind, error });
        } else {
            tracing::debug!(%error, "another fatal error after the first; stopping already");
        }
        self.request_shutdown();
    }

    /// The fatal error, if one happened.
    pub(crate) fn fatal(&self) -> Option<ConsumerError> {
        self.fatal.get()
    }

    pub(crate) fn request_shutdown(&self) {
        self.shutdown_at.get_or_init(tokio::time::Instant::now);
        self.shutdown.send_replace(true);
        self.wake.notify_one();
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// When shutdown was first requested, if it was.
    pub(crate) fn shutdown_requested_at(&self) -> Option<tokio::time::Instant> {
        self.shutdown_at.get().copied()
    }

    pub(crate) fn emit(&self, event: ConsumerEvent) {
        self.events.send(event);
    }

    /// Wakes the fetch loop. A wake while the loop is busy is kept for its next wait
    /// (`notify_one`), so none is missed: the loop has no timer to fall back on.
    pub(crate) fn wake(&self) {
        self.wake.notify_one();
    }
}

impl crate::shutdown::Stop for Shared {
    fn request_shutdown(&self) {
        Shared::request_shutdown(self);
    }

    fn is_shutting_down(&self) -> bool {
        Shared::is_shutting_down(self)
    }
}
