//! The consumer's figures at one moment, under the names Java's consumer pushes them by
//! (KIP-714: `org.apache.kafka.` + `consumer.` + the metric group without its `consumer-` prefix
//! and `-metrics` suffix + the metric name, dashes turned into dots). Only what Mooring measures
//! itself, with the same meaning; each point says where it comes from.

use std::sync::Arc;

use mooring_client::Client;

use crate::latency::LatencySummary;
use crate::shared::Shared;

/// `records-consumed-total` of `consumer-fetch-manager-metrics`.
pub(crate) const RECORDS_CONSUMED_TOTAL: &str =
    "org.apache.kafka.consumer.fetch.manager.records.consumed.total";
/// `bytes-consumed-total` of `consumer-fetch-manager-metrics`.
pub(crate) const BYTES_CONSUMED_TOTAL: &str =
    "org.apache.kafka.consumer.fetch.manager.bytes.consumed.total";
/// `fetch-latency-avg` of `consumer-fetch-manager-metrics`, milliseconds.
pub(crate) const FETCH_LATENCY_AVG: &str =
    "org.apache.kafka.consumer.fetch.manager.fetch.latency.avg";
/// `fetch-latency-max` of `consumer-fetch-manager-metrics`, milliseconds.
pub(crate) const FETCH_LATENCY_MAX: &str =
    "org.apache.kafka.consumer.fetch.manager.fetch.latency.max";
/// `commit-latency-avg` of `consumer-coordinator-metrics`, milliseconds.
pub(crate) const COMMIT_LATENCY_AVG: &str =
    "org.apache.kafka.consumer.coordinator.commit.latency.avg";
/// `commit-latency-max` of `consumer-coordinator-metrics`, milliseconds.
pub(crate) const COMMIT_LATENCY_MAX: &str =
    "org.apache.kafka.consumer.coordinator.commit.latency.max";
/// `assigned-partitions` of `consumer-coordinator-metrics`.
pub(crate) const ASSIGNED_PARTITIONS: &str =
    "org.apache.kafka.consumer.coordinator.assigned.partitions";
/// `connection-creation-total` of `consumer-metrics`: here the connections started (a connect
/// that failed counts too; Java counts those established).
pub(crate) const CONNECTION_CREATION_TOTAL: &str =
    "org.apache.kafka.consumer.connection.creation.total";

/// How a point is aggregated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Point {
    /// A monotonic count since the consumer was created (sent as a cumulative or delta sum).
    Total(u64),
    /// A value now, or over the window since the last push.
    Gauge(f64),
}

/// One named figure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Metric {
    pub(crate) name: &'static str,
    pub(crate) point: Point,
}

/// Where the figures are read.
#[derive(Debug, Clone)]
pub(crate) struct Sources {
    pub(crate) shared: Arc<Shared>,
    /// The group member's client, whose connections count too.
    pub(crate) group_client: Option<Arc<Client>>,
}

impl Sources {
    /// The figures now. Takes (and so restarts) the latency windows: call once per push.
    pub(crate) fn sample(&self) -> Vec<Metric> {
        let shared = &self.shared;
        let fetched = shared.fetch_stats.snapshot();
        let records: u64 = fetched.brokers.iter().map(|b| b.records).sum();
        let connections = shared.fetch_client.connection_attempts()
            + self
                .group_client
                .as_ref()
                .map_or(0, |c| c.connection_attempts());
        let mut metrics = vec![
            metric(RECORDS_CONSUMED_TOTAL, Point::Total(records)),
            metric(BYTES_CONSUMED_TOTAL, Point::Total(fetched.record_bytes())),
            metric(CONNECTION_CREATION_TOTAL, Point::Total(connections)),
        ];
        latency(
            &mut metrics,
            shared.fetch_latency.take(),
            [FETCH_LATENCY_AVG, FETCH_LATENCY_MAX],
        );
        if shared.config.group.is_some() {
            latency(
                &mut metrics,
                shared.commit_latency.take(),
                [COMMIT_LATENCY_AVG, COMMIT_LATENCY_MAX],
            );
            let assigned = shared.subs().assigned_partitions().len();
            metrics.push(metric(ASSIGNED_PARTITIONS, Point::Gauge(assigned as f64)));
        }
        metrics
    }
}

fn metric(name: &'static str, point: Point) -> Metric {
    Metric { name, point }
}

/// The average and maximum of a window, in milliseconds; nothing when nothing was timed (Java
/// reports NaN then, which tells a collector no more).
fn latency(metrics: &mut Vec<Metric>, window: LatencySummary, [avg, max]: [&'static str; 2]) {
    if let Some(mean) = window.avg() {
        metrics.push(metric(avg, Point::Gauge(mean.as_secs_f64() * 1e3)));
        metrics.push(metric(max, Point::Gauge(window.max.as_secs_f64() * 1e3)));
    }
}
