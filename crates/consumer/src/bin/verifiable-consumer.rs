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

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::telemetry::TelemetryExporter;
use mooring_consumer::{
    Consumer, ConsumerConfig, ConsumerError, ConsumerRebalanceListener, ShutdownHandle,
    TopicPartition,
};
use serde::Serialize;
use tokio::sync::{mpsc, oneshot, watch};

/// The error a handler returns for a record that will not be reported (past `--max-messages`,
/// or still parked when a shutdown met a rebalance): under the `stop` failure policy nothing at
/// or past it is committed. A run that ends with it ended cleanly.
const NOT_REPORTED: &str = "verifiable-consumer: record not reported";

/// The default of `--concurrency`, hence of the largest report ("poll"): Java's
/// `max.poll.records` default.
const MAX_POLL_RECORDS: usize = 500;

#[derive(Debug, Parser)]
#[command(
    name = "verifiable-consumer",
    about = "This tool consumes messages from a specific topic and emits consumer events (e.g. \
             group rebalances, received messages, and offsets committed) as JSON objects to \
             STDOUT. Mooring's implementation of Kafka's VerifiableConsumer."
)]
struct Args {
    /// The server(s) to connect to: HOST1:PORT1,HOST2:PORT2,...
    #[arg(
        long = "bootstrap-server",
        value_name = "HOST1:PORT1[,HOST2:PORT2[...]]"
    )]
    bootstrap_server: Option<String>,
    /// DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is given.
    #[arg(long = "broker-list", value_name = "HOST1:PORT1[,HOST2:PORT2[...]]")]
    broker_list: Option<String>,
    /// Consumes messages from this topic.
    #[arg(long, value_name = "TOPIC")]
    topic: String,
    /// Group protocol (must be one of CLASSIC, CONSUMER; any case).
    #[arg(
        long = "group-protocol",
        default_value = "classic",
        value_name = "GROUP_PROTOCOL"
    )]
    group_protocol: String,
    /// Group remote assignor (`group.remote.assignor`, e.g. uniform or range); only used if the
    /// group protocol is CONSUMER.
    #[arg(long = "group-remote-assignor", value_name = "GROUP_REMOTE_ASSIGNOR")]
    group_remote_assignor: Option<String>,
    /// The group id shared among members of the consumer group.
    #[arg(long = "group-id", value_name = "GROUP_ID")]
    group_id: String,
    /// A unique identifier of the consumer instance (static membership).
    #[arg(long = "group-instance-id", value_name = "GROUP_INSTANCE_ID")]
    group_instance_id: Option<String>,
    /// Consume this many messages; -1 (the default): until the process is stopped.
    #[arg(
        long = "max-messages",
        default_value_t = -1,
        allow_negative_numbers = true,
        value_name = "MAX-MESSAGES"
    )]
    max_messages: i64,
    /// The consumer's session timeout (default: `session.timeout.ms`'s, 45000); not supported
    /// when the group protocol is CONSUMER (the broker sets it).
    #[arg(long = "session-timeout", value_name = "TIMEOUT_MS")]
    session_timeout: Option<u64>,
    /// Timeout for closing the consumer (`mooring.shutdown.timeout.ms`): draining, the final
    /// commit and the close all end within it, whatever the brokers do.
    #[arg(
        long = "close-timeout",
        default_value_t = 30000,
        value_name = "CLOSE-TIMEOUT-MS"
    )]
    close_timeout: u64,
    /// Log individual consumed records (`record_data` events).
    #[arg(long)]
    verbose: bool,
    /// Enable offset auto-commit on the consumer.
    #[arg(long = "enable-autocommit")]
    enable_autocommit: bool,
    /// Reset policy: earliest, latest or none.
    #[arg(long = "reset-policy", default_value = "earliest")]
    reset_policy: String,
    /// Assignment strategy, as Java class names (org.apache.kafka.clients.consumer.RangeAssignor,
    /// RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor) or Mooring's names (range,
    /// roundrobin, sticky, cooperative-sticky); comma-separated for several. Only used if the
    /// group protocol is CLASSIC.
    #[arg(
        long = "assignment-strategy",
        default_value = "org.apache.kafka.clients.consumer.RangeAssignor"
    )]
    assignment_strategy: String,
    /// Consumer config properties file (keys also set by the command line are overridden).
    #[arg(long = "consumer.config", value_name = "CONFIG_FILE")]
    consumer_config: Option<PathBuf>,
    /// The same as --consumer.config (Kafka 4.x's name); both may be given, this one wins.
    #[arg(long = "command-config", value_name = "CONFIG_FILE")]
    command_config: Option<PathBuf>,
    /// Mooring: wait this long before reporting each batch of records (a slow application).
    #[arg(long = "processing-delay-ms", default_value_t = 0)]
    processing_delay_ms: u64,
    /// Mooring: records handled at once (`mooring.concurrency`), so the largest batch one report
    /// holds (the default is Java's `max.poll.records`).
    #[arg(long, default_value_t = MAX_POLL_RECORDS)]
    concurrency: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let props = match properties(&args) {
        Ok(props) => props,
        Err(message) => {
            eprintln!("verifiable-consumer: {message}");
            return ExitCode::FAILURE;
        }
    };
    let config = match ConsumerConfig::from_properties(props) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("verifiable-consumer: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Logs to stderr (`RUST_LOG`), and traces over OTLP when `OTEL_EXPORTER_OTLP_*` says where;
    // the guard flushes the last spans when `main` returns.
    let _otel = match mooring_consumer::otel::init() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("verifiable-consumer: {e}");
            return ExitCode::FAILURE;
        }
    };
    // One thread: handlers started in offset order run, and park their records, in that order.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("verifiable-consumer: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(args, config))
}

