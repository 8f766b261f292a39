//! mooring-consumer: the consumer runtime.
//!
//! Subscription state (topics, pattern, manual assign), positions and committed offsets, offset
//! reset, fetching, async processing that keeps heartbeats alive, pause/resume, rebalance
//! listeners, commits that never skip an unprocessed record, graceful shutdown and telemetry events.
//!
//! It builds on `mooring-coordinator` and `mooring-wire` and must never depend on the sidecar:
//! the sidecar consumes its telemetry over HTTP, not through a crate dependency.
