//! OpenTelemetry traces of the consumer (<https://opentelemetry.io/docs/specs/semconv/messaging/>),
//! built on `tracing` spans that the `tracing-opentelemetry` layer turns into OpenTelemetry spans:
//!
//! - **process**: one span per record handled (`process <topic>`, span kind consumer), covering
//!   every attempt of its handler, with the messaging semantic-convention attributes
//!   (`messaging.system`=`kafka`, `messaging.operation.type`=`process`, destination, partition,
//!   offset, key when UTF-8, consumer group, client id). Its parent is the remote span the
//!   record's W3C `traceparent`/`tracestate` headers name ([`extract_context`]); without a valid
//!   header it is a root span. The handler's own spans nest under it. A batch handler's call has
//!   one such span for the batch (`messaging.batch.message_count`, first and last offsets), a
//!   root span linked to each record's `traceparent`.
//! - **rebalance** (from `mooring-group`): one per rebalance, with children `join`, `sync`,
//!   `partitions_revoked`, `partitions_assigned`, `partitions_lost` as they happen; a commit
//!   made while revoking nests under `partitions_revoked`.
//! - **commit**: one per OffsetCommit the runtime sends (auto-commit, `Consumer::commit`, revoke,
//!   shutdown), with the group, the number of partitions and the outcome.
//!
//! All are on target [`TARGET`] at level `INFO`. They cost next to nothing when no subscriber
//! takes them: the span macros return a disabled span before evaluating any field, and the
//! headers are read only for an enabled span.
//!
//! [`init`] installs a global subscriber for a service binary: fmt logging, plus the
//! OpenTelemetry layer and an OTLP/HTTP exporter when the standard `OTEL_*` environment variables
//! configure one. Applications with their own subscriber add `tracing_opentelemetry::layer()`
//! to it instead.

mod init;
mod propagation;
pub(crate) mod spans;

pub use init::{init, init_with, scope, OtelConfig, OtelError, OtelGuard};
pub use propagation::{extract_context, HeaderExtractor, TRACEPARENT, TRACESTATE};

/// The `tracing` target of the runtime's trace spans (process, commit, rebalance and its phases).
/// [`init`]'s fmt layer leaves these spans out of the logs.
pub const TARGET: &str = "mooring::trace";
