//! Helpers of the consumer's real-broker tests: configs with short session timeouts, a handler
//! that records every (partition, offset) it sees, and polling with deadlines.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses part of it; a failed unwrap fails the test

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{
    Consumer, ConsumerConfig, ConsumerError, ConsumerRebalanceListener, TopicPartition,
};
use mooring_testkit::Cluster;
use tokio::task::JoinHandle;

/// Properties every test consumer uses: 6 s session, 1 s heartbeat, fast commits and fetches.
pub fn props(cluster: &Cluster, group: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = [
        ("bootstrap.servers", cluster.bootstrap()),
        ("group.id", group),
        ("session.timeout.ms", "6000"),
        ("heartbeat.interval.ms", "1000"),
        ("max.poll.interval.ms", "20000"),
        ("retry.backoff.ms", "100"),
        ("auto.offset.reset", "earliest"),
        ("auto.commit.interval.ms", "300"),
        ("fetch.max.wait.ms", "200"),
        ("mooring.shutdown.timeout.ms", "5000"),
        ("mooring.revoke.timeout.ms", "5000"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        all.retain(|(key, _)| key != k);
        all.push((k.to_string(), v.to_string()));
    }
    all
}

pub fn consumer(cluster: &Cluster, group: &str, extra: &[(&str, &str)]) -> Consumer {
    Consumer::new(ConsumerConfig::from_properties(props(cluster, group, extra)).unwrap()).unwrap()
}

/// The keys the consumer protocol refuses (the broker assigns and times the session).
const CLASSIC_ONLY: [&str; 3] = [
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "partition.assignment.strategy",
];

/// [`props`] for a member speaking `protocol` (`classic` or `consumer`): under `consumer`
/// without the keys it refuses, `group.protocol=consumer` instead, and the same 6 s session and
/// 1 s heartbeats set on the group (`consumer.session.timeout.ms`,
/// `consumer.heartbeat.interval.ms`), or as `extra` says (`session.timeout.ms`).
pub fn props_for(
    cluster: &Cluster,
    group: &str,
    protocol: &str,
    extra: &[(&str, &str)],
) -> Vec<(String, String)> {
    let mut all = props(cluster, group, extra);
    if protocol == "consumer" {
        let value = |key: &str| {
            all.iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        let session = value("session.timeout.ms");
        // The broker refuses a group interval below group.consumer.min.heartbeat.interval.ms,
        // which scripts/kafka lowers to 500 ms.
        let heartbeat = value("heartbeat.interval.ms")
            .parse::<u64>()
            .map_or_else(|_| "1000".to_owned(), |ms| ms.max(500).to_string());
        cluster.set_group_config(
            group,
            &[
                ("consumer.session.timeout.ms", &session),
                ("consumer.heartbeat.interval.ms", &heartbeat),
            ],
        );
        all.retain(|(k, _)| !CLASSIC_ONLY.contains(&k.as_str()));
        all.push(("group.protocol".into(), "consumer".into()));
    }
    all
}

/// A consumer speaking `protocol` ([`props_for`]).
pub fn consumer_for(
    cluster: &Cluster,
    group: &str,
    protocol: &str,
    extra: &[(&str, &str)],
) -> Consumer {
    let props = props_for(cluster, group, protocol, extra);
    Consumer::new(ConsumerConfig::from_properties(props).unwrap()).unwrap()
}

/// Fails the test unless the broker runs `protocol`
/// ([`Cluster::require_consumer_protocol`] for `consumer`): the runner leaves the
/// consumer-protocol tests out where the broker lacks it; they never pass without running.
pub fn require_protocol(cluster: &Cluster, protocol: &str) {
    if protocol == "consumer" {
        cluster.require_consumer_protocol();
    }
}

/// (topic, partition, offset) → (deliveries, value).
type SeenMap = BTreeMap<(String, i32, i64), (u32, String)>;

/// Boxed handler future.
type HandlerFuture = std::pin::Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

/// Every record seen: (partition, offset) → how many times, plus the value.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    inner: Arc<Mutex<SeenMap>>,
    /// When each delivery happened, with its partition.
    log: Arc<Mutex<Vec<(tokio::time::Instant, i32)>>>,
}

impl Seen {
    pub fn record(&self, record: &ConsumerRecord) {
        let value = record
            .value()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .unwrap_or_default();
        let mut map = self.inner.lock().unwrap();
        let entry = map
            .entry((
                record.topic().to_owned(),
                record.partition(),
                record.offset(),
            ))
            .or_insert((0, value));
        entry.0 += 1;
        drop(map);
        self.log
            .lock()
            .unwrap()
            .push((tokio::time::Instant::now(), record.partition()));
    }

    /// Deliveries of `partitions` between `from` and `to`.
    pub fn handled_between(
        &self,
        partitions: &[i32],
        from: tokio::time::Instant,
        to: tokio::time::Instant,
    ) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|(at, p)| *at >= from && *at <= to && partitions.contains(p))
            .count()
    }

    /// Distinct records seen.
    pub fn distinct(&self) -> usize {
        self.inner.lock().unwrap().len()
    }

    /// Deliveries beyond the first, summed.
    pub fn duplicates(&self) -> u64 {
        self.inner
            .lock()
            .unwrap()
            .values()
            .map(|(n, _)| u64::from(n.saturating_sub(1)))
            .sum()
    }

    pub fn partitions_seen(&self) -> Vec<i32> {
        let mut p: Vec<i32> = self
            .inner
            .lock()
            .unwrap()
            .keys()
            .map(|(_, p, _)| *p)
            .collect();
        p.sort_unstable();
        p.dedup();
        p
    }

    pub fn count_in(&self, partition: i32) -> usize {
        self.inner
            .lock()
            .unwrap()
            .keys()
            .filter(|(_, p, _)| *p == partition)
            .count()
    }

    pub fn offsets(&self) -> Vec<(String, i32, i64)> {
        self.inner.lock().unwrap().keys().cloned().collect()
    }

    pub fn values(&self) -> Vec<String> {
        self.inner
            .lock()
            .unwrap()
            .values()
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// A handler that records each record, optionally after `delay`.
    pub fn handler(
        &self,
        delay: Duration,
    ) -> impl Fn(ConsumerRecord) -> HandlerFuture + Send + Sync + 'static {
        let seen = self.clone();
        move |record: ConsumerRecord| {
            let seen = seen.clone();
            Box::pin(async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                seen.record(&record);
                Ok(())
            })
        }
    }
}

