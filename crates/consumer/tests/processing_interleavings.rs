//! Property tests of the processing engine over random interleavings of what its callers do:
//! submits of batches (honouring backpressure or not), handlers finishing or failing in any
//! order, revokes, losses and a final shutdown, on Tokio's paused clock. After every step the
//! committable offset of every partition never passes a record whose handler has not returned
//! success (or been skipped), and records start in order per partition (ordering `Partition`)
//! or per key (`Key`), never more at once than the bounds allow. Whenever the engine has settled
//! (every task waits) the committable offsets are exact and backpressure is where the
//! thresholds put it. With a batch handler, the same, and each partition's batches never exceed
//! the cap and start exactly the records accepted, in order, none left out.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mooring_consumer::processing::{
    Batch, BatchHandler, Batches, ConsumerRecord, Dispatch, FailurePolicy, ProcessingConfig,
    ProcessingEngine, ProcessingMetrics, ProcessingOrder, StopReport,
};
use mooring_consumer::TopicPartition;
use mooring_wire::records::Record;
use proptest::prelude::*;
use tokio::sync::oneshot;

const PARTITIONS: i32 = 3;
const KEYS: i64 = 3;

/// A record as the handler knows it: partition, incarnation of the partition in the engine
/// (carried in the value), offset.
type Id = (i32, u64, i64);

/// What the handlers saw, shared by the test and the handler.
#[derive(Default)]
struct World {
    /// Running handlers, waiting for the test to say how they end (`true`: success).
    gates: BTreeMap<Id, oneshot::Sender<bool>>,
    /// Records whose handler returned success, or failed under policy `skip`.
    finished: HashSet<Id>,
    started: Vec<(Id, Option<Bytes>)>,
    running: usize,
    running_per: HashMap<(i32, u64, Option<Bytes>), usize>,
    max_running: usize,
    max_running_per: usize,
    /// Batches started (batch handler): partition, incarnation, offsets.
    batches: Vec<(i32, u64, Vec<i64>)>,
}

#[derive(Debug, Clone)]
enum Op {
    Submit {
        p: i32,
        n: i64,
        gap: i64,
        honour: bool,
    },
    Finish {
        pick: usize,
        ok: bool,
    },
    Revoke {
        p: i32,
    },
    Lose {
        p: i32,
    },
    Settle,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..PARTITIONS, 1i64..8, 0i64..3, any::<bool>())
            .prop_map(|(p, n, gap, honour)| Op::Submit { p, n, gap, honour }),
        5 => (any::<usize>(), prop::bool::weighted(0.85)).prop_map(|(pick, ok)| Op::Finish { pick, ok }),
        1 => (0..PARTITIONS).prop_map(|p| Op::Revoke { p }),
        1 => (0..PARTITIONS).prop_map(|p| Op::Lose { p }),
        2 => Just(Op::Settle),
    ]
}

/// The test's view of one partition: its incarnation and the offsets accepted in it.
#[derive(Debug, Default, Clone)]
struct Part {
    inc: u64,
    accepted: Vec<i64>,
    next: i64,
}

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn handler(
    world: Arc<Mutex<World>>,
    skip: bool,
    keyed: bool,
) -> impl Fn(
    ConsumerRecord,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send>>
       + Send
       + Sync
       + 'static {
    move |r: ConsumerRecord| {
        let world = Arc::clone(&world);
        Box::pin(async move {
            let inc = r
                .value()
                .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                .unwrap_or(u64::MAX);
            let id = (r.partition(), inc, r.offset());
            let lane_key = keyed.then(|| r.key().cloned()).flatten();
            let (tx, rx) = oneshot::channel();
            {
                let mut w = world.lock().expect("lock");
                w.started.push((id, r.key().cloned()));
                w.gates.insert(id, tx);
                w.running += 1;
                w.max_running = w.max_running.max(w.running);
                let per = w
                    .running_per
                    .entry((id.0, id.1, lane_key.clone()))
                    .or_default();
                *per += 1;
                let per = *per;
                w.max_running_per = w.max_running_per.max(per);
            }
            let ok = rx.await.unwrap_or(false);
            let mut w = world.lock().expect("lock");
            w.running -= 1;
            if let Some(per) = w.running_per.get_mut(&(id.0, id.1, lane_key)) {
                *per -= 1;
            }
            if ok || skip {
                w.finished.insert(id);
            }
            if ok {
                Ok(())
            } else {
                Err(format!("record {id:?} failed"))
            }
        })
    }
}

