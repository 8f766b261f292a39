//! End to end on the shared real broker: a Mooring `Consumer` exporting to a sidecar started
//! here (port 0). Real rebalances (a second member joins, then leaves cleanly) must show in
//! `/metrics` exactly, with their causes, and in `/debug/rebalances` in order with phase timings;
//! readiness holds after. A consumer whose sidecar is away keeps consuming, and the sidecar's
//! dropped-events counter says how many events were lost once it is back. An exporter that reads
//! the sidecar's ingest credential is heard; one without it is refused and changes nothing.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::net::SocketAddr;
use std::time::Duration;

use common::{get, get_json, metric, sidecar};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::telemetry::TelemetryExporter;
use mooring_testkit::{unique, Cluster};
use support::{
    consumer, eventually, exporter, exporter_config, exporter_with_capacity, first_join_counted,
    ready, rebalances, run, stop, total_rebalances, watching_sidecar,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_rebalances_are_counted_with_their_causes_and_timeline() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-e2e");
    let group = unique("sidecar-e2e-g");
    cluster.create_topic(&topic, 4);
    let s = watching_sidecar(&cluster, &group, 500, "").await;
    let addr = s.addr;

    let handler = |_r: ConsumerRecord| async { Ok::<(), String>(()) };
    let a = consumer(&cluster, &group, &topic, &[]);
    let export = exporter(&a, addr);
    let run_a = run(&a, handler);
    first_join_counted(addr).await;

    let b = consumer(&cluster, &group, &topic, &[]);
    let run_b = run(&b, handler);
    eventually("the join rebalance", Duration::from_secs(30), || async {
        rebalances(addr, "member_joined").await == 2.0 && ready(addr).await
    })
    .await;
    stop(&b, run_b).await; // a clean leave: LeaveGroup
    eventually("the leave rebalance", Duration::from_secs(30), || async {
        rebalances(addr, "member_left").await == 1.0 && ready(addr).await
    })
    .await;

    let (_, text) = get(addr, "/metrics").await;
    assert_eq!(
        total_rebalances(&text),
        3.0,
        "exactly three rebalances:\n{text}"
    );
    assert_eq!(metric(&text, "mooring_rebalances_failed_total"), Some(0.0));
    assert_eq!(
        metric(&text, "mooring_rebalance_duration_seconds_count"),
        Some(3.0)
    );
    assert_eq!(metric(&text, "mooring_assigned_partitions"), Some(4.0));
    // The consumer's memory budget (its default), from its snapshots.
    eventually("the memory budget", Duration::from_secs(15), || async {
        let (_, text) = get(addr, "/metrics").await;
        metric(&text, "mooring_consumer_memory_limit_bytes") == Some(8_388_608.0)
            && metric(&text, "mooring_consumer_memory_bytes").is_some()
    })
    .await;

    let r = get_json(addr, "/debug/rebalances").await;
    let list = r["rebalances"].as_array().unwrap();
    let causes: Vec<&str> = list.iter().map(|x| x["cause"].as_str().unwrap()).collect();
    assert_eq!(causes, ["member_joined", "member_joined", "member_left"]);
    let assigned: Vec<usize> = list
        .iter()
        .map(|x| x["assignment"].as_array().unwrap().len())
        .collect();
    assert_eq!(assigned[0], 4);
    assert!(
        assigned[1] < 4,
        "the join took partitions away: {assigned:?}"
    );
    assert_eq!(assigned[2], 4);
    for x in list {
        assert!(x["total_seconds"].as_f64().unwrap() > 0.0, "{x}");
        assert!(x["phases"]["join_seconds"].as_f64().unwrap() > 0.0, "{x}");
        assert!(x["started_ms"].as_u64().unwrap() <= x["ended_ms"].as_u64().unwrap());
    }
    // The broker's view, from the watch loop.
    eventually("the broker view", Duration::from_secs(10), || async {
        get_json(addr, "/debug/group").await["broker_view"]["state"] == "Stable"
    })
    .await;
    assert_eq!(get(addr, "/readyz").await.0, 200);
    assert_eq!(get(addr, "/healthz").await.0, 200);
    assert_eq!(export.dropped(), 0);

    stop(&a, run_a).await;
    export.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_absent_sidecar_costs_nothing_and_losses_are_counted() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-absent");
    let group = unique("sidecar-absent-g");
    cluster.create_topic(&topic, 2);
    // A port nobody listens on (yet).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();

    let a = consumer(&cluster, &group, &topic, &[]);
    let export = exporter_with_capacity(&a, addr, 4);
    let run_a = run(&a, |_r: ConsumerRecord| async { Ok::<(), String>(()) });
    eventually(
        "drops while the sidecar is away",
        Duration::from_secs(30),
        || async { export.dropped() >= 5 },
    )
    .await;
    assert!(export.failures() > 0);
    // The consumer worked all along.
    assert!(a.member_state().is_some_and(|m| m.generation >= 1));

    let s = sidecar(&format!("listen = \"{addr}\"\n")).await;
    assert_eq!(s.addr, addr);
    stop(&a, run_a).await;
    let dropped = export.shutdown().await;
    assert!(dropped >= 5);
    eventually(
        "the drop count reaches the sidecar",
        Duration::from_secs(10),
        || async {
            let (_, text) = get(addr, "/metrics").await;
            metric(&text, "mooring_telemetry_events_dropped_total") == Some(dropped as f64)
        },
    )
    .await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_exporter_with_the_ingest_credential_is_heard_and_one_without_is_refused() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-credential");
    let group = unique("sidecar-credential-g");
    cluster.create_topic(&topic, 1);
    let dir = std::env::temp_dir().join(unique("sidecar-credential"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ingest.token");
    let s = sidecar(&format!("\"ingest.token.file\" = \"{}\"\n", file.display())).await;
    let snapshots = |text: &str| {
        metric(
            text,
            "mooring_telemetry_events_received_total{type=\"snapshot\"}",
        )
        .unwrap_or(0.0)
    };

    // Without the credential: every POST refused, nothing applied.
    let stranger = consumer(&cluster, &group, &topic, &[]);
    let refused = TelemetryExporter::spawn(&stranger, exporter_config(s.addr)).unwrap();
    eventually("refusals", Duration::from_secs(10), || async {
        refused.failures() >= 3
    })
    .await;
    let (_, text) = get(s.addr, "/metrics").await;
    assert!(metric(&text, "mooring_telemetry_requests_refused_total").unwrap() >= 3.0);
    assert_eq!(snapshots(&text), 0.0, "{text}");
    assert_eq!(refused.sent(), 0);
    refused.shutdown().await;

    // With the file the sidecar made: heard.
    let member = consumer(&cluster, &group, &topic, &[]);
    let mut config = exporter_config(s.addr);
    config.token_file = Some(file.clone());
    let heard = TelemetryExporter::spawn(&member, config).unwrap();
    eventually("snapshots", Duration::from_secs(10), || async {
        snapshots(&get(s.addr, "/metrics").await.1) >= 2.0
    })
    .await;
    assert!(heard.sent() >= 2);
    heard.shutdown().await;
    s.shutdown().await;
    std::fs::remove_dir_all(dir).unwrap();
    cluster.delete_topic(&topic);
}
