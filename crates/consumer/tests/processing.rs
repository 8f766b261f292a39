//! The processing engine through its public API, on Tokio's paused clock: time only moves when
//! every task waits, so latencies are exact and nothing depends on the machine's speed.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mooring_consumer::processing::{
    ConsumerRecord, FailureAction, FailurePolicy, HandlerPanicked, OnFailure, ProcessingConfig,
    ProcessingEngine, ProcessingEvent, ProcessingEvents, ProcessingOrder, SubmitError,
};
use mooring_consumer::TopicPartition;
use mooring_wire::records::Record;
use tokio::sync::{mpsc, Semaphore};

/// Generous bound for waits that must end; a hang fails instead of spinning the paused clock.
const LONG: Duration = Duration::from_secs(24 * 3600);

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn rec(offset: i64) -> Record {
    Record::new(offset, 0, None, Some(Bytes::from_static(b"value")))
}

fn keyed(offset: i64, key: &'static str) -> Record {
    Record::new(
        offset,
        0,
        Some(Bytes::from_static(key.as_bytes())),
        Some(Bytes::from_static(b"v")),
    )
}

fn records(range: std::ops::Range<i64>) -> Vec<Record> {
    range.map(rec).collect()
}

/// A deterministic pseudo-random latency in 1..=50 ms per record.
fn latency(seed: u64, partition: i32, offset: i64) -> Duration {
    let mut x = seed ^ ((partition as u64) << 32) ^ (offset as u64);
    x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    Duration::from_millis(1 + x % 50)
}

/// Counts handlers running at once, overall and per partition.
#[derive(Default)]
struct Concurrency {
    now: AtomicUsize,
    max: AtomicUsize,
    per_partition: Mutex<HashMap<i32, usize>>,
    max_per_partition: AtomicUsize,
}

impl Concurrency {
    fn enter(&self, partition: i32) {
        let n = self.now.fetch_add(1, AtomicOrdering::SeqCst) + 1;
        self.max.fetch_max(n, AtomicOrdering::SeqCst);
        let mut per = self.per_partition.lock().expect("lock");
        let p = per.entry(partition).or_default();
        *p += 1;
        self.max_per_partition.fetch_max(*p, AtomicOrdering::SeqCst);
    }

    fn exit(&self, partition: i32) {
        self.now.fetch_sub(1, AtomicOrdering::SeqCst);
        let mut per = self.per_partition.lock().expect("lock");
        if let Some(p) = per.get_mut(&partition) {
            *p -= 1;
        }
    }
}

type Log = Arc<Mutex<BTreeMap<i32, Vec<i64>>>>;

fn drain_events(events: &mut ProcessingEvents) -> Vec<ProcessingEvent> {
    let mut v = Vec::new();
    while let Ok(e) = events.try_recv() {
        v.push(e);
    }
    v
}

/// Per-record gates: a gated record's handler waits until the test opens its gate.
#[derive(Clone, Default)]
struct Gates(Arc<Mutex<GateMap>>);

type GateMap = HashMap<(i32, i64), Arc<Semaphore>>;

/// A boxed handler future, so test handlers can be returned from helpers.
type HandlerFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

impl Gates {
    fn close(&self, partition: i32, offset: i64) {
        self.0
            .lock()
            .expect("lock")
            .insert((partition, offset), Arc::new(Semaphore::new(0)));
    }

    fn open(&self, partition: i32, offset: i64) {
        if let Some(g) = self.0.lock().expect("lock").get(&(partition, offset)) {
            g.add_permits(1);
        }
    }

    async fn pass(&self, partition: i32, offset: i64) {
        let gate = self
            .0
            .lock()
            .expect("lock")
            .get(&(partition, offset))
            .cloned();
        if let Some(g) = gate {
            g.acquire().await.expect("gate").forget();
        }
    }
}

/// A handler that reports each start on a channel, waits at its gate, then logs its completion.
fn gated_handler(
    gates: Gates,
    started: mpsc::Sender<(i32, i64)>,
    done: Log,
) -> impl Fn(ConsumerRecord) -> HandlerFuture + Send + Sync + 'static {
    move |r: ConsumerRecord| {
        let gates = gates.clone();
        let started = started.clone();
        let done = Arc::clone(&done);
        Box::pin(async move {
            let _ = started.send((r.partition(), r.offset())).await;
            gates.pass(r.partition(), r.offset()).await;
            done.lock()
                .expect("lock")
                .entry(r.partition())
                .or_default()
                .push(r.offset());
            Ok(())
        })
    }
}

async fn next_start(started: &mut mpsc::Receiver<(i32, i64)>) -> (i32, i64) {
    tokio::time::timeout(LONG, started.recv())
        .await
        .expect("a handler starts")
        .expect("channel open")
}

