//! The Prometheus series (the `prometheus` crate), named by Prometheus conventions (base units,
//! `_total`, `_seconds`) and mapped one-to-one onto the Java client's consumer-coordinator
//! metrics (the table is in the crate README). Label values come from closed sets (cause, group
//! state, alert), except the lag series' `topic`/`partition`, which are capped by
//! `lag.max.partitions`.
//!
//! The two per-partition lag families (`mooring_partition_lag_records`,
//! `mooring_partition_lag_seconds`) are not in the registry: [`App::scrape`](crate::app::App::scrape) writes them in the text
//! exposition format straight from the lag table ([`State::lag`](crate::state::State::lag),
//! which the broker watch updates in place and `/debug/partitions` and the lag alerts read),
//! after the registry's output. With
//! 1,000 partitions they are ~95% of a scrape's series, and the registry's round trip (a child
//! per label pair set, copied into protobuf structs, sorted, then encoded) cost several times
//! writing the lines directly (crate README, Performance).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};

use crate::share::counters::ShareCounters;
use crate::state::PartitionLag;
use crate::zones::FetchMetrics;
use mooring_telemetry_schema::TopicPartition;
use mooring_telemetry_schema::{HandlerLatency, HANDLER_LATENCY_BUCKETS_SECONDS};
use prometheus::core::{Collector, Desc, MetricVec, MetricVecBuilder};
use prometheus::{
    proto, Gauge, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

/// Buckets for rebalance phases and callbacks (seconds).
const REBALANCE_BUCKETS: &[f64] = &[
    0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
/// Buckets for the partitions one reconciliation moves (revoked + added).
const MOVED_BUCKETS: &[f64] = &[
    0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0,
];
/// The phases of `mooring_reconcile_phase_duration_seconds`.
pub const RECONCILE_PHASES: [&str; 3] = ["revoke", "assign", "acknowledge"];
/// The values of `mooring_group_protocol{protocol}`.
pub const GROUP_PROTOCOLS: [&str; 3] = ["classic", "consumer", "share"];
/// Buckets for round trips (seconds).
const RTT_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The group states DescribeGroups (classic) and ConsumerGroupDescribe (`consumer`: `Assigning`,
/// `Reconciling`) report (anything else is `Unknown`).
pub const GROUP_STATES: [&str; 8] = [
    "Empty",
    "Stable",
    "PreparingRebalance",
    "CompletingRebalance",
    "Assigning",
    "Reconciling",
    "Dead",
    "Unknown",
];

/// Every series the sidecar exports.
#[derive(Debug, Clone)]
#[allow(missing_docs)]
pub struct Metrics {
    pub registry: Registry,
    pub rebalances_total: IntCounterVec,
    pub rebalances_failed_total: IntCounter,
    pub rebalance_duration_seconds: Histogram,
    pub last_rebalance_duration_seconds: Gauge,
    pub last_rebalance_timestamp_seconds: Gauge,
    pub join_duration_seconds: Histogram,
    pub sync_duration_seconds: Histogram,
    pub partitions_revoked_duration_seconds: Histogram,
    pub partitions_assigned_duration_seconds: Histogram,
    pub partitions_lost_duration_seconds: Histogram,
    pub last_heartbeat_timestamp_seconds: Gauge,
    pub heartbeat_response_duration_seconds: Histogram,
    pub heartbeats_failed_total: IntCounter,
    pub assigned_partitions: IntGauge,
    pub commit_duration_seconds: Histogram,
    pub commits_failed_total: IntCounter,
    pub fenced_total: IntCounter,
    pub group_state: IntGaugeVec,
    pub group_generation: IntGauge,
    pub group_members: IntGauge,
    pub group_epoch: IntGauge,
    pub group_assignment_epoch: IntGauge,
    pub partitions_paused: IntGauge,
    pub processing_in_flight: IntGauge,
    pub consumer_memory_bytes: IntGauge,
    pub consumer_memory_limit_bytes: IntGauge,
    pub poll_stale_seconds: Gauge,
    pub consumer_loop_stale_seconds: Gauge,
    pub handler_duration_seconds: Arc<HandlerDurations>,
    pub telemetry_events_dropped_total: IntCounter,
    pub telemetry_requests_refused_total: IntCounter,
    pub telemetry_events_received_total: IntCounterVec,
    pub telemetry_last_event_timestamp_seconds: Gauge,
    pub broker_watch_errors_total: IntCounter,
    pub broker_watch_last_success_timestamp_seconds: Gauge,
    pub alert_level: IntGaugeVec,
    pub consumer_fatal_error: IntGaugeVec,
    pub group_protocol: IntGaugeVec,
    pub consumer_member_state: IntGaugeVec,
    pub member_epoch: IntGauge,
    pub reconciliations_total: IntCounter,
    pub reconcile_duration_seconds: Histogram,
    pub reconcile_phase_duration_seconds: HistogramVec,
    pub reconcile_partitions_moved: Histogram,
    pub instance_id_unreleased_wait_seconds: Gauge,
    pub instance_id_unreleased_attempts_total: IntCounter,
    pub fetch: FetchMetrics,
    pub share: Arc<ShareCounters>,
    pub share_member_state: IntGaugeVec,
    pub share_delivery_count_limit: IntGauge,
}

fn hist(registry: &Registry, name: &str, help: &str, buckets: &[f64]) -> Histogram {
    let h = Histogram::with_opts(HistogramOpts::new(name, help).buckets(buckets.to_vec()))
        .unwrap_or_else(|e| unreachable_metric(name, e));
    register(registry, name, Box::new(h.clone()));
    h
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    let c = IntCounter::new(name, help).unwrap_or_else(|e| unreachable_metric(name, e));
    register(registry, name, Box::new(c.clone()));
    c
}

fn gauge(registry: &Registry, name: &str, help: &str) -> Gauge {
    let g = Gauge::new(name, help).unwrap_or_else(|e| unreachable_metric(name, e));
    register(registry, name, Box::new(g.clone()));
    g
}

fn int_gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    let g = IntGauge::new(name, help).unwrap_or_else(|e| unreachable_metric(name, e));
    register(registry, name, Box::new(g.clone()));
    g
}

/// `family`, registered, with a child for each of `values` (counters and gauges at zero).
fn labelled<P: MetricVecBuilder + 'static>(
    registry: &Registry,
    name: &str,
    family: prometheus::Result<MetricVec<P>>,
    values: &[&str],
) -> MetricVec<P> {
    let v = family.unwrap_or_else(|e| unreachable_metric(name, e));
    register(registry, name, Box::new(v.clone()));
    for value in values {
        v.with_label_values(&[value]);
    }
    v
}

/// A counter family of one label (see [`labelled`]).
fn counter_vec(
    registry: &Registry,
    (name, help): (&str, &str),
    label: &str,
    values: &[&str],
) -> IntCounterVec {
    let family = IntCounterVec::new(Opts::new(name, help), &[label]);
    labelled(registry, name, family, values)
}

/// A gauge family of one label (see [`labelled`]).
fn gauge_vec(
    registry: &Registry,
    (name, help): (&str, &str),
    label: &str,
    values: &[&str],
) -> IntGaugeVec {
    let family = IntGaugeVec::new(Opts::new(name, help), &[label]);
    labelled(registry, name, family, values)
}

fn register(registry: &Registry, name: &str, c: Box<dyn prometheus::core::Collector>) {
    if let Err(e) = registry.register(c) {
        unreachable_metric(name, e)
    }
}

/// The names and help texts are constants of this file: a failure is a bug caught by the first
/// test that builds `Metrics`.
fn unreachable_metric(name: &str, e: prometheus::Error) -> ! {
    panic!("metric `{name}` is ill-defined: {e}")
}

// The labelled families of `Metrics::new`, one function each: name, help, label and the values
// whose children start at zero.

fn rebalances_total(r: &Registry) -> IntCounterVec {
    let causes = mooring_telemetry_schema::RebalanceCause::ALL.map(|c| c.as_str());
    counter_vec(
        r,
        (
            "mooring_rebalances_total",
            "Completed rebalances by cause (Java: rebalance-total).",
        ),
        "cause",
        &causes,
    )
}

fn group_state(r: &Registry) -> IntGaugeVec {
    gauge_vec(
        r,
        (
            "mooring_group_state",
            "1 for the group's state as DescribeGroups reports it.",
        ),
        "state",
        &GROUP_STATES,
    )
}

fn alert_level(r: &Registry) -> IntGaugeVec {
    let alerts = crate::alerts::AlertKind::ALL.map(|a| a.as_str());
    gauge_vec(
        r,
        (
            "mooring_alert_level",
            "Alert level: 0 ok, 1 warning, 2 critical.",
        ),
        "alert",
        &alerts,
    )
}

fn consumer_fatal_error(r: &Registry) -> IntGaugeVec {
    gauge_vec(
        r,
        ("mooring_consumer_fatal_error", "1 while the consumer is stopped on a fatal error of this kind (authentication, tls, group_authorization, topic_authorization, ...): its run ended with it; 0 once a new consumer process reports."),
        "kind",
        &[],
    )
}

fn group_protocol(r: &Registry) -> IntGaugeVec {
    gauge_vec(
        r,
        ("mooring_group_protocol", "1 for the group protocol the member speaks (group.protocol: classic or consumer, from its telemetry; classic for a consumer that does not say)."),
        "protocol",
        &GROUP_PROTOCOLS,
    )
}

fn consumer_member_state(r: &Registry) -> IntGaugeVec {
    gauge_vec(
        r,
        ("mooring_consumer_member_state", "consumer protocol: 1 for the member's own state (joining, reconciling, acknowledging, stable, fenced, stale, leaving, instance_id_unreleased, ...); all 0 for a classic member."),
        "state",
        &mooring_telemetry_schema::CONSUMER_MEMBER_STATES,
    )
}

fn share_member_state(r: &Registry) -> IntGaugeVec {
    gauge_vec(
        r,
        ("mooring_share_member_state", "Share groups: 1 for the share member's own state (joining, reconciling, stable, fenced, leaving, fatal, unsubscribed); all 0 for other members."),
        "state",
        &mooring_telemetry_schema::SHARE_MEMBER_STATES,
    )
}

fn reconcile_phase_duration_seconds(r: &Registry) -> HistogramVec {
    let phases = HistogramOpts::new(
        "mooring_reconcile_phase_duration_seconds",
        "consumer protocol: one phase of a reconciliation: revoke (handlers of the revoked partitions drained, commit, the revoked callback), assign (topic ids resolved, the assigned callback), acknowledge (until the heartbeat that acknowledged it answered).",
    )
    .buckets(REBALANCE_BUCKETS.to_vec());
    labelled(
        r,
        "mooring_reconcile_phase_duration_seconds",
        HistogramVec::new(phases, &["phase"]),
        &RECONCILE_PHASES,
    )
}

fn telemetry_events_received_total(r: &Registry) -> IntCounterVec {
    counter_vec(
        r,
        (
            "mooring_telemetry_events_received_total",
            "Telemetry lines received, by type.",
        ),
        "type",
        &[],
    )
}

impl Metrics {
    /// Registers every series (causes, alerts and group states are pre-created at zero).
    pub fn new() -> Metrics {
        let r = Registry::new();
        let m = Metrics {
            // The literal's order is the registration order: the labelled families, then the rest.
            rebalances_total: rebalances_total(&r),
            group_state: group_state(&r),
            alert_level: alert_level(&r),
            handler_duration_seconds: HandlerDurations::register(&r),
            consumer_fatal_error: consumer_fatal_error(&r),
            group_protocol: group_protocol(&r),
            consumer_member_state: consumer_member_state(&r),
            reconcile_phase_duration_seconds: reconcile_phase_duration_seconds(&r),
            share_member_state: share_member_state(&r),
            telemetry_events_received_total: telemetry_events_received_total(&r),
            // Rebalances and their phases (the classic protocol's JoinGroup, SyncGroup, callbacks).
            rebalances_failed_total: counter(&r, "mooring_rebalances_failed_total", "Failed rebalance attempts (Java: failed-rebalance-total)."),
            rebalance_duration_seconds: hist(&r, "mooring_rebalance_duration_seconds", "Rebalance duration, start to stable (Java: rebalance-latency-avg/max).", REBALANCE_BUCKETS),
            last_rebalance_duration_seconds: gauge(&r, "mooring_last_rebalance_duration_seconds", "Duration of the last completed rebalance."),
            last_rebalance_timestamp_seconds: gauge(&r, "mooring_last_rebalance_timestamp_seconds", "When the last rebalance completed (Java: last-rebalance-seconds-ago = time() - this)."),
            join_duration_seconds: hist(&r, "mooring_join_duration_seconds", "JoinGroup time (Java: join-time-avg/max).", REBALANCE_BUCKETS),
            sync_duration_seconds: hist(&r, "mooring_sync_duration_seconds", "SyncGroup time (Java: sync-time-avg/max).", REBALANCE_BUCKETS),
            partitions_revoked_duration_seconds: hist(&r, "mooring_partitions_revoked_duration_seconds", "Revoke callback latency (Java: partition-revoked-latency-avg/max).", REBALANCE_BUCKETS),
            partitions_assigned_duration_seconds: hist(&r, "mooring_partitions_assigned_duration_seconds", "Assign callback latency (Java: partition-assigned-latency-avg/max).", REBALANCE_BUCKETS),
            partitions_lost_duration_seconds: hist(&r, "mooring_partitions_lost_duration_seconds", "Lost callback latency (Java: partition-lost-latency-avg/max).", REBALANCE_BUCKETS),
            // The member: heartbeats, its assignment, commits, fencings.
            last_heartbeat_timestamp_seconds: gauge(&r, "mooring_last_heartbeat_timestamp_seconds", "When the last heartbeat answered (Java: last-heartbeat-seconds-ago = time() - this)."),
            heartbeat_response_duration_seconds: hist(&r, "mooring_heartbeat_response_duration_seconds", "Heartbeat round trip (Java: heartbeat-response-time-max; heartbeat-total = _count).", RTT_BUCKETS),
            heartbeats_failed_total: counter(&r, "mooring_heartbeats_failed_total", "Heartbeats answered with an error."),
            assigned_partitions: int_gauge(&r, "mooring_assigned_partitions", "Partitions assigned to the member (Java: assigned-partitions)."),
            commit_duration_seconds: hist(&r, "mooring_commit_duration_seconds", "OffsetCommit latency (Java: commit-latency-avg/max; commit-total = _count).", RTT_BUCKETS),
            commits_failed_total: counter(&r, "mooring_commits_failed_total", "Failed commits (member's and auto-commit's)."),
            fenced_total: counter(&r, "mooring_fenced_total", "FENCED_INSTANCE_ID fencings of this member."),
            // The group (the member's generation; the rest from the broker watch).
            group_generation: int_gauge(&r, "mooring_group_generation", "The member's generation."),
            group_members: int_gauge(&r, "mooring_group_members", "Members of the group (DescribeGroups, ConsumerGroupDescribe)."),
            group_epoch: int_gauge(&r, "mooring_group_epoch", "consumer protocol: the group epoch (ConsumerGroupDescribe); it moves when the membership, a subscription or the subscribed topics change. -1 for a classic group."),
            group_assignment_epoch: int_gauge(&r, "mooring_group_assignment_epoch", "consumer protocol: the epoch of the coordinator's target assignment (ConsumerGroupDescribe); below the group epoch while the assignor has not run. -1 for a classic group."),
            // The consumer's processing and memory (from its snapshots).
            partitions_paused: int_gauge(&r, "mooring_partitions_paused", "Assigned partitions paused (by the application or backpressure)."),
            processing_in_flight: int_gauge(&r, "mooring_processing_in_flight", "Handlers running."),
            consumer_memory_bytes: int_gauge(&r, "mooring_consumer_memory_bytes", "Bytes of record data the consumer holds (fetched, waiting for a handler, in its hands)."),
            consumer_memory_limit_bytes: int_gauge(&r, "mooring_consumer_memory_limit_bytes", "The consumer's mooring.memory.max.bytes."),
            poll_stale_seconds: gauge(&r, "mooring_poll_stale_seconds", "Time the processing loop made no progress while work waited (0 when idle)."),
            consumer_loop_stale_seconds: gauge(&r, "mooring_consumer_loop_stale_seconds", "Seconds since the consumer's fetch (poll) loop last iterated, as of its last snapshot plus the snapshot's age (it iterates at least once a second while the runtime lives)."),
            // The telemetry ingest and the broker watch.
            telemetry_events_dropped_total: counter(&r, "mooring_telemetry_events_dropped_total", "Telemetry events the consumer lost (reported by its exporter)."),
            telemetry_requests_refused_total: counter(&r, "mooring_telemetry_requests_refused_total", "Telemetry POSTs refused: no credential, or not the one of ingest.token.file."),
            telemetry_last_event_timestamp_seconds: gauge(&r, "mooring_telemetry_last_event_timestamp_seconds", "When the last telemetry line arrived."),
            broker_watch_errors_total: counter(&r, "mooring_broker_watch_errors_total", "Failed broker look-ups of the group watcher."),
            broker_watch_last_success_timestamp_seconds: gauge(&r, "mooring_broker_watch_last_success_timestamp_seconds", "When the group watcher last read the group from the broker."),
            // The consumer protocol's member: epochs, reconciliations, the static member's wait.
            member_epoch: int_gauge(&r, "mooring_member_epoch", "consumer protocol: the member's epoch (the group epoch it caught up with; 0 while it rejoins); -1 for none or a classic member (mooring_group_generation is the classic generation)."),
            reconciliations_total: counter(&r, "mooring_reconciliations_total", "consumer protocol: reconciliations the member acknowledged (a new target assignment applied; an epoch bump that moves none of its partitions needs none, but its first after a join is one even if empty); those that moved partitions count in mooring_rebalances_total."),
            reconcile_duration_seconds: hist(&r, "mooring_reconcile_duration_seconds", "consumer protocol: a reconciliation, from the heartbeat answer carrying the new assignment to its acknowledgement.", REBALANCE_BUCKETS),
            reconcile_partitions_moved: hist(&r, "mooring_reconcile_partitions_moved", "consumer protocol: partitions one reconciliation moved for this member (revoked + added), per epoch bump.", MOVED_BUCKETS),
            instance_id_unreleased_wait_seconds: gauge(&r, "mooring_instance_id_unreleased_wait_seconds", "consumer protocol: seconds this static member has waited for its group.instance.id, still held by the process it replaces (UNRELEASED_INSTANCE_ID); 0 when not waiting."),
            instance_id_unreleased_attempts_total: counter(&r, "mooring_instance_id_unreleased_attempts_total", "consumer protocol: heartbeats refused with UNRELEASED_INSTANCE_ID."),
            // What the consumer fetched, by broker and rack.
            fetch: FetchMetrics::new(&r, register)
                .unwrap_or_else(|e| unreachable_metric("mooring_fetch_*", e)),
            // Share groups: the consumer's counters (from its share snapshots), the group's
            // delivery limit (from the broker watch).
            share: ShareCounters::register(|c| r.register(c))
                .unwrap_or_else(|e| unreachable_metric("mooring_share_*", e)),
            share_delivery_count_limit: int_gauge(&r, "mooring_share_delivery_count_limit", "Share groups: the group's share.delivery.count.limit as the broker describes it (DescribeConfigs); -1 until read, or for other groups."),
            registry: r,
        };
        m.member_epoch.set(-1);
        m.share_delivery_count_limit.set(-1);
        m.group_protocol.with_label_values(&["classic"]).set(1);
        // Not known until the broker watch reads a `consumer` group.
        m.group_epoch.set(-1);
        m.group_assignment_epoch.set(-1);
        m
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        TextEncoder::new()
            .encode_to_string(&self.registry.gather())
            .unwrap_or_else(|e| format!("# encoding failed: {e}\n"))
    }
}

/// `mooring_partition_lag_records`: its name and help text.
pub const LAG_RECORDS: (&str, &str) = (
    "mooring_partition_lag_records",
    "Records between the committed offset and the high watermark (Java: records-lag).",
);
/// `mooring_partition_owner`: its name and help text.
pub const OWNER: (&str, &str) = (
    "mooring_partition_owner",
    "1 for the member (group.instance.id, else member id) that owns the partition, from the last Stable DescribeGroups; join it on topic and partition for lag per member.",
);
/// `mooring_share_partition_start_offset`: its name and help text.
pub const START_OFFSET: (&str, &str) = (
    "mooring_share_partition_start_offset",
    "Share groups: the share-partition's start offset (DescribeShareGroupOffsets): every record before it is done (accepted, rejected or archived).",
);
/// `mooring_partition_lag_seconds`: its name and help text.
pub const LAG_SECONDS: (&str, &str) = (
    "mooring_partition_lag_seconds",
    "Estimated time lag: now minus when the committed offset was the high watermark (interpolated).",
);

/// Appends the two per-partition lag families to `out` in the text exposition format (0.0.4), and
/// `mooring_partition_owner` for the partitions whose owner is known. The lag families are as
/// the `prometheus` crate's `TextEncoder` wrote them when they were `GaugeVec`s: `# HELP` and
/// `# TYPE … gauge` once per family, one line per partition with the labels in name order
/// (`partition`, `topic`), label values escaped (`\\`, `\n`, `\"`), values as Rust formats
/// them (`1000`, `1.5`). Infinities are written in the format's spelling `+Inf`/`-Inf` (the
/// crate wrote Rust's `inf`, which Prometheus' parser happens to accept as well) and NaN `NaN`.
/// Nothing when the table is empty (the registry skips a family without series too).
pub fn write_lag_families(out: &mut String, lag: &BTreeMap<TopicPartition, PartitionLag>) {
    if lag.is_empty() {
        return;
    }
    // ~50 bytes of labels and value per line, plus the name.
    out.reserve(lag.len() * 2 * (LAG_SECONDS.0.len() + 50) + 400);
    write_header(out, LAG_RECORDS);
    for (p, l) in lag {
        write_labels(out, LAG_RECORDS.0, p);
        let _ = writeln!(out, "{}", l.lag_records);
    }
    write_header(out, LAG_SECONDS);
    for (p, l) in lag {
        write_labels(out, LAG_SECONDS.0, p);
        write_float(out, l.lag_seconds);
        out.push('\n');
    }
    if lag.values().any(|l| l.start_offset.is_some()) {
        write_header(out, START_OFFSET);
        for (p, l) in lag {
            if let Some(start) = l.start_offset {
                write_labels(out, START_OFFSET.0, p);
                let _ = writeln!(out, "{start}");
            }
        }
    }
    if lag.values().any(|l| l.owner.is_some()) {
        write_header(out, OWNER);
        for (p, l) in lag {
            if let Some(owner) = &l.owner {
                out.push_str(OWNER.0);
                out.push_str("{member=\"");
                push_escaped(out, owner, true);
                let _ = write!(out, "\",partition=\"{}\",topic=\"", p.partition);
                push_escaped(out, &p.topic, true);
                out.push_str("\"} 1\n");
            }
        }
    }
}

pub(crate) fn write_header(out: &mut String, (name, help): (&str, &str)) {
    out.push_str("# HELP ");
    out.push_str(name);
    out.push(' ');
    push_escaped(out, help, false);
    out.push_str("\n# TYPE ");
    out.push_str(name);
    out.push_str(" gauge\n");
}

/// `name{partition="p",topic="t"} ` (with the space before the value).
fn write_labels(out: &mut String, name: &str, p: &TopicPartition) {
    out.push_str(name);
    let _ = write!(out, "{{partition=\"{}\",topic=\"", p.partition);
    push_escaped(out, &p.topic, true);
    out.push_str("\"} ");
}

/// The exposition format's escapes: `\` → `\\`, newline → `\n`, and in label values `"` →
/// `\"`. (Kafka topic names are `[a-zA-Z0-9._-]`, so this is the fast path in practice.)
pub(crate) fn push_escaped(out: &mut String, s: &str, quote: bool) {
    let special = |c: char| c == '\\' || c == '\n' || (quote && c == '"');
    if !s.contains(special) {
        out.push_str(s);
        return;
    }
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '"' if quote => out.push_str("\\\""),
            c => out.push(c),
        }
    }
}

