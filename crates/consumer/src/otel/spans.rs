//! The runtime's spans: one `process` span per record (or per batch of a batch handler), and
//! the commit span. Both are created on
//! target [`TARGET`](super::TARGET) at level `INFO`; when no subscriber takes them the macro
//! returns a disabled span without evaluating a field, and nothing else here runs (no header is
//! read, nothing is formatted or allocated).

use std::sync::Arc;

use opentelemetry::trace::TraceContextExt;
use tracing::field::Empty;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{extract_context, TARGET};
use crate::processing::{Batch, ConsumerRecord};

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

/// The span a batch handler runs in: as a record's (`process <topic>`, span kind consumer, the
/// messaging attributes) with `messaging.batch.message_count` and the batch's first and last
/// offsets instead of one record's offset and key. A root span, linked to the span named by each
/// record's valid `traceparent` header (the semantic conventions' batch processing: one trace
/// cannot have several parents); the SDK keeps up to its link limit (128 by default).
pub(crate) fn batch_span(batch: &Batch, info: &TraceInfo) -> Span {
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
        "messaging.destination.name" = batch.partition().topic.as_str(),
        "messaging.destination.partition.id" = Empty,
        "messaging.batch.message_count" = int(batch.len()),
        "mooring.batch.first_offset" = batch.first_offset(),
        "mooring.batch.last_offset" = batch.last_offset(),
        "messaging.consumer.group.name" = info.group.as_deref(),
        "messaging.client.id" = info.client_id.as_deref(),
        "error.type" = Empty,
        "mooring.attempts" = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    let tp = batch.partition();
    span.record("otel.name", format!("process {}", tp.topic).as_str());
    span.record(
        "messaging.destination.partition.id",
        tp.partition.to_string().as_str(),
    );
    for record in batch {
        if let Some(cx) = extract_context(&record.record().headers) {
            span.add_link(cx.span().span_context().clone());
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use mooring_wire::records::{Header, Record};
    use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
    use opentelemetry::Value;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
    use tracing_subscriber::layer::SubscriberExt;

    /// Runs `f` under a thread-local subscriber with the OpenTelemetry layer; returns the spans.
    fn traced(f: impl FnOnce()) -> Vec<SpanData> {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), f);
        exporter.get_finished_spans().expect("spans")
    }

    fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
    }

    fn record(headers: Vec<Header>) -> ConsumerRecord {
        let mut r = Record::new(42, 0, Some("k".into()), Some("v".into()));
        for h in headers {
            r.headers.push(h);
        }
        ConsumerRecord::new("orders".into(), 5, r)
    }

    fn info() -> TraceInfo {
        TraceInfo {
            group: Some("g".into()),
            client_id: Some("c".into()),
        }
    }

    #[test]
    fn disabled_without_a_subscriber() {
        let span =
            tracing::subscriber::with_default(tracing::subscriber::NoSubscriber::new(), || {
                process_span(&record(Vec::new()), &info())
            });
        assert!(span.is_disabled());
    }

    #[test]
    fn a_failed_handler_marks_the_span_as_an_error() {
        let spans = traced(|| {
            let span = process_span(&record(Vec::new()), &info());
            record_outcome(&span, 3, Some(&"boom"));
        });
        assert_eq!(spans.len(), 1);
        let s = &spans[0];
        assert_eq!(s.name, "process orders");
        assert_eq!(s.span_kind, SpanKind::Consumer);
        assert_eq!(s.status, Status::error("boom"));
        assert_eq!(attr(s, "error.type"), Some(&Value::from("handler_error")));
        assert_eq!(attr(s, "mooring.attempts"), Some(&Value::I64(3)));
        assert_eq!(
            attr(s, "messaging.destination.partition.id"),
            Some(&Value::from("5"))
        );
        assert_eq!(attr(s, "messaging.kafka.offset"), Some(&Value::I64(42)));
        assert_eq!(
            attr(s, "messaging.kafka.message.key"),
            Some(&Value::from("k"))
        );
        assert_eq!(
            attr(s, "messaging.consumer.group.name"),
            Some(&Value::from("g"))
        );
        assert_eq!(attr(s, "messaging.client.id"), Some(&Value::from("c")));
        assert_eq!(s.parent_span_id, SpanId::INVALID);
    }

    #[test]
    fn the_traceparent_header_is_the_parent_and_a_bad_one_is_ignored() {
        let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
        let good = Header::new("traceparent", format!("00-{trace}-00f067aa0ba902b7-01"));
        let bad = Header::new("traceparent", format!("00-{trace}-00f067aa0ba902-01"));
        let spans = traced(|| {
            drop(process_span(&record(vec![good]), &info()));
            drop(process_span(&record(vec![bad]), &info()));
        });
        assert_eq!(spans.len(), 2);
        assert_eq!(
            spans[0].span_context.trace_id(),
            TraceId::from_hex(trace).expect("hex")
        );
        assert_eq!(
            spans[0].parent_span_id,
            SpanId::from_hex("00f067aa0ba902b7").expect("hex")
        );
        assert_eq!(spans[1].parent_span_id, SpanId::INVALID);
        assert_ne!(
            spans[1].span_context.trace_id(),
            TraceId::from_hex(trace).expect("hex")
        );
    }

    #[test]
    fn a_failed_commit_is_an_error_span() {
        let spans = traced(|| {
            let span = commit_span(Some("g"), 3);
            commit_outcome(&span, Some(&"NOT_COORDINATOR"));
        });
        assert_eq!(spans.len(), 1);
        let s = &spans[0];
        assert_eq!(s.name, "commit g");
        assert_eq!(s.span_kind, SpanKind::Client);
        assert_eq!(attr(s, "mooring.commit.partitions"), Some(&Value::I64(3)));
        assert_eq!(
            attr(s, "mooring.commit.outcome"),
            Some(&Value::from("error"))
        );
        assert_eq!(attr(s, "error.type"), Some(&Value::from("commit_failed")));
        assert_eq!(s.status, Status::error("NOT_COORDINATOR"));
    }
}