fn config(concurrency: usize, ordering: ProcessingOrder) -> ProcessingConfig {
    ProcessingConfig {
        concurrency,
        ordering,
        ..ProcessingConfig::default()
    }
}

// ---- concurrency and ordering -----------------------------------------------------------------

async fn run_random_latencies(
    seed: u64,
    concurrency: usize,
    ordering: ProcessingOrder,
    partitions: i32,
    per_partition: i64,
) -> (
    Arc<Concurrency>,
    Log,
    ProcessingEngine<impl mooring_consumer::processing::Handler>,
) {
    let conc = Arc::new(Concurrency::default());
    let log: Log = Arc::default();
    let (c, l) = (Arc::clone(&conc), Arc::clone(&log));
    let handler = move |r: ConsumerRecord| {
        let (c, l) = (Arc::clone(&c), Arc::clone(&l));
        async move {
            c.enter(r.partition());
            tokio::time::sleep(latency(seed, r.partition(), r.offset())).await;
            l.lock()
                .expect("lock")
                .entry(r.partition())
                .or_default()
                .push(r.offset());
            c.exit(r.partition());
            Ok::<(), String>(())
        }
    };
    let (engine, _events) =
        ProcessingEngine::new(config(concurrency, ordering), handler).expect("engine");
    engine.add_partitions((0..partitions).map(tp));
    // Submit in several rounds, as fetches would arrive.
    for chunk in 0..4 {
        let lo = chunk * per_partition / 4;
        let hi = (chunk + 1) * per_partition / 4;
        for p in 0..partitions {
            engine.submit(&tp(p), records(lo..hi)).expect("submit");
        }
        tokio::task::yield_now().await;
    }
    assert!(engine.drained(LONG).await);
    (conc, log, engine)
}

#[tokio::test(start_paused = true)]
async fn concurrency_bound_is_never_exceeded() {
    for ordering in [
        ProcessingOrder::Partition,
        ProcessingOrder::Key,
        ProcessingOrder::None,
    ] {
        let (conc, log, engine) = run_random_latencies(7, 4, ordering, 10, 40).await;
        assert_eq!(conc.max.load(AtomicOrdering::SeqCst), 4, "{ordering:?}");
        let m = engine.metrics();
        assert_eq!(m.max_in_flight_observed, 4);
        assert_eq!(m.completed_total, 400);
        assert_eq!(m.handler_latency.count(), 400);
        assert_eq!(
            log.lock()
                .expect("lock")
                .values()
                .map(Vec::len)
                .sum::<usize>(),
            400
        );
        for p in 0..10 {
            assert_eq!(engine.committable_offset(&tp(p)), Some(40));
        }
    }
}

