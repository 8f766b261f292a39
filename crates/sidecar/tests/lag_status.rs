//! The lag status on the shared real broker, each status made to happen by a real member and read
//! back from `/debug/lag` (with its evidence) and `/metrics` (the state sets): a member that stops
//! (STOP), a handler that stalls (STALL, from what the member said), an offset reset backwards
//! with Kafka's own ConsumerGroupCommand (REWIND), a consumer slower than its producer (WARN),
//! and a burst the consumer drains that must stay OK throughout. The commits come from
//! `__consumer_offsets` (the source is checked).

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{get, get_json, metric};
use mooring_consumer::processing::ConsumerRecord;
use mooring_testkit::{unique, Cluster};
use serde_json::Value;
use support::{consumer, eventually, exporter, run, stop, watching_sidecar};

/// The sidecar's settings in most of these tests: Burrow's window, commits merged 200 ms apart
/// (time runs five times faster than with Burrow's defaults).
const STATUS: &str = "\"lag.status.min.distance.ms\" = 200\n";
/// The consumer commits every 200 ms.
const COMMITS: (&str, &str) = ("auto.commit.interval.ms", "200");
/// Burrow's defaults (commits merged a second apart) and a consumer committing every second: a
/// burst's growth must last ten seconds to be WARN.
const DEFAULTS: &str = "";
const COMMITS_1S: (&str, &str) = ("auto.commit.interval.ms", "1000");

async fn lag(addr: SocketAddr) -> Value {
    get_json(addr, "/debug/lag").await
}

/// The report's row of `topic`-`partition`.
fn row<'a>(report: &'a Value, topic: &str, partition: i64) -> Option<&'a Value> {
    report["partitions"]
        .as_array()?
        .iter()
        .find(|p| p["topic"] == topic && p["partition"] == partition)
}

