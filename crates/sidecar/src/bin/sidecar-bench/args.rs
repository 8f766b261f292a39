//! The command line: `render` and `throughput`, each with its own arguments. `scripts/bench-sidecar`
//! and `tests/bench_smoke.rs` pass them, so their names and defaults are part of the interface.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::Error;

#[derive(Debug, Parser)]
#[command(name = "sidecar-bench", about = "mooring-sidecar performance figures")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Mode,
}

#[derive(Debug, Subcommand)]
pub enum Mode {
    /// /metrics scrape latency and sidecar RSS with N assigned partitions under event load.
    Render(RenderArgs),
    /// consume-bench records/s without the exporter, with it and a live sidecar, with it and no
    /// sidecar, interleaved.
    Throughput(ThroughputArgs),
}

#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The `mooring-sidecar` binary.
    #[arg(long)]
    pub sidecar: PathBuf,
    /// Brokers for the sidecar's broker watch (none: no watch, so no lag series).
    #[arg(long = "bootstrap-server")]
    pub bootstrap_server: Option<String>,
    /// The group the sidecar watches (it should have committed offsets on `--partitions`
    /// partitions).
    #[arg(long)]
    pub group: Option<String>,
    /// The topic of the announced assignment.
    #[arg(long, default_value = "bench-sidecar-1000p")]
    pub topic: String,
    /// Assigned partitions announced (and expected as lag series).
    #[arg(long, default_value_t = 1000)]
    pub partitions: i32,
    /// GETs of /metrics.
    #[arg(long, default_value_t = 2000)]
    pub scrapes: usize,
    /// Pause between two scrapes, ms.
    #[arg(long, default_value_t = 5)]
    pub scrape_gap_ms: u64,
    /// Telemetry lines per second besides the snapshots.
    #[arg(long, default_value_t = 2000)]
    pub events_per_sec: u64,
    /// A snapshot with every partition this often, ms (the exporter's default is 5000).
    #[arg(long, default_value_t = 1000)]
    pub snapshot_interval_ms: u64,
    /// The sidecar's `watch.interval.ms` (its default is 10000).
    #[arg(long, default_value_t = 1000)]
    pub watch_interval_ms: u64,
    /// Event load before the first scrape, s.
    #[arg(long, default_value_t = 3.0)]
    pub warmup_secs: f64,
    /// Goal: scrape p99, ms.
    #[arg(long, default_value_t = 5.0)]
    pub goal_p99_ms: f64,
    /// Goal: sidecar RSS, MiB.
    #[arg(long, default_value_t = 30.0)]
    pub goal_rss_mib: f64,
    /// Tiny run for a test (no broker needed); its figures mean nothing.
    #[arg(long)]
    pub smoke: bool,
}

#[derive(Debug, clap::Args)]
pub struct ThroughputArgs {
    /// The `mooring-sidecar` binary.
    #[arg(long)]
    pub sidecar: PathBuf,
    /// The `consume-bench` binary.
    #[arg(long)]
    pub consume_bench: PathBuf,
    /// Brokers.
    #[arg(long = "bootstrap-server")]
    pub bootstrap_server: String,
    /// The topic (already filled with at least `--records` records).
    #[arg(long)]
    pub topic: String,
    /// Records per run.
    #[arg(long, default_value_t = 2_000_000)]
    pub records: u64,
    /// Rounds (each: off, on, absent in a rotating order).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// The sidecar's `watch.interval.ms` in the `on` runs (its default is 10000).
    #[arg(long, default_value_t = 1000)]
    pub watch_interval_ms: u64,
}

impl RenderArgs {
    /// `--smoke`: a run of well under a second (fewer scrapes, less load, a short warm-up).
    pub fn shrink_for_smoke(&mut self) {
        self.scrapes = self.scrapes.min(50);
        self.events_per_sec = self.events_per_sec.min(200);
        self.warmup_secs = self.warmup_secs.min(0.3);
        self.snapshot_interval_ms = self.snapshot_interval_ms.min(200);
    }

    /// The brokers and the group of the sidecar's broker watch (none: no watch).
    pub fn watched(&self) -> Result<Option<(String, String)>, Error> {
        match (&self.bootstrap_server, &self.group) {
            (Some(b), Some(g)) => Ok(Some((b.clone(), g.clone()))),
            (None, None) => Ok(None),
            _ => Err("--bootstrap-server and --group go together".into()),
        }
    }
}
