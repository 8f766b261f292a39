//! The rolling update of a StatefulSet, simulated faithfully with real processes on the real
//! broker.
//!
//! Three members of one group (`orders-demo`, the example service of `deploy/`), each with its own
//! `mooring-sidecar` process as a pod has its sidecar (own port, the member's telemetry exporter
//! pointed at it), consume a 6-partition topic while Kafka's VerifiableProducer sends a steady
//! stream. The members are restarted one at a time in StatefulSet order, highest ordinal first
//! (`member-2`, `member-1`, `member-0`): the pod is terminated as the kubelet does (SIGTERM to the
//! consumer, which drains, commits and closes, and after its exit SIGTERM to the native sidecar,
//! each within a grace period), then started again under the same name, and the next pod is
//! touched only once the new sidecar's `/readyz` answers 200, as the StatefulSet controller waits
//! for Ready.
//!
//! With static membership (`group.instance.id` = the pod name) it asserts: no rebalance (every
//! member's generation, from its sidecar, is the one the group had before the update, and no
//! sidecar's `mooring_rebalances_total` moves while another member restarts; a restarted
//! member's new sidecar shows no rebalance either: the static rejoin is not one), no record lost,
//! none processed twice, every record checked against what the broker acknowledged. It prints each
//! partition's longest pause in processing during the update.
//!
//! The same update with dynamic members (no instance id) shows the difference: each restart is a
//! LeaveGroup and a join, two rebalances or more; it asserts no loss and that rebalances happened,
//! and reports the duplicates (allowed there) and the rebalance count.
//!
//! `cargo nextest run -p mooring-e2e --test rolling_update --no-capture` prints the tables.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use mooring_testkit::{kafka_script, unique, Cluster};

const MEMBERS: usize = 3;
const PARTITIONS: u32 = 6;
/// Records per second the producer sends during the whole update.
const RATE: u32 = 300;
/// `session.timeout.ms`. The timing rule (deploy/README.md): it must exceed the worst restart of
/// a pod (termination + scheduling + start + join). Here a restart is a process exit and start
/// on the same machine: SIGTERM to exit about 0.03 s and start to Ready about 0.35 s measured
/// (the table the test prints), up to a few seconds when the shared 2-core machine is loaded by
/// builds. 20 s keeps a wide margin over that, so a slow start never expires a session (which
/// would be a rebalance, failing the test for the wrong reason), and costs nothing here: a static
/// member that is gone for good would only be noticed that much later.
const SESSION_TIMEOUT_MS: u64 = 20_000;
/// The kubelet's grace between SIGTERM and SIGKILL (`terminationGracePeriodSeconds`).
const GRACE: Duration = Duration::from_secs(30);
/// The controller's patience for a new pod to become Ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a pod waits, Ready, before the next is touched (the StatefulSet's
/// `minReadySeconds`); it is also the time a rebalance, if one happened, has to show in the
/// sidecars' counters, which the static rollout asserts stayed still.
const MIN_READY: Duration = Duration::from_secs(2);

/// The target directory's profile folder (`target/debug`) holding the binaries: the one this
/// test runs from.
fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    // target/debug/deps/rolling_update-HASH
    exe.parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<profile>/deps")
        .to_path_buf()
}

/// `orders-demo` and `mooring-sidecar` of this very tree: cargo builds them into the target
/// directory the test runs from (a no-op when `nextest --workspace` already did; without it a
/// lone `-p mooring-e2e` run would use stale binaries, or none).
fn binaries() -> &'static (PathBuf, PathBuf) {
    static BINS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINS.get_or_init(|| {
        let dir = bin_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut build = Command::new(cargo);
        build.current_dir(&workspace).args([
            "build",
            "--locked",
            "-p",
            "mooring-consumer",
            "--bin",
            "orders-demo",
            "-p",
            "mooring-sidecar",
            "--bin",
            "mooring-sidecar",
        ]);
        if dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build
            .env("CARGO_TARGET_DIR", dir.parent().expect("target dir"))
            .status()
            .expect("could not run cargo to build orders-demo and mooring-sidecar");
        let (member, sidecar) = (dir.join("orders-demo"), dir.join("mooring-sidecar"));
        assert!(
            status.success() && member.exists() && sidecar.exists(),
            "building orders-demo and mooring-sidecar into {} failed ({status}): build them with \
             `cargo build -p mooring-consumer --bin orders-demo -p mooring-sidecar --bin \
             mooring-sidecar`",
            dir.display()
        );
        (member, sidecar)
    })
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A free port below 32768 (outside Linux's range for outgoing connections, so no client socket
/// takes it between the check and the sidecar's bind), from a range of its own per scenario (the
/// two tests run side by side under nextest) that avoids the dedicated clusters' port bases
/// (23000, 28000, 29000) and the demo's sidecars (24464...). The listener returned holds the
/// port until the pod's first start.
fn reserve_port(range: std::ops::Range<u16>) -> TcpListener {
    let width = range.end - range.start;
    let offset = (std::process::id() % u32::from(width)) as u16;
    (0..width)
        .map(|i| range.start + (offset + i) % width)
        .find_map(|p| TcpListener::bind(("127.0.0.1", p)).ok())
        .expect("a free port in the test's range")
}

/// A plain HTTP/1.0 GET on 127.0.0.1: (status, body), or `None` if nothing answers.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Some((status, body))
}

