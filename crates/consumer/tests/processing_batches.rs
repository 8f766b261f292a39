//! The processing engine with a batch handler ([`Batches`]), through its public API, on Tokio's
//! paused clock: what a batch is (one partition's queued records, contiguous, in offset order,
//! capped), that its commit is one unit, the failure policies applied to the whole batch, and the
//! bounds the per-record path has (concurrency, watchdog, revoke, shutdown, backpressure).

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mooring_consumer::processing::{
    Batch, Batches, EngineError, FailureAction, FailurePolicy, HandlerPanicked, OnFailure,
    ProcessingConfig, ProcessingEngine, ProcessingEvent, ProcessingEvents, ProcessingOrder,
};
use mooring_consumer::TopicPartition;
use mooring_wire::records::Record;
use tokio::sync::{mpsc, Semaphore};

/// Generous bound for waits that must end; a hang fails instead of spinning the paused clock.
const LONG: Duration = Duration::from_secs(24 * 3600);

type HandlerFuture = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn rec(offset: i64) -> Record {
    Record::new(offset, 0, None, Some(Bytes::from_static(b"value")))
}

fn records(offsets: impl IntoIterator<Item = i64>) -> Vec<Record> {
    offsets.into_iter().map(rec).collect()
}

fn config(concurrency: usize, max_batch_records: usize) -> ProcessingConfig {
    ProcessingConfig {
        concurrency,
        max_batch_records,
        ..ProcessingConfig::default()
    }
}

fn drain_events(events: &mut ProcessingEvents) -> Vec<ProcessingEvent> {
    std::iter::from_fn(|| events.try_recv().ok()).collect()
}

/// A batch as the handler saw it: partition and offsets.
type Seen = (i32, Vec<i64>);

/// Gates by (partition, first offset).
type GateMap = HashMap<(i32, i64), Arc<Semaphore>>;

/// Per-batch gates, keyed by (partition, first offset): a gated batch's handler waits until the
/// test opens its gate. Counts batches running at once.
#[derive(Clone, Default)]
struct World {
    gates: Arc<Mutex<GateMap>>,
    done: Arc<Mutex<Vec<Seen>>>,
    running: Arc<AtomicUsize>,
    max_running: Arc<AtomicUsize>,
    per_partition: Arc<Mutex<HashMap<i32, usize>>>,
    max_per_partition: Arc<AtomicUsize>,
}

impl World {
    fn close(&self, partition: i32, first: i64) {
        self.gates
            .lock()
            .expect("lock")
            .insert((partition, first), Arc::new(Semaphore::new(0)));
    }

    fn open(&self, partition: i32, first: i64) {
        if let Some(g) = self.gates.lock().expect("lock").get(&(partition, first)) {
            g.add_permits(1);
        }
    }

    fn done(&self) -> Vec<Seen> {
        self.done.lock().expect("lock").clone()
    }

    /// Every offset handled, per partition, in the order handled.
    fn offsets(&self) -> BTreeMap<i32, Vec<i64>> {
        let mut all: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
        for (p, offsets) in self.done() {
            all.entry(p).or_default().extend(offsets);
        }
        all
    }

    /// A handler that reports each batch's start, waits at its gate, then logs it.
    fn handler(
        &self,
        started: mpsc::UnboundedSender<Seen>,
    ) -> Batches<impl Fn(Batch) -> HandlerFuture + Send + Sync + 'static> {
        let world = self.clone();
        Batches(move |batch: Batch| -> HandlerFuture {
            let world = world.clone();
            let started = started.clone();
            Box::pin(async move {
                let p = batch.partition().partition;
                let offsets: Vec<i64> = batch.iter().map(|r| r.offset()).collect();
                assert_eq!(
                    (batch.first_offset(), batch.last_offset(), batch.len()),
                    (offsets[0], offsets[offsets.len() - 1], offsets.len())
                );
                assert!(batch.iter().all(|r| r.partition() == p && r.topic() == "t"));
                let n = world.running.fetch_add(1, AtomicOrdering::SeqCst) + 1;
                world.max_running.fetch_max(n, AtomicOrdering::SeqCst);
                let per = {
                    let mut per = world.per_partition.lock().expect("lock");
                    let e = per.entry(p).or_default();
                    *e += 1;
                    *e
                };
                world
                    .max_per_partition
                    .fetch_max(per, AtomicOrdering::SeqCst);
                let _ = started.send((p, offsets.clone()));
                let gate = world
                    .gates
                    .lock()
                    .expect("lock")
                    .get(&(p, batch.first_offset()))
                    .cloned();
                if let Some(g) = gate {
                    g.acquire().await.expect("gate").forget();
                }
                world.running.fetch_sub(1, AtomicOrdering::SeqCst);
                *world
                    .per_partition
                    .lock()
                    .expect("lock")
                    .entry(p)
                    .or_default() -= 1;
                world.done.lock().expect("lock").push((p, offsets));
                Ok(())
            })
        })
    }
}