#[tokio::test(start_paused = true)]
async fn partition_order_is_kept_with_random_latencies() {
    for seed in 0..8 {
        let (conc, log, _engine) =
            run_random_latencies(seed, 8, ProcessingOrder::Partition, 5, 50).await;
        assert_eq!(conc.max_per_partition.load(AtomicOrdering::SeqCst), 1);
        assert_eq!(
            conc.max.load(AtomicOrdering::SeqCst),
            5,
            "one per partition at most"
        );
        for (p, offsets) in log.lock().expect("lock").iter() {
            assert_eq!(
                *offsets,
                (0..50).collect::<Vec<_>>(),
                "partition {p}, seed {seed}"
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn unordered_mode_overlaps_within_a_partition() {
    let (conc, _log, _engine) = run_random_latencies(3, 8, ProcessingOrder::None, 1, 40).await;
    assert_eq!(conc.max_per_partition.load(AtomicOrdering::SeqCst), 8);
}

#[tokio::test(start_paused = true)]
async fn key_mode_same_key_in_order_different_keys_concurrent() {
    let conc = Arc::new(Concurrency::default());
    let log: Arc<Mutex<HashMap<Bytes, Vec<i64>>>> = Arc::default();
    let (c, l) = (Arc::clone(&conc), Arc::clone(&log));
    let handler = move |r: ConsumerRecord| {
        let (c, l) = (Arc::clone(&c), Arc::clone(&l));
        async move {
            c.enter(r.partition());
            tokio::time::sleep(latency(11, r.partition(), r.offset())).await;
            let key = r.key().cloned().unwrap_or_default();
            l.lock()
                .expect("lock")
                .entry(key)
                .or_default()
                .push(r.offset());
            c.exit(r.partition());
            Ok::<(), String>(())
        }
    };
    let (engine, _events) =
        ProcessingEngine::new(config(16, ProcessingOrder::Key), handler).expect("engine");
    engine.add_partitions([tp(0)]);
    let keys = ["a", "b", "c", "d"];
    let batch: Vec<Record> = (0..200)
        .map(|o| keyed(o, keys[(o as usize * 7 + 3) % 4]))
        .collect();
    let expected: HashMap<Bytes, Vec<i64>> = batch.iter().fold(HashMap::new(), |mut m, r| {
        m.entry(r.key.clone().unwrap_or_default())
            .or_default()
            .push(r.offset);
        m
    });
    engine.submit(&tp(0), batch).expect("submit");
    assert!(engine.drained(LONG).await);
    assert_eq!(
        *log.lock().expect("lock"),
        expected,
        "each key in offset order"
    );
    assert_eq!(
        conc.max_per_partition.load(AtomicOrdering::SeqCst),
        4,
        "the four keys ran at once inside one partition"
    );
    assert_eq!(engine.committable_offset(&tp(0)), Some(200));
}

#[tokio::test(start_paused = true)]
async fn key_mode_commit_waits_for_the_slow_key() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let done: Log = Arc::default();
    let (engine, _events) = ProcessingEngine::new(
        config(8, ProcessingOrder::Key),
        gated_handler(gates.clone(), started_tx, Arc::clone(&done)),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    gates.close(0, 1);
    // Offsets 0..6, keys: a b a b c c; "b"@1 hangs.
    let batch = vec![
        keyed(0, "a"),
        keyed(1, "b"),
        keyed(2, "a"),
        keyed(3, "b"),
        keyed(4, "c"),
        keyed(5, "c"),
    ];
    engine.submit(&tp(0), batch).expect("submit");
    // Everything but b's records finishes; the commit stays at b@1.
    let mut seen = Vec::new();
    while seen.len() < 5 {
        seen.push(next_start(&mut started).await.1);
    }
    seen.sort();
    assert_eq!(seen, vec![0, 1, 2, 4, 5], "b@3 waits behind b@1");
    while done.lock().expect("lock").get(&0).map_or(0, Vec::len) < 4 {
        tokio::task::yield_now().await;
    }
    assert_eq!(engine.committable_offset(&tp(0)), Some(1));
    gates.open(0, 1);
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offset(&tp(0)), Some(6));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Random latencies, concurrency, partitions and batch splits: every partition completes in
    /// offset order, the bound holds, and the final committable offsets are the ends.
    #[test]
    fn ordering_and_bound_hold_for_random_runs(
        seed in proptest::prelude::any::<u64>(),
        concurrency in 1usize..6,
        partitions in 1i32..5,
        per_partition in 1i64..40,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime");
        rt.block_on(async {
            let (conc, log, engine) =
                run_random_latencies(seed, concurrency, ProcessingOrder::Partition, partitions, per_partition).await;
            assert!(conc.max.load(AtomicOrdering::SeqCst) <= concurrency);
            assert_eq!(conc.max_per_partition.load(AtomicOrdering::SeqCst), 1);
            for offsets in log.lock().expect("lock").values() {
                assert_eq!(*offsets, (0..per_partition).collect::<Vec<_>>());
            }
            for p in 0..partitions {
                assert_eq!(engine.committable_offset(&tp(p)), Some(per_partition));
            }
        });
    }
}

#[tokio::test(start_paused = true)]
async fn records_their_submits_started_stay_within_the_bound() {
    // Two submits find partition 0 idle and each start a record with a permit of its own; when
    // the first ends while other partitions wait for permits, the second still holds one.
    let gates = Gates::default();
    let conc = Arc::new(Concurrency::default());
    let (started_tx, mut started) = mpsc::channel(64);
    let handler = {
        let (gates, conc) = (gates.clone(), Arc::clone(&conc));
        move |r: ConsumerRecord| {
            let (gates, conc, started) = (gates.clone(), Arc::clone(&conc), started_tx.clone());
            async move {
                conc.enter(r.partition());
                let _ = started.send((r.partition(), r.offset())).await;
                gates.pass(r.partition(), r.offset()).await;
                conc.exit(r.partition());
                Ok::<(), String>(())
            }
        }
    };
    let (engine, _events) =
        ProcessingEngine::new(config(2, ProcessingOrder::Partition), handler).expect("engine");
    engine.add_partitions((0..3).map(tp));
    for (p, o) in [(0, 0), (0, 1), (1, 0), (2, 0)] {
        gates.close(p, o);
        engine.submit(&tp(p), records(o..o + 1)).expect("submit");
    }
    assert_eq!(next_start(&mut started).await, (0, 0));
    gates.open(0, 0);
    let mut now = vec![
        next_start(&mut started).await,
        next_start(&mut started).await,
    ];
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(
        conc.max.load(AtomicOrdering::SeqCst),
        2,
        "running past the bound"
    );
    // The rest in turn: each gate opened lets the last one start.
    while let Some((p, o)) = now.pop() {
        gates.open(p, o);
        if let Ok(Some(next)) = tokio::time::timeout(Duration::from_secs(1), started.recv()).await {
            now.push(next);
        }
    }
    assert!(engine.drained(LONG).await);
    assert_eq!(conc.max.load(AtomicOrdering::SeqCst), 2);
    for p in 0..3 {
        assert!(engine.committable_offset(&tp(p)).is_some_and(|c| c >= 1));
    }
    assert_eq!(engine.committable_offset(&tp(0)), Some(2));
}

// ---- commit tracking, revoke, loss, shutdown ----------------------------------------------------

#[tokio::test(start_paused = true)]
async fn commit_never_passes_an_unfinished_record() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let done: Log = Arc::default();
    let (engine, _events) = ProcessingEngine::new(
        config(4, ProcessingOrder::None),
        gated_handler(gates.clone(), started_tx, Arc::clone(&done)),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    for o in 0..4 {
        gates.close(0, o);
    }
    engine.submit(&tp(0), records(0..4)).expect("submit");
    for _ in 0..4 {
        next_start(&mut started).await;
    }
    assert_eq!(engine.committable_offset(&tp(0)), Some(0));
    for o in [3, 1, 2] {
        gates.open(0, o);
    }
    while done.lock().expect("lock").get(&0).map_or(0, Vec::len) < 3 {
        tokio::task::yield_now().await;
    }
    assert_eq!(engine.committable_offset(&tp(0)), Some(0), "0 still runs");
    gates.open(0, 0);
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offsets(), BTreeMap::from([(tp(0), 4)]));
}

#[tokio::test(start_paused = true)]
async fn stop_partitions_waits_for_in_flight_and_returns_exact_offsets() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let done: Log = Arc::default();
    let (engine, _events) = ProcessingEngine::new(
        config(8, ProcessingOrder::None),
        gated_handler(gates.clone(), started_tx, Arc::clone(&done)),
    )
    .expect("engine");
    engine.add_partitions([tp(0), tp(1)]);
    // Partition 0: offsets 10..14 start (concurrency 8 shared), 10 and 12 hold.
    gates.close(0, 10);
    gates.close(0, 12);
    engine.submit(&tp(0), records(10..14)).expect("submit");
    for _ in 0..4 {
        next_start(&mut started).await;
    }
    while done.lock().expect("lock").get(&0).map_or(0, Vec::len) < 2 {
        tokio::task::yield_now().await;
    }
    // More records arrive but the partition is being revoked: they are discarded unstarted.
    let stopper = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.stop_partitions([tp(0)], LONG).await })
    };
    tokio::task::yield_now().await;
    engine
        .submit(&tp(1), records(0..1))
        .expect("partition 1 unaffected");
    assert_eq!(
        engine.committable_offsets().keys().collect::<Vec<_>>(),
        vec![&tp(1)],
        "a partition being revoked has nothing to commit outside its stop report"
    );
    assert!(matches!(
        engine.submit(&tp(0), records(14..20)),
        Err(SubmitError::UnknownPartition(_))
    ));
    gates.open(0, 12);
    tokio::task::yield_now().await;
    tokio::task::yield_now().await;
    assert!(!stopper.is_finished(), "10 is still running");
    // Partition 1 keeps working during the revoke of partition 0 (cooperative).
    engine
        .submit(&tp(1), records(1..3))
        .expect("partition 1 unaffected");
    gates.open(0, 10);
    let report = tokio::time::timeout(LONG, stopper)
        .await
        .expect("stop ends")
        .expect("task");
    assert_eq!(report.committable, BTreeMap::from([(tp(0), 14)]));
    assert!(report.timed_out.is_empty());
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offsets(), BTreeMap::from([(tp(1), 3)]));
    let finished = done.lock().expect("lock").clone();
    assert!(
        finished[&0].iter().all(|o| *o < 14),
        "nothing of the revoked tail ran"
    );
}

