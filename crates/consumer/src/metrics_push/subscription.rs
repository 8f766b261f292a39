//! What a broker's GetTelemetrySubscriptions answer asks of the client (KIP-714), and the one
//! reaction to each error code of it and of PushTelemetry, as Java's client reacts
//! (`ClientTelemetryUtils.maybeFetchErrorIntervalMs`).

use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::get_telemetry_subscriptions::GetTelemetrySubscriptionsResponse;
use mooring_wire::primitives::Uuid;
use mooring_wire::records::Compression;

/// Java's push interval when the broker gives none (or a non-positive one), and the wait
/// before asking again after an error while no subscription is known.
pub(crate) const DEFAULT_INTERVAL: Duration = Duration::from_secs(300);
/// Our own cap of a payload, whatever the broker allows.
const MAX_PAYLOAD_BYTES: usize = 4 << 20;
/// The most metric name prefixes kept of one subscription (the rest are dropped, said once).
const MAX_PREFIXES: usize = 1024;

/// Which metrics the broker asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selector {
    /// An empty list: none (ask again after the interval).
    Nothing,
    /// The one entry `*` (KIP-714), or an empty string (the schema's wording): every metric.
    All,
    /// The metrics whose name starts with one of these.
    Prefixes(Vec<String>),
}

impl Selector {
    fn from_requested(requested: &[String]) -> Selector {
        match requested {
            [] => Selector::Nothing,
            [all] if all == "*" || all.is_empty() => Selector::All,
            _ => {
                if requested.len() > MAX_PREFIXES {
                    tracing::warn!(
                        given = requested.len(),
                        kept = MAX_PREFIXES,
                        "metrics push: the subscription names too many metric prefixes; the rest are ignored"
                    );
                }
                Selector::Prefixes(requested.iter().take(MAX_PREFIXES).cloned().collect())
            }
        }
    }

    /// Whether the metric `name` is asked for.
    pub(crate) fn wants(&self, name: &str) -> bool {
        match self {
            Selector::Nothing => false,
            Selector::All => true,
            Selector::Prefixes(prefixes) => prefixes.iter().any(|p| name.starts_with(p.as_str())),
        }
    }
}

/// A subscription as the broker gave it, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Subscription {
    /// The id the broker gave this client (never the zero UUID here).
    pub(crate) instance_id: Uuid,
    /// Sent back with each push; a stale one is refused (UNKNOWN_SUBSCRIPTION_ID).
    pub(crate) id: i32,
    pub(crate) selector: Selector,
    pub(crate) interval: Duration,
    /// Sums as deltas since the last push (`true`) or since the consumer started.
    pub(crate) delta: bool,
    pub(crate) compression: Compression,
    /// The largest payload (after compression) the broker accepts, within our own cap.
    pub(crate) max_bytes: usize,
}

/// Why an answer gives no subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The answer's error code.
    Error(ErrorCode),
    /// No error, but the zero UUID as the client's instance id.
    NoInstanceId,
}

impl Subscription {
    /// The subscription an answer gives.
    pub(crate) fn from_answer(
        answer: &GetTelemetrySubscriptionsResponse,
    ) -> Result<Subscription, Refused> {
        let code = ErrorCode::from(answer.error_code);
        if code != ErrorCode::None {
            return Err(Refused::Error(code));
        }
        if answer.client_instance_id.is_nil() {
            return Err(Refused::NoInstanceId);
        }
        let interval = u64::try_from(answer.push_interval_ms)
            .ok()
            .filter(|ms| *ms > 0)
            .map_or(DEFAULT_INTERVAL, Duration::from_millis);
        let max_bytes = usize::try_from(answer.telemetry_max_bytes)
            .ok()
            .filter(|b| *b > 0)
            .map_or(MAX_PAYLOAD_BYTES, |b| b.min(MAX_PAYLOAD_BYTES));
        Ok(Subscription {
            instance_id: answer.client_instance_id,
            id: answer.subscription_id,
            selector: Selector::from_requested(&answer.requested_metrics),
            interval,
            delta: answer.delta_temporality,
            compression: choose_compression(&answer.accepted_compression_types),
            max_bytes,
        })
    }
}

/// The codec of the payload: zstd or lz4 when the broker accepts one, else the first codec of
/// its list that we know, else none (also when the list is empty).
pub(crate) fn choose_compression(accepted: &[i8]) -> Compression {
    let known: Vec<Compression> = accepted
        .iter()
        .filter_map(|id| u8::try_from(*id).ok().and_then(Compression::from_id))
        .collect();
    [Compression::Zstd, Compression::Lz4]
        .into_iter()
        .find(|c| known.contains(c))
        .or_else(|| known.first().copied())
        .unwrap_or(Compression::None)
}

/// What to do after a broker's error code, in either answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reaction {
    /// Ask for the subscription again after this wait (zero: at once).
    Resubscribe(Duration),
    /// The broker will never take what we send: push no more.
    Stop,
}

