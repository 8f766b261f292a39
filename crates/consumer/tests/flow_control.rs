//! Flow control against the real broker: a paused partition receives nothing until resumed, and a
//! handler slower than the session timeout does not get the member kicked out (heartbeats run on
//! their own task and never wait on handlers); record data held stays within the memory budget, also
//! when batches inflate far past it.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{consumer, spawn_run, stop, wait_until, Seen};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{ConsumerEvent, GroupEventKind, TopicPartition};
use mooring_testkit::{unique, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_paused_partition_receives_nothing_until_resumed() {
    let cluster = Cluster::shared();
    let topic = unique("pause");
    cluster.create_topic(&topic, 2);
    let c = consumer(&cluster, &unique("pause-g"), &[]);
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    let (p0, p1) = (
        TopicPartition::new(&topic, 0),
        TopicPartition::new(&topic, 1),
    );
    wait_until(
        "both partitions assigned with positions",
        Duration::from_secs(30),
        || c.position(&p0).is_some() && c.position(&p1).is_some(),
    )
    .await;
    c.pause([p0.clone()]).unwrap();
    assert_eq!(c.paused(), std::slice::from_ref(&p0));

    // Keys spread the records over both partitions.
    assert_eq!(cluster.produce_verifiable(&topic, 400, 20, &[]), 400);
    let ends = cluster.end_offsets(&topic);
    let (e0, e1) = (ends[&0] as usize, ends[&1] as usize);
    assert!(e0 > 0 && e1 > 0, "records in both partitions: {ends:?}");
    // Partition 1 is fetched to its end: fetch rounds over the same broker and session have
    // passed while partition 0 stayed paused.
    wait_until("partition 1 consumed", Duration::from_secs(30), || {
        seen.count_in(1) == e1 && c.position(&p1) == Some(e1 as i64)
    })
    .await;
    assert_eq!(seen.count_in(0), 0, "the paused partition received records");
    assert_eq!(c.position(&p0), Some(0));

    c.resume([p0.clone()]).unwrap();
    assert!(c.paused().is_empty());
    wait_until(
        "partition 0 consumed after resume",
        Duration::from_secs(30),
        || seen.count_in(0) == e0,
    )
    .await;
    stop(&c, run).await.unwrap();
    let (lost, duplicates) = (400 - seen.distinct(), seen.duplicates());
    println!("pause/resume: p0 = {e0}, p1 = {e1}, lost = {lost}, duplicates = {duplicates}");
    assert_eq!((lost, duplicates), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_handler_slower_than_the_session_timeout_keeps_the_membership() {
    let cluster = Cluster::shared();
    let topic = unique("slow");
    cluster.create_topic(&topic, 1);
    let c = consumer(&cluster, &unique("slow-g"), &[]);
    let events = c.events().unwrap();
    let log = collect(events);
    c.subscribe([topic.clone()]).unwrap();
    let tp = TopicPartition::new(&topic, 0);
    let seen = Seen::default();
    // 8 s per record: longer than session.timeout.ms (6 s), shorter than max.poll.interval.ms.
    let run = spawn_run(&c, &seen, Duration::from_secs(8));
    wait_until("assigned", Duration::from_secs(30), || {
        c.position(&tp).is_some()
    })
    .await;
    let generation = c.member_state().unwrap().generation;
    assert_eq!(cluster.produce_verifiable(&topic, 2, 0, &[]), 2);
    wait_until("both slow records handled", Duration::from_secs(40), || {
        seen.distinct() == 2
    })
    .await;
    let state = c.member_state().unwrap();
    stop(&c, run).await.unwrap();
    let log = log.lock().unwrap().clone();
    let heartbeats = log
        .iter()
        .filter(|k| matches!(k, GroupEventKind::Heartbeat { error: None, .. }))
        .count();
    let rebalances = log
        .iter()
        .filter(|k| matches!(k, GroupEventKind::RebalanceStarted { .. }))
        .count();
    let lost = log
        .iter()
        .any(|k| matches!(k, GroupEventKind::PartitionsLost { .. }));
    println!(
        "slow handler: generation {generation} → {}, heartbeats ok = {heartbeats}, rebalances = {rebalances}",
        state.generation
    );
    assert_eq!(
        state.generation, generation,
        "the member rejoined: {log:#?}"
    );
    assert_eq!(rebalances, 1, "only the first join: {log:#?}");
    assert!(!lost, "partitions lost: {log:#?}");
    assert!(heartbeats >= 10, "heartbeats kept flowing: {heartbeats}");
    assert_eq!(seen.duplicates(), 0);
}

/// Keeps the group events of a consumer's telemetry.
fn collect(mut events: mooring_consumer::ConsumerEvents) -> Arc<Mutex<Vec<GroupEventKind>>> {
    let out = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&out);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let ConsumerEvent::Group(e) = event {
                log.lock().unwrap().push(e.kind);
            }
        }
    });
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn records_as_a_stream_with_acknowledgements() {
    let cluster = Cluster::shared();
    let topic = unique("stream");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, 200, 10, &[]), 200);
    let c = consumer(&cluster, &unique("stream-g"), &[]);
    c.subscribe([topic.clone()]).unwrap();
    let (mut records, run) = c.stream();
    let running = tokio::spawn(run);
    let seen = Seen::default();
    while seen.distinct() < 200 {
        let delivery = tokio::time::timeout(Duration::from_secs(30), records.next())
            .await
            .expect("a record within 30 s")
            .expect("the stream is open");
        seen.record(delivery.record());
        delivery.ack();
    }
    let ends = cluster.end_offsets(&topic);
    let tps: Vec<TopicPartition> = (0..2).map(|p| TopicPartition::new(&topic, p)).collect();
    wait_until(
        "auto-commit of everything acknowledged",
        Duration::from_secs(30),
        || {
            tps.iter()
                .all(|tp| c.committed(tp) == Some(ends[&tp.partition]))
        },
    )
    .await;
    c.shutdown_handle().shutdown();
    // The stream ends (None) once the consumer has stopped; nothing more arrives meanwhile.
    let more = tokio::time::timeout(Duration::from_secs(30), async {
        let mut more = 0;
        while let Some(delivery) = records.next().await {
            seen.record(delivery.record());
            more += 1;
        }
        more
    })
    .await
    .expect("the stream ends after shutdown");
    assert_eq!(more, 0);
    running.await.unwrap().unwrap();
    assert_eq!((seen.distinct(), seen.duplicates()), (200, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_handler_past_max_poll_interval_is_reported_and_the_member_rejoins() {
    let cluster = Cluster::shared();
    let topic = unique("poll-interval");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 20, 0, &[]), 20);
    let c = consumer(
        &cluster,
        &unique("poll-interval-g"),
        &[("max.poll.interval.ms", "2000")],
    );
    let mut events = c.events().unwrap();
    let breaches = Arc::new(Mutex::new((0usize, 0usize)));
    let counts = Arc::clone(&breaches);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            let mut counts = counts.lock().unwrap();
            match event {
                ConsumerEvent::Processing(
                    mooring_consumer::processing::ProcessingEvent::PollIntervalExceeded { .. },
                ) => counts.0 += 1,
                ConsumerEvent::Group(e)
                    if matches!(
                        e.kind,
                        GroupEventKind::RebalanceStarted {
                            cause: mooring_consumer::RebalanceCause::PollIntervalExceeded,
                            ..
                        }
                    ) =>
                {
                    counts.1 += 1
                }
                _ => {}
            }
        }
    });
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    // Offset 5 takes 3 s, past max.poll.interval.ms; the rest are quick.
    let slow_once = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let handler = {
        let seen = seen.clone();
        move |record: mooring_consumer::processing::ConsumerRecord| {
            let seen = seen.clone();
            let slow =
                record.offset() == 5 && slow_once.swap(false, std::sync::atomic::Ordering::SeqCst);
            async move {
                if slow {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                }
                seen.record(&record);
                Ok::<(), String>(())
            }
        }
    };
    let consumer = c.clone();
    let run = tokio::spawn(async move { consumer.run(handler).await });
    wait_until(
        "the breach reported, the member rejoined, everything handled",
        Duration::from_secs(40),
        || {
            let (reported, rejoined) = *breaches.lock().unwrap();
            reported >= 1 && rejoined >= 1 && seen.distinct() == 20
        },
    )
    .await;
    stop(&c, run).await.unwrap();
    println!(
        "max.poll.interval: (breaches, rejoins) = {:?}, duplicates = {}",
        *breaches.lock().unwrap(),
        seen.duplicates()
    );
}

