//! `fetch-floor`: the least work any Kafka client must do to consume a topic, as a floor for
//! `scripts/bench-consumer`'s figures (its client `floor`). It prints the same JSON line as
//! `consume-bench`, so the script reads both alike.
//!
//! What it does:
//! - no group: no FindCoordinator, no join, no commits;
//! - Metadata for the topic's partitions and leaders, ListOffsets for their earliest offsets;
//! - one connection per leader (the `mooring-client` connection, ApiVersions negotiated), one
//!   Fetch in flight on it at a time, with the consumer's defaults of `fetch.min.bytes`,
//!   `fetch.max.wait.ms`, `fetch.max.bytes` and `max.partition.fetch.bytes`, in a fetch session
//!   (KIP-227: after the first request, only the partitions whose offset moved are listed);
//! - the Fetch response decoded as a message (the records stay the response's bytes);
//! - each partition's next offset and its record count read from its batch headers alone
//!   (baseOffset, batchLength, lastOffsetDelta, recordsCount; control batches count no record),
//!   stopping once N records were counted or every partition is read to its high watermark
//!   (then it fails, the topic being short of N).
//!
//! What it does not do: no CRC-32C check, no decompression, no record decoding (so no record
//! value is ever seen, and it cannot say how many value bytes it consumed: `bytes` and
//! `mib_per_sec` are null, and the script computes them from the records and their size), no
//! hand-over to an application, no memory budget, no aborted-transaction filtering (it reads
//! uncommitted). Those parts' cost on one core is what `--costs` measures.
//!
//! Timing as `consume-bench`'s: `consume_secs` from the first response with a whole batch to the
//! one that brought the N-th record; `total_secs` from before the Metadata request to then.
//! `cpu_secs` is the process's user + system CPU time at the end.
//!
//! `--costs` (instead of `--messages`): fetches up to `--costs-bytes` of whole batches of the
//! topic (or all it has), then on one thread times CRC-32C and each codec's decompression over
//! them and prints one JSON line per part (see `costs.rs`).

#[path = "../bench-common/measure.rs"]
#[allow(dead_code)] // the floor uses the runtime and CPU-time parts only, not the handler
mod measure;

mod batches;
mod costs;
mod fetch;
mod session;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use mooring_client::{Client, ClientConfig};
use mooring_consumer::FetchConfig;

use fetch::{BoxError, Goal, Progress};

#[derive(Debug, Parser)]
#[command(
    name = "fetch-floor",
    about = "Consume N records with the least work any Kafka client must do, or time the parts \
             no client avoids (--costs); prints JSON"
)]
struct Args {
    /// Brokers: HOST:PORT[,...].
    #[arg(long = "bootstrap-server")]
    bootstrap_server: String,
    /// The topic to consume.
    #[arg(long)]
    topic: String,
    /// Stop after this many records (counted from the batch headers).
    #[arg(long, required_unless_present = "costs")]
    messages: Option<u64>,
    /// Time CRC-32C and decompression on one core over real batches of the topic instead.
    #[arg(long, conflicts_with = "messages")]
    costs: bool,
    /// With --costs: the most bytes of batches to fetch and time over.
    #[arg(long, default_value_t = 64 << 20)]
    costs_bytes: u64,
    /// With --costs: the least CPU seconds each part is timed for.
    #[arg(long, default_value_t = 1.0)]
    costs_secs: f64,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 600)]
    timeout_secs: u64,
    /// Tokio worker threads; 0 (the default) is a current-thread runtime, the least machinery.
    #[arg(long, default_value_t = 0)]
    worker_threads: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let worker_threads = Some(args.worker_threads);
    measure::main_on_runtime("fetch-floor", worker_threads, async move {
        run(args)
            .await
            .map_err(|e| -> Box<dyn std::error::Error> { e })
    })
}

async fn run(args: Args) -> Result<(), BoxError> {
    let begun = Instant::now();
    let goal = match args.messages {
        Some(n) => Goal::Records(n),
        None => Goal::Bytes(args.costs_bytes),
    };
    let progress = Arc::new(Progress::new(goal));
    let fetching = consume(&args, Arc::clone(&progress));
    tokio::time::timeout(Duration::from_secs(args.timeout_secs), fetching)
        .await
        .map_err(|_| {
            let (records, _) = progress.counted();
            format!(
                "{records} records in {} s, short of the goal",
                args.timeout_secs
            )
        })??;
    match goal {
        Goal::Records(n) => report(n, &progress, begun),
        Goal::Bytes(_) => {
            for part in costs::measure(&progress.take_kept(), args.costs_secs)? {
                println!("{}", part.json(&args.topic));
            }
            Ok(())
        }
    }
}

/// Plans the topic and runs one fetch loop per leader until they all end.
async fn consume(args: &Args, progress: Arc<Progress>) -> Result<(), BoxError> {
    let mut config = ClientConfig::new(args.bootstrap_server.split(','));
    config.client_id = "fetch-floor".into();
    let client = Client::new(config)?;
    let plan = Arc::new(fetch::plan(&client, &args.topic).await?);
    let mut tasks = tokio::task::JoinSet::new();
    for (&node, partitions) in &plan.by_leader {
        tasks.spawn(fetch::fetch_from(
            client.clone(),
            node,
            Arc::clone(&plan),
            partitions.clone(),
            FetchConfig::default(),
            Arc::clone(&progress),
        ));
    }
    while let Some(done) = tasks.join_next().await {
        done??;
    }
    Ok(())
}

/// The JSON line of a `--messages` run; an error if the topic ran out first.
fn report(target: u64, progress: &Progress, begun: Instant) -> Result<(), BoxError> {
    let (records, bytes) = progress.counted();
    let (Some(first), Some(last)) = (progress.first.get(), progress.last.get()) else {
        return Err(format!("the topic ran out after {records} of {target} records").into());
    };
    let consume_secs = last.duration_since(*first).as_secs_f64().max(1e-9);
    println!(
        "{}",
        serde_json::json!({
            "client": "floor",
            "records": target,
            "bytes": null,
            "consume_secs": consume_secs,
            "total_secs": last.duration_since(begun).as_secs_f64(),
            "records_per_sec": target as f64 / consume_secs,
            "mib_per_sec": null,
            "records_counted": records,
            "batch_bytes": bytes,
            "cpu_secs": measure::process_cpu_secs(),
        })
    );
    Ok(())
}