#[tokio::test(start_paused = true)]
async fn stop_partitions_discards_unstarted_records_and_is_bounded() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let done: Log = Arc::default();
    let (engine, _events) = ProcessingEngine::new(
        config(4, ProcessingOrder::Partition),
        gated_handler(gates.clone(), started_tx, Arc::clone(&done)),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    gates.close(0, 2);
    engine.submit(&tp(0), records(0..10)).expect("submit");
    while next_start(&mut started).await.1 != 2 {}
    let t0 = tokio::time::Instant::now();
    let report = engine
        .stop_partitions([tp(0)], Duration::from_secs(5))
        .await;
    assert_eq!(tokio::time::Instant::now() - t0, Duration::from_secs(5));
    assert_eq!(report.committable, BTreeMap::from([(tp(0), 2)]));
    assert_eq!(report.timed_out, vec![tp(0)]);
    assert_eq!(engine.metrics().discarded_total, 7);
    // The straggler finishing later changes nothing, and the partition can come back fresh.
    gates.open(0, 2);
    assert!(engine.drained(LONG).await);
    engine.add_partitions([tp(0)]);
    gates.open(0, 2);
    engine
        .submit(&tp(0), records(2..4))
        .expect("fresh incarnation");
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offset(&tp(0)), Some(4));
}

