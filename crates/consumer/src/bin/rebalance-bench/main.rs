//! `rebalance-bench`: what a member joining or leaving a group costs the group's consumption,
//! measured from the trace its members leave (what each consumed, when, and its listener calls).
//!
//! - `analyze`: reads a trace (ours or the Java side's, `bench/java-peers/RebalanceBench.java`)
//!   and prints one JSON line per change: the time until every partition is consumed again and
//!   the longest pause of the partitions that did not move and of those that did
//!   (`analysis.rs` says exactly how).

mod analysis;
mod trace;

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "rebalance-bench",
    about = "Measure what a member joining or leaving costs a group's consumption"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print one JSON line per change of a trace.
    Analyze(AnalyzeArgs),
}

#[derive(Debug, clap::Args)]
struct AnalyzeArgs {
    #[arg(long)]
    trace: PathBuf,
    #[arg(long, default_value_t = 1000)]
    partitions: usize,
    /// Labels copied into every line: the client, its mode, the member count and the round.
    #[arg(long)]
    client: String,
    #[arg(long)]
    mode: String,
    #[arg(long)]
    members: usize,
    #[arg(long, default_value_t = 1)]
    round: usize,
}

fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let result = match Args::parse().command {
        Command::Analyze(args) => analyze(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rebalance-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn analyze(args: &AnalyzeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let lines = trace::read(BufReader::new(File::open(&args.trace)?))?;
    let a = analysis::analyse(&lines, args.partitions)?;
    if a.never_consumed > 0 {
        eprintln!(
            "rebalance-bench: {} of {} partitions were never consumed in {}",
            a.never_consumed,
            args.partitions,
            args.trace.display()
        );
    }
    for change in &a.changes {
        let mut line = serde_json::to_value(change)?;
        if let Some(map) = line.as_object_mut() {
            map.insert("client".into(), args.client.clone().into());
            map.insert("mode".into(), args.mode.clone().into());
            map.insert("members".into(), args.members.into());
            map.insert("round".into(), args.round.into());
            map.insert("baseline_max_gap_ms".into(), a.baseline_max_gap_ms.into());
            map.insert("records".into(), a.records.into());
        }
        println!("{line}");
    }
    Ok(())
}