/// The consumer's properties: the file first, then the command line over it.
fn properties(args: &Args) -> Result<Vec<(String, String)>, String> {
    let protocol = group_protocol(&args.group_protocol)?;
    let bootstrap = args
        .bootstrap_server
        .as_ref()
        .or(args.broker_list.as_ref())
        .ok_or("one of --bootstrap-server or --broker-list is required")?;
    if !["earliest", "latest", "none"].contains(&args.reset_policy.as_str()) {
        return Err(format!(
            "--reset-policy {}: must be earliest, latest or none",
            args.reset_policy
        ));
    }
    if args.concurrency == 0 {
        return Err("--concurrency must be at least 1".into());
    }
    let mut props: Vec<(String, String)> = Vec::new();
    for path in [&args.consumer_config, &args.command_config]
        .into_iter()
        .flatten()
    {
        for (key, value) in read_properties(path)? {
            props.retain(|(k, _)| *k != key);
            props.push((key, value));
        }
    }
    let mut set = |key: &str, value: String| {
        props.retain(|(k, _)| k != key);
        props.push((key.to_owned(), value));
    };
    // As Java's tool: each protocol takes its own assignor flag and ignores the other's.
    set("group.protocol", protocol.into());
    if protocol == "consumer" {
        if let Some(assignor) = &args.group_remote_assignor {
            set("group.remote.assignor", assignor.clone());
        }
    } else {
        set(
            "partition.assignment.strategy",
            assignment_strategy(&args.assignment_strategy)?,
        );
    }
    set("group.id", args.group_id.clone());
    if let Some(id) = &args.group_instance_id {
        set("group.instance.id", id.clone());
    }
    set("bootstrap.servers", bootstrap.clone());
    set("enable.auto.commit", args.enable_autocommit.to_string());
    set("auto.offset.reset", args.reset_policy.clone());
    if let Some(timeout) = args.session_timeout {
        set("session.timeout.ms", timeout.to_string());
    }
    set(
        "mooring.shutdown.timeout.ms",
        args.close_timeout.to_string(),
    );
    // The reporter keeps offset order per partition itself; records must be able to wait for
    // it side by side, like the records of one poll.
    set("mooring.concurrency", args.concurrency.to_string());
    set("mooring.ordering", "none".into());
    set(
        "mooring.buffer.max.records",
        (args.concurrency * 2).max(1000).to_string(),
    );
    set("mooring.failure.policy", "stop".into());
    Ok(props)
}