#[tokio::test(start_paused = true)]
async fn drop_partitions_forgets_without_committing() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let (engine, _events) = ProcessingEngine::new(
        config(2, ProcessingOrder::Partition),
        gated_handler(gates.clone(), started_tx, Arc::default()),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    gates.close(0, 0);
    engine.submit(&tp(0), records(0..5)).expect("submit");
    next_start(&mut started).await;
    assert_eq!(engine.drop_partitions([tp(0)]), 4);
    assert!(engine.committable_offsets().is_empty());
    assert_eq!(engine.committable_offset(&tp(0)), None);
    gates.open(0, 0);
    assert!(engine.drained(LONG).await);
    assert!(engine.committable_offsets().is_empty());
}

#[tokio::test(start_paused = true)]
async fn shutdown_drains_in_flight_and_closes() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let (engine, _events) = ProcessingEngine::new(
        config(2, ProcessingOrder::Partition),
        gated_handler(gates.clone(), started_tx, Arc::default()),
    )
    .expect("engine");
    engine.add_partitions([tp(0), tp(1)]);
    gates.close(0, 1);
    engine.submit(&tp(0), records(0..4)).expect("submit");
    engine.submit(&tp(1), records(0..1)).expect("submit");
    while next_start(&mut started).await != (0, 1) {}
    let shutdown = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.shutdown(LONG).await })
    };
    tokio::task::yield_now().await;
    assert_eq!(
        engine.submit(&tp(1), records(1..2)),
        Err(SubmitError::Closed)
    );
    gates.open(0, 1);
    let report = shutdown.await.expect("task");
    assert_eq!(report.committable, BTreeMap::from([(tp(0), 2), (tp(1), 1)]));
    assert!(report.timed_out.is_empty());
}

#[tokio::test(start_paused = true)]
async fn cooperative_add_keeps_partitions_that_stay() {
    let (engine, _events) = ProcessingEngine::new(
        config(2, ProcessingOrder::Partition),
        |_r: ConsumerRecord| async { Ok::<(), String>(()) },
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..3)).expect("submit");
    assert!(engine.drained(LONG).await);
    engine.add_partitions([tp(0), tp(1)]);
    assert_eq!(engine.committable_offset(&tp(0)), Some(3), "state kept");
    assert_eq!(
        engine.submit(&tp(0), records(1..2)),
        Err(SubmitError::OffsetNotIncreasing {
            partition: tp(0),
            offset: 1,
            last: 2
        })
    );
    assert_eq!(
        engine.submit(&tp(7), records(0..1)),
        Err(SubmitError::UnknownPartition(tp(7)))
    );
}

// ---- backpressure ---------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn slow_handler_pauses_then_resumes_the_partition() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let cfg = ProcessingConfig {
        max_buffered_records: 10,
        resume_buffered_records: 4,
        ..config(1, ProcessingOrder::Partition)
    };
    let (engine, mut events) = ProcessingEngine::new(
        cfg,
        gated_handler(gates.clone(), started_tx, Arc::default()),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    for o in 0..20 {
        gates.close(0, o);
    }
    let s = engine.submit(&tp(0), records(0..6)).expect("submit");
    assert_eq!((s.accepted, s.paused_by_backpressure), (6, false));
    let s = engine.submit(&tp(0), records(6..15)).expect("submit");
    assert_eq!(s.accepted, 4, "the window holds 10 records");
    assert_eq!(s.rejected.first().map(|r| r.offset), Some(10));
    assert!(s.paused_by_backpressure);
    assert_eq!(engine.backpressured_partitions(), vec![tp(0)]);
    let evs = drain_events(&mut events);
    assert!(
        matches!(&evs[..], [ProcessingEvent::BackpressurePause { partition, window_records: 10, .. }] if *partition == tp(0)),
        "{evs:?}"
    );
    // The slow handler finishes records one by one; at 4 left the partition resumes.
    for o in 0..6 {
        assert_eq!(next_start(&mut started).await, (0, o));
        assert!(
            engine.backpressured_partitions() == vec![tp(0)],
            "still paused at {o}"
        );
        gates.open(0, o);
    }
    assert_eq!(next_start(&mut started).await, (0, 6));
    assert!(engine.backpressured_partitions().is_empty());
    let evs = drain_events(&mut events);
    assert!(
        matches!(
            &evs[..],
            [ProcessingEvent::BackpressureResume {
                window_records: 4,
                ..
            }]
        ),
        "{evs:?}"
    );
    let s = engine.submit(&tp(0), records(10..12)).expect("fetch again");
    assert_eq!(s.accepted, 2);
    for o in 6..12 {
        gates.open(0, o);
    }
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offset(&tp(0)), Some(12));
}

