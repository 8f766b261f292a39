//! `soak-report`: the end of `scripts/soak`. Reads the run directory (the producer's
//! acknowledgements, each member life's processed records, the members' events, the timeline of
//! restarts and faults) and prints what they add up to: lost records (acknowledged, never
//! processed), duplicated ones (processed more than once) by cause, wrong values, rebalances,
//! how many restarts and faults of each kind there were, and the longest stall of each partition
//! with what was going on at the time. Exit status 1 if a record was lost or had a wrong value,
//! 2 if the files could not be read.
//!
//! Rebalances are counted from the members' events: the group's generations are the distinct
//! `generation=` values of `rebalance-completed` events (every member of a generation reports
//! the same one; a static rejoin keeps the generation and is no rebalance), split at `--chaos-from`
//! into those of the members' first joins and those of the soak; each member's own
//! `rebalance-started` events are counted by cause beside them.

mod analysis;
mod inputs;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use analysis::{check, disturbances, during, lives, stalls, Check, Disturbance, Stall};
use inputs::{Inputs, Mark};

#[derive(Debug, Parser)]
#[command(
    name = "soak-report",
    about = "Checks a soak run's processed records against the producer's acknowledgements and \
             prints lost, duplicated, rebalances, restarts, faults and the longest stall per \
             partition"
)]
struct Args {
    /// The run directory scripts/soak wrote.
    #[arg(long)]
    dir: PathBuf,
    /// The topic the members consumed.
    #[arg(long, default_value = "orders")]
    topic: String,
    /// Unix ms the chaos started (times are shown from it; rebalances before it are the joins').
    #[arg(long, required_unless_present = "lost_only")]
    chaos_from: Option<i64>,
    /// Unix ms the run ended (records never processed stall their partition until then).
    #[arg(long, required_unless_present = "lost_only")]
    until: Option<i64>,
    /// Print only `acknowledged=N processed=N lost=N` (while the members catch up); exit 1 if
    /// a record is not processed yet.
    #[arg(long)]
    lost_only: bool,
    /// A disturbance counts as going on for this long after it is over (a member back must
    /// rejoin, a broker back must lead again).
    #[arg(long, default_value_t = 10)]
    settle_secs: i64,
    /// Stalls at least this long are counted per partition.
    #[arg(long, default_value_t = 5)]
    stall_secs: i64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let inputs = match Inputs::read(&args.dir, &args.topic) {
        Ok(inputs) => inputs,
        Err(e) => {
            eprintln!("soak-report: {e}");
            return ExitCode::from(2);
        }
    };
    if inputs.acked.is_empty() {
        eprintln!(
            "soak-report: {}: the producer had nothing acknowledged",
            args.dir.join("producer.txt").display()
        );
        return ExitCode::from(2);
    }
    let lives = lives(&inputs.timeline);
    let checked = check(&inputs.acked, &inputs.processed, &lives);
    let (Some(chaos_from), Some(until)) = (args.chaos_from, args.until) else {
        println!(
            "acknowledged={} processed={} lost={}",
            inputs.acked.len(),
            checked.distinct,
            checked.lost.len()
        );
        return if checked.lost.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    };
    let at = |ms: i64| format!("+{:.1}s", (ms - chaos_from) as f64 / 1000.0);

