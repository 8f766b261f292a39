//! One partition's fetch error stays that partition's (real broker): a consumer reads two topics
//! led by the one broker while a steady producer writes to each; one topic is deleted midway. The
//! other keeps its throughput (its partitions are fetched on, the broker is not backed off), none
//! of its acknowledged records is lost, and the deletion reaches the application as a
//! `TopicUnavailable` event. With a manual assignment the deleted topic's partitions stay assigned,
//! are not fetched, and the event says when the topic is looked up again.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{consumer, stop, wait_until};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerError, ConsumerEvent, TopicPartition};
use mooring_testkit::{unique, Cluster};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// Records a second to each topic.
const RATE: u32 = 200;
const PARTITIONS: u32 = 3;
/// The window measured before and after the deletion.
const WINDOW: Duration = Duration::from_secs(10);

/// When a record was handled, and its topic, partition and offset.
type Delivery = (Instant, String, i32, i64);

/// Every delivery.
#[derive(Debug, Clone, Default)]
struct Deliveries {
    log: Arc<Mutex<Vec<Delivery>>>,
}

impl Deliveries {
    fn record(&self, record: &ConsumerRecord) {
        self.log.lock().unwrap().push((
            Instant::now(),
            record.topic().to_owned(),
            record.partition(),
            record.offset(),
        ));
    }

    fn count(&self, topic: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, t, _, _)| t == topic)
            .count()
    }

    /// Deliveries of `topic` in each whole second from `from`, for `seconds` seconds.
    fn per_second(&self, topic: &str, from: Instant, seconds: u64) -> Vec<usize> {
        let mut counts = vec![0; usize::try_from(seconds).unwrap()];
        for (at, t, _, _) in self.log.lock().unwrap().iter() {
            if t != topic || *at < from {
                continue;
            }
            let second = usize::try_from(at.duration_since(from).as_secs()).unwrap();
            if let Some(c) = counts.get_mut(second) {
                *c += 1;
            }
        }
        counts
    }

    /// (partition, offset) of `topic` → deliveries.
    fn offsets(&self, topic: &str) -> BTreeMap<(i32, i64), usize> {
        let mut out = BTreeMap::new();
        for (_, t, p, o) in self.log.lock().unwrap().iter() {
            if t == topic {
                *out.entry((*p, *o)).or_insert(0) += 1;
            }
        }
        out
    }

    fn spawn_run(&self, consumer: &Consumer) -> JoinHandle<Result<(), ConsumerError>> {
        let consumer = consumer.clone();
        let deliveries = self.clone();
        tokio::spawn(async move {
            consumer
                .run(move |record: ConsumerRecord| {
                    deliveries.record(&record);
                    async { Ok::<(), String>(()) }
                })
                .await
        })
    }
}

/// A `TopicUnavailable` event's topic, partitions and recheck interval.
type Unavailable = (String, Vec<TopicPartition>, Duration);

