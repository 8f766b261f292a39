//! The exporter's tasks: intake (the consumer's event stream → the bounded [`Buffer`]), snapshots
//! (every interval → the buffer) and the sender (the buffer → NDJSON POSTs to the sidecar).
//! They serve any consumer that is a [`Source`] (what a snapshot reads, what the consumer's stream
//! dropped) with an event stream and a conversion of its events: the [`Consumer`] here, the
//! share consumer in `share.rs`.
//!
//! Nothing here can slow the consumer: the consumer's stream never waits (it drops and counts
//! when full), intake only converts and pushes into a bounded buffer, and POSTs run in their own
//! task under a timeout with back-off. Every loss is counted; the next batch that reaches the
//! sidecar starts with an `events_dropped` line carrying the total. A `fatal_error` is sent at
//! once, and `run`, ending on it, waits (a second at most) until it has reached the sidecar.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::{mpsc, watch, Notify};
use tokio::task::JoinHandle;

use super::buffer::Buffer;
use super::config::ExporterConfig;
use super::convert::{convert, now_ms};
use super::http::{post, Endpoint, Post};
use super::snapshot::snapshot;
use crate::{Consumer, ConsumerEvent, ConsumerEvents};
use mooring_group::EventReceiver;
use mooring_telemetry_schema::read_token;
use mooring_telemetry_schema::{Envelope, Event, MemberIdentity, SCHEMA_VERSION};

/// Why the exporter could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// The endpoint is not a plain `http://host:port/path` URL.
    #[error("telemetry endpoint: {0}")]
    Endpoint(String),
    /// The consumer's event stream was already taken (by [`Consumer::events`]).
    #[error("the consumer's event stream was already taken")]
    StreamTaken,
}

/// Counters shared by the exporter's tasks and its handle.
#[derive(Debug, Default)]
struct Stats {
    sent: AtomicU64,
    batches: AtomicU64,
    failures: AtomicU64,
    /// The drop total the sidecar has acknowledged (in an `events_dropped` line).
    reported_dropped: AtomicU64,
}

/// What the exporter reads from the consumer it serves, besides its event stream.
pub(crate) trait Source: Send + Sync + std::fmt::Debug + 'static {
    /// The consumer's state now, as a snapshot line.
    fn snapshot(&self) -> Event;
    /// Events the consumer's stream dropped so far.
    fn dropped_events(&self) -> u64;
    /// An exporter started (`true`) or stopped (`false`) beside the consumer.
    fn attached(&self, _attached: bool) {}
    /// The exporter delivered the consumer's fatal error to the sidecar.
    fn fatal_exported(&self) {}
}

impl Source for Consumer {
    fn snapshot(&self) -> Event {
        Event::Snapshot(snapshot(self))
    }

    fn dropped_events(&self) -> u64 {
        Consumer::dropped_events(self)
    }

    fn attached(&self, attached: bool) {
        self.telemetry_view().0.fatal_delivery.attached(attached);
    }

    fn fatal_exported(&self) {
        self.telemetry_view().0.fatal_delivery.exported();
    }
}

/// A consumer's event stream and how its events become schema events.
pub(crate) struct Intake<E> {
    /// The consumer's stream.
    pub events: EventReceiver<E>,
    /// Where the application's copy of each event goes (`spawn_tee`).
    pub tee: Option<mpsc::Sender<E>>,
    /// The schema event of a consumer event and when it happened (`None`: not exported).
    pub convert: fn(E) -> Option<(u64, Event)>,
}

/// State the tasks share.
#[derive(Debug)]
struct ExporterState {
    source: Box<dyn Source>,
    config: ExporterConfig,
    endpoint: Endpoint,
    buffer: Buffer,
    stats: Stats,
    identity: Mutex<MemberIdentity>,
    seq: AtomicU64,
    ready: Notify,
}

impl ExporterState {
    fn enqueue(&self, ts_ms: u64, event: Event) {
        if let Event::Joined { member_id, .. } = &event {
            self.identity
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .member_id
                .clone_from(member_id);
        }
        // A fatal error goes at once: `run` ends, and the process with it, soon after.
        let urgent = matches!(event, Event::FatalError { .. });
        let envelope = self.envelope(ts_ms, event);
        if self.buffer.push(envelope) >= self.config.batch_max || urgent {
            self.ready.notify_one();
        }
    }