    println!("   acknowledged:       {} records, {} send errors (given up by the producer, not acknowledged)", inputs.acked.len(), inputs.send_errors);
    println!(
        "   processed:          {} distinct acknowledged records ({} processings in all; {} records processed but never acknowledged)",
        checked.distinct,
        inputs.processed.len(),
        checked.unacked
    );
    print_loss(&checked);
    print_rebalances(&inputs.events, chaos_from);
    print_counts(&inputs.timeline);
    let disturbances = disturbances(&inputs.timeline, until);
    print_stalls(&inputs, &args, until, &disturbances, &at);
    for (path, n) in &inputs.unparsed.0 {
        println!("   unparsed lines:     {n} in {}", path.display());
    }
    if checked.lost.is_empty() && checked.wrong.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn print_loss(checked: &Check) {
    println!("   lost:               {}", checked.lost.len());
    if !checked.lost.is_empty() {
        let mut by_partition: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
        for (p, o) in &checked.lost {
            by_partition.entry(*p).or_default().push(*o);
        }
        for (p, offsets) in by_partition {
            let shown: Vec<String> = offsets.iter().take(20).map(i64::to_string).collect();
            println!(
                "     partition {p}: {} lost, offsets {}{}",
                offsets.len(),
                shown.join(","),
                if offsets.len() > 20 { ",..." } else { "" }
            );
        }
    }
    println!(
        "   duplicated:         {} processings beyond a record's first",
        checked.duplicated()
    );
    for (cause, n) in &checked.duplicates {
        println!("     {n:>8}  {cause}");
    }
    if !checked.wrong.is_empty() {
        println!(
            "   wrong values:       {} (first: {:?})",
            checked.wrong.len(),
            &checked.wrong[..checked.wrong.len().min(5)]
        );
    }
}

fn print_rebalances(events: &[Mark], chaos_from: i64) {
    let mut joining = BTreeSet::new();
    let mut soak = BTreeSet::new();
    let mut started: BTreeMap<String, u64> = BTreeMap::new();
    let mut other: BTreeMap<&str, u64> = BTreeMap::new();
    for e in events {
        match e.what.as_str() {
            "rebalance-completed" => {
                if let Some(g) = e.field("generation").and_then(|g| g.parse::<i64>().ok()) {
                    if e.at_ms < chaos_from {
                        joining.insert(g);
                    } else {
                        soak.insert(g);
                    }
                }
            }
            "rebalance-started" => {
                let cause = e.field("cause").unwrap_or("?").to_string();
                *started.entry(cause).or_default() += 1;
            }
            "static-rejoin"
            | "lost"
            | "fenced"
            | "rebalance-failed"
            | "commit-failed"
            | "poll-interval-exceeded" => *other.entry(e.what.as_str()).or_default() += 1,
            _ => {}
        }
    }
    let soak: BTreeSet<i64> = soak.difference(&joining).copied().collect();
    let span = |s: &BTreeSet<i64>| match (s.first(), s.last()) {
        (Some(a), Some(b)) => format!("{a}..{b}"),
        _ => "-".into(),
    };
    println!(
        "   rebalances:         {} during the soak (group generations {}), {} while the members first joined (generations {}); distinct generations of the members' rebalance-completed events",
        soak.len(),
        span(&soak),
        joining.len(),
        span(&joining)
    );
    let causes: Vec<String> = started.iter().map(|(c, n)| format!("{c} {n}")).collect();
    println!(
        "   member rebalances:  {} rebalance-started events over all members ({})",
        started.values().sum::<u64>(),
        if causes.is_empty() {
            "-".into()
        } else {
            causes.join(", ")
        }
    );
    let other: Vec<String> = [
        "static-rejoin",
        "lost",
        "fenced",
        "rebalance-failed",
        "commit-failed",
        "poll-interval-exceeded",
    ]
    .iter()
    .map(|k| format!("{k} {}", other.get(k).copied().unwrap_or(0)))
    .collect();
    println!(
        "   member events:      {} (rebalance-failed: attempts that failed and were retried; commit-failed: commits that failed after their retries)",
        other.join(", ")
    );
}

/// Restarts of members and brokers, coordinator moves and fault episodes, from the timeline.
fn print_counts(timeline: &[Mark]) {
    let mut members: BTreeMap<String, u64> = BTreeMap::new();
    let mut exits: BTreeMap<String, u64> = BTreeMap::new();
    let mut brokers: BTreeMap<String, u64> = BTreeMap::new();
    let mut faults: BTreeMap<String, u64> = BTreeMap::new();
    let mut corrupted = 0u64;
    let mut signal_of: HashMap<(String, String), String> = HashMap::new();
    for m in timeline {
        let field = |k: &str| m.field(k).unwrap_or("?").to_string();
        match (m.who.as_str(), m.what.as_str()) {
            ("soak", "member-stop") => {
                let key = (field("member"), field("life"));
                signal_of.insert(key, format!("SIG{}/{}", field("signal"), field("reason")));
                if field("reason") != "final" {
                    let label = match field("reason").as_str() {
                        "hung" => "SIGKILL after a hung SIGTERM".to_string(),
                        _ => format!("SIG{} {}", field("signal"), field("kind")),
                    };
                    *members.entry(label).or_default() += 1;
                }
            }
            ("soak", "member-exit") => {
                let key = (field("member"), field("life"));
                let how = signal_of
                    .get(&key)
                    .cloned()
                    .unwrap_or_else(|| "no signal".into());
                *exits
                    .entry(format!("{how}: status {}", field("status")))
                    .or_default() += 1;
            }
            ("soak", "broker-stop") => {
                let what = match (field("reason").as_str(), field("how").as_str()) {
                    ("coordinator", _) => "coordinator moves (the coordinator SIGKILLed)",
                    (_, "kill") => "SIGKILL and start",
                    _ => "restart (SIGTERM and start)",
                };
                *brokers.entry(what.to_string()).or_default() += 1;
            }
            ("fault-proxy", "fault-start") => *faults.entry(field("kind")).or_default() += 1,
            ("fault-proxy", "fault-end") => {
                corrupted += m
                    .field("corrupted")
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0)
            }
            _ => {}
        }
    }
    let join = |m: &BTreeMap<String, u64>| {
        if m.is_empty() {
            "none".to_string()
        } else {
            m.iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    };
    println!(
        "   member restarts:    {} ({})",
        members.values().sum::<u64>(),
        join(&members)
    );
    println!("   member exits:       {}", join(&exits));
    println!(
        "   broker restarts:    {} ({})",
        brokers.values().sum::<u64>(),
        join(&brokers)
    );
    println!(
        "   proxy faults:       {} ({}); {corrupted} responses corrupted",
        faults.values().sum::<u64>(),
        join(&faults)
    );
}

fn print_stalls(
    inputs: &Inputs,
    args: &Args,
    until: i64,
    disturbances: &[Disturbance],
    at: &dyn Fn(i64) -> String,
) {
    let mut first: HashMap<(i32, i64), i64> = HashMap::new();
    let mut times: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for p in &inputs.processed {
        let t = first.entry((p.partition, p.offset)).or_insert(p.at_ms);
        *t = (*t).min(p.at_ms);
        times.entry(p.partition).or_default().push(p.at_ms);
    }
    let mut acked: BTreeMap<i32, Vec<(i64, Option<i64>)>> = BTreeMap::new();
    for a in &inputs.acked {
        let f = first.get(&(a.partition, a.offset)).copied();
        acked.entry(a.partition).or_default().push((a.at_ms, f));
    }
    let settle = args.settle_secs * 1000;
    let threshold = args.stall_secs * 1000;
    let mut long_by_kind: BTreeMap<String, u64> = BTreeMap::new();
    let mut long_total = 0u64;
    println!(
        "   longest stall per partition (acknowledged records waiting and nothing of the partition processed; what was going on, each counted until {}s after it was over):",
        args.settle_secs
    );
    for (partition, acked) in &acked {
        let none = Vec::new();
        let all = stalls(acked, times.get(partition).unwrap_or(&none), until);
        let long: Vec<&Stall> = all.iter().filter(|s| s.millis() >= threshold).collect();
        for s in &long {
            long_total += 1;
            let kinds: BTreeSet<&str> = during(s, disturbances, settle)
                .iter()
                .map(|d| d.kind.as_str())
                .collect();
            if kinds.is_empty() {
                *long_by_kind.entry("nothing (load?)".into()).or_default() += 1;
            }
            for k in kinds {
                *long_by_kind.entry(k.to_string()).or_default() += 1;
            }
        }
        let Some(longest) = all.iter().max_by_key(|s| s.millis()) else {
            println!("     {}-{partition}: no stall", args.topic);
            continue;
        };
        let going_on: Vec<String> = during(longest, disturbances, settle)
            .iter()
            .map(|d| format!("{} from {}", d.label, at(d.start_ms)))
            .collect();
        println!(
            "     {}-{partition}: {:.1} s at {}..{} during {}; {} stalls of {} s or more",
            args.topic,
            longest.millis() as f64 / 1000.0,
            at(longest.start_ms),
            at(longest.end_ms),
            if going_on.is_empty() {
                "nothing the soak did (load?)".into()
            } else {
                going_on.join(", ")
            },
            long.len(),
            args.stall_secs
        );
    }
    let kinds: Vec<String> = long_by_kind
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    println!(
        "   stalls of {} s or more: {long_total} over all partitions; going on during them: {}",
        args.stall_secs,
        if kinds.is_empty() {
            "-".into()
        } else {
            kinds.join(", ")
        }
    );
}
