//! What the consumer fetched from each broker and rack: the series behind the dashboard's
//! "Zones" row. Cross-zone traffic is billed in most clouds, and without `client.rack` about
//! two thirds of a three-zone consumer's bytes cross a zone; these series show the share, and
//! which partitions are served by a follower in the consumer's own rack (KIP-392).
//!
//! The consumer's snapshot carries cumulative figures per broker (since it was created); the
//! counters here grow by the difference from the last snapshot, and by the whole figure after
//! the consumer restarted (its events numbered from 0 again), as Prometheus counters never go
//! down.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};

use mooring_telemetry_schema::{BrokerFetchSnapshot, Snapshot};
use prometheus::{GaugeVec, IntCounter, IntCounterVec, IntGaugeVec, Opts, Registry};

/// The `cross_rack` label of a broker: whether its rack differs from the consumer's.
fn cross_rack(client_rack: Option<&str>, broker: &BrokerFetchSnapshot) -> &'static str {
    match (client_rack, broker.rack.as_deref()) {
        (Some(own), Some(theirs)) if own == theirs => "false",
        (Some(_), Some(_)) => "true",
        _ => "unknown",
    }
}

/// The share of record bytes fetched from brokers of another rack than `client_rack`, of all
/// bytes fetched (0 before any); `None` when the consumer's rack is not known.
pub fn cross_rack_share(snap: &Snapshot) -> Option<f64> {
    let own = snap.client_rack.as_deref()?;
    let total: u64 = snap
        .fetch_brokers
        .iter()
        .map(|b| b.record_bytes_total)
        .sum();
    let cross: u64 = snap
        .fetch_brokers
        .iter()
        .filter(|b| cross_rack(Some(own), b) == "true")
        .map(|b| b.record_bytes_total)
        .sum();
    Some(if total == 0 {
        0.0
    } else {
        cross as f64 / total as f64
    })
}

/// The most (broker, rack) label sets exported: a cluster has far fewer brokers, and a snapshot
/// naming more (a bug, or a forged one) must not grow the scrape and the sidecar's memory.
pub const MAX_FETCH_SERIES: usize = 256;
/// The longest rack label exported (a broker whose `broker.rack` is longer is dropped).
pub const MAX_RACK_LEN: usize = 128;

/// The fetch series by broker and rack.
#[derive(Debug, Clone)]
pub struct FetchMetrics {
    record_bytes_total: IntCounterVec,
    records_total: IntCounterVec,
    follower_partitions: IntGaugeVec,
    cross_rack_ratio: GaugeVec,
    brokers_dropped_total: IntCounter,
    seen: Arc<Mutex<Seen>>,
}

/// The last snapshot's figures.
#[derive(Debug, Default)]
struct Seen {
    /// Its event's sequence number: a lower one is a new consumer process.
    seq: u64,
    /// node id → (record bytes, records).
    totals: BTreeMap<i32, (u64, u64)>,
    /// The (broker, rack) label sets exported so far (at most [`MAX_FETCH_SERIES`]).
    series: BTreeSet<(i32, String)>,
}

impl FetchMetrics {
    /// Registers the series in `registry`; `register` reports a failure (a bug in the names).
    pub fn new(
        registry: &Registry,
        register: impl Fn(&Registry, &str, Box<dyn prometheus::core::Collector>),
    ) -> Result<FetchMetrics, prometheus::Error> {
        let record_bytes_total = IntCounterVec::new(
            Opts::new(
                "mooring_fetch_record_bytes_total",
                "Record bytes fetched (as on the wire) by broker, its broker.rack and whether that rack differs from the consumer's client.rack (true/false; unknown when either is not set).",
            ),
            &["broker", "rack", "cross_rack"],
        )?;
        let records_total = IntCounterVec::new(
            Opts::new(
                "mooring_fetch_records_total",
                "Records fetched by broker and its broker.rack.",
            ),
            &["broker", "rack"],
        )?;
        let follower_partitions = IntGaugeVec::new(
            Opts::new(
                "mooring_fetch_follower_partitions",
                "Partitions fetched from this broker as a follower now (the preferred read replica the leader named, KIP-392).",
            ),
            &["broker", "rack"],
        )?;
        let cross_rack_ratio = GaugeVec::new(
            Opts::new(
                "mooring_fetch_cross_rack_ratio",
                "Share of the record bytes fetched since the consumer started that came from brokers in another rack than its client.rack (absent without client.rack).",
            ),
            &["client_rack"],
        )?;
        register(
            registry,
            "mooring_fetch_record_bytes_total",
            Box::new(record_bytes_total.clone()),
        );
        register(
            registry,
            "mooring_fetch_records_total",
            Box::new(records_total.clone()),
        );
        register(
            registry,
            "mooring_fetch_follower_partitions",
            Box::new(follower_partitions.clone()),
        );
        register(
            registry,
            "mooring_fetch_cross_rack_ratio",
            Box::new(cross_rack_ratio.clone()),
        );
        let brokers_dropped_total = IntCounter::new(
            "mooring_fetch_brokers_dropped_total",
            "Broker entries of the consumer's snapshots not exported: past the cap of 256 (broker, rack) series, or a rack label longer than 128 bytes.",
        )?;
        register(
            registry,
            "mooring_fetch_brokers_dropped_total",
            Box::new(brokers_dropped_total.clone()),
        );
        Ok(FetchMetrics {
            record_bytes_total,
            records_total,
            follower_partitions,
            cross_rack_ratio,
            brokers_dropped_total,
            seen: Arc::new(Mutex::new(Seen::default())),
        })
    }

    /// Takes the per-broker figures of a consumer snapshot, the event numbered `seq`.
    pub fn observe(&self, seq: u64, snap: &Snapshot) {
        let own = snap.client_rack.as_deref();
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seq < seen.seq {
            seen.totals.clear();
        }
        seen.seq = seq;
        self.follower_partitions.reset();
        for b in &snap.fetch_brokers {
            let rack = b.rack.as_deref().unwrap_or("");
            if !seen.admit(b.node_id, rack) {
                self.brokers_dropped_total.inc();
                continue;
            }
            let broker = b.node_id.to_string();
            let (bytes_before, records_before) =
                seen.totals.get(&b.node_id).copied().unwrap_or((0, 0));
            self.record_bytes_total
                .with_label_values(&[&broker, rack, cross_rack(own, b)])
                .inc_by(b.record_bytes_total.saturating_sub(bytes_before));
            self.records_total
                .with_label_values(&[&broker, rack])
                .inc_by(b.records_total.saturating_sub(records_before));
            self.follower_partitions
                .with_label_values(&[&broker, rack])
                .set(i64::try_from(b.follower_partitions).unwrap_or(i64::MAX));
            seen.totals
                .insert(b.node_id, (b.record_bytes_total, b.records_total));
        }
        self.cross_rack_ratio.reset();
        if let (Some(own), Some(share)) = (
            own.filter(|r| r.len() <= MAX_RACK_LEN),
            cross_rack_share(snap),
        ) {
            self.cross_rack_ratio.with_label_values(&[own]).set(share);
        }
    }
}

impl Seen {
    /// Whether broker `node_id` of `rack` is exported: a label set already exported, or a new
    /// one within the caps.
    fn admit(&mut self, node_id: i32, rack: &str) -> bool {
        if rack.len() > MAX_RACK_LEN {
            return false;
        }
        let key = (node_id, rack.to_owned());
        if self.series.contains(&key) {
            return true;
        }
        if self.series.len() >= MAX_FETCH_SERIES {
            return false;
        }
        self.series.insert(key);
        true
    }
}

#[cfg(test)]
mod tests;
