//! The share consumer (KIP-932) against the real broker: every record the producer had
//! acknowledged is accepted exactly once, handlers slower than the lock keep their records
//! (renewed), a failing handler's records are released or rejected as its error says, and a
//! shutdown releases what it acquired and did not start.

#![allow(clippy::unwrap_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::share::{ShareConsumer, ShareConsumerConfig};
use mooring_testkit::{unique, Cluster};

/// A share group of this test's own: starts at the earliest offset, with short heartbeats and
/// session, and a lock of `lock_ms`.
fn share_group(cluster: &Cluster, lock_ms: u32) -> String {
    let group = unique("share");
    cluster.set_group_config(
        &group,
        &[
            ("share.auto.offset.reset", "earliest"),
            ("share.heartbeat.interval.ms", "500"),
            ("share.session.timeout.ms", "6000"),
            ("share.record.lock.duration.ms", &lock_ms.to_string()),
        ],
    );
    group
}

fn share_consumer(cluster: &Cluster, group: &str, extra: &[(&str, &str)]) -> ShareConsumer {
    let mut props = vec![
        ("bootstrap.servers", cluster.bootstrap()),
        ("group.id", group),
        ("retry.backoff.ms", "100"),
        ("fetch.max.wait.ms", "200"),
        ("mooring.shutdown.timeout.ms", "10000"),
    ];
    props.extend_from_slice(extra);
    ShareConsumer::new(ShareConsumerConfig::from_properties(props).unwrap()).unwrap()
}

/// Every record handed out: (partition, offset) → delivery counts seen.
type Seen = Arc<Mutex<BTreeMap<(i32, i64), Vec<u16>>>>;

fn record_into(seen: &Seen, record: &ConsumerRecord) {
    seen.lock()
        .unwrap()
        .entry((record.partition(), record.offset()))
        .or_default()
        .push(record.delivery_count().unwrap_or(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_record_is_accepted_exactly_once() {
    let cluster = Cluster::shared();
    let topic = unique("share-all");
    cluster.create_topic(&topic, 3);
    let acked = cluster.produce_verifiable(&topic, 3000, 0, &[]);
    assert_eq!(acked, 3000);
    let group = share_group(&cluster, 15_000);
    let consumer = share_consumer(&cluster, &group, &[]);
    consumer.subscribe([topic.clone()]).unwrap();
    let seen: Seen = Arc::default();
    let running = {
        let (consumer, seen) = (consumer.clone(), Arc::clone(&seen));
        tokio::spawn(async move {
            consumer
                .run(move |record: ConsumerRecord| {
                    let seen = Arc::clone(&seen);
                    async move {
                        record_into(&seen, &record);
                        Ok::<(), String>(())
                    }
                })
                .await
        })
    };
    common::wait_until("3000 records accepted", Duration::from_secs(60), || {
        consumer.stats().accepted >= 3000
    })
    .await;
    consumer.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    let seen = seen.lock().unwrap().clone();
    let ends = cluster.end_offsets(&topic);
    let expected: usize = ends.values().map(|e| *e as usize).sum();
    assert_eq!(expected, 3000);
    assert_eq!(seen.len(), 3000, "every record handed out");
    let again: Vec<_> = seen.iter().filter(|(_, d)| d.len() > 1).collect();
    assert!(again.is_empty(), "records handed out twice: {again:?}");
    assert!(seen.values().all(|d| d == &[1]), "first deliveries");
    let stats = consumer.stats();
    assert_eq!((stats.acquired, stats.accepted), (3000, 3000), "{stats:?}");
    assert_eq!(
        stats.lock_expired + stats.acknowledgements_failed,
        0,
        "{stats:?}"
    );
}

/// A share consumer running `handler` in a task of its own.
fn spawn_run<F, Fut>(
    consumer: &ShareConsumer,
    handler: F,
) -> tokio::task::JoinHandle<Result<(), mooring_consumer::ConsumerError>>
where
    F: Fn(ConsumerRecord) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), Box<dyn std::error::Error + Send + Sync>>>
        + Send
        + 'static,
{
    let consumer = consumer.clone();
    tokio::spawn(async move { consumer.run(handler).await })
}

/// A handler that records every delivery, then runs `then` on the record.
fn recording<Fut>(
    seen: &Seen,
    then: impl Fn(ConsumerRecord) -> Fut + Send + Sync + 'static,
) -> impl Fn(ConsumerRecord) -> Fut + Send + Sync + 'static {
    let seen = Arc::clone(seen);
    move |record: ConsumerRecord| {
        record_into(&seen, &record);
        then(record)
    }
}

fn value(record: &ConsumerRecord) -> String {
    String::from_utf8_lossy(record.value().map_or(&[][..], |v| &v[..])).into_owned()
}

/// What each broker does with share groups: 4.x runs them; a 3.x broker (which has none) and a
/// 4.x cluster formatted without them make `run` stop at once with the typed error, never a retry
/// loop. Run on every broker of the compatibility phase.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_groups_refused_clearly_by_older_brokers() {
    let cluster = Cluster::shared();
    let topic = unique("share-refused");
    cluster.create_topic(&topic, 1);
    if cluster.has_share_groups() {
        assert_eq!(cluster.produce_verifiable(&topic, 10, 0, &[]), 10);
        let group = share_group(&cluster, 15_000);
        let consumer = share_consumer(&cluster, &group, &[]);
        consumer.subscribe([topic]).unwrap();
        let running = spawn_run(&consumer, |_| async { Ok(()) });
        common::wait_until("10 records accepted", Duration::from_secs(30), || {
            consumer.stats().accepted == 10
        })
        .await;
        consumer.shutdown_handle().shutdown();
        running.await.unwrap().unwrap();
        return;
    }
    let consumer = share_consumer(&cluster, &unique("share-refused"), &[]);
    consumer.subscribe([topic]).unwrap();
    let started = std::time::Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(30),
        consumer.run(|_| async { Ok::<(), String>(()) }),
    )
    .await
    .expect("run ends at once on a broker without share groups");
    let error = result.expect_err("no share groups here");
    assert!(
        matches!(
            &error,
            mooring_consumer::ConsumerError::Client(
                mooring_client::Error::ShareGroupsUnsupported { .. }
            )
        ),
        "{error}"
    );
    assert_eq!(error.kind(), "config");
    assert!(
        error.to_string().contains("does not support share groups"),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "stopped after {:?}",
        started.elapsed()
    );
}

