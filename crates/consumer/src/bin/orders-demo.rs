//! `orders-demo`: the demo service `scripts/demo` runs three of, as a Kubernetes deployment would
//! run three pods. It consumes the `orders` topic with an async handler that takes a few
//! milliseconds per record, and shows what Mooring does around it: static membership, rebalance
//! events, and a clean shutdown on SIGTERM.
//!
//! Configuration (the `config` crate): optional files (`--config FILE`, TOML or YAML by its
//! extension, given any number of times; a later file's keys override an earlier one's) whose keys
//! are Kafka's own property names (`bootstrap.servers = "..."`, dotted or quoted), then
//! environment variables over them all: `MOORING__` followed by the property name in
//! capitals with `_` for `.` (`MOORING__BOOTSTRAP_SERVERS`, `MOORING__GROUP_INSTANCE_ID`; on
//! Kubernetes, set the latter from the pod name; a second file written at pod start can add
//! `client.rack`, deploy/README.md "Zones and client.rack"). Keys under `demo.` are the demo's own (below);
//! every other key goes to [`ConsumerConfig::from_properties`], so an unknown or ill-typed key is
//! an error naming the key and the nearest valid one.
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `demo.topic` | `orders` | the topic to consume |
//! | `demo.output` | stdout | file the processed records are appended to |
//! | `demo.processing.min.ms` / `demo.processing.max.ms` | 2 / 5 | each record takes this long to process (spread over the range by its offset) |
//!
//! Telemetry: with `mooring.telemetry.enabled = true` (and `mooring.telemetry.endpoint`, default
//! `http://127.0.0.1:9464/v1/events`) the service starts the exporter to its `mooring-sidecar`;
//! it is off by default, and then nothing is sent.
//!
//! Output: one line per processed record, written (and so durable against a crash) before the
//! handler returns, hence before its offset can be committed: `record TOPIC PARTITION OFFSET
//! VALUE UNIX_MS` (the last field: when it was processed, wall clock). On stdout, one line per
//! event: `event NAME key=value ...` (`started` (with `rack=`, the `client.rack` in use or `-`), `rebalance-started`, `revoked`, `assigned`,
//! `lost`, `rebalance-completed`, `static-rejoin` (a static member back in its place, no
//! rebalance), `rebalance-failed`, `fenced`, `poll-interval-exceeded`,
//! `consuming` at the first record processed, `left`, `shutdown`, `telemetry-stopped`, `stopped`).
//!
//! SIGTERM/SIGINT: stop fetching, let the running handlers finish, commit, close; a static member
//! (with `group.instance.id`) stays in the group, so a restart within `session.timeout.ms` causes
//! no rebalance (KIP-345). Exit status 0 after a clean stop, 1 on a fatal error or a bad config.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use config::{Config, Environment, File, Value, ValueKind};
use mooring_consumer::processing::{ConsumerRecord, ProcessingEvent};
use mooring_consumer::telemetry::{ExporterHandle, TelemetryExporter};
use mooring_consumer::{
    Consumer, ConsumerConfig, ConsumerError, ConsumerEvent, ConsumerEvents, GroupEventKind,
    TopicPartition,
};

/// The prefix of environment overrides: `MOORING__BOOTSTRAP_SERVERS` sets `bootstrap.servers`.
const ENV_PREFIX: &str = "MOORING";

/// Consumer properties the demo sets unless the config says otherwise; the classic protocol's
/// own ([`CLASSIC_ONLY`]) only when the config leaves `group.protocol` classic.
const DEFAULTS: &[(&str, &str)] = &[
    ("group.id", "orders-demo"),
    ("auto.offset.reset", "earliest"),
    ("partition.assignment.strategy", "cooperative-sticky"),
    ("session.timeout.ms", "10000"),
    ("heartbeat.interval.ms", "1000"),
    ("auto.commit.interval.ms", "1000"),
    ("mooring.concurrency", "16"),
];

