//! Share groups (KIP-932) in the sidecar's real-broker tests: a share group of the test's own,
//! records whose values say what the handler does with them, and a Mooring share consumer whose
//! exporter (started from its `mooring.telemetry.*` keys) POSTs to a sidecar.

use std::net::SocketAddr;

use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::share::{RejectRecord, ShareConsumer, ShareConsumerConfig};
use mooring_consumer::telemetry::{ExporterHandle, ShareTelemetryExporter};
use mooring_consumer::ConsumerError;
use mooring_testkit::{unique, Cluster};
use tokio::task::JoinHandle;

/// A share group of this test's own: from the earliest offset, short heartbeats and session, a
/// 15 s lock, and `delivery_limit` deliveries before the broker archives a record.
pub fn share_group(cluster: &Cluster, delivery_limit: u32) -> String {
    let group = unique("share-sidecar-g");
    cluster.set_group_config(
        &group,
        &[
            ("share.auto.offset.reset", "earliest"),
            ("share.heartbeat.interval.ms", "500"),
            ("share.session.timeout.ms", "6000"),
            ("share.record.lock.duration.ms", "15000"),
            ("share.delivery.count.limit", &delivery_limit.to_string()),
        ],
    );
    group
}

/// What the handler does with a record, by the record's value.
pub const ACCEPT: &[u8] = b"accept";
/// Released the first time (a plain handler error), accepted when delivered again.
pub const RELEASE_ONCE: &[u8] = b"release-once";
/// Rejected: poison (`RejectRecord`).
pub const REJECT: &[u8] = b"reject";
/// Released every time (a plain handler error): archived at the delivery limit.
pub const ALWAYS_FAIL: &[u8] = b"always-fail";

/// The handler of [`ACCEPT`], [`RELEASE_ONCE`], [`REJECT`] and [`ALWAYS_FAIL`] records.
pub async fn by_value(
    record: ConsumerRecord,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let first = record.delivery_count().unwrap_or(1) <= 1;
    match record.value().map(|v| &v[..]).unwrap_or_default() {
        v if v == REJECT => Err(RejectRecord::new("poison").into()),
        v if v == ALWAYS_FAIL => Err("always fails".into()),
        v if v == RELEASE_ONCE && first => Err("fails the first time".into()),
        _ => Ok(()),
    }
}

/// A share consumer of `group` subscribed to `topic`, its telemetry going to the sidecar at
/// `sidecar` (snapshots every 200 ms), and its exporter, started from its config.
pub fn share_consumer(
    cluster: &Cluster,
    group: &str,
    topic: &str,
    sidecar: SocketAddr,
) -> (ShareConsumer, ExporterHandle) {
    let endpoint = format!("http://{sidecar}/v1/events");
    let props = [
        ("bootstrap.servers", cluster.bootstrap()),
        ("group.id", group),
        ("client.id", "share-sidecar-test"),
        ("retry.backoff.ms", "100"),
        ("fetch.max.wait.ms", "200"),
        ("mooring.concurrency", "4"),
        ("mooring.shutdown.timeout.ms", "10000"),
        ("mooring.telemetry.enabled", "true"),
        ("mooring.telemetry.endpoint", &endpoint),
        ("mooring.telemetry.flush.interval.ms", "20"),
        ("mooring.telemetry.snapshot.interval.ms", "200"),
    ];
    let consumer =
        ShareConsumer::new(ShareConsumerConfig::from_properties(props).unwrap()).unwrap();
    consumer.subscribe([topic.to_string()]).unwrap();
    let exporter = ShareTelemetryExporter::from_config(&consumer)
        .unwrap()
        .expect("mooring.telemetry.enabled starts the exporter");
    (consumer, exporter)
}

/// Runs `consumer` with [`by_value`] in a task.
pub fn run(consumer: &ShareConsumer) -> JoinHandle<Result<(), ConsumerError>> {
    let consumer = consumer.clone();
    tokio::spawn(async move { consumer.run(by_value).await })
}

/// Shuts `consumer` down and expects a clean end.
pub async fn stop(consumer: &ShareConsumer, task: JoinHandle<Result<(), ConsumerError>>) {
    consumer.shutdown_handle().shutdown();
    tokio::time::timeout(std::time::Duration::from_secs(30), task)
        .await
        .expect("run returns after shutdown")
        .expect("run task")
        .expect("clean run");
}
