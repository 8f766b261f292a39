//! Rebalances under load against the real broker: async handlers with random latencies while
//! members join and leave over and over (at least 20 rebalances, eager and cooperative) lose
//! nothing the broker acknowledged to the producer and handle nothing twice; and the pause rule across rebalances (a pause holds on a
//! partition that stays, a partition that moves away and comes back starts unpaused), checked with
//! the consumer's own API. The cooperative cases run under the consumer protocol too (KIP-848's
//! reconciliations are incremental).

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{consumer_for, stop, wait_until, Seen};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerError, TopicPartition};
use mooring_testkit::{unique, Cluster};
use tokio::task::JoinHandle;

const PARTITIONS: usize = 6;
/// Join + leave cycles of the second member: each is at least two rebalances.
const CYCLES: usize = 10;
/// The steady stream's rate (records a second).
const RATE: u32 = 150;

/// A latency in 1..=8 ms that looks random but is fixed per record.
fn latency(partition: i32, offset: i64) -> Duration {
    let mut x = (offset as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (partition as u64);
    x = (x ^ (x >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    Duration::from_millis(1 + x % 8)
}

/// Runs `c` with a handler that sleeps a random latency, then records the record into `seen`
/// (shared by every member: a record handled by two members is a duplicate) and counts it.
fn spawn_member(
    c: &Consumer,
    seen: &Seen,
    handled: &Arc<AtomicU64>,
) -> JoinHandle<Result<(), ConsumerError>> {
    let (c, seen, handled) = (c.clone(), seen.clone(), Arc::clone(handled));
    tokio::spawn(async move {
        c.run(move |record: ConsumerRecord| {
            let (seen, handled) = (seen.clone(), Arc::clone(&handled));
            async move {
                tokio::time::sleep(latency(record.partition(), record.offset())).await;
                seen.record(&record);
                handled.fetch_add(1, Ordering::Relaxed);
                Ok::<(), String>(())
            }
        })
        .await
    })
}

/// One member stays while a second joins, handles records, and leaves, `CYCLES` times, under a
/// steady stream. Returns (lost, duplicates, rebalances the staying member went through): lost
/// counts the records the broker acknowledged to the producer that no member handled, once the
/// staying member's commits have reached every partition's last acknowledged offset (a commit
/// never passes a record whose handler has not finished).
async fn churn(protocol: &str, strategy: &str) -> (u64, u64, i32) {
    let cluster = Cluster::shared();
    let topic = unique("churn");
    let group = unique("churn-g");
    cluster.create_topic(&topic, PARTITIONS as u32);
    let extra = [
        ("partition.assignment.strategy", strategy),
        ("heartbeat.interval.ms", "200"),
        ("mooring.concurrency", "8"),
    ];
    let seen = Seen::default();
    let anchor = consumer_for(&cluster, &group, protocol, &extra);
    anchor.subscribe([topic.clone()]).unwrap();
    let anchor_handled = Arc::new(AtomicU64::new(0));
    let anchor_run = spawn_member(&anchor, &seen, &anchor_handled);
    wait_until(
        "the first member owns every partition",
        Duration::from_secs(30),
        || anchor.assignment().len() == PARTITIONS,
    )
    .await;
    let first_generation = anchor.member_state().unwrap().generation;
    let producer = cluster.spawn_verifiable_producer(&topic, None, RATE, &[]);

    for cycle in 0..CYCLES {
        let other = consumer_for(&cluster, &group, protocol, &extra);
        other.subscribe([topic.clone()]).unwrap();
        let handled = Arc::new(AtomicU64::new(0));
        let run = spawn_member(&other, &seen, &handled);
        wait_until(
            &format!("cycle {cycle}: the partitions shared by both members"),
            Duration::from_secs(30),
            || {
                let (a, b) = (anchor.assignment().len(), other.assignment().len());
                a > 0 && b > 0 && a + b == PARTITIONS
            },
        )
        .await;
        wait_until(
            &format!("cycle {cycle}: the second member handles records"),
            Duration::from_secs(30),
            || handled.load(Ordering::Relaxed) > 0,
        )
        .await;
        // A clean leave: drain, commit, LeaveGroup (a dynamic member).
        stop(&other, run).await.unwrap();
        wait_until(
            &format!("cycle {cycle}: the first member owns every partition again"),
            Duration::from_secs(30),
            || anchor.assignment().len() == PARTITIONS,
        )
        .await;
    }
    // Generations (classic) or member epochs (consumer protocol): one more per rebalance.
    let rebalances = anchor.member_state().unwrap().generation - first_generation;
    let acked: BTreeSet<(i32, i64)> = tokio::task::spawn_blocking(move || producer.stop())
        .await
        .unwrap()
        .into_iter()
        .collect();
    assert!(!acked.is_empty(), "the producer had nothing acknowledged");
    // Where the acknowledged records end, per partition: the staying member, which owns every
    // partition again, has handled them all once its commits reach these offsets.
    let mut ends: BTreeMap<i32, i64> = BTreeMap::new();
    for &(partition, offset) in &acked {
        let end = ends.entry(partition).or_default();
        *end = (*end).max(offset + 1);
    }
    wait_until(
        &format!("the commits reach the acknowledged ends {ends:?}"),
        Duration::from_secs(60),
        || {
            ends.iter().all(|(&p, &end)| {
                anchor
                    .committed(&TopicPartition::new(&topic, p))
                    .is_some_and(|c| c >= end)
            })
        },
    )
    .await;
    stop(&anchor, anchor_run).await.unwrap();
    let handled: BTreeSet<(i32, i64)> = seen
        .offsets()
        .into_iter()
        .map(|(_, partition, offset)| (partition, offset))
        .collect();
    let lost = acked.difference(&handled).count() as u64;
    let duplicates = seen.duplicates();
    let records = cluster.end_offsets(&topic).values().sum::<i64>();
    println!(
        "{protocol} {strategy}: {CYCLES} join/leave cycles, {rebalances} rebalances (generations or member epochs), \
         {} acknowledged of {records} records in the log, {} handled, lost = {lost}, \
         duplicates = {duplicates}, first member handled {}",
        acked.len(),
        handled.len(),
        anchor_handled.load(Ordering::Relaxed)
    );
    (lost, duplicates, rebalances)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eager_churn_of_twenty_rebalances_loses_and_repeats_nothing() {
    let (lost, duplicates, rebalances) = churn("classic", "range").await;
    assert!(rebalances >= 20, "only {rebalances} rebalances");
    assert_eq!((lost, duplicates), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cooperative_churn_of_twenty_rebalances_loses_and_repeats_nothing() {
    let (lost, duplicates, rebalances) = churn("classic", "cooperative-sticky").await;
    assert!(rebalances >= 20, "only {rebalances} rebalances");
    assert_eq!((lost, duplicates), (0, 0));
}

/// The same churn under the consumer protocol (KIP-848: the broker assigns, every reconciliation
/// incremental), counted in member epochs.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn consumer_protocol_churn_of_twenty_rebalances_loses_and_repeats_nothing() {
    common::require_protocol(&Cluster::shared(), "consumer");
    let (lost, duplicates, rebalances) = churn("consumer", "").await;
    assert!(rebalances >= 20, "only {rebalances} rebalances");
    assert_eq!((lost, duplicates), (0, 0));
}

/// Cooperative rebalances: a paused partition that stays with its member stays paused (gets
/// nothing until resumed); one that moves away and comes back starts unpaused.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pause_holds_while_the_partition_stays_and_is_cleared_when_it_moves() {
    pause_rule("classic").await;
}

/// The pause rule over the consumer protocol's reconciliations.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pause_holds_while_the_partition_stays_and_is_cleared_when_it_moves_under_the_consumer_protocol(
) {
    pause_rule("consumer").await;
}

async fn pause_rule(protocol: &str) {
    let cluster = Cluster::shared();
    common::require_protocol(&cluster, protocol);
    let topic = unique("pause-rebalance");
    let group = unique("pause-rebalance-g");
    cluster.create_topic(&topic, 4);
    let extra = [
        ("partition.assignment.strategy", "cooperative-sticky"),
        ("heartbeat.interval.ms", "200"),
    ];
    let (seen_a, seen_b) = (Seen::default(), Seen::default());
    let a = consumer_for(&cluster, &group, protocol, &extra);
    a.subscribe([topic.clone()]).unwrap();
    let run_a = common::spawn_run(&a, &seen_a, Duration::ZERO);
    let all: Vec<TopicPartition> = (0..4).map(|p| TopicPartition::new(&topic, p)).collect();
    wait_until(
        "the first member owns every partition, positions known",
        Duration::from_secs(30),
        || all.iter().all(|tp| a.position(tp).is_some()),
    )
    .await;
    a.pause(all.clone()).unwrap();

    // A second member joins: half the partitions move to it, the other half stay with `a`.
    let b = consumer_for(&cluster, &group, protocol, &extra);
    b.subscribe([topic.clone()]).unwrap();
    let run_b = common::spawn_run(&b, &seen_b, Duration::ZERO);
    wait_until("two partitions each", Duration::from_secs(30), || {
        a.assignment().len() == 2 && b.assignment().len() == 2
    })
    .await;
    let kept = a.assignment();
    let moved = b.assignment();
    assert_eq!(
        a.paused(),
        kept,
        "the pause holds on the partitions that stayed"
    );
    assert!(
        b.paused().is_empty(),
        "the moved partitions arrive unpaused"
    );

    // Records in every partition: `b` handles its share, `a` nothing (its partitions are paused).
    assert_eq!(cluster.produce_verifiable(&topic, 400, 40, &[]), 400);
    let ends = cluster.end_offsets(&topic);
    let end = |tp: &TopicPartition| ends[&tp.partition];
    assert!(
        all.iter().all(|tp| end(tp) > 0),
        "records everywhere: {ends:?}"
    );
    wait_until(
        "the moved partitions consumed by the new member",
        Duration::from_secs(30),
        || {
            moved
                .iter()
                .all(|tp| seen_b.count_in(tp.partition) as i64 == end(tp))
        },
    )
    .await;
    for tp in &kept {
        assert_eq!(
            seen_a.count_in(tp.partition),
            0,
            "paused {tp} handled records"
        );
    }

    // `b` leaves: the moved partitions come back to `a`, unpaused, and are consumed there;
    // the kept ones stay paused.
    stop(&b, run_b).await.unwrap();
    wait_until(
        "every partition back with the first member",
        Duration::from_secs(30),
        || a.assignment().len() == 4,
    )
    .await;
    assert_eq!(
        a.paused(),
        kept,
        "only the partitions that never left are paused"
    );
    assert_eq!(cluster.produce_verifiable(&topic, 400, 40, &[]), 400);
    let ends = cluster.end_offsets(&topic);
    let end = |tp: &TopicPartition| ends[&tp.partition];
    wait_until(
        "the returned partitions consumed by the first member",
        Duration::from_secs(30),
        || {
            moved.iter().all(|tp| {
                (seen_a.count_in(tp.partition) + seen_b.count_in(tp.partition)) as i64 == end(tp)
            })
        },
    )
    .await;
    for tp in &moved {
        assert!(
            seen_a.count_in(tp.partition) > 0,
            "{tp} came back and was consumed"
        );
    }
    for tp in &kept {
        assert_eq!(
            seen_a.count_in(tp.partition),
            0,
            "paused {tp} handled records"
        );
        assert_eq!(a.position(tp), Some(0), "paused {tp} moved on");
    }

    a.resume(kept.clone()).unwrap();
    wait_until(
        "the kept partitions consumed after resume",
        Duration::from_secs(30),
        || {
            kept.iter()
                .all(|tp| seen_a.count_in(tp.partition) as i64 == end(tp))
        },
    )
    .await;
    stop(&a, run_a).await.unwrap();
    let duplicates = seen_a.duplicates() + seen_b.duplicates();
    let mut both = seen_a.offsets();
    both.extend(seen_b.offsets());
    let distinct = both.len();
    both.sort();
    both.dedup();
    println!(
        "pause across rebalances: kept {kept:?} paused throughout, moved {moved:?} came back \
         unpaused; {} records, {} handled by both members, duplicates = {duplicates}",
        both.len(),
        distinct - both.len()
    );
    assert_eq!(both.len(), 800);
    assert_eq!((distinct - both.len(), duplicates), (0, 0));
}
