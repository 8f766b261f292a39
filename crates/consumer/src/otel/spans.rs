//! The commit span, created on target [`TARGET`](super::TARGET) at level `INFO` (the process
//! spans of records and batches are the processing engine's: `processing::spans`); when no
//! subscriber takes it the macro returns a disabled span without evaluating a field, and nothing
//! else here runs (nothing is formatted or allocated).

use tracing::field::Empty;
use tracing::Span;

use super::TARGET;

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
pub(crate) fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use opentelemetry::trace::{SpanKind, Status, TracerProvider as _};
    use opentelemetry::Value;
    use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
    use tracing_subscriber::layer::SubscriberExt;

    /// Runs `f` under a thread-local subscriber with the OpenTelemetry layer; returns the spans.
    pub(crate) fn traced(f: impl FnOnce()) -> Vec<SpanData> {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("test"));
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), f);
        exporter.get_finished_spans().expect("spans")
    }

    pub(crate) fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
        span.attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| &kv.value)
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
