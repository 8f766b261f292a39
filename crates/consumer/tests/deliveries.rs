//! `Consumer::stream` deliveries against the real broker: a delivery dropped without `ack` is not
//! processed, so no commit passes it and it comes again after a restart; dropping the stream
//! (a `?` or a panic in the application's loop) shuts the consumer down with exactly what was
//! acknowledged committed. Losses are counted against the producer's acknowledgements.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{consumer, lost, poll_until, produce_acked, stop, wait_until, Seen};
use mooring_consumer::processing::ProcessingEvent;
use mooring_consumer::{Consumer, ConsumerEvent, Delivery, RecordStream, TopicPartition};
use mooring_testkit::{unique, Cluster};

/// The application's loop: acknowledges records as it goes but keeps every tenth without
/// acknowledging it, and gives up with `?` at the `limit`-th record, dropping the stream (with
/// deliveries queued in it) and the deliveries it holds.
async fn give_up_midway(
    mut records: RecordStream,
    acked: Arc<Mutex<Vec<(i32, i64)>>>,
    limit: usize,
) -> Result<(), String> {
    let mut held: Vec<Delivery> = Vec::new();
    let mut received = 0;
    while let Some(delivery) = records.next().await {
        received += 1;
        if received % 10 == 0 {
            held.push(delivery);
        } else {
            let r = delivery.record();
            acked.lock().unwrap().push((r.partition(), r.offset()));
            delivery.ack();
        }
        if received == limit {
            Err(format!("giving up with {} deliveries held", held.len()))?;
        }
    }
    Ok(())
}

