//! Alert levels on real data from the shared broker, at small configured thresholds: lag in
//! records and in seconds (records produced while the group has no running consumer, as the
//! broker watch sees them), poll-loop stall (a handler that holds its partition), and fencing
//! (a second process takes the member's `group.instance.id`, twice). Each moves ok → warning →
//! critical and back to ok (fencing after its window), `/alerts` shows the value that tripped
//! it and `mooring_alert_level{alert}` agrees.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{alert_entry, get, get_json, level, metric, sidecar};
use mooring_consumer::processing::ConsumerRecord;
use mooring_testkit::{unique, Cluster};
use support::{consumer, eventually, exporter, ready, run, stop, watching_sidecar};

/// (level, value) of `alert` in `/alerts`, checked against the gauge.
async fn alert(addr: SocketAddr, name: &str) -> (i64, f64) {
    let body = get_json(addr, "/alerts").await;
    let l = level(&body, name);
    let (_, text) = get(addr, "/metrics").await;
    let gauge = metric(&text, &format!("mooring_alert_level{{alert=\"{name}\"}}")).unwrap();
    // The gauge is set by the same evaluation /metrics runs; a level can move between the two
    // requests only at a boundary, so compare with a second read when they differ.
    if gauge as i64 != l {
        let l2 = level(&get_json(addr, "/alerts").await, name);
        assert_eq!(
            gauge as i64, l2,
            "mooring_alert_level{{alert=\"{name}\"}} vs /alerts"
        );
    }
    (l, alert_entry(&body, name)["value"].as_f64().unwrap())
}

