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

#[path = "bench-common/measure.rs"]
mod measure;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use mooring_consumer::share::{ShareConsumer, ShareConsumerConfig};

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

fn main() -> ExitCode {
    let args = Args::parse();
    let worker_threads = args.worker_threads;
    measure::main_on_runtime("share-bench", worker_threads, run(args))
}

fn consumer(args: &Args) -> Result<ShareConsumer, Box<dyn std::error::Error>> {
    let props = measure::properties(
        vec![
            ("bootstrap.servers".into(), args.bootstrap_server.clone()),
            ("group.id".into(), args.group.clone()),
            ("client.id".into(), "share-bench".into()),
        ],
        &args.set,
    )?;
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
    let counts = Arc::new(measure::Counts::default());
    let target = args.messages;

    let begun = Instant::now();
    consumer.subscribe([args.topic.clone()])?;
    let handler = measure::Counter {
        counts: Arc::clone(&counts),
        shutdown: shutdown.clone(),
        target,
        delay: (args.handler_delay_ms > 0).then(|| Duration::from_millis(args.handler_delay_ms)),
    };
    let watchdog = measure::give_up_after(&shutdown, args.timeout_secs);
    let result = consumer.run(handler).await;
    watchdog.abort();
    result?;

    let measured = counts.measured(target, begun, args.timeout_secs)?;
    let stats = consumer.stats();
    println!(
        "{}",
        serde_json::json!({
            "client": "mooring",
            "records": target,
            "bytes": measured.bytes,
            "consume_secs": measured.consume_secs,
            "total_secs": measured.total_secs,
            "records_per_sec": target as f64 / measured.consume_secs,
            "mib_per_sec": measured.bytes as f64 / 1048576.0 / measured.consume_secs,
            "handler_delay_ms": args.handler_delay_ms,
            "cpu_secs": measure::process_cpu_secs(),
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
