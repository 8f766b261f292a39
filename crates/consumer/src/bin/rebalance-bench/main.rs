//! `rebalance-bench`: what a member joining or leaving a group costs the group's consumption, for
//! `scripts/bench-rebalance`, which runs it beside the Java client on one 1,000-partition topic
//! with a steady producer and prints the comparison.
//!
//! - `mooring`: runs N Mooring members of one group in this process through the scenario
//!   (settle, baseline, then join N → N+1 and leave N+1 → N, `--cycles` times; see `members.rs`)
//!   with one of the three group protocols: classic eager (`partition.assignment.strategy=range`),
//!   classic cooperative-sticky, or the consumer protocol (`group.protocol=consumer`); everything
//!   else at the consumer's defaults. Writes the trace (`trace.rs`).
//! - `analyze`: reads a trace (ours or the Java side's, `bench/java-peers/RebalanceBench.java`)
//!   and prints one JSON line per change: the time until every partition is consumed again and
//!   the longest pause of the partitions that did not move and of those that did
//!   (`analysis.rs` says exactly how).
//! - `report`: reads those lines from every run and prints the tables, medians per member count,
//!   client and protocol, with ratios to classic eager and to Java, and the goal lines
//!   (`report.rs`).

mod analysis;
mod members;
mod report;
mod trace;

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use mooring_consumer::ConsumerConfig;

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
    /// Run Mooring members through the scenario and write the trace.
    Mooring(MooringArgs),
    /// Print one JSON line per change of a trace.
    Analyze(AnalyzeArgs),
    /// Print the tables from the JSON lines of every run.
    Report(ReportArgs),
}

/// The group protocol and assignor of the members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Classic protocol, `range`: eager (every partition revoked at each rebalance).
    Eager,
    /// Classic protocol, `cooperative-sticky` (KIP-429).
    Cooperative,
    /// `group.protocol=consumer` (KIP-848; the broker assigns).
    Consumer,
}

#[derive(Debug, clap::Args)]
struct MooringArgs {
    /// Brokers: HOST:PORT[,...].
    #[arg(long = "bootstrap-server")]
    bootstrap_server: String,
    #[arg(long)]
    topic: String,
    /// The topic's partition count.
    #[arg(long, default_value_t = 1000)]
    partitions: usize,
    /// The group (a fresh one per run).
    #[arg(long)]
    group: String,
    /// Members before a join (and after a leave).
    #[arg(long, default_value_t = 3)]
    members: usize,
    #[arg(long, value_enum)]
    mode: Mode,
    /// Join-then-leave cycles.
    #[arg(long, default_value_t = 1)]
    cycles: usize,
    /// Steady consumption measured before the first change.
    #[arg(long, default_value_t = 3000)]
    baseline_ms: u64,
    /// Time after a change settles before the next one.
    #[arg(long, default_value_t = 2000)]
    hold_ms: u64,
    /// No listener call for this long is part of "settled".
    #[arg(long, default_value_t = 1000)]
    quiet_ms: u64,
    /// A change that has not settled after this long ends the run (an error).
    #[arg(long, default_value_t = 90_000)]
    settle_timeout_ms: u64,
    /// Where the trace goes.
    #[arg(long)]
    trace: PathBuf,
    /// Extra consumer properties for every member, KEY=VALUE (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
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

#[derive(Debug, clap::Args)]
struct ReportArgs {
    /// The JSON lines of `analyze`, every run's.
    #[arg(long)]
    results: PathBuf,
    /// The clients' `fetch.max.wait.ms` (the default of both, 500).
    #[arg(long, default_value_t = 500)]
    fetch_max_wait_ms: i64,
    /// The consumer protocol's heartbeat interval (the broker's
    /// `group.consumer.heartbeat.interval.ms`, 5000 by default).
    #[arg(long, default_value_t = 5000)]
    heartbeat_interval_ms: i64,
}

fn main() -> ExitCode {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
    let result = match Args::parse().command {
        Command::Mooring(args) => mooring(args),
        Command::Analyze(args) => analyze(&args),
        Command::Report(args) => report(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rebalance-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Each member's properties: the bench's, the mode's, then `--set`.
fn member_properties(args: &MooringArgs, id: usize) -> Result<Vec<(String, String)>, String> {
    let mut props: Vec<(String, String)> = vec![
        ("bootstrap.servers".into(), args.bootstrap_server.clone()),
        ("group.id".into(), args.group.clone()),
        ("client.id".into(), format!("rebalance-bench-{id}")),
        ("auto.offset.reset".into(), "latest".into()),
    ];
    match args.mode {
        Mode::Eager => props.push(("partition.assignment.strategy".into(), "range".into())),
        Mode::Cooperative => props.push((
            "partition.assignment.strategy".into(),
            "cooperative-sticky".into(),
        )),
        Mode::Consumer => props.push(("group.protocol".into(), "consumer".into())),
    }
    for kv in &args.set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))?;
        props.retain(|(key, _)| key != k);
        props.push((k.to_owned(), v.to_owned()));
    }
    Ok(props)
}

fn mooring(args: MooringArgs) -> Result<(), Box<dyn std::error::Error>> {
    // Checked once here, so a bad --set is said before any member starts.
    ConsumerConfig::from_properties(member_properties(&args, 0)?)?;
    let scenario = members::Scenario {
        members: args.members,
        cycles: args.cycles,
        baseline: Duration::from_millis(args.baseline_ms),
        hold: Duration::from_millis(args.hold_ms),
        quiet: Duration::from_millis(args.quiet_ms),
        settle_timeout: Duration::from_millis(args.settle_timeout_ms),
    };
    let trace_path = args.trace.clone();
    let (topic, partitions) = (args.topic.clone(), args.partitions);
    let run = members::Run::new(topic, partitions, scenario, move |id| {
        ConsumerConfig::from_properties(member_properties(&args, id)?).map_err(|e| e.to_string())
    });
    let runtime = tokio::runtime::Runtime::new()?;
    let (lines, failure) = runtime.block_on(run.run());
    let mut out = BufWriter::new(File::create(&trace_path)?);
    for line in &lines {
        writeln!(out, "{line}")?;
    }
    out.flush()?;
    match failure {
        Some(why) => Err(why.into()),
        None => Ok(()),
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
            map.insert(
                "baseline_producer_max_gap_ms".into(),
                a.baseline_producer_max_gap_ms.into(),
            );
            map.insert("records".into(), a.records.into());
        }
        println!("{line}");
    }
    Ok(())
}

fn report(args: &ReportArgs) -> Result<(), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(&args.results)?;
    let rows = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str::<report::Row>)
        .collect::<Result<Vec<_>, _>>()?;
    print!(
        "{}",
        report::render(
            &rows,
            report::Goals {
                fetch_max_wait_ms: args.fetch_max_wait_ms,
                heartbeat_interval_ms: args.heartbeat_interval_ms,
            },
        )
    );
    Ok(())
}