/// A handler slower than the lock keeps its record: the lock is renewed while it runs, and no
/// other member is handed the record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handler_slower_than_the_lock_keeps_its_record_by_renewing_it() {
    let (seen, stats) = slow_handler_on_two_members(true).await;
    assert_eq!(
        seen.get(&(0, 0)),
        Some(&vec![1]),
        "delivered once: {seen:?}"
    );
    let renewed: u64 = stats.iter().map(|s| s.renewed).sum();
    assert!(renewed >= 3, "5 s held under a 2 s lock: {stats:?}");
    assert_eq!(
        stats.iter().map(|s| s.lock_expired).sum::<u64>(),
        0,
        "{stats:?}"
    );
}

/// Without renewal the same handler loses its record to the lock: the broker hands it out again
/// (delivery count 2), and the late verdict is counted, not sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_renewal_a_handler_slower_than_the_lock_sees_its_record_delivered_again() {
    let (seen, stats) = slow_handler_on_two_members(false).await;
    let deliveries = seen.get(&(0, 0)).cloned().unwrap_or_default();
    assert!(deliveries.len() >= 2, "delivered again: {seen:?}");
    assert_eq!(deliveries[..2], [1, 2], "{seen:?}");
    assert!(
        stats.iter().map(|s| s.lock_expired).sum::<u64>() >= 1,
        "{stats:?}"
    );
    assert_eq!(stats.iter().map(|s| s.renewed).sum::<u64>(), 0, "{stats:?}");
}