async fn next_start(started: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    tokio::time::timeout(LONG, started.recv())
        .await
        .expect("a batch starts")
        .expect("channel open")
}

// ---- what a batch is ----------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn batches_are_one_partitions_contiguous_records_in_order_and_capped() {
    let world = World::default();
    let (started, _starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(2, 7), world.handler(started)).expect("engine");
    engine.add_partitions((0..3).map(tp));
    // Offsets with log gaps (every fifth offset missing, as after compaction), in fetches of
    // varying sizes.
    let offsets: Vec<i64> = (0..200).filter(|o| o % 5 != 4).collect();
    for p in 0..3 {
        let mut rest = &offsets[..];
        let mut size = 1 + p as usize;
        while !rest.is_empty() {
            let (now, later) = rest.split_at(size.min(rest.len()));
            engine
                .submit(&tp(p), records(now.iter().copied()))
                .expect("submit");
            rest = later;
            size = size % 11 + 3;
            tokio::task::yield_now().await;
        }
    }
    assert!(engine.drained(LONG).await);
    for (p, batch) in world.done() {
        assert!(!batch.is_empty() && batch.len() <= 7, "{p}: {batch:?}");
        // Contiguous in what was submitted: consecutive entries of the submitted offsets.
        let at = offsets.binary_search(&batch[0]).expect("submitted");
        assert_eq!(batch[..], offsets[at..at + batch.len()], "partition {p}");
    }
    for p in 0..3 {
        assert_eq!(
            world.offsets()[&p],
            offsets,
            "partition {p}: each once, in order"
        );
        assert_eq!(engine.committable_offset(&tp(p)), Some(199));
    }
    assert_eq!(world.max_per_partition.load(AtomicOrdering::SeqCst), 1);
    assert!(world.max_running.load(AtomicOrdering::SeqCst) <= 2);
    let m = engine.metrics();
    assert_eq!(
        m.completed_total,
        3 * offsets.len() as u64,
        "counted per record"
    );
    assert_eq!(
        m.handler_latency.count(),
        world.done().len() as u64,
        "one per call"
    );
}

#[tokio::test(start_paused = true)]
async fn a_batch_is_everything_queued_when_it_starts() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(4, 500), world.handler(started)).expect("engine");
    engine.add_partitions([tp(0)]);
    world.close(0, 0);
    // Three fetches before the lane looks: one batch. Each found the lane idle and started its
    // first record with a permit of its own; the batch keeps one.
    for o in 0..3 {
        engine.submit(&tp(0), records(o..o + 1)).expect("submit");
    }
    assert_eq!(next_start(&mut starts).await, (0, vec![0, 1, 2]));
    assert_eq!(engine.metrics().in_flight, 1);
    // Three more fetches while the first batch runs: the next batch takes all of them.
    for range in [3..5, 5..6, 6..10] {
        engine.submit(&tp(0), records(range)).expect("submit");
    }
    tokio::task::yield_now().await;
    assert_eq!(engine.committable_offset(&tp(0)), Some(0));
    world.open(0, 0);
    assert_eq!(next_start(&mut starts).await, (0, (3..10).collect()));
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offset(&tp(0)), Some(10));
}

#[tokio::test(start_paused = true)]
async fn the_cap_splits_what_is_queued_into_consecutive_batches() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(1, 4), world.handler(started)).expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..10)).expect("submit");
    assert!(engine.drained(LONG).await);
    let mut batches = Vec::new();
    while let Ok(b) = starts.try_recv() {
        batches.push(b.1);
    }
    assert_eq!(
        batches,
        vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7], vec![8, 9]]
    );
}