/// The reaction to `code` (not `NONE`), `interval` being the subscription's, if one is known.
pub(crate) fn reaction(code: ErrorCode, interval: Option<Duration>) -> Reaction {
    match code {
        // The subscription changed, or the codec is no longer accepted: a fresh one, at once.
        ErrorCode::UnknownSubscriptionId | ErrorCode::UnsupportedCompressionType => {
            Reaction::Resubscribe(Duration::ZERO)
        }
        // Retriable after the push interval.
        ErrorCode::TelemetryTooLarge | ErrorCode::ThrottlingQuotaExceeded => {
            Reaction::Resubscribe(interval.unwrap_or(DEFAULT_INTERVAL))
        }
        // INVALID_REQUEST, INVALID_RECORD, UNSUPPORTED_VERSION and any code KIP-714 does not
        // name: sending again would not help.
        _ => Reaction::Stop,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer() -> GetTelemetrySubscriptionsResponse {
        GetTelemetrySubscriptionsResponse {
            client_instance_id: Uuid([7; 16]),
            subscription_id: 42,
            accepted_compression_types: vec![4, 3, 1, 2],
            push_interval_ms: 1000,
            telemetry_max_bytes: 1 << 20,
            delta_temporality: true,
            requested_metrics: vec!["org.apache.kafka.consumer.".into()],
            ..Default::default()
        }
    }

    #[test]
    fn an_answer_gives_the_subscription_it_describes() {
        let s = Subscription::from_answer(&answer()).expect("a subscription");
        assert_eq!(s.instance_id, Uuid([7; 16]));
        assert_eq!(s.id, 42);
        assert_eq!(s.interval, Duration::from_secs(1));
        assert!(s.delta);
        assert_eq!(s.compression, Compression::Zstd);
        assert_eq!(s.max_bytes, 1 << 20);
        assert!(s
            .selector
            .wants("org.apache.kafka.consumer.coordinator.assigned.partitions"));
        assert!(!s
            .selector
            .wants("org.apache.kafka.producer.record.send.total"));
    }

    #[test]
    fn an_error_or_a_zero_instance_id_gives_none_and_odd_figures_get_defaults() {
        let mut a = answer();
        a.error_code = 117;
        assert_eq!(
            Subscription::from_answer(&a),
            Err(Refused::Error(ErrorCode::UnknownSubscriptionId))
        );
        let mut a = answer();
        a.client_instance_id = Uuid::NIL;
        assert_eq!(Subscription::from_answer(&a), Err(Refused::NoInstanceId));
        let mut a = answer();
        a.push_interval_ms = 0;
        a.telemetry_max_bytes = -1;
        let s = Subscription::from_answer(&a).expect("a subscription");
        assert_eq!(
            (s.interval, s.max_bytes),
            (DEFAULT_INTERVAL, MAX_PAYLOAD_BYTES)
        );
    }

    #[test]
    fn no_prefix_selects_nothing_and_a_star_everything() {
        assert_eq!(Selector::from_requested(&[]), Selector::Nothing);
        assert!(!Selector::Nothing.wants("org.apache.kafka.consumer.x"));
        let all = Selector::from_requested(&["*".into()]);
        assert_eq!(all, Selector::All);
        assert_eq!(Selector::from_requested(&[String::new()]), Selector::All);
        assert!(all.wants("anything"));
        let two = Selector::from_requested(&["a.".into(), "*".into()]);
        // Beside other prefixes `*` is a prefix like any other.
        assert!(two.wants("a.b") && two.wants("*b") && !two.wants("b.a"));
    }

    #[test]
    fn the_codec_prefers_zstd_then_lz4_then_the_brokers_first_known() {
        assert_eq!(choose_compression(&[1, 3, 4]), Compression::Zstd);
        assert_eq!(choose_compression(&[2, 3]), Compression::Lz4);
        assert_eq!(choose_compression(&[9, 2, 1]), Compression::Snappy);
        assert_eq!(choose_compression(&[-1, 9]), Compression::None);
        assert_eq!(choose_compression(&[]), Compression::None);
    }

    #[test]
    fn each_error_has_one_reaction() {
        let interval = Some(Duration::from_secs(2));
        for code in [
            ErrorCode::UnknownSubscriptionId,
            ErrorCode::UnsupportedCompressionType,
        ] {
            assert_eq!(
                reaction(code, interval),
                Reaction::Resubscribe(Duration::ZERO)
            );
        }
        for code in [
            ErrorCode::TelemetryTooLarge,
            ErrorCode::ThrottlingQuotaExceeded,
        ] {
            assert_eq!(
                reaction(code, interval),
                Reaction::Resubscribe(Duration::from_secs(2))
            );
            assert_eq!(
                reaction(code, None),
                Reaction::Resubscribe(DEFAULT_INTERVAL)
            );
        }
        for code in [
            ErrorCode::InvalidRequest,
            ErrorCode::InvalidRecord,
            ErrorCode::UnsupportedVersion,
            ErrorCode::UnknownServerError,
        ] {
            assert_eq!(reaction(code, interval), Reaction::Stop);
        }
    }
}
