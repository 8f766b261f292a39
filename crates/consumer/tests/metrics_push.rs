//! Client metrics pushed to the broker (KIP-714), against a real broker with a client telemetry
//! receiver: `tests/telemetry-receiver/` (Kafka 4.x's `ClientTelemetryExporterProvider`, or
//! `ClientTelemetry` on a 3.x broker), compiled here with javac against the broker's
//! kafka-clients jar `scripts/kafka fetch` keeps, and loaded by a dedicated one-node cluster
//! (`scripts/kafka start --plugin-classpath ... --property metric.reporters=...`, port base
//! 18000) that writes each push it accepts to a file this test reads. An operator's subscription
//! (ClientMetricsCommand, as `kafka-client-metrics.sh`) asks Mooring clients
//! (`client_software_name=mooring`) for the `org.apache.kafka.consumer.` metrics every second.
//!
//! What is checked: before any subscription a consumer gets an instance id and pushes nothing;
//! a consumer with `enable.metrics.push=false` sends nothing; one with the default pushes under the instance id the broker gave it, every interval, Java's metric names,
//! records consumed that add up to what it fetched, its labels, and a last push marked
//! terminating when it closes. A broker without a receiver (the shared cluster) offers neither
//! API, and a consumer there pushes nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use base64::Engine as _;
use mooring_client::{Client, ClientConfig};
use mooring_testkit::{unique, Cluster};
use mooring_wire::records::compression::decompress;
use mooring_wire::records::Compression;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::metrics::v1::{
    metric::Data, number_data_point, AggregationTemporality, MetricsData,
};
use prost::Message as _;

use common::{consumer, spawn_run, stop, wait_until, Seen};

/// `Cluster::dedicated_with("t-metrics-push", 1, 18000, ...)`.
const PORT_BASE: u16 = 18000;
const RECORDS: usize = 400;
const INTERVAL: Duration = Duration::from_millis(1000);
const PREFIX: &str = "org.apache.kafka.consumer.";
const RECORDS_CONSUMED: &str = "org.apache.kafka.consumer.fetch.manager.records.consumed.total";

/// One line of the receiver's file.
#[derive(Debug)]
struct Push {
    at_ms: u64,
    instance_id: String,
    terminating: bool,
    content_type: String,
    data: MetricsData,
}

impl Push {
    fn names(&self) -> BTreeSet<String> {
        self.metrics().map(|(name, _)| name.to_owned()).collect()
    }

    fn metrics(&self) -> impl Iterator<Item = (&str, &Data)> {
        self.data
            .resource_metrics
            .iter()
            .flat_map(|r| &r.scope_metrics)
            .flat_map(|s| &s.metrics)
            .filter_map(|m| Some((m.name.as_str(), m.data.as_ref()?)))
    }

    /// The sum `name` holds, with its temporality.
    fn sum(&self, name: &str) -> Option<(i64, i32)> {
        self.metrics().find_map(|(n, data)| match data {
            Data::Sum(sum) if n == name => match sum.data_points.first()?.value? {
                number_data_point::Value::AsInt(v) => Some((v, sum.aggregation_temporality)),
                number_data_point::Value::AsDouble(_) => None,
            },
            _ => None,
        })
    }

    /// The gauge `name` holds.
    fn gauge(&self, name: &str) -> Option<f64> {
        self.metrics().find_map(|(n, data)| match data {
            Data::Gauge(g) if n == name => match g.data_points.first()?.value? {
                number_data_point::Value::AsDouble(v) => Some(v),
                number_data_point::Value::AsInt(v) => Some(v as f64),
            },
            _ => None,
        })
    }

    fn label(&self, key: &str) -> Option<String> {
        let resource = self.data.resource_metrics.first()?.resource.as_ref()?;
        resource
            .attributes
            .iter()
            .find_map(|kv| match kv.value.as_ref()?.value.as_ref()? {
                any_value::Value::StringValue(v) if kv.key == key => Some(v.clone()),
                _ => None,
            })
    }
}

fn read_pushes(file: &Path) -> Vec<Push> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 6, "a receiver line has six fields: {line}");
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(f[5])
                .unwrap();
            Push {
                at_ms: f[0].parse().unwrap(),
                instance_id: f[1].to_owned(),
                terminating: f[2] == "true",
                content_type: f[3].to_owned(),
                data: MetricsData::decode(uncompressed(bytes).as_slice())
                    .unwrap_or_else(|e| panic!("the payload is not OTLP MetricsData: {e}")),
            }
        })
        .collect()
}