/// A batch handler over the same world: one gate per batch (its first record's), the batch's
/// records finished together.
fn batch_handler(world: Arc<Mutex<World>>, skip: bool) -> Batches<impl BatchHandler> {
    Batches(
        move |batch: Batch| -> std::pin::Pin<
            Box<dyn std::future::Future<Output = Result<(), String>> + Send>,
        > {
            let world = Arc::clone(&world);
            Box::pin(async move {
                let first = &batch.records()[0];
                let inc = first
                    .value()
                    .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                    .unwrap_or(u64::MAX);
                let p = batch.partition().partition;
                let ids: Vec<Id> = batch.iter().map(|r| (p, inc, r.offset())).collect();
                let (tx, rx) = oneshot::channel();
                {
                    let mut w = world.lock().expect("lock");
                    for r in &batch {
                        w.started.push(((p, inc, r.offset()), r.key().cloned()));
                    }
                    w.batches
                        .push((p, inc, ids.iter().map(|id| id.2).collect()));
                    w.gates.insert(ids[0], tx);
                    w.running += 1;
                    w.max_running = w.max_running.max(w.running);
                    let per = w.running_per.entry((p, inc, None)).or_default();
                    *per += 1;
                    let per = *per;
                    w.max_running_per = w.max_running_per.max(per);
                }
                let ok = rx.await.unwrap_or(false);
                let mut w = world.lock().expect("lock");
                w.running -= 1;
                if let Some(per) = w.running_per.get_mut(&(p, inc, None)) {
                    *per -= 1;
                }
                if ok || skip {
                    w.finished.extend(ids.iter().copied());
                }
                if ok {
                    Ok(())
                } else {
                    Err(format!(
                        "batch {:?}..={} failed",
                        ids[0],
                        batch.last_offset()
                    ))
                }
            })
        },
    )
}

/// Batches: within the cap, and per partition incarnation exactly a prefix of what was accepted,
/// in order (contiguous, none left out, none twice).
fn check_batches(world: &World, accepted: &HashMap<(i32, u64), Vec<i64>>, cap: usize) {
    let mut started: HashMap<(i32, u64), Vec<i64>> = HashMap::new();
    for (p, inc, offsets) in &world.batches {
        assert!(
            !offsets.is_empty() && offsets.len() <= cap,
            "batch of {} records, cap {cap}",
            offsets.len()
        );
        started.entry((*p, *inc)).or_default().extend(offsets);
    }
    for (lane, offsets) in &started {
        let all = accepted.get(lane).map_or(&[][..], Vec::as_slice);
        assert!(
            all.starts_with(offsets),
            "lane {lane:?}: started {offsets:?}, accepted {all:?}"
        );
    }
}

/// The lowest accepted offset not finished, or the last accepted + 1; `None` if none accepted.
fn expected(part: &Part, finished: &HashSet<Id>, p: i32) -> Option<i64> {
    let last = *part.accepted.last()?;
    let lowest = part
        .accepted
        .iter()
        .find(|&&o| !finished.contains(&(p, part.inc, o)));
    Some(lowest.map_or(last + 1, |o| *o))
}

/// The committable offset never passes an unfinished record; when settled it is exact.
fn check_commit(got: Option<i64>, part: &Part, finished: &HashSet<Id>, p: i32, settled: bool) {
    let want = expected(part, finished, p);
    if settled {
        assert_eq!(got, want, "partition {p} settled: {part:?}");
    } else if let Some(c) = got {
        let want = want.expect("something was accepted");
        assert!(
            c <= want,
            "partition {p}: committable {c} passes unfinished {want}"
        );
    }
}

fn check_report(report: &StopReport, parts: &[Part], world: &World, ps: &[i32]) {
    for &p in ps {
        let want = expected(&parts[p as usize], &world.finished, p);
        assert_eq!(
            report.committable.get(&tp(p)).copied(),
            want,
            "stop report of {p}"
        );
    }
}

