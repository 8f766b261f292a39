//! The render timed in this process, on a sidecar [`App`] holding the same series as the one
//! scraped over HTTP: the render's cost without the network, the sidecar's scheduling or the
//! HTTP server, and where it goes (gathering the registry, encoding it, writing the lag lines).

use std::time::Instant;

use mooring_sidecar::state::PartitionLag;
use mooring_sidecar::{App, SidecarConfig};
use mooring_telemetry_schema::TopicPartition;

use crate::procfs::schedstat;
use crate::stats::sorted;
use crate::telemetry::{events_body, rebalance_body, snapshot_body, Lines};
use crate::Error;

/// The in-process figures (the timings in ms, each sorted).
pub struct InProcess {
    /// `App::scrape`, whole.
    pub times: Vec<f64>,
    /// The largest text rendered.
    pub bytes: usize,
    /// Seconds this process's threads waited for a CPU while rendering.
    pub waited: f64,
    /// `Registry::gather` (every family but the lag ones), ms.
    pub gather: Vec<f64>,
    /// `TextEncoder::encode_to_string`, ms.
    pub encode: Vec<f64>,
    /// The lag families written from the lag table (`metrics::write_lag_families`), ms.
    pub by_hand: Vec<f64>,
}

/// Builds a sidecar [`App`] with the same events and N lag series of each kind (as the broker
/// watch sets them), and times what `GET /metrics` does: alerts, then render.
pub fn render_in_process(
    topic: &str,
    n: i32,
    per_tick: u64,
    runs: usize,
) -> Result<InProcess, Error> {
    let app = app_with_series(topic, n, per_tick)?;
    let (times, bytes, waited) = time_scrapes(&app, runs);
    let (gather, encode, bytes) = time_gather_and_encode(&app, runs, bytes)?;
    let by_hand = time_lag_lines(&app, runs);
    Ok(InProcess {
        times: sorted(times),
        bytes,
        waited,
        gather: sorted(gather),
        encode: sorted(encode),
        by_hand: sorted(by_hand),
    })
}

/// An [`App`] told of the rebalance, a tick's events and the snapshot, with the lag table as the
/// broker watch fills it (the lag series are written from it).
fn app_with_series(topic: &str, n: i32, per_tick: u64) -> Result<App, Error> {
    let config = SidecarConfig::from_toml(&format!("\"lag.max.partitions\" = {n}\n"))?;
    let app = App::new(config);
    let mut lines = Lines::new("sidecar-bench".into());
    mooring_sidecar::ingest::ingest(&app, &rebalance_body(&mut lines, topic, n)?);
    mooring_sidecar::ingest::ingest(&app, &events_body(&mut lines, topic, n, per_tick)?);
    mooring_sidecar::ingest::ingest(&app, &snapshot_body(&mut lines, topic, n)?);
    {
        let mut state = app.state();
        for p in 0..n {
            state.lag.insert(
                TopicPartition {
                    topic: topic.to_string(),
                    partition: p,
                },
                PartitionLag {
                    committed: Some(0),
                    end: Some(1000 + i64::from(p)),
                    lag_records: 1000 + i64::from(p),
                    lag_seconds: 1.5 + f64::from(p) / 1000.0,
                    owner: Some(format!("member-{}", p % 3)),
                    start_offset: None,
                },
            );
        }
    }
    Ok(app)
}

/// `App::scrape` `runs` times (at least once): each time, the last text's length, and the
/// seconds this process waited for a CPU meanwhile (NaN when `/proc` does not say).
fn time_scrapes(app: &App, runs: usize) -> (Vec<f64>, usize, f64) {
    let mut times = Vec::with_capacity(runs);
    let mut bytes = 0;
    let before = schedstat("self");
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let text = app.scrape();
        times.push(t0.elapsed().as_secs_f64() * 1000.0);
        bytes = text.len();
    }
    let waited = match (before, schedstat("self")) {
        (Some(a), Some(b)) => b.1 - a.1,
        _ => f64::NAN,
    };
    (times, bytes, waited)
}

/// Where the time goes: collecting the families (label pairs copied into protobuf structs,
/// sorted) versus writing the text. Also the larger of `bytes` and the registry's text length.
fn time_gather_and_encode(
    app: &App,
    runs: usize,
    mut bytes: usize,
) -> Result<(Vec<f64>, Vec<f64>, usize), Error> {
    let mut gather = Vec::with_capacity(runs);
    let mut encode = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let families = app.metrics.registry.gather();
        let t1 = Instant::now();
        let text = prometheus::TextEncoder::new().encode_to_string(&families)?;
        encode.push(t1.elapsed().as_secs_f64() * 1000.0);
        gather.push(t1.duration_since(t0).as_secs_f64() * 1000.0);
        bytes = bytes.max(text.len());
    }
    Ok((gather, encode, bytes))
}

/// The lag families as `scrape` writes them from the lag table (lock included).
fn time_lag_lines(app: &App, runs: usize) -> Vec<f64> {
    let mut by_hand = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let mut text = String::new();
        mooring_sidecar::metrics::write_lag_families(&mut text, &app.state().lag);
        by_hand.push(t0.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(text);
    }
    by_hand
}
