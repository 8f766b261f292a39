//! Rebalance causes on the shared real broker under a steady stream, as a survivor's sidecar
//! names them: a librdkafka peer (a separate process) joins; a second member of ours joins and
//! leaves cleanly (`member_left`: it kept up until it left); the peer is SIGKILLed and expires
//! after its session timeout (`session_timeout`: it stayed listed in DescribeGroups while its
//! commits stood still and records waited); then our member's handler outlives
//! `max.poll.interval.ms` (`poll_interval_exceeded`). `/metrics` must count exactly those rebalances by cause with one
//! histogram sample each, `/debug/rebalances` must list them in order with phase timings and
//! the broker's view of who joined and left, and `/readyz` must be 503 during each and 200 after.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{get, get_json, metric};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{ConsumerRebalanceListener, TopicPartition};
use mooring_testkit::{unique, Cluster};
use support::{
    background_producer, consumer, eventually, exporter, first_join_counted, librdkafka_peer,
    props, ready, rebalances, run, stop, total_rebalances, watching_sidecar, OwnRuntime,
    ReadySampler,
};

/// An application listener with real work in it (say, warming a cache): every rebalance lasts
/// at least this long, so readiness has a window to be seen false in.
struct Warming;

impl ConsumerRebalanceListener for Warming {
    async fn assigned(&self, _partitions: Vec<TopicPartition>) {
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// Each owner's partitions and the sum of their committed offsets, as the broker watch last saw
/// them (`/debug/partitions`; owners from the last Stable DescribeGroups).
async fn watched_commits(addr: SocketAddr) -> BTreeMap<String, (BTreeSet<i64>, i64)> {
    let body = get_json(addr, "/debug/partitions").await;
    let mut owners: BTreeMap<String, (BTreeSet<i64>, i64)> = BTreeMap::new();
    for entry in body["lag"].as_array().into_iter().flatten() {
        let Some(owner) = entry["lag"]["owner"].as_str() else {
            continue;
        };
        let slot = owners.entry(owner.to_owned()).or_default();
        slot.0.insert(entry["partition"].as_i64().unwrap_or(-1));
        slot.1 += entry["lag"]["committed"].as_i64().unwrap_or(0);
    }
    owners
}

/// Waits until the broker watch sees `owners` members owning partitions and each one's commits
/// move while its partitions stay the same: every member consumes and commits, and the watch has
/// seen it do so.
async fn every_owner_commits(addr: SocketAddr, owners: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut first: Option<BTreeMap<String, (BTreeSet<i64>, i64)>> = None;
    loop {
        let now = watched_commits(addr).await;
        let same_owners = first.as_ref().is_some_and(|f| {
            f.len() == now.len()
                && f.iter()
                    .all(|(o, (parts, _))| now.get(o).is_some_and(|n| n.0 == *parts))
        });
        if now.len() == owners && same_owners {
            let before = first.as_ref().expect("same owners as a first look");
            if before.iter().all(|(o, (_, c))| now[o].1 > *c) {
                return;
            }
        } else {
            first = (now.len() == owners).then_some(now.clone());
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: the watch saw {now:?} (first {first:?})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sigkilled_peer_and_a_missed_poll_interval_are_counted_with_their_causes() {
    let test_started = Instant::now();
    let cluster = Cluster::shared();
    let topic = unique("sidecar-causes");
    let group = unique("sidecar-causes-g");
    cluster.create_topic(&topic, 4);
    let s = watching_sidecar(&cluster, &group, 250, "\"causes.stall.ms\" = 1500\n").await;
    let addr = s.addr;
    // Records keep arriving all along, so a member that stops working leaves them waiting.
    let _producer = background_producer(&cluster, &topic, 200, 60);

    let slow = Arc::new(AtomicBool::new(false));
    let a = consumer(
        &cluster,
        &group,
        &topic,
        &[
            ("max.poll.interval.ms", "2500"),
            ("auto.commit.interval.ms", "200"),
            ("mooring.revoke.timeout.ms", "10000"),
        ],
    );
    a.set_rebalance_listener(Warming);
    let export = exporter(&a, addr);
    let flag = Arc::clone(&slow);
    let run_a = run(&a, move |_r: ConsumerRecord| {
        let slow = flag.swap(false, Ordering::SeqCst);
        async move {
            let pause = if slow { 5000 } else { 2 };
            tokio::time::sleep(Duration::from_millis(pause)).await;
            Ok::<(), String>(())
        }
    });
    first_join_counted(addr).await;

    // 1. The peer joins.
    let sampler = ReadySampler::start(addr);
    let join_started = Instant::now();
    let mut peer = librdkafka_peer(&cluster, &group, &topic, 3000);
    eventually(
        "the peer's join is counted",
        Duration::from_secs(30),
        || async { rebalances(addr, "member_joined").await == 2.0 && ready(addr).await },
    )
    .await;
    let join_took = join_started.elapsed();
    let (not_ready, last, span) = sampler.finish().await;
    assert!(not_ready > 0, "/readyz was never 503 during the join");
    assert_eq!(last, 200);
    eprintln!("join: counted {join_took:?} after the peer started; not ready for {span:?}");
    // The peer consumes and commits, and the watch sees its offsets move (and ours).
    eventually("the peer consumes", Duration::from_secs(20), || async {
        peer.lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("\"consumed\"") && !l.contains("\"total\":0"))
    })
    .await;
    every_owner_commits(addr, 2, "the watch to see both members commit").await;

    // 2. A third member (ours) joins and leaves cleanly under the same load: it kept up, so
    //    its departure is `member_left`, not a timeout.
    let b = consumer(
        &cluster,
        &group,
        &topic,
        &[("auto.commit.interval.ms", "200")],
    );
    let run_b = run(&b, |_r: ConsumerRecord| async {
        tokio::time::sleep(Duration::from_millis(2)).await;
        Ok::<(), String>(())
    });
    eventually(
        "the third member's join is counted",
        Duration::from_secs(30),
        || async { rebalances(addr, "member_joined").await == 3.0 && ready(addr).await },
    )
    .await;
    // It keeps up: the watch sees its commits move, as everyone's.
    every_owner_commits(addr, 3, "the watch to see all three members commit").await;
    let sampler = ReadySampler::start(addr);
    let left = Instant::now();
    stop(&b, run_b).await;
    eventually(
        "the clean leave is counted",
        Duration::from_secs(30),
        || async {
            let (_, text) = get(addr, "/metrics").await;
            total_rebalances(&text) == 4.0 && ready(addr).await
        },
    )
    .await;
    assert_eq!(
        rebalances(addr, "member_left").await,
        1.0,
        "{:#}",
        get_json(addr, "/debug/rebalances").await
    );
    let (not_ready, last, span) = sampler.finish().await;
    assert!(not_ready > 0, "/readyz was never 503 during the leave");
    assert_eq!(last, 200);
    eprintln!(
        "clean leave: counted {:?} after the stop began; not ready for {span:?}",
        left.elapsed()
    );

    // 3. SIGKILL: no LeaveGroup; the coordinator expires the session (3 s) and rebalances.
    let sampler = ReadySampler::start(addr);
    let killed = Instant::now();
    peer.kill();
    eventually(
        "the rebalance after the kill is counted",
        Duration::from_secs(30),
        || async {
            let (_, text) = get(addr, "/metrics").await;
            total_rebalances(&text) == 5.0 && ready(addr).await
        },
    )
    .await;
    assert_eq!(
        rebalances(addr, "session_timeout").await,
        1.0,
        "{:#}\n{:#}",
        get_json(addr, "/debug/rebalances").await,
        get_json(addr, "/debug/group").await
    );
    let kill_took = killed.elapsed();
    let (not_ready, last, span) = sampler.finish().await;
    assert!(
        not_ready > 0,
        "/readyz was never 503 during the session-timeout rebalance"
    );
    assert_eq!(last, 200);
    assert!(
        kill_took >= Duration::from_millis(2500),
        "the coordinator waits for the session timeout: {kill_took:?}"
    );
    eprintln!("sigkill: counted {kill_took:?} after the kill; not ready for {span:?}");
    assert_eq!(rebalances(addr, "member_left").await, 1.0);

    // 4. Our own handler outlives max.poll.interval.ms (2.5 s): the member rejoins.
    let sampler = ReadySampler::start(addr);
    let slowed = Instant::now();
    slow.store(true, Ordering::SeqCst);
    eventually(
        "the poll-interval rebalance is counted",
        Duration::from_secs(30),
        || async { rebalances(addr, "poll_interval_exceeded").await == 1.0 && ready(addr).await },
    )
    .await;
    let poll_took = slowed.elapsed();
    let (not_ready, last, span) = sampler.finish().await;
    assert!(
        not_ready > 0,
        "/readyz was never 503 during the poll-interval rebalance"
    );
    assert_eq!(last, 200);
    eprintln!("poll interval: counted {poll_took:?} after the slow record; not ready for {span:?}");

    // Exactly those six, one histogram sample each. The wait checks an absence (no seventh
    // rebalance counted late), so it is a fixed time, not a condition.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let (_, text) = get(addr, "/metrics").await;
    assert_eq!(
        total_rebalances(&text),
        6.0,
        "exactly six rebalances:\n{text}"
    );
    assert_eq!(metric(&text, "mooring_rebalances_failed_total"), Some(0.0));
    assert_eq!(
        metric(&text, "mooring_rebalance_duration_seconds_count"),
        Some(6.0)
    );
    assert_eq!(
        metric(&text, "mooring_partitions_assigned_duration_seconds_count"),
        Some(6.0)
    );
    assert_eq!(
        metric(&text, "mooring_join_duration_seconds_count"),
        Some(6.0)
    );
    assert!(metric(&text, "mooring_handler_duration_seconds_count").unwrap() > 10.0);

    let r = get_json(addr, "/debug/rebalances").await;
    let list = r["rebalances"].as_array().unwrap();
    let causes: Vec<&str> = list.iter().map(|x| x["cause"].as_str().unwrap()).collect();
    assert_eq!(
        causes,
        [
            "member_joined",
            "member_joined",
            "member_joined",
            "member_left",
            "session_timeout",
            "poll_interval_exceeded"
        ],
        "{r:#}"
    );
    let bases: Vec<&str> = list
        .iter()
        .map(|x| x["cause_basis"].as_str().unwrap())
        .collect();
    assert_eq!(
        bases,
        [
            "member",
            "broker_view",
            "broker_view",
            "broker_view",
            "broker_view",
            "member"
        ]
    );
    for joined in [1, 2] {
        assert_eq!(
            list[joined]["members_joined"].as_array().unwrap().len(),
            1,
            "{r:#}"
        );
    }
    let clean = &list[3]["members_left"][0];
    eprintln!("the member that left cleanly as the watch saw it: {clean}");
    assert!(clean["stalled_seconds"].as_f64().unwrap() < 1.5, "{clean}");
    let departed = &list[4]["members_left"][0];
    eprintln!("the killed peer as the watch saw it: {departed}");
    assert!(
        departed["stalled_seconds"].as_f64().unwrap() >= 1.5,
        "the dead peer's commits stood still: {departed}"
    );
    let mut previous_end = 0;
    for x in list {
        let total = x["total_seconds"].as_f64().unwrap();
        let phases = &x["phases"];
        assert!(total >= 0.3, "the listener's 300 ms are in it: {x}");
        assert!(phases["join_seconds"].as_f64().unwrap() > 0.0, "{x}");
        assert!(phases["callbacks_seconds"].as_f64().unwrap() >= 0.3, "{x}");
        let started = x["started_ms"].as_u64().unwrap();
        let ended = x["ended_ms"].as_u64().unwrap();
        assert!(previous_end <= started && started <= ended, "in order: {x}");
        previous_end = ended;
        eprintln!(
            "rebalance {} {:<24} total {:.3} s (revoke {:.3}, join {:.3}, sync {:.3}, callbacks {:.3})",
            x["seq"],
            x["cause"].as_str().unwrap(),
            total,
            phases["revoke_seconds"].as_f64().unwrap(),
            phases["join_seconds"].as_f64().unwrap(),
            phases["sync_seconds"].as_f64().unwrap(),
            phases["callbacks_seconds"].as_f64().unwrap(),
        );
    }
    // The poll-interval rebalance waited for the slow handler in its revoke.
    assert!(
        list[5]["total_seconds"].as_f64().unwrap() >= 2.0,
        "{:#}",
        list[5]
    );

    stop(&a, run_a).await;
    assert_eq!(export.shutdown().await, 0);
    s.shutdown().await;
    cluster.delete_topic(&topic);
    eprintln!("test took {:?}", test_started.elapsed());
}

/// How many members the broker watch's last DescribeGroups listed.
async fn broker_members(addr: SocketAddr) -> Option<usize> {
    let group = get_json(addr, "/debug/group").await;
    group["broker_view"]["members"].as_array().map(Vec::len)
}

/// The member's own session expiry: its runtime is blocked (heartbeats stop) for longer than
/// `session.timeout.ms`; when it runs again, the coordinator answers UNKNOWN_MEMBER_ID, the
/// member loses its partitions and rejoins. The member itself reports `session_timeout`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[allow(clippy::await_holding_lock)] // the test holds the lock the consumer's handler waits on
async fn the_members_own_session_expiry_is_a_session_timeout() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-own-expiry");
    let group = unique("sidecar-own-expiry-g");
    cluster.create_topic(&topic, 2);
    let s = watching_sidecar(&cluster, &group, 250, "").await;
    let addr = s.addr;
    let props = props(&cluster, &group, &[("session.timeout.ms", "1500")]);
    let own = OwnRuntime::start(props, &topic);
    let export = exporter(&own.consumer, addr);
    eventually("ready", Duration::from_secs(30), || ready(addr)).await;

    eventually(
        "the broker watch lists the member",
        Duration::from_secs(30),
        || async { broker_members(addr).await == Some(1) },
    )
    .await;
    let (held, producer) = own.block(&topic).await;
    // No heartbeat for longer than the session: the coordinator expires the member, and the
    // broker watch sees the group without it.
    eventually(
        "the coordinator to expire the blocked member",
        Duration::from_secs(30),
        || async { broker_members(addr).await == Some(0) },
    )
    .await;
    assert_eq!(rebalances(addr, "session_timeout").await, 0.0);
    let sampler = ReadySampler::start(addr);
    let released = Instant::now();
    drop(held);
    eventually(
        "the expiry rebalance is counted",
        Duration::from_secs(30),
        || async { rebalances(addr, "session_timeout").await == 1.0 && ready(addr).await },
    )
    .await;
    let took = released.elapsed();
    let (not_ready, last, span) = sampler.finish().await;
    assert!(
        not_ready > 0,
        "/readyz was never 503 while the member rejoined"
    );
    assert_eq!(last, 200);
    producer.join().unwrap();

    let (_, text) = get(addr, "/metrics").await;
    assert_eq!(total_rebalances(&text), 2.0, "{text}");
    assert_eq!(
        metric(&text, "mooring_partitions_lost_duration_seconds_count"),
        Some(1.0),
        "the expired member lost its partitions (no commit possible)"
    );
    let r = get_json(addr, "/debug/rebalances").await;
    let last_rebalance = r["rebalances"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last_rebalance["cause"], "session_timeout", "{r:#}");
    assert_eq!(last_rebalance["cause_basis"], "member", "{r:#}");
    assert_eq!(last_rebalance["lost"].as_array().unwrap().len(), 2, "{r:#}");
    eprintln!(
        "own expiry: counted {took:?} after the runtime ran again; not ready for {span:?}; rebalance took {:.3} s",
        last_rebalance["total_seconds"].as_f64().unwrap()
    );

    own.stop().await;
    export.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}
