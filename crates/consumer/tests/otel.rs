//! OpenTelemetry traces against the real broker: records produced by a real client
//! (confluent-kafka, i.e. librdkafka) with W3C `traceparent`/`tracestate` headers are consumed in
//! a group, and the spans the runtime makes are read back from the SDK's in-memory exporter:
//! each record's `process` span continues the producer's trace with the messaging
//! semantic-convention attributes, a malformed header gives a root span (the record is still
//! processed), the rebalance span tree has its phases in order, and commits have spans (nested
//! under `partitions_revoked` when made while revoking). A batch handler's call has one process
//! span for its batch, linked to the producers' spans.
//!
//! The exporter is installed once for this test binary as the global `tracing` subscriber: the
//! consumer's tasks run on a multi-thread runtime, where a thread-local default would miss them.
//! Tests share it and tell their spans apart by topic and group.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;

use std::sync::OnceLock;
use std::time::Duration;

use common::{stop, wait_until, Calls, Seen};
use mooring_consumer::processing::{Batch, ConsumerRecord};
use mooring_consumer::ConsumerConfig;
use mooring_consumer::{Consumer, TopicPartition};
use mooring_testkit::{unique, Cluster};
use opentelemetry::trace::{SpanId, SpanKind, Status, TraceId, TracerProvider as _};
use opentelemetry::{Key, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tracing::Instrument;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::Layer;

struct Otel {
    exporter: InMemorySpanExporter,
    provider: SdkTracerProvider,
}

/// The global subscriber with the in-memory exporter (spans are exported as they end).
fn otel() -> &'static Otel {
    static OTEL: OnceLock<Otel> = OnceLock::new();
    OTEL.get_or_init(|| {
        let exporter = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(exporter.clone())
            .build();
        let layer = tracing_opentelemetry::layer()
            .with_tracer(provider.tracer_with_scope(mooring_consumer::otel::scope()))
            .with_filter(LevelFilter::INFO);
        tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))
            .expect("the only global subscriber of this test binary");
        Otel { exporter, provider }
    })
}

fn finished_spans() -> Vec<SpanData> {
    let otel = otel();
    otel.provider.force_flush().unwrap();
    otel.exporter.get_finished_spans().unwrap()
}

fn attr<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key == Key::new(key.to_owned()))
        .map(|kv| &kv.value)
}

fn attr_str(span: &SpanData, key: &str) -> Option<String> {
    attr(span, key).map(|v| v.as_str().into_owned())
}

fn attr_i64(span: &SpanData, key: &str) -> Option<i64> {
    match attr(span, key) {
        Some(Value::I64(v)) => Some(*v),
        None => None,
        other => panic!("{key} of {} is not an integer: {other:?}", span.name),
    }
}

const T1: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const S1: &str = "00f067aa0ba902b7";
const T2: &str = "0af7651916cd43dd8448eb211c80319c";
const S2: &str = "b7ad6b7169203331";

/// Produces, in this order and each flushed before the next: (partition, key, value, headers)
/// from a JSON list; a key or value of `null` is null, `"\\xff"` keys are raw bytes.
const PRODUCER: &str = r#"
import json, sys
from confluent_kafka import Producer
bootstrap, topic, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
for part, key, value, headers in spec:
    if key is not None:
        key = key.encode("latin-1")
    if value is not None:
        value = value.encode()
    p.produce(topic, key=key, value=value, partition=part, headers=[(k, v.encode()) for k, v in headers])
    p.flush(30)
"#;

fn consumer(cluster: &Cluster, group: &str, extra: &[(&str, &str)]) -> Consumer {
    Consumer::new(ConsumerConfig::from_properties(common::props(cluster, group, extra)).unwrap())
        .unwrap()
}

/// A handler that records each record and does its work in a child span of the process span.
fn traced_handler(
    seen: &Seen,
) -> impl Fn(
    ConsumerRecord,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send>>
       + Send
       + Sync
       + 'static {
    let seen = seen.clone();
    move |record: ConsumerRecord| {
        let seen = seen.clone();
        Box::pin(
            async move {
                tokio::time::sleep(Duration::from_millis(2)).await;
                seen.record(&record);
                Ok(())
            }
            .instrument(tracing::info_span!("handler-work")),
        )
    }
}

