//! The runtime's spans: one `process` span per record, and the commit span. Both are created on
//! target [`TARGET`](super::TARGET) at level `INFO`; when no subscriber takes them the macro
//! returns a disabled span without evaluating a field, and nothing else here runs (no header is
//! read, nothing is formatted or allocated).

use std::sync::Arc;

use tracing::field::Empty;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{extract_context, TARGET};
use crate::processing::ConsumerRecord;

/// What the process spans say about the consumer itself.
#[derive(Debug, Clone, Default)]
pub(crate) struct TraceInfo {
    /// `group.id`, when in a group.
    pub(crate) group: Option<Arc<str>>,
    /// `client.id`.
    pub(crate) client_id: Option<Arc<str>>,
}

/// The span a record's handler runs in: span kind consumer, messaging semantic-convention
/// attributes (<https://opentelemetry.io/docs/specs/semconv/messaging/kafka/>), named
/// `process <topic>`, a root span whose parent is the record's `traceparent` header when that is
/// valid.
pub(crate) fn process_span(record: &ConsumerRecord, info: &TraceInfo) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        parent: None,
        "process",
        "otel.name" = Empty,
        "otel.kind" = "consumer",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "messaging.system" = "kafka",
        "messaging.operation.type" = "process",
        "messaging.operation.name" = "process",
        "messaging.destination.name" = record.topic(),
        "messaging.destination.partition.id" = Empty,
        "messaging.kafka.offset" = record.offset(),
        "messaging.kafka.message.key" = Empty,
        "messaging.kafka.message.tombstone" = Empty,
        "messaging.consumer.group.name" = info.group.as_deref(),
        "messaging.client.id" = info.client_id.as_deref(),
        "error.type" = Empty,
        "mooring.attempts" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    span.record("otel.name", format!("process {}", record.topic()).as_str());
    // A string attribute in the semantic conventions.
    span.record(
        "messaging.destination.partition.id",
        record.partition().to_string().as_str(),
    );
    if let Some(key) = record.key().and_then(|k| std::str::from_utf8(k).ok()) {
        span.record("messaging.kafka.message.key", key);
    }
    if record.value().is_none() {
        span.record("messaging.kafka.message.tombstone", true);
    }
    if let Some(cx) = extract_context(&record.record().headers) {
        // Fails only without an OpenTelemetry layer, where there is no parent to set.
        let _ = span.set_parent(cx);
    }
    span
}

/// Records how the handler ended on its process span.
pub(crate) fn record_outcome(span: &Span, attempts: u32, error: Option<&dyn std::fmt::Display>) {
    if span.is_disabled() {
        return;
    }
    span.record("mooring.attempts", i64::from(attempts));
    if let Some(error) = error {
        span.record("error.type", "handler_error");
        span.record("otel.status_code", "ERROR");
        span.record("otel.status_description", error.to_string().as_str());
    }
}

/// The span of one OffsetCommit: `commit <group>`, span kind client, with the number of
/// partitions; [`commit_outcome`] records how it ended.
pub(crate) fn commit_span(group: Option<&str>, partitions: usize) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "commit",
        "otel.name" = Empty,
        "otel.kind" = "client",
        "otel.status_code" = Empty,
        "otel.status_description" = Empty,
        "messaging.system" = "kafka",
        "messaging.operation.type" = "settle",
        "messaging.operation.name" = "commit",
        "messaging.consumer.group.name" = group,
        "mooring.commit.partitions" = int(partitions),
        "mooring.commit.outcome" = Empty,
        "error.type" = Empty,
    );
    if !span.is_disabled() {
        if let Some(group) = group {
            span.record("otel.name", format!("commit {group}").as_str());
        }
    }
    span
}

/// Records a commit's outcome (`ok`, or `error` with the error) on its span.
pub(crate) fn commit_outcome(span: &Span, error: Option<&dyn std::fmt::Display>) {
    if span.is_disabled() {
        return;
    }
    match error {
        None => {
            span.record("mooring.commit.outcome", "ok");
        }
        Some(e) => {
            span.record("mooring.commit.outcome", "error");
            span.record("error.type", "commit_failed");
            span.record("otel.status_code", "ERROR");
            span.record("otel.status_description", e.to_string().as_str());
        }
    }
}

/// An integer attribute: `tracing-opentelemetry` keeps `i64` values as integers (and turns
/// unsigned ones into strings).
fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