/// The payload as the consumer made it. Brokers before 4.3.1 (Kafka's "Fixed metrics
/// decompression") hand the receiver the payload as sent, compressed; later ones decompress it
/// first. A zstd or lz4 frame is told by its magic number.
fn uncompressed(bytes: Vec<u8>) -> Vec<u8> {
    const ZSTD: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
    const LZ4: [u8; 4] = [0x04, 0x22, 0x4d, 0x18];
    let codec = match bytes.get(..4) {
        Some(m) if m == ZSTD => Compression::Zstd,
        Some(m) if m == LZ4 => Compression::Lz4,
        _ => return bytes,
    };
    decompress(codec, &bytes, 16 << 20).expect("a payload that decompresses")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_consumer_pushes_javas_metric_names_every_interval_and_once_more_on_close() {
    // The receiver is compiled for the release KAFKA_VERSION names (4.4.0 unset); the cluster
    // must run that one, not the release a stopped cluster of this name last ran (which
    // scripts/kafka keeps unless KAFKA_VERSION says otherwise). One test per process (nextest).
    std::env::set_var("KAFKA_VERSION", kafka_version());
    let (classes, receiver) = compile_receiver();
    let file = classes.join("pushes.txt");
    let (cp, reporters, out) = (
        classes.display().to_string(),
        format!("metric.reporters={receiver}"),
        format!("mooring.telemetry.receiver.file={}", file.display()),
    );
    let cluster = Cluster::dedicated_with(
        "t-metrics-push",
        1,
        PORT_BASE,
        &[
            "--plugin-classpath",
            &cp,
            "--property",
            &reporters,
            "--property",
            &out,
        ],
    );
    let topic = unique("metrics-push");
    cluster.create_topic(&topic, 2);
    cluster.produce_perf(&topic, RECORDS as u64, 100);

    // No subscription yet: the broker gives an instance id and asks for no metric.
    let unasked = consumer(&cluster, &unique("metrics-unasked"), &[]);
    unasked.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&unasked, &seen, Duration::ZERO);
    wait_until(
        "an instance id and all consumed",
        Duration::from_secs(30),
        || unasked.client_instance_id().is_some() && seen.distinct() == RECORDS,
    )
    .await;
    tokio::time::sleep(INTERVAL * 2).await;
    stop(&unasked, run).await.unwrap();
    assert_eq!(unasked.metrics_pushes(), 0);
    assert!(read_pushes(&file).is_empty(), "pushed unasked");

    let interval = INTERVAL.as_millis().to_string();
    cluster.tool_ok(
        "ClientMetricsCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--alter",
            "--name",
            "mooring-consumers",
            "--metrics",
            PREFIX,
            "--interval",
            &interval,
            "--match",
            "client_software_name=mooring",
        ],
    );

    // Off: the broker is never asked, whatever it offers.
    let off = consumer(
        &cluster,
        &unique("metrics-off"),
        &[
            ("enable.metrics.push", "false"),
            ("client.id", "mooring-off"),
        ],
    );
    off.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&off, &seen, Duration::ZERO);
    wait_until(
        "the push-less consumer consumed all",
        Duration::from_secs(30),
        || seen.distinct() == RECORDS,
    )
    .await;
    tokio::time::sleep(INTERVAL * 2).await;
    stop(&off, run).await.unwrap();
    assert_eq!((off.client_instance_id(), off.metrics_pushes()), (None, 0));
    assert!(
        read_pushes(&file).is_empty(),
        "enable.metrics.push=false pushed something"
    );

    // On (the default).
    let group = unique("metrics-on");
    let on = consumer(&cluster, &group, &[("client.id", "mooring-on")]);
    on.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&on, &seen, Duration::ZERO);
    wait_until(
        "all consumed and four pushes accepted",
        Duration::from_secs(30),
        || seen.distinct() == RECORDS && on.metrics_pushes() >= 4,
    )
    .await;
    stop(&on, run).await.unwrap();
    let fetched: u64 = on.fetch_stats().brokers.iter().map(|b| b.records).sum();
    let id = on
        .client_instance_id()
        .expect("the broker gave an instance id");
    let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.0);

    let pushes = read_pushes(&file);
    assert_eq!(
        pushes.len() as u64,
        on.metrics_pushes(),
        "every accepted push arrived"
    );
    assert!(
        pushes.iter().all(|p| p.instance_id == id),
        "{id} vs {pushes:?}"
    );
    // The broker's name for the payload's format (the OTLP MetricsData it decompressed).
    assert!(
        pushes.iter().all(|p| p.content_type == "OTLP"),
        "{pushes:?}"
    );
    let (last, before) = pushes.split_last().unwrap();
    assert!(last.terminating, "the last push is marked terminating");
    assert!(
        before.iter().all(|p| !p.terminating),
        "only the last one is"
    );

    // Every interval (the broker refuses one sooner); the first is jittered.
    for pair in before.windows(2) {
        let gap = pair[1].at_ms - pair[0].at_ms;
        assert!(
            (950..=1800).contains(&gap),
            "pushes {gap} ms apart, the interval is {interval} ms"
        );
    }

    // Java's names, only the prefix subscribed, and the consumer's own figures.
    let names: BTreeSet<String> = pushes.iter().flat_map(Push::names).collect();
    for name in [
        RECORDS_CONSUMED,
        "org.apache.kafka.consumer.fetch.manager.bytes.consumed.total",
        "org.apache.kafka.consumer.fetch.manager.fetch.latency.avg",
        "org.apache.kafka.consumer.fetch.manager.fetch.latency.max",
        "org.apache.kafka.consumer.coordinator.commit.latency.avg",
        "org.apache.kafka.consumer.coordinator.commit.latency.max",
        "org.apache.kafka.consumer.coordinator.assigned.partitions",
        "org.apache.kafka.consumer.connection.creation.total",
    ] {
        assert!(names.contains(name), "{name} not pushed: {names:?}");
    }
    assert!(names.iter().all(|n| n.starts_with(PREFIX)), "{names:?}");
    let consumed: Vec<(i64, i32)> = pushes
        .iter()
        .map(|p| p.sum(RECORDS_CONSUMED).expect("each push holds it"))
        .collect();
    let total = if consumed[0].1 == AggregationTemporality::Delta as i32 {
        consumed.iter().map(|(v, _)| *v).sum::<i64>()
    } else {
        consumed.last().unwrap().0
    };
    assert_eq!(total as u64, fetched, "records consumed: {consumed:?}");
    assert!(fetched >= RECORDS as u64);
    assert!(
        before.iter().any(
            |p| p.gauge("org.apache.kafka.consumer.coordinator.assigned.partitions") == Some(2.0)
        ),
        "both partitions assigned at some push"
    );
    assert_eq!(last.label("client_id").as_deref(), Some("mooring-on"));
    assert_eq!(last.label("group_id").as_deref(), Some(group.as_str()));
    drop(cluster);
    let _ = std::fs::remove_dir_all(&classes);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_without_a_receiver_offers_no_telemetry_and_gets_nothing() {
    let cluster = Cluster::shared();
    let client = Client::connect(ClientConfig::new([cluster.bootstrap()]))
        .await
        .unwrap();
    let conn = client.any_connection().await.unwrap();
    let versions = conn.versions().expect("ApiVersions answered");
    assert_eq!(
        (versions.broker_range(71), versions.broker_range(72)),
        (None, None),
        "a broker without a receiver lists neither GetTelemetrySubscriptions nor PushTelemetry"
    );

    let topic = unique("metrics-none");
    cluster.create_topic(&topic, 1);
    cluster.produce_perf(&topic, 50, 100);
    let c = consumer(&cluster, &unique("metrics-none"), &[]);
    c.subscribe([topic]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("all consumed", Duration::from_secs(30), || {
        seen.distinct() == 50
    })
    .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop(&c, run).await.unwrap();
    assert_eq!((c.client_instance_id(), c.metrics_pushes()), (None, 0));
}

/// Compiles the receiver the broker's kafka-clients jar supports (Kafka 4.x's exporter API, else
/// the older `ClientTelemetry` of 3.7+) into a fresh directory, which also holds the pushes
/// file. Returns the directory and the receiver's class name, for `metric.reporters`.
fn compile_receiver() -> (PathBuf, &'static str) {
    let jar = kafka_clients_jar();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/telemetry-receiver");
    let class = if has_class(
        &jar,
        "org.apache.kafka.server.telemetry.ClientTelemetryExporterProvider",
    ) {
        "TelemetryReceiver"
    } else {
        "LegacyTelemetryReceiver"
    };
    let classes = std::env::temp_dir().join(unique("mooring-telemetry-receiver"));
    std::fs::create_dir_all(&classes).unwrap();
    let compiled = Command::new("javac")
        .arg("-nowarn")
        .arg("-cp")
        .arg(&jar)
        .arg("-d")
        .arg(&classes)
        .arg(dir.join("TelemetryLog.java"))
        .arg(dir.join(format!("{class}.java")))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("could not run javac ({e}): {JDK}"));
    assert!(
        compiled.status.success(),
        "javac {class} failed:\n{}",
        String::from_utf8_lossy(&compiled.stderr)
    );
    (classes, class)
}