/// Waits for `name` to reach `level`; returns the value shown then.
async fn reaches(addr: SocketAddr, name: &str, level: i64, timeout: Duration) -> f64 {
    let deadline = Instant::now() + timeout;
    loop {
        let (l, v) = alert(addr, name).await;
        if l == level {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "{name} never reached level {level} (now {l}, value {v})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lag_alerts_follow_the_broker() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-lag");
    let group = unique("sidecar-lag-g");
    cluster.create_topic(&topic, 1);
    let s = watching_sidecar(
        &cluster,
        &group,
        200,
        "[alerts.lag_records]\nwarning = 50\ncritical = 150\n[alerts.lag_seconds]\nwarning = 3\ncritical = 6\n",
    )
    .await;
    let addr = s.addr;
    let extra = [("auto.commit.interval.ms", "200")];
    let handler = |_r: ConsumerRecord| async { Ok::<(), String>(()) };

    // The group commits 10, then has no running consumer.
    let a = consumer(&cluster, &group, &topic, &extra);
    let export = exporter(&a, addr);
    let run_a = run(&a, handler);
    cluster.produce_perf(&topic, 10, 10);
    eventually("committed 10", Duration::from_secs(30), || async {
        get_json(addr, "/debug/partitions").await["lag"][0]["lag"]["committed"] == 10
    })
    .await;
    stop(&a, run_a).await;
    export.shutdown().await;
    assert_eq!(alert(addr, "lag_records").await, (0, 0.0));
    assert_eq!(alert(addr, "lag_seconds").await.0, 0);

    // An idle stretch first: the time lag counts from when the new records arrived, not from
    // when the log end last moved.
    tokio::time::sleep(Duration::from_secs(4)).await;
    cluster.produce_perf(&topic, 100, 10);
    let v = reaches(addr, "lag_records", 1, Duration::from_secs(10)).await;
    assert_eq!(v, 100.0);
    let (level, fresh) = alert(addr, "lag_seconds").await;
    assert!(
        level == 0 && fresh < 3.0,
        "records appended a moment ago, after 4 s idle: {fresh} s"
    );
    cluster.produce_perf(&topic, 100, 10);
    let v = reaches(addr, "lag_records", 2, Duration::from_secs(10)).await;
    assert_eq!(v, 200.0);
    // Nobody consumes: the time lag grows through its levels.
    let w = reaches(addr, "lag_seconds", 1, Duration::from_secs(10)).await;
    assert!((3.0..=6.0).contains(&w), "{w}");
    let c = reaches(addr, "lag_seconds", 2, Duration::from_secs(10)).await;
    assert!(c > 6.0, "{c}");
    eprintln!("lag: records 100 warning, 200 critical; seconds {w:.1} warning, {c:.1} critical");

    // A consumer catches up: both back to ok.
    let b = consumer(&cluster, &group, &topic, &extra);
    let export = exporter(&b, addr);
    let run_b = run(&b, handler);
    let caught_up = Instant::now();
    assert_eq!(
        reaches(addr, "lag_records", 0, Duration::from_secs(30)).await,
        0.0
    );
    assert_eq!(
        reaches(addr, "lag_seconds", 0, Duration::from_secs(10)).await,
        0.0
    );
    eprintln!(
        "lag: ok again {:?} after a consumer started",
        caught_up.elapsed()
    );
    stop(&b, run_b).await;
    export.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn poll_stall_alert_follows_a_held_partition() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-stall");
    let group = unique("sidecar-stall-g");
    cluster.create_topic(&topic, 1);
    let s = sidecar("[alerts.poll_stall_seconds]\nwarning = 1\ncritical = 2.5\n").await;
    let addr = s.addr;
    let a = consumer(
        &cluster,
        &group,
        &topic,
        &[("max.poll.interval.ms", "30000")],
    );
    let export = exporter(&a, addr);
    let run_a = run(&a, |r: ConsumerRecord| async move {
        if r.offset() == 2 {
            tokio::time::sleep(Duration::from_secs(4)).await;
        }
        Ok::<(), String>(())
    });
    eventually("ready", Duration::from_secs(30), || ready(addr)).await;
    assert_eq!(alert(addr, "poll_stall_seconds").await, (0, 0.0));
    cluster.produce_perf(&topic, 5, 10);
    let w = reaches(addr, "poll_stall_seconds", 1, Duration::from_secs(20)).await;
    assert!((1.0..=2.5).contains(&w), "{w}");
    let c = reaches(addr, "poll_stall_seconds", 2, Duration::from_secs(5)).await;
    assert!(c > 2.5, "{c}");
    let back = reaches(addr, "poll_stall_seconds", 0, Duration::from_secs(10)).await;
    assert_eq!(back, 0.0);
    eprintln!("poll stall: warning at {w:.2} s, critical at {c:.2} s, ok after the handler");
    stop(&a, run_a).await;
    export.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fencing_alert_counts_fencings_in_its_window() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-fence");
    let group = unique("sidecar-fence-g");
    cluster.create_topic(&topic, 2);
    let s = sidecar("[alerts.fenced]\nwarning = 1\ncritical = 1\n\"window.ms\" = 15000\n").await;
    let addr = s.addr;
    let instance = unique("pod");
    let props = |leave: &'static str| {
        vec![
            ("group.instance.id", instance.clone()),
            ("session.timeout.ms", "1000".to_string()),
            ("mooring.fenced.policy", "retry:500".to_string()),
            ("mooring.leave.group.on.close", leave.to_string()),
        ]
    };
    let handler = |_r: ConsumerRecord| async { Ok::<(), String>(()) };
    let a_props = props("false");
    let a_extra: Vec<(&str, &str)> = a_props.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let a = consumer(&cluster, &group, &topic, &a_extra);
    let export = exporter(&a, addr);
    let run_a = run(&a, handler);
    eventually("ready", Duration::from_secs(30), || ready(addr)).await;
    assert_eq!(alert(addr, "fenced").await, (0, 0.0));

    // A second process with the same instance id: the coordinator hands it the id; A is fenced.
    let twin_props = props("true");
    let twin_extra: Vec<(&str, &str)> = twin_props.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let first_fence = Instant::now();
    let b = consumer(&cluster, &group, &topic, &twin_extra);
    let run_b = run(&b, handler);
    let v = reaches(addr, "fenced", 1, Duration::from_secs(20)).await;
    assert_eq!(v, 1.0);
    // B leaves (LeaveGroup); A's retry finds the id free and rejoins.
    stop(&b, run_b).await;
    eventually("A rejoins", Duration::from_secs(30), || ready(addr)).await;
    // Still one fencing: A's retries while B held the id were not new ones.
    assert_eq!(alert(addr, "fenced").await, (1, 1.0));
    let c = consumer(&cluster, &group, &topic, &twin_extra);
    let run_c = run(&c, handler);
    let v = reaches(addr, "fenced", 2, Duration::from_secs(20)).await;
    assert_eq!(v, 2.0);
    let second_fence = Instant::now();
    eprintln!(
        "fenced: warning at 1, critical at 2 ({:?} apart)",
        second_fence - first_fence
    );
    stop(&c, run_c).await;
    // The window (15 s) forgets the first fencing, then the second.
    let v = reaches(addr, "fenced", 1, Duration::from_secs(20)).await;
    assert_eq!(v, 1.0);
    assert!(first_fence.elapsed() >= Duration::from_secs(15));
    let v = reaches(addr, "fenced", 0, Duration::from_secs(20)).await;
    assert_eq!(v, 0.0);
    assert!(second_fence.elapsed() >= Duration::from_secs(14));
    let (_, text) = get(addr, "/metrics").await;
    assert_eq!(metric(&text, "mooring_fenced_total"), Some(2.0));
    stop(&a, run_a).await;
    export.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}
