//! mooring-consumer: the consumer runtime.
//!
//! Subscription state (topics, pattern, manual assign), positions and committed offsets, offset
//! reset, fetching, async processing that keeps heartbeats alive, pause/resume, rebalance
//! listeners, commits that never skip an unprocessed record, graceful shutdown and telemetry events.
//!
//! It builds on `mooring-coordinator` and `mooring-wire` and must never depend on the sidecar:
//! the sidecar consumes its telemetry over HTTP, not through a crate dependency.
//!
//! # Modules
//! - [`subscription`]: the subscription modes, the assignment and each partition's position,
//!   committed offset, watermarks, pauses and pending reset; the pause rule across rebalances.
//! - [`processing`]: the async processing engine: bounded concurrency, ordering per partition or
//!   key, commit tracking that never passes an unfinished record, bounded buffers with
//!   backpressure, the `max.poll.interval.ms` watchdog, revoke/loss/shutdown and metrics.

pub mod processing;
pub mod subscription;
mod topic_partition;

pub use topic_partition::TopicPartition;