// ---- commit tracking ----------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_commit_moves_past_a_batch_only_when_it_succeeded() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(4, 3), world.handler(started)).expect("engine");
    engine.add_partitions([tp(0)]);
    world.close(0, 10);
    world.close(0, 13);
    engine.submit(&tp(0), records(10..16)).expect("submit");
    assert_eq!(next_start(&mut starts).await, (0, vec![10, 11, 12]));
    assert_eq!(
        engine.committable_offset(&tp(0)),
        Some(10),
        "a running batch"
    );
    world.open(0, 10);
    assert_eq!(next_start(&mut starts).await, (0, vec![13, 14, 15]));
    assert_eq!(engine.committable_offset(&tp(0)), Some(13));
    let m = engine.metrics();
    assert_eq!(
        (m.partitions[0].in_flight, m.partitions[0].window_records),
        (1, 3),
        "the running batch stays in the window"
    );
    world.open(0, 13);
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offset(&tp(0)), Some(16));
}

// ---- failure policies ----------------------------------------------------------------------------

/// A batch handler that fails every call for a batch containing `bad` (the first `failures`
/// times), counting calls and logging each call's offsets.
fn failing_at(
    bad: i64,
    failures: usize,
    calls: Arc<Mutex<Vec<Vec<i64>>>>,
) -> Batches<impl Fn(Batch) -> HandlerFuture + Send + Sync + 'static> {
    let failed = Arc::new(AtomicUsize::new(0));
    Batches(move |batch: Batch| -> HandlerFuture {
        let (calls, failed) = (Arc::clone(&calls), Arc::clone(&failed));
        Box::pin(async move {
            let offsets: Vec<i64> = batch.iter().map(|r| r.offset()).collect();
            calls.lock().expect("lock").push(offsets.clone());
            if offsets.contains(&bad) && failed.fetch_add(1, AtomicOrdering::SeqCst) < failures {
                return Err(format!("cannot load {offsets:?}"));
            }
            Ok(())
        })
    })
}

#[tokio::test(start_paused = true)]
async fn stop_keeps_the_whole_batch_uncommitted_and_halts() {
    let calls = Arc::default();
    let (engine, mut events) =
        ProcessingEngine::new(config(4, 3), failing_at(4, usize::MAX, Arc::clone(&calls)))
            .expect("engine");
    engine.add_partitions([tp(0), tp(1)]);
    engine.submit(&tp(0), records(0..9)).expect("submit");
    assert!(engine.drained(LONG).await);
    assert_eq!(
        *calls.lock().expect("lock"),
        vec![vec![0, 1, 2], vec![3, 4, 5]]
    );
    let failure = engine.failure().expect("failure kept");
    assert_eq!(
        (failure.partition, failure.offset, failure.attempts),
        (tp(0), 3, 1),
        "at the batch's first offset"
    );
    assert_eq!(engine.committable_offset(&tp(0)), Some(3));
    assert!(matches!(
        &drain_events(&mut events)[..],
        [ProcessingEvent::HandlerFailed {
            offset: 3,
            action: FailureAction::Stop,
            ..
        }]
    ));
    // Dispatch has stopped for every partition.
    engine.submit(&tp(1), records(0..2)).expect("buffered");
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.committable_offset(&tp(1)), Some(0));
    assert_eq!(calls.lock().expect("lock").len(), 2);
    let m = engine.metrics();
    assert!(m.halted);
    assert_eq!((m.completed_total, m.failed_total), (3, 1));
}

#[tokio::test(start_paused = true)]
async fn skip_skips_the_whole_batch_counted_per_record() {
    let calls = Arc::default();
    let cfg = ProcessingConfig {
        failure_policy: FailurePolicy::skip(),
        ..config(4, 3)
    };
    let (engine, mut events) =
        ProcessingEngine::new(cfg, failing_at(4, usize::MAX, Arc::clone(&calls))).expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..9)).expect("submit");
    assert!(engine.drained(LONG).await);
    assert_eq!(calls.lock().expect("lock").len(), 3, "one call per batch");
    assert!(engine.failure().is_none());
    assert_eq!(engine.committable_offset(&tp(0)), Some(9));
    let m = engine.metrics();
    assert_eq!(
        (m.skipped_total, m.failed_total, m.completed_total),
        (3, 1, 6)
    );
    assert!(matches!(
        &drain_events(&mut events)[..],
        [ProcessingEvent::HandlerFailed {
            offset: 3,
            attempt: 0,
            action: FailureAction::Skip,
            ..
        }]
    ));
}