/// A sample value as the `prometheus` crate writes one (`f64`'s `Display`: `1.5`, `1000`,
/// `0.001`), except the non-finite ones in the exposition format's spelling.
fn write_float(out: &mut String, v: f64) {
    if v.is_nan() {
        out.push_str("NaN");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 { "+Inf" } else { "-Inf" });
    } else {
        let _ = write!(out, "{v}");
    }
}

/// `mooring_handler_duration_seconds`: the consumer's own cumulative handler histogram, as its
/// last snapshot carried it (fixed buckets shared through the schema), exposed as is. No event
/// per record crosses the wire; a consumer restart starts the counts over (a counter reset to
/// Prometheus).
#[derive(Debug)]
pub struct HandlerDurations {
    desc: Desc,
    latest: Mutex<Option<HandlerLatency>>,
}

impl HandlerDurations {
    /// The series name.
    pub const NAME: &'static str = "mooring_handler_duration_seconds";

    fn new() -> HandlerDurations {
        let desc = Desc::new(
            Self::NAME.to_string(),
            "Record handler duration, first attempt's start to final outcome, retries included (Kafka Streams' closest: process-latency).".to_string(),
            Vec::new(),
            std::collections::HashMap::new(),
        )
        .unwrap_or_else(|e| unreachable_metric(Self::NAME, e));
        HandlerDurations {
            desc,
            latest: Mutex::new(None),
        }
    }

