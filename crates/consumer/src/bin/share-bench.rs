//! `share-bench`: consumes N records of a topic with the Mooring [`ShareConsumer`] (KIP-932) in a
//! share group, runs a handler on each (a no-op, or `--handler-delay-ms` of async sleep), and
//! prints one JSON line with what it measured. `scripts/bench-share` runs it beside Kafka's Java
//! `ShareConsumerPerformance` and kacrab's share consumer (`bench/rust-peers` `share-kacrab`,
//! which prints the same line) on the same data and prints the comparison.
//!
//! The share group must already start at the earliest offset (its `share.auto.offset.reset`
//! set to `earliest` before the first member joins: a share group starts at the latest offset
//! otherwise); `scripts/bench-share` sets it for each run's fresh group.
//!
//! The handler counts a record when it is done with it (after its sleep), and the N-th shuts the
//! consumer down. Timing: `consume_secs` from the first record counted to the N-th, `total_secs`
//! from just before `subscribe` to the N-th (the share group join is in it, as it is in Java's
//! figures). `cpu_secs` is the whole process's user + system CPU time at the end
//! (`/proc/self/stat`; null elsewhere than Linux), after the shutdown sent its verdicts. `stats`
//! are the consumer's [`ShareStats`](mooring_consumer::share::ShareStats) then.
//!
//! The consumer keeps its defaults (`mooring.concurrency`, buffering, fetch sizes) unless `--set`
//! says otherwise, so the figures are those of an application that configures nothing.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use clap::Parser;
use mooring_consumer::processing::{ConsumerRecord, Handler};
use mooring_consumer::share::{ShareConsumer, ShareConsumerConfig};
use mooring_consumer::ShutdownHandle;

#[derive(Debug, Parser)]
#[command(
    name = "share-bench",
    about = "Consume N records with the Mooring share consumer and print throughput as JSON"
)]
struct Args {
    /// Brokers: HOST:PORT[,...].
    #[arg(long = "bootstrap-server")]
    bootstrap_server: String,
    /// The topic to consume.
    #[arg(long)]
    topic: String,
    /// Stop after this many records.
    #[arg(long)]
    messages: u64,
    /// The share group (a fresh one whose `share.auto.offset.reset` is `earliest`).
    #[arg(long)]
    group: String,
    /// The handler sleeps this long (tokio's timer) before it counts its record; 0: a no-op.
    #[arg(long, default_value_t = 0)]
    handler_delay_ms: u64,
    /// Extra share consumer properties, KEY=VALUE (repeatable), e.g. `--set mooring.concurrency=64`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// Tokio worker threads (0: a current-thread runtime); the default is Tokio's own default
    /// (one per core), as `#[tokio::main]` gives an application.
    #[arg(long)]
    worker_threads: Option<usize>,
}

#[derive(Debug, Default)]
struct Counts {
    records: AtomicU64,
    bytes: AtomicU64,
    first: OnceLock<Instant>,
    last: OnceLock<Instant>,
}

/// Counts records and value bytes (after the delay, if any) and shuts the consumer down at the
/// N-th. A struct, so that `handle(&self)` borrows the counters: a closure handler would clone
/// its `Arc`s for every record's future.
struct Counter {
    counts: Arc<Counts>,
    shutdown: ShutdownHandle,
    target: u64,
    delay: Option<Duration>,
}

impl Handler for Counter {
    type Error = String;

    async fn handle(&self, record: ConsumerRecord) -> Result<(), String> {
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
        let counts = &self.counts;
        let _ = counts.first.get_or_init(Instant::now);
        let bytes = record.value().map_or(0, |v| v.len()) as u64;
        counts.bytes.fetch_add(bytes, Ordering::Relaxed);
        let n = counts.records.fetch_add(1, Ordering::Relaxed) + 1;
        if n == self.target {
            let _ = counts.last.set(Instant::now());
            self.shutdown.shutdown();
        }
        Ok(())
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match args.worker_threads {
        None => tokio::runtime::Runtime::new(),
        Some(0) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Some(n) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
    };
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("share-bench: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("share-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn consumer(args: &Args) -> Result<ShareConsumer, Box<dyn std::error::Error>> {
    let mut props: Vec<(String, String)> = vec![
        ("bootstrap.servers".into(), args.bootstrap_server.clone()),
        ("group.id".into(), args.group.clone()),
        ("client.id".into(), "share-bench".into()),
    ];
    for kv in &args.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))?;
        props.retain(|(key, _)| key != k);
        props.push((k.to_owned(), v.to_owned()));
    }
    Ok(ShareConsumer::new(ShareConsumerConfig::from_properties(
        props,
    )?)?)
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    if args.messages == 0 {
        return Err("--messages must be positive".into());
    }
    let consumer = consumer(&args)?;
    let shutdown = consumer.shutdown_handle();
    let counts = Arc::new(Counts::default());
    let target = args.messages;

    let begun = Instant::now();
    consumer.subscribe([args.topic.clone()])?;
    let handler = Counter {
        counts: Arc::clone(&counts),
        shutdown: shutdown.clone(),
        target,
        delay: (args.handler_delay_ms > 0).then(|| Duration::from_millis(args.handler_delay_ms)),
    };
    let watchdog = {
        let shutdown = shutdown.clone();
        let limit = Duration::from_secs(args.timeout_secs);
        tokio::spawn(async move {
            tokio::time::sleep(limit).await;
            shutdown.shutdown();
        })
    };
    let result = consumer.run(handler).await;
    watchdog.abort();
    result?;

    let records = counts.records.load(Ordering::Relaxed);
    let (Some(first), Some(last)) = (counts.first.get(), counts.last.get()) else {
        return Err(format!(
            "only {records} of {target} records within {} s",
            args.timeout_secs
        )
        .into());
    };
    // The records and bytes up to the N-th (a few more may have finished before shutdown took
    // hold).
    let bytes = counts.bytes.load(Ordering::Relaxed) * target / records.max(1);
    let consume = last.duration_since(*first).as_secs_f64().max(1e-9);
    let total = last.duration_since(begun).as_secs_f64();
    let stats = consumer.stats();
    println!(
        "{}",
        serde_json::json!({
            "client": "mooring",
            "records": target,
            "bytes": bytes,
            "consume_secs": consume,
            "total_secs": total,
            "records_per_sec": target as f64 / consume,
            "mib_per_sec": bytes as f64 / 1048576.0 / consume,
            "handler_delay_ms": args.handler_delay_ms,
            "cpu_secs": process_cpu_secs(),
            "stats": {
                "acquired": stats.acquired,
                "accepted": stats.accepted,
                "released": stats.released,
                "rejected": stats.rejected,
                "lock_expired": stats.lock_expired,
                "acknowledgements_failed": stats.acknowledgements_failed,
            },
        })
    );
    Ok(())
}

/// User + system CPU seconds of this process so far (Linux `/proc/self/stat`, USER_HZ = 100).
fn process_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}