/// `mooring.memory.max.bytes`: with a handler slower than the fetches and a budget far below the
/// topic's size, the record data held never passes the budget by more than one answer can (the
/// broker sends a first batch whole; frame buffers are counted in 64 KiB steps), and every record
/// is consumed. Without the budget the fetcher would have taken in about 4 MiB here.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn record_data_held_stays_within_the_memory_budget() {
    const RECORDS: usize = 4000;
    const BUDGET: usize = 256 * 1024;
    let cluster = Cluster::shared();
    let topic = unique("budget");
    cluster.create_topic(&topic, 3);
    cluster.produce_perf(&topic, RECORDS as u64, 1024);
    let budget = BUDGET.to_string();
    let c = consumer(
        &cluster,
        &unique("budget-g"),
        &[("mooring.memory.max.bytes", budget.as_str())],
    );
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::from_millis(1));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let (mut peak, mut samples_held) = (0, 0);
    while seen.distinct() < RECORDS {
        assert!(
            tokio::time::Instant::now() < deadline,
            "consumed {} of {RECORDS}",
            seen.distinct()
        );
        let held = c.memory_in_use();
        peak = peak.max(held);
        samples_held += usize::from(held > 0);
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    stop(&c, run).await.unwrap();
    println!(
        "memory budget {BUDGET}: peak held {peak} bytes, {samples_held} samples with data held"
    );
    assert!(samples_held > 10, "the records were held while handled");
    assert!(peak <= BUDGET + 128 * 1024, "peak {peak} bytes held");
    assert_eq!(seen.distinct(), RECORDS, "lost records");
}