    /// A new one, registered (as its collector) in `registry`.
    fn register(registry: &Registry) -> Arc<HandlerDurations> {
        let durations = Arc::new(HandlerDurations::new());
        register(
            registry,
            Self::NAME,
            Box::new(HandlerCollector(Arc::clone(&durations))),
        );
        durations
    }

    /// Takes the snapshot's figures (ignored when the bucket count does not match this build's).
    pub fn set(&self, latency: &HandlerLatency) {
        if latency.buckets.len() != HANDLER_LATENCY_BUCKETS_SECONDS.len() + 1 {
            return;
        }
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner) = Some(latency.clone());
    }

    /// The latest figures.
    pub fn get(&self) -> Option<HandlerLatency> {
        self.latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

struct HandlerCollector(Arc<HandlerDurations>);

impl Collector for HandlerCollector {
    fn desc(&self) -> Vec<&Desc> {
        vec![&self.0.desc]
    }

    fn collect(&self) -> Vec<proto::MetricFamily> {
        let latest = self.0.get().unwrap_or_else(|| HandlerLatency {
            buckets: vec![0; HANDLER_LATENCY_BUCKETS_SECONDS.len() + 1],
            sum_seconds: 0.0,
            count: 0,
        });
        let mut h = proto::Histogram::default();
        h.set_sample_sum(latest.sum_seconds);
        h.set_sample_count(latest.count);
        h.set_bucket(
            HANDLER_LATENCY_BUCKETS_SECONDS
                .iter()
                .zip(&latest.buckets)
                .map(|(&le, &n)| {
                    let mut b = proto::Bucket::default();
                    b.set_upper_bound(le);
                    b.set_cumulative_count(n);
                    b
                })
                .collect(),
        );
        let mut m = proto::Metric::default();
        m.set_histogram(h);
        let mut family = proto::MetricFamily::default();
        family.set_name(self.0.desc.fq_name.clone());
        family.set_help(self.0.desc.help.clone());
        family.set_field_type(proto::MetricType::HISTOGRAM);
        family.set_metric(vec![m]);
        vec![family]
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(rows: &[(&str, i32, i64, f64)]) -> BTreeMap<TopicPartition, PartitionLag> {
        rows.iter()
            .map(|&(topic, partition, lag_records, lag_seconds)| {
                (
                    TopicPartition {
                        topic: topic.to_string(),
                        partition,
                    },
                    PartitionLag {
                        committed: Some(0),
                        end: Some(lag_records),
                        lag_records,
                        lag_seconds,
                        owner: None,
                        start_offset: None,
                    },
                )
            })
            .collect()
    }

    /// The same table through the `prometheus` crate, as the series were exported before.
    fn through_the_crate(lag: &BTreeMap<TopicPartition, PartitionLag>) -> String {
        let r = Registry::new();
        let records = IntGaugeVec::new(
            Opts::new(LAG_RECORDS.0, LAG_RECORDS.1),
            &["topic", "partition"],
        )
        .expect("records vec");
        let seconds = prometheus::GaugeVec::new(
            Opts::new(LAG_SECONDS.0, LAG_SECONDS.1),
            &["topic", "partition"],
        )
        .expect("seconds vec");
        r.register(Box::new(records.clone())).expect("register");
        r.register(Box::new(seconds.clone())).expect("register");
        for (p, l) in lag {
            let part = p.partition.to_string();
            let labels = [p.topic.as_str(), part.as_str()];
            records.with_label_values(&labels).set(l.lag_records);
            seconds.with_label_values(&labels).set(l.lag_seconds);
        }
        TextEncoder::new()
            .encode_to_string(&r.gather())
            .expect("encode")
    }

    /// Each family's header lines, then its sample lines as a set (the crate sorts series by
    /// label values, the table by topic and partition number).
    fn families(text: &str) -> Vec<(Vec<&str>, std::collections::BTreeSet<&str>)> {
        let mut out: Vec<(Vec<&str>, std::collections::BTreeSet<&str>)> = Vec::new();
        for line in text.lines() {
            if line.starts_with("# HELP") {
                out.push((vec![line], Default::default()));
            } else if let Some(last) = out.last_mut() {
                if line.starts_with('#') {
                    last.0.push(line);
                } else {
                    last.1.insert(line);
                }
            }
        }
        out
    }

    #[test]
    fn the_lines_are_the_crates_for_finite_values_and_awkward_labels() {
        let lag = table(&[
            ("orders", 0, 0, 0.0),
            ("orders", 2, 1000, 1.5),
            ("orders", 10, 7, 0.001),
            ("orders", 1, 123_456_789, 86_400.25),
            ("we\"ird\\topic\nname", 3, 5, 1e-7),
            ("é-ünïcode.topic_1", 2_147_483_647, 1 << 52, 1e21),
        ]);
        let mut ours = String::new();
        write_lag_families(&mut ours, &lag);
        let theirs = through_the_crate(&lag);
        assert_eq!(
            families(&ours),
            families(&theirs),
            "ours:\n{ours}\ntheirs:\n{theirs}"
        );
        assert_eq!(ours.lines().count(), theirs.lines().count());
        assert!(ours.ends_with('\n'));
        assert!(ours.contains(
            "mooring_partition_lag_records{partition=\"3\",topic=\"we\\\"ird\\\\topic\\nname\"} 5\n"
        ));
        assert!(
            ours.contains("mooring_partition_lag_seconds{partition=\"2\",topic=\"orders\"} 1.5\n")
        );
        assert_eq!(ours.matches("# HELP").count(), 2);
        assert_eq!(
            ours.matches("# TYPE mooring_partition_lag_records gauge\n")
                .count(),
            1
        );
        assert_eq!(
            ours.matches("# TYPE mooring_partition_lag_seconds gauge\n")
                .count(),
            1
        );
    }

    #[test]
    fn owners_are_an_info_family_of_the_owned_partitions() {
        let mut lag = table(&[("t", 0, 5, 1.0), ("t", 1, 7, 2.0), ("t", 2, 0, 0.0)]);
        let owners = [Some("member-0"), Some("we\"ird"), None];
        for (l, owner) in lag.values_mut().zip(owners) {
            l.owner = owner.map(str::to_string);
        }
        let mut text = String::new();
        write_lag_families(&mut text, &lag);
        let lines: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("mooring_partition_owner"))
            .collect();
        assert_eq!(
            lines,
            [
                "mooring_partition_owner{member=\"member-0\",partition=\"0\",topic=\"t\"} 1",
                "mooring_partition_owner{member=\"we\\\"ird\",partition=\"1\",topic=\"t\"} 1",
            ]
        );
        assert_eq!(
            text.matches("# TYPE mooring_partition_owner gauge\n")
                .count(),
            1
        );
        // Without owners (no Stable view yet) the family is left out, not written empty.
        let mut none = String::new();
        write_lag_families(&mut none, &table(&[("t", 0, 5, 1.0)]));
        assert!(!none.contains("mooring_partition_owner"), "{none}");
    }

    #[test]
    fn non_finite_values_are_spelled_as_the_format_wants() {
        let lag = table(&[
            ("t", 0, 1, f64::NAN),
            ("t", 1, 1, f64::INFINITY),
            ("t", 2, 1, f64::NEG_INFINITY),
        ]);
        let mut text = String::new();
        write_lag_families(&mut text, &lag);
        assert!(text.contains("mooring_partition_lag_seconds{partition=\"0\",topic=\"t\"} NaN\n"));
        assert!(text.contains("mooring_partition_lag_seconds{partition=\"1\",topic=\"t\"} +Inf\n"));
        assert!(text.contains("mooring_partition_lag_seconds{partition=\"2\",topic=\"t\"} -Inf\n"));
    }

    #[test]
    fn an_empty_table_writes_nothing_like_an_empty_vec() {
        let mut text = String::from("x 1\n");
        write_lag_families(&mut text, &BTreeMap::new());
        assert_eq!(text, "x 1\n");
        assert_eq!(through_the_crate(&BTreeMap::new()), "");
    }

    #[test]
    fn the_registry_no_longer_holds_the_lag_families() {
        let m = Metrics::new();
        let text = m.render();
        assert!(!text.contains("mooring_partition_lag"), "{text}");
        assert!(text.contains("# TYPE mooring_assigned_partitions gauge"));
    }
}