#[tokio::test(start_paused = true)]
async fn byte_bound_pauses_too_and_a_huge_record_still_fits_an_empty_buffer() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let cfg = ProcessingConfig {
        max_buffered_bytes: 100,
        resume_buffered_bytes: 50,
        ..config(1, ProcessingOrder::Partition)
    };
    let (engine, mut events) = ProcessingEngine::new(
        cfg,
        gated_handler(gates.clone(), started_tx, Arc::default()),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    gates.close(0, 0);
    let big = |o| Record::new(o, 0, None, Some(Bytes::from(vec![0u8; 300])));
    // Offset 0 starts at once (not buffered); offset 1 is 300 bytes into an empty buffer.
    engine.submit(&tp(0), vec![big(0)]).expect("submit");
    next_start(&mut started).await;
    let s = engine.submit(&tp(0), vec![big(1), big(2)]).expect("submit");
    assert_eq!(s.accepted, 1);
    assert!(s.paused_by_backpressure);
    assert!(matches!(
        drain_events(&mut events)[..],
        [ProcessingEvent::BackpressurePause {
            buffered_bytes: 300,
            ..
        }]
    ));
    gates.open(0, 0);
    assert!(engine.drained(LONG).await);
    assert!(matches!(
        drain_events(&mut events)[..],
        [ProcessingEvent::BackpressureResume { .. }]
    ));
}