/// Batches that inflate to 32 MiB each from a few KiB on the wire (1 MiB values of one byte
/// repeated, zstd and gzip), several in one Fetch answer, consumed with the default 8 MiB budget:
/// a batch is decompressed only while the budget has room (an answer's first one also when the
/// rest of what is held leaves room), the rest is fetched again later. So the record data held
/// stays within the budget plus one batch, and so does the process's peak RSS; every record is
/// handled. Decompressing every batch of an answer at once, the consumer held them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn batches_inflating_far_past_the_budget_are_decompressed_within_it() {
    const VALUE: usize = 1 << 20;
    const BATCH: usize = 32 << 20;
    const RECORDS: usize = 256;
    const BUDGET: usize = 8 << 20;
    let cluster = Cluster::shared();
    let value = vec![b'z'; VALUE];
    for codec in ["zstd", "gzip"] {
        let topic = unique(&format!("inflating-{codec}"));
        cluster.create_topic(&topic, 1);
        let compression = format!("compression.type={codec}");
        let batch_size = format!("batch.size={BATCH}");
        cluster.produce_payload(
            &topic,
            RECORDS as u64,
            &value,
            &[
                &compression,
                &batch_size,
                "linger.ms=1000",
                "buffer.memory=134217728",
                "max.request.size=2097152",
            ],
        );
        let c = consumer(&cluster, &unique("inflating-g"), &[]);
        c.subscribe([topic.clone()]).unwrap();
        // Offsets handled, how often, and the lengths of their values (the values are not kept:
        // that would be 256 MiB).
        let handled: Arc<Mutex<BTreeMap<i64, (u32, usize)>>> = Arc::default();
        let counts = Arc::clone(&handled);
        let handler = move |record: ConsumerRecord| {
            let counts = Arc::clone(&counts);
            async move {
                tokio::time::sleep(Duration::from_millis(1)).await;
                let len = record.value().map_or(0, |v| v.len());
                let mut counts = counts.lock().unwrap();
                counts.entry(record.offset()).or_insert((0, len)).0 += 1;
                Ok::<(), String>(())
            }
        };
        let run = tokio::spawn({
            let c = c.clone();
            async move { c.run(handler).await }
        });
        let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
        let mut peak = 0;
        while handled.lock().unwrap().len() < RECORDS {
            assert!(
                tokio::time::Instant::now() < deadline,
                "{codec}: consumed {} of {RECORDS}",
                handled.lock().unwrap().len()
            );
            peak = peak.max(c.memory_in_use());
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        stop(&c, run).await.unwrap();
        println!("{codec}: peak record data held {} MiB", peak >> 20);
        let handled = handled.lock().unwrap().clone();
        let offsets: Vec<i64> = handled.keys().copied().collect();
        assert_eq!(offsets, (0..RECORDS as i64).collect::<Vec<_>>(), "{codec}");
        assert!(
            handled.values().all(|(n, _)| *n == 1),
            "{codec}: records handled twice"
        );
        assert!(
            handled.values().all(|(_, len)| *len == VALUE),
            "{codec}: a value not as produced"
        );
        assert!(
            peak <= BUDGET + BATCH + (2 << 20),
            "{codec}: {} MiB of record data held",
            peak >> 20
        );
        cluster.delete_topic(&topic);
    }
    // The budget and one batch (40 MiB), the process's own (98 MiB in all measured), and room
    // for the allocator; the old code held 256 MiB of records alone.
    let hwm = peak_rss_mib();
    println!("peak RSS {hwm} MiB");
    assert!(hwm < 160, "peak RSS {hwm} MiB");
}

/// This process's peak resident memory (`VmHWM`), in MiB.
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib >> 10
}