/// The demo's defaults that `group.protocol=consumer` refuses (the broker assigns and sets the
/// session timeout and heartbeat interval).
const CLASSIC_ONLY: &[&str] = &[
    "partition.assignment.strategy",
    "session.timeout.ms",
    "heartbeat.interval.ms",
];

#[derive(Debug, Parser)]
#[command(
    name = "orders-demo",
    about = "Mooring's demo service: consumes `orders` with a slow async handler; config from a \
             files (Kafka property names) and MOORING__* environment variables"
)]
struct Args {
    /// Config file (TOML or YAML, by extension), Kafka property names as keys. May be given more
    /// than once: later files override earlier ones, the environment overrides them all.
    #[arg(long, value_name = "FILE")]
    config: Vec<PathBuf>,
}

/// Everything the service needs, read from the file and the environment.
#[derive(Debug)]
struct Settings {
    /// Kafka properties for the consumer.
    props: Vec<(String, String)>,
    topic: String,
    output: Option<PathBuf>,
    min_ms: u64,
    max_ms: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let settings = match settings(&args.config, env_config()) {
        Ok(settings) => settings,
        Err(message) => {
            eprintln!("orders-demo: {message}");
            return ExitCode::FAILURE;
        }
    };
    // Logs to stderr (`RUST_LOG`), and traces over OTLP when `OTEL_EXPORTER_OTLP_*` says where;
    // the guard flushes the last spans when `main` returns.
    let _otel = match mooring_consumer::otel::init() {
        Ok(guard) => guard,
        Err(e) => {
            eprintln!("orders-demo: {e}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("orders-demo: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(settings))
}

/// The process's `MOORING__*` environment variables as a config source.
fn env_config() -> Environment {
    Environment::with_prefix(ENV_PREFIX).prefix_separator("__")
}

/// The files' properties in order (a later file's over an earlier one's), then the environment's
/// over them all, then the demo's own keys taken out.
fn settings(files: &[PathBuf], env: Environment) -> Result<Settings, String> {
    let mut props: Vec<(String, String)> = Vec::new();
    for path in files {
        let from_file = Config::builder()
            .add_source(File::from(path.as_path()))
            .build()
            .map_err(|e| format!("--config {}: {e}", path.display()))?;
        for (key, value) in flatten(from_file, false)? {
            set(&mut props, key, value);
        }
    }
    let from_env = Config::builder()
        .add_source(env)
        .build()
        .map_err(|e| format!("environment: {e}"))?;
    for (key, value) in flatten(from_env, true)? {
        set(&mut props, key, value);
    }
    let mut props = with_defaults(props);
    let mut take = |key: &str| -> Option<String> {
        let at = props.iter().position(|(k, _)| k == key)?;
        Some(props.remove(at).1)
    };
    let topic = take("demo.topic").unwrap_or_else(|| "orders".into());
    let output = take("demo.output")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from);
    let millis = |key: &str, value: Option<String>, default: u64| -> Result<u64, String> {
        value.map_or(Ok(default), |v| {
            v.trim()
                .parse()
                .map_err(|_| format!("{key}: `{v}` is not a number of milliseconds"))
        })
    };
    let min_ms = millis("demo.processing.min.ms", take("demo.processing.min.ms"), 2)?;
    let max_ms = millis("demo.processing.max.ms", take("demo.processing.max.ms"), 5)?;
    if max_ms < min_ms {
        return Err(format!(
            "demo.processing.max.ms ({max_ms}) is below demo.processing.min.ms ({min_ms})"
        ));
    }
    if let Some((key, _)) = props.iter().find(|(k, _)| k.starts_with("demo.")) {
        return Err(format!(
            "{key}: unknown demo key (demo.topic, demo.output, demo.processing.min.ms, \
             demo.processing.max.ms)"
        ));
    }
    Ok(Settings {
        props,
        topic,
        output,
        min_ms,
        max_ms,
    })
}

/// `props` with the demo's defaults for the keys it does not set (see [`DEFAULTS`]).
fn with_defaults(mut props: Vec<(String, String)>) -> Vec<(String, String)> {
    let consumer_protocol = props
        .iter()
        .any(|(k, v)| k == "group.protocol" && v.trim().eq_ignore_ascii_case("consumer"));
    for (key, value) in DEFAULTS {
        let refused = consumer_protocol && CLASSIC_ONLY.contains(key);
        if !refused && !props.iter().any(|(k, _)| k == key) {
            props.push((key.to_string(), value.to_string()));
        }
    }
    props
}

fn set(props: &mut Vec<(String, String)>, key: String, value: String) {
    props.retain(|(k, _)| *k != key);
    props.push((key, value));
}

/// Nested tables become dotted keys (`bootstrap.servers`); from the environment, where a key is
/// one word, `_` stands for `.` (Kafka's property names have no underscores).
fn flatten(config: Config, from_env: bool) -> Result<Vec<(String, String)>, String> {
    let table: config::Map<String, Value> = config
        .try_deserialize()
        .map_err(|e| format!("reading the configuration: {e}"))?;
    let mut out = Vec::new();
    for (key, value) in table {
        flatten_into(&key, value, &mut out)?;
    }
    if from_env {
        for (key, _) in &mut out {
            *key = key.to_lowercase().replace('_', ".");
        }
    }
    out.sort();
    Ok(out)
}

fn flatten_into(prefix: &str, value: Value, out: &mut Vec<(String, String)>) -> Result<(), String> {
    match value.kind {
        ValueKind::Table(table) => {
            for (key, value) in table {
                flatten_into(&format!("{prefix}.{key}"), value, out)?;
            }
        }
        ValueKind::Array(items) => {
            let items: Result<Vec<String>, String> = items
                .into_iter()
                .map(|v| v.into_string().map_err(|e| format!("{prefix}: {e}")))
                .collect();
            out.push((prefix.to_owned(), items?.join(",")));
        }
        ValueKind::Nil => {}
        _ => {
            let text = value.into_string().map_err(|e| format!("{prefix}: {e}"))?;
            out.push((prefix.to_owned(), text));
        }
    }
    Ok(())
}

/// Where processed records go; each line is one write, so concurrent handlers never interleave.
struct Output {
    sink: Mutex<Box<dyn Write + Send>>,
}

impl Output {
    fn open(path: Option<&PathBuf>) -> Result<Output, String> {
        let sink: Box<dyn Write + Send> = match path {
            Some(path) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("demo.output {}: {e}", path.display()))?,
            ),
            None => Box::new(std::io::stdout()),
        };
        Ok(Output {
            sink: Mutex::new(sink),
        })
    }

    fn write(&self, line: &str) -> std::io::Result<()> {
        let mut sink = self.sink.lock().unwrap_or_else(PoisonError::into_inner);
        sink.write_all(line.as_bytes())?;
        sink.flush()
    }
}