fn check_order(world: &World, ordering: ProcessingOrder, concurrency: usize) {
    assert!(world.max_running <= concurrency, "concurrency bound");
    if ordering == ProcessingOrder::None {
        return;
    }
    assert!(world.max_running_per <= 1, "one record per lane at a time");
    let mut last: HashMap<(i32, u64, Option<Bytes>), i64> = HashMap::new();
    for ((p, inc, offset), key) in &world.started {
        let lane = match ordering {
            ProcessingOrder::Key => key.clone(),
            _ => None,
        };
        if let Some(prev) = last.insert((*p, *inc, lane), *offset) {
            assert!(
                prev < *offset,
                "partition {p}: {offset} started after {prev}"
            );
        }
    }
}

/// Submits `n` records from the partition's next offset (`gap` offsets apart), as a fetch.
fn submit<H: Dispatch>(engine: &ProcessingEngine<H>, part: &mut Part, p: i32, n: i64, gap: i64) {
    let offsets: Vec<i64> = (0..n).map(|i| part.next + i * (gap + 1)).collect();
    let value = Bytes::from(part.inc.to_string());
    let records = offsets
        .iter()
        .map(|&o| {
            let key = Bytes::from((o % KEYS).to_string());
            Record::new(o, 0, Some(key), Some(value.clone()))
        })
        .collect();
    let s = engine.submit(&tp(p), records).expect("submit");
    assert_eq!(s.accepted + s.rejected.len(), offsets.len());
    assert!(
        s.rejected.is_empty() || s.paused_by_backpressure,
        "rejected without a pause"
    );
    part.accepted.extend(&offsets[..s.accepted]);
    // The fetcher fetches again from the first rejected record.
    part.next = offsets
        .get(s.accepted)
        .copied()
        .unwrap_or(offsets[offsets.len() - 1] + 1);
}

/// Settled: every partition paused exactly when the thresholds say.
fn check_backpressure(m: &ProcessingMetrics, max: usize) {
    for pm in &m.partitions {
        assert!(pm.window_records <= max, "window bound: {pm:?}");
        if pm.paused_by_backpressure {
            assert!(pm.window_records > max / 2, "a missed resume: {pm:?}");
        } else {
            assert!(pm.window_records < max, "a missed pause: {pm:?}");
        }
    }
}

async fn settle() {
    // Time moves on the paused clock only once every task waits.
    tokio::time::sleep(Duration::from_millis(1)).await;
}

/// One case: a record handler with `ordering`, or (`batch_cap`) a batch handler with batches of
/// at most that many records (ordering `Partition`).
async fn run_case(
    ordering: ProcessingOrder,
    concurrency: usize,
    skip: bool,
    max: usize,
    batch_cap: Option<usize>,
    ops: Vec<Op>,
) {
    let world = Arc::new(Mutex::new(World::default()));
    let config = ProcessingConfig {
        concurrency,
        ordering,
        max_buffered_records: max,
        resume_buffered_records: max / 2,
        failure_policy: if skip {
            FailurePolicy::skip()
        } else {
            FailurePolicy::stop()
        },
        max_batch_records: batch_cap.unwrap_or(500),
        ..ProcessingConfig::default()
    };
    let keyed = ordering == ProcessingOrder::Key;
    match batch_cap {
        None => {
            let handler = handler(Arc::clone(&world), skip, keyed);
            let (engine, _events) = ProcessingEngine::new(config, handler).expect("engine");
            drive(engine, world, ordering, concurrency, max, None, ops).await;
        }
        Some(cap) => {
            let config = ProcessingConfig {
                ordering: ProcessingOrder::Partition,
                ..config
            };
            let handler = batch_handler(Arc::clone(&world), skip);
            let (engine, _events) = ProcessingEngine::new(config, handler).expect("engine");
            let ordering = ProcessingOrder::Partition;
            drive(engine, world, ordering, concurrency, max, Some(cap), ops).await;
        }
    }
}

