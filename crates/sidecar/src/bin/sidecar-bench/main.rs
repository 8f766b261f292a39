//! `sidecar-bench`: the sidecar's performance figures.
//! `scripts/bench-sidecar` builds it and runs both parts on a dedicated cluster.
//!
//! `sidecar-bench render`: runs the real `mooring-sidecar` binary as its own process (so its RSS
//! is its own), announces N assigned partitions to it (a rebalance whose assignment is N
//! partitions) and, when `--bootstrap-server`/`--group` are given, points its broker watch at a
//! group that has committed offsets on N partitions, so the scrape carries N
//! `mooring_partition_lag_records` and N `mooring_partition_lag_seconds` series. It then POSTs a
//! sustained NDJSON event load as the consumer's exporter does (batches of heartbeats, commits
//! and backpressure events every 100 ms, a snapshot with the N partitions every
//! `--snapshot-interval-ms`), and meanwhile GETs `/metrics` `--scrapes` times over one keep-alive
//! connection, timing each full GET (request written to the last body byte read). It prints the
//! scrape latency percentiles, the scrape's size (series, bytes, lag series; the fewest lag series
//! any scrape had), the sidecar's VmRSS/VmHWM from `/proc/<pid>/status` before, during and after
//! the load, the render time measured in this process on an identical registry (no HTTP), and
//! PASS/FAIL against the goals: scrape p99 <= 5 ms, RSS <= 30 MiB.
//!
//! `sidecar-bench throughput`: runs `consume-bench` on the same topic in rounds, each round
//! `off` (no exporter), `on` (exporter → a live `mooring-sidecar` watching the run's group) and
//! `absent` (exporter → a port where nothing listens), the order rotating each round. Prints
//! records/s per run, the median/min/max per mode, and the on/off and absent/off ratios (of the
//! medians, and the spread of the per-round paired ratios) against the goal "no effect beyond
//! run-to-run noise".
//!
//! `--smoke` (render) is a tiny run without a broker that `tests/bench_smoke.rs` runs so this
//! binary cannot rot; its timings mean nothing.
//!
//! The files: `args.rs` (the command line), `sidecar.rs` (the sidecar as a child process),
//! `http.rs` (the HTTP client that posts and scrapes), `telemetry.rs` (the exporter's lines),
//! `procfs.rs` (a process's memory and CPU figures), `stats.rs` (percentiles and verdicts),
//! `render/` and `throughput/` (the two parts, each with its report).

mod args;
mod http;
mod procfs;
mod render;
mod sidecar;
mod stats;
mod telemetry;
mod throughput;

use std::process::ExitCode;

use clap::Parser;

use args::{Cli, Mode};

/// Any failure of a run: reported, and the exit status is 1.
type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sidecar-bench: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Mode::Render(args) => render::render(args).await,
            Mode::Throughput(args) => throughput::throughput(args).await,
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(e) => {
            eprintln!("sidecar-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