#[tokio::test(start_paused = true)]
async fn retry_calls_again_with_the_whole_batch_then_applies_the_policy() {
    // Fails twice, then succeeds: the same batch three times.
    let calls = Arc::default();
    let cfg = ProcessingConfig {
        failure_policy: FailurePolicy::retry(3, Duration::from_millis(100), OnFailure::Stop),
        ..config(4, 3)
    };
    let (engine, mut events) =
        ProcessingEngine::new(cfg.clone(), failing_at(1, 2, Arc::clone(&calls))).expect("engine");
    engine.add_partitions([tp(0)]);
    let t0 = tokio::time::Instant::now();
    engine.submit(&tp(0), records(0..3)).expect("submit");
    assert!(engine.drained(LONG).await);
    assert_eq!(tokio::time::Instant::now() - t0, Duration::from_millis(300));
    assert_eq!(*calls.lock().expect("lock"), vec![vec![0, 1, 2]; 3]);
    assert_eq!(engine.committable_offset(&tp(0)), Some(3));
    let m = engine.metrics();
    assert_eq!(
        (m.retries_total, m.failed_total, m.completed_total),
        (2, 2, 3)
    );
    let retries: Vec<(i64, u32)> = drain_events(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            ProcessingEvent::HandlerFailed {
                offset,
                attempt,
                action: FailureAction::Retry { .. },
                ..
            } => Some((offset, attempt)),
            _ => None,
        })
        .collect();
    assert_eq!(retries, vec![(0, 0), (0, 1)]);

    // Always fails: 1 + 3 calls, then stopped, nothing of the batch committed.
    let calls = Arc::default();
    let (engine, _events) =
        ProcessingEngine::new(cfg, failing_at(4, usize::MAX, Arc::clone(&calls))).expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..6)).expect("submit");
    assert!(engine.drained(LONG).await);
    let calls = calls.lock().expect("lock").clone();
    assert_eq!(
        calls,
        [vec![vec![0, 1, 2]], vec![vec![3, 4, 5]; 4]].concat()
    );
    let failure = engine.failure().expect("stopped");
    assert_eq!((failure.offset, failure.attempts), (3, 4));
    assert_eq!(engine.committable_offset(&tp(0)), Some(3));
}

#[tokio::test(start_paused = true)]
async fn after_a_stop_a_started_record_runs_alone_not_a_batch() {
    // Partition 1's submit started its first record before partition 0's batch failed: that
    // record runs (as a running one would), and nothing queued behind it.
    let calls = Arc::default();
    let (engine, _events) =
        ProcessingEngine::new(config(4, 10), failing_at(0, usize::MAX, Arc::clone(&calls)))
            .expect("engine");
    engine.add_partitions([tp(0), tp(1)]);
    engine.submit(&tp(0), records(0..3)).expect("submit");
    engine.submit(&tp(1), records(10..15)).expect("submit");
    assert!(engine.drained(LONG).await);
    assert_eq!(engine.failure().map(|f| f.offset), Some(0));
    assert_eq!(*calls.lock().expect("lock"), vec![vec![0, 1, 2], vec![10]]);
    assert_eq!(engine.committable_offset(&tp(1)), Some(11));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_batch_handler_is_a_failure() {
    let (engine, _events) = ProcessingEngine::new(
        config(1, 2),
        Batches(|batch: Batch| async move {
            if batch.first_offset() == 2 {
                panic!("boom");
            }
            Ok::<(), String>(())
        }),
    )
    .expect("engine");
    engine.add_partitions([tp(0)]);
    engine.submit(&tp(0), records(0..6)).expect("submit");
    assert!(engine.drained(LONG).await);
    let failure = engine.failure().expect("failure");
    assert_eq!(failure.offset, 2);
    assert!(failure.error.downcast_ref::<HandlerPanicked>().is_some());
    assert_eq!(engine.committable_offset(&tp(0)), Some(2));
    assert_eq!(engine.metrics().in_flight, 0);
}

// ---- bounds shared with the per-record path -------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_concurrency_bound_counts_running_batches() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(2, 100), world.handler(started)).expect("engine");
    engine.add_partitions((0..5).map(tp));
    for p in 0..5 {
        world.close(p, 0);
        engine.submit(&tp(p), records(0..50)).expect("submit");
    }
    let mut running = vec![next_start(&mut starts).await, next_start(&mut starts).await];
    tokio::task::yield_now().await;
    assert!(starts.try_recv().is_err(), "a third batch started");
    assert_eq!(engine.metrics().in_flight, 2);
    // Partitions take turns: each opened batch lets another partition's start.
    for _ in 0..5 {
        let (p, offsets) = running.remove(0);
        assert_eq!(
            offsets,
            (0..50).collect::<Vec<_>>(),
            "partition {p}: all it had"
        );
        world.open(p, 0);
        if let Ok(Some(next)) = tokio::time::timeout(Duration::from_secs(1), starts.recv()).await {
            running.push(next);
        }
    }
    assert!(engine.drained(LONG).await);
    assert_eq!(world.max_running.load(AtomicOrdering::SeqCst), 2);
    assert_eq!(engine.metrics().max_in_flight_observed, 2);
    for p in 0..5 {
        assert_eq!(engine.committable_offset(&tp(p)), Some(50));
    }
}

