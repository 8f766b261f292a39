#![doc = include_str!("../README.md")]
//!
//! # Where to start
//! - [`ConsumerConfig::from_properties`]: the configuration, with Kafka's property names.
//! - [`Consumer`]: subscribe, [`run`](Consumer::run) a [`Handler`](processing::Handler), pause,
//!   seek, commit; [`Consumer::run_batch`] for a [`BatchHandler`](processing::BatchHandler) of
//!   whole [`Batch`](processing::Batch)es of a partition; [`Consumer::stream`] for a loop of
//!   [`Delivery`]s instead.
//! - [`processing::ConsumerRecord`]: what a handler gets.
//! - [`ConsumerRebalanceListener`] and [`ShutdownHandle::on_signals`].
//!
//! # Modules
//! It builds on `mooring-group`, `mooring-client` and `mooring-wire` and must never depend on the sidecar:
//! the sidecar consumes its telemetry over HTTP, not through a crate dependency.
//!
//! - [`subscription`]: the subscription modes, the assignment and each partition's position,
//!   committed offset, watermarks, pauses and pending reset; the pause rule across rebalances.
//! - [`processing`]: the async processing engine: bounded concurrency, ordering per partition or
//!   key, commit tracking that never passes an unfinished record, bounded buffers with
//!   backpressure, the `max.poll.interval.ms` watchdog, revoke/loss/shutdown and metrics.
//! - [`fetcher`]: Fetch from each partition's leader, or the replica it names for `client.rack`
//!   (sessions, topic ids, leader epochs, isolation levels) into the engine; offset
//!   initialisation; [`FetchStats`], what was fetched from each broker.
//! - [`Consumer`]: the public API — configuration from Kafka properties, subscribe / pattern /
//!   assign, `run(handler)`, `run_batch(batch_handler)`, pause/resume, seek, commits, rebalance listener, shutdown, telemetry.
//! - [`otel`]: OpenTelemetry traces (a span per record processed, parented by its `traceparent`
//!   header; rebalance and commit spans) and `init`, a global subscriber with an OTLP exporter.
//! - [`share`]: share groups (KIP-932): [`share::ShareConsumer`], queue semantics with records
//!   acknowledged one by one, locks renewed while handlers run.
//! - [`telemetry`]: the exporter that sends the telemetry events and state snapshots to the
//!   sidecar as NDJSON over localhost HTTP (a stable, versioned schema).
//! - `metrics_push` (private): Java-named client metrics pushed to brokers that subscribe to
//!   them (KIP-714), off with `enable.metrics.push=false`; see the README.

mod config;
mod consumer;
mod error;
mod events;
pub mod fetcher;
mod latency;
mod metrics_push;
pub mod otel;
pub mod processing;
pub mod share;
mod shared;
mod shutdown;
pub mod subscription;
pub mod telemetry;

pub use config::{ConsumerConfig, FetchConfig, IsolationLevel, CONSUMER_KEYS, GROUP_KEYS};
pub use consumer::{Consumer, ConsumerRebalanceListener, Delivery, RecordStream};
pub use error::ConsumerError;
pub use events::{ConsumerEvent, ConsumerEvents};
pub use fetcher::{BrokerFetchStats, FetchStats};
/// One partition of one topic: the same type throughout Mooring (the group member's).
pub use mooring_client::TopicPartition;
/// The group member's event types that [`ConsumerEvent::Group`] carries.
pub use mooring_group::{GroupEvent, GroupEventKind, RebalanceCause};
pub use shutdown::ShutdownHandle;
