//! Helpers of the sidecar's real-broker tests: a sidecar watching a group, our consumer with its
//! exporter, a background producer (Kafka's ProducerPerformance), a librdkafka peer process one
//! can SIGKILL, a `/readyz` sampler, reading `/metrics`, waiting, and a real Prometheus server
//! ([`prometheus`]).

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses part of it; a failed unwrap fails the test

pub mod prometheus;
pub mod share;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mooring_consumer::processing::Handler;
use mooring_consumer::telemetry::{ExporterConfig, ExporterHandle, TelemetryExporter};
use mooring_consumer::{Consumer, ConsumerConfig, ConsumerError};
use mooring_sidecar::Running;
use mooring_testkit::Cluster;
use tokio::task::JoinHandle;

use crate::common::{get, metric, sidecar};

/// A sidecar on port 0 whose broker watch looks at `group` every `watch_ms`, with `extra` TOML,
/// once it has started (`/startupz`: it has looked at the group), as a pod's consumer waits for.
pub async fn watching_sidecar(
    cluster: &Cluster,
    group: &str,
    watch_ms: u64,
    extra: &str,
) -> Running {
    let s = sidecar(&format!(
        "\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{group}\"\n\"watch.interval.ms\" = {watch_ms}\n{extra}",
        cluster.bootstrap()
    ))
    .await;
    let addr = s.addr;
    eventually(
        "the sidecar to start",
        Duration::from_secs(30),
        || async move { get(addr, "/startupz").await.0 == 200 },
    )
    .await;
    s
}