#[tokio::test(start_paused = true)]
async fn records_their_submits_started_keep_their_permits_past_the_cap() {
    // Two submits find partition 0 idle and each start a record with a permit of its own; a cap
    // of one leaves the second for the next batch, which must still hold that permit when the
    // first ends and other partitions wait for one.
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(2, 1), world.handler(started)).expect("engine");
    engine.add_partitions((0..3).map(tp));
    for (p, o) in [(0, 0), (0, 1), (2, 0), (1, 0)] {
        world.close(p, o);
        engine.submit(&tp(p), records(o..o + 1)).expect("submit");
    }
    let mut running = vec![next_start(&mut starts).await];
    tokio::time::sleep(Duration::from_millis(1)).await;
    running.extend(std::iter::from_fn(|| starts.try_recv().ok()));
    assert_eq!(
        running.len(),
        1,
        "{running:?}: partition 0 holds both permits"
    );
    while let Some((p, offsets)) = running.pop() {
        world.open(p, offsets[0]);
        tokio::time::sleep(Duration::from_millis(1)).await;
        running.extend(std::iter::from_fn(|| starts.try_recv().ok()));
        assert!(
            world.max_running.load(AtomicOrdering::SeqCst) <= 2,
            "past the bound"
        );
    }
    assert!(engine.drained(LONG).await);
    assert_eq!(world.max_running.load(AtomicOrdering::SeqCst), 2);
    assert_eq!(
        world.offsets(),
        BTreeMap::from([(0, vec![0, 1]), (1, vec![0]), (2, vec![0])])
    );
}

#[tokio::test(start_paused = true)]
async fn the_watchdog_sees_a_batchs_start() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let cfg = ProcessingConfig {
        max_poll_interval: Duration::from_secs(30),
        ..config(2, 10)
    };
    let (engine, mut events) = ProcessingEngine::new(cfg, world.handler(started)).expect("engine");
    engine.add_partitions([tp(0)]);
    world.close(0, 5);
    engine.submit(&tp(0), records(5..9)).expect("submit");
    next_start(&mut starts).await;
    tokio::time::advance(Duration::from_secs(29)).await;
    assert!(drain_events(&mut events).is_empty());
    match tokio::time::timeout(LONG, events.recv())
        .await
        .expect("event")
    {
        Some(ProcessingEvent::PollIntervalExceeded {
            partition,
            offset,
            elapsed,
        }) => {
            assert_eq!((partition, offset), (tp(0), 5), "the batch's first offset");
            assert!(elapsed >= Duration::from_secs(30) && elapsed <= Duration::from_secs(31));
        }
        other => panic!("unexpected {other:?}"),
    }
    tokio::time::advance(Duration::from_secs(120)).await;
    assert_eq!(engine.metrics().poll_interval_exceeded_total, 1, "once");
    world.open(0, 5);
    assert!(engine.drained(LONG).await);
    assert!(engine.metrics().overdue.is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_revoke_waits_for_the_running_batch_within_its_bound() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(4, 4), world.handler(started)).expect("engine");
    engine.add_partitions([tp(0), tp(1)]);
    world.close(0, 0);
    world.close(1, 0);
    engine.submit(&tp(0), records(0..10)).expect("submit");
    engine.submit(&tp(1), records(0..10)).expect("submit");
    next_start(&mut starts).await;
    next_start(&mut starts).await;
    // Partition 0's batch ends within the bound: committed; what was queued behind it is not.
    let w = world.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(2)).await;
        w.open(0, 0);
    });
    let report = engine
        .stop_partitions([tp(0)], Duration::from_secs(5))
        .await;
    assert!(report.timed_out.is_empty());
    assert_eq!(report.committable, BTreeMap::from([(tp(0), 4)]));
    assert_eq!(world.offsets()[&0], vec![0, 1, 2, 3]);
    // Partition 1's batch outlives the bound: nothing of it is committed.
    let report = engine
        .stop_partitions([tp(1)], Duration::from_secs(5))
        .await;
    assert_eq!(report.timed_out, vec![tp(1)]);
    assert_eq!(report.committable, BTreeMap::from([(tp(1), 0)]));
    assert_eq!(engine.metrics().discarded_total, 12);
}

