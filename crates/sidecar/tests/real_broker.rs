//! End to end on the shared real broker: a Mooring `Consumer` exporting to a sidecar started
//! here (port 0). Real rebalances (a second member joins, then leaves cleanly) must show in
//! `/metrics` exactly, with their causes, and in `/debug/rebalances` in order with phase timings;
//! readiness holds after. A consumer whose sidecar is away keeps consuming, and the sidecar's
//! dropped-events counter says how many events were lost once it is back.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{get, get_json, metric, sidecar};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::telemetry::{ExporterConfig, ExporterHandle, TelemetryExporter};
use mooring_consumer::{Consumer, ConsumerConfig, ConsumerError};
use mooring_testkit::{unique, Cluster};
use tokio::task::JoinHandle;

fn consumer(cluster: &Cluster, group: &str, topic: &str) -> Consumer {
    let props = [
        ("bootstrap.servers", cluster.bootstrap()),
        ("group.id", group),
        ("session.timeout.ms", "6000"),
        ("heartbeat.interval.ms", "500"),
        ("auto.offset.reset", "earliest"),
        ("partition.assignment.strategy", "range"),
        ("fetch.max.wait.ms", "200"),
        ("mooring.shutdown.timeout.ms", "5000"),
    ];
    let c = Consumer::new(ConsumerConfig::from_properties(props).unwrap()).unwrap();
    c.subscribe([topic.to_string()]).unwrap();
    c
}

fn run(c: &Consumer) -> JoinHandle<Result<(), ConsumerError>> {
    let c = c.clone();
    tokio::spawn(async move {
        c.run(|_r: ConsumerRecord| async move { Ok::<(), String>(()) })
            .await
    })
}

async fn stop(c: &Consumer, task: JoinHandle<Result<(), ConsumerError>>) {
    c.shutdown_handle().shutdown();
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("run returns after shutdown")
        .expect("run task")
        .expect("clean run");
}

fn exporter(c: &Consumer, addr: SocketAddr, capacity: usize) -> ExporterHandle {
    let mut config = ExporterConfig::new(format!("http://{addr}/v1/events"));
    config.flush_interval = Duration::from_millis(50);
    config.snapshot_interval = Duration::from_millis(200);
    config.backoff = Duration::from_millis(50);
    config.max_backoff = Duration::from_millis(200);
    config.buffer_capacity = capacity;
    TelemetryExporter::spawn(c, config).unwrap()
}

async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn rebalances(addr: SocketAddr, cause: &str) -> f64 {
    let (_, text) = get(addr, "/metrics").await;
    metric(
        &text,
        &format!("mooring_rebalances_total{{cause=\"{cause}\"}}"),
    )
    .unwrap_or(-1.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn real_rebalances_are_counted_with_their_causes_and_timeline() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-e2e");
    let group = unique("sidecar-e2e-g");
    cluster.create_topic(&topic, 4);
    let s = sidecar(&format!(
        "\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{group}\"\n\"watch.interval.ms\" = 500\n",
        cluster.bootstrap()
    ))
    .await;
    let addr = s.addr;

    let a = consumer(&cluster, &group, &topic);
    let export = exporter(&a, addr, 10_000);
    let run_a = run(&a);
    eventually(
        "the first member is ready",
        Duration::from_secs(30),
        || async { get(addr, "/readyz").await.0 == 200 },
    )
    .await;
    // Counted at once, or (a rebalance another member caused) after the broker watch's look.
    eventually(
        "the first join is counted",
        Duration::from_secs(5),
        || async { rebalances(addr, "member_joined").await == 1.0 },
    )
    .await;

    let b = consumer(&cluster, &group, &topic);
    let run_b = run(&b);
    eventually("the join rebalance", Duration::from_secs(30), || async {
        rebalances(addr, "member_joined").await == 2.0 && get(addr, "/readyz").await.0 == 200
    })
    .await;
    stop(&b, run_b).await; // a clean leave: LeaveGroup
    eventually("the leave rebalance", Duration::from_secs(30), || async {
        rebalances(addr, "member_left").await == 1.0 && get(addr, "/readyz").await.0 == 200
    })
    .await;

    let (_, text) = get(addr, "/metrics").await;
    let total: f64 = text
        .lines()
        .filter(|l| l.starts_with("mooring_rebalances_total{"))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum();
    assert_eq!(total, 3.0, "exactly three rebalances:\n{text}");
    assert_eq!(metric(&text, "mooring_rebalances_failed_total"), Some(0.0));
    assert_eq!(
        metric(&text, "mooring_rebalance_duration_seconds_count"),
        Some(3.0)
    );
    assert_eq!(metric(&text, "mooring_assigned_partitions"), Some(4.0));

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

    let a = consumer(&cluster, &group, &topic);
    let export = exporter(&a, addr, 4);
    let run_a = run(&a);
    let started = Instant::now();
    while export.dropped() < 5 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no drops while the sidecar is away"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
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