/// Wall-clock milliseconds since the Unix epoch (0 if the clock is before it).
fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// One line on stdout.
fn event(line: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "event {line}");
    let _ = out.flush();
}

/// A processing time in `[min, max]` ms that looks random but is the same for a record every time.
fn latency(min_ms: u64, max_ms: u64, partition: i32, offset: i64) -> Duration {
    let mut x = (offset as u64) ^ ((partition as u64) << 48) ^ 0x9E37_79B9_7F4A_7C15;
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    Duration::from_millis(min_ms + x % (max_ms - min_ms + 1))
}

fn list<T: Clone + Into<TopicPartition>>(partitions: &[T]) -> String {
    let names: Vec<String> = partitions
        .iter()
        .map(|tp| tp.clone().into().to_string())
        .collect();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(",")
    }
}

fn print_event(e: &ConsumerEvent) {
    match e {
        ConsumerEvent::Group(g) => match &g.kind {
            GroupEventKind::RebalanceStarted {
                cause, generation, ..
            } => event(format_args!(
                "rebalance-started cause={cause:?} generation={generation}"
            )),
            GroupEventKind::PartitionsRevoked { partitions, .. } => {
                event(format_args!("revoked partitions={}", list(partitions)))
            }
            GroupEventKind::PartitionsAssigned {
                added, assignment, ..
            } => event(format_args!(
                "assigned added={} assignment={}",
                list(added),
                list(assignment)
            )),
            GroupEventKind::PartitionsLost { partitions, .. } => {
                event(format_args!("lost partitions={}", list(partitions)))
            }
            GroupEventKind::RebalanceCompleted {
                generation, total, ..
            } => event(format_args!(
                "rebalance-completed generation={generation} took_ms={}",
                total.as_millis()
            )),
            GroupEventKind::StaticRejoin {
                generation, total, ..
            } => event(format_args!(
                "static-rejoin generation={generation} took_ms={}",
                total.as_millis()
            )),
            GroupEventKind::RebalanceFailed { error, .. } => {
                event(format_args!("rebalance-failed error={error:?}"))
            }
            GroupEventKind::Fenced { instance_id, .. } => {
                event(format_args!("fenced instance={instance_id}"))
            }
            GroupEventKind::Left {
                sent_leave_group, ..
            } => event(format_args!("left sent_leave_group={sent_leave_group}")),
            _ => {}
        },
        ConsumerEvent::Processing(ProcessingEvent::PollIntervalExceeded {
            partition,
            offset,
            elapsed,
        }) => event(format_args!(
            "poll-interval-exceeded partition={partition} offset={offset} elapsed_ms={}",
            elapsed.as_millis()
        )),
        ConsumerEvent::CommitFailed { error } => {
            event(format_args!("commit-failed error={error:?}"))
        }
        ConsumerEvent::Shutdown {
            duration,
            timed_out,
        } => event(format_args!(
            "shutdown took_ms={} timed_out={}",
            duration.as_millis(),
            list(timed_out)
        )),
        _ => {}
    }
}

