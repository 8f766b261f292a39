//! Criterion benchmark of the processing engine alone: no broker, no fetcher, a no-op async
//! handler. What it costs the engine to take records from a fetch and run a handler on each.
//!
//! The workload: 12 partitions of one topic, default [`ProcessingConfig`] (ordering per
//! partition, concurrency 16). One iteration is one fetch round: every partition is handed 500
//! records of 1 KiB values with `submit_batches`, as the fetcher does (one call per partition,
//! the records' broker batches of 16 records each beside them), then the engine is waited on
//! until every record has finished (`drained`). 6,000 records per iteration; offsets go on from
//! one iteration to the next, as fetches do. Building the records is outside the measurement.
//!
//! Time is the CPU time of the thread driving a current-thread Tokio runtime (every task of the
//! engine runs on it), from `clock_gettime(CLOCK_THREAD_CPUTIME_ID)`; on a current-thread
//! runtime it is about the wall time of an idle machine, and on a machine loaded by other work it
//! is the steadier figure.
//!
//! A second case runs the same rounds through a no-op batch handler ([`Batches`], as
//! `Consumer::run_batch` does), default `max_batch_records` (500): a partition's round is one
//! call.
//!
//! `cargo bench -p mooring-consumer --bench engine` runs the criterion group, then prints the
//! best of several timed runs of each case as CPU µs per record.

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput};
use mooring_consumer::processing::{
    Batch, BatchInfo, Batches, ConsumerRecord, Dispatch, FetchedBatch, FetchedRecords,
    ProcessingConfig, ProcessingEngine,
};
use mooring_consumer::TopicPartition;
use mooring_wire::records::Record;
use tokio::runtime::Runtime;

const PARTITIONS: i32 = 12;
const PER_PARTITION: i64 = 500;
const PER_BATCH: i64 = 16;
const VALUE_LEN: usize = 1024;
const RECORDS_PER_ITER: u64 = PARTITIONS as u64 * PER_PARTITION as u64;
/// Timed runs for the summary, and iterations per run.
const RUNS: usize = 7;
const ITERS_PER_RUN: u64 = 40;

/// This thread's CPU time so far (`CLOCK_THREAD_CPUTIME_ID`, nanoseconds).
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// Measures `f` in CPU time of this thread.
fn measure(f: impl FnOnce()) -> Duration {
    let start = thread_cpu();
    f();
    thread_cpu().saturating_sub(start)
}

async fn noop(record: ConsumerRecord) -> Result<(), String> {
    black_box(record.offset());
    Ok(())
}

async fn noop_batch(batch: Batch) -> Result<(), String> {
    black_box(batch.last_offset());
    Ok(())
}

/// The engine, its partitions, the next offset of each and one value buffer shared by every
/// record (as records of one fetch share the response's buffer).
struct Bench<H: Dispatch> {
    engine: ProcessingEngine<H>,
    partitions: Vec<TopicPartition>,
    next: i64,
    value: Bytes,
}

impl<H: Dispatch> Bench<H> {
    /// One fetch round's records and batches, per partition.
    fn round(&mut self) -> Vec<FetchedRecords> {
        let base = self.next;
        self.next += PER_PARTITION;
        (0..PARTITIONS)
            .map(|_| {
                let records = (base..base + PER_PARTITION)
                    .map(|o| Record::new(o, 1_764_460_800_000 + o, None, Some(self.value.clone())))
                    .collect();
                let batches = (0..PER_PARTITION / PER_BATCH + 1)
                    .map(|b| FetchedBatch {
                        last_offset: base + (b + 1) * PER_BATCH - 1,
                        info: BatchInfo::default(),
                    })
                    .collect();
                FetchedRecords { records, batches }
            })
            .collect()
    }

    /// Submits one round and waits until it has finished.
    async fn run(&self, round: Vec<FetchedRecords>) {
        for (tp, fetched) in self.partitions.iter().zip(round) {
            let submitted = self
                .engine
                .submit_fetched(tp, fetched)
                .expect("partition added");
            assert!(submitted.rejected.is_empty(), "the window holds a round");
        }
        assert!(self.engine.drained(Duration::from_secs(60)).await);
    }
}

fn setup<H: Dispatch>(rt: &Runtime, handler: H) -> Bench<H> {
    rt.block_on(async {
        let (engine, _events) =
            ProcessingEngine::new(ProcessingConfig::default(), handler).expect("engine");
        let partitions: Vec<TopicPartition> = (0..PARTITIONS)
            .map(|p| TopicPartition::new("bench", p))
            .collect();
        engine.add_partitions(partitions.iter().cloned());
        Bench {
            engine,
            partitions,
            next: 0,
            value: Bytes::from(vec![b'x'; VALUE_LEN]),
        }
    })
}

/// CPU time of `iters` rounds, building the records outside the measurement.
fn timed<H: Dispatch>(rt: &Runtime, bench: &mut Bench<H>, iters: u64) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let round = bench.round();
        total += measure(|| rt.block_on(bench.run(round)));
    }
    total
}

/// The best of [`RUNS`] timed runs, as CPU µs per record.
fn best_per_record<H: Dispatch>(rt: &Runtime, bench: &mut Bench<H>) -> f64 {
    let best = (0..RUNS)
        .map(|_| timed(rt, bench, ITERS_PER_RUN))
        .min()
        .unwrap_or_default();
    best.as_secs_f64() * 1e6 / (ITERS_PER_RUN * RECORDS_PER_ITER) as f64
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut records = setup(&rt, noop);
    let mut batches = setup(&rt, Batches(noop_batch));
    let mut c = Criterion::default().configure_from_args();
    let mut group = c.benchmark_group("engine");
    group.throughput(Throughput::Elements(RECORDS_PER_ITER));
    group.bench_function("12 partitions x 500 records, no-op handler", |b| {
        b.iter_custom(|iters| timed(&rt, &mut records, iters))
    });
    group.bench_function("12 partitions x 500 records, no-op batch handler", |b| {
        b.iter_custom(|iters| timed(&rt, &mut batches, iters))
    });
    group.finish();
    c.final_summary();

    let n = ITERS_PER_RUN * RECORDS_PER_ITER;
    let per_record = best_per_record(&rt, &mut records);
    println!("engine: best of {RUNS} runs of {n} records: {per_record:.3} µs CPU per record");
    let per_record = best_per_record(&rt, &mut batches);
    println!(
        "engine, batch handler: best of {RUNS} runs of {n} records: {per_record:.3} µs CPU per record"
    );
}
