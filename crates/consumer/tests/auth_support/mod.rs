//! Helpers of the authentication and authorization tests: the log lines a consumer writes while
//! it runs (to count how often a failure is said, and to look for secrets), and running a
//! consumer until `run` ends, by a deadline.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses part of it; a failed unwrap fails the test

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerError};
use tracing_subscriber::fmt::MakeWriter;

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