const JDK: &str = "this test needs a JDK 17+; install it with \
                   `apt-get install -y openjdk-17-jdk-headless` (scripts/setup does)";

/// Whether `jar` holds `class` (javap finds it).
fn has_class(jar: &Path, class: &str) -> bool {
    Command::new("javap")
        .arg("-cp")
        .arg(jar)
        .arg(class)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("could not run javap ({e}): {JDK}"))
        .success()
}

/// The broker's release: `KAFKA_VERSION`, as `scripts/kafka` reads it, else its default.
fn kafka_version() -> String {
    std::env::var("KAFKA_VERSION").unwrap_or_else(|_| "4.4.0".into())
}

/// The broker's kafka-clients jar, as `scripts/kafka fetch` keeps it.
fn kafka_clients_jar() -> PathBuf {
    let version = kafka_version();
    let cache = std::env::var_os("MOORING_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mooring")))
        .expect("MOORING_CACHE or HOME is set");
    let jar = cache
        .join(format!("kafka-{version}/libs"))
        .join(format!("kafka-clients-{version}.jar"));
    assert!(
        jar.is_file(),
        "kafka-clients {version} is not at {}: fetch the jars with `scripts/kafka fetch` \
         (scripts/setup and scripts/test do)",
        jar.display()
    );
    jar
}