/// `--group-protocol`, any case (Java's `GroupProtocol.of`) → the property value.
fn group_protocol(value: &str) -> Result<&'static str, String> {
    if value.eq_ignore_ascii_case("classic") {
        Ok("classic")
    } else if value.eq_ignore_ascii_case("consumer") {
        Ok("consumer")
    } else {
        Err(format!(
            "--group-protocol {value}: must be one of CLASSIC, CONSUMER"
        ))
    }
}

/// Java class names (and Mooring's names) → Mooring's names.
fn assignment_strategy(value: &str) -> Result<String, String> {
    let names: Result<Vec<&str>, String> = value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| {
            let short = name.rsplit('.').next().unwrap_or(name);
            match short {
                "RangeAssignor" | "range" => Ok("range"),
                "RoundRobinAssignor" | "roundrobin" => Ok("roundrobin"),
                "StickyAssignor" | "sticky" => Ok("sticky"),
                "CooperativeStickyAssignor" | "cooperative-sticky" => Ok("cooperative-sticky"),
                _ => Err(format!(
                    "--assignment-strategy {name}: unknown; use RangeAssignor, \
                     RoundRobinAssignor, StickyAssignor or CooperativeStickyAssignor \
                     (org.apache.kafka.clients.consumer.*)"
                )),
            }
        })
        .collect();
    let names = names?;
    if names.is_empty() {
        return Err("--assignment-strategy is empty".into());
    }
    Ok(names.join(","))
}

/// A Java properties file: `key=value`, `key: value` or `key value` lines, `#`/`!` comments,
/// a trailing `\` continues the line.
fn read_properties(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--consumer.config {}: {e}", path.display()))?;
    Ok(parse_properties(&text))
}

fn parse_properties(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut logical = String::new();
    for line in text.lines() {
        let line = line.trim_start();
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            logical.push_str(head);
            continue;
        }
        logical.push_str(line);
        let entry = std::mem::take(&mut logical);
        let entry = entry.trim();
        let split = entry
            .find(['=', ':'])
            .or_else(|| entry.find(char::is_whitespace));
        let (key, value) = match split {
            Some(at) => (&entry[..at], &entry[at + 1..]),
            None => (entry, ""),
        };
        let (key, value) = (key.trim().to_owned(), value.trim().to_owned());
        out.retain(|(k, _)| *k != key);
        out.push((key, value));
    }
    out
}

// ---- Events -------------------------------------------------------------------------------

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[derive(Serialize)]
struct Partition {
    topic: String,
    partition: i32,
}

impl From<&TopicPartition> for Partition {
    fn from(tp: &TopicPartition) -> Self {
        Partition {
            topic: tp.topic.to_string(),
            partition: tp.partition,
        }
    }
}

