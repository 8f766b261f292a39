//! The processing engine on a multi-thread runtime, where lanes run beside the submitting task:
//! random orderings, bounds and handler latencies (yields), submits that honour backpressure,
//! revokes and re-adds while handlers run. The committable offset read at any moment never
//! passes a record whose handler had not returned; records start in order per partition or key;
//! a revoke that waited for its handlers, and the final shutdown, report exact offsets. The
//! same with a batch handler, whose batches also stay within their cap and start the accepted
//! records in order, none left out.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use mooring_consumer::processing::{
    Batch, BatchHandler, Batches, ConsumerRecord, Dispatch, Handler, ProcessingConfig,
    ProcessingEngine, ProcessingOrder,
};
use mooring_consumer::TopicPartition;
use mooring_wire::records::Record;
use proptest::prelude::*;

const PARTITIONS: i32 = 4;
const LONG: Duration = Duration::from_secs(60);

/// (partition, incarnation, offset): the incarnation travels in the record's value.
type Id = (i32, u64, i64);

#[derive(Default)]
struct Seen {
    finished: HashSet<Id>,
    /// Last offset started per lane (partition, incarnation, key when ordered by key).
    last_started: HashMap<(i32, u64, Option<Bytes>), i64>,
    out_of_order: Vec<String>,
    /// Batch handler: every offset started, per partition incarnation, in order.
    started: HashMap<(i32, u64), Vec<i64>>,
    oversized: Vec<String>,
}

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t", p)
}

fn handler(seen: Arc<Mutex<Seen>>, ordering: ProcessingOrder) -> impl Handler {
    move |r: ConsumerRecord| {
        let seen = Arc::clone(&seen);
        async move {
            let inc: u64 = r
                .value()
                .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                .unwrap_or(u64::MAX);
            let id = (r.partition(), inc, r.offset());
            if ordering != ProcessingOrder::None {
                let key = (ordering == ProcessingOrder::Key)
                    .then(|| r.key().cloned())
                    .flatten();
                let mut s = seen.lock().expect("lock");
                if let Some(prev) = s.last_started.insert((id.0, id.1, key), id.2) {
                    if prev >= id.2 {
                        s.out_of_order.push(format!("{id:?} after {prev}"));
                    }
                }
            }
            for _ in 0..(r.offset() % 4) {
                tokio::task::yield_now().await;
            }
            seen.lock().expect("lock").finished.insert(id);
            Ok::<(), String>(())
        }
    }
}