async fn serve(settings: Settings) -> ExitCode {
    let started = match start(&settings) {
        Ok(started) => started,
        Err(message) => {
            eprintln!("orders-demo: {message}");
            return ExitCode::FAILURE;
        }
    };
    let Started {
        consumer,
        exporter,
        mut events,
        output,
    } = started;
    let processor = Arc::new(Processor {
        output,
        processed: AtomicU64::new(0),
        consuming: AtomicBool::new(false),
        min_ms: settings.min_ms,
        max_ms: settings.max_ms,
    });
    let handler = {
        let processor = Arc::clone(&processor);
        move |record: ConsumerRecord| Arc::clone(&processor).process(record)
    };
    let run = consumer.run(handler);
    tokio::pin!(run);
    let result = loop {
        tokio::select! {
            result = &mut run => break result,
            Some(e) = events.recv() => print_event(&e),
        }
    };
    print_last_events(exporter, &mut events).await;
    stopped(result, processor.processed.load(Ordering::Relaxed))
}

/// The consumer, subscribed and with the signals handled, its event stream, and the output.
struct Started {
    consumer: Consumer,
    exporter: Option<ExporterHandle>,
    events: ConsumerEvents,
    output: Arc<Output>,
}

/// Builds and subscribes the consumer, starts the exporter when configured, and prints
/// `started`; an error says what failed.
fn start(settings: &Settings) -> Result<Started, String> {
    let config = ConsumerConfig::from_properties(settings.props.iter().cloned())
        .map_err(|e| e.to_string())?;
    let output = Arc::new(Output::open(settings.output.as_ref())?);
    let started = started_line(&config, &settings.topic);
    let consumer = Consumer::new(config).map_err(|e| e.to_string())?;
    consumer
        .subscribe([settings.topic.clone()])
        .map_err(|e| e.to_string())?;
    // The exporter (when `mooring.telemetry.enabled`) takes each event first, then hands it on.
    let (exporter, events) =
        TelemetryExporter::from_config_tee(&consumer).map_err(|e| format!("telemetry: {e}"))?;
    consumer.shutdown_handle().on_signals();
    event(format_args!("{started}"));
    Ok(Started {
        consumer,
        exporter,
        events,
        output,
    })
}

