//! `verifiable-consumer`: Apache Kafka's `VerifiableConsumer` system-test tool
//! (tools/src/main/java/org/apache/kafka/tools/VerifiableConsumer.java) on Mooring, with the same
//! command line and the same JSON event lines on stdout, so Kafka's own system tests
//! (tests/kafkatest/tests/client/consumer_test.py) can drive it, and it can stand in for the Java
//! tool in any scenario.
//!
//! Java's tool polls, prints what the poll returned (`records_consumed`), commits those offsets
//! synchronously (`offsets_committed`) and polls again. Mooring hands records to async handlers
//! instead, so the handler here parks each record with a *reporter* task and waits: the reporter
//! takes every parked record as one "poll", prints it, commits exactly what it printed, and only
//! then lets the handlers finish. So no commit, ours or the runtime's (revoke, shutdown), can
//! pass a record that was not reported, and after a clean shutdown the committed position equals
//! the records consumed. Between `partitions_revoked` and `partitions_assigned` nothing is
//! reported (as with Java, where both callbacks run inside one `poll`).
//!
//! Events (one JSON object a line, `timestamp` and `name` first): `startup_complete`,
//! `shutdown_requested` (on SIGTERM/SIGINT, else after `shutdown_complete`, as Kafka 4.x's tool),
//! `partitions_revoked`, `partitions_assigned`, `records_consumed`, `record_data` (`--verbose`),
//! `offsets_committed` (without `--enable-autocommit`), `shutdown_complete` (with an extra
//! `error` field when a fatal error ended the run, such as a fenced static member).
//!
//! Group protocols, as Java's tool takes them: `--group-protocol classic` (the default) sets
//! `partition.assignment.strategy` from `--assignment-strategy` and ignores
//! `--group-remote-assignor`; `--group-protocol consumer` (KIP-848) sets `group.remote.assignor`
//! from `--group-remote-assignor` (the broker's default assignor without it) and ignores
//! `--assignment-strategy`. `--session-timeout` sets `session.timeout.ms` under either, which the
//! consumer protocol refuses (the broker sets the session timeout), as Java's consumer does.
//!
//! Telemetry: `mooring.telemetry.enabled=true` (and the other `mooring.telemetry.*` keys) in the
//! `--consumer.config` file starts the exporter to a `mooring-sidecar`; off by default.
//!
//! Exit status: 0 after a clean shutdown (SIGTERM/SIGINT or `--max-messages` reached), 1 on a
//! fatal error (after `shutdown_complete`) or a configuration error (before `startup_complete`).
//!
//! Here: the run (consumer, reporter, signals, the last events and the exit status); the command
//! line and the properties it makes in [`args`], the JSON lines in [`events`], the reporter and
//! the rebalance listener in [`reporter`].

mod args;
mod events;
#[path = "../verifiable-common/lines.rs"]
mod lines;
mod reporter;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::telemetry::TelemetryExporter;
use mooring_consumer::{Consumer, ConsumerConfig, ConsumerError};
use tokio::sync::{mpsc, oneshot};

use args::{properties, Args};
use lines::{on_signals, print_json, Simple};
use reporter::{Listener, Parked, Reporter, Shared, NOT_REPORTED};

/// The name the tool gives itself on stderr.
const TOOL: &str = "verifiable-consumer";

fn main() -> ExitCode {
    let args = Args::parse();
    let props = match properties(&args) {
        Ok(props) => props,
        Err(message) => {
            eprintln!("{TOOL}: {message}");
            return ExitCode::FAILURE;
        }
    };
    let config = match ConsumerConfig::from_properties(props) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return ExitCode::FAILURE;
        }
    };
    lines::run_traced(TOOL, run(args, config))
}

async fn run(args: Args, config: ConsumerConfig) -> ExitCode {
    let commit = !config.enable_auto_commit;
    let consumer = match Consumer::new(config) {
        Ok(consumer) => consumer,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // `mooring.telemetry.enabled` (in --consumer.config): export to the sidecar.
    let exporter = match TelemetryExporter::from_config(&consumer) {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("{TOOL}: telemetry: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = consumer.shutdown_handle();
    let _signals = tokio::spawn(on_signals(TOOL, shutdown.clone()));
    let shared = Arc::new(Shared::new());
    consumer.set_rebalance_listener(Listener {
        shared: Arc::clone(&shared),
    });

    print_json(&Simple::now("startup_complete"));
    if let Err(e) = consumer.subscribe([args.topic.clone()]) {
        return finish(Some(e));
    }
    let (tx, parked) = mpsc::unbounded_channel();
    let reporter = tokio::spawn(
        Reporter {
            consumer: consumer.clone(),
            shared,
            shutdown: shutdown.clone(),
            parked,
            verbose: args.verbose,
            commit,
            max_messages: u64::try_from(args.max_messages).ok(),
            delay: Duration::from_millis(args.processing_delay_ms),
            max_batch: args.concurrency,
        }
        .run(),
    );
    if args.max_messages == 0 {
        shutdown.shutdown();
    }
    let result = consumer
        .run(move |record: ConsumerRecord| {
            let tx = tx.clone();
            async move {
                let (done, reported) = oneshot::channel();
                tx.send(Parked { record, done })
                    .map_err(|_| NOT_REPORTED.to_owned())?;
                reported.await.unwrap_or_else(|_| Err(NOT_REPORTED.into()))
            }
        })
        .await;
    reporter.abort();
    if let Some(exporter) = exporter {
        exporter.shutdown().await;
    }
    finish(result.err())
}

/// Prints `shutdown_complete` (with the fatal error, if any; not the one that only says a handler
/// was stopped unreported) and picks the exit status.
fn finish(error: Option<ConsumerError>) -> ExitCode {
    let error = error.filter(|e| {
        !matches!(e, ConsumerError::HandlerFailed(failure) if failure.error.to_string() == NOT_REPORTED)
    });
    lines::finish(TOOL, error.map(|e| e.to_string()))
}
