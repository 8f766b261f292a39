//! Liveness on the shared real broker. A handler that runs three times `health.stale.ms` (but
//! well within `max.poll.interval.ms`) keeps `/healthz` 200: the consumer's fetch loop keeps
//! iterating around it. A consumer whose runtime is stuck (a handler blocks the runtime's only
//! thread on a lock that is not released) turns `/healthz` 503 within about `health.stale.ms`
//! even though its exporter, on another runtime, still delivers snapshots; releasing the lock
//! brings it back.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{get, get_json, sidecar};
use mooring_consumer::processing::ConsumerRecord;
use mooring_testkit::{unique, Cluster};
use support::{consumer, eventually, exporter, props, ready, run, stop, OwnRuntime};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_long_handler_stays_live() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-long");
    let group = unique("sidecar-long-g");
    cluster.create_topic(&topic, 1);
    let s = sidecar("\"health.stale.ms\" = 1500\n").await;
    let addr = s.addr;
    let a = consumer(
        &cluster,
        &group,
        &topic,
        &[("max.poll.interval.ms", "20000")],
    );
    let export = exporter(&a, addr);
    let started = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&started);
    let run_a = run(&a, move |r: ConsumerRecord| {
        let first = r.offset() == 0;
        let flag = Arc::clone(&flag);
        async move {
            if first {
                flag.store(true, Ordering::SeqCst);
                // Three times health.stale.ms.
                tokio::time::sleep(Duration::from_millis(4500)).await;
            }
            Ok::<(), String>(())
        }
    });
    eventually("ready", Duration::from_secs(30), || ready(addr)).await;
    cluster.produce_perf(&topic, 5, 10);
    eventually("the long handler runs", Duration::from_secs(20), || async {
        started.load(Ordering::SeqCst)
    })
    .await;
    let begun = Instant::now();
    let (mut samples, mut worst_stall, mut ticks) = (0, 0.0f64, Vec::new());
    while begun.elapsed() < Duration::from_millis(4200) {
        let (status, body) = get(addr, "/healthz").await;
        assert_eq!(status, 200, "a long handler is not a dead consumer: {body}");
        let h: serde_json::Value = serde_json::from_str(&body).unwrap();
        worst_stall = worst_stall.max(h["poll_stall_seconds"].as_f64().unwrap());
        ticks.push(h["consumer_loop_ticks"].as_u64().unwrap_or(0));
        assert!(
            h["consumer_loop_stale_seconds"].as_f64().unwrap() < 1.5,
            "the loop iterates while the handler runs: {h}"
        );
        samples += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The handler really held its partition past health.stale.ms, and the loop kept ticking.
    assert!(worst_stall > 3.0, "handler stall seen: {worst_stall}");
    assert!(ticks.last() > ticks.first(), "loop ticks moved: {ticks:?}");
    eprintln!(
        "long handler: {samples} /healthz samples all 200, handler stall up to {worst_stall:.2} s, loop ticks {} -> {}",
        ticks.first().unwrap(),
        ticks.last().unwrap()
    );
    stop(&a, run_a).await;
    export.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[allow(clippy::await_holding_lock)] // the test holds the lock the consumer's handler waits on
async fn a_stuck_consumer_runtime_fails_liveness() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-stuck");
    let group = unique("sidecar-stuck-g");
    cluster.create_topic(&topic, 1);
    let s = sidecar("\"health.stale.ms\" = 1000\n").await;
    let addr = s.addr;

    // The consumer lives on its own single-threaded runtime; the exporter on this one (as a
    // sidecar-facing thread of an application would), so snapshots keep coming while the
    // consumer's runtime is blocked.
    let props = props(
        &cluster,
        &group,
        &[
            ("session.timeout.ms", "15000"),
            ("heartbeat.interval.ms", "500"),
        ],
    );
    let own = OwnRuntime::start(props, &topic);
    let export = exporter(&own.consumer, addr);
    eventually("ready", Duration::from_secs(30), || ready(addr)).await;
    eventually("live", Duration::from_secs(10), || async {
        get(addr, "/healthz").await.0 == 200
    })
    .await;

    let blocked_at = Instant::now();
    let (held, producer) = own.block(&topic).await;
    let stuck_since = Instant::now();
    eventually("/healthz turns 503", Duration::from_secs(10), || async {
        get(addr, "/healthz").await.0 == 503
    })
    .await;
    let detected = stuck_since.elapsed();
    let h = get(addr, "/healthz").await.1;
    assert!(h.contains("fetch loop has not iterated"), "{h}");
    // The exporter is alive: the consumer was heard from just now.
    let v: serde_json::Value = serde_json::from_str(&h).unwrap();
    assert!(v["consumer_silent_seconds"].as_f64().unwrap() < 1.0, "{v}");
    let (_, metrics) = get(addr, "/metrics").await;
    let loop_stale = common::metric(&metrics, "mooring_consumer_loop_stale_seconds").unwrap();
    assert!(loop_stale > 1.0, "{loop_stale}");

    drop(held);
    let released = Instant::now();
    eventually("/healthz back to 200", Duration::from_secs(10), || async {
        get(addr, "/healthz").await.0 == 200
    })
    .await;
    let recovered = released.elapsed();
    eprintln!(
        "stuck runtime: /healthz 503 {detected:?} after the runtime blocked (health.stale.ms 1000), 200 again {recovered:?} after release; loop stale was {loop_stale:.2} s; {:?} since the block began",
        blocked_at.elapsed()
    );
    producer.join().unwrap();
    let body = get_json(addr, "/debug/group").await;
    assert_eq!(body["member"]["joined"], true, "{body}");

    own.stop().await;
    export.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}