/// The `started` event's text: the member's group, instance and rack, the topic, the process
/// and where telemetry goes.
fn started_line(config: &ConsumerConfig, topic: &str) -> String {
    let telemetry = if config.telemetry.enabled {
        config.telemetry.exporter.endpoint.clone()
    } else {
        "off".into()
    };
    let (group, instance) = config.group.as_ref().map_or(("-".into(), "-".into()), |g| {
        (
            g.group_id.clone(),
            g.group_instance_id.clone().unwrap_or_else(|| "-".into()),
        )
    });
    let rack = config
        .client
        .client_rack
        .clone()
        .unwrap_or_else(|| "-".into());
    format!(
        "started group={group} instance={instance} rack={rack} topic={topic} pid={} \
         telemetry={telemetry}",
        std::process::id()
    )
}

/// What the handler shares between records: where they go, how many went, and their time.
struct Processor {
    output: Arc<Output>,
    processed: AtomicU64,
    /// Whether `consuming` was printed.
    consuming: AtomicBool,
    min_ms: u64,
    max_ms: u64,
}

impl Processor {
    /// Takes the record's processing time, then writes its line; the first record processed
    /// prints `consuming`.
    async fn process(self: Arc<Self>, record: ConsumerRecord) -> Result<(), String> {
        tokio::time::sleep(latency(
            self.min_ms,
            self.max_ms,
            record.partition(),
            record.offset(),
        ))
        .await;
        let value = record
            .value()
            .map_or_else(|| "-".into(), |v| String::from_utf8_lossy(v).into_owned());
        self.output
            .write(&format!(
                "record {} {} {} {value} {}\n",
                record.topic(),
                record.partition(),
                record.offset(),
                unix_ms()
            ))
            .map_err(|e| format!("writing the output: {e}"))?;
        self.processed.fetch_add(1, Ordering::Relaxed);
        if !self.consuming.swap(true, Ordering::Relaxed) {
            event(format_args!("consuming"));
        }
        Ok(())
    }
}

/// The events left once `run` returned. The last ones (shutdown, left) were sent before it did;
/// the exporter's shutdown sends them (and a last snapshot) to the sidecar and hands them on,
/// then ends the stream.
async fn print_last_events(exporter: Option<ExporterHandle>, events: &mut ConsumerEvents) {
    if let Some(exporter) = exporter {
        let dropped = exporter.shutdown().await;
        while let Some(e) = events.recv().await {
            print_event(&e);
        }
        event(format_args!("telemetry-stopped dropped={dropped}"));
    } else {
        while let Ok(e) = events.try_recv() {
            print_event(&e);
        }
    }
}