/// Waits until partition 0 of `topic` has `status`; returns that report.
async fn until_status(addr: SocketAddr, topic: &str, status: &str, within: Duration) -> Value {
    let mut seen = Value::Null;
    let found = tokio::time::timeout(within, async {
        loop {
            seen = lag(addr).await;
            if row(&seen, topic, 0).is_some_and(|r| r["status"] == status) {
                return seen.clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("{topic}-0 never {status}; last report:\n{seen:#}"))
}

/// Waits until the sidecar sees `topic`-0 committed at `offset`.
async fn until_committed(addr: SocketAddr, topic: &str, offset: i64) {
    eventually("the commit", Duration::from_secs(30), || async {
        row(&lag(addr).await, topic, 0).is_some_and(|r| r["committed"] == offset)
    })
    .await;
}

/// The state-set series of the partition and the group are as the report says.
async fn metrics_say(addr: SocketAddr, topic: &str, partition: &str, group: &str) {
    let (_, text) = get(addr, "/metrics").await;
    let series = |s: &str| {
        format!("mooring_partition_lag_status{{partition=\"0\",status=\"{s}\",topic=\"{topic}\"}}")
    };
    for s in ["OK", "WARN", "STALL", "STOP", "REWIND"] {
        let want = f64::from(u8::from(s == partition));
        assert_eq!(metric(&text, &series(s)), Some(want), "{s}:\n{text}");
    }
    for s in ["OK", "WARN", "ERR"] {
        let want = f64::from(u8::from(s == group));
        let name = format!("mooring_group_lag_status{{status=\"{s}\"}}");
        assert_eq!(metric(&text, &name), Some(want), "{name}:\n{text}");
    }
}

fn quick(_r: ConsumerRecord) -> std::future::Ready<Result<(), String>> {
    std::future::ready(Ok(()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_member_that_stops_with_records_waiting_is_stop() {
    let cluster = Cluster::shared();
    let topic = unique("lag-stop");
    let group = unique("lag-stop-g");
    cluster.create_topic(&topic, 1);
    cluster.produce_perf(&topic, 200, 100);
    let s = watching_sidecar(&cluster, &group, 500, STATUS).await;
    let c = consumer(&cluster, &group, &topic, &[COMMITS]);
    let _export = exporter(&c, s.addr);
    let task = run(&c, quick);
    until_committed(s.addr, &topic, 200).await;
    stop(&c, task).await; // leaves the group
    cluster.produce_perf(&topic, 300, 100);

    let report = until_status(s.addr, &topic, "STOP", Duration::from_secs(30)).await;
    assert_eq!(report["source"], "commit_log", "{report:#}");
    assert_eq!(report["group_status"], "ERR");
    let r = row(&report, &topic, 0).unwrap();
    assert_eq!(r["rule"], "commits_stopped", "{r:#}");
    assert_eq!(r["lag"], 300);
    let commits = r["commits"].as_array().unwrap();
    assert_eq!(commits.last().unwrap()["offset"], 200, "{r:#}");
    // Not stopped while a recent look-up saw it caught up: every log end kept is past it now.
    assert!(r["recent_ends"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e.as_i64().unwrap() > 200));
    assert!(
        r["reason"].as_str().unwrap().contains("no commit for"),
        "{r:#}"
    );
    metrics_say(s.addr, &topic, "STOP", "ERR").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_handler_that_stalls_is_stall_with_the_members_word_for_it() {
    let cluster = Cluster::shared();
    let topic = unique("lag-stall");
    let group = unique("lag-stall-g");
    cluster.create_topic(&topic, 1);
    cluster.produce_perf(&topic, 300, 100);
    let s = watching_sidecar(&cluster, &group, 500, STATUS).await;
    let c = consumer(
        &cluster,
        &group,
        &topic,
        &[COMMITS, ("max.poll.interval.ms", "3000")],
    );
    let _export = exporter(&c, s.addr);
    let release = Arc::new(AtomicBool::new(false));
    let held = Arc::clone(&release);
    let task = run(&c, move |r: ConsumerRecord| {
        let held = Arc::clone(&held);
        async move {
            while r.offset() == 100 && !held.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok::<(), String>(())
        }
    });

    let report = until_status(s.addr, &topic, "STALL", Duration::from_secs(30)).await;
    let r = row(&report, &topic, 0).unwrap();
    assert_eq!(r["rule"], "held_by_live_member", "{r:#}");
    assert_eq!(r["burrow_status"], "STOP", "Burrow alone: commits stopped");
    assert_eq!(r["ours"], true);
    assert_eq!(r["member_alive"], true);
    assert_eq!(r["handler_over_time"]["offset"], 100, "{r:#}");
    assert!(r["handler_over_time"]["running_seconds"].as_f64().unwrap() >= 3.0);
    assert_eq!(r["committed"], 100);
    assert!(
        r["reason"].as_str().unwrap().contains("a handler has run"),
        "{r:#}"
    );
    assert_eq!(report["group_status"], "ERR");
    metrics_say(s.addr, &topic, "STALL", "ERR").await;

    release.store(true, Ordering::Relaxed);
    until_committed(s.addr, &topic, 300).await;
    let report = until_status(s.addr, &topic, "OK", Duration::from_secs(15)).await;
    assert!(row(&report, &topic, 0).unwrap()["handler_over_time"].is_null());
    stop(&c, task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_offset_reset_backwards_is_rewind() {
    let cluster = Cluster::shared();
    let topic = unique("lag-rewind");
    let group = unique("lag-rewind-g");
    cluster.create_topic(&topic, 1);
    cluster.produce_perf(&topic, 1_000, 100);
    let s = watching_sidecar(&cluster, &group, 500, STATUS).await;
    let c = consumer(&cluster, &group, &topic, &[COMMITS]);
    let _export = exporter(&c, s.addr);
    // Slow enough that every commit leaves lag: the window never caught up.
    let task = run(&c, |r: ConsumerRecord| async move {
        let _ = r;
        tokio::time::sleep(Duration::from_millis(4)).await;
        Ok::<(), String>(())
    });
    eventually("commits with lag", Duration::from_secs(30), || async {
        row(&lag(s.addr).await, &topic, 0)
            .and_then(|r| r["commits"].as_array().map(Vec::len))
            .is_some_and(|n| n >= 5)
    })
    .await;
    stop(&c, task).await; // leaves: the group is Empty, its offsets may be reset
    let bootstrap = cluster.bootstrap();
    cluster.tool_ok(
        "ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            bootstrap,
            "--group",
            &group,
            "--topic",
            &topic,
            "--reset-offsets",
            "--to-earliest",
            "--execute",
        ],
    );
    let report = until_status(s.addr, &topic, "REWIND", Duration::from_secs(10)).await;
    let r = row(&report, &topic, 0).unwrap();
    assert_eq!(r["rule"], "offset_went_back", "{r:#}");
    let commits = r["commits"].as_array().unwrap();
    assert_eq!(commits.last().unwrap()["offset"], 0, "{r:#}");
    assert!(commits[commits.len() - 2]["offset"].as_i64().unwrap() > 0);
    assert!(r["reason"].as_str().unwrap().contains("went back"), "{r:#}");
    assert_eq!(report["group_status"], "ERR");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_consumer_slower_than_its_producer_is_warn() {
    let cluster = Cluster::shared();
    let topic = unique("lag-warn");
    let group = unique("lag-warn-g");
    cluster.create_topic(&topic, 1);
    let s = watching_sidecar(&cluster, &group, 500, DEFAULTS).await;
    let _producer = cluster.spawn_verifiable_producer(&topic, None, 400, &[]);
    let c = consumer(&cluster, &group, &topic, &[COMMITS_1S]);
    let _export = exporter(&c, s.addr);
    // At most 100 records a second against 400.
    let task = run(&c, |r: ConsumerRecord| async move {
        let _ = r;
        tokio::time::sleep(Duration::from_millis(10)).await;
        Ok::<(), String>(())
    });
    let report = until_status(s.addr, &topic, "WARN", Duration::from_secs(60)).await;
    let r = row(&report, &topic, 0).unwrap();
    assert_eq!(r["rule"], "lag_never_fell", "{r:#}");
    let commits = r["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 10, "a full window: {r:#}");
    let lags: Vec<i64> = commits.iter().map(|c| c["lag"].as_i64().unwrap()).collect();
    assert!(lags.windows(2).all(|w| w[1] >= w[0]), "{lags:?}");
    assert!(lags[0] > 0);
    assert_eq!(report["group_status"], "WARN");
    stop(&c, task).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_the_consumer_drains_stays_ok_throughout() {
    let cluster = Cluster::shared();
    let topic = unique("lag-burst");
    let group = unique("lag-burst-g");
    cluster.create_topic(&topic, 3);
    cluster.produce_perf(&topic, 300, 100);
    let s = watching_sidecar(&cluster, &group, 500, DEFAULTS).await;
    let c = consumer(&cluster, &group, &topic, &[COMMITS_1S]);
    let _export = exporter(&c, s.addr);
    let task = run(&c, quick);
    let drained = |total: i64| {
        let addr = s.addr;
        async move {
            let report = lag(addr).await;
            let rows = report["partitions"].as_array().cloned().unwrap_or_default();
            rows.len() == 3
                && rows
                    .iter()
                    .map(|r| r["committed"].as_i64().unwrap_or(0))
                    .sum::<i64>()
                    == total
        }
    };
    eventually("the first records", Duration::from_secs(30), || {
        drained(300)
    })
    .await;

    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = Arc::clone(&sampling);
        let addr = s.addr;
        tokio::spawn(async move {
            let mut seen = Vec::new();
            while sampling.load(Ordering::Relaxed) {
                seen.push(lag(addr).await);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            seen
        })
    };
    cluster.produce_perf(&topic, 30_000, 100);
    eventually("the burst drained", Duration::from_secs(60), || {
        drained(30_300)
    })
    .await;
    // Sampled 3 s more once drained: a status that turns as the last commits settle shows too.
    tokio::time::sleep(Duration::from_secs(3)).await;
    sampling.store(false, Ordering::Relaxed);
    let seen = sampler.await.unwrap();
    assert!(seen.len() > 20, "{} samples", seen.len());
    let with_lag = seen
        .iter()
        .filter(|r| {
            r["partitions"]
                .as_array()
                .is_some_and(|rows| rows.iter().any(|p| p["lag"].as_i64() > Some(0)))
        })
        .count();
    assert!(with_lag > 0, "the burst showed as lag in no sample");
    for report in &seen {
        assert_eq!(report["group_status"], "OK", "{report:#}");
    }
    stop(&c, task).await;
}
