//! The process spans: one per record (or per batch of a batch handler), created on target
//! [`TARGET`] at level `INFO`; when no subscriber takes them the macro returns a disabled span
//! without evaluating a field, and nothing else here runs (no header is read, nothing is
//! formatted or allocated).

use std::sync::Arc;

use opentelemetry::trace::TraceContextExt;
use tracing::field::Empty;
use tracing::Span;
use tracing_opentelemetry::OpenTelemetrySpanExt;

use super::{Batch, ConsumerRecord};
use crate::otel::spans::int;
use crate::otel::{extract_context, TARGET};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otel::spans::tests::{attr, traced};
    use mooring_wire::records::{Header, Record};
    use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId};
    use opentelemetry::Value;

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
}
