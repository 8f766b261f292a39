//! Two consumers in one group against the real broker: everything is handled once across the
//! rebalance, with the eager protocol (range: everything revoked and reassigned) and the
//! cooperative one (cooperative-sticky: only moving partitions are revoked, and the partitions
//! that stay keep being consumed while the group rebalances), and the consumer protocol's
//! reconciliation (incremental too: the same holds).

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_consumer::{ConsumerEvent, GroupEventKind};

use common::{consumer_for, spawn_run, stop, wait_until, Call, Calls, Seen};
use mooring_consumer::TopicPartition;
use mooring_testkit::{unique, Cluster};

const PARTITIONS: i32 = 6;
const RECORDS: u64 = 3000;

struct Outcome {
    seen: Seen,
    first: Calls,
    second: Calls,
    /// The first member's rebalance window when the second joined.
    rebalance_started: tokio::time::Instant,
    rebalance_done: tokio::time::Instant,
}

/// Starts one consumer, lets it consume a while, starts a second in the same group, and waits
/// until every record is handled. Both record into one `Seen`, so a record handled by both
/// counts as a duplicate.
async fn two_members(protocol: &str, strategy: &str) -> Outcome {
    let cluster = Cluster::shared();
    let topic = unique("rebalance");
    let group = unique("rebalance-g");
    cluster.create_topic(&topic, PARTITIONS as u32);
    assert_eq!(
        cluster.produce_verifiable(&topic, RECORDS, 30, &[]),
        RECORDS
    );

    let extra = [
        ("partition.assignment.strategy", strategy),
        ("mooring.concurrency", "6"),
    ];
    // 4 ms per record, one record per partition at a time: about 2 s per partition's share.
    let delay = Duration::from_millis(4);
    let seen = Seen::default();
    let a = consumer_for(&cluster, &group, protocol, &extra);
    let timeline = record_rebalances(&a);
    let first = Calls::default();
    a.set_rebalance_listener(first.clone());
    a.subscribe([topic.clone()]).unwrap();
    let run_a = spawn_run(&a, &seen, delay);
    wait_until(
        "the first member handles records",
        Duration::from_secs(30),
        || seen.distinct() >= 200,
    )
    .await;
    // One assignment so far (the consumer protocol may first reconcile an empty target).
    let so_far = first.all();
    assert!(
        so_far.iter().all(|c| matches!(c, Call::Assigned(_)))
            && so_far
                .iter()
                .filter(|c| matches!(c, Call::Assigned(p) if !p.is_empty()))
                .count()
                == 1,
        "one assignment so far: {so_far:?}"
    );

    let b = consumer_for(&cluster, &group, protocol, &extra);
    let second = Calls::default();
    b.set_rebalance_listener(second.clone());
    b.subscribe([topic.clone()]).unwrap();
    let rebalance_started = tokio::time::Instant::now();
    let run_b = spawn_run(&b, &seen, delay);
    wait_until(
        "the second member is assigned",
        Duration::from_secs(30),
        || {
            second
                .all()
                .iter()
                .any(|c| matches!(c, Call::Assigned(p) if !p.is_empty()))
        },
    )
    .await;
    // The first member's rebalance, from its start to its completion (cooperative: both rounds).
    let rebalance_done = tokio::time::Instant::now();
    let marks = timeline.lock().unwrap().clone();
    let started = marks
        .iter()
        .find(|(at, started)| *started && *at >= rebalance_started)
        .map(|(at, _)| *at)
        .expect("the first member saw the rebalance start");
    let done = marks
        .iter()
        .filter(|(at, started)| !*started && *at <= rebalance_done)
        .map(|(at, _)| *at)
        .next_back()
        .expect("the first member saw the rebalance complete");
    let (rebalance_started, rebalance_done) = (started, done);
    wait_until("every record handled", Duration::from_secs(60), || {
        seen.distinct() as u64 >= RECORDS
    })
    .await;
    stop(&a, run_a).await.unwrap();
    stop(&b, run_b).await.unwrap();
    Outcome {
        seen,
        first,
        second,
        rebalance_started,
        rebalance_done,
    }
}