/// Two members of a group with a 2 s lock; the record at offset 0 takes its handler 5 s, the
/// others none. Returns every delivery and both members' counters.
async fn slow_handler_on_two_members(
    renew: bool,
) -> (
    BTreeMap<(i32, i64), Vec<u16>>,
    Vec<mooring_consumer::share::ShareStats>,
) {
    let cluster = Cluster::shared();
    let topic = unique("share-slow");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 20, 0, &[]), 20);
    let group = share_group(&cluster, 2_000);
    let renewal = if renew { "true" } else { "false" };
    let seen: Seen = Arc::default();
    let members: Vec<ShareConsumer> = (0..2)
        .map(|_| {
            let c = share_consumer(
                &cluster,
                &group,
                &[
                    ("mooring.share.lock.renewal", renewal),
                    ("max.poll.records", "5"),
                ],
            );
            c.subscribe([topic.clone()]).unwrap();
            c
        })
        .collect();
    let runs: Vec<_> = members
        .iter()
        .map(|c| {
            spawn_run(
                c,
                recording(&seen, |record| async move {
                    if record.offset() == 0 && record.delivery_count() == Some(1) {
                        tokio::time::sleep(Duration::from_secs(5)).await;
                    }
                    Ok(())
                }),
            )
        })
        .collect();
    common::wait_until("every record accepted", Duration::from_secs(60), || {
        members.iter().map(|c| c.stats().accepted).sum::<u64>() >= 20
    })
    .await;
    // Long enough for another delivery to show.
    tokio::time::sleep(Duration::from_secs(2)).await;
    for c in &members {
        c.shutdown_handle().shutdown();
    }
    for run in runs {
        run.await.unwrap().unwrap();
    }
    let seen = seen.lock().unwrap().clone();
    (seen, members.iter().map(ShareConsumer::stats).collect())
}

/// Poison: a handler that always fails with `RejectRecord` rejects its record once (archived,
/// never delivered again); one that fails with any other error releases it, and it comes again
/// up to the group's delivery limit, then is archived.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn poison_is_rejected_once_and_a_failing_record_comes_again_up_to_the_delivery_limit() {
    use mooring_consumer::share::RejectRecord;
    let cluster = Cluster::shared();
    let topic = unique("share-poison");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 20, 0, &[]), 20);
    let group = share_group(&cluster, 15_000);
    cluster.set_group_config(&group, &[("share.delivery.count.limit", "3")]);
    let consumer = share_consumer(&cluster, &group, &[]);
    consumer.subscribe([topic]).unwrap();
    let seen: Seen = Arc::default();
    let running = spawn_run(
        &consumer,
        recording(&seen, |record| async move {
            match value(&record).as_str() {
                "5" => Err(RejectRecord::new("poison").into()),
                "7" => Err("a downstream service is down".into()),
                _ => Ok(()),
            }
        }),
    );
    common::wait_until(
        "18 accepted, 1 rejected, 3 released",
        Duration::from_secs(60),
        || {
            let s = consumer.stats();
            s.accepted >= 18 && s.rejected >= 1 && s.released >= 3
        },
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    consumer.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.get(&(0, 5)), Some(&vec![1]), "rejected once: {seen:?}");
    assert_eq!(
        seen.get(&(0, 7)),
        Some(&vec![1, 2, 3]),
        "up to the limit: {seen:?}"
    );
    let stats = consumer.stats();
    assert_eq!(
        (stats.accepted, stats.rejected, stats.released),
        (18, 1, 3),
        "{stats:?}"
    );
    assert_eq!(
        stats.released_by_delivery[..3],
        [1, 1, 1],
        "released at deliveries 1, 2 and 3 (the last one archived): {stats:?}"
    );
}