// ---- max.poll.interval.ms -------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn watchdog_reports_a_handler_past_max_poll_interval_once() {
    let gates = Gates::default();
    let (started_tx, mut started) = mpsc::channel(64);
    let cfg = ProcessingConfig {
        max_poll_interval: Duration::from_secs(30),
        ..config(2, ProcessingOrder::Partition)
    };
    let (engine, mut events) = ProcessingEngine::new(
        cfg,
        gated_handler(gates.clone(), started_tx, Arc::default()),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    gates.close(0, 5);
    engine.submit(&tp(0), records(5..6)).expect("submit");
    next_start(&mut started).await;
    tokio::time::advance(Duration::from_secs(29)).await;
    assert!(drain_events(&mut events).is_empty());
    let event = tokio::time::timeout(LONG, events.recv())
        .await
        .expect("event")
        .expect("open");
    match event {
        ProcessingEvent::PollIntervalExceeded {
            partition,
            offset,
            elapsed,
        } => {
            assert_eq!((partition, offset), (tp(0), 5));
            assert!(elapsed >= Duration::from_secs(30));
            assert!(
                elapsed <= Duration::from_secs(31),
                "within one watchdog period"
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    tokio::time::advance(Duration::from_secs(120)).await;
    let m = engine.metrics();
    assert_eq!(m.poll_interval_exceeded_total, 1, "reported once");
    assert_eq!(m.overdue.len(), 1);
    assert!(drain_events(&mut events).is_empty());
    gates.open(0, 5);
    assert!(engine.drained(LONG).await);
    assert!(engine.metrics().overdue.is_empty());
}

// ---- failure policies -------------------------------------------------------------------------------

fn failing_at(
    bad: i64,
    failures: usize,
    calls: Arc<AtomicUsize>,
) -> impl Fn(ConsumerRecord) -> HandlerFuture + Send + Sync + 'static {
    move |r: ConsumerRecord| {
        let calls = Arc::clone(&calls);
        Box::pin(async move {
            if r.offset() == bad && calls.fetch_add(1, AtomicOrdering::SeqCst) < failures {
                return Err(format!("cannot process {}", r.offset()));
            }
            Ok(())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn default_policy_stops_and_never_commits_past_the_failure() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (engine, mut events) = ProcessingEngine::new(
        config(4, ProcessingOrder::Partition),
        failing_at(2, usize::MAX, Arc::clone(&calls)),
    )
    .expect("engine");
    engine.add_partitions([tp(0), tp(1)]);
    engine.submit(&tp(0), records(0..6)).expect("submit");
    assert!(engine.drained(LONG).await);
    let failure = engine.failure().expect("failure kept");
    assert_eq!(
        (failure.partition, failure.offset, failure.attempts),
        (tp(0), 2, 1)
    );
    assert_eq!(failure.error.to_string(), "cannot process 2");
    assert_eq!(engine.committable_offset(&tp(0)), Some(2));
    assert!(matches!(
        &drain_events(&mut events)[..],
        [ProcessingEvent::HandlerFailed {
            offset: 2,
            action: FailureAction::Stop,
            ..
        }]
    ));
    // Dispatch has stopped for every partition.
    engine
        .submit(&tp(1), records(0..1))
        .expect("accepted into the buffer");
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offset(&tp(1)), Some(0));
    assert!(engine.metrics().halted);
}

#[tokio::test(start_paused = true)]
async fn skip_policy_counts_and_reports() {
    let calls = Arc::new(AtomicUsize::new(0));
    let cfg = ProcessingConfig {
        failure_policy: FailurePolicy::skip(),
        ..config(4, ProcessingOrder::Partition)
    };
    let (engine, mut events) =
        ProcessingEngine::new(cfg, failing_at(2, usize::MAX, Arc::clone(&calls))).expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..6)).expect("submit");
    assert!(engine.drained(LONG).await);
    assert!(engine.failure().is_none());
    assert_eq!(engine.committable_offset(&tp(0)), Some(6));
    let m = engine.metrics();
    assert_eq!(
        (m.skipped_total, m.failed_total, m.completed_total),
        (1, 1, 5)
    );
    assert!(matches!(
        &drain_events(&mut events)[..],
        [ProcessingEvent::HandlerFailed {
            offset: 2,
            action: FailureAction::Skip,
            ..
        }]
    ));
}

#[tokio::test(start_paused = true)]
async fn retry_policy_backs_off_then_succeeds_or_gives_up() {
    // Fails twice, then succeeds on the third attempt.
    let calls = Arc::new(AtomicUsize::new(0));
    let cfg = ProcessingConfig {
        failure_policy: FailurePolicy::retry(3, Duration::from_millis(100), OnFailure::Stop),
        ..config(4, ProcessingOrder::Partition)
    };
    let (engine, mut events) =
        ProcessingEngine::new(cfg.clone(), failing_at(1, 2, Arc::clone(&calls))).expect("engine");
    engine.add_partitions([tp(0)]);
    let t0 = tokio::time::Instant::now();
    engine.submit(&tp(0), records(0..3)).expect("submit");
    assert!(engine.drained(LONG).await);
    assert_eq!(
        tokio::time::Instant::now() - t0,
        Duration::from_millis(300),
        "100 + 200 ms"
    );
    assert_eq!(engine.committable_offset(&tp(0)), Some(3));
    assert_eq!(engine.metrics().retries_total, 2);
    let afters: Vec<Duration> = drain_events(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            ProcessingEvent::HandlerFailed {
                action: FailureAction::Retry { after },
                ..
            } => Some(after),
            _ => None,
        })
        .collect();
    assert_eq!(
        afters,
        vec![Duration::from_millis(100), Duration::from_millis(200)]
    );

    // Always fails: 1 + 3 attempts, then skipped.
    let calls = Arc::new(AtomicUsize::new(0));
    let cfg = ProcessingConfig {
        failure_policy: FailurePolicy::retry(3, Duration::from_millis(100), OnFailure::Skip),
        ..cfg
    };
    let (engine, _events) =
        ProcessingEngine::new(cfg, failing_at(1, usize::MAX, Arc::clone(&calls))).expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..3)).expect("submit");
    assert!(engine.drained(LONG).await);
    assert_eq!(calls.load(AtomicOrdering::SeqCst), 4);
    assert_eq!(engine.metrics().skipped_total, 1);
    assert_eq!(engine.committable_offset(&tp(0)), Some(3));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_handler_is_a_failure_not_a_leak() {
    let (engine, _events) = ProcessingEngine::new(
        config(1, ProcessingOrder::Partition),
        |r: ConsumerRecord| async move {
            if r.offset() == 1 {
                panic!("boom");
            }
            Ok::<(), String>(())
        },
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..3)).expect("submit");
    assert!(engine.drained(LONG).await);
    let failure = engine.failure().expect("failure");
    assert_eq!(failure.offset, 1);
    assert!(failure.error.downcast_ref::<HandlerPanicked>().is_some());
    assert_eq!(engine.committable_offset(&tp(0)), Some(1));
    assert_eq!(engine.metrics().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn invalid_config_is_refused_outside_and_inside_a_runtime() {
    let bad = ProcessingConfig {
        resume_buffered_records: 2000,
        ..ProcessingConfig::default()
    };
    let r = ProcessingEngine::new(bad, |_r: ConsumerRecord| async { Ok::<(), String>(()) });
    assert!(matches!(
        r,
        Err(mooring_consumer::processing::EngineError::InvalidConfig {
            field: "resume_buffered_records",
            ..
        })
    ));
}

#[test]
fn engine_needs_a_runtime() {
    let r = ProcessingEngine::new(ProcessingConfig::default(), |_r: ConsumerRecord| async {
        Ok::<(), String>(())
    });
    assert!(matches!(
        r,
        Err(mooring_consumer::processing::EngineError::NoRuntime)
    ));
}

// ---- real threads -------------------------------------------------------------------------------

/// The same guarantees with handlers on two worker threads (no clock involved: handlers yield).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guarantees_hold_on_a_multi_thread_runtime() {
    let conc = Arc::new(Concurrency::default());
    let log: Log = Arc::default();
    let (c, l) = (Arc::clone(&conc), Arc::clone(&log));
    let handler = move |r: ConsumerRecord| {
        let (c, l) = (Arc::clone(&c), Arc::clone(&l));
        async move {
            c.enter(r.partition());
            for _ in 0..(r.offset() % 5) {
                tokio::task::yield_now().await;
            }
            l.lock()
                .expect("lock")
                .entry(r.partition())
                .or_default()
                .push(r.offset());
            c.exit(r.partition());
            Ok::<(), String>(())
        }
    };
    let (engine, _events) =
        ProcessingEngine::new(config(3, ProcessingOrder::Partition), handler).expect("engine");
    engine.add_partitions((0..8).map(tp));
    for chunk in 0..10 {
        for p in 0..8 {
            let s = engine
                .submit(&tp(p), records(chunk * 20..(chunk + 1) * 20))
                .expect("submit");
            assert!(s.rejected.is_empty());
        }
        tokio::task::yield_now().await;
    }
    assert!(engine.drained(Duration::from_secs(60)).await);
    assert!(conc.max.load(AtomicOrdering::SeqCst) <= 3);
    assert_eq!(conc.max_per_partition.load(AtomicOrdering::SeqCst), 1);
    for offsets in log.lock().expect("lock").values() {
        assert_eq!(*offsets, (0..200).collect::<Vec<_>>());
    }
    let report = engine.shutdown(Duration::from_secs(60)).await;
    assert_eq!(report.committable, (0..8).map(|p| (tp(p), 200)).collect());
}

