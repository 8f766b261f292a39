//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>) read from Kafka record headers: the
//! `traceparent` and `tracestate` headers a producer's OpenTelemetry instrumentation writes
//! (the Java agent, librdkafka's and franz-go's plugins all use these header names).
//!
//! A header that is missing, not UTF-8 or malformed gives no context: the record is processed
//! all the same, under a root span. Never an error.

use std::sync::OnceLock;

use mooring_wire::records::Header;
use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TraceContextExt;
use opentelemetry::Context;
use opentelemetry_sdk::propagation::TraceContextPropagator;

/// The header that carries the parent span (W3C Trace Context).
pub const TRACEPARENT: &str = "traceparent";
/// The header that carries vendor trace state (W3C Trace Context).
pub const TRACESTATE: &str = "tracestate";

/// A record's headers seen as an OpenTelemetry [`Extractor`]. Keys match exactly (Kafka header
/// keys are case-sensitive); with repeated keys the last one wins, as in the Java client's
/// `Headers::lastHeader`. Values that are null or not UTF-8 read as absent.
///
/// ```
/// use mooring_consumer::otel::HeaderExtractor;
/// use mooring_wire::records::Header;
/// use opentelemetry::propagation::Extractor;
///
/// let headers = vec![Header::new("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")];
/// let extractor = HeaderExtractor(&headers);
/// assert_eq!(extractor.keys(), ["traceparent"]);
/// assert!(extractor.get("traceparent").is_some());
/// assert!(extractor.get("TRACEPARENT").is_none());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct HeaderExtractor<'a>(pub &'a [Header]);

impl Extractor for HeaderExtractor<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let header = self.0.iter().rev().find(|h| h.key == key)?;
        std::str::from_utf8(header.value.as_deref()?).ok()
    }

    fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|h| h.key.as_str()).collect()
    }
}

fn propagator() -> &'static TraceContextPropagator {
    static PROPAGATOR: OnceLock<TraceContextPropagator> = OnceLock::new();
    PROPAGATOR.get_or_init(TraceContextPropagator::new)
}

/// The remote parent a record's `traceparent` (and `tracestate`) headers name, or `None` when
/// there is no such header or it is malformed. Costs one scan of the headers when absent.
///
/// ```
/// use mooring_consumer::otel::extract_context;
/// use mooring_wire::records::Header;
/// use opentelemetry::trace::TraceContextExt;
///
/// let headers = vec![Header::new("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")];
/// let cx = extract_context(&headers).expect("a valid traceparent");
/// assert_eq!(cx.span().span_context().trace_id().to_string(), "0af7651916cd43dd8448eb211c80319c");
/// assert!(extract_context(&[Header::new("traceparent", "garbage")]).is_none());
/// ```
pub fn extract_context(headers: &[Header]) -> Option<Context> {
    let extractor = HeaderExtractor(headers);
    if !extractor.get(TRACEPARENT).is_some_and(well_formed) {
        return None;
    }
    let cx = propagator().extract_with_context(&Context::new(), &extractor);
    if cx.span().span_context().is_valid() {
        Some(cx)
    } else {
        None
    }
}

/// The field lengths the W3C spec requires (`version-traceid-parentid-flags`: 2, 32, 16 and 2
/// hex digits). The SDK's propagator checks the values but accepts short ids (it parses
/// `"4bf9"` as a trace id), which the spec calls malformed.
fn well_formed(traceparent: &str) -> bool {
    let mut parts = traceparent.trim().split('-');
    [2, 32, 16, 2]
        .iter()
        .all(|&len| parts.next().is_some_and(|p| p.len() == len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use opentelemetry::trace::{SpanId, TraceFlags, TraceId};

    const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const SPAN: &str = "00f067aa0ba902b7";

    fn tp(flags: &str) -> String {
        format!("00-{TRACE}-{SPAN}-{flags}")
    }

    #[test]
    fn valid_traceparent_gives_a_remote_parent() {
        let headers = vec![
            Header::new("other", "x"),
            Header::new(TRACEPARENT, tp("01")),
        ];
        let cx = extract_context(&headers).expect("valid");
        let span = cx.span();
        let sc = span.span_context();
        assert_eq!(sc.trace_id(), TraceId::from_hex(TRACE).expect("hex"));
        assert_eq!(sc.span_id(), SpanId::from_hex(SPAN).expect("hex"));
        assert!(sc.is_remote());
        assert_eq!(sc.trace_flags(), TraceFlags::SAMPLED);
        assert!(sc.trace_state().header().is_empty());
    }

    #[test]
    fn unsampled_flag_is_kept() {
        let headers = vec![Header::new(TRACEPARENT, tp("00"))];
        let cx = extract_context(&headers).expect("valid");
        assert!(!cx.span().span_context().is_sampled());
    }

    #[test]
    fn tracestate_is_carried() {
        let headers = vec![
            Header::new(TRACEPARENT, tp("01")),
            Header::new(TRACESTATE, "vendor=abc,other=1"),
        ];
        let cx = extract_context(&headers).expect("valid");
        let span = cx.span();
        let state = span.span_context().trace_state();
        assert_eq!(state.get("vendor"), Some("abc"));
        assert_eq!(state.get("other"), Some("1"));
    }

    #[test]
    fn malformed_traceparents_give_no_parent() {
        for bad in [
            "",
            "garbage",
            "00-xyz-00f067aa0ba902b7-01",
            // all-zero trace id and span id are invalid by the spec
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            // version ff is forbidden
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            // too short
            "00-4bf92f3577b34da6a3ce929d0e0e47-00f067aa0ba902b7-01",
        ] {
            let headers = vec![Header::new(TRACEPARENT, bad)];
            assert!(extract_context(&headers).is_none(), "{bad:?} gave a parent");
        }
    }

    #[test]
    fn non_utf8_or_null_values_give_no_parent() {
        let headers = vec![Header::new(
            TRACEPARENT,
            Bytes::from_static(&[0xff, 0xfe, 0x00]),
        )];
        assert!(extract_context(&headers).is_none());
        let null = vec![Header {
            key: TRACEPARENT.into(),
            value: None,
        }];
        assert!(extract_context(&null).is_none());
    }

    #[test]
    fn missing_header_gives_no_parent() {
        assert!(extract_context(&[]).is_none());
        let headers = vec![Header::new("Traceparent", tp("01"))];
        assert!(
            extract_context(&headers).is_none(),
            "keys are case-sensitive"
        );
        let only_state = vec![Header::new(TRACESTATE, "vendor=abc")];
        assert!(extract_context(&only_state).is_none());
    }

    #[test]
    fn last_repeated_header_wins() {
        let other = "0af7651916cd43dd8448eb211c80319c";
        let headers = vec![
            Header::new(TRACEPARENT, tp("01")),
            Header::new(TRACEPARENT, format!("00-{other}-{SPAN}-01")),
        ];
        let cx = extract_context(&headers).expect("valid");
        assert_eq!(cx.span().span_context().trace_id().to_string(), other);
        assert_eq!(HeaderExtractor(&headers).keys().len(), 2);
    }
}
