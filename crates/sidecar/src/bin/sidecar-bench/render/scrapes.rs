//! The timed part of the render run: the scrapes of `/metrics`, each timed whole and followed by
//! a peer request, and what each scrape's text holds (its size, its series, its lag series).

use std::time::{Duration, Instant};

use crate::args::RenderArgs;
use crate::http::Conn;
use crate::procfs::{cpu_secs, schedstat};
use crate::stats::sorted;
use crate::Error;

/// What one scrape's text holds.
#[derive(Debug, Default, Clone, Copy)]
pub struct ScrapeShape {
    /// The text's length.
    pub bytes: usize,
    /// Sample lines.
    pub series: usize,
    /// `mooring_partition_lag_records` lines.
    pub lag_records: usize,
    /// `mooring_partition_lag_seconds` lines.
    pub lag_seconds: usize,
    /// The value of `mooring_assigned_partitions`, if it is there.
    pub assigned: Option<i64>,
}

/// Counts what `body`, a scrape's text, holds.
pub fn shape(body: &[u8]) -> ScrapeShape {
    let text = String::from_utf8_lossy(body);
    let mut s = ScrapeShape {
        bytes: body.len(),
        ..ScrapeShape::default()
    };
    for line in text.lines() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        s.series += 1;
        if line.starts_with("mooring_partition_lag_records{") {
            s.lag_records += 1;
        } else if line.starts_with("mooring_partition_lag_seconds{") {
            s.lag_seconds += 1;
        } else if let Some(v) = line.strip_prefix("mooring_assigned_partitions ") {
            s.assigned = v.trim().parse().ok();
        }
    }
    s
}

/// What the timed scrapes saw.
pub struct Scrapes {
    /// Each `GET /metrics`, ms, sorted.
    pub latencies: Vec<f64>,
    /// Each `GET /healthz` right after a scrape, ms, sorted.
    pub peer: Vec<f64>,
    /// The first scrape's shape.
    pub first: ScrapeShape,
    /// The fewest lag series of either kind in any scrape.
    pub fewest_lag: usize,
    /// Scrapes with fewer than N lag series of a kind (counted only with a broker watch).
    pub partial: usize,
    /// From the first scrape to the end of the last pause, s.
    pub secs: f64,
    /// The sidecar's CPU seconds meanwhile.
    pub cpu: Option<f64>,
    /// The sidecar's threads' seconds on a CPU and waiting for one meanwhile.
    pub sched: Option<(f64, f64)>,
}

/// `--scrapes` GETs of `/metrics` on `scrape`, `--scrape-gap-ms` apart, each followed by its
/// peer (`/healthz`: the same connection, the same moment, a route that renders nothing), with
/// the sidecar's (process `pid`) CPU and scheduling figures around them.
pub async fn run(
    scrape: &mut Conn,
    pid: u32,
    args: &RenderArgs,
    n: i32,
    watched: bool,
) -> Result<Scrapes, Error> {
    let cpu_before = cpu_secs(pid);
    let sched_before = schedstat(&pid.to_string());
    let scrape_started = Instant::now();
    let mut latencies = Vec::with_capacity(args.scrapes);
    let mut peer = Vec::with_capacity(args.scrapes);
    let mut first = ScrapeShape::default();
    let mut fewest_lag = usize::MAX;
    let mut partial = 0usize;
    for i in 0..args.scrapes {
        let t0 = Instant::now();
        let body = scrape.request("GET", "/metrics", &[]).await?;
        latencies.push(t0.elapsed().as_secs_f64() * 1000.0);
        let s = shape(&body);
        if i == 0 {
            first = s;
        }
        fewest_lag = fewest_lag.min(s.lag_records.min(s.lag_seconds));
        if watched && (s.lag_records < n as usize || s.lag_seconds < n as usize) {
            partial += 1;
        }
        let t0 = Instant::now();
        scrape.get_any("/healthz").await?;
        peer.push(t0.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_millis(args.scrape_gap_ms)).await;
    }
    let secs = scrape_started.elapsed().as_secs_f64();
    let cpu = match (cpu_before, cpu_secs(pid)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let sched = match (sched_before, schedstat(&pid.to_string())) {
        (Some(a), Some(b)) => Some((b.0 - a.0, b.1 - a.1)),
        _ => None,
    };
    Ok(Scrapes {
        latencies: sorted(latencies),
        peer: sorted(peer),
        first,
        fewest_lag,
        partial,
        secs,
        cpu,
        sched,
    })
}