fn batch_handler(seen: Arc<Mutex<Seen>>, cap: usize) -> impl BatchHandler {
    move |batch: Batch| {
        let seen = Arc::clone(&seen);
        async move {
            let inc: u64 = batch.records()[0]
                .value()
                .and_then(|v| std::str::from_utf8(v).ok()?.parse().ok())
                .unwrap_or(u64::MAX);
            let p = batch.partition().partition;
            {
                let mut s = seen.lock().expect("lock");
                if batch.len() > cap {
                    s.oversized.push(format!("{p}: {} records", batch.len()));
                }
                let offsets = batch.iter().map(|r| r.offset());
                s.started.entry((p, inc)).or_default().extend(offsets);
            }
            for _ in 0..(batch.first_offset() % 4) {
                tokio::task::yield_now().await;
            }
            let mut s = seen.lock().expect("lock");
            s.finished
                .extend(batch.iter().map(|r| (p, inc, r.offset())));
            Ok::<(), String>(())
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Part {
    inc: u64,
    accepted: Vec<i64>,
    next: i64,
}

/// The lowest accepted offset not finished, or the last accepted + 1.
fn lowest_unfinished(part: &Part, finished: &HashSet<Id>, p: i32) -> Option<i64> {
    let last = *part.accepted.last()?;
    Some(
        part.accepted
            .iter()
            .find(|&&o| !finished.contains(&(p, part.inc, o)))
            .map_or(last + 1, |o| *o),
    )
}

/// One case: a record handler with `ordering`, or (`batch_cap`) a batch handler.
async fn run_case(
    ordering: ProcessingOrder,
    concurrency: usize,
    max: usize,
    batch_cap: Option<usize>,
    seed: u64,
) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let config = ProcessingConfig {
        concurrency,
        ordering,
        max_buffered_records: max,
        resume_buffered_records: max / 2,
        max_batch_records: batch_cap.unwrap_or(500),
        ..ProcessingConfig::default()
    };
    let parts = match batch_cap {
        None => {
            let handler = handler(Arc::clone(&seen), ordering);
            let (engine, _events) = ProcessingEngine::new(config, handler).expect("engine");
            drive(engine, &seen, seed).await
        }
        Some(cap) => {
            let handler = Batches(batch_handler(Arc::clone(&seen), cap));
            let (engine, _events) = ProcessingEngine::new(config, handler).expect("engine");
            drive(engine, &seen, seed).await
        }
    };
    let s = seen.lock().expect("lock");
    assert!(s.out_of_order.is_empty(), "{:?}", s.out_of_order);
    assert!(s.oversized.is_empty(), "{:?}", s.oversized);
    if batch_cap.is_some() {
        for (p, part) in parts.iter().enumerate() {
            let lane = (p as i32, part.inc);
            let started = s.started.get(&lane).map_or(&[][..], Vec::as_slice);
            assert_eq!(
                started, part.accepted,
                "partition {p}: every record once, in order"
            );
        }
    }
}

/// Submits, revokes and re-adds at random; returns each partition's last incarnation.
async fn drive<H: Dispatch>(
    engine: ProcessingEngine<H>,
    seen: &Arc<Mutex<Seen>>,
    seed: u64,
) -> Vec<Part> {
    engine.add_partitions((0..PARTITIONS).map(tp));
    let mut parts = vec![Part::default(); PARTITIONS as usize];
    let mut incs = 0u64;
    let mut rng = seed | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _round in 0..60 {
        let p = (next() % PARTITIONS as u64) as i32;
        let part = &mut parts[p as usize];
        if next() % 12 == 0 {
            let report = engine.stop_partitions([tp(p)], LONG).await;
            assert!(report.timed_out.is_empty());
            let finished = seen.lock().expect("lock").finished.clone();
            let want = lowest_unfinished(part, &finished, p);
            assert_eq!(
                report.committable.get(&tp(p)).copied(),
                want,
                "revoke of {p}"
            );
            incs += 1;
            *part = Part {
                inc: incs,
                accepted: Vec::new(),
                next: want.unwrap_or(part.next),
            };
            engine.add_partitions([tp(p)]);
        } else if !engine.backpressured_partitions().contains(&tp(p)) {
            let n = 1 + (next() % 12) as i64;
            let value = Bytes::from(part.inc.to_string());
            let records: Vec<Record> = (part.next..part.next + n)
                .map(|o| {
                    let key = Bytes::from((o % 3).to_string());
                    Record::new(o, 0, Some(key), Some(value.clone()))
                })
                .collect();
            let s = engine.submit(&tp(p), records).expect("submit");
            part.accepted
                .extend(part.next..part.next + s.accepted as i64);
            part.next += s.accepted as i64;
        }
        for (q, part) in parts.iter().enumerate() {
            let q = q as i32;
            // Read the offset first: whatever finished later only widens what it may pass.
            let got = engine.committable_offset(&tp(q));
            let finished = seen.lock().expect("lock").finished.clone();
            if let (Some(c), Some(w)) = (got, lowest_unfinished(part, &finished, q)) {
                assert!(
                    c <= w,
                    "partition {q}: committable {c} passes unfinished {w}"
                );
            }
        }
        tokio::task::yield_now().await;
    }
    assert!(engine.drained(LONG).await);
    let report = engine.shutdown(LONG).await;
    let s = seen.lock().expect("lock");
    for (p, part) in parts.iter().enumerate() {
        let p = p as i32;
        let want = lowest_unfinished(part, &s.finished, p);
        assert_eq!(
            report.committable.get(&tp(p)).copied(),
            want,
            "shutdown of {p}"
        );
        assert_eq!(want, part.accepted.last().map(|l| l + 1), "all finished");
    }
    drop(s);
    parts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn guarantees_hold_with_lanes_on_worker_threads(
        ordering in prop_oneof![
            Just(ProcessingOrder::Partition),
            Just(ProcessingOrder::Key),
            Just(ProcessingOrder::None),
        ],
        concurrency in 1usize..6,
        max in 4usize..32,
        seed in any::<u64>(),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(run_case(ordering, concurrency, max, None, seed));
    }

    #[test]
    fn batch_guarantees_hold_with_lanes_on_worker_threads(
        concurrency in 1usize..6,
        max in 4usize..32,
        cap in 1usize..8,
        seed in any::<u64>(),
    ) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(run_case(ProcessingOrder::Partition, concurrency, max, Some(cap), seed));
    }
}
