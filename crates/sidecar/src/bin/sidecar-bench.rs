//! `sidecar-bench`: the sidecar's performance figures (issue 6, "Performance (benchmark)").
//! `scripts/bench-sidecar` builds it and runs both parts on a dedicated cluster.
//!
//! `sidecar-bench render`: runs the real `mooring-sidecar` binary as its own process (so its RSS
//! is its own), announces N assigned partitions to it (a rebalance whose assignment is N
//! partitions) and, when `--bootstrap-server`/`--group` are given, points its broker watch at a
//! group that has committed offsets on N partitions, so the scrape carries N
//! `mooring_partition_lag_records` and N `mooring_partition_lag_seconds` series. It then POSTs a
//! sustained NDJSON event load as the consumer's exporter does (batches of heartbeats, commits
//! and backpressure events every 100 ms, a snapshot with the N partitions every
//! `--snapshot-interval-ms`), and meanwhile GETs `/metrics` `--scrapes` times over one keep-alive
//! connection, timing each full GET (request written to the last body byte read). It prints the
//! scrape latency percentiles, the scrape's size (series, bytes, lag series; the fewest lag series
//! any scrape had), the sidecar's VmRSS/VmHWM from `/proc/<pid>/status` before, during and after
//! the load, the render time measured in this process on an identical registry (no HTTP), and
//! PASS/FAIL against the goals: scrape p99 <= 5 ms, RSS <= 30 MiB.
//!
//! `sidecar-bench throughput`: runs `consume-bench` on the same topic in rounds, each round
//! `off` (no exporter), `on` (exporter → a live `mooring-sidecar` watching the run's group) and
//! `absent` (exporter → a port where nothing listens), the order rotating each round. Prints
//! records/s per run, the median/min/max per mode, and the on/off and absent/off ratios (of the
//! medians, and the spread of the per-round paired ratios) against the goal "no effect beyond
//! run-to-run noise".
//!
//! `--smoke` (render) is a tiny run without a broker that `tests/bench_smoke.rs` runs so this
//! binary cannot rot; its timings mean nothing.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use mooring_telemetry_schema::SCHEMA_VERSION;
use mooring_telemetry_schema::{
    Envelope, Event, MemberIdentity, PartitionSnapshot, Phases, RebalanceCause, Snapshot,
    TopicPartition,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

type Error = Box<dyn std::error::Error + Send + Sync>;

#[derive(Debug, Parser)]
#[command(name = "sidecar-bench", about = "mooring-sidecar performance figures")]
struct Cli {
    #[command(subcommand)]
    command: Mode,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// /metrics scrape latency and sidecar RSS with N assigned partitions under event load.
    Render(RenderArgs),
    /// consume-bench records/s without the exporter, with it and a live sidecar, with it and no
    /// sidecar, interleaved.
    Throughput(ThroughputArgs),
}

#[derive(Debug, clap::Args)]
struct RenderArgs {
    /// The `mooring-sidecar` binary.
    #[arg(long)]
    sidecar: PathBuf,
    /// Brokers for the sidecar's broker watch (none: no watch, so no lag series).
    #[arg(long = "bootstrap-server")]
    bootstrap_server: Option<String>,
    /// The group the sidecar watches (it should have committed offsets on `--partitions`
    /// partitions).
    #[arg(long)]
    group: Option<String>,
    /// The topic of the announced assignment.
    #[arg(long, default_value = "bench-sidecar-1000p")]
    topic: String,
    /// Assigned partitions announced (and expected as lag series).
    #[arg(long, default_value_t = 1000)]
    partitions: i32,
    /// GETs of /metrics.
    #[arg(long, default_value_t = 2000)]
    scrapes: usize,
    /// Pause between two scrapes, ms.
    #[arg(long, default_value_t = 5)]
    scrape_gap_ms: u64,
    /// Telemetry lines per second besides the snapshots.
    #[arg(long, default_value_t = 2000)]
    events_per_sec: u64,
    /// A snapshot with every partition this often, ms (the exporter's default is 5000).
    #[arg(long, default_value_t = 1000)]
    snapshot_interval_ms: u64,
    /// The sidecar's `watch.interval.ms` (its default is 10000).
    #[arg(long, default_value_t = 1000)]
    watch_interval_ms: u64,
    /// Event load before the first scrape, s.
    #[arg(long, default_value_t = 3.0)]
    warmup_secs: f64,
    /// Goal: scrape p99, ms.
    #[arg(long, default_value_t = 5.0)]
    goal_p99_ms: f64,
    /// Goal: sidecar RSS, MiB.
    #[arg(long, default_value_t = 30.0)]
    goal_rss_mib: f64,
    /// Tiny run for a test (no broker needed); its figures mean nothing.
    #[arg(long)]
    smoke: bool,
}

#[derive(Debug, clap::Args)]
struct ThroughputArgs {
    /// The `mooring-sidecar` binary.
    #[arg(long)]
    sidecar: PathBuf,
    /// The `consume-bench` binary.
    #[arg(long)]
    consume_bench: PathBuf,
    /// Brokers.
    #[arg(long = "bootstrap-server")]
    bootstrap_server: String,
    /// The topic (already filled with at least `--records` records).
    #[arg(long)]
    topic: String,
    /// Records per run.
    #[arg(long, default_value_t = 2_000_000)]
    records: u64,
    /// Rounds (each: off, on, absent in a rotating order).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// The sidecar's `watch.interval.ms` in the `on` runs (its default is 10000).
    #[arg(long, default_value_t = 1000)]
    watch_interval_ms: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("sidecar-bench: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Mode::Render(args) => render(args).await,
            Mode::Throughput(args) => throughput(args).await,
        }
    });
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(e) => {
            eprintln!("sidecar-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The sidecar process

/// A `mooring-sidecar` child process; stopped (SIGTERM, then SIGKILL) on drop.
struct Sidecar {
    child: Child,
    addr: SocketAddr,
    _dir: TempDir,
}

impl Sidecar {
    /// Starts `binary` with `settings` (TOML `key = value` lines, listen on an ephemeral port) and
    /// waits for its "listening on ADDR" line.
    fn start(binary: &Path, settings: &[(&str, String)]) -> Result<Sidecar, Error> {
        let dir = TempDir::new("sidecar-bench")?;
        let config = dir.0.join("sidecar.toml");
        let mut text = String::from("listen = \"127.0.0.1:0\"\n");
        for (k, v) in settings {
            text.push_str(&format!("\"{k}\" = \"{v}\"\n"));
        }
        std::fs::write(&config, text)?;
        let mut cmd = Command::new(binary);
        cmd.arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, _) in std::env::vars() {
            if k.starts_with("MOORING_SIDECAR_") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads the address, then keeps draining (and echoing) so the pipe never fills.
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut tx = Some(tx);
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                match line.strip_prefix("mooring-sidecar: listening on ") {
                    Some(a) if tx.is_some() => {
                        if let Some(tx) = tx.take() {
                            let _ = tx.send(a.trim().to_string());
                        }
                    }
                    _ => eprintln!("  [sidecar] {line}"),
                }
            }
        });
        let mut sidecar = Sidecar {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            _dir: dir,
        };
        let addr = rx
            .recv_timeout(Duration::from_secs(20))
            .map_err(|_| "the sidecar did not say where it listens within 20 s")?;
        sidecar.addr = addr
            .parse()
            .map_err(|e| format!("the sidecar's address {addr:?}: {e}"))?;
        Ok(sidecar)
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> std::io::Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// VmRSS and VmHWM of a process, KiB.
fn rss_kib(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u64>().ok())
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// User + system CPU seconds of a process (USER_HZ taken as 100, as on every Linux we run).
fn cpu_secs(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

/// Seconds every thread of a process ran on a CPU and waited for one (run queue), from
/// `/proc/<pid>/task/*/schedstat`: how much of a latency is the machine's, not the code's.
fn schedstat(pid: &str) -> Option<(f64, f64)> {
    let mut run = 0u64;
    let mut wait = 0u64;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let Ok(task) = task else { continue };
        let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
            continue;
        };
        let mut f = text
            .split_whitespace()
            .map(|v| v.parse::<u64>().unwrap_or(0));
        run += f.next().unwrap_or(0);
        wait += f.next().unwrap_or(0);
    }
    Some((run as f64 / 1e9, wait as f64 / 1e9))
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

// ---------------------------------------------------------------------------------------------
// A minimal keep-alive HTTP/1.1 client (the sidecar answers with Content-Length)

struct Conn {
    addr: SocketAddr,
    stream: Option<BufReader<TcpStream>>,
}

impl Conn {
    fn new(addr: SocketAddr) -> Conn {
        Conn { addr, stream: None }
    }

    /// One request; the body of a 2xx answer, or an error naming the status.
    async fn request(&mut self, method: &str, path: &str, body: &[u8]) -> Result<Vec<u8>, Error> {
        let result = self.try_request(method, path, body, false).await;
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    /// A GET whatever its status (for the `/healthz` peer: only its latency matters).
    async fn get_any(&mut self, path: &str) -> Result<Vec<u8>, Error> {
        let result = self.try_request("GET", path, &[], true).await;
        if result.is_err() {
            self.stream = None;
        }
        result
    }

    async fn try_request(
        &mut self,
        method: &str,
        path: &str,
        body: &[u8],
        any_status: bool,
    ) -> Result<Vec<u8>, Error> {
        if self.stream.is_none() {
            let s = TcpStream::connect(self.addr).await?;
            s.set_nodelay(true)?;
            self.stream = Some(BufReader::new(s));
        }
        let stream = self.stream.as_mut().ok_or("not connected")?;
        let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\n", self.addr);
        if !body.is_empty() {
            head.push_str(&format!(
                "Content-Type: application/x-ndjson\r\nContent-Length: {}\r\n",
                body.len()
            ));
        }
        head.push_str("\r\n");
        stream.get_mut().write_all(head.as_bytes()).await?;
        if !body.is_empty() {
            stream.get_mut().write_all(body).await?;
        }
        let mut line = String::new();
        if stream.read_line(&mut line).await? == 0 {
            return Err("connection closed".into());
        }
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line {line:?}"))?;
        let mut length = None;
        loop {
            line.clear();
            if stream.read_line(&mut line).await? == 0 {
                return Err("connection closed in the headers".into());
            }
            let h = line.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((name, value)) = h.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let length = length.ok_or("no Content-Length in the answer")?;
        let mut out = vec![0; length];
        stream.read_exact(&mut out).await?;
        if !any_status && !(200..300).contains(&status) {
            return Err(format!(
                "{method} {path}: HTTP {status}: {}",
                String::from_utf8_lossy(&out)
            )
            .into());
        }
        Ok(out)
    }
}

async fn wait_connectable(addr: SocketAddr, limit: Duration) -> Result<(), Error> {
    let deadline = Instant::now() + limit;
    loop {
        match TcpStream::connect(addr).await {
            Ok(_) => return Ok(()),
            Err(e) if Instant::now() >= deadline => {
                return Err(format!("{addr} not reachable: {e}").into())
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Telemetry lines

struct Lines {
    identity: MemberIdentity,
    seq: u64,
}

impl Lines {
    fn line(&mut self, event: Event, out: &mut Vec<u8>) -> Result<(), Error> {
        let envelope = Envelope {
            schema: SCHEMA_VERSION,
            seq: self.seq,
            ts_ms: mooring_sidecar::app::unix_ms(),
            member: self.identity.clone(),
            event,
        };
        self.seq += 1;
        serde_json::to_writer(&mut *out, &envelope)?;
        out.push(b'\n');
        Ok(())
    }
}

fn partitions(topic: &str, n: i32) -> Vec<TopicPartition> {
    (0..n)
        .map(|p| TopicPartition {
            topic: topic.to_string(),
            partition: p,
        })
        .collect()
}

/// A rebalance that ends with `n` partitions assigned.
fn rebalance_body(lines: &mut Lines, topic: &str, n: i32) -> Result<Vec<u8>, Error> {
    let all = partitions(topic, n);
    let mut body = Vec::new();
    lines.line(
        Event::RebalanceStarted {
            cause: RebalanceCause::MemberJoined,
            generation: -1,
            protocol: "eager".into(),
        },
        &mut body,
    )?;
    lines.line(
        Event::Joined {
            generation: 1,
            member_id: "sidecar-bench-member".into(),
            leader: true,
            protocol_name: "range".into(),
            join_seconds: 0.012,
        },
        &mut body,
    )?;
    lines.line(
        Event::Synced {
            generation: 1,
            sync_seconds: 0.004,
        },
        &mut body,
    )?;
    lines.line(
        Event::PartitionsAssigned {
            added: all.clone(),
            assignment: all,
            duration_seconds: 0.001,
            timed_out: false,
        },
        &mut body,
    )?;
    lines.line(
        Event::RebalanceCompleted {
            generation: 1,
            total_seconds: 0.02,
            phases: Phases {
                join_seconds: 0.012,
                sync_seconds: 0.004,
                callbacks_seconds: 0.001,
                ..Phases::default()
            },
        },
        &mut body,
    )?;
    Ok(body)
}

/// `n` lines: heartbeats, commits, backpressure pause/resume, in turn.
fn events_body(lines: &mut Lines, topic: &str, partitions: i32, n: u64) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    for i in 0..n {
        let event = match i % 4 {
            0 => Event::Heartbeat {
                generation: 1,
                latency_seconds: 0.0008,
                error: None,
            },
            1 => Event::Commit {
                generation: 1,
                latency_seconds: 0.003,
                partitions: partitions.max(0) as usize,
                error: None,
            },
            k => Event::Backpressure {
                partition: TopicPartition {
                    topic: topic.to_string(),
                    partition: (i as i32 / 4) % partitions.max(1),
                },
                paused: k == 2,
            },
        };
        lines.line(event, &mut body)?;
    }
    Ok(body)
}

/// A snapshot with every partition.
fn snapshot_body(lines: &mut Lines, topic: &str, n: i32) -> Result<Vec<u8>, Error> {
    let snapshot = Snapshot {
        member_state: Some("Stable".into()),
        generation: 1,
        leader_id: Some("sidecar-bench-member".into()),
        protocol_name: Some("range".into()),
        partitions: (0..n)
            .map(|p| PartitionSnapshot {
                topic: topic.to_string(),
                partition: p,
                position: Some(1_000_000 + i64::from(p)),
                committed: Some(999_000 + i64::from(p)),
                high_watermark: Some(1_001_000 + i64::from(p)),
                paused: p % 50 == 0,
                in_flight: usize::from(p % 10 == 0),
            })
            .collect(),
        in_flight: 100,
        concurrency: 256,
        since_last_progress_seconds: 0.001,
        buffered_records: 5000,
        stream_dropped_total: 0,
        shutting_down: false,
        ..Snapshot::default()
    };
    let mut body = Vec::new();
    lines.line(Event::Snapshot(snapshot), &mut body)?;
    Ok(body)
}

// ---------------------------------------------------------------------------------------------
// Statistics

/// Nearest-rank percentile of sorted values.
fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

fn median(v: &[f64]) -> f64 {
    let s = sorted(v.to_vec());
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

/// What one scrape's text holds.
#[derive(Debug, Default, Clone, Copy)]
struct ScrapeShape {
    bytes: usize,
    series: usize,
    lag_records: usize,
    lag_seconds: usize,
    assigned: Option<i64>,
}

fn shape(body: &[u8]) -> ScrapeShape {
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

// ---------------------------------------------------------------------------------------------
// render

async fn render(mut args: RenderArgs) -> Result<bool, Error> {
    if args.smoke {
        args.scrapes = args.scrapes.min(50);
        args.events_per_sec = args.events_per_sec.min(200);
        args.warmup_secs = args.warmup_secs.min(0.3);
        args.snapshot_interval_ms = args.snapshot_interval_ms.min(200);
    }
    let n = args.partitions.max(1);
    let watched = match (&args.bootstrap_server, &args.group) {
        (Some(b), Some(g)) => Some((b.clone(), g.clone())),
        (None, None) => None,
        _ => return Err("--bootstrap-server and --group go together".into()),
    };
    let mut settings = vec![
        ("lag.max.partitions", n.to_string()),
        ("watch.interval.ms", args.watch_interval_ms.to_string()),
    ];
    if let Some((b, g)) = &watched {
        settings.push(("bootstrap.servers", b.clone()));
        settings.push(("group.id", g.clone()));
    }
    println!(
        "== /metrics render and RSS: {n} assigned partitions, {} events/s + a {n}-partition snapshot every {} ms, broker watch every {} ms ({}); {} scrapes, {} ms apart; {} cores, load average {}",
        args.events_per_sec,
        args.snapshot_interval_ms,
        args.watch_interval_ms,
        watched.as_ref().map_or("no broker: no lag series".to_string(), |(b, g)| format!("group {g} on {b}")),
        args.scrapes,
        args.scrape_gap_ms,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average(),
    );
    let mut sidecar = Sidecar::start(&args.sidecar, &settings)?;
    let pid = sidecar.pid();
    let addr = sidecar.addr;
    wait_connectable(addr, Duration::from_secs(10)).await?;
    let idle = rss_kib(pid).ok_or("cannot read the sidecar's /proc status")?;

    let mut lines = Lines {
        identity: MemberIdentity {
            group: args.group.clone().unwrap_or_else(|| "sidecar-bench".into()),
            member_id: "sidecar-bench-member".into(),
            instance_id: None,
            client_id: "sidecar-bench".into(),
            group_protocol: Some("classic".into()),
        },
        seq: 0,
    };
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
        // The broker watch must have found every partition before the timed part.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let s = shape(&scrape.request("GET", "/metrics", &[]).await?);
            if s.lag_records >= n as usize && s.lag_seconds >= n as usize {
                break;
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "after 60 s the scrape has {} lag series of {n}: does group {:?} have committed offsets on {n} partitions?",
                    s.lag_records,
                    args.group
                )
                .into());
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    // The event load.
    let per_tick = (args.events_per_sec / 10).max(1);
    let batch = Arc::new(events_body(&mut lines, &args.topic, n, per_tick)?);
    let stop = Arc::new(AtomicBool::new(false));
    let posted_events = Arc::new(AtomicU64::new(0));
    let post_latency: Arc<Mutex<Vec<f64>>> = Arc::default();
    let load_started = Instant::now();
    let load = {
        let (stop, posted, lat) = (
            Arc::clone(&stop),
            Arc::clone(&posted_events),
            Arc::clone(&post_latency),
        );
        let (batch, snapshot) = (Arc::clone(&batch), Arc::clone(&snapshot));
        let snapshot_every = Duration::from_millis(args.snapshot_interval_ms.max(1));
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut last_snapshot = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                let t0 = Instant::now();
                if post.request("POST", "/v1/events", &batch).await.is_ok() {
                    posted.fetch_add(per_tick, Ordering::Relaxed);
                }
                let mut spent = vec![t0.elapsed().as_secs_f64() * 1000.0];
                if last_snapshot.elapsed() >= snapshot_every {
                    last_snapshot = Instant::now();
                    let t0 = Instant::now();
                    if post.request("POST", "/v1/events", &snapshot).await.is_ok() {
                        posted.fetch_add(1, Ordering::Relaxed);
                    }
                    spent.push(t0.elapsed().as_secs_f64() * 1000.0);
                }
                lat.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .extend(spent);
            }
        })
    };
    // RSS while loaded.
    let peak_rss = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak_rss));
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                if let Some((rss, _)) = rss_kib(pid) {
                    peak.fetch_max(rss, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    tokio::time::sleep(Duration::from_secs_f64(args.warmup_secs)).await;

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
        if watched.is_some() && (s.lag_records < n as usize || s.lag_seconds < n as usize) {
            partial += 1;
        }
        // The peer: the same connection, the same moment, a route that renders nothing.
        let t0 = Instant::now();
        scrape.get_any("/healthz").await?;
        peer.push(t0.elapsed().as_secs_f64() * 1000.0);
        tokio::time::sleep(Duration::from_millis(args.scrape_gap_ms)).await;
    }
    let scrape_secs = scrape_started.elapsed().as_secs_f64();
    let cpu_during = match (cpu_before, cpu_secs(pid)) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    let sched_during = match (sched_before, schedstat(&pid.to_string())) {
        (Some(a), Some(b)) => Some((b.0 - a.0, b.1 - a.1)),
        _ => None,
    };
    stop.store(true, Ordering::Relaxed);
    let _ = load.await;
    let _ = sampler.await;
    let load_secs = load_started.elapsed().as_secs_f64();
    let during = rss_kib(pid).ok_or("cannot read the sidecar's /proc status")?;
    tokio::time::sleep(Duration::from_secs(if args.smoke { 0 } else { 2 })).await;
    let after = rss_kib(pid).ok_or("cannot read the sidecar's /proc status")?;
    sidecar.stop();

    let lat = sorted(latencies);
    let peer = sorted(peer);
    let posts = sorted(std::mem::take(
        &mut *post_latency.lock().unwrap_or_else(PoisonError::into_inner),
    ));
    let posted = posted_events.load(Ordering::Relaxed);
    let peak_sampled = peak_rss.load(Ordering::Relaxed).max(during.0);

    // The same registry in this process: render time without HTTP.
    let inproc = render_in_process(&args.topic, n, per_tick, args.scrapes)?;
    let one = render_in_process(&args.topic, 1, per_tick, args.scrapes)?;

    println!("scrape (GET /metrics, client-side, keep-alive):");
    println!(
        "  {} scrapes in {scrape_secs:.1} s: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
        lat.len(),
        pct(&lat, 50.0),
        pct(&lat, 90.0),
        pct(&lat, 99.0),
        pct(&lat, 100.0)
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
        pct(&peer, 50.0),
        pct(&peer, 90.0),
        pct(&peer, 99.0),
        pct(&peer, 100.0),
        pct(&lat, 50.0) / pct(&peer, 50.0),
        pct(&lat, 99.0) / pct(&peer, 99.0)
    );
    if watched.is_some() {
        println!(
            "  fewest lag series in any scrape: {fewest_lag} (scrapes with fewer than {n}: {partial})"
        );
    }
    println!(
        "  render in this process on the same series (App::scrape: alerts + registry + lag table, no HTTP), {} runs: min {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms; {} bytes; this process waited {:.2} s for a CPU in {:.2} s of rendering",
        inproc.times.len(),
        pct(&inproc.times, 0.0),
        pct(&inproc.times, 50.0),
        pct(&inproc.times, 99.0),
        pct(&inproc.times, 100.0),
        inproc.bytes,
        inproc.waited,
        inproc.times.iter().sum::<f64>() / 1000.0
    );
    println!(
        "    of which Registry::gather p50 {:.3} ms (min {:.3}), TextEncoder p50 {:.3} ms (min {:.3})",
        pct(&inproc.gather, 50.0),
        pct(&inproc.gather, 0.0),
        pct(&inproc.encode, 50.0),
        pct(&inproc.encode, 0.0)
    );
    println!(
        "    the same with 1 partition instead of {n}: p50 {:.3} ms; the {} lag lines written from the lag table (metrics::write_lag_families) p50 {:.3} ms (min {:.3})",
        pct(&one.times, 50.0),
        2 * n,
        pct(&inproc.by_hand, 50.0),
        pct(&inproc.by_hand, 0.0)
    );
    println!(
        "load: {posted} lines in {load_secs:.1} s ({:.0}/s), POST p50 {:.2} ms, p99 {:.2} ms; sidecar CPU while scraping: {}",
        posted as f64 / load_secs,
        pct(&posts, 50.0),
        pct(&posts, 99.0),
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
    println!(
        "sidecar RSS (/proc/{pid}/status): idle {:.1} MiB; under load peak VmRSS {:.1} MiB; at the end VmRSS {:.1} MiB, VmHWM {:.1} MiB; 2 s after the load VmRSS {:.1} MiB",
        mib(idle.0),
        mib(peak_sampled),
        mib(during.0),
        mib(during.1),
        mib(after.0)
    );
    let p99 = pct(&lat, 99.0);
    let hwm = mib(after.1.max(during.1));
    let series_ok = watched.is_none() || (first.lag_records >= n as usize && partial == 0);
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
    if watched.is_some() {
        println!(
            "check every scrape has >= {n} lag series of each kind: {}",
            verdict(series_ok)
        );
    }
    if args.smoke {
        println!("smoke run: the figures mean nothing");
        return Ok(first.series > 0 && first.assigned == Some(i64::from(n)));
    }
    Ok(p99_ok && rss_ok && series_ok)
}

struct InProcess {
    times: Vec<f64>,
    bytes: usize,
    /// Seconds this process's threads waited for a CPU while rendering.
    waited: f64,
    /// `Registry::gather` (every family but the lag ones), ms.
    gather: Vec<f64>,
    /// `TextEncoder::encode_to_string`, ms.
    encode: Vec<f64>,
    /// The lag families written from the lag table (`metrics::write_lag_families`), ms.
    by_hand: Vec<f64>,
}

/// Builds a sidecar [`App`](mooring_sidecar::App) with the same events and N lag series of each
/// kind (as the broker watch sets them), and times what `GET /metrics` does: alerts, then render.
fn render_in_process(topic: &str, n: i32, per_tick: u64, runs: usize) -> Result<InProcess, Error> {
    let config =
        mooring_sidecar::SidecarConfig::from_toml(&format!("\"lag.max.partitions\" = {n}\n"))?;
    let app = mooring_sidecar::App::new(config);
    let mut lines = Lines {
        identity: MemberIdentity {
            group: "sidecar-bench".into(),
            member_id: "sidecar-bench-member".into(),
            instance_id: None,
            client_id: "sidecar-bench".into(),
            group_protocol: Some("classic".into()),
        },
        seq: 0,
    };
    mooring_sidecar::ingest::ingest(&app, &rebalance_body(&mut lines, topic, n)?);
    mooring_sidecar::ingest::ingest(&app, &events_body(&mut lines, topic, n, per_tick)?);
    mooring_sidecar::ingest::ingest(&app, &snapshot_body(&mut lines, topic, n)?);
    {
        // The lag table as the broker watch fills it (the lag series are written from it).
        let mut state = app.state();
        for p in 0..n {
            state.lag.insert(
                mooring_telemetry_schema::TopicPartition {
                    topic: topic.to_string(),
                    partition: p,
                },
                mooring_sidecar::state::PartitionLag {
                    committed: Some(0),
                    end: Some(1000 + i64::from(p)),
                    lag_records: 1000 + i64::from(p),
                    lag_seconds: 1.5 + f64::from(p) / 1000.0,
                    owner: Some(format!("member-{}", p % 3)),
                },
            );
        }
    }
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
    // Where the time goes: collecting the families (label pairs copied into protobuf structs,
    // sorted) versus writing the text.
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
    // The lag families as `scrape` writes them from the lag table (lock included).
    let mut by_hand = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let t0 = Instant::now();
        let mut text = String::new();
        mooring_sidecar::metrics::write_lag_families(&mut text, &app.state().lag);
        by_hand.push(t0.elapsed().as_secs_f64() * 1000.0);
        std::hint::black_box(text);
    }
    Ok(InProcess {
        times: sorted(times),
        bytes,
        waited,
        gather: sorted(gather),
        encode: sorted(encode),
        by_hand: sorted(by_hand),
    })
}

// ---------------------------------------------------------------------------------------------
// throughput

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Run {
    Off,
    On,
    Absent,
}

impl Run {
    const ALL: [Run; 3] = [Run::Off, Run::On, Run::Absent];

    fn name(self) -> &'static str {
        match self {
            Run::Off => "off",
            Run::On => "on",
            Run::Absent => "absent",
        }
    }
}

struct RunResult {
    round: usize,
    run: Run,
    records_per_sec: f64,
    /// consume-bench's own CPU seconds for the whole run (NaN when it did not say).
    cpu_secs: f64,
}

async fn throughput(args: ThroughputArgs) -> Result<bool, Error> {
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
            let r = one_run(&args, round, run).await?;
            results.push(r);
        }
    }
    let of = |run: Run| -> Vec<f64> {
        results
            .iter()
            .filter(|r| r.run == run)
            .map(|r| r.records_per_sec)
            .collect()
    };
    let paired = |run: Run| -> Vec<f64> {
        (1..=args.rounds)
            .filter_map(|round| {
                let get = |x: Run| {
                    results
                        .iter()
                        .find(|r| r.round == round && r.run == x)
                        .map(|r| r.records_per_sec)
                };
                Some(get(run)? / get(Run::Off)?)
            })
            .collect()
    };
    println!("| mode | runs | median records/s | min | max | spread (max-min)/median |");
    println!("|---|---:|---:|---:|---:|---:|");
    for run in Run::ALL {
        let v = sorted(of(run));
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
    let off = of(Run::Off);
    let noise = (pct(&sorted(off.clone()), 100.0) - pct(&sorted(off.clone()), 0.0)) / median(&off);
    let cpu_of = |run: Run| -> Vec<f64> {
        results
            .iter()
            .filter(|r| r.run == run && r.cpu_secs.is_finite())
            .map(|r| r.cpu_secs)
            .collect()
    };
    let cpu_off = median(&cpu_of(Run::Off));
    let cpu_noise = {
        let v = sorted(cpu_of(Run::Off));
        (pct(&v, 100.0) - pct(&v, 0.0)) / cpu_off
    };
    // "No effect" can only be judged down to what the run resolves: the off runs' own spread
    // (at least 2%); the tolerance is printed with every verdict.
    let tolerance = noise.max(0.02);
    let cpu_tolerance = cpu_noise.max(0.02);
    let mut ok = true;
    for run in [Run::On, Run::Absent] {
        let ratio = median(&of(run)) / median(&off);
        let pairs = sorted(paired(run));
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
    for run in Run::ALL {
        let v = sorted(cpu_of(run));
        let ratio = median(&v) / cpu_off;
        let judged = if run == Run::Off {
            String::new()
        } else {
            let pass = ratio <= 1.0 + cpu_tolerance;
            ok &= pass;
            format!(
                "; {ratio:.3}x off; no extra CPU beyond the noise (<= {:.3}x): {}",
                1.0 + cpu_tolerance,
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
    println!(
        "(run-to-run noise: the off runs' spread, records/s {:.1}%, CPU seconds {:.1}% — smaller differences are not resolved by this run; load average now {})",
        100.0 * noise,
        100.0 * cpu_noise,
        load_average()
    );
    Ok(ok)
}

async fn one_run(args: &ThroughputArgs, round: usize, run: Run) -> Result<RunResult, Error> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let group = format!("bench-sidecar-{}-{round}-{nanos}", run.name());
    let mut sidecar = None;
    let endpoint = match run {
        Run::Off => None,
        Run::On => {
            let s = Sidecar::start(
                &args.sidecar,
                &[
                    ("bootstrap.servers", args.bootstrap_server.clone()),
                    ("group.id", group.clone()),
                    ("watch.interval.ms", args.watch_interval_ms.to_string()),
                ],
            )?;
            wait_connectable(s.addr, Duration::from_secs(10)).await?;
            let url = format!("http://{}/v1/events", s.addr);
            sidecar = Some(s);
            Some(url)
        }
        Run::Absent => {
            // A port that was free a moment ago and where nothing listens now.
            let l = std::net::TcpListener::bind("127.0.0.1:0")?;
            let addr = l.local_addr()?;
            drop(l);
            Some(format!("http://{addr}/v1/events"))
        }
    };
    let mut cmd = tokio::process::Command::new(&args.consume_bench);
    cmd.arg("--bootstrap-server")
        .arg(&args.bootstrap_server)
        .arg("--topic")
        .arg(&args.topic)
        .arg("--messages")
        .arg(args.records.to_string())
        .arg("--group")
        .arg(&group)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(url) = &endpoint {
        cmd.arg("--telemetry").arg(url);
    }
    let started = Instant::now();
    let out = cmd
        .output()
        .await
        .map_err(|e| format!("cannot run {}: {e}", args.consume_bench.display()))?;
    let wall = started.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "consume-bench ({}) failed: {}",
            run.name(),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
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
    if let Some(mut s) = sidecar.take() {
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
        extra.push_str(&format!(
            "; sidecar received {received} lines, CPU {cpu:.2} s, VmHWM {hwm:.1} MiB"
        ));
        if received == 0.0 {
            return Err(
                "the live sidecar received no telemetry: the `on` run measured nothing".into(),
            );
        }
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
