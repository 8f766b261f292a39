//! `sidecar-bench throughput`: `consume-bench` on one topic in rounds, each round `off` (no
//! exporter), `on` (exporter → a live `mooring-sidecar`) and `absent` (exporter → a closed port),
//! the order rotating each round so no mode always runs on a warmer machine (`run.rs` runs one).
//! The verdict compares each mode with `off` against the `off` runs' own spread: a difference
//! smaller than the run-to-run noise is not resolved, so it is not taken for an effect.

mod run;

use crate::args::ThroughputArgs;
use crate::procfs::load_average;
use crate::stats::{median, pct, sorted, verdict};
use crate::Error;

/// How a run's consumer exports its telemetry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// No exporter.
    Off,
    /// The exporter posting to a live sidecar watching the run's group.
    On,
    /// The exporter posting to a port where nothing listens.
    Absent,
}

impl Run {
    const ALL: [Run; 3] = [Run::Off, Run::On, Run::Absent];

    /// The mode's name in the report.
    fn name(self) -> &'static str {
        match self {
            Run::Off => "off",
            Run::On => "on",
            Run::Absent => "absent",
        }
    }
}

/// One run's figures.
pub struct RunResult {
    round: usize,
    run: Run,
    records_per_sec: f64,
    /// consume-bench's own CPU seconds for the whole run (NaN when it did not say).
    cpu_secs: f64,
}

/// Runs the throughput part; true when no mode costs more than the noise.
pub async fn throughput(args: ThroughputArgs) -> Result<bool, Error> {
    println!(
        "== consumer throughput: consume-bench, {} records of {} per run, {} rounds of off/on/absent (order rotating); on: exporter -> live mooring-sidecar (watch.interval.ms {}); absent: exporter -> a closed port; {} cores, load average {}",
        args.records,
        args.topic,
        args.rounds,
        args.watch_interval_ms,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    );
    let mut results = Vec::new();
    for round in 1..=args.rounds {
        for k in 0..3 {
            let run = Run::ALL[(round - 1 + k) % 3];
            let r = run::one_run(&args, round, run).await?;
            results.push(r);
        }
    }
    let results = Results {
        runs: results,
        rounds: args.rounds,
    };
    results.print_table();
    let noise = results.noise();
    let cpu_noise = results.cpu_noise();
    // "No effect" can only be judged down to what the run resolves: the off runs' own spread
    // (at least 2%); the tolerance is printed with every verdict.
    let records_ok = results.judge_records(noise.max(0.02));
    let cpu_ok = results.judge_cpu(cpu_noise.max(0.02));
    println!(
        "(run-to-run noise: the off runs' spread, records/s {:.1}%, CPU seconds {:.1}% — smaller differences are not resolved by this run; load average now {})",
        100.0 * noise,
        100.0 * cpu_noise,
        load_average()
    );
    Ok(records_ok && cpu_ok)
}

/// Every run of the part.
struct Results {
    runs: Vec<RunResult>,
    rounds: usize,
}

impl Results {
    /// The records/s of every run of `run`.
    fn of(&self, run: Run) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.run == run)
            .map(|r| r.records_per_sec)
            .collect()
    }

    /// Per round, `run`'s records/s over `off`'s.
    fn paired(&self, run: Run) -> Vec<f64> {
        (1..=self.rounds)
            .filter_map(|round| {
                let get = |x: Run| {
                    self.runs
                        .iter()
                        .find(|r| r.round == round && r.run == x)
                        .map(|r| r.records_per_sec)
                };
                Some(get(run)? / get(Run::Off)?)
            })
            .collect()
    }

    /// The consumer's CPU seconds of every run of `run` that reported them.
    fn cpu_of(&self, run: Run) -> Vec<f64> {
        self.runs
            .iter()
            .filter(|r| r.run == run && r.cpu_secs.is_finite())
            .map(|r| r.cpu_secs)
            .collect()
    }

    /// The records/s table, one row per mode.
    fn print_table(&self) {
        println!("| mode | runs | median records/s | min | max | spread (max-min)/median |");
        println!("|---|---:|---:|---:|---:|---:|");
        for run in Run::ALL {
            let v = sorted(self.of(run));
            let m = median(&v);
            println!(
                "| {} | {} | {:.0} | {:.0} | {:.0} | {:.1}% |",
                run.name(),
                v.len(),
                m,
                pct(&v, 0.0),
                pct(&v, 100.0),
                100.0 * (pct(&v, 100.0) - pct(&v, 0.0)) / m
            );
        }
    }

    /// The off runs' records/s spread over their median.
    fn noise(&self) -> f64 {
        let off = self.of(Run::Off);
        (pct(&sorted(off.clone()), 100.0) - pct(&sorted(off.clone()), 0.0)) / median(&off)
    }

    /// The off runs' CPU seconds spread over their median.
    fn cpu_noise(&self) -> f64 {
        let v = sorted(self.cpu_of(Run::Off));
        (pct(&v, 100.0) - pct(&v, 0.0)) / median(&self.cpu_of(Run::Off))
    }

    /// Prints `on` and `absent` against `off` in records/s; true when neither is slower than
    /// `tolerance` allows (judged on the median of the per-round paired ratios).
    fn judge_records(&self, tolerance: f64) -> bool {
        let off = self.of(Run::Off);
        let mut ok = true;
        for run in [Run::On, Run::Absent] {
            let ratio = median(&self.of(run)) / median(&off);
            let pairs = sorted(self.paired(run));
            let pass = median(&pairs) >= 1.0 - tolerance;
            ok &= pass;
            println!(
                "{}/off records/s: {ratio:.3} (of the medians); per-round paired ratios {:.3}..{:.3}, median {:.3}; no slowdown beyond the noise (median paired ratio >= {:.3}): {}",
                run.name(),
                pct(&pairs, 0.0),
                pct(&pairs, 100.0),
                median(&pairs),
                1.0 - tolerance,
                verdict(pass)
            );
        }
        ok
    }

    /// Prints each mode's consumer CPU seconds; true when neither `on` nor `absent` costs more
    /// than `off` by over `tolerance`.
    fn judge_cpu(&self, tolerance: f64) -> bool {
        let cpu_off = median(&self.cpu_of(Run::Off));
        let mut ok = true;
        for run in Run::ALL {
            let v = sorted(self.cpu_of(run));
            let ratio = median(&v) / cpu_off;
            let judged = if run == Run::Off {
                String::new()
            } else {
                let pass = ratio <= 1.0 + tolerance;
                ok &= pass;
                format!(
                    "; {ratio:.3}x off; no extra CPU beyond the noise (<= {:.3}x): {}",
                    1.0 + tolerance,
                    verdict(pass)
                )
            };
            println!(
                "consumer CPU seconds per run, {}: median {:.2} (min {:.2}, max {:.2}){judged}",
                run.name(),
                median(&v),
                pct(&v, 0.0),
                pct(&v, 100.0),
            );
        }
        ok
    }
}