/// Our consumer's properties: short session and heartbeat, range assignor, `extra` on top.
pub fn props(cluster: &Cluster, group: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut props: Vec<(&str, &str)> = vec![
        ("bootstrap.servers", cluster.bootstrap()),
        ("group.id", group),
        ("session.timeout.ms", "6000"),
        ("heartbeat.interval.ms", "300"),
        ("auto.offset.reset", "earliest"),
        ("partition.assignment.strategy", "range"),
        ("fetch.max.wait.ms", "200"),
        ("mooring.shutdown.timeout.ms", "5000"),
    ];
    for (k, v) in extra {
        props.retain(|(key, _)| key != k);
        props.push((k, v));
    }
    props
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Our consumer ([`props`]) subscribed to `topic`.
pub fn consumer(cluster: &Cluster, group: &str, topic: &str, extra: &[(&str, &str)]) -> Consumer {
    let props = props(cluster, group, extra);
    let c = Consumer::new(ConsumerConfig::from_properties(props).unwrap()).unwrap();
    c.subscribe([topic.to_string()]).unwrap();
    c
}

/// Runs `c` with `handler` in a task.
pub fn run<H: Handler>(c: &Consumer, handler: H) -> JoinHandle<Result<(), ConsumerError>> {
    let c = c.clone();
    tokio::spawn(async move { c.run(handler).await })
}

/// Shuts `c` down and expects a clean end.
pub async fn stop(c: &Consumer, task: JoinHandle<Result<(), ConsumerError>>) {
    c.shutdown_handle().shutdown();
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("run returns after shutdown")
        .expect("run task")
        .expect("clean run");
}

/// An exporter to the sidecar at `addr`: flushes every 10 ms, snapshots every 100 ms.
pub fn exporter(c: &Consumer, addr: SocketAddr) -> ExporterHandle {
    exporter_with_capacity(c, addr, ExporterConfig::default().buffer_capacity)
}

/// [`exporter`] buffering at most `capacity` events while the sidecar is away.
pub fn exporter_with_capacity(c: &Consumer, addr: SocketAddr, capacity: usize) -> ExporterHandle {
    let mut config = exporter_config(addr);
    config.buffer_capacity = capacity;
    TelemetryExporter::spawn(c, config).unwrap()
}

/// The tests' exporter settings: flushes every 10 ms, snapshots every 100 ms, quick retries.
pub fn exporter_config(addr: SocketAddr) -> ExporterConfig {
    let mut config = ExporterConfig::new(format!("http://{addr}/v1/events"));
    config.flush_interval = Duration::from_millis(10);
    config.snapshot_interval = Duration::from_millis(100);
    config.backoff = Duration::from_millis(50);
    config.max_backoff = Duration::from_millis(200);
    config
}

/// Polls `check` every 50 ms until it holds; panics after `timeout`.
pub async fn eventually<F, Fut>(what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `/readyz` answers 200 now.
pub async fn ready(addr: SocketAddr) -> bool {
    get(addr, "/readyz").await.0 == 200
}

/// Waits until our first member is ready (30 s) and its join is counted: at once, or (a
/// rebalance another member caused) after the broker watch's look (5 s).
pub async fn first_join_counted(addr: SocketAddr) {
    eventually("the first member is ready", Duration::from_secs(30), || {
        ready(addr)
    })
    .await;
    eventually(
        "the first join is counted",
        Duration::from_secs(5),
        || async { rebalances(addr, "member_joined").await == 1.0 },
    )
    .await;
}

/// `mooring_rebalances_total{cause}` now.
pub async fn rebalances(addr: SocketAddr, cause: &str) -> f64 {
    let (_, text) = get(addr, "/metrics").await;
    metric(
        &text,
        &format!("mooring_rebalances_total{{cause=\"{cause}\"}}"),
    )
    .unwrap_or(-1.0)
}

/// The sum of `mooring_rebalances_total` over every cause.
pub fn total_rebalances(metrics: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("mooring_rebalances_total{"))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// Samples `GET /readyz` every 5 ms in the background.
pub struct ReadySampler {
    stop: Arc<AtomicBool>,
    task: JoinHandle<Vec<(Instant, u16)>>,
}

impl ReadySampler {
    pub fn start(addr: SocketAddr) -> ReadySampler {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let task = tokio::spawn(async move {
            let mut seen = Vec::new();
            loop {
                let stopping = flag.load(Ordering::Relaxed);
                // The last sample is taken after the stop was asked: it is "after".
                seen.push((Instant::now(), get(addr, "/readyz").await.0));
                if stopping {
                    return seen;
                }
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        ReadySampler { stop, task }
    }

    /// Stops; returns (samples that were 503, the last status, how long it was not ready in
    /// all).
    pub async fn finish(self) -> (usize, u16, Duration) {
        self.stop.store(true, Ordering::Relaxed);
        let seen = self.task.await.unwrap();
        let not_ready = seen.iter().filter(|(_, s)| *s == 503).count();
        let last = seen.last().map_or(0, |(_, s)| *s);
        let mut span = Duration::ZERO;
        for pair in seen.windows(2) {
            if pair[0].1 == 503 {
                span += pair[1].0 - pair[0].0;
            }
        }
        (not_ready, last, span)
    }
}

/// A child process killed (SIGKILL) on drop, whose stdout lines are kept.
pub struct Proc {
    pub child: Child,
    pub lines: Arc<Mutex<Vec<String>>>,
}

impl Proc {
    pub fn spawn(mut command: Command) -> Proc {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {command:?}: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = child.stdout.take().unwrap();
        let keep = Arc::clone(&lines);
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { return };
                keep.lock().unwrap().push(line);
            }
        });
        Proc { child, lines }
    }

    /// SIGKILL, and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    pub fn saw(&self, needle: &str) -> bool {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains(needle))
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kafka's ProducerPerformance sending `rate` records a second for `seconds` (100-byte
/// records, acks=1, round robin over the partitions so every partition gets records all along:
/// the default partitioner sticks to one partition for a batch.size worth of records) in the
/// background; killed on drop.
pub fn background_producer(cluster: &Cluster, topic: &str, rate: u32, seconds: u32) -> Proc {
    let mut command = Command::new(mooring_testkit::kafka_script());
    command
        .args(["--cluster", cluster.name(), "tool", "ProducerPerformance"])
        .args(["--topic", topic])
        .args(["--num-records", &(rate * seconds).to_string()])
        .args(["--record-size", "100", "--throughput", &rate.to_string()])
        .arg("--producer-props")
        .arg(format!("bootstrap.servers={}", cluster.bootstrap()))
        .args([
            "acks=1",
            "linger.ms=5",
            "partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner",
        ]);
    Proc::spawn(command)
}

/// The librdkafka peer of `tests/peers/committing_member.py`.
pub fn librdkafka_peer(cluster: &Cluster, group: &str, topic: &str, session_ms: u32) -> Proc {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers/committing_member.py");
    let python = mooring_testkit::peer_python();
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup (it makes the confluent-kafka virtualenv)",
        python.display()
    );
    let mut command = Command::new(python);
    command
        .arg(script)
        .args([cluster.bootstrap(), group, topic, "range"])
        .arg(session_ms.to_string());
    Proc::spawn(command)
}

/// Our consumer on its own single-threaded runtime (a thread of its own), whose handler can be
/// made to block that thread ([`OwnRuntime::block`]): the whole runtime stops (fetch loop,
/// heartbeats) while an exporter on the caller's runtime still sends snapshots.
pub struct OwnRuntime {
    pub consumer: Consumer,
    thread: std::thread::JoinHandle<Result<(), ConsumerError>>,
    gate: Arc<Mutex<()>>,
    block: Arc<AtomicBool>,
}

impl OwnRuntime {
    /// Starts a consumer with `props` on `topic` on a runtime of its own.
    pub fn start(props: Vec<(String, String)>, topic: &str) -> OwnRuntime {
        let gate = Arc::new(Mutex::new(()));
        let block = Arc::new(AtomicBool::new(false));
        let (tx, rx) = std::sync::mpsc::channel::<Consumer>();
        let topic = topic.to_string();
        let (handler_gate, handler_block) = (Arc::clone(&gate), Arc::clone(&block));
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let c = Consumer::new(ConsumerConfig::from_properties(props).unwrap()).unwrap();
                c.subscribe([topic]).unwrap();
                tx.send(c.clone()).unwrap();
                c.run(move |_r: mooring_consumer::processing::ConsumerRecord| {
                    if handler_block.swap(false, Ordering::SeqCst) {
                        // A blocking lock in async code: the runtime's only thread waits here.
                        let _held = handler_gate
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                    }
                    async { Ok::<(), String>(()) }
                })
                .await
            })
        });
        OwnRuntime {
            consumer: rx.recv().unwrap(),
            thread,
            gate,
            block,
        }
    }

    /// Blocks the consumer's runtime: holds the gate, has the handler wait on it at the next
    /// record, produces 3 records to `topic` on the shared cluster (in a thread, returned) and
    /// waits (20 s at most) until the handler is waiting. Dropping the returned guard lets the
    /// runtime run again.
    #[allow(clippy::await_holding_lock)] // the held gate is what the handler waits on
    pub async fn block(
        &self,
        topic: &str,
    ) -> (std::sync::MutexGuard<'_, ()>, std::thread::JoinHandle<()>) {
        let held = self.gate.lock().unwrap();
        self.block.store(true, Ordering::SeqCst);
        let producer = {
            let topic = topic.to_string();
            std::thread::spawn(move || Cluster::shared().produce_perf(&topic, 3, 10))
        };
        eventually(
            "the handler blocks the runtime",
            Duration::from_secs(20),
            || async { !self.block.load(Ordering::SeqCst) },
        )
        .await;
        (held, producer)
    }

    /// Shuts the consumer down and expects a clean end of its thread.
    pub async fn stop(self) {
        self.consumer.shutdown_handle().shutdown();
        let thread = self.thread;
        let result = tokio::task::spawn_blocking(move || thread.join().unwrap())
            .await
            .unwrap();
        result.expect("clean run");
    }
}