#[tokio::test(start_paused = true)]
async fn records_take_their_batchs_header_facts() {
    use mooring_consumer::processing::{BatchInfo, FetchedBatch, FetchedRecords, TimestampType};

    type Facts = (i64, i64, TimestampType, Option<i32>);
    let seen: Arc<Mutex<Vec<Facts>>> = Arc::default();
    let log = Arc::clone(&seen);
    let handler = move |r: ConsumerRecord| {
        let log = Arc::clone(&log);
        async move {
            let facts = (
                r.offset(),
                r.timestamp(),
                r.timestamp_type(),
                r.leader_epoch(),
            );
            log.lock().expect("lock").push(facts);
            Ok::<(), String>(())
        }
    };
    let (engine, _events) =
        ProcessingEngine::new(ProcessingConfig::default(), handler).expect("engine");
    engine.add_partitions([tp(0)]);
    let appended = BatchInfo {
        timestamp_type: TimestampType::LogAppendTime,
        max_timestamp: 9_000,
        partition_leader_epoch: 3,
    };
    let created = BatchInfo {
        partition_leader_epoch: 4,
        ..BatchInfo::default()
    };
    // Batches [0, 2] (log-append time) and [3, 6] (create time); offset 1 compacted away.
    let batch: Vec<Record> = [0, 2, 3, 6]
        .into_iter()
        .map(|o| Record::new(o, 100 + o, None, None))
        .collect();
    engine
        .submit_fetched(
            &tp(0),
            FetchedRecords {
                records: batch,
                batches: vec![
                    FetchedBatch {
                        last_offset: 2,
                        info: appended,
                    },
                    FetchedBatch {
                        last_offset: 6,
                        info: created,
                    },
                ],
            },
        )
        .expect("accepted");
    // Without batches (a plain submit): create time, no epoch.
    engine
        .submit(&tp(0), vec![Record::new(7, 107, None, None)])
        .expect("accepted");
    assert!(engine.drained(LONG).await);
    let create = TimestampType::CreateTime;
    assert_eq!(
        *seen.lock().expect("lock"),
        [
            (0, 9_000, TimestampType::LogAppendTime, Some(3)),
            (2, 9_000, TimestampType::LogAppendTime, Some(3)),
            (3, 103, create, Some(4)),
            (6, 106, create, Some(4)),
            (7, 107, create, None),
        ]
    );
}
