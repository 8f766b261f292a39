//! What the share consumer's parts share: the configuration, the fetcher's network client and the
//! memory budget its frames count against, the counters, the shutdown request and the first fatal
//! error.

use std::sync::{Arc, OnceLock};

use mooring_client::conn::FrameMemory;
use mooring_client::Client;
use mooring_group::EventSink;
use tokio::sync::watch;
use tokio::time::Instant;

use super::config::ShareConsumerConfig;
use super::events::{ShareEvent, ShareEvents};
use super::stats::ShareCounters;
use crate::error::{ConsumerError, FirstFatal};
use crate::shutdown::Stop;
use crate::telemetry::fatal::FatalDelivery;

#[derive(Debug)]
pub(crate) struct ShareShared {
    pub(crate) config: ShareConsumerConfig,
    /// The fetcher's own client: a long-polling ShareFetch must never queue behind, or ahead of,
    /// the member's heartbeats on one connection.
    pub(crate) fetch_client: Client,
    /// The record data the fetch client's frames hold (`mooring.memory.max.bytes`).
    pub(crate) memory: Arc<FrameMemory>,
    pub(crate) counters: ShareCounters,
    pub(crate) events: EventSink<ShareEvent>,
    /// `true` once shutdown is requested.
    pub(crate) shutdown: watch::Sender<bool>,
    shutdown_at: OnceLock<Instant>,
    fatal: FirstFatal,
    /// Whether a telemetry exporter delivered the fatal error.
    pub(crate) fatal_delivery: FatalDelivery,
}

impl ShareShared {
    /// The shared state and the receiving end of its event stream.
    pub(crate) fn new(
        config: ShareConsumerConfig,
    ) -> Result<(ShareShared, ShareEvents), ConsumerError> {
        let memory = FrameMemory::new(config.fetch.memory_max_bytes);
        let fetch_client = Client::with_frame_memory(config.client.clone(), Arc::clone(&memory))?;
        let (events, receiver) = EventSink::channel(config.group.event_capacity.max(1024));
        let shared = ShareShared {
            config,
            fetch_client,
            memory,
            counters: ShareCounters::default(),
            events,
            shutdown: watch::Sender::new(false),
            shutdown_at: OnceLock::new(),
            fatal: FirstFatal::default(),
            fatal_delivery: FatalDelivery::default(),
        };
        Ok((shared, receiver))
    }

    /// Records the first fatal error (said once) and stops the consumer.
    pub(crate) fn fail(&self, error: ConsumerError) {
        if self.fatal.keep(&error) {
            let kind = error.kind();
            tracing::error!(%error, kind, "share consumer stopping on a fatal error");
            self.events.send(ShareEvent::FatalError { kind, error });
        }
        self.request_shutdown();
    }

    pub(crate) fn fatal(&self) -> Option<ConsumerError> {
        self.fatal.get()
    }

    pub(crate) fn request_shutdown(&self) {
        self.shutdown_at.get_or_init(Instant::now);
        self.shutdown.send_replace(true);
    }

    pub(crate) fn is_shutting_down(&self) -> bool {
        *self.shutdown.borrow()
    }

    /// When shutdown was first requested, if it was.
    pub(crate) fn shutdown_requested_at(&self) -> Option<Instant> {
        self.shutdown_at.get().copied()
    }
}

impl Stop for ShareShared {
    fn request_shutdown(&self) {
        ShareShared::request_shutdown(self);
    }

    fn is_shutting_down(&self) -> bool {
        ShareShared::is_shutting_down(self)
    }
}
