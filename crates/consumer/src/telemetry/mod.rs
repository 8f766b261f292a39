//! Telemetry export: the consumer's typed events and periodic state snapshots, sent as NDJSON
//! over localhost HTTP to the sidecar (`mooring-sidecar`, default
//! `http://127.0.0.1:9464/v1/events`).
//!
//! From the consumer's config (`mooring.telemetry.enabled = true` and the other
//! `mooring.telemetry.*` keys, see [`TelemetryConfig`]), one call starts it, or nothing when the
//! config leaves telemetry off: `TelemetryExporter::from_config(&consumer)?`
//! ([`TelemetryExporter::from_config_tee`] when the application reads the events too). A share
//! consumer ([`ShareConsumer`](crate::share::ShareConsumer)) has its own:
//! `ShareTelemetryExporter::from_config(&share_consumer)?`, from the same keys of its config.
//! By hand:
//!
//! ```no_run
//! use mooring_consumer::telemetry::{ExporterConfig, TelemetryExporter};
//! # async fn demo(consumer: mooring_consumer::Consumer) -> Result<(), Box<dyn std::error::Error>> {
//! let exporter = TelemetryExporter::spawn(&consumer, ExporterConfig::default())?;
//! // ... consumer.run(handler).await ...
//! exporter.shutdown().await; // one last snapshot and flush
//! # Ok(()) }
//! ```
//!
//! A missing or slow sidecar never blocks or slows consumption: the consumer's event stream
//! never waits, the exporter's buffer is bounded (the oldest events go first), every POST has a
//! timeout and failures back off. Losses are counted ([`ExporterHandle::dropped`]) and, as soon
//! as the sidecar answers again, reported in an `events_dropped` line.
//!
//! The wire format is [`schema`]: stable, versioned, documented there.
//!
//! # Files
//! - [`schema`]: the NDJSON line types (shared with the sidecar, which deserializes them).
//! - `convert`: runtime events → schema events.
//! - `snapshot`: the consumer's state → [`Snapshot`].
//! - `config`: [`ExporterConfig`], the `mooring.telemetry.*` keys, starting from the config.
//! - `credential`: the ingest credential's file, read by the exporter and the sidecar.
//! - `buffer`: the bounded, drop-oldest buffer.
//! - `http`: a minimal HTTP/1.1 POST client.
//! - `exporter`: the intake, snapshot and sender tasks, for any consumer that is a source.
//! - `share`: [`ShareTelemetryExporter`], the share consumer's source and conversions.

mod buffer;
mod config;
mod convert;
mod exporter;
pub(crate) mod fatal;
mod http;
mod share;
mod snapshot;

pub use config::{ExporterConfig, TelemetryConfig, DEFAULT_ENDPOINT, TELEMETRY_KEYS};
pub use exporter::{ExporterHandle, TelemetryError, TelemetryExporter};
pub use mooring_telemetry_schema as schema;
pub use schema::{
    consumer_state_name, read_token, share_state_name, BrokerFetchSnapshot, Envelope, Event,
    HandlerLatency, MemberIdentity, PartitionSnapshot, Phases, RebalanceCause, ReconcilePhases,
    ShareSnapshot, Snapshot, TopicPartition, CONSUMER_MEMBER_STATES, FATAL_ERROR_KINDS,
    HANDLER_LATENCY_BUCKETS_SECONDS, SHARE_MEMBER_STATES,
};
pub use share::ShareTelemetryExporter;