#[derive(Serialize)]
struct Simple {
    timestamp: u64,
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

#[derive(Serialize)]
struct Partitions {
    timestamp: u64,
    name: &'static str,
    partitions: Vec<Partition>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Summary {
    topic: String,
    partition: i32,
    count: u64,
    min_offset: i64,
    max_offset: i64,
}

#[derive(Serialize)]
struct RecordsConsumed {
    timestamp: u64,
    name: &'static str,
    count: u64,
    partitions: Vec<Summary>,
}

#[derive(Serialize)]
struct RecordData {
    timestamp: u64,
    name: &'static str,
    key: Option<String>,
    value: Option<String>,
    topic: String,
    partition: i32,
    offset: i64,
}

#[derive(Serialize)]
struct CommitData {
    topic: String,
    partition: i32,
    offset: i64,
}

#[derive(Serialize)]
struct OffsetsCommitted {
    timestamp: u64,
    name: &'static str,
    offsets: Vec<CommitData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    success: bool,
}

/// One JSON line on stdout; a closed stdout is ignored (the tool goes on and shuts down as asked).
fn print_json(event: &impl Serialize) {
    let Ok(line) = serde_json::to_string(event) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn print_partitions(name: &'static str, partitions: &[TopicPartition]) {
    print_json(&Partitions {
        timestamp: now_millis(),
        name,
        partitions: partitions.iter().map(Partition::from).collect(),
    });
}

fn text(bytes: Option<&bytes::Bytes>) -> Option<String> {
    bytes.map(|b| String::from_utf8_lossy(b).into_owned())
}

// ---- The reporter -------------------------------------------------------------------------

/// A record whose handler waits for the reporter.
struct Parked {
    record: ConsumerRecord,
    done: oneshot::Sender<Result<(), String>>,
}

/// What the reporter and the rebalance listener share; held (briefly, never across a commit by
/// the listener) so a report and a rebalance callback never interleave.
#[derive(Default)]
struct Membership {
    /// Partitions owned, as the printed callbacks said.
    owned: BTreeSet<TopicPartition>,
    /// Records reported so far.
    consumed: u64,
}

struct Shared {
    membership: tokio::sync::Mutex<Membership>,
    /// True between `partitions_revoked` (or a loss) and the next `partitions_assigned`.
    rebalancing: watch::Sender<bool>,
}

struct Listener {
    shared: Arc<Shared>,
}

impl ConsumerRebalanceListener for Listener {
    async fn assigned(&self, partitions: Vec<TopicPartition>) {
        let mut membership = self.shared.membership.lock().await;
        print_partitions("partitions_assigned", &partitions);
        membership.owned.extend(partitions);
        self.shared.rebalancing.send_replace(false);
    }

    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        let mut membership = self.shared.membership.lock().await;
        print_partitions("partitions_revoked", &partitions);
        for tp in &partitions {
            membership.owned.remove(tp);
        }
        self.shared.rebalancing.send_replace(true);
    }

    // As Java's default `onPartitionsLost`: reported as revoked.
    async fn lost(&self, partitions: Vec<TopicPartition>) {
        self.revoked(partitions).await;
    }
}

struct Reporter {
    consumer: Consumer,
    shared: Arc<Shared>,
    shutdown: ShutdownHandle,
    parked: mpsc::UnboundedReceiver<Parked>,
    verbose: bool,
    commit: bool,
    max_messages: Option<u64>,
    delay: Duration,
    max_batch: usize,
}

impl Reporter {
    async fn run(mut self) {
        while let Some(first) = self.parked.recv().await {
            let mut batch = vec![first];
            // Handlers started together are queued behind this task: let them park too.
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
            while batch.len() < self.max_batch {
                match self.parked.try_recv() {
                    Ok(parked) => batch.push(parked),
                    Err(_) => break,
                }
            }
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            self.report(batch).await;
        }
    }

    /// Waits for the end of a rebalance (or a shutdown), then holds the membership.
    async fn settled(&self) -> Option<tokio::sync::MutexGuard<'_, Membership>> {
        let mut rebalancing = self.shared.rebalancing.subscribe();
        loop {
            if *rebalancing.borrow_and_update() {
                if self.shutdown.is_shutdown() {
                    return None;
                }
                tokio::select! {
                    _ = rebalancing.changed() => {}
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                continue;
            }
            let membership = self.shared.membership.lock().await;
            if !*self.shared.rebalancing.borrow() {
                return Some(membership);
            }
        }
    }