/// A shutdown with records in flight: the running handlers finish and their records are
/// accepted; the records acquired and not started are released at once, and another member gets
/// them long before their locks would have run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_releases_what_it_did_not_start_and_another_member_gets_it_at_once() {
    use mooring_consumer::share::{Acknowledge, ShareEvent};
    let cluster = Cluster::shared();
    let topic = unique("share-release");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 200, 0, &[]), 200);
    let lock = Duration::from_secs(15);
    let group = share_group(&cluster, 15_000);
    let a = share_consumer(
        &cluster,
        &group,
        &[("mooring.concurrency", "2"), ("max.poll.records", "100")],
    );
    a.subscribe([topic.clone()]).unwrap();
    let mut a_events = a.events().unwrap();
    let started: Seen = Arc::default();
    let a_run = spawn_run(
        &a,
        recording(&started, |_| async {
            tokio::time::sleep(Duration::from_millis(500)).await;
            Ok(())
        }),
    );
    common::wait_until("A runs handlers", Duration::from_secs(30), || {
        started.lock().unwrap().len() >= 2
    })
    .await;
    // B joins while A holds its records; B records when it got each one.
    let b = share_consumer(&cluster, &group, &[]);
    b.subscribe([topic]).unwrap();
    let got: Arc<Mutex<BTreeMap<i64, (u16, std::time::Instant)>>> = Arc::default();
    let b_run = {
        let got = Arc::clone(&got);
        spawn_run(&b, move |record: ConsumerRecord| {
            let got = Arc::clone(&got);
            async move {
                got.lock().unwrap().insert(
                    record.offset(),
                    (
                        record.delivery_count().unwrap_or(0),
                        std::time::Instant::now(),
                    ),
                );
                Ok(())
            }
        })
    };
    common::wait_until("B in the group", Duration::from_secs(30), || {
        b.member_state()
            .is_some_and(|s| s.state == mooring_group::MemberState::Stable)
    })
    .await;
    let stopped_at = std::time::Instant::now();
    a.shutdown_handle().shutdown();
    a_run.await.unwrap().unwrap();
    let mut released = Vec::new();
    while let Ok(event) = a_events.try_recv() {
        if let ShareEvent::Acknowledged {
            acknowledge: Acknowledge::Release,
            offsets,
            error: None,
            ..
        } = event
        {
            released.extend(offsets);
        }
    }
    let a_stats = a.stats();
    assert!(
        released.len() >= 50,
        "A released what it had not started: {a_stats:?}"
    );
    assert_eq!(a_stats.released as usize, released.len(), "{a_stats:?}");
    common::wait_until(
        "B got every released record",
        Duration::from_secs(30),
        || {
            let got = got.lock().unwrap();
            released.iter().all(|o| got.contains_key(o))
        },
    )
    .await;
    let got = got.lock().unwrap().clone();
    let slowest = released
        .iter()
        .map(|o| got[o].1.duration_since(stopped_at))
        .max()
        .unwrap_or_default();
    println!(
        "A released {} records at shutdown; B had the last of them {slowest:?} after A's shutdown began (lock {lock:?})",
        released.len()
    );
    assert!(
        slowest < lock / 3,
        "released records came after {slowest:?}"
    );
    assert!(released.iter().all(|o| got[o].0 == 2), "second deliveries");
    common::wait_until("200 accepted in all", Duration::from_secs(30), || {
        a.stats().accepted + b.stats().accepted >= 200
    })
    .await;
    b.shutdown_handle().shutdown();
    b_run.await.unwrap().unwrap();
    let a_accepted: Vec<i64> = started.lock().unwrap().keys().map(|(_, o)| *o).collect();
    for offset in &a_accepted {
        assert!(
            !got.contains_key(offset) || released.contains(offset),
            "offset {offset} accepted by A and handed to B"
        );
    }
    assert_eq!(a.stats().accepted + b.stats().accepted, 200);
}

/// A stream delivery dropped without a verdict (a `?` in the loop) is released, never accepted:
/// it comes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_delivery_is_released_and_comes_again() {
    let cluster = Cluster::shared();
    let topic = unique("share-stream");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 10, 0, &[]), 10);
    let group = share_group(&cluster, 15_000);
    let consumer = share_consumer(&cluster, &group, &[]);
    consumer.subscribe([topic]).unwrap();
    let (mut records, run) = consumer.stream();
    let running = tokio::spawn(run);
    let mut deliveries: BTreeMap<i64, Vec<u16>> = BTreeMap::new();
    while consumer.stats().accepted < 10 {
        let Some(delivery) = tokio::time::timeout(Duration::from_secs(30), records.next())
            .await
            .expect("a record in time")
        else {
            break;
        };
        let record = delivery.record();
        let count = record.delivery_count().unwrap_or(0);
        deliveries.entry(record.offset()).or_default().push(count);
        if record.offset() == 3 && count == 1 {
            drop(delivery);
            continue;
        }
        delivery.accept();
        if deliveries.values().map(Vec::len).sum::<usize>() >= 11 {
            common::wait_until("10 accepted", Duration::from_secs(10), || {
                consumer.stats().accepted >= 10
            })
            .await;
        }
    }
    drop(records);
    running.await.unwrap().unwrap();
    assert_eq!(deliveries.get(&3), Some(&vec![1, 2]), "{deliveries:?}");
    let stats = consumer.stats();
    assert_eq!((stats.accepted, stats.released), (10, 1), "{stats:?}");
}