    fn envelope(&self, ts_ms: u64, event: Event) -> Envelope {
        Envelope {
            schema: SCHEMA_VERSION,
            seq: self.seq.fetch_add(1, Ordering::Relaxed),
            ts_ms,
            member: self
                .identity
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone(),
            event,
        }
    }

    /// Everything lost so far: in the consumer's stream and in this buffer.
    fn dropped_total(&self) -> u64 {
        self.buffer.dropped() + self.source.dropped_events()
    }
}

/// Starts the intake, snapshot and sender tasks for `source`, whose lines say `identity`.
pub(crate) fn start<E: Clone + Send + 'static>(
    source: Box<dyn Source>,
    identity: MemberIdentity,
    intake: Intake<E>,
    config: ExporterConfig,
) -> Result<ExporterHandle, TelemetryError> {
    let endpoint = Endpoint::checked(&config.endpoint, config.allow_remote)
        .map_err(TelemetryError::Endpoint)?;
    let shared = Arc::new(ExporterState {
        source,
        buffer: Buffer::new(config.buffer_capacity),
        config,
        endpoint,
        stats: Stats::default(),
        identity: Mutex::new(identity),
        seq: AtomicU64::new(0),
        ready: Notify::new(),
    });
    let (stop_tx, stop_rx) = watch::channel(false);
    let (stop_sender_tx, stop_sender_rx) = watch::channel(false);
    let intake = tokio::spawn(take_events(Arc::clone(&shared), intake, stop_rx.clone()));
    let snapshots = tokio::spawn(snapshots(Arc::clone(&shared), stop_rx));
    shared.source.attached(true);
    let sender = tokio::spawn(sender(Arc::clone(&shared), stop_sender_rx));
    Ok(ExporterHandle {
        shared,
        stop: stop_tx,
        stop_sender: stop_sender_tx,
        producers: vec![intake, snapshots],
        sender,
    })
}

/// Sends a [`Consumer`]'s telemetry to the sidecar. See the [module docs](super).
#[derive(Debug)]
pub struct TelemetryExporter;

impl TelemetryExporter {
    /// Takes the consumer's event stream and starts the exporter's tasks (on the current tokio
    /// runtime). The consumer works the same whether or not the sidecar is there.
    pub fn spawn(
        consumer: &Consumer,
        config: ExporterConfig,
    ) -> Result<ExporterHandle, TelemetryError> {
        Self::start(consumer, config, None)
    }

    /// As [`spawn`](Self::spawn), and hands every event on to the application after taking its
    /// copy (the stream returned, as large as the consumer's own). The exporter never waits for
    /// the application: when its stream is full the application's copy is dropped. The stream
    /// ends after [`ExporterHandle::shutdown`], which passes on what the consumer's held.
    pub fn spawn_tee(
        consumer: &Consumer,
        config: ExporterConfig,
    ) -> Result<(ExporterHandle, ConsumerEvents), TelemetryError> {
        let capacity = consumer
            .telemetry_view()
            .0
            .config
            .group
            .as_ref()
            .map_or(1024, |g| g.event_capacity.max(1024));
        let (tx, rx) = mpsc::channel(capacity);
        Ok((Self::start(consumer, config, Some(tx))?, rx))
    }

    fn start(
        consumer: &Consumer,
        config: ExporterConfig,
        tee: Option<mpsc::Sender<ConsumerEvent>>,
    ) -> Result<ExporterHandle, TelemetryError> {
        // The endpoint is checked before the stream is taken: a bad one leaves it to the caller.
        Endpoint::checked(&config.endpoint, config.allow_remote)
            .map_err(TelemetryError::Endpoint)?;
        let events = consumer.events().ok_or(TelemetryError::StreamTaken)?;
        let (shared_state, _) = consumer.telemetry_view();
        let group = shared_state.config.group.as_ref();
        let identity = MemberIdentity {
            group: group.map(|g| g.group_id.clone()).unwrap_or_default(),
            member_id: String::new(),
            instance_id: group.and_then(|g| g.group_instance_id.clone()),
            client_id: shared_state.config.client.client_id.clone(),
            group_protocol: group.map(|g| g.protocol.as_str().to_string()),
        };
        let intake = Intake {
            events,
            tee,
            convert,
        };
        start(Box::new(consumer.clone()), identity, intake, config)
    }
}