/// (when, started?) of the consumer's RebalanceStarted / RebalanceCompleted events.
fn record_rebalances(
    consumer: &mooring_consumer::Consumer,
) -> Arc<Mutex<Vec<(tokio::time::Instant, bool)>>> {
    let marks = Arc::new(Mutex::new(Vec::new()));
    let mut events = consumer.events().unwrap();
    let out = Arc::clone(&marks);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let mark = match event {
                ConsumerEvent::Group(e) => match e.kind {
                    GroupEventKind::RebalanceStarted { .. } => Some(true),
                    GroupEventKind::RebalanceCompleted { .. } => Some(false),
                    _ => None,
                },
                _ => None,
            };
            if let Some(started) = mark {
                out.lock()
                    .unwrap()
                    .push((tokio::time::Instant::now(), started));
            }
        }
    });
    marks
}

fn report(strategy: &str, o: &Outcome) -> (u64, u64) {
    let lost = RECORDS - o.seen.distinct() as u64;
    let duplicates = o.seen.duplicates();
    println!("{strategy}: lost = {lost}, duplicates = {duplicates}");
    println!("{strategy}: first member calls {:?}", o.first.all());
    println!("{strategy}: second member calls {:?}", o.second.all());
    (lost, duplicates)
}

/// The first non-empty assignment: the first member's whole topic, before the second joins.
fn all_partitions(calls: &[Call]) -> Vec<TopicPartition> {
    match calls
        .iter()
        .find(|c| !matches!(c, Call::Assigned(p) if p.is_empty()))
    {
        Some(Call::Assigned(p)) => p.clone(),
        other => panic!("the first calls should be an assignment: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eager_two_members_consume_everything_once() {
    let o = two_members("classic", "range").await;
    assert_eq!(report("range", &o), (0, 0));
    let calls = o.first.all();
    let everything = all_partitions(&calls);
    assert_eq!(everything.len(), PARTITIONS as usize);
    // Eager: the first member gave up everything, then got half back.
    assert!(
        calls.contains(&Call::Revoked(everything.clone())),
        "eager revokes everything: {calls:?}"
    );
    assert!(!calls.iter().any(|c| matches!(c, Call::Lost(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cooperative_two_members_consume_everything_once_and_kept_partitions_keep_flowing() {
    incremental_two_members("classic", "cooperative-sticky").await;
}

/// The consumer protocol's reconciliation, incremental as a cooperative rebalance: the same holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn consumer_protocol_two_members_consume_everything_once_and_kept_partitions_keep_flowing() {
    common::require_protocol(&Cluster::shared(), "consumer");
    incremental_two_members("consumer", "").await;
}

async fn incremental_two_members(protocol: &str, strategy: &str) {
    let o = two_members(protocol, strategy).await;
    assert_eq!(report(protocol, &o), (0, 0));
    let calls = o.first.all();
    let everything = all_partitions(&calls);
    assert_eq!(everything.len(), PARTITIONS as usize);
    // Revokes up to the second member's assignment (later ones come from shutting down).
    let revoked: Vec<TopicPartition> = o
        .first
        .timed()
        .into_iter()
        .filter(|(at, _)| *at <= o.rebalance_done)
        .filter_map(|(_, c)| match c {
            Call::Revoked(p) => Some(p),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(
        revoked.len(),
        PARTITIONS as usize / 2,
        "cooperative revokes only what moves: {calls:?}"
    );
    assert!(!calls.iter().any(|c| matches!(c, Call::Lost(_))));
    let kept: Vec<i32> = everything
        .iter()
        .filter(|tp| !revoked.contains(tp))
        .map(|tp| tp.partition)
        .collect();
    // While the group rebalanced (from the first member's RebalanceStarted to its last
    // RebalanceCompleted), it kept handling records of the partitions it kept.
    let during = o
        .seen
        .handled_between(&kept, o.rebalance_started, o.rebalance_done);
    println!(
        "{protocol}: {during} records of kept partitions {kept:?} handled during the rebalance ({:?})",
        o.rebalance_done - o.rebalance_started
    );
    assert!(during > 0, "kept partitions stalled during the rebalance");
}