/// The `TopicUnavailable` events and the `FetchError`s seen so far.
#[derive(Debug, Clone, Default)]
struct Events {
    unavailable: Arc<Mutex<Vec<Unavailable>>>,
    fetch_errors: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Events {
    fn unavailable_topics(&self) -> Vec<String> {
        self.unavailable
            .lock()
            .unwrap()
            .iter()
            .map(|(t, _, _)| t.clone())
            .collect()
    }

    fn watch(consumer: &Consumer) -> Events {
        let events = Events::default();
        let mut rx = consumer.events().unwrap();
        let out = events.clone();
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                match event {
                    ConsumerEvent::TopicUnavailable {
                        topic,
                        partitions,
                        recheck_in,
                        ..
                    } => out
                        .unavailable
                        .lock()
                        .unwrap()
                        .push((topic, partitions, recheck_in)),
                    ConsumerEvent::FetchError {
                        partition, error, ..
                    } => out.fetch_errors.lock().unwrap().push((
                        Instant::now(),
                        format!(
                            "{}: {error}",
                            partition.map(|p| p.to_string()).unwrap_or_default()
                        ),
                    )),
                    _ => {}
                }
            }
        });
        events
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleting_one_topic_leaves_the_other_flowing_and_is_reported() {
    let cluster = Cluster::shared();
    let kept = unique("fetch-kept");
    let doomed = unique("fetch-doomed");
    let group = unique("fetch-errors-g");
    cluster.create_topic(&kept, PARTITIONS);
    cluster.create_topic(&doomed, PARTITIONS);
    // Cooperative: the rebalance that follows the deletion revokes only the deleted topic's
    // partitions, so what is measured is the fetcher, not a stop-the-world rebalance.
    let c = consumer(
        &cluster,
        &group,
        &[("partition.assignment.strategy", "cooperative-sticky")],
    );
    let events = Events::watch(&c);
    c.subscribe([kept.clone(), doomed.clone()]).unwrap();
    let deliveries = Deliveries::default();
    let run = deliveries.spawn_run(&c);
    let kept_producer = cluster.spawn_verifiable_producer(&kept, None, RATE, &[]);
    let doomed_producer = cluster.spawn_verifiable_producer(&doomed, None, RATE, &[]);
    wait_until("both topics consumed", Duration::from_secs(60), || {
        deliveries.count(&kept) > 0 && deliveries.count(&doomed) > 0
    })
    .await;

    // Past the start (the producers' first second, the consumer catching up), then the rate
    // before: a whole window of steady consumption.
    let warm = deliveries.count(&kept) + 3 * RATE as usize;
    wait_until(
        "three seconds of the kept topic",
        Duration::from_secs(60),
        || deliveries.count(&kept) >= warm,
    )
    .await;
    let before_from = Instant::now();
    tokio::time::sleep(WINDOW).await;
    let before = deliveries.per_second(&kept, before_from, WINDOW.as_secs());
    let before_rate = before.iter().sum::<usize>() as f64 / WINDOW.as_secs_f64();

    // The doomed topic's producer stops first: the broker creates topics on a producer's
    // metadata request, and would bring it back.
    let _ = doomed_producer.stop();
    let deleted_at = Instant::now();
    cluster.delete_topic(&doomed);
    tokio::time::sleep(WINDOW).await;
    let after = deliveries.per_second(&kept, deleted_at, WINDOW.as_secs());
    let fetch_errors: Vec<String> = events
        .fetch_errors
        .lock()
        .unwrap()
        .iter()
        .filter(|(at, _)| *at >= deleted_at)
        .map(|(at, e)| format!("+{:?} {e}", at.duration_since(deleted_at)))
        .collect();
    eprintln!(
        "{kept}: per second before the deletion {before:?} ({before_rate:.0}/s), after {after:?}"
    );
    eprintln!(
        "fetch errors after the deletion ({}): {:?}",
        fetch_errors.len(),
        &fetch_errors[..fetch_errors.len().min(40)]
    );

    // The group revokes the deleted topic's partitions after the metadata change.
    wait_until(
        "the deleted topic's partitions revoked",
        Duration::from_secs(30),
        || c.assignment().iter().all(|tp| tp.topic != doomed),
    )
    .await;
    assert_eq!(c.assignment().len(), PARTITIONS as usize);

    // No loss on the surviving topic: every acknowledged record handled.
    let acked = kept_producer.stop();
    wait_until(
        "every acknowledged record of the kept topic handled",
        Duration::from_secs(30),
        || {
            let seen = deliveries.offsets(&kept);
            acked.iter().all(|po| seen.contains_key(po))
        },
    )
    .await;
    let reported = events.unavailable_topics();
    let result = stop(&c, run).await;

    // The kept topic keeps its throughput: over the window after the deletion it is handled at
    // no less than three quarters of the rate before, and never stops for more than two seconds
    // in a row. (Per-second floors failed on a loaded 2-core machine, where a JVM stall empties a
    // single second and the next one catches up: [.., 0, 635, 0, 372, ..] at 200/s.)
    let after_rate = after.iter().sum::<usize>() as f64 / WINDOW.as_secs_f64();
    assert!(
        after_rate >= 0.75 * before_rate,
        "the kept topic slowed from {before_rate:.0}/s to {after_rate:.0}/s after the deletion: \
         {after:?}"
    );
    let longest_stop = after
        .split(|n| *n > 0)
        .map(<[usize]>::len)
        .max()
        .unwrap_or(0);
    assert!(
        longest_stop <= 2,
        "the kept topic stopped for {longest_stop} s in a row after the deletion: {after:?}"
    );
    assert!(
        reported.contains(&doomed),
        "the deletion of {doomed} was not reported (TopicUnavailable events: {reported:?})"
    );
    assert_eq!(
        reported.iter().filter(|t| **t == doomed).count(),
        1,
        "reported once"
    );
    assert!(
        !acked.is_empty(),
        "the producer had acknowledged records of {kept}"
    );
    result.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_deleted_topic_stays_assigned_by_hand_but_is_not_fetched() {
    let cluster = Cluster::shared();
    let kept = unique("fetch-kept-manual");
    let doomed = unique("fetch-doomed-manual");
    cluster.create_topic(&kept, 2);
    cluster.create_topic(&doomed, 2);
    assert_eq!(cluster.produce_verifiable(&kept, 100, 0, &[]), 100);
    assert_eq!(cluster.produce_verifiable(&doomed, 100, 0, &[]), 100);
    let c = consumer(
        &cluster,
        &unique("fetch-errors-manual-g"),
        &[("metadata.max.age.ms", "60000")],
    );
    let events = Events::watch(&c);
    let mut partitions: Vec<TopicPartition> = [&kept, &doomed]
        .into_iter()
        .flat_map(|t| (0..2).map(|p| TopicPartition::new(t.as_str(), p)))
        .collect();
    partitions.sort();
    c.assign(partitions.clone()).unwrap();
    let deliveries = Deliveries::default();
    let run = deliveries.spawn_run(&c);
    wait_until("both topics consumed", Duration::from_secs(30), || {
        deliveries.count(&kept) == 100 && deliveries.count(&doomed) == 100
    })
    .await;

    cluster.delete_topic(&doomed);
    wait_until("the deletion reported", Duration::from_secs(30), || {
        events.unavailable_topics().contains(&doomed)
    })
    .await;
    assert_eq!(cluster.produce_verifiable(&kept, 100, 0, &[]), 100);
    wait_until(
        "the kept topic's later records consumed",
        Duration::from_secs(30),
        || deliveries.count(&kept) == 200,
    )
    .await;
    let reported = events.unavailable.lock().unwrap().clone();
    assert_eq!(
        reported,
        [(
            doomed.clone(),
            vec![
                TopicPartition::new(doomed.as_str(), 0),
                TopicPartition::new(doomed.as_str(), 1)
            ],
            Duration::from_secs(60)
        )],
        "once, naming the partitions and when the topic is looked up again"
    );
    let mut assigned = c.assignment();
    assigned.sort();
    assert_eq!(assigned, partitions, "still assigned");
    let errors = events.fetch_errors.lock().unwrap().len();
    assert!(
        errors <= 4,
        "a few fetch errors, not a retry loop: {errors}"
    );
    stop(&c, run).await.unwrap();
}