/// The running exporter: counters, and a clean stop that sends what is buffered.
#[derive(Debug)]
pub struct ExporterHandle {
    shared: Arc<ExporterState>,
    stop: watch::Sender<bool>,
    stop_sender: watch::Sender<bool>,
    producers: Vec<JoinHandle<()>>,
    sender: JoinHandle<()>,
}

impl ExporterHandle {
    /// Events lost so far (the consumer's stream was full, or the buffer overflowed while the
    /// sidecar was away).
    pub fn dropped(&self) -> u64 {
        self.shared.dropped_total()
    }

    /// Events the sidecar accepted.
    pub fn sent(&self) -> u64 {
        self.shared.stats.sent.load(Ordering::Relaxed)
    }

    /// POSTs that failed (no sidecar, timeout, non-2xx).
    pub fn failures(&self) -> u64 {
        self.shared.stats.failures.load(Ordering::Relaxed)
    }

    /// Events waiting in the buffer.
    pub fn buffered(&self) -> usize {
        self.shared.buffer.len()
    }

    /// Sends a snapshot now (besides the periodic ones).
    pub fn snapshot_now(&self) {
        self.shared.enqueue(now_ms(), self.shared.source.snapshot());
        self.shared.ready.notify_one();
    }

    /// Stops the tasks after one last snapshot and a few last attempts to send what is buffered
    /// (and the final drop count). Returns the events lost in all.
    pub async fn shutdown(self) -> u64 {
        self.snapshot_now();
        // Producers first, so nothing arrives after the sender's last batch.
        self.stop.send_replace(true);
        for task in self.producers {
            let _ = task.await;
        }
        self.stop_sender.send_replace(true);
        self.shared.ready.notify_one();
        let _ = self.sender.await;
        self.shared.source.attached(false);
        self.shared.dropped_total()
    }
}

async fn take_events<E: Clone>(
    shared: Arc<ExporterState>,
    intake: Intake<E>,
    mut stop: watch::Receiver<bool>,
) {
    let Intake {
        mut events,
        tee,
        convert,
    } = intake;
    let take = |event: E| {
        if let Some(tee) = &tee {
            // Never wait for the application; a full stream loses its copy only.
            let _ = tee.try_send(event.clone());
        }
        if let Some((ts, event)) = convert(event) {
            shared.enqueue(ts, event);
        }
    };
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => take(event),
                None => return,
            },
            _ = stop.wait_for(|s| *s) => {
                // Take what the stream holds, without waiting.
                while let Ok(event) = events.try_recv() {
                    take(event);
                }
                return;
            }
        }
    }
}

async fn snapshots(shared: Arc<ExporterState>, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(
        shared
            .config
            .snapshot_interval
            .max(Duration::from_millis(10)),
    );
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => shared.enqueue(now_ms(), shared.source.snapshot()),
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

async fn sender(shared: Arc<ExporterState>, mut stop: watch::Receiver<bool>) {
    let mut backoff = shared.config.backoff;
    loop {
        let stopping = *stop.borrow();
        if !stopping && shared.buffer.len() < shared.config.batch_max {
            tokio::select! {
                _ = shared.ready.notified() => {}
                _ = tokio::time::sleep(shared.config.flush_interval) => {}
                _ = stop.wait_for(|s| *s) => {}
            }
        }
        let stopping = *stop.borrow();
        let ok = send_batch(&shared).await;
        if stopping {
            // A few last batches for what is left (and the final drop count), then done.
            let mut ok = ok;
            for _ in 0..4 {
                let unreported =
                    shared.dropped_total() > shared.stats.reported_dropped.load(Ordering::Relaxed);
                if !ok || (shared.buffer.len() == 0 && !unreported) {
                    break;
                }
                ok = send_batch(&shared).await;
            }
            return;
        }
        if ok {
            backoff = shared.config.backoff;
        } else {
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = stop.wait_for(|s| *s) => {}
            }
            backoff = (backoff * 2).min(shared.config.max_backoff);
        }
    }
}

