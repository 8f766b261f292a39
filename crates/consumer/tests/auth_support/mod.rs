//! Helpers of the authentication and authorization tests: the log lines a consumer writes while
//! it runs (to count how often a failure is said, and to look for secrets), and running a
//! consumer until `run` ends, by a deadline.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses part of it; a failed unwrap fails the test

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mooring_client::Error as ClientError;
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerError};
use tracing_subscriber::fmt::MakeWriter;

/// How long `run` may take to end on a security failure: it is known at the first connection
/// (or the first answer), so this is no retry budget.
pub const PROMPTLY: Duration = Duration::from_secs(5);
/// How long a test waits before calling `run` stuck.
pub const DEADLINE: Duration = Duration::from_secs(15);

/// Every log line written (at DEBUG and above) on this thread while the guard lives. The tests
/// run on tokio's current-thread runtime, so every task of the consumer logs here.
#[derive(Clone, Default)]
pub struct Logs {
    buffer: Arc<Mutex<Vec<u8>>>,
}

impl Logs {
    /// Captures this thread's log lines until the guard is dropped.
    pub fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::DEBUG)
            .with_ansi(false)
            .with_writer(logs.clone())
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        (logs, guard)
    }

    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.lock().unwrap()).into_owned()
    }

    /// The lines at ERROR level.
    pub fn errors(&self) -> Vec<String> {
        self.lines_with(" ERROR ")
    }

    /// The lines containing `needle`.
    pub fn lines_with(&self, needle: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|l| l.contains(needle))
            .map(str::to_owned)
            .collect()
    }
}

impl Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buffer.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Logs {
    type Writer = Logs;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// Runs `consumer` with a handler counting its records until `run` returns, at most `deadline`;
/// `Err(records handled)` if it did not return by then (it is shut down, and given 10 s more).
pub async fn run_within(
    consumer: &Consumer,
    deadline: Duration,
) -> Result<Result<(), ConsumerError>, usize> {
    let handled = Arc::new(Mutex::new(0usize));
    let counter = Arc::clone(&handled);
    let run = consumer.run(move |_record: ConsumerRecord| {
        *counter.lock().unwrap() += 1;
        async { Ok::<(), String>(()) }
    });
    tokio::pin!(run);
    match tokio::time::timeout(deadline, &mut run).await {
        Ok(result) => Ok(result),
        Err(_) => {
            consumer.shutdown_handle().shutdown();
            let _ = tokio::time::timeout(Duration::from_secs(10), &mut run).await;
            let n = *handled.lock().unwrap();
            Err(n)
        }
    }
}

/// Runs `c` until `run` ends; asserts it ended with an error within [`PROMPTLY`].
pub async fn ended_promptly(c: &Consumer, logs: &Logs) -> ConsumerError {
    let started = Instant::now();
    let outcome = run_within(c, DEADLINE).await;
    let took = started.elapsed();
    let attempts = logs.lines_with("rebalance attempt failed").len();
    let error = match outcome {
        Ok(Err(error)) => error,
        Ok(Ok(())) => panic!("run ended without an error after {took:?}"),
        Err(handled) => panic!(
            "run did not end within {DEADLINE:?} ({handled} records handled, {attempts} failed \
             rebalance attempts logged, {} error lines); first lines:\n{}",
            logs.errors().len(),
            logs.text().lines().take(10).collect::<Vec<_>>().join("\n")
        ),
    };
    assert!(
        took < PROMPTLY,
        "run ended after {took:?}, not at once: {error}"
    );
    assert!(
        attempts <= 2,
        "{attempts} failed rebalance attempts: a retry loop"
    );
    assert!(error.is_fatal(), "{error:?}");
    error
}

/// Exactly one error line, naming the error; no secret in the error or in any log line.
pub fn said_once_without(logs: &Logs, error: &ConsumerError, secrets: &[&str]) {
    let errors = logs.errors();
    assert_eq!(errors.len(), 1, "said once: {errors:#?}");
    let text = error.to_string();
    assert!(!text.contains('\n'), "one line: {text}");
    assert!(
        errors[0].contains(&text),
        "{} does not say {text}",
        errors[0]
    );
    let shown = format!("{error} {error:?} {}", logs.text());
    for secret in secrets {
        assert!(
            !shown.contains(secret),
            "a secret is printed: {error} / {error:?} / logs"
        );
    }
}

/// The coordinator error inside `error`.
pub fn client_error(error: &ConsumerError) -> &ClientError {
    match error {
        ConsumerError::Client(e) => e,
        other => panic!("not a client error: {other:?}"),
    }
}