/// Runs `consumer` with a recording handler in its own task.
pub fn spawn_run(
    consumer: &Consumer,
    seen: &Seen,
    delay: Duration,
) -> JoinHandle<Result<(), ConsumerError>> {
    let consumer = consumer.clone();
    let handler = seen.handler(delay);
    tokio::spawn(async move { consumer.run(handler).await })
}

/// Polls `condition` every 50 ms until it holds; panics with `what` after `timeout`.
pub async fn wait_until(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + timeout;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls `condition` every 50 ms until it holds (`true`) or `timeout` passes (`false`).
pub async fn poll_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    while !condition() {
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    true
}

/// Shuts the consumer down and returns `run`'s result.
pub async fn stop(
    consumer: &Consumer,
    run: JoinHandle<Result<(), ConsumerError>>,
) -> Result<(), ConsumerError> {
    consumer.shutdown_handle().shutdown();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("run returns after shutdown")
        .expect("run task")
}

/// What a rebalance listener was told, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Assigned(Vec<TopicPartition>),
    Revoked(Vec<TopicPartition>),
    Lost(Vec<TopicPartition>),
}

/// A listener that records its calls with their time.
#[derive(Debug, Clone, Default)]
pub struct Calls {
    pub calls: Arc<Mutex<Vec<(tokio::time::Instant, Call)>>>,
}

impl Calls {
    pub fn all(&self) -> Vec<Call> {
        self.calls
            .lock()
            .unwrap()
            .iter()
            .map(|(_, c)| c.clone())
            .collect()
    }

    pub fn timed(&self) -> Vec<(tokio::time::Instant, Call)> {
        self.calls.lock().unwrap().clone()
    }

    fn push(&self, call: Call) {
        self.calls
            .lock()
            .unwrap()
            .push((tokio::time::Instant::now(), call));
    }
}

impl ConsumerRebalanceListener for Calls {
    async fn assigned(&self, partitions: Vec<TopicPartition>) {
        self.push(Call::Assigned(partitions));
    }
    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        self.push(Call::Revoked(partitions));
    }
    async fn lost(&self, partitions: Vec<TopicPartition>) {
        self.push(Call::Lost(partitions));
    }
}

/// Every (partition, offset) the producer saw acknowledged.
pub type Acked = BTreeMap<i32, std::collections::BTreeSet<i64>>;

/// Produces `count` records with Kafka's VerifiableProducer (acks=all, values 0..count, keys
/// cycling through `0..keys`) and returns the offsets it saw acknowledged, per partition: what a
/// loss count is measured against.
pub fn produce_acked(cluster: &Cluster, topic: &str, count: u64, keys: u32) -> Acked {
    let (count, keys) = (count.to_string(), keys.to_string());
    let out = cluster.tool_ok(
        "VerifiableProducer",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--topic",
            topic,
            "--max-messages",
            &count,
            "--acks",
            "-1",
            "--repeating-keys",
            &keys,
        ],
    );
    let mut acked = Acked::new();
    for line in out.lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if event["name"] == "producer_send_success" {
            let partition = event["partition"].as_i64().unwrap() as i32;
            let offset = event["offset"].as_i64().unwrap();
            acked.entry(partition).or_default().insert(offset);
        }
    }
    acked
}

/// The acknowledged records missing from `handled`, per partition (only partitions with losses).
pub fn lost(acked: &Acked, handled: &[(i32, i64)]) -> BTreeMap<i32, usize> {
    let handled: std::collections::BTreeSet<(i32, i64)> = handled.iter().copied().collect();
    acked
        .iter()
        .map(|(&p, offsets)| {
            let missing = offsets
                .iter()
                .filter(|&&o| !handled.contains(&(p, o)))
                .count();
            (p, missing)
        })
        .filter(|(_, missing)| *missing > 0)
        .collect()
}

/// Runs the Python `script` with the confluent-kafka peer (librdkafka; `scripts/setup` makes its
/// virtualenv) as `script BOOTSTRAP TOPIC SPEC`, `spec` a JSON value saying what to produce;
/// fails the test if it does.
pub fn produce_with_python(cluster: &Cluster, script: &str, topic: &str, spec: &serde_json::Value) {
    let out = std::process::Command::new(mooring_testkit::peer_python())
        .args(["-c", script, cluster.bootstrap(), topic, &spec.to_string()])
        .output()
        .expect("run the confluent-kafka producer (scripts/setup makes its virtualenv)");
    assert!(
        out.status.success(),
        "producer failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
