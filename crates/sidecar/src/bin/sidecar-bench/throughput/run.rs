//! One throughput run: the telemetry endpoint its mode needs (a live sidecar, a closed port or
//! none), `consume-bench` run to the end on a fresh group, its JSON figures read, and for `on`
//! what the sidecar received (a run in which it received nothing measured nothing).

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::args::ThroughputArgs;
use crate::http::{wait_connectable, Conn};
use crate::procfs::{cpu_secs, mib, rss_kib};
use crate::sidecar::Sidecar;
use crate::Error;

use super::{Run, RunResult};

/// Runs `consume-bench` once in mode `run` and prints its line.
pub async fn one_run(args: &ThroughputArgs, round: usize, run: Run) -> Result<RunResult, Error> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let group = format!("bench-sidecar-{}-{round}-{nanos}", run.name());
    let (mut sidecar, endpoint) = endpoint(args, &group, run).await?;
    let started = Instant::now();
    let out = consume_bench(args, &group, endpoint.as_deref()).await?;
    let wall = started.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "consume-bench ({}) failed: {}",
            run.name(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let (rps, consumer_cpu, mut extra) = figures(&out)?;
    if let Some(s) = sidecar.take() {
        extra.push_str(&sidecar_figures(s).await?);
    }
    println!(
        "  round {round} {:<6} {rps:>10.0} records/s, consumer CPU {consumer_cpu:.2} s (run {wall:.1} s){extra}",
        run.name()
    );
    Ok(RunResult {
        round,
        run,
        records_per_sec: rps,
        cpu_secs: consumer_cpu,
    })
}

/// The telemetry endpoint of mode `run` (none for `off`), and for `on` the live sidecar behind
/// it, watching `group`.
async fn endpoint(
    args: &ThroughputArgs,
    group: &str,
    run: Run,
) -> Result<(Option<Sidecar>, Option<String>), Error> {
    match run {
        Run::Off => Ok((None, None)),
        Run::On => {
            let s = Sidecar::start(
                &args.sidecar,
                &[
                    ("bootstrap.servers", args.bootstrap_server.clone()),
                    ("group.id", group.to_string()),
                    ("watch.interval.ms", args.watch_interval_ms.to_string()),
                ],
            )?;
            wait_connectable(s.addr, Duration::from_secs(10)).await?;
            let url = format!("http://{}/v1/events", s.addr);
            Ok((Some(s), Some(url)))
        }
        Run::Absent => {
            // A port that was free a moment ago and where nothing listens now.
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            let addr = l.local_addr()?;
            drop(l);
            Ok((None, Some(format!("http://{addr}/v1/events"))))
        }
    }
}

/// `consume-bench` on the topic as `group`, exporting to `endpoint` if any, run to its end.
async fn consume_bench(
    args: &ThroughputArgs,
    group: &str,
    endpoint: Option<&str>,
) -> Result<Output, Error> {
    let mut cmd = tokio::process::Command::new(&args.consume_bench);
    cmd.arg("--bootstrap-server")
        .arg(&args.bootstrap_server)
        .arg("--topic")
        .arg(&args.topic)
        .arg("--messages")
        .arg(args.records.to_string())
        .arg("--group")
        .arg(group)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(url) = endpoint {
        cmd.arg("--telemetry").arg(url);
    }
    Ok(cmd
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", args.consume_bench.display()))?)
}

/// From consume-bench's last JSON line: records/s, its CPU seconds (NaN when absent), and what
/// its exporter says it did (empty without an exporter).
fn figures(out: &Output) -> Result<(f64, f64, String), Error> {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or("consume-bench printed no JSON line")?;
    let json: serde_json::Value = serde_json::from_str(last)?;
    let rps = json
        .get("records_per_sec")
        .and_then(serde_json::Value::as_f64)
        .ok_or("no records_per_sec in consume-bench's output")?;
    let consumer_cpu = json
        .get("cpu_secs")
        .and_then(serde_json::Value::as_f64)
        .unwrap_or(f64::NAN);
    let telemetry = json.get("telemetry").cloned().unwrap_or_default();
    let mut extra = String::new();
    if !telemetry.is_null() {
        extra = format!(
            "; exporter sent {} failed POSTs {} lost {}",
            telemetry["sent"], telemetry["failures"], telemetry["dropped"]
        );
    }
    Ok((rps, consumer_cpu, extra))
}

/// What the live sidecar received and spent, read from its `/metrics` and `/proc` before it is
/// stopped; an error when it received no telemetry.
async fn sidecar_figures(mut s: Sidecar) -> Result<String, Error> {
    let pid = s.pid();
    let metrics = Conn::new(s.addr).request("GET", "/metrics", &[]).await?;
    let received: f64 = String::from_utf8_lossy(&metrics)
        .lines()
        .filter(|l| l.starts_with("mooring_telemetry_events_received_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    let cpu = cpu_secs(pid).unwrap_or(f64::NAN);
    let hwm = rss_kib(pid).map_or(f64::NAN, |(_, h)| mib(h));
    s.stop();
    if received == 0.0 {
        return Err("the live sidecar received no telemetry: the `on` run measured nothing".into());
    }
    Ok(format!(
        "; sidecar received {received} lines, CPU {cpu:.2} s, VmHWM {hwm:.1} MiB"
    ))
}
