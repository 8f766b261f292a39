//! The payload of a PushTelemetry request: the selected metrics as an OTLP `MetricsData`
//! (KIP-714's format, protobuf), compressed with the subscription's codec and kept within its
//! `TelemetryMaxBytes`.
//!
//! Totals go as monotonic sums, cumulative since the consumer was created or, when the
//! subscription asks for delta temporality, as the change since the previous payload; gauges as
//! gauges. The resource carries the client's labels as Java's client sets them (`client_id`,
//! `group_id`, `group_instance_id`, `client_rack`, each when it has one); the broker adds its own
//! (instance id, principal, address, software name and version).
//!
//! The metrics are a fixed set (eight at most, [`super::sample`]), so a payload is small by
//! construction; should one still pass the broker's limit, metrics are left out from the end.
//! A delta runs from the last payload the broker accepted: a push that fails loses nothing, the
//! next one carries its change too.

use std::collections::HashMap;

use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::metrics::v1::{
    metric::Data, number_data_point, AggregationTemporality, Gauge, Metric as OtlpMetric,
    MetricsData, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message as _;

use super::sample::{Metric, Point};
use super::subscription::Subscription;
use mooring_wire::records::compression::{compress, CompressionError};

/// Why no payload could be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PayloadError {
    #[error("compressing the metrics payload: {0}")]
    Compress(#[from] CompressionError),
    #[error("not even one metric fits in the broker's {max} bytes")]
    TooLarge { max: usize },
}

/// Builds the payloads of one consumer, remembering what the deltas are taken from.
#[derive(Debug)]
pub(crate) struct Encoder {
    resource: Vec<KeyValue>,
    created_nanos: u64,
    /// Delta temporality: each total as last accepted by the broker, and when.
    last: HashMap<&'static str, u64>,
    last_nanos: u64,
    /// The temporality of the last payload: a change starts the deltas over.
    delta: Option<bool>,
}

impl Encoder {
    /// An encoder for a consumer created at `created_nanos` (Unix time) with these labels.
    pub(crate) fn new(labels: Vec<(&'static str, String)>, created_nanos: u64) -> Encoder {
        Encoder {
            resource: labels.into_iter().map(|(k, v)| string(k, v)).collect(),
            created_nanos,
            last: HashMap::new(),
            last_nanos: created_nanos,
            delta: None,
        }
    }

    /// The compressed payload of the `metrics` that `subscription` selects at `now_nanos`, and
    /// how many metrics it holds. Metrics are left out from the end until it fits.
    pub(crate) fn payload(
        &mut self,
        metrics: &[Metric],
        subscription: &Subscription,
        now_nanos: u64,
    ) -> Result<(Vec<u8>, usize), PayloadError> {
        if self.delta != Some(subscription.delta) {
            self.last.clear();
            self.last_nanos = self.created_nanos;
            self.delta = Some(subscription.delta);
        }
        let mut selected: Vec<OtlpMetric> = metrics
            .iter()
            .filter(|m| subscription.selector.wants(m.name))
            .map(|m| self.otlp(m, subscription.delta, now_nanos))
            .collect();
        loop {
            let bytes = compress(
                subscription.compression,
                &self.data(selected.clone()).encode_to_vec(),
                None,
            )?;
            if bytes.len() <= subscription.max_bytes {
                return Ok((bytes, selected.len()));
            }
            if selected.pop().is_none() {
                return Err(PayloadError::TooLarge {
                    max: subscription.max_bytes,
                });
            }
        }
    }

    /// The broker accepted the payload made of `metrics` at `now_nanos`: the next deltas are
    /// taken from them. Until then a delta keeps growing, so a failed push loses nothing.
    pub(crate) fn accepted(&mut self, metrics: &[Metric], now_nanos: u64) {
        for m in metrics {
            if let Point::Total(v) = m.point {
                self.last.insert(m.name, v);
            }
        }
        self.last_nanos = now_nanos;
    }

    fn otlp(&self, m: &Metric, delta: bool, now_nanos: u64) -> OtlpMetric {
        let point = |start: u64, value: number_data_point::Value| NumberDataPoint {
            start_time_unix_nano: start,
            time_unix_nano: now_nanos,
            value: Some(value),
            ..Default::default()
        };
        let data = match m.point {
            Point::Total(v) => {
                let (start, value, temporality) = if delta {
                    let since = self.last.get(m.name).copied().unwrap_or(0);
                    (
                        self.last_nanos,
                        v.saturating_sub(since),
                        AggregationTemporality::Delta,
                    )
                } else {
                    (self.created_nanos, v, AggregationTemporality::Cumulative)
                };
                let value = i64::try_from(value).unwrap_or(i64::MAX);
                Data::Sum(Sum {
                    data_points: vec![point(start, number_data_point::Value::AsInt(value))],
                    aggregation_temporality: temporality as i32,
                    is_monotonic: true,
                })
            }
            Point::Gauge(v) => Data::Gauge(Gauge {
                data_points: vec![point(0, number_data_point::Value::AsDouble(v))],
            }),
        };
        OtlpMetric {
            name: m.name.to_owned(),
            data: Some(data),
            ..Default::default()
        }
    }

    fn data(&self, metrics: Vec<OtlpMetric>) -> MetricsData {
        MetricsData {
            resource_metrics: vec![ResourceMetrics {
                resource: Some(Resource {
                    attributes: self.resource.clone(),
                    ..Default::default()
                }),
                scope_metrics: vec![ScopeMetrics {
                    metrics,
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
    }
}

fn string(key: &str, value: String) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: Some(AnyValue {
            value: Some(any_value::Value::StringValue(value)),
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use std::time::Duration;

    use mooring_wire::primitives::Uuid;
    use mooring_wire::records::compression::decompress;
    use mooring_wire::records::Compression;

    use super::super::subscription::Selector;
    use super::*;

    fn subscription(delta: bool, compression: Compression, max_bytes: usize) -> Subscription {
        Subscription {
            instance_id: Uuid([1; 16]),
            id: 1,
            selector: Selector::Prefixes(vec!["org.apache.kafka.consumer.".into()]),
            interval: Duration::from_secs(1),
            delta,
            compression,
            max_bytes,
        }
    }

    fn metrics(total: u64) -> Vec<Metric> {
        vec![
            Metric {
                name: "org.apache.kafka.consumer.fetch.manager.records.consumed.total",
                point: Point::Total(total),
            },
            Metric {
                name: "org.apache.kafka.consumer.coordinator.assigned.partitions",
                point: Point::Gauge(3.0),
            },
            Metric {
                name: "org.apache.kafka.producer.not.selected",
                point: Point::Gauge(1.0),
            },
        ]
    }

    fn decode(bytes: &[u8], codec: Compression) -> MetricsData {
        MetricsData::decode(decompress(codec, bytes, 1 << 20).unwrap().as_slice()).unwrap()
    }

    fn first_int(data: &MetricsData) -> (i64, u64, i32) {
        let m = &data.resource_metrics[0].scope_metrics[0].metrics[0];
        let Some(Data::Sum(sum)) = &m.data else {
            panic!("a sum")
        };
        let p = &sum.data_points[0];
        let Some(number_data_point::Value::AsInt(v)) = p.value else {
            panic!("an int")
        };
        (v, p.start_time_unix_nano, sum.aggregation_temporality)
    }

    #[test]
    fn deltas_are_the_change_since_the_last_payload_and_cumulative_sums_the_whole() {
        let mut enc = Encoder::new(vec![("client_id", "c1".into())], 100);
        let delta = subscription(true, Compression::Zstd, 1 << 20);
        let (bytes, count) = enc.payload(&metrics(10), &delta, 200).unwrap();
        assert_eq!(count, 2, "the producer metric is not selected");
        let data = decode(&bytes, Compression::Zstd);
        assert_eq!(
            first_int(&data),
            (10, 100, AggregationTemporality::Delta as i32)
        );
        let attrs = &data.resource_metrics[0]
            .resource
            .as_ref()
            .unwrap()
            .attributes;
        assert_eq!(attrs[0].key, "client_id");
        enc.accepted(&metrics(10), 200);
        let (bytes, _) = enc.payload(&metrics(25), &delta, 300).unwrap();
        assert_eq!(
            first_int(&decode(&bytes, Compression::Zstd)),
            (15, 200, AggregationTemporality::Delta as i32)
        );
        enc.accepted(&metrics(25), 300);
        // Cumulative from now on: the whole count since creation.
        let cumulative = subscription(false, Compression::Lz4, 1 << 20);
        let (bytes, _) = enc.payload(&metrics(30), &cumulative, 400).unwrap();
        assert_eq!(
            first_int(&decode(&bytes, Compression::Lz4)),
            (30, 100, AggregationTemporality::Cumulative as i32)
        );
    }

    #[test]
    fn a_delta_the_broker_did_not_accept_goes_again_with_the_next() {
        let mut enc = Encoder::new(vec![("client_id", "c1".into())], 100);
        let delta = subscription(true, Compression::None, 1 << 20);
        // Made at 200, never accepted (the push failed).
        enc.payload(&metrics(10), &delta, 200).unwrap();
        let (bytes, _) = enc.payload(&metrics(25), &delta, 300).unwrap();
        assert_eq!(
            first_int(&decode(&bytes, Compression::None)),
            (25, 100, AggregationTemporality::Delta as i32)
        );
        enc.accepted(&metrics(25), 300);
        let (bytes, _) = enc.payload(&metrics(30), &delta, 400).unwrap();
        assert_eq!(
            first_int(&decode(&bytes, Compression::None)),
            (5, 300, AggregationTemporality::Delta as i32)
        );
    }

    #[test]
    fn a_payload_keeps_within_the_brokers_limit() {
        let mut enc = Encoder::new(vec![("client_id", "c1".into())], 100);
        let (full, _) = enc
            .payload(
                &metrics(1),
                &subscription(false, Compression::None, 1 << 20),
                200,
            )
            .unwrap();
        let (bytes, count) = enc
            .payload(
                &metrics(1),
                &subscription(false, Compression::None, full.len() - 1),
                300,
            )
            .unwrap();
        assert!(bytes.len() < full.len());
        assert_eq!(count, 1);
        assert!(matches!(
            enc.payload(
                &metrics(1),
                &subscription(false, Compression::None, 10),
                400
            ),
            Err(PayloadError::TooLarge { max: 10 })
        ));
    }
}