/// Collects the (partition, offset) of every `RecordAbandoned` event of `consumer`.
fn abandoned_events(consumer: &Consumer) -> Arc<Mutex<Vec<(i32, i64)>>> {
    let mut events = consumer.events().unwrap();
    let out = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&out);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let ConsumerEvent::Processing(ProcessingEvent::RecordAbandoned {
                partition,
                offset,
            }) = event
            {
                log.lock().unwrap().push((partition.partition, offset));
            }
        }
    });
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dropping_the_stream_midway_loses_nothing_after_a_restart() {
    let cluster = Cluster::shared();
    let topic = unique("stream-drop");
    cluster.create_topic(&topic, 3);
    let produced = produce_acked(&cluster, &topic, 300, 30);
    assert_eq!(produced.values().map(|o| o.len()).sum::<usize>(), 300);
    let group = unique("stream-drop-g");
    // Sixteen deliveries out at once, in any order: four held, the rest acknowledged or queued.
    let extra = [("mooring.concurrency", "16"), ("mooring.ordering", "none")];

    let first = consumer(&cluster, &group, &extra);
    let abandoned = abandoned_events(&first);
    first.subscribe([topic.clone()]).unwrap();
    let (records, run) = first.stream();
    let mut running = tokio::spawn(run);
    let acked = Arc::new(Mutex::new(Vec::new()));
    let gave_up = tokio::time::timeout(
        Duration::from_secs(60),
        give_up_midway(records, Arc::clone(&acked), 40),
    )
    .await
    .expect("40 records within 60 s");
    assert!(gave_up.is_err(), "the loop gives up: {gave_up:?}");
    // Dropping the stream stops the consumer: `run` drains, commits and returns by itself.
    let ended = tokio::time::timeout(Duration::from_secs(30), &mut running).await;
    let first_result = match ended {
        Ok(joined) => Some(joined.unwrap()),
        Err(_) => {
            first.shutdown_handle().shutdown();
            running.await.unwrap().unwrap();
            None
        }
    };

    // A restarted consumer of the same group gets whatever was not acknowledged.
    let second = consumer(&cluster, &group, &extra);
    second.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = common::spawn_run(&second, &seen, Duration::ZERO);
    let handled = || {
        let mut all = acked.lock().unwrap().clone();
        all.extend(seen.offsets().into_iter().map(|(_, p, o)| (p, o)));
        all
    };
    poll_until(Duration::from_secs(30), || {
        lost(&produced, &handled()).is_empty()
    })
    .await;
    stop(&second, run).await.unwrap();
    let losses = lost(&produced, &handled());
    let acked_first = acked.lock().unwrap().len();
    let abandoned = abandoned.lock().unwrap().clone();
    println!(
        "stream dropped after 40 records ({acked_first} acknowledged, 4 held, {} reported \
         abandoned): the restart handled {} distinct; lost per partition: {losses:?}",
        abandoned.len(),
        seen.distinct()
    );
    assert!(losses.is_empty(), "records lost: {losses:?}");
    let result = first_result.expect("run returned by itself once the stream was dropped");
    assert!(
        result.is_ok(),
        "run after the stream was dropped: {result:?}"
    );
    // The held deliveries at least; those queued in the stream too.
    assert!(abandoned.len() >= 4, "abandoned: {abandoned:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dropped_delivery_stops_its_partitions_commits_and_comes_again() {
    let cluster = Cluster::shared();
    let topic = unique("delivery-drop");
    cluster.create_topic(&topic, 2);
    let produced = produce_acked(&cluster, &topic, 200, 20);
    let total: usize = produced.values().map(|o| o.len()).sum();
    assert_eq!(total, 200);
    let end = |p: i32| produced[&p].last().map_or(0, |o| o + 1);
    assert!(
        end(0) > 20 && end(1) > 0,
        "both partitions hold records: {produced:?}"
    );
    let dropped = (0, 10);
    let (p0, p1) = (
        TopicPartition::new(&topic, 0),
        TopicPartition::new(&topic, 1),
    );
    let group = unique("delivery-drop-g");

    let c = consumer(&cluster, &group, &[]);
    let abandoned = abandoned_events(&c);
    c.subscribe([topic.clone()]).unwrap();
    let (mut records, run) = c.stream();
    let running = tokio::spawn(run);
    let mut received = 0;
    while received < total {
        let delivery = tokio::time::timeout(Duration::from_secs(30), records.next())
            .await
            .expect("a record within 30 s")
            .expect("the stream is open");
        received += 1;
        let r = delivery.record();
        if (r.partition(), r.offset()) == dropped {
            drop(delivery);
        } else {
            delivery.ack();
        }
    }
    // Everything after the dropped record was acknowledged; partition 1 commits to its end.
    wait_until(
        "partition 1 committed at its end",
        Duration::from_secs(30),
        || c.committed(&p1) == Some(end(1)),
    )
    .await;
    let committed = (c.committed(&p0), c.committed(&p1));
    assert_eq!(
        committed.0,
        Some(dropped.1),
        "partition 0's commits stop at the dropped delivery"
    );
    c.shutdown_handle().shutdown();
    while records.next().await.is_some() {}
    running.await.unwrap().unwrap();
    assert_eq!(
        *abandoned.lock().unwrap(),
        [dropped],
        "one event, naming it"
    );

    // The restarted consumer gets the dropped record first, and nothing of partition 1.
    let again = consumer(&cluster, &group, &[]);
    again.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = common::spawn_run(&again, &seen, Duration::ZERO);
    let expected = usize::try_from(end(0) - dropped.1).unwrap();
    wait_until(
        "partition 0 from the dropped record on",
        Duration::from_secs(30),
        || seen.count_in(0) == expected,
    )
    .await;
    stop(&again, run).await.unwrap();
    let offsets = seen.offsets();
    let from = offsets.first().map(|(_, p, o)| (*p, *o));
    println!(
        "dropped {dropped:?}: committed (p0, p1) = {committed:?} with ends ({}, {}); the restart \
         handled {} records of p0 from {from:?}, {} of p1",
        end(0),
        end(1),
        seen.count_in(0),
        seen.count_in(1)
    );
    assert_eq!(
        from,
        Some(dropped),
        "the restart starts at the dropped record"
    );
    assert_eq!(seen.count_in(1), 0, "partition 1 was committed at its end");
}