fn process_span<'a>(
    spans: &'a [SpanData],
    topic: &str,
    partition: i32,
    offset: i64,
) -> &'a SpanData {
    let name = format!("process {topic}");
    let found: Vec<&SpanData> = spans
        .iter()
        .filter(|s| {
            s.name == name
                && attr_str(s, "messaging.destination.partition.id") == Some(partition.to_string())
                && attr_i64(s, "messaging.kafka.offset") == Some(offset)
        })
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one process span for {topic}-{partition}@{offset}"
    );
    found[0]
}

fn children<'a>(spans: &'a [SpanData], parent: &SpanData) -> Vec<&'a SpanData> {
    let mut c: Vec<&SpanData> = spans
        .iter()
        .filter(|s| {
            s.parent_span_id == parent.span_context.span_id()
                && s.span_context.trace_id() == parent.span_context.trace_id()
        })
        .collect();
    c.sort_by_key(|s| s.start_time);
    c
}

fn names(spans: &[&SpanData]) -> Vec<String> {
    spans.iter().map(|s| s.name.to_string()).collect()
}

/// Rebalance spans of `group`, by start time.
fn rebalances<'a>(spans: &'a [SpanData], group: &str) -> Vec<&'a SpanData> {
    let mut r: Vec<&SpanData> = spans
        .iter()
        .filter(|s| {
            s.name == "rebalance"
                && attr_str(s, "messaging.consumer.group.name").as_deref() == Some(group)
        })
        .collect();
    r.sort_by_key(|s| s.start_time);
    r
}

