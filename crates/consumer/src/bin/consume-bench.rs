//! `consume-bench`: consumes N records of a topic with the Mooring [`Consumer`] (a no-op handler
//! that counts records and value bytes), in a fresh group from the earliest offset, and prints one
//! JSON line with what it measured. `scripts/bench-consumer` runs it beside Kafka's Java
//! `ConsumerPerformance`, librdkafka and the Rust clients of `bench/rust-peers` (which print the
//! same line) on the same data and prints the comparison.
//!
//! Timing: `consume_secs` runs from the first record handed to the handler to the N-th (the
//! group join and the offset look-ups are before it, as Java's `fetch.time.ms` leaves out the
//! rebalance); `total_secs` from just before `subscribe` to the N-th record.
//!
//! The consumer keeps its defaults (buffering, concurrency, fetch sizes) unless `--set` says
//! otherwise, so the figures are those of an application that configures nothing.
//!
//! `--telemetry URL` runs the telemetry exporter (`TelemetryExporter`, default settings) against
//! that sidecar ingest endpoint, as a service with the sidecar would; without it the consumer's
//! event stream is not taken. `scripts/bench-sidecar` interleaves runs without the exporter, with
//! it against a live `mooring-sidecar`, and with it against a port where nothing listens, and
//! prints the ratios. `cpu_secs` is the whole process's user + system CPU time at the end
//! (`/proc/self/stat`; null elsewhere than Linux). The JSON line's `telemetry` is then `{sent, failures, dropped}`: events
//! the sidecar accepted and failed POSTs by the end of the timed part, events lost in all (after
//! the exporter's last flush); `null` without the exporter.
//!
//! `--idle` (instead of `--messages`) consumes until SIGTERM or SIGINT, for `scripts/bench-idle`,
//! which measures what a consumer costs when there is nothing to consume: one JSON line
//! `{"event":"ready",...}` once the consumer has partitions assigned and a position for each
//! (checked every 100 ms until then, never after, so the check costs nothing while measured),
//! and at the end the JSON line with `records` (whatever was consumed) and `cpu_secs`.

#[path = "bench-common/measure.rs"]
mod measure;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::telemetry::{ExporterConfig, TelemetryExporter};
use mooring_consumer::{Consumer, ConsumerConfig};

#[derive(Debug, Parser)]
#[command(
    name = "consume-bench",
    about = "Consume N records with the Mooring consumer and print throughput as JSON"
)]
struct Args {
    /// Brokers: HOST:PORT[,...].
    #[arg(long = "bootstrap-server")]
    bootstrap_server: String,
    /// The topic to consume.
    #[arg(long)]
    topic: String,
    /// Stop after this many records.
    #[arg(long, required_unless_present = "idle")]
    messages: Option<u64>,
    /// Consume until SIGTERM or SIGINT (no record limit, no --timeout-secs); print a `ready` line
    /// once every assigned partition has a position.
    #[arg(long, conflicts_with = "messages")]
    idle: bool,
    /// The consumer group (use a fresh one so consumption starts at the earliest offset).
    #[arg(long)]
    group: String,
    /// Extra consumer properties, KEY=VALUE (repeatable), e.g. `--set fetch.max.bytes=1048576`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// Tokio worker threads (0: a current-thread runtime); the default is Tokio's own default
    /// (one per core), as `#[tokio::main]` gives an application.
    #[arg(long)]
    worker_threads: Option<usize>,
    /// Run the telemetry exporter against this sidecar ingest endpoint
    /// (e.g. `http://127.0.0.1:9464/v1/events`); off when not given.
    #[arg(long, value_name = "URL")]
    telemetry: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let worker_threads = args.worker_threads;
    measure::main_on_runtime("consume-bench", worker_threads, run(args))
}

fn consumer(args: &Args) -> Result<Consumer, Box<dyn std::error::Error>> {
    let props = measure::properties(
        vec![
            ("bootstrap.servers".into(), args.bootstrap_server.clone()),
            ("group.id".into(), args.group.clone()),
            ("auto.offset.reset".into(), "earliest".into()),
            ("client.id".into(), "consume-bench".into()),
        ],
        &args.set,
    )?;
    Ok(Consumer::new(ConsumerConfig::from_properties(props)?)?)
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let consumer = consumer(&args)?;
    let Some(target) = args.messages else {
        return idle(&consumer, &args.topic).await;
    };
    let shutdown = consumer.shutdown_handle();
    let counts = Arc::new(measure::Counts::default());
    let exporter = match &args.telemetry {
        Some(url) => Some(TelemetryExporter::spawn(
            &consumer,
            ExporterConfig::new(url.clone()),
        )?),
        None => None,
    };

    let begun = Instant::now();
    consumer.subscribe([args.topic.clone()])?;
    let handler = measure::Counter {
        counts: Arc::clone(&counts),
        shutdown: shutdown.clone(),
        target,
        delay: None,
    };
    let watchdog = measure::give_up_after(&shutdown, args.timeout_secs);
    let result = consumer.run(handler).await;
    watchdog.abort();
    // After the timed part: the exporter's last snapshot and flush.
    let telemetry = match exporter {
        Some(exporter) => {
            let (sent, failures) = (exporter.sent(), exporter.failures());
            let dropped = exporter.shutdown().await;
            serde_json::json!({ "sent": sent, "dropped": dropped, "failures": failures })
        }
        None => serde_json::Value::Null,
    };
    result?;

    let measured = counts.measured(target, begun, args.timeout_secs)?;
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
            "telemetry": telemetry,
            "cpu_secs": measure::process_cpu_secs(),
        })
    );
    Ok(())
}

/// `--idle`: consumes until SIGTERM/SIGINT; prints the `ready` line once every assigned partition
/// has a position, and the records consumed and CPU seconds at the end.
async fn idle(consumer: &Consumer, topic: &str) -> Result<(), Box<dyn std::error::Error>> {
    let shutdown = consumer.shutdown_handle();
    let signals = shutdown.on_signals();
    let records = Arc::new(AtomicU64::new(0));
    let begun = Instant::now();
    consumer.subscribe([topic.to_owned()])?;
    let handler = {
        let records = Arc::clone(&records);
        move |_record: ConsumerRecord| {
            let records = Arc::clone(&records);
            async move {
                records.fetch_add(1, Ordering::Relaxed);
                Ok::<(), String>(())
            }
        }
    };
    let ready = async {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        while !shutdown.is_shutdown() {
            tick.tick().await;
            let assigned = consumer.assignment();
            if !assigned.is_empty() && assigned.iter().all(|tp| consumer.position(tp).is_some()) {
                println!(
                    "{}",
                    serde_json::json!({
                        "event": "ready",
                        "assigned": assigned.len(),
                        "secs": begun.elapsed().as_secs_f64(),
                    })
                );
                return;
            }
        }
    };
    let (result, ()) = tokio::join!(consumer.run(handler), ready);
    signals.abort();
    result?;
    println!(
        "{}",
        serde_json::json!({
            "client": "mooring",
            "idle": true,
            "records": records.load(Ordering::Relaxed),
            "total_secs": begun.elapsed().as_secs_f64(),
            "cpu_secs": measure::process_cpu_secs(),
        })
    );
    Ok(())
}
