//! The sidecar's shared application state: configuration, metrics and [`State`], plus the alert
//! evaluation that reads them. Cloned into every handler as an `Arc`.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use mooring_client::config::Secret;

use crate::alerts::{judge, AlertKind, AlertState};
use crate::config::SidecarConfig;
use crate::metrics::{write_lag_families, Metrics};
use crate::state::State;

/// Configuration, metrics, state.
#[derive(Debug)]
pub struct App {
    /// The configuration.
    pub config: SidecarConfig,
    /// The Prometheus series.
    pub metrics: Metrics,
    state: Mutex<State>,
    /// The credential `POST /v1/events` requires (read from `ingest.token.file` at start).
    pub(crate) ingest_token: Option<Secret>,
    /// Asks the broker watch for a look now (a rebalance completed and waits for its cause).
    pub watch_now: tokio::sync::Notify,
}

impl App {
    /// A fresh sidecar.
    pub fn new(config: SidecarConfig) -> App {
        let state = State::new(config.rebalance_history);
        App {
            config,
            metrics: Metrics::new(),
            state: Mutex::new(state),
            ingest_token: None,
            watch_now: tokio::sync::Notify::new(),
        }
    }

    /// Whether the broker watch looks at a group (brokers and a group id configured).
    pub fn watches_group(&self) -> bool {
        self.config.client.is_some() && self.config.group_id.is_some()
    }

    /// The state. Never hold the guard across an `.await`.
    pub fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What `GET /metrics` serves: evaluates the alerts (so their gauges are as of now), then the
    /// registry's families, then the per-partition lag families from the lag table, the scaling
    /// signal of the last look-up and the lag statuses as of now.
    pub fn scrape(&self) -> String {
        let _ = self.alerts();
        let mut text = self.metrics.render();
        let state = self.state();
        write_lag_families(&mut text, &state.lag);
        let report = crate::lag_report::report(&self.config, &state, unix_ms() as i64);
        crate::scaling_signal::write_scaling_families(&mut text, state.scaling.signal.as_ref());
        drop(state);
        crate::lag_report::write_status_families(&mut text, &report);
        text
    }

    /// Every alert's state now; also sets the `mooring_alert_level` gauges and the poll-stall
    /// and loop-staleness gauges (so a scrape sees them as of now, not as of the last snapshot).
    pub fn alerts(&self) -> Vec<AlertState> {
        let now = Instant::now();
        let mut state = self.state();
        let stall = poll_stall(&state, now);
        self.metrics.poll_stale_seconds.set(stall);
        self.metrics
            .consumer_loop_stale_seconds
            .set(loop_stale(&state, now).unwrap_or(0.0));
        let unreleased = instance_wait(&state, now);
        self.metrics
            .instance_id_unreleased_wait_seconds
            .set(unreleased);
        let mut out = Vec::new();
        for kind in AlertKind::ALL {
            let t = self.config.threshold(kind);
            let window = t.window.unwrap_or_default();
            let value = match kind {
                AlertKind::Rebalances => {
                    State::count_within(&mut state.rebalance_times, window, now) as f64
                }
                AlertKind::Fenced => {
                    State::count_within(&mut state.fenced_times, window, now) as f64
                }
                AlertKind::RebalanceDurationSeconds => {
                    let running = state
                        .pending
                        .as_ref()
                        .map_or(0.0, |p| now.duration_since(p.started).as_secs_f64());
                    running.max(state.last_rebalance_seconds)
                }
                AlertKind::LagRecords => {
                    state.lag.values().map(|l| l.lag_records).max().unwrap_or(0) as f64
                }
                AlertKind::LagSeconds => state
                    .lag
                    .values()
                    .map(|l| l.lag_seconds)
                    .fold(0.0, f64::max),
                AlertKind::PollStallSeconds => stall,
                AlertKind::InstanceIdUnreleasedSeconds => unreleased,
                AlertKind::ShareRejected => state.share.rejected.count(window, now) as f64,
                AlertKind::ShareArchived => state.share.archived.count(window, now) as f64,
                AlertKind::ShareLockExpired => state.share.lock_expired.count(window, now) as f64,
            };
            let alert = judge(kind, value, t);
            self.metrics
                .alert_level
                .with_label_values(&[kind.as_str()])
                .set(alert.level);
            out.push(alert);
        }
        out
    }
}

/// Time the processing loop made no progress while work waited: the snapshot's figure plus its
/// age (0 when idle or never seen).
pub fn poll_stall(state: &State, now: Instant) -> f64 {
    match &state.snapshot {
        Some((at, snap)) if snap.in_flight > 0 || snap.buffered_records > 0 => {
            snap.since_last_progress_seconds + now.duration_since(*at).as_secs_f64()
        }
        _ => 0.0,
    }
}

/// Seconds since the consumer's fetch (poll) loop last began an iteration: the last snapshot's
/// figure plus the snapshot's age (`None`: no snapshot with a running loop yet, or the consumer
/// is shutting down). Handlers run in their own tasks, so a slow handler never moves this; a
/// stuck runtime (a blocked thread, a lock never released) does.
pub fn loop_stale(state: &State, now: Instant) -> Option<f64> {
    match &state.snapshot {
        Some((at, snap)) if !snap.shutting_down => snap
            .since_last_loop_tick_seconds
            .map(|s| s + now.duration_since(*at).as_secs_f64()),
        _ => None,
    }
}

/// Seconds the member has waited for its `group.instance.id` (0 when it does not wait, or gave
/// up: then it fails, which its fatal error says).
pub fn instance_wait(state: &State, now: Instant) -> f64 {
    state
        .member
        .instance_id_unreleased
        .as_ref()
        .filter(|w| w.waiting())
        .map_or(0.0, |w| w.waited_seconds(now))
}

/// Unix time in seconds.
pub fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Unix time in ms.
pub fn unix_ms() -> u64 {
    (unix_now() * 1000.0) as u64
}