    async fn report(&self, batch: Vec<Parked>) {
        let Some(mut membership) = self.settled().await else {
            for parked in batch {
                let _ = parked.done.send(Err(NOT_REPORTED.into()));
            }
            return;
        };
        let mut by_partition: BTreeMap<TopicPartition, Vec<Parked>> = BTreeMap::new();
        for parked in batch {
            let tp = parked.record.topic_partition();
            if membership.owned.contains(&tp) {
                by_partition.entry(tp).or_default().push(parked);
            } else {
                // Lost meanwhile: the partition is gone from the runtime, nothing to report.
                let _ = parked.done.send(Ok(()));
            }
        }
        let mut summaries = Vec::new();
        let mut commits = BTreeMap::new();
        let mut reported: Vec<Parked> = Vec::new();
        let mut refused: Vec<Parked> = Vec::new();
        for (tp, mut records) in by_partition {
            records.sort_by_key(|p| p.record.offset());
            let room = self
                .max_messages
                .map_or(usize::MAX, |max| {
                    max.saturating_sub(membership.consumed) as usize
                })
                .min(records.len());
            refused.extend(records.drain(room..));
            let (Some(first), Some(last)) = (records.first(), records.last()) else {
                continue;
            };
            let (min_offset, max_offset) = (first.record.offset(), last.record.offset());
            summaries.push(Summary {
                topic: tp.topic.to_string(),
                partition: tp.partition,
                count: records.len() as u64,
                min_offset,
                max_offset,
            });
            if self.verbose {
                for parked in &records {
                    let record = &parked.record;
                    print_json(&RecordData {
                        timestamp: now_millis(),
                        name: "record_data",
                        key: text(record.key()),
                        value: text(record.value()),
                        topic: record.topic().to_owned(),
                        partition: record.partition(),
                        offset: record.offset(),
                    });
                }
            }
            membership.consumed += records.len() as u64;
            commits.insert(tp, max_offset + 1);
            reported.extend(records);
        }
        if !summaries.is_empty() {
            print_json(&RecordsConsumed {
                timestamp: now_millis(),
                name: "records_consumed",
                count: summaries.iter().map(|s| s.count).sum(),
                partitions: summaries,
            });
        }
        if self.commit && !commits.is_empty() {
            let (offsets, error) = match self.consumer.commit_offsets(commits.clone()).await {
                Ok(committed) => (committed, None),
                Err(e) => (commits, Some(e.to_string())),
            };
            print_json(&OffsetsCommitted {
                timestamp: now_millis(),
                name: "offsets_committed",
                offsets: offsets
                    .iter()
                    .map(|(tp, offset)| CommitData {
                        topic: tp.topic.to_string(),
                        partition: tp.partition,
                        offset: *offset,
                    })
                    .collect(),
                success: error.is_none(),
                error,
            });
        }
        for parked in reported {
            let _ = parked.done.send(Ok(()));
        }
        for parked in refused {
            let _ = parked.done.send(Err(NOT_REPORTED.into()));
        }
        if self
            .max_messages
            .is_some_and(|max| membership.consumed >= max)
        {
            self.shutdown.shutdown();
        }
    }
}

async fn run(args: Args, config: ConsumerConfig) -> ExitCode {
    let commit = !config.enable_auto_commit;
    let consumer = match Consumer::new(config) {
        Ok(consumer) => consumer,
        Err(e) => {
            eprintln!("verifiable-consumer: {e}");
            return ExitCode::FAILURE;
        }
    };
    // `mooring.telemetry.enabled` (in --consumer.config): export to the sidecar.
    let exporter = match TelemetryExporter::from_config(&consumer) {
        Ok(exporter) => exporter,
        Err(e) => {
            eprintln!("verifiable-consumer: telemetry: {e}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = consumer.shutdown_handle();
    let _signals = tokio::spawn(on_signals(shutdown.clone()));
    let (rebalancing, _) = watch::channel(false);
    let shared = Arc::new(Shared {
        membership: tokio::sync::Mutex::new(Membership::default()),
        rebalancing,
    });
    consumer.set_rebalance_listener(Listener {
        shared: Arc::clone(&shared),
    });

    print_json(&Simple {
        timestamp: now_millis(),
        name: "startup_complete",
        error: None,
    });
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

/// SIGTERM or SIGINT: `shutdown_requested`, then a clean shutdown (as Java's shutdown hook).
async fn on_signals(shutdown: ShutdownHandle) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(term) => term,
        Err(e) => {
            eprintln!("verifiable-consumer: cannot listen for SIGTERM: {e}");
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
        print_json(&Simple {
            timestamp: now_millis(),
            name: "shutdown_requested",
            error: None,
        });
    }
}

/// Prints `shutdown_complete` (with the fatal error, if any) and picks the exit status.
fn finish(error: Option<ConsumerError>) -> ExitCode {
    let error = error.filter(|e| {
        !matches!(e, ConsumerError::HandlerFailed(failure) if failure.error.to_string() == NOT_REPORTED)
    });
    if let Some(e) = &error {
        eprintln!("verifiable-consumer: stopped on a fatal error: {e}");
    }
    let failed = error.is_some();
    print_json(&Simple {
        timestamp: now_millis(),
        name: "shutdown_complete",
        error: error.map(|e| e.to_string()),
    });
    print_shutdown_requested();
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn java_class_names_map_to_ours() {
        assert_eq!(
            assignment_strategy("org.apache.kafka.clients.consumer.CooperativeStickyAssignor"),
            Ok("cooperative-sticky".to_owned())
        );
        assert_eq!(
            assignment_strategy(
                "org.apache.kafka.clients.consumer.RangeAssignor, \
                 org.apache.kafka.clients.consumer.RoundRobinAssignor,sticky"
            ),
            Ok("range,roundrobin,sticky".to_owned())
        );
        assert!(assignment_strategy("com.example.MyAssignor").is_err());
    }

    #[test]
    fn properties_files_as_java_reads_them() {
        let props = parse_properties(
            "# comment\n! other\n\nsession.timeout.ms=6000\nclient.id : me\nfetch.max.wait.ms 100\n\
             group.id=a\\\n  b\nsession.timeout.ms=7000\n",
        );
        assert_eq!(
            props,
            vec![
                ("client.id".to_owned(), "me".to_owned()),
                ("fetch.max.wait.ms".to_owned(), "100".to_owned()),
                ("group.id".to_owned(), "ab".to_owned()),
                ("session.timeout.ms".to_owned(), "7000".to_owned()),
            ]
        );
    }

    fn args(extra: &[&str]) -> Args {
        let mut all = vec![
            "verifiable-consumer",
            "--bootstrap-server",
            "localhost:9092",
            "--topic",
            "t",
            "--group-id",
            "g",
        ];
        all.extend_from_slice(extra);
        Args::parse_from(all)
    }

    fn value<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
        props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn the_consumer_group_protocol_takes_the_remote_assignor_and_no_strategy() {
        let props = properties(&args(&[
            "--group-protocol",
            "CONSUMER",
            "--group-remote-assignor",
            "range",
            "--assignment-strategy",
            "org.apache.kafka.clients.consumer.RoundRobinAssignor",
        ]))
        .unwrap();
        assert_eq!(value(&props, "group.protocol"), Some("consumer"));
        assert_eq!(value(&props, "group.remote.assignor"), Some("range"));
        assert_eq!(value(&props, "partition.assignment.strategy"), None);
        assert_eq!(value(&props, "session.timeout.ms"), None);
        let config = ConsumerConfig::from_properties(props).unwrap();
        let group = config.group.unwrap();
        assert_eq!(group.protocol, mooring_group::GroupProtocol::Consumer);
        assert_eq!(group.remote_assignor.as_deref(), Some("range"));
    }

    #[test]
    fn the_classic_group_protocol_takes_the_strategy_and_ignores_the_remote_assignor() {
        for extra in [&[][..], &["--group-protocol", "classic"][..]] {
            let mut flags = extra.to_vec();
            flags.extend(["--group-remote-assignor", "uniform"]);
            let props = properties(&args(&flags)).unwrap();
            assert_eq!(value(&props, "group.protocol"), Some("classic"));
            assert_eq!(value(&props, "group.remote.assignor"), None);
            assert_eq!(
                value(&props, "partition.assignment.strategy"),
                Some("range")
            );
            ConsumerConfig::from_properties(props).unwrap();
        }
    }

    #[test]
    fn a_session_timeout_under_the_consumer_protocol_is_refused_naming_the_key() {
        let props = properties(&args(&[
            "--group-protocol",
            "consumer",
            "--session-timeout",
            "6000",
        ]))
        .unwrap();
        match ConsumerConfig::from_properties(props) {
            Err(ConsumerError::Config { key, message }) => {
                assert_eq!(key, "session.timeout.ms");
                assert!(message.contains("group.protocol=consumer"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_group_protocol_is_refused_naming_the_choices() {
        let err = properties(&args(&["--group-protocol", "streams"])).unwrap_err();
        assert!(err.contains("CLASSIC, CONSUMER"), "{err}");
    }
}
