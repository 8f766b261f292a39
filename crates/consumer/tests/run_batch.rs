//! `Consumer::run_batch` against the real broker (`scripts/kafka start`): every record produced
//! (counted against the producer's acknowledgements) reaches the batch handler once, each
//! partition's batches in offset order and contiguous, within `mooring.batch.max.records`, and
//! the group's committed offsets end at the log's end; a batch failing under policy `stop` ends
//! `run` and leaves the partition's committed offset at the batch's first offset.
//! Run with `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-consumer --test run_batch`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{consumer, produce_acked, stop, wait_until};
use mooring_consumer::processing::Batch;
use mooring_consumer::{ConsumerError, TopicPartition};
use mooring_testkit::{unique, Cluster};

/// Every batch the handler was called with: partition and offsets, in call order.
type Calls = Arc<Mutex<Vec<(i32, Vec<i64>)>>>;

fn offsets(batch: &Batch) -> Vec<i64> {
    batch.iter().map(|r| r.offset()).collect()
}

/// Per partition, every offset handed out, in call order.
fn per_partition(calls: &Calls) -> BTreeMap<i32, Vec<i64>> {
    let mut all: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for (p, offsets) in calls.lock().unwrap().iter() {
        all.entry(*p).or_default().extend(offsets);
    }
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_record_once_in_contiguous_batches_and_the_commits_reach_the_end() {
    let cluster = Cluster::shared();
    let topic = unique("run-batch");
    let group = unique("run-batch-g");
    cluster.create_topic(&topic, 4);
    let acked = produce_acked(&cluster, &topic, 3000, 40);
    let produced: usize = acked.values().map(|o| o.len()).sum();
    assert_eq!(produced, 3000);

    let c = consumer(
        &cluster,
        &group,
        &[
            ("mooring.batch.max.records", "100"),
            ("mooring.concurrency", "2"),
        ],
    );
    c.subscribe([topic.clone()]).unwrap();
    let calls: Calls = Arc::default();
    let seen = Arc::clone(&calls);
    let run = {
        let c = c.clone();
        tokio::spawn(async move {
            c.run_batch(move |batch: Batch| {
                let seen = Arc::clone(&seen);
                async move {
                    let p = batch.partition().partition;
                    assert_eq!(batch.partition().topic, batch.records()[0].topic());
                    seen.lock().unwrap().push((p, offsets(&batch)));
                    Ok::<(), String>(())
                }
            })
            .await
        })
    };
    wait_until("3000 records handled", Duration::from_secs(60), || {
        calls
            .lock()
            .unwrap()
            .iter()
            .map(|(_, o)| o.len())
            .sum::<usize>()
            >= 3000
    })
    .await;
    stop(&c, run).await.unwrap();

    let calls_now = calls.lock().unwrap().clone();
    let largest = calls_now.iter().map(|(_, o)| o.len()).max().unwrap_or(0);
    println!(
        "{} batches, largest {largest}, {} records",
        calls_now.len(),
        calls_now.iter().map(|(_, o)| o.len()).sum::<usize>()
    );
    assert!(largest <= 100, "a batch of {largest} records past the cap");
    for (p, offsets) in &calls_now {
        assert!(
            offsets.windows(2).all(|w| w[1] == w[0] + 1),
            "partition {p}: a batch with a gap (no compaction, no transactions here): {offsets:?}"
        );
    }
    // Each partition: exactly the acknowledged offsets, once each, in order.
    let handled = per_partition(&calls);
    for (p, want) in &acked {
        let want: Vec<i64> = want.iter().copied().collect();
        assert_eq!(handled.get(p), Some(&want), "partition {p}");
    }
    let ends = cluster.end_offsets(&topic);
    let committed = cluster.committed_offsets(&group, &topic);
    for (p, end) in &ends {
        assert_eq!(
            committed.get(p),
            Some(&Some(*end)),
            "partition {p} committed"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_failing_under_stop_leaves_the_commit_at_its_first_offset() {
    let cluster = Cluster::shared();
    let topic = unique("run-batch-stop");
    let group = unique("run-batch-stop-g");
    cluster.create_topic(&topic, 2);
    let acked = produce_acked(&cluster, &topic, 600, 20);
    let in_zero = acked.get(&0).map_or(0, |o| o.len()) as i64;
    assert!(in_zero >= 100, "partition 0 has {in_zero} records");
    // The batch holding this offset of partition 0 fails, whatever its bounds.
    let bad = in_zero / 2;

    let c = consumer(
        &cluster,
        &group,
        &[
            ("mooring.batch.max.records", "40"),
            ("mooring.failure.policy", "stop"),
        ],
    );
    c.subscribe([topic.clone()]).unwrap();
    let calls: Calls = Arc::default();
    let seen = Arc::clone(&calls);
    let run = {
        let c = c.clone();
        tokio::spawn(async move {
            c.run_batch(move |batch: Batch| {
                let seen = Arc::clone(&seen);
                async move {
                    let p = batch.partition().partition;
                    seen.lock().unwrap().push((p, offsets(&batch)));
                    if p == 0 && batch.first_offset() <= bad && bad <= batch.last_offset() {
                        return Err(format!(
                            "cannot load {}..={}",
                            batch.first_offset(),
                            batch.last_offset()
                        ));
                    }
                    Ok(())
                }
            })
            .await
        })
    };
    let result = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("run ends by itself")
        .unwrap();
    let failing = calls
        .lock()
        .unwrap()
        .iter()
        .find(|(p, o)| *p == 0 && o.contains(&bad))
        .map(|(_, o)| o.clone())
        .expect("the failing batch was handed out");
    let first = failing[0];
    match &result {
        Err(ConsumerError::HandlerFailed(failure)) => {
            assert_eq!(failure.partition, TopicPartition::new(&topic, 0));
            assert_eq!(failure.offset, first, "the failing batch's first offset");
            assert_eq!(failure.attempts, 1);
        }
        other => panic!("expected HandlerFailed, got {other:?}"),
    }
    // Nothing after the failing batch was handed out for partition 0, and no batch twice.
    let zero = per_partition(&calls).remove(&0).unwrap_or_default();
    assert_eq!(zero, (0..=failing[failing.len() - 1]).collect::<Vec<_>>());
    let committed = cluster.committed_offsets(&group, &topic);
    assert_eq!(
        committed.get(&0),
        Some(&Some(first)),
        "partition 0's commit stops at the failed batch ({failing:?})"
    );
}