/// Sends one batch (with an `events_dropped` line first if losses are unreported). `true` when
/// the sidecar accepted it, or there was nothing to send.
async fn send_batch(shared: &ExporterState) -> bool {
    let token = match &shared.config.token_file {
        Some(path) => match read_token(path) {
            Ok(token) => Some(token),
            Err(e) => {
                tracing::debug!(error = %e, path = %path.display(), "no telemetry credential yet");
                shared.stats.failures.fetch_add(1, Ordering::Relaxed);
                return false;
            }
        },
        None => None,
    };
    let batch = shared.buffer.take(shared.config.batch_max);
    let dropped_total = shared.dropped_total();
    let reported = shared.stats.reported_dropped.load(Ordering::Relaxed);
    if batch.is_empty() && dropped_total <= reported {
        return true;
    }
    let mut body = Vec::with_capacity(batch.len() * 256);
    if dropped_total > reported {
        let line = shared.envelope(
            now_ms(),
            Event::EventsDropped {
                dropped_total,
                dropped_since_last: dropped_total - reported,
            },
        );
        write_line(&mut body, &line);
    }
    for envelope in &batch {
        write_line(&mut body, envelope);
    }
    let request = Post {
        endpoint: &shared.endpoint,
        content_type: "application/x-ndjson",
        body: &body,
        token: token.as_deref(),
    };
    let result = post(request, shared.config.request_timeout).await;
    match result {
        Ok(status) if (200..300).contains(&status) => {
            if batch
                .iter()
                .any(|e| matches!(e.event, Event::FatalError { .. }))
            {
                shared.source.fatal_exported();
            }
            shared
                .stats
                .sent
                .fetch_add(batch.len() as u64, Ordering::Relaxed);
            shared.stats.batches.fetch_add(1, Ordering::Relaxed);
            shared
                .stats
                .reported_dropped
                .fetch_max(dropped_total, Ordering::Relaxed);
            true
        }
        other => {
            tracing::debug!(?other, endpoint = %shared.config.endpoint, "telemetry POST failed");
            shared.stats.failures.fetch_add(1, Ordering::Relaxed);
            shared.buffer.put_back(batch);
            false
        }
    }
}

fn write_line(body: &mut Vec<u8>, envelope: &Envelope) {
    // Serializing plain data cannot fail; a failure would skip the line, never panic.
    if serde_json::to_writer(&mut *body, envelope).is_ok() {
        body.push(b'\n');
    }
}

impl TelemetryExporter {
    /// Starts the exporter as the consumer's config says: `Ok(None)` (and nothing started) unless
    /// `mooring.telemetry.enabled` is `true`. Like [`spawn`](Self::spawn), it takes the
    /// consumer's event stream; [`from_config_tee`](Self::from_config_tee) hands it on.
    pub fn from_config(consumer: &Consumer) -> Result<Option<ExporterHandle>, TelemetryError> {
        match enabled(consumer) {
            Some(config) => Self::spawn(consumer, config).map(Some),
            None => Ok(None),
        }
    }

    /// As [`from_config`](Self::from_config), for an application that reads the event stream
    /// too: the events come back, each after the exporter took its copy. When telemetry is off
    /// no exporter starts and the stream is the consumer's own. The exporter never waits for the
    /// application: a full stream drops the application's copy (the exporter's stays).
    pub fn from_config_tee(
        consumer: &Consumer,
    ) -> Result<(Option<ExporterHandle>, ConsumerEvents), TelemetryError> {
        match enabled(consumer) {
            Some(config) => {
                let (handle, events) = Self::spawn_tee(consumer, config)?;
                Ok((Some(handle), events))
            }
            None => {
                let events = consumer.events().ok_or(TelemetryError::StreamTaken)?;
                Ok((None, events))
            }
        }
    }
}

fn enabled(consumer: &Consumer) -> Option<ExporterConfig> {
    let (shared, _) = consumer.telemetry_view();
    let telemetry = &shared.config.telemetry;
    telemetry.enabled.then(|| telemetry.exporter.clone())
}
