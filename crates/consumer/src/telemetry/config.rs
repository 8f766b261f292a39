//! The exporter's settings.

use std::time::Duration;

/// Where and how the exporter sends telemetry. [`ExporterConfig::new`] gives the defaults.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExporterConfig {
    /// The sidecar's ingest endpoint (plain `http://`, localhost).
    pub endpoint: String,
    /// Events held while the sidecar is slow or away; past it the oldest are dropped and counted.
    pub buffer_capacity: usize,
    /// Most events in one POST.
    pub batch_max: usize,
    /// A batch is sent at least this often when there is something to send.
    pub flush_interval: Duration,
    /// The whole POST (connect, write, status line) must finish within this.
    pub request_timeout: Duration,
    /// How often a [`Snapshot`](super::Snapshot) of the consumer's state is sent.
    pub snapshot_interval: Duration,
    /// After a failed POST, wait this long (doubling up to [`max_backoff`](Self::max_backoff)).
    pub backoff: Duration,
    /// The longest wait between attempts while the sidecar is away.
    pub max_backoff: Duration,
}

/// The sidecar's default ingest endpoint.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:9464/v1/events";

impl ExporterConfig {
    /// Defaults: 10 000 events buffered, batches of up to 500 every 200 ms, 2 s per POST, a
    /// snapshot every 5 s, back-off 250 ms doubling to 5 s.
    pub fn new(endpoint: impl Into<String>) -> Self {
        ExporterConfig {
            endpoint: endpoint.into(),
            buffer_capacity: 10_000,
            batch_max: 500,
            flush_interval: Duration::from_millis(200),
            request_timeout: Duration::from_secs(2),
            snapshot_interval: Duration::from_secs(5),
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(5),
        }
    }
}

impl Default for ExporterConfig {
    fn default() -> Self {
        ExporterConfig::new(DEFAULT_ENDPOINT)
    }
}