fn json(port: u16, path: &str) -> Option<(u16, serde_json::Value)> {
    let (status, body) = http_get(port, path)?;
    Some((status, serde_json::from_str(&body).ok()?))
}

/// The sum of `mooring_rebalances_total` over its causes.
fn rebalances_total(port: u16) -> Option<u64> {
    let (status, text) = http_get(port, "/metrics")?;
    (status == 200).then(|| {
        text.lines()
            .filter(|l| l.starts_with("mooring_rebalances_total{"))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    })
}

fn wait_until<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// SIGTERM, then up to `grace` for the exit, then SIGKILL (as the kubelet). Returns the status
/// and whether the grace sufficed.
fn terminate(child: &mut Child, grace: Duration) -> (ExitStatus, bool) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + grace;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return (status, true);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return (child.wait().expect("wait after SIGKILL"), false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One rollout's setting.
struct Scenario {
    name: &'static str,
    static_members: bool,
}

/// One pod: the consumer and its sidecar, and where their output goes.
struct Pod {
    ordinal: usize,
    port: u16,
    member: Option<Child>,
    sidecar: Option<Child>,
    dir: PathBuf,
    /// Lives so far (each start is one).
    lives: u32,
}

impl Pod {
    fn name(&self) -> String {
        format!("member-{}", self.ordinal)
    }

    fn records(&self) -> PathBuf {
        self.dir.join(format!("records-{}.txt", self.ordinal))
    }

    fn log(&self, what: &str) -> PathBuf {
        self.dir
            .join(format!("{what}-{}-{}.txt", self.ordinal, self.lives))
    }

    /// Starts the sidecar, then the consumer (the native sidecar starts first in a pod).
    fn start(&mut self, run: &Run) {
        self.lives += 1;
        let (member_bin, sidecar_bin) = binaries();
        let config = self.dir.join(format!("sidecar-{}.toml", self.ordinal));
        std::fs::write(
            &config,
            format!(
                "listen = \"127.0.0.1:{}\"\n\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{}\"\n\
                 \"watch.interval.ms\" = 2000\n",
                self.port, run.bootstrap, run.group
            ),
        )
        .expect("sidecar config");
        let out = std::fs::File::create(self.log("sidecar")).expect("sidecar log");
        self.sidecar = Some(
            Command::new(sidecar_bin)
                .args(["--config", config.to_str().expect("utf-8 path")])
                .stdin(Stdio::null())
                .stdout(out.try_clone().expect("log"))
                .stderr(out)
                .spawn()
                .expect("start mooring-sidecar"),
        );
        let (name, port, log) = (self.name(), self.port, self.log("sidecar"));
        let sidecar = self.sidecar.as_mut().expect("just started");
        wait_until(
            &format!("{name}'s sidecar to listen on {port}"),
            Duration::from_secs(20),
            || {
                // A sidecar that could not bind exits at once: never talk to another's.
                let exited = sidecar.try_wait().ok().flatten();
                assert!(
                    exited.is_none(),
                    "the sidecar on port {port} exited ({exited:?}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
                http_get(port, "/healthz").map(|_| ())
            },
        );
        let out = std::fs::File::create(self.log("member")).expect("member log");
        let mut cmd = Command::new(member_bin);
        cmd.env("MOORING__BOOTSTRAP_SERVERS", &run.bootstrap)
            .env("MOORING__GROUP_ID", &run.group)
            .env("MOORING__DEMO_TOPIC", &run.topic)
            .env("MOORING__DEMO_OUTPUT", self.records())
            .env(
                "MOORING__SESSION_TIMEOUT_MS",
                SESSION_TIMEOUT_MS.to_string(),
            )
            .env("MOORING__HEARTBEAT_INTERVAL_MS", "1000")
            .env("MOORING__AUTO_COMMIT_INTERVAL_MS", "1000")
            .env("MOORING__MOORING_SHUTDOWN_TIMEOUT_MS", "10000")
            .env("MOORING__MOORING_TELEMETRY_ENABLED", "true")
            .env(
                "MOORING__MOORING_TELEMETRY_ENDPOINT",
                format!("http://127.0.0.1:{}/v1/events", self.port),
            )
            .env("MOORING__MOORING_TELEMETRY_SNAPSHOT_INTERVAL_MS", "1000")
            .env("RUST_LOG", "warn");
        if run.scenario.static_members {
            cmd.env("MOORING__GROUP_INSTANCE_ID", self.name());
        }
        self.member = Some(
            cmd.stdin(Stdio::null())
                .stdout(out.try_clone().expect("log"))
                .stderr(out)
                .spawn()
                .expect("start orders-demo"),
        );
    }

    /// Terminates the pod as the kubelet does with a native sidecar: SIGTERM to the consumer and
    /// its exit (within the grace period), then SIGTERM to the sidecar. Returns the consumer's
    /// time from SIGTERM to exit.
    fn stop(&mut self) -> Duration {
        let started = Instant::now();
        let mut member = self.member.take().expect("a running member");
        let (status, in_grace) = terminate(&mut member, GRACE);
        let took = started.elapsed();
        let log = std::fs::read_to_string(self.log("member")).unwrap_or_default();
        assert!(
            in_grace && status.success(),
            "{} did not stop cleanly on SIGTERM ({status}, within the grace: {in_grace}):\n{log}",
            self.name()
        );
        let mut sidecar = self.sidecar.take().expect("a running sidecar");
        let (status, in_grace) = terminate(&mut sidecar, GRACE);
        assert!(
            in_grace && status.success(),
            "{}'s sidecar did not stop cleanly on SIGTERM ({status})",
            self.name()
        );
        took
    }

    fn ready(&self) -> Option<serde_json::Value> {
        match json(self.port, "/readyz") {
            Some((200, body)) => Some(body),
            _ => None,
        }
    }

    /// The member's generation and member id as its sidecar knows them.
    fn generation(&self) -> i64 {
        let (_, body) = json(self.port, "/readyz").expect("the sidecar answers /readyz");
        body["generation"].as_i64().unwrap_or(-1)
    }

    fn rebalances(&self) -> u64 {
        rebalances_total(self.port).expect("the sidecar answers /metrics")
    }

    /// The member's own output, for a failure message.
    fn member_log(&self) -> String {
        std::fs::read_to_string(self.log("member")).unwrap_or_default()
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        for child in [self.member.as_mut(), self.sidecar.as_mut()]
            .into_iter()
            .flatten()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Kafka's VerifiableProducer at a steady rate, until stopped.
struct Producer {
    child: Child,
    out: PathBuf,
}

impl Producer {
    fn start(cluster: &Cluster, topic: &str, dir: &Path) -> Producer {
        let out = dir.join("producer.txt");
        let child = Command::new(kafka_script())
            .args(["--cluster", cluster.name(), "tool", "VerifiableProducer"])
            .args(["--bootstrap-server", cluster.bootstrap(), "--topic", topic])
            .args(["--throughput", &RATE.to_string(), "--max-messages", "-1"])
            // Keyed, so every partition gets its steady share (keyless records stick to one
            // partition for a whole batch) and a pause in processing shows as a gap.
            .args(["--acks", "-1", "--repeating-keys", "60"])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("producer output"))
            .stderr(std::fs::File::create(dir.join("producer.err")).expect("producer err"))
            .spawn()
            .expect("start VerifiableProducer");
        Producer { child, out }
    }

    /// (partition, offset) → value of every acknowledged record so far.
    fn acked(&self) -> BTreeMap<(i32, i64), String> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .filter(|l| l.contains("\"name\":\"producer_send_success\""))
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                Some((
                    (
                        i32::try_from(v["partition"].as_i64()?).ok()?,
                        v["offset"].as_i64()?,
                    ),
                    v["value"].as_str()?.to_owned(),
                ))
            })
            .collect()
    }

    /// SIGTERM; the tool flushes and prints what it had acknowledged.
    fn stop(mut self) -> BTreeMap<(i32, i64), String> {
        let (_, _) = terminate(&mut self.child, Duration::from_secs(20));
        self.acked()
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One processed record: `record TOPIC PARTITION OFFSET VALUE UNIX_MS`.
#[derive(Debug, Clone)]
struct Processed {
    partition: i32,
    offset: i64,
    value: String,
    at_ms: u64,
}

fn processed(pods: &[Pod]) -> Vec<Processed> {
    let mut all = Vec::new();
    for pod in pods {
        let Ok(file) = std::fs::File::open(pod.records()) else {
            continue;
        };
        for line in BufReader::new(file).lines().map_while(Result::ok) {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() != 6 || f[0] != "record" {
                continue; // a line cut by a crash would be one; a clean stop leaves none
            }
            if let (Ok(partition), Ok(offset), Ok(at_ms)) =
                (f[2].parse(), f[3].parse(), f[5].parse())
            {
                all.push(Processed {
                    partition,
                    offset,
                    value: f[4].to_owned(),
                    at_ms,
                });
            }
        }
    }
    all
}

struct Run {
    scenario: Scenario,
    bootstrap: String,
    group: String,
    topic: String,
}

/// What one rollout measured.
#[derive(Debug)]
struct Outcome {
    generation_before: i64,
    generations_after: Vec<i64>,
    /// Every sidecar's counter change while another member restarted, summed.
    rebalances_seen_by_others: u64,
    /// What each restarted member's new sidecar counted for its own (re)join.
    new_sidecar_rebalances: Vec<u64>,
    acked: usize,
    lost: usize,
    duplicates: usize,
    wrong_values: usize,
    /// Per partition: the longest gap between two records processed during the update.
    longest_pause: BTreeMap<i32, Duration>,
    /// Per restart: SIGTERM → consumer exit, and new start → new sidecar ready.
    restarts: Vec<(String, Duration, Duration)>,
    update: Duration,
}

/// Waits until every partition has a record processed at or after `since_ms` (ms since the
/// epoch): the group consumes everywhere.
fn await_processing_since(pods: &[Pod], since_ms: u64, what: &str) {
    wait_until(what, Duration::from_secs(60), || {
        let partitions: BTreeSet<i32> = processed(pods)
            .iter()
            .filter(|r| r.at_ms >= since_ms)
            .map(|r| r.partition)
            .collect();
        (partitions.len() == PARTITIONS as usize).then_some(())
    });
}

/// The generation, once every member is ready in the same one and all partitions are held.
fn balanced(pods: &[Pod]) -> Option<i64> {
    let states: Vec<serde_json::Value> = pods.iter().filter_map(Pod::ready).collect();
    let generations: BTreeSet<i64> = states
        .iter()
        .filter_map(|s| s["generation"].as_i64())
        .collect();
    let assigned: u64 = states
        .iter()
        .filter_map(|s| s["assigned_partitions"].as_u64())
        .sum();
    (states.len() == MEMBERS && generations.len() == 1 && assigned == u64::from(PARTITIONS))
        .then(|| generations.first().copied().unwrap_or(-1))
}

fn rollout(scenario: Scenario) -> Outcome {
    let cluster = Cluster::shared();
    let run = Run {
        bootstrap: cluster.bootstrap().to_owned(),
        group: unique(&format!("rolling-{}", scenario.name)),
        topic: unique(&format!("rolling-{}", scenario.name)),
        scenario,
    };
    cluster.create_topic(&run.topic, PARTITIONS);
    let dir = std::env::temp_dir().join(unique("rolling-update"));
    std::fs::create_dir_all(&dir).expect("run dir");
    let range = if run.scenario.static_members {
        25_000..26_500
    } else {
        26_500..27_900
    };
    let mut reserved: Vec<TcpListener> =
        (0..MEMBERS).map(|_| reserve_port(range.clone())).collect();
    let mut pods: Vec<Pod> = reserved
        .iter()
        .enumerate()
        .map(|(ordinal, listener)| Pod {
            ordinal,
            port: listener.local_addr().expect("reserved port").port(),
            member: None,
            sidecar: None,
            dir: dir.clone(),
            lives: 0,
        })
        .collect();
    // The StatefulSet's first rollout (OrderedReady): pod 0, 1, 2, each once the previous is
    // Ready. A member is ready once assigned; the last one joining leaves the group balanced.
    for pod in pods.iter_mut() {
        drop(reserved.remove(0)); // the pod's port, free for its sidecar
        pod.start(&run);
        wait_until(
            &format!("{} to become ready", pod.name()),
            READY_TIMEOUT,
            || pod.ready(),
        );
    }
    wait_until(
        "all three members ready in one generation, holding all partitions",
        READY_TIMEOUT,
        || balanced(&pods),
    );

    let producer = Producer::start(&cluster, &run.topic, &dir);
    wait_until(
        "every member to process records",
        Duration::from_secs(60),
        || {
            let seen: BTreeSet<i32> = processed(&pods).iter().map(|r| r.partition).collect();
            (seen.len() == PARTITIONS as usize).then_some(())
        },
    );
    // Steady consumption before the update: every partition processed again since then.
    await_processing_since(
        &pods,
        now_ms(),
        "every partition to go on being processed before the update",
    );
    let generation_before = wait_until("a settled group", Duration::from_secs(30), || {
        balanced(&pods)
    });

    // The update: highest ordinal first, each after the previous is Ready again.
    let update_started = Instant::now();
    let update_from_ms = now_ms();
    let mut rebalances_seen_by_others = 0;
    let mut new_sidecar_rebalances = Vec::new();
    let mut restarts = Vec::new();
    for i in (0..MEMBERS).rev() {
        let others: Vec<usize> = (0..MEMBERS).filter(|&j| j != i).collect();
        let before: Vec<u64> = others.iter().map(|&j| pods[j].rebalances()).collect();
        let stop_took = pods[i].stop();
        let started = Instant::now();
        pods[i].start(&run);
        // The controller waits for the new pod's Ready; a member that exits meanwhile fails.
        loop {
            if pods[i].ready().is_some() {
                break;
            }
            let exited = pods[i]
                .member
                .as_mut()
                .and_then(|m| m.try_wait().ok().flatten());
            assert!(
                exited.is_none() && started.elapsed() < READY_TIMEOUT,
                "{} not ready {:?} after its restart (exit: {exited:?}):\n{}",
                pods[i].name(),
                started.elapsed(),
                pods[i].member_log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let ready_took = started.elapsed();
        restarts.push((pods[i].name(), stop_took, ready_took));
        // The group settles (at once when static), then the next pod waits `MIN_READY`. That
        // wait checks an absence (no rebalance shows in the counters), so it is a fixed time,
        // not a condition.
        wait_until(
            "the group to settle after the restart",
            READY_TIMEOUT,
            || balanced(&pods),
        );
        std::thread::sleep(MIN_READY);
        let after: Vec<u64> = others.iter().map(|&j| pods[j].rebalances()).collect();
        for ((j, b), a) in others.iter().zip(&before).zip(&after) {
            if run.scenario.static_members {
                assert_eq!(
                    a,
                    b,
                    "{}'s sidecar counted a rebalance while {} restarted:\n{}",
                    pods[*j].name(),
                    pods[i].name(),
                    pods[*j].member_log()
                );
            }
            rebalances_seen_by_others += a - b;
        }
        new_sidecar_rebalances.push(pods[i].rebalances());
    }
    let update = update_started.elapsed();
    let update_to_ms = now_ms();
    // Steady consumption after the update: every partition processed again (which also bounds
    // each partition's longest pause below).
    await_processing_since(
        &pods,
        update_to_ms,
        "every partition to be processed again after the update",
    );
    let generations_after: Vec<i64> = pods.iter().map(Pod::generation).collect();

    // Every acknowledged record processed, then the pods stop.
    let acked = producer.stop();
    assert!(!acked.is_empty(), "the producer had nothing acknowledged");
    wait_until(
        "every acknowledged record to be processed",
        Duration::from_secs(60),
        || {
            let done: BTreeSet<(i32, i64)> = processed(&pods)
                .iter()
                .map(|r| (r.partition, r.offset))
                .collect();
            acked.keys().all(|k| done.contains(k)).then_some(())
        },
    );
    for pod in pods.iter_mut().rev() {
        pod.stop();
    }

    let records = processed(&pods);
    let mut count: BTreeMap<(i32, i64), u32> = BTreeMap::new();
    let mut wrong_values = 0;
    for r in &records {
        *count.entry((r.partition, r.offset)).or_default() += 1;
        if acked
            .get(&(r.partition, r.offset))
            .is_some_and(|v| *v != r.value)
        {
            wrong_values += 1;
        }
    }
    let lost = acked.keys().filter(|k| !count.contains_key(k)).count();
    let duplicates = count.values().map(|&n| (n - 1) as usize).sum();

    // The longest pause per partition: the largest gap between consecutive processing times of
    // its records, over the update (from the first SIGTERM to the last pod's Ready).
    let mut times: BTreeMap<i32, Vec<u64>> = BTreeMap::new();
    for r in &records {
        times.entry(r.partition).or_default().push(r.at_ms);
    }
    let longest_pause = times
        .into_iter()
        .map(|(p, mut t)| {
            t.sort_unstable();
            // The last record before the update and the first after it bound the window.
            let first = t.iter().rposition(|&x| x <= update_from_ms).unwrap_or(0);
            let last = t
                .iter()
                .position(|&x| x >= update_to_ms)
                .unwrap_or(t.len().saturating_sub(1));
            let gap = t[first..=last.max(first)]
                .windows(2)
                .map(|w| w[1] - w[0])
                .max()
                .unwrap_or(0);
            (p, Duration::from_millis(gap))
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    cluster.delete_topic(&run.topic);
    Outcome {
        generation_before,
        generations_after,
        rebalances_seen_by_others,
        new_sidecar_rebalances,
        acked: acked.len(),
        lost,
        duplicates,
        wrong_values,
        longest_pause,
        restarts,
        update,
    }
}

fn report(name: &str, o: &Outcome) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n== rolling update, {name} members ({MEMBERS} members, {PARTITIONS} partitions, {RATE} records/s, update took {:.1} s)", o.update.as_secs_f64());
    let _ = writeln!(out, "   restart    SIGTERM->exit   start->Ready");
    for (pod, stop, ready) in &o.restarts {
        let _ = writeln!(
            out,
            "   {pod:<10} {:>10.2} s   {:>10.2} s",
            stop.as_secs_f64(),
            ready.as_secs_f64()
        );
    }
    let _ = writeln!(
        out,
        "   generation {} -> {:?}; rebalances counted by the running members' sidecars: {}; \
         by each restarted member's new sidecar: {:?}",
        o.generation_before,
        o.generations_after,
        o.rebalances_seen_by_others,
        o.new_sidecar_rebalances
    );
    let _ = writeln!(
        out,
        "   acknowledged {}, lost {}, duplicates {}, wrong values {}",
        o.acked, o.lost, o.duplicates, o.wrong_values
    );
    let _ = writeln!(out, "   partition  longest pause");
    for (p, pause) in &o.longest_pause {
        let _ = writeln!(out, "   {p:>9}  {:>9} ms", pause.as_millis());
    }
}

#[test]
fn static_members_roll_without_a_rebalance_or_a_lost_record() {
    let o = rollout(Scenario {
        name: "static",
        static_members: true,
    });
    report("static", &o);
    assert_eq!(o.lost, 0, "records lost: {o:?}");
    assert_eq!(o.duplicates, 0, "records processed twice: {o:?}");
    assert_eq!(o.wrong_values, 0, "{o:?}");
    assert!(
        o.generations_after
            .iter()
            .all(|&g| g == o.generation_before),
        "the group's generation moved: {o:?}"
    );
    assert_eq!(
        o.rebalances_seen_by_others, 0,
        "the running members' sidecars counted rebalances: {o:?}"
    );
    assert!(
        o.new_sidecar_rebalances.iter().all(|&n| n == 0),
        "a restarted static member's sidecar counted its rejoin as a rebalance: {o:?}"
    );
    assert_eq!(o.longest_pause.len(), PARTITIONS as usize, "{o:?}");
}

#[test]
fn dynamic_members_rebalance_on_every_restart() {
    let o = rollout(Scenario {
        name: "dynamic",
        static_members: false,
    });
    report("dynamic", &o);
    assert_eq!(o.lost, 0, "records lost: {o:?}");
    assert_eq!(o.wrong_values, 0, "{o:?}");
    let delta: i64 = o
        .generations_after
        .iter()
        .map(|g| g - o.generation_before)
        .max()
        .unwrap_or(0);
    // Each restart is a LeaveGroup and a join: at least one new generation each (the join of
    // the new process usually lands in the rebalance the LeaveGroup started).
    assert!(
        delta >= MEMBERS as i64,
        "dynamic members rolled with only {delta} new generations: {o:?}"
    );
    assert!(o.rebalances_seen_by_others > 0, "{o:?}");
}