#[tokio::test(start_paused = true)]
async fn shutdown_drains_the_running_batch() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let (engine, _events) =
        ProcessingEngine::new(config(4, 4), world.handler(started)).expect("engine");
    engine.add_partitions([tp(0)]);
    world.close(0, 0);
    engine.submit(&tp(0), records(0..6)).expect("submit");
    next_start(&mut starts).await;
    let w = world.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(1)).await;
        w.open(0, 0);
    });
    let report = engine.shutdown(Duration::from_secs(10)).await;
    assert!(report.timed_out.is_empty());
    assert_eq!(report.committable, BTreeMap::from([(tp(0), 4)]));
    assert_eq!(
        world.done(),
        vec![(0, vec![0, 1, 2, 3])],
        "the rest discarded"
    );
}

#[test]
fn a_batch_dropped_midway_is_never_committed_past() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let engine = rt.block_on(async {
        let (engine, _events) =
            ProcessingEngine::new(config(4, 8), world.handler(started)).expect("engine");
        engine.add_partitions([tp(0)]);
        engine.submit(&tp(0), records(0..2)).expect("submit");
        assert!(engine.drained(LONG).await);
        world.close(0, 2);
        engine.submit(&tp(0), records(2..5)).expect("submit");
        next_start(&mut starts).await;
        next_start(&mut starts).await;
        engine
    });
    assert_eq!(engine.committable_offset(&tp(0)), Some(2));
    // The runtime goes, and the lane's task with it, the batch's future dropped midway.
    drop(rt);
    assert_eq!(world.done(), vec![(0, vec![0, 1])]);
    assert_eq!(engine.committable_offset(&tp(0)), Some(2));
}

#[tokio::test(start_paused = true)]
async fn a_running_batch_holds_its_window_until_it_ends() {
    let world = World::default();
    let (started, mut starts) = mpsc::unbounded_channel();
    let cfg = ProcessingConfig {
        max_buffered_records: 10,
        resume_buffered_records: 4,
        ..config(4, 6)
    };
    let (engine, mut events) = ProcessingEngine::new(cfg, world.handler(started)).expect("engine");
    engine.add_partitions([tp(0)]);
    world.close(0, 0);
    let s = engine.submit(&tp(0), records(0..6)).expect("submit");
    assert_eq!(s.accepted, 6);
    next_start(&mut starts).await;
    // The running batch's six records still count: four more fit, then the partition pauses.
    let s = engine.submit(&tp(0), records(6..12)).expect("submit");
    assert_eq!((s.accepted, s.rejected.len()), (4, 2));
    assert!(s.paused_by_backpressure);
    world.open(0, 0);
    assert!(engine.drained(LONG).await);
    assert!(engine.backpressured_partitions().is_empty());
    let kinds: Vec<bool> = drain_events(&mut events)
        .into_iter()
        .filter_map(|e| match e {
            ProcessingEvent::BackpressurePause { .. } => Some(true),
            ProcessingEvent::BackpressureResume { .. } => Some(false),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, vec![true, false]);
    assert_eq!(engine.committable_offset(&tp(0)), Some(10));
}

// ---- configuration -----------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_batch_handler_needs_ordering_per_partition_and_a_cap() {
    for ordering in [ProcessingOrder::Key, ProcessingOrder::None] {
        let cfg = ProcessingConfig {
            ordering,
            ..ProcessingConfig::default()
        };
        let handler = Batches(|_: Batch| async { Ok::<(), String>(()) });
        match ProcessingEngine::new(cfg, handler) {
            Err(EngineError::InvalidConfig { field, .. }) => assert_eq!(field, "ordering"),
            other => panic!("{ordering:?}: {:?}", other.map(|_| ())),
        }
    }
    let handler = Batches(|_: Batch| async { Ok::<(), String>(()) });
    match ProcessingEngine::new(config(1, 0), handler) {
        Err(EngineError::InvalidConfig { field, .. }) => assert_eq!(field, "max_batch_records"),
        other => panic!("{:?}", other.map(|_| ())),
    }
}
