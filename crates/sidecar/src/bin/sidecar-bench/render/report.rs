//! The render part's report: the scrape latencies beside their peer's, the render timed in this
//! process and where its time goes, the load and the sidecar's CPU, its RSS, and the goals.
//! Every figure is printed whatever the verdict, so a failed goal comes with its context.

use crate::args::RenderArgs;
use crate::procfs::mib;
use crate::stats::{pct, verdict};

use super::in_process::InProcess;
use super::load::Loaded;
use super::scrapes::Scrapes;

/// The sidecar's memory, (VmRSS, VmHWM) KiB.
pub struct Rss {
    /// Before the load.
    pub idle: (u64, u64),
    /// The highest VmRSS sampled under load (or read at its end).
    pub peak_sampled: u64,
    /// At the end of the load.
    pub during: (u64, u64),
    /// 2 s after the load (at once for `--smoke`).
    pub after: (u64, u64),
}

/// Every figure of a render run.
pub struct Report {
    /// The announced partitions.
    pub n: i32,
    /// The sidecar's process id.
    pub pid: u32,
    /// Whether the sidecar watched a group (and so exported lag series).
    pub watched: bool,
    /// The sidecar's memory.
    pub rss: Rss,
    /// What the timed scrapes saw.
    pub scrapes: Scrapes,
    /// What the event load did.
    pub load: Loaded,
    /// The render in this process with N partitions.
    pub inproc: InProcess,
    /// The same with 1 partition.
    pub one: InProcess,
}

impl Report {
    /// Prints the report; true when every goal is met (for `--smoke`: when the first scrape
    /// showed series and the announced assignment).
    pub fn print(&self, args: &RenderArgs) -> bool {
        self.print_scrapes();
        self.print_in_process();
        self.print_load();
        self.print_rss();
        self.goals(args)
    }

    fn print_scrapes(&self) {
        let Scrapes {
            latencies: lat,
            peer,
            first,
            fewest_lag,
            partial,
            secs: scrape_secs,
            ..
        } = &self.scrapes;
        let n = self.n;
        println!("scrape (GET /metrics, client-side, keep-alive):");
        println!(
            "  {} scrapes in {scrape_secs:.1} s: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            lat.len(),
            pct(lat, 50.0),
            pct(lat, 90.0),
            pct(lat, 99.0),
            pct(lat, 100.0)
        );
        println!(
            "  each scrape: {} series, {} bytes; {} mooring_partition_lag_records + {} mooring_partition_lag_seconds series; mooring_assigned_partitions {}",
            first.series,
            first.bytes,
            first.lag_records,
            first.lag_seconds,
            first.assigned.map_or("absent".into(), |a| a.to_string())
        );
        println!(
            "  peer: GET /healthz on the same connection right after each scrape: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms; /metrics / /healthz: p50 {:.2}x, p99 {:.2}x",
            pct(peer, 50.0),
            pct(peer, 90.0),
            pct(peer, 99.0),
            pct(peer, 100.0),
            pct(lat, 50.0) / pct(peer, 50.0),
            pct(lat, 99.0) / pct(peer, 99.0)
        );
        if self.watched {
            println!(
                "  fewest lag series in any scrape: {fewest_lag} (scrapes with fewer than {n}: {partial})"
            );
        }
    }

    fn print_in_process(&self) {
        let n = self.n;
        println!(
            "  render in this process on the same series (App::scrape: alerts + registry + lag table, no HTTP), {} runs: min {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; {} bytes; this process waited {:.2} s for a CPU in {:.2} s of rendering",
            self.inproc.times.len(),
            pct(&self.inproc.times, 0.0),
            pct(&self.inproc.times, 50.0),
            pct(&self.inproc.times, 99.0),
            pct(&self.inproc.times, 100.0),
            self.inproc.bytes,
            self.inproc.waited,
            self.inproc.times.iter().sum::<f64>() / 1000.0
        );
        println!(
            "    of which Registry::gather p50 {:.3} ms (min {:.3}), TextEncoder p50 {:.3} ms (min {:.3})",
            pct(&self.inproc.gather, 50.0),
            pct(&self.inproc.gather, 0.0),
            pct(&self.inproc.encode, 50.0),
            pct(&self.inproc.encode, 0.0)
        );
        println!(
            "    the same with 1 partition instead of {n}: p50 {:.3} ms; the {} lag lines written from the lag table (metrics::write_lag_families) p50 {:.3} ms (min {:.3})",
            pct(&self.one.times, 50.0),
            2 * n,
            pct(&self.inproc.by_hand, 50.0),
            pct(&self.inproc.by_hand, 0.0)
        );
    }

    fn print_load(&self) {
        let Loaded {
            posted,
            secs: load_secs,
            posts,
            ..
        } = &self.load;
        let Scrapes {
            latencies: lat,
            secs: scrape_secs,
            cpu: cpu_during,
            sched: sched_during,
            ..
        } = &self.scrapes;
        let pid = self.pid;
        println!(
            "load: {posted} lines in {load_secs:.1} s ({:.0}/s), POST p50 {:.2} ms, p99 {:.2} ms; sidecar CPU while scraping: {}",
            *posted as f64 / load_secs,
            pct(posts, 50.0),
            pct(posts, 99.0),
            cpu_during.map_or("?".into(), |c| format!(
                "{c:.2} s in {scrape_secs:.1} s ({:.0}% of a core)",
                100.0 * c / scrape_secs
            ))
        );
        if let Some((run, wait)) = sched_during {
            println!(
                "sidecar threads while scraping (/proc/{pid}/task/*/schedstat): {run:.2} s on a CPU, {wait:.2} s runnable but waiting for one ({:.2} ms of waiting per scrape on average)",
                1000.0 * wait / lat.len().max(1) as f64
            );
        }
    }

    fn print_rss(&self) {
        let Rss {
            idle,
            peak_sampled,
            during,
            after,
        } = &self.rss;
        let pid = self.pid;
        println!(
            "sidecar RSS (/proc/{pid}/status): idle {:.1} MiB; under load peak VmRSS {:.1} MiB; at the end VmRSS {:.1} MiB, VmHWM {:.1} MiB; 2 s after the load VmRSS {:.1} MiB",
            mib(idle.0),
            mib(*peak_sampled),
            mib(during.0),
            mib(during.1),
            mib(after.0)
        );
    }

    /// Prints the goals and their verdicts; true when all are met.
    fn goals(&self, args: &RenderArgs) -> bool {
        let Scrapes {
            latencies: lat,
            first,
            partial,
            ..
        } = &self.scrapes;
        let Rss { during, after, .. } = &self.rss;
        let n = self.n;
        let p99 = pct(lat, 99.0);
        let hwm = mib(after.1.max(during.1));
        let series_ok = !self.watched || (first.lag_records >= n as usize && *partial == 0);
        let p99_ok = p99 <= args.goal_p99_ms;
        let rss_ok = hwm <= args.goal_rss_mib;
        println!(
            "goal scrape p99 <= {} ms: {} ({p99:.3} ms)",
            args.goal_p99_ms,
            verdict(p99_ok)
        );
        println!(
            "goal RSS <= {} MiB: {} (VmHWM {hwm:.1} MiB)",
            args.goal_rss_mib,
            verdict(rss_ok)
        );
        if self.watched {
            println!(
                "check every scrape has >= {n} lag series of each kind: {}",
                verdict(series_ok)
            );
        }
        if args.smoke {
            println!("smoke run: the figures mean nothing");
            return first.series > 0 && first.assigned == Some(i64::from(n));
        }
        p99_ok && rss_ok && series_ok
    }
}