/// Asserts a phase span lies inside its parent in time.
fn assert_within(child: &SpanData, parent: &SpanData) {
    assert!(
        child.start_time >= parent.start_time && child.end_time <= parent.end_time,
        "{} [{:?}..{:?}] outside {} [{:?}..{:?}]",
        child.name,
        child.start_time,
        child.end_time,
        parent.name,
        parent.start_time,
        parent.end_time
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn process_spans_continue_the_producers_trace_with_semconv_attributes() {
    otel();
    let cluster = Cluster::shared();
    let topic = unique("otel");
    let group = unique("otel-g");
    cluster.create_topic(&topic, 2);
    let spec = serde_json::json!([
        [0, "k0", "v0", [["traceparent", format!("00-{T1}-{S1}-01")]]],
        [
            1,
            "k1",
            "v1",
            [
                ["traceparent", format!("00-{T2}-{S2}-01")],
                ["tracestate", "vendor=x,other=2"]
            ]
        ],
        [
            0,
            "\u{ff}\u{fe}",
            "v2",
            [["traceparent", "00-not-a-valid-header-01"]]
        ],
        [1, null, null, []],
    ]);
    common::produce_with_python(&cluster, PRODUCER, &topic, &spec);

    let c = consumer(
        &cluster,
        &group,
        &[
            ("client.id", "otel-client"),
            ("enable.auto.commit", "false"),
        ],
    );
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = {
        let c = c.clone();
        let handler = traced_handler(&seen);
        tokio::spawn(async move { c.run(handler).await })
    };
    wait_until("the 4 records", Duration::from_secs(30), || {
        seen.distinct() == 4
    })
    .await;
    // The handler records a record just before it returns, and the engine marks it finished
    // after that, when nothing outside can see it: `commit()` now could leave a partition out.
    // The handler has processed all four, so the test vouches for them (as Java's
    // `commitSync(offsets)`): the one commit carries both partitions, through the same commit
    // path and span.
    let handled: std::collections::BTreeMap<TopicPartition, i64> = [0, 1]
        .into_iter()
        .map(|p| (TopicPartition::new(&topic, p), 2))
        .collect();
    assert_eq!(
        c.commit_offsets(handled.clone()).await.unwrap(),
        handled,
        "both partitions committed"
    );
    stop(&c, run).await.unwrap();
    assert_eq!(seen.duplicates(), 0);

    let spans = finished_spans();
    let t1 = TraceId::from_hex(T1).unwrap();
    let t2 = TraceId::from_hex(T2).unwrap();

    // Each record: one process span, kind consumer, semantic-convention attributes.
    for (partition, offset) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let s = process_span(&spans, &topic, partition, offset);
        assert_eq!(s.span_kind, SpanKind::Consumer);
        assert_eq!(attr_str(s, "messaging.system").as_deref(), Some("kafka"));
        assert_eq!(
            attr_str(s, "messaging.operation.type").as_deref(),
            Some("process")
        );
        assert_eq!(
            attr_str(s, "messaging.operation.name").as_deref(),
            Some("process")
        );
        assert_eq!(
            attr_str(s, "messaging.destination.name"),
            Some(topic.clone())
        );
        assert_eq!(
            attr_str(s, "messaging.consumer.group.name"),
            Some(group.clone())
        );
        assert_eq!(
            attr_str(s, "messaging.client.id").as_deref(),
            Some("otel-client")
        );
        assert_eq!(attr_i64(s, "mooring.attempts"), Some(1));
        assert_eq!(s.status, Status::Unset);
        assert_eq!(s.instrumentation_scope.name(), "mooring-consumer");
    }

    // traceparent → the producer's trace and span as the (remote) parent.
    let r0 = process_span(&spans, &topic, 0, 0);
    assert_eq!(r0.span_context.trace_id(), t1);
    assert_eq!(r0.parent_span_id, SpanId::from_hex(S1).unwrap());
    assert!(r0.parent_span_is_remote);
    assert_eq!(
        attr_str(r0, "messaging.kafka.message.key").as_deref(),
        Some("k0")
    );
    assert!(attr(r0, "messaging.kafka.message.tombstone").is_none());

    // tracestate is carried along.
    let r1 = process_span(&spans, &topic, 1, 0);
    assert_eq!(r1.span_context.trace_id(), t2);
    assert_eq!(r1.parent_span_id, SpanId::from_hex(S2).unwrap());
    assert_eq!(r1.span_context.trace_state().get("vendor"), Some("x"));
    assert_eq!(r1.span_context.trace_state().get("other"), Some("2"));

    // A malformed traceparent: processed, under a new root span; a key that is not UTF-8 is left out.
    let r2 = process_span(&spans, &topic, 0, 1);
    assert_eq!(r2.parent_span_id, SpanId::INVALID);
    assert!(r2.span_context.trace_id() != t1 && r2.span_context.trace_id() != t2);
    assert!(r2.span_context.is_valid());
    assert!(attr(r2, "messaging.kafka.message.key").is_none());
    assert!(seen.offsets().contains(&(topic.clone(), 0, 1)));

    // No headers, null key and value: a root span marked as a tombstone.
    let r3 = process_span(&spans, &topic, 1, 1);
    assert_eq!(r3.parent_span_id, SpanId::INVALID);
    assert!(attr(r3, "messaging.kafka.message.key").is_none());
    assert_eq!(
        attr(r3, "messaging.kafka.message.tombstone"),
        Some(&Value::Bool(true))
    );

    // The handler's own span nests under the process span, in the producer's trace.
    for parent in [r0, r1, r2, r3] {
        let kids = children(&spans, parent);
        assert_eq!(names(&kids), ["handler-work"], "under {}", parent.name);
        assert_within(kids[0], parent);
    }

    // The first rebalance: rebalance → join (MEMBER_ID_REQUIRED, then joined), sync, assigned.
    let rebalances = rebalances(&spans, &group);
    assert!(!rebalances.is_empty(), "a rebalance span for {group}");
    let first = rebalances[0];
    assert_eq!(first.parent_span_id, SpanId::INVALID);
    assert_eq!(
        attr_str(first, "mooring.rebalance.cause").as_deref(),
        Some("member_joined")
    );
    assert_eq!(
        attr_str(first, "mooring.rebalance.outcome").as_deref(),
        Some("completed")
    );
    assert!(attr_i64(first, "mooring.generation").unwrap() >= 1);
    let phases = children(&spans, first);
    let phase_names = names(&phases);
    let last_join = phase_names
        .iter()
        .rposition(|n| n == "join")
        .expect("a join");
    assert!(
        phase_names[..last_join].iter().all(|n| n == "join"),
        "{phase_names:?}"
    );
    assert_eq!(
        &phase_names[last_join..],
        ["join", "sync", "partitions_assigned"],
        "{phase_names:?}"
    );
    for (earlier, later) in phases.iter().zip(phases.iter().skip(1)) {
        assert!(
            earlier.end_time <= later.start_time,
            "{phase_names:?} overlap"
        );
    }
    for phase in &phases {
        assert_within(phase, first);
    }
    let join = phases[last_join];
    assert_eq!(join.span_kind, SpanKind::Client);
    assert_eq!(join.status, Status::Unset);
    assert_eq!(
        attr_i64(join, "mooring.generation"),
        attr_i64(first, "mooring.generation")
    );
    let assigned = phases.last().unwrap();
    assert_eq!(attr_i64(assigned, "mooring.partitions"), Some(2));
    assert_eq!(
        attr(assigned, "mooring.timed_out"),
        Some(&Value::Bool(false))
    );

    // The explicit commit: one span with the group, the partitions and the outcome.
    let commits: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == format!("commit {group}"))
        .collect();
    assert_eq!(
        commits.len(),
        1,
        "one commit (the shutdown had nothing new)"
    );
    let commit = commits[0];
    assert_eq!(commit.span_kind, SpanKind::Client);
    assert_eq!(
        attr_str(commit, "messaging.consumer.group.name"),
        Some(group.clone())
    );
    assert_eq!(
        attr_str(commit, "messaging.operation.type").as_deref(),
        Some("settle")
    );
    assert_eq!(
        attr_str(commit, "messaging.operation.name").as_deref(),
        Some("commit")
    );
    assert_eq!(attr_i64(commit, "mooring.commit.partitions"), Some(2));
    assert_eq!(
        attr_str(commit, "mooring.commit.outcome").as_deref(),
        Some("ok")
    );
    assert_eq!(commit.status, Status::Unset);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_commit_while_revoking_nests_under_partitions_revoked() {
    otel();
    let cluster = Cluster::shared();
    let topic = unique("otel-rev");
    let group = unique("otel-rev-g");
    cluster.create_topic(&topic, 2);
    let spec = serde_json::json!([[0, "a", "1", []], [1, "b", "2", []]]);
    common::produce_with_python(&cluster, PRODUCER, &topic, &spec);

    // Eager (range): a second member's join makes the first revoke everything and commit.
    let extra = [
        ("enable.auto.commit", "false"),
        ("partition.assignment.strategy", "range"),
    ];
    let first = consumer(&cluster, &group, &extra);
    first.subscribe([topic.clone()]).unwrap();
    let calls = Calls::default();
    first.set_rebalance_listener(calls.clone());
    let seen = Seen::default();
    let run_first = common::spawn_run(&first, &seen, Duration::ZERO);
    wait_until("both records", Duration::from_secs(30), || {
        seen.distinct() == 2
    })
    .await;

    let second = consumer(&cluster, &group, &extra);
    second.subscribe([topic.clone()]).unwrap();
    let seen_second = Seen::default();
    let run_second = common::spawn_run(&second, &seen_second, Duration::ZERO);
    wait_until("the first member's revoke", Duration::from_secs(30), || {
        calls
            .all()
            .iter()
            .any(|c| matches!(c, common::Call::Revoked(_)))
    })
    .await;
    wait_until("both members assigned", Duration::from_secs(30), || {
        !first.assignment().is_empty() && !second.assignment().is_empty()
    })
    .await;
    stop(&second, run_second).await.unwrap();
    stop(&first, run_first).await.unwrap();

    let spans = finished_spans();
    let rebalances = rebalances(&spans, &group);
    let joined = rebalances
        .iter()
        .find(|r| {
            attr_str(r, "mooring.rebalance.cause").as_deref() == Some("member_joined")
                && children(&spans, r)
                    .first()
                    .is_some_and(|c| c.name == "partitions_revoked")
        })
        .unwrap_or_else(|| {
            panic!(
                "a MemberJoined rebalance starting with partitions_revoked among {:?}",
                rebalances
                    .iter()
                    .map(|r| (
                        attr_str(r, "mooring.rebalance.cause"),
                        names(&children(&spans, r))
                    ))
                    .collect::<Vec<_>>()
            )
        });
    let phases = children(&spans, joined);
    let phase_names = names(&phases);
    // Eager: revoke before joining, then join, sync, assigned.
    assert_eq!(
        phase_names.first().map(String::as_str),
        Some("partitions_revoked")
    );
    assert_eq!(
        &phase_names[phase_names.len() - 3..],
        ["join", "sync", "partitions_assigned"],
        "{phase_names:?}"
    );
    for phase in &phases {
        assert_within(phase, joined);
    }
    let revoked = phases[0];
    assert_eq!(attr_i64(revoked, "mooring.partitions"), Some(2));
    let under_revoke = children(&spans, revoked);
    assert_eq!(
        names(&under_revoke),
        [format!("commit {group}")],
        "the revoked partitions' commit"
    );
    let commit = under_revoke[0];
    assert_eq!(attr_i64(commit, "mooring.commit.partitions"), Some(2));
    assert_eq!(
        attr_str(commit, "mooring.commit.outcome").as_deref(),
        Some("ok")
    );
    assert_within(commit, revoked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_has_one_process_span_linked_to_its_records_traces() {
    otel();
    let cluster = Cluster::shared();
    let topic = unique("otel-batch");
    let group = unique("otel-batch-g");
    cluster.create_topic(&topic, 1);
    let spec = serde_json::json!([
        [0, "k0", "v0", [["traceparent", format!("00-{T1}-{S1}-01")]]],
        [0, "k1", "v1", [["traceparent", "00-not-a-valid-header-01"]]],
        [0, "k2", "v2", [["traceparent", format!("00-{T2}-{S2}-01")]]],
    ]);
    common::produce_with_python(&cluster, PRODUCER, &topic, &spec);

    let c = consumer(&cluster, &group, &[("client.id", "otel-batch-client")]);
    c.subscribe([topic.clone()]).unwrap();
    let handled = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let run = {
        let (c, handled) = (c.clone(), std::sync::Arc::clone(&handled));
        tokio::spawn(async move {
            c.run_batch(move |batch: Batch| {
                let handled = std::sync::Arc::clone(&handled);
                async move {
                    handled.fetch_add(batch.len(), std::sync::atomic::Ordering::SeqCst);
                    Ok::<(), String>(())
                }
                .instrument(tracing::info_span!("batch-work"))
            })
            .await
        })
    };
    wait_until("the 3 records", Duration::from_secs(30), || {
        handled.load(std::sync::atomic::Ordering::SeqCst) == 3
    })
    .await;
    stop(&c, run).await.unwrap();

    let spans = finished_spans();
    let name = format!("process {topic}");
    let batches: Vec<&SpanData> = spans.iter().filter(|s| s.name == name).collect();
    assert!(!batches.is_empty(), "a process span per batch");
    let mut counted = 0;
    let mut linked = Vec::new();
    for s in &batches {
        assert_eq!(s.span_kind, SpanKind::Consumer);
        assert_eq!(s.parent_span_id, SpanId::INVALID, "a root span");
        assert_eq!(
            attr_str(s, "messaging.destination.partition.id").as_deref(),
            Some("0")
        );
        assert_eq!(
            attr_str(s, "messaging.consumer.group.name"),
            Some(group.clone())
        );
        assert_eq!(attr_i64(s, "mooring.attempts"), Some(1));
        assert!(
            attr(s, "messaging.kafka.offset").is_none(),
            "no single offset"
        );
        let n = attr_i64(s, "messaging.batch.message_count").expect("message count");
        let first = attr_i64(s, "mooring.batch.first_offset").expect("first");
        let last = attr_i64(s, "mooring.batch.last_offset").expect("last");
        assert_eq!(last - first + 1, n, "{first}..={last}");
        counted += n;
        linked.extend(s.links.iter().map(|l| {
            let cx = &l.span_context;
            (cx.trace_id().to_string(), cx.span_id().to_string())
        }));
        let kids = children(&spans, s);
        assert_eq!(names(&kids), ["batch-work"]);
        assert_within(kids[0], s);
    }
    assert_eq!(counted, 3);
    linked.sort();
    let mut want = vec![
        (T1.to_owned(), S1.to_owned()),
        (T2.to_owned(), S2.to_owned()),
    ];
    want.sort();
    assert_eq!(linked, want, "a link per valid traceparent");
}