/// `stopped`, with the fatal error if there was one, and the exit status.
fn stopped(result: Result<(), ConsumerError>, processed: u64) -> ExitCode {
    match result {
        Ok(()) => {
            event(format_args!("stopped records={processed}"));
            ExitCode::SUCCESS
        }
        Err(e) => {
            event(format_args!("stopped records={processed} error={e:?}"));
            eprintln!("orders-demo: stopped on a fatal error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_defaults_fill_in_and_give_way() {
        let all = with_defaults(pairs(&[
            ("bootstrap.servers", "b:9092"),
            ("session.timeout.ms", "6000"),
        ]));
        let value = |key: &str| all.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(value("session.timeout.ms"), Some("6000"));
        assert_eq!(value("heartbeat.interval.ms"), Some("1000"));
        assert_eq!(
            value("partition.assignment.strategy"),
            Some("cooperative-sticky")
        );
        ConsumerConfig::from_properties(all.clone()).expect("valid");
    }

    #[test]
    fn the_consumer_protocol_gets_no_classic_only_default() {
        let all = with_defaults(pairs(&[
            ("bootstrap.servers", "b:9092"),
            ("group.protocol", "consumer"),
        ]));
        for key in CLASSIC_ONLY {
            assert!(!all.iter().any(|(k, _)| k == key), "{key}: {all:?}");
        }
        assert!(all
            .iter()
            .any(|(k, v)| k == "group.id" && v == "orders-demo"));
        ConsumerConfig::from_properties(all).expect("valid");
    }

    /// A fresh directory of this test's own under the system's temporary directory.
    fn temp_dir(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("orders-demo-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a temporary directory");
        dir
    }

    fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write a test config file");
        path
    }

    fn prop<'a>(settings: &'a Settings, key: &str) -> Option<&'a str> {
        settings
            .props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// An environment source that reads the given variables, not the process's.
    fn env(vars: &[(&str, &str)]) -> Environment {
        let map = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        env_config().source(Some(map))
    }

    #[test]
    fn later_files_override_earlier_ones_and_the_environment_overrides_all() {
        let dir = temp_dir("later_files_override_ear");
        let base = write(
            &dir,
            "consumer.toml",
            "bootstrap.servers = \"a:9092\"\nclient.rack = \"from-base\"\n\
             session.timeout.ms = 60000\n",
        );
        let zone = write(
            &dir,
            "client-rack.toml",
            "# zone of node n1\nclient.rack = \"eu-west-1b\"\nsession.timeout.ms = 30000\n",
        );
        let settings = settings(
            &[base.clone(), zone.clone()],
            env(&[("MOORING__SESSION_TIMEOUT_MS", "45000")]),
        )
        .expect("valid settings");
        assert_eq!(prop(&settings, "client.rack"), Some("eu-west-1b"));
        assert_eq!(prop(&settings, "bootstrap.servers"), Some("a:9092"));
        assert_eq!(prop(&settings, "session.timeout.ms"), Some("45000"));
        // Each key once, whatever the number of sources that set it.
        let racks = settings
            .props
            .iter()
            .filter(|(k, _)| k == "client.rack")
            .count();
        assert_eq!(racks, 1);

        // The other order: the base file wins.
        let settings = super::settings(&[zone, base], env(&[])).expect("valid settings");
        assert_eq!(prop(&settings, "client.rack"), Some("from-base"));
    }

    #[test]
    fn a_file_without_client_rack_leaves_the_consumer_without_one() {
        let dir = temp_dir("a_file_without_client_ra");
        let base = write(
            &dir,
            "consumer.toml",
            "bootstrap.servers = \"a:9092\"\ngroup.id = \"orders\"\n",
        );
        // What the zone init container writes when the node has no zone label.
        let zone = write(
            &dir,
            "client-rack.toml",
            "# node n1 has no label topology.kubernetes.io/zone: no client.rack\n",
        );
        let settings = settings(&[base, zone], env(&[])).expect("valid settings");
        assert_eq!(prop(&settings, "client.rack"), None);
        let config = ConsumerConfig::from_properties(settings.props.iter().cloned())
            .expect("a valid consumer config");
        assert_eq!(config.client.client_rack, None);
    }

    #[test]
    fn a_missing_or_broken_file_is_an_error_naming_it() {
        let dir = temp_dir("a_missing_or_broken_file");
        let missing = dir.join("absent.toml");
        let err = settings(std::slice::from_ref(&missing), env(&[]))
            .expect_err("a missing file must fail");
        assert!(err.contains("absent.toml"), "{err}");
        let broken = write(&dir, "broken.toml", "client.rack = \n");
        let err = settings(&[broken], env(&[])).expect_err("a broken file must fail");
        assert!(err.contains("broken.toml"), "{err}");
    }
}
