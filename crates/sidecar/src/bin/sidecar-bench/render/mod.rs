//! `sidecar-bench render`: the sidecar's `/metrics` scrape latency and RSS with N assigned
//! partitions under a sustained event load. The steps: start the sidecar and announce the
//! assignment, wait for the broker watch's lag series, start the load (`load.rs`), time the
//! scrapes (`scrapes.rs`), stop, time the same render in this process (`in_process.rs`), and
//! print the figures and the goals (`report.rs`).

mod in_process;
mod load;
mod report;
mod scrapes;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::args::RenderArgs;
use crate::http::{wait_connectable, Conn};
use crate::procfs::{load_average, rss_kib};
use crate::sidecar::Sidecar;
use crate::telemetry::{events_body, rebalance_body, snapshot_body, Lines};
use crate::Error;

use in_process::render_in_process;
use load::Load;
use report::{Report, Rss};
use scrapes::shape;

/// Runs the render part; true when every goal is met (for `--smoke`: when the scrape showed the
/// announced assignment).
pub async fn render(mut args: RenderArgs) -> Result<bool, Error> {
    if args.smoke {
        args.shrink_for_smoke();
    }
    let n = args.partitions.max(1);
    let watched = args.watched()?;
    print_header(&args, n, watched.as_ref());
    let mut sidecar = Sidecar::start(&args.sidecar, &settings(&args, n, watched.as_ref()))?;
    let pid = sidecar.pid();
    let addr = sidecar.addr;
    wait_connectable(addr, Duration::from_secs(10)).await?;
    let idle = rss(pid)?;

    let mut lines = Lines::new(args.group.clone().unwrap_or_else(|| "sidecar-bench".into()));
    let mut post = Conn::new(addr);
    post.request(
        "POST",
        "/v1/events",
        &rebalance_body(&mut lines, &args.topic, n)?,
    )
    .await?;
    let snapshot = Arc::new(snapshot_body(&mut lines, &args.topic, n)?);
    post.request("POST", "/v1/events", &snapshot).await?;

    let mut scrape = Conn::new(addr);
    if watched.is_some() {
        wait_for_lag_series(&mut scrape, n, args.group.as_deref()).await?;
    }

    let per_tick = (args.events_per_sec / 10).max(1);
    let batch = Arc::new(events_body(&mut lines, &args.topic, n, per_tick)?);
    let snapshot_every = Duration::from_millis(args.snapshot_interval_ms.max(1));
    let load = Load::start(post, batch, snapshot, per_tick, snapshot_every, pid);
    tokio::time::sleep(Duration::from_secs_f64(args.warmup_secs)).await;

    let scrapes = scrapes::run(&mut scrape, pid, &args, n, watched.is_some()).await?;
    let load = load.stop().await;
    let during = rss(pid)?;
    tokio::time::sleep(Duration::from_secs(if args.smoke { 0 } else { 2 })).await;
    let after = rss(pid)?;
    sidecar.stop();

    let report = Report {
        n,
        pid,
        watched: watched.is_some(),
        rss: Rss {
            idle,
            peak_sampled: load.peak_rss.max(during.0),
            during,
            after,
        },
        scrapes,
        load,
        // The same registry in this process: render time without HTTP.
        inproc: render_in_process(&args.topic, n, per_tick, args.scrapes)?,
        one: render_in_process(&args.topic, 1, per_tick, args.scrapes)?,
    };
    Ok(report.print(&args))
}

/// The sidecar's settings: lag series for every announced partition, and the broker watch when
/// there is one.
fn settings(
    args: &RenderArgs,
    n: i32,
    watched: Option<&(String, String)>,
) -> Vec<(&'static str, String)> {
    let mut settings = vec![
        ("lag.max.partitions", n.to_string()),
        ("watch.interval.ms", args.watch_interval_ms.to_string()),
    ];
    if let Some((b, g)) = watched {
        settings.push(("bootstrap.servers", b.clone()));
        settings.push(("group.id", g.clone()));
    }
    settings
}

/// The run's first line: what it does and on what machine.
fn print_header(args: &RenderArgs, n: i32, watched: Option<&(String, String)>) {
    println!(
        "== /metrics render and RSS: {n} assigned partitions, {} events/s + a {n}-partition snapshot every {} ms, broker watch every {} ms ({}); {} scrapes, {} ms apart; {} cores, load average {}",
        args.events_per_sec,
        args.snapshot_interval_ms,
        args.watch_interval_ms,
        watched.map_or("no broker: no lag series".to_string(), |(b, g)| format!("group {g} on {b}")),
        args.scrapes,
        args.scrape_gap_ms,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average(),
    );
}

/// VmRSS and VmHWM of the sidecar, KiB.
fn rss(pid: u32) -> Result<(u64, u64), Error> {
    Ok(rss_kib(pid).ok_or("cannot read the sidecar's /proc status")?)
}

/// The broker watch must have found every partition before the timed part: scrapes until each
/// lag family has `n` series, for at most 60 s.
async fn wait_for_lag_series(scrape: &mut Conn, n: i32, group: Option<&str>) -> Result<(), Error> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let s = shape(&scrape.request("GET", "/metrics", &[]).await?);
        if s.lag_records >= n as usize && s.lag_seconds >= n as usize {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "after 60 s the scrape has {} lag series of {n}: does group {:?} have committed offsets on {n} partitions?",
                s.lag_records,
                group
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
