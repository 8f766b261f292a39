//! What both consumption benches measure and do alike: the counting handler, the runtime the
//! command line asks for, `--set` properties, the give-up timer, and the process's CPU time. Each
//! bench includes this file as its module `measure`.

use std::future::Future;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use mooring_consumer::processing::{ConsumerRecord, Handler};
use mooring_consumer::ShutdownHandle;

/// What the handler has counted.
#[derive(Debug, Default)]
pub struct Counts {
    records: AtomicU64,
    bytes: AtomicU64,
    first: OnceLock<Instant>,
    last: OnceLock<Instant>,
}

/// The timed part's figures.
pub struct Measured {
    /// Value bytes of the first `target` records.
    pub bytes: u64,
    /// From the first record counted to the `target`-th.
    pub consume_secs: f64,
    /// From `begun` to the `target`-th record.
    pub total_secs: f64,
}

impl Counts {
    /// The figures once `target` records were counted; an error naming how many were if not
    /// within `timeout_secs`.
    pub fn measured(
        &self,
        target: u64,
        begun: Instant,
        timeout_secs: u64,
    ) -> Result<Measured, String> {
        let records = self.records.load(Ordering::Relaxed);
        let (Some(first), Some(last)) = (self.first.get(), self.last.get()) else {
            return Err(format!(
                "only {records} of {target} records within {timeout_secs} s"
            ));
        };
        // The bytes up to the N-th (a few more records may have finished before shutdown took
        // hold).
        Ok(Measured {
            bytes: self.bytes.load(Ordering::Relaxed) * target / records.max(1),
            consume_secs: last.duration_since(*first).as_secs_f64().max(1e-9),
            total_secs: last.duration_since(begun).as_secs_f64(),
        })
    }
}

/// Counts records and value bytes (after the delay, if any) and shuts the consumer down at the
/// N-th. A struct, so that `handle(&self)` borrows the counters: a closure handler would clone
/// its `Arc`s for every record's future.
pub struct Counter {
    pub counts: Arc<Counts>,
    pub shutdown: ShutdownHandle,
    pub target: u64,
    pub delay: Option<Duration>,
}

impl Handler for Counter {
    type Error = String;

    async fn handle(&self, record: ConsumerRecord) -> Result<(), String> {
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
        let counts = &self.counts;
        let _ = counts.first.get_or_init(Instant::now);
        let bytes = record.value().map_or(0, |v| v.len()) as u64;
        counts.bytes.fetch_add(bytes, Ordering::Relaxed);
        let n = counts.records.fetch_add(1, Ordering::Relaxed) + 1;
        if n == self.target {
            let _ = counts.last.set(Instant::now());
            self.shutdown.shutdown();
        }
        Ok(())
    }
}

/// Runs `run` on the runtime `--worker-threads` asks for (none: Tokio's default, one thread per
/// core; 0: a current-thread runtime), and says an error as `TOOL: error`.
pub fn main_on_runtime<F>(tool: &str, worker_threads: Option<usize>, run: F) -> ExitCode
where
    F: Future<Output = Result<(), Box<dyn std::error::Error>>>,
{
    let runtime = match worker_threads {
        None => tokio::runtime::Runtime::new(),
        Some(0) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Some(n) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
    };
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{tool}: tokio runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{tool}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `base` with each `--set KEY=VALUE` put over it.
pub fn properties(
    mut base: Vec<(String, String)>,
    set: &[String],
) -> Result<Vec<(String, String)>, String> {
    for kv in set {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))?;
        base.retain(|(key, _)| key != k);
        base.push((k.to_owned(), v.to_owned()));
    }
    Ok(base)
}

/// Shuts the consumer down after `secs` (abort the task once done).
pub fn give_up_after(shutdown: &ShutdownHandle, secs: u64) -> tokio::task::JoinHandle<()> {
    let shutdown = shutdown.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(secs)).await;
        shutdown.shutdown();
    })
}

/// User + system CPU seconds of this process so far (Linux `/proc/self/stat`, USER_HZ = 100).
pub fn process_cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}
