//! `verifiable-share-consumer`: Apache Kafka's `VerifiableShareConsumer` system-test tool
//! (tools/src/main/java/org/apache/kafka/tools/VerifiableShareConsumer.java) on Mooring's
//! [`ShareConsumer`] (KIP-932 share groups), with the same command line and the same JSON event
//! lines on stdout, so Kafka's share consumer system tests
//! (tests/kafkatest/tests/client/share_consumer_test.py) can drive it, and it can share a group
//! with the Java tool.
//!
//! Java's tool polls, prints what the poll returned (`records_consumed`), acknowledges it
//! (implicitly at the next poll under `auto`, with `commitSync`/`commitAsync` under `sync`/`async`)
//! and prints each answer of the broker (`offsets_acknowledged`) from its acknowledgement commit
//! callback. Here the share consumer's [`stream`](ShareConsumer::stream) hands out deliveries; the
//! reporter takes what is ready as one poll, prints it, and gives each record its verdict at once
//! (accept, or the `--ack-pattern`'s); the broker's answers come back on the consumer's event
//! stream and are printed as they come ([`reporter`]). `--max-messages` counts records whose
//! acknowledgement the broker took, as Java's tool does.
//!
//! Acknowledgement modes: Mooring acknowledges each record on its own, riding on the next request
//! to its broker, in every mode. `auto` and `async` report the next poll without waiting; `sync`
//! waits for the broker's answers to a poll's verdicts before reporting the next, as `commitSync`
//! does. Unlike Java's `auto`, a record is accepted as soon as it is reported, not at the next
//! poll: after a clean shutdown every record reported has been acknowledged.
//!
//! Events (one JSON object a line, `timestamp` and `name` first): `startup_complete`,
//! `offset_reset_strategy_set` (after `--offset-reset-strategy` was set on the group),
//! `record_data` (`--verbose`), `records_consumed` (`partitions: [{topic, partition, count,
//! offsets}]`), `offsets_acknowledged` (`count`, `partitions`, `success`, `error` when refused,
//! `ackTypeCounts` with `--ack-pattern`), `shutdown_requested` (on SIGTERM/SIGINT, else after
//! `shutdown_complete`, as Java's shutdown hook), `shutdown_complete` (with an extra `error` field
//! when a fatal error ended the run).
//!
//! Exit status: 0 after a clean shutdown (a signal, or `--max-messages` reached), 1 on a fatal
//! error (after `shutdown_complete`) or a configuration error (before `startup_complete`), 2 on a
//! usage error (clap's). Without arguments the help is printed, as Java's tool does.
//!
//! Here: the run (consumer, reporter, signals, the last events and the exit status); the command
//! line and the properties it makes in [`args`], the JSON lines in [`events`], the reporter and
//! the acknowledgement ledger in [`reporter`], `--offset-reset-strategy` in [`admin`].

mod admin;
mod args;
mod events;
#[path = "../verifiable-common/lines.rs"]
mod lines;
mod reporter;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use mooring_consumer::share::{ShareConsumer, ShareConsumerConfig};
use mooring_consumer::telemetry::ShareTelemetryExporter;
use tokio::sync::oneshot;

use args::Args;
use events::OffsetResetStrategySet;
use lines::{finish, now_millis, on_signals, print_json, Simple};
use reporter::{Acks, Reporter};

/// The name the tool gives itself on stderr.
const TOOL: &str = "verifiable-share-consumer";

fn main() -> ExitCode {
    if std::env::args_os().len() <= 1 {
        let _ = Args::command().print_help();
        return ExitCode::SUCCESS;
    }
    let args = Args::parse();
    if let Err(message) = args::check(&args) {
        Args::command()
            .error(ErrorKind::ArgumentConflict, message)
            .exit();
    }
    let props = match args::properties(&args) {
        Ok(props) => props,
        Err(message) => {
            eprintln!("{TOOL}: {message}");
            return ExitCode::FAILURE;
        }
    };
    let max_batch = args::max_poll_records(&props);
    let config = match ShareConsumerConfig::from_properties(props) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return ExitCode::FAILURE;
        }
    };
    lines::run_traced(TOOL, run(args, config, max_batch))
}

async fn run(args: Args, config: ShareConsumerConfig, max_batch: usize) -> ExitCode {
    let client_config = config.client.clone();
    let consumer = match ShareConsumer::new(config) {
        Ok(consumer) => consumer,
        Err(e) => {
            eprintln!("{TOOL}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = consumer.shutdown_handle();
    // With `mooring.telemetry.enabled`, the exporter takes each event first and hands it on.
    let (exporter, events) = match ShareTelemetryExporter::from_config_tee(&consumer) {
        Ok(started) => started,
        Err(e) => {
            eprintln!("{TOOL}: telemetry: {e}");
            return ExitCode::FAILURE;
        }
    };
    print_json(&Simple::now("startup_complete"));
    let _signals = tokio::spawn(on_signals(TOOL, shutdown.clone()));

    if let Some(strategy) = args.offset_reset_strategy.value() {
        if let Err(e) = admin::set_offset_reset(client_config, &args.group_id, strategy).await {
            return finish(
                TOOL,
                Some(format!(
                    "setting the share group's share.auto.offset.reset: {e}"
                )),
            );
        }
        print_json(&OffsetResetStrategySet {
            timestamp: now_millis(),
            name: "offset_reset_strategy_set",
            offset_reset_strategy: strategy,
        });
    }
    if let Err(e) = consumer.subscribe([args.topic.clone()]) {
        return finish(TOOL, Some(e.to_string()));
    }
    let max_messages = u64::try_from(args.max_messages).ok();
    if max_messages == Some(0) {
        shutdown.shutdown();
    }
    let acks = Arc::new(Acks::new(
        !args.ack_pattern.is_empty(),
        max_messages,
        shutdown.clone(),
    ));
    let (done, finished) = oneshot::channel();
    let follow = tokio::spawn(Arc::clone(&acks).follow(events, finished));
    let (records, running) = consumer.stream();
    let reporter = tokio::spawn(
        Reporter {
            records,
            acks,
            shutdown: shutdown.clone(),
            verbose: args.verbose,
            mode: args.acknowledgement_mode,
            pattern: args.ack_pattern,
            max_batch,
        }
        .run(),
    );
    let result = running.await;
    tracing::info!(
        stats = ?consumer.stats(),
        dropped_events = consumer.dropped_events(),
        "share consumer stopped"
    );
    // The stream has ended with the run: the reporter has nothing left to take.
    if tokio::time::timeout(Duration::from_secs(1), reporter)
        .await
        .is_err()
    {
        tracing::warn!("the reporter did not end with the consumer");
    }
    // The last answers (those of the close) are in the event stream already: print them.
    let _ = done.send(());
    let _ = follow.await;
    if let Some(exporter) = exporter {
        exporter.shutdown().await;
    }
    finish(TOOL, result.err().map(|e| e.to_string()))
}