async fn drive<H: Dispatch>(
    engine: ProcessingEngine<H>,
    world: Arc<Mutex<World>>,
    ordering: ProcessingOrder,
    concurrency: usize,
    max: usize,
    batch_cap: Option<usize>,
    ops: Vec<Op>,
) {
    engine.add_partitions((0..PARTITIONS).map(tp));
    // What each partition incarnation accepted, in order, for the batch checks.
    let mut accepted: HashMap<(i32, u64), Vec<i64>> = HashMap::new();
    let mut parts = vec![Part::default(); PARTITIONS as usize];
    let mut incs = 0u64;
    let renew = |part: &mut Part, incs: &mut u64, from: i64| {
        *incs += 1;
        *part = Part {
            inc: *incs,
            accepted: Vec::new(),
            next: from,
        };
    };
    for op in ops {
        let mut settled = false;
        match op {
            Op::Submit { p, n, gap, honour } => {
                if honour && engine.backpressured_partitions().contains(&tp(p)) {
                    continue;
                }
                let part = &mut parts[p as usize];
                let before = part.accepted.len();
                submit(&engine, part, p, n, gap);
                accepted
                    .entry((p, part.inc))
                    .or_default()
                    .extend(&part.accepted[before..]);
            }
            Op::Finish { pick, ok } => {
                let gate = {
                    let mut w = world.lock().expect("lock");
                    let key = w.gates.keys().nth(pick % w.gates.len().max(1)).copied();
                    key.and_then(|k| w.gates.remove(&k))
                };
                if let Some(g) = gate {
                    let _ = g.send(ok);
                }
            }
            Op::Revoke { p } => {
                let report = engine
                    .stop_partitions([tp(p)], Duration::from_secs(1))
                    .await;
                check_report(&report, &parts, &world.lock().expect("lock"), &[p]);
                // The next owner (here: this member again) fetches from the committed offset.
                let part = &mut parts[p as usize];
                let from = report.committable.get(&tp(p)).copied().unwrap_or(part.next);
                renew(part, &mut incs, from);
                engine.add_partitions([tp(p)]);
            }
            Op::Lose { p } => {
                engine.drop_partitions([tp(p)]);
                assert_eq!(engine.committable_offset(&tp(p)), None);
                let part = &mut parts[p as usize];
                let from = part.next;
                renew(part, &mut incs, from);
                engine.add_partitions([tp(p)]);
            }
            Op::Settle => {
                settle().await;
                settled = true;
            }
        }
        let w = world.lock().expect("lock");
        for p in 0..PARTITIONS {
            check_commit(
                engine.committable_offset(&tp(p)),
                &parts[p as usize],
                &w.finished,
                p,
                settled,
            );
        }
        check_order(&w, ordering, concurrency);
        if let Some(cap) = batch_cap {
            check_batches(&w, &accepted, cap);
        }
        if settled {
            check_backpressure(&engine.metrics(), max);
        }
    }
    settle().await;
    let report = engine.shutdown(Duration::from_secs(1)).await;
    let w = world.lock().expect("lock");
    check_report(&report, &parts, &w, &(0..PARTITIONS).collect::<Vec<_>>());
    check_order(&w, ordering, concurrency);
    if let Some(cap) = batch_cap {
        check_batches(&w, &accepted, cap);
    }
}

fn ordering() -> impl Strategy<Value = ProcessingOrder> {
    prop_oneof![
        Just(ProcessingOrder::Partition),
        Just(ProcessingOrder::Key),
        Just(ProcessingOrder::None),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn commits_never_pass_an_unfinished_record_and_order_holds(
        ordering in ordering(),
        concurrency in 1usize..5,
        skip in any::<bool>(),
        max in 4usize..16,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime");
        rt.block_on(run_case(ordering, concurrency, skip, max, None, ops));
    }

    #[test]
    fn batch_commits_never_pass_an_unfinished_batch_and_batches_are_contiguous(
        concurrency in 1usize..5,
        skip in any::<bool>(),
        max in 4usize..16,
        cap in 1usize..6,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("runtime");
        rt.block_on(run_case(ProcessingOrder::Partition, concurrency, skip, max, Some(cap), ops));
    }
}
