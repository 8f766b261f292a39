//! A real Prometheus server (Debian's `prometheus`, installed by `scripts/setup`) scrapes the
//! sidecar every second while real rebalances happen on the shared broker (a member joins, a
//! second one joins and leaves cleanly), and PromQL over Prometheus' HTTP API returns exactly
//! the rebalances the test caused, in total and by cause.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::time::Duration;

use mooring_consumer::processing::ConsumerRecord;
use mooring_testkit::{unique, Cluster};
use support::prometheus::{Prometheus, Target};
use support::{consumer, eventually, exporter, ready, rebalances, run, stop, watching_sidecar};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prometheus_scrapes_the_rebalances_the_test_caused() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-prom");
    let group = unique("sidecar-prom-g");
    cluster.create_topic(&topic, 4);
    let s = watching_sidecar(&cluster, &group, 250, "").await;
    let addr = s.addr;
    let target = Target {
        addr,
        labels: Vec::new(),
    };
    let prometheus = Prometheus::start("mooring-sidecar", &[target], &[]);
    eventually(
        "Prometheus scrapes the sidecar",
        Duration::from_secs(30),
        || async { prometheus.value("up{job=\"mooring-sidecar\"}").await == Some(1.0) },
    )
    .await;

    let a = consumer(&cluster, &group, &topic, &[]);
    let export = exporter(&a, addr);
    let handler = |_r: ConsumerRecord| async { Ok::<(), String>(()) };
    let run_a = run(&a, handler);
    eventually("the first join", Duration::from_secs(30), || async {
        rebalances(addr, "member_joined").await == 1.0 && ready(addr).await
    })
    .await;
    let b = consumer(&cluster, &group, &topic, &[]);
    let run_b = run(&b, handler);
    eventually("the second join", Duration::from_secs(30), || async {
        rebalances(addr, "member_joined").await == 2.0 && ready(addr).await
    })
    .await;
    stop(&b, run_b).await;
    eventually("the leave", Duration::from_secs(30), || async {
        rebalances(addr, "member_left").await == 1.0 && ready(addr).await
    })
    .await;
    cluster.produce_perf(&topic, 20, 10);

    let waited = std::time::Instant::now();
    eventually(
        "PromQL sees three rebalances",
        Duration::from_secs(20),
        || async { prometheus.value("sum(mooring_rebalances_total)").await == Some(3.0) },
    )
    .await;
    eprintln!(
        "Prometheus had the count {:?} after the last rebalance",
        waited.elapsed()
    );
    let by_cause = prometheus
        .query("sum by (cause) (mooring_rebalances_total) > 0")
        .await
        .unwrap();
    let mut seen: Vec<(String, f64)> = by_cause
        .iter()
        .map(|r| {
            (
                r["metric"]["cause"].as_str().unwrap().to_string(),
                r["value"][1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    seen.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        seen,
        [
            ("member_joined".to_string(), 2.0),
            ("member_left".to_string(), 1.0)
        ],
        "{}",
        prometheus.log()
    );
    assert_eq!(
        prometheus
            .value("sum(mooring_rebalance_duration_seconds_count)")
            .await,
        Some(3.0)
    );
    eventually(
        "the handler histogram is scraped",
        Duration::from_secs(10),
        || async {
            prometheus
                .value("sum(mooring_handler_duration_seconds_count)")
                .await
                .is_some_and(|n| n >= 20.0)
        },
    )
    .await;

    stop(&a, run_a).await;
    export.shutdown().await;
    drop(prometheus);
    s.shutdown().await;
    cluster.delete_topic(&topic);
}
