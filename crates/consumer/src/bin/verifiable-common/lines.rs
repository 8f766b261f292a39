//! What both verifiable tools print and do alike, as Java's two tools do: one JSON object a line
//! on stdout (`timestamp` and `name` first), the plain events (`startup_complete`,
//! `shutdown_requested`, `shutdown_complete`), `record_data`, the signal handler and the exit
//! status. Each tool includes this file as its module `lines`.

use std::future::Future;
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use mooring_consumer::ShutdownHandle;
use serde::Serialize;

/// Wall-clock milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `startup_complete`, `shutdown_requested`, `shutdown_complete` (Mooring adds `error` to the
/// last when a fatal error ended the run).
#[derive(Serialize)]
pub struct Simple {
    pub timestamp: u64,
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Simple {
    pub fn now(name: &'static str) -> Simple {
        Simple {
            timestamp: now_millis(),
            name,
            error: None,
        }
    }
}

/// `record_data` (`--verbose`): one record, key and value as text.
#[derive(Serialize)]
pub struct RecordData {
    pub timestamp: u64,
    pub name: &'static str,
    pub key: Option<String>,
    pub value: Option<String>,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

/// One JSON line on stdout; a closed stdout is ignored (the tool goes on and shuts down as asked).
pub fn print_json(event: &impl Serialize) {
    let Ok(line) = serde_json::to_string(event) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// A key or value as Java's `StringDeserializer` reads it (UTF-8, malformed bytes replaced).
pub fn text(bytes: Option<&bytes::Bytes>) -> Option<String> {
    bytes.map(|b| String::from_utf8_lossy(b).into_owned())
}

/// SIGTERM or SIGINT: `shutdown_requested`, then a clean shutdown (as Java's shutdown hook).
pub async fn on_signals(tool: &'static str, shutdown: ShutdownHandle) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            eprintln!("{tool}: cannot listen for SIGTERM: {e}");
            return;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
    print_shutdown_requested();
    shutdown.shutdown();
}

/// Whether `shutdown_requested` was printed.
static SHUTDOWN_REQUESTED: AtomicBool = AtomicBool::new(false);

/// `shutdown_requested`, once: on a signal, else at exit after `shutdown_complete` (Java prints it
/// from its shutdown hook, which also runs when the tool ends by itself).
fn print_shutdown_requested() {
    if !SHUTDOWN_REQUESTED.swap(true, Ordering::SeqCst) {
        print_json(&Simple::now("shutdown_requested"));
    }
}

/// Prints `shutdown_complete` (with the fatal error, if any) and picks the exit status.
pub fn finish(tool: &'static str, error: Option<String>) -> ExitCode {
    if let Some(e) = &error {
        eprintln!("{tool}: stopped on a fatal error: {e}");
    }
    let failed = error.is_some();
    print_json(&Simple {
        timestamp: now_millis(),
        name: "shutdown_complete",
        error,
    });
    print_shutdown_requested();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs `run` with logs on stderr (`RUST_LOG`) and traces over OTLP where
/// `OTEL_EXPORTER_OTLP_*` says (flushed when it ends), on one thread: the tool's handlers start,
/// and print, in the order their records came.
pub fn run_traced(tool: &'static str, run: impl Future<Output = ExitCode>) -> ExitCode {
    let _otel = match mooring_consumer::otel::init() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("{tool}: {e}");
            return ExitCode::FAILURE;
        }
    };
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(run),
        Err(e) => {
            eprintln!("{tool}: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}
