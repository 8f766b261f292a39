//! mooring-testkit: test support that drives the **real** Kafka cluster `scripts/kafka` starts.
//!
//! Dev-only: no shipped crate may depend on it. It never mocks a broker. Everything it does to the
//! cluster goes through `scripts/kafka` and Kafka's own tools from the same jars as the broker
//! (TopicCommand, ProducerPerformance, VerifiableProducer, GetOffsetShell, ConsumerGroupCommand),
//! so what the tests observe is what Kafka itself reports.
//!
//! - [`Cluster::shared`]: the one-node cluster all tests share (started by `scripts/test`, or by
//!   hand with `scripts/kafka start`). Its address comes from `MOORING_BOOTSTRAP`; without it, the
//!   `main` cluster's state is asked. No broker → the test **fails** with a message saying how to
//!   start one; it never passes silently.
//! - [`Cluster::dedicated`]: a private cluster (1 or 3 nodes) for tests that kill brokers; it is
//!   stopped when dropped. [`Cluster::dedicated_with`] passes `scripts/kafka start` options
//!   (`--authorizer`: ACLs enforced, granted with [`Cluster::acl`]).
//! - [`unique`]: topic and group names unique per test and per run, so tests can share a broker.
//! - [`Cluster::spawn_verifiable_producer`]: a producer writing while the test runs, whose
//!   acknowledged offsets are what lost records are counted against.
//! - [`fault_proxy`]: a hostile network between a client and the real broker (latency, bandwidth
//!   caps, resets, half-open connections, corrupted bytes), rewriting advertised addresses so
//!   that every connection goes through it.
//! - [`encode::encode_failures`]: a request builder encoded at every version of its request.
//! - [`kfake`]: franz-go's fake broker in a process of its own, for injecting broker errors per
//!   request kind and count.

mod bench_smoke;
pub mod encode;
pub mod fault_proxy;
mod group;
pub mod kfake;
mod producer;

pub use bench_smoke::run_bench_smoke;
pub use fault_proxy::FaultProxy;
pub use group::{
    parse_describe_members, parse_describe_offsets, parse_group_types, parse_state, GroupMember,
    GroupState, PartitionOffset,
};
pub use producer::BackgroundProducer;

use std::collections::{BTreeMap, HashMap};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Path of `scripts/kafka` in this work tree.
pub fn kafka_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kafka")
}

/// The Python interpreter of the peers' virtualenv (`scripts/setup` makes it, with PyPI
/// `confluent-kafka`, i.e. librdkafka).
pub fn peer_python() -> PathBuf {
    let cache = std::env::var_os("MOORING_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mooring")))
        .unwrap_or_else(|| PathBuf::from(".cache/mooring"));
    cache.join("venv/bin/python")
}

/// A name unique to this test run: `prefix-<pid>-<millis>-<counter>`.
pub fn unique(prefix: &str) -> String {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() % 100_000_000)
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{millis}-{n}", std::process::id())
}

/// Milliseconds since the Unix epoch (the clock Kafka's tools stamp their events with).
pub fn unix_millis() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Where a scenario keeps its members' event lines, when `MOORING_SCENARIO_EVENTS=DIR` asks for
/// them: `DIR/NAME.log`, opened to append (the timeline behind a failed verdict).
pub fn scenario_events_file(name: &str) -> Option<std::fs::File> {
    let dir = std::env::var_os("MOORING_SCENARIO_EVENTS")?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(PathBuf::from(dir).join(format!("{name}.log")))
        .ok()
}

/// Polls `condition` every 50 ms on this thread until it holds; panics with `what` after
/// `timeout`. For tests that drive processes, without a runtime.
pub fn wait_blocking(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fresh temporary directory named after `prefix` holding `producer.properties` with `props`:
/// the directory (for the caller to remove) and the file.
fn properties_file(prefix: &str, props: &[(&str, &str)]) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(unique(prefix));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = dir.join("producer.properties");
    let text: String = props.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
    std::fs::write(&config, text).expect("write producer config");
    (dir, config)
}

/// A running Kafka cluster started by `scripts/kafka`.
#[derive(Debug)]
pub struct Cluster {
    name: String,
    env: HashMap<String, String>,
    owned: bool,
}

const HOW_TO_START: &str = "start one with `scripts/kafka start` (or run the whole suite with \
                            `scripts/test`), then run the tests again";

impl Cluster {
    /// The cluster shared by all tests. Panics (failing the test) if no broker answers.
    pub fn shared() -> Cluster {
        let cluster = match std::env::var("MOORING_BOOTSTRAP") {
            Ok(bootstrap) if !bootstrap.is_empty() => {
                let mut env: HashMap<String, String> = std::env::vars()
                    .filter(|(k, _)| k.starts_with("MOORING_"))
                    .collect();
                env.insert("MOORING_BOOTSTRAP".into(), bootstrap);
                let name = env
                    .get("MOORING_KAFKA_CLUSTER")
                    .cloned()
                    .unwrap_or_else(|| "main".into());
                Cluster {
                    name,
                    env,
                    owned: false,
                }
            }
            _ => match script_env("main") {
                Ok(env) => Cluster {
                    name: "main".into(),
                    env,
                    owned: false,
                },
                Err(why) => {
                    panic!("no Kafka broker for the integration tests ({why}): {HOW_TO_START}")
                }
            },
        };
        if let Err(why) = cluster.wait_reachable(Duration::from_secs(5)) {
            panic!(
                "no Kafka broker answers at {} ({why}): {HOW_TO_START}",
                cluster.bootstrap()
            );
        }
        cluster
    }

    /// Starts a private cluster of `nodes` (1 or 3) nodes named `name` on its own ports; it is
    /// stopped (every process, by PID) when the returned value is dropped. Keep `port_base` below
    /// 32368, so no port falls in Linux's range for outgoing connections (32768-60999), where a
    /// client socket may already hold it.
    pub fn dedicated(name: &str, nodes: u8, port_base: u16) -> Cluster {
        Cluster::dedicated_with(name, nodes, port_base, &[])
    }

    /// As [`Cluster::dedicated`], with more `scripts/kafka start` options (`--authorizer`: ACLs
    /// enforced, set them with [`Cluster::acl`]).
    pub fn dedicated_with(name: &str, nodes: u8, port_base: u16, options: &[&str]) -> Cluster {
        let _ = run_script(name, &["stop"]);
        let (nodes, port_base) = (nodes.to_string(), port_base.to_string());
        let mut args = vec!["start", "--nodes", &nodes, "--port-base", &port_base];
        args.extend_from_slice(options);
        let out = run_script(name, &args)
            .unwrap_or_else(|e| panic!("could not run scripts/kafka start for {name}: {e}"));
        if !out.status.success() {
            // Nodes that did start must not outlive the failed attempt.
            let _ = run_script(name, &["stop"]);
            panic!(
                "scripts/kafka --cluster {name} start failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let env = parse_env(&String::from_utf8_lossy(&out.stdout));
        Cluster {
            name: name.into(),
            env,
            owned: true,
        }
    }

    /// The cluster's name in `scripts/kafka --cluster NAME`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// One of the variables `scripts/kafka env` prints (`MOORING_BOOTSTRAP_SASL`, `MOORING_SSL_CA`, ...).
    pub fn var(&self, key: &str) -> &str {
        self.env
            .get(key)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("scripts/kafka env printed no {key}"))
    }

    /// Whether the brokers run share groups (KIP-932): `MOORING_KAFKA_SHARE_GROUPS` of
    /// `scripts/kafka env` (off for 3.x releases and for a cluster started `--no-share-groups`).
    pub fn has_share_groups(&self) -> bool {
        self.env
            .get("MOORING_KAFKA_SHARE_GROUPS")
            .map(String::as_str)
            != Some("off")
    }

    /// PLAINTEXT bootstrap servers, comma-separated.
    pub fn bootstrap(&self) -> &str {
        self.var("MOORING_BOOTSTRAP")
    }

    /// PLAINTEXT address of one node (1-based).
    pub fn node_address(&self, node: usize) -> &str {
        self.bootstrap()
            .split(',')
            .nth(node - 1)
            .unwrap_or_else(|| panic!("cluster {} has no node {node}", self.name))
    }

    fn wait_reachable(&self, timeout: Duration) -> Result<(), String> {
        let deadline = Instant::now() + timeout;
        loop {
            let reached = self.bootstrap().split(',').any(|addr| {
                addr.to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .is_some_and(|sa| {
                        TcpStream::connect_timeout(&sa, Duration::from_millis(500)).is_ok()
                    })
            });
            if reached {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("connection refused".into());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Runs a Kafka tool main class (short names as in `scripts/kafka tool`) and returns its output.
    pub fn tool(&self, class: &str, args: &[&str]) -> Output {
        let mut full = vec!["tool", class];
        full.extend_from_slice(args);
        run_script(&self.name, &full)
            .unwrap_or_else(|e| panic!("could not run Kafka tool {class}: {e}"))
    }

    /// Runs a tool and panics, with its stderr, unless it succeeded. Returns stdout.
    pub fn tool_ok(&self, class: &str, args: &[&str]) -> String {
        let out = self.tool(class, args);
        assert!(
            out.status.success(),
            "{class} {args:?} failed ({}):\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Kafka's AclCommand on the PLAINTEXT listener (a super user's on a cluster started with
    /// `--authorizer`), e.g. `["--add", "--allow-principal", "User:alice", "--operation",
    /// "Read", "--group", group]`; panics unless it succeeded.
    pub fn acl(&self, args: &[&str]) {
        let mut all = vec!["--bootstrap-server", self.bootstrap()];
        all.extend_from_slice(args);
        self.tool_ok("AclCommand", &all);
    }

    /// Allows the SASL user (`MOORING_SASL_USER`) `operation` on a resource, e.g.
    /// `allow_user("Read", "--group", group)`, with [`Cluster::acl`].
    pub fn allow_user(&self, operation: &str, resource: &str, name: &str) {
        let principal = format!("User:{}", self.var("MOORING_SASL_USER"));
        self.acl(&[
            "--add",
            "--allow-principal",
            &principal,
            "--operation",
            operation,
            resource,
            name,
        ]);
    }

    /// Creates a topic with `partitions` partitions (replication factor: the cluster's node count).
    pub fn create_topic(&self, topic: &str, partitions: u32) {
        let rf = self
            .env
            .get("MOORING_KAFKA_NODES")
            .cloned()
            .unwrap_or_else(|| "1".into());
        self.tool_ok(
            "TopicCommand",
            &[
                "--bootstrap-server",
                self.bootstrap(),
                "--create",
                "--topic",
                topic,
                "--partitions",
                &partitions.to_string(),
                "--replication-factor",
                &rf,
            ],
        );
    }

    /// Deletes a topic.
    pub fn delete_topic(&self, topic: &str) {
        self.tool_ok(
            "TopicCommand",
            &[
                "--bootstrap-server",
                self.bootstrap(),
                "--delete",
                "--topic",
                topic,
            ],
        );
    }

    /// Produces `count` records of `size` bytes with Kafka's ProducerPerformance (acks=all), and
    /// asserts the tool reports all of them sent.
    pub fn produce_perf(&self, topic: &str, count: u64, size: usize) {
        let size = size.to_string();
        self.producer_performance(topic, count, &["--record-size", &size], &["linger.ms=5"]);
    }

    /// Produces `count` records whose value is `payload` with ProducerPerformance (acks=all), with
    /// extra producer properties (`key=value`, such as `compression.type=zstd`), and asserts the
    /// tool reports all of them sent. `payload` must not hold a newline (the tool's delimiter).
    pub fn produce_payload(&self, topic: &str, count: u64, payload: &[u8], props: &[&str]) {
        assert!(!payload.contains(&b'\n'), "a payload holds no newline");
        let dir = std::env::temp_dir().join(unique("payload"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("payload");
        std::fs::write(&file, payload).expect("write the payload");
        let path = file.to_str().expect("utf-8 temp path");
        self.producer_performance(topic, count, &["--payload-file", path], props);
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn producer_performance(&self, topic: &str, count: u64, records: &[&str], props: &[&str]) {
        let count_arg = count.to_string();
        let bootstrap = format!("bootstrap.servers={}", self.bootstrap());
        let mut args = vec!["--topic", topic, "--num-records", &count_arg];
        args.extend_from_slice(records);
        args.extend([
            "--throughput",
            "-1",
            "--producer-props",
            &bootstrap,
            "acks=all",
        ]);
        args.extend_from_slice(props);
        let out = self.tool_ok("ProducerPerformance", &args);
        let summary = out
            .lines()
            .rev()
            .find(|l| l.contains("records sent"))
            .unwrap_or_else(|| panic!("ProducerPerformance printed no summary:\n{out}"));
        let sent: u64 = summary
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("unreadable ProducerPerformance summary: {summary}"));
        assert_eq!(sent, count, "ProducerPerformance: {summary}");
    }

    /// Produces `count` records whose values are the decimal integers 0..count (Kafka's
    /// VerifiableProducer, keys cycling through `0..keys` when `keys > 0`), with extra producer
    /// properties such as `compression.type`. Returns how many the tool saw acknowledged.
    pub fn produce_verifiable(
        &self,
        topic: &str,
        count: u64,
        keys: u32,
        producer_props: &[(&str, &str)],
    ) -> u64 {
        let (dir, config) = properties_file("producer", producer_props);
        let count_arg = count.to_string();
        let keys_arg = keys.to_string();
        let mut args = vec![
            "--bootstrap-server",
            self.bootstrap(),
            "--topic",
            topic,
            "--max-messages",
            &count_arg,
            "--acks",
            "-1",
            "--producer.config",
            config.to_str().expect("utf-8 temp path"),
        ];
        if keys > 0 {
            args.extend(["--repeating-keys", &keys_arg]);
        }
        let out = self.tool_ok("VerifiableProducer", &args);
        let _ = std::fs::remove_dir_all(&dir);
        out.lines()
            .filter(|l| l.contains("\"name\":\"producer_send_success\""))
            .count() as u64
    }

    /// The latest offset of every partition of `topic` (GetOffsetShell, `--time -1`).
    pub fn end_offsets(&self, topic: &str) -> BTreeMap<i32, i64> {
        let out = self.tool_ok(
            "GetOffsetShell",
            &[
                "--bootstrap-server",
                self.bootstrap(),
                "--topic",
                topic,
                "--time",
                "-1",
            ],
        );
        out.lines()
            .filter_map(|line| {
                // topic:partition:offset; the topic name itself may not contain ':'.
                let mut parts = line.rsplitn(3, ':');
                let offset = parts.next()?.trim().parse().ok()?;
                let partition = parts.next()?.trim().parse().ok()?;
                (parts.next()? == topic).then_some((partition, offset))
            })
            .collect()
    }

    /// `ConsumerGroupCommand --describe --group GROUP` with `options`; its stdout (the tool prints
    /// errors such as an unknown group on stderr, so a failed run yields no rows).
    fn describe_group(&self, group: &str, options: &[&str]) -> String {
        let mut args = vec![
            "--bootstrap-server",
            self.bootstrap(),
            "--describe",
            "--group",
            group,
        ];
        args.extend_from_slice(options);
        let out = self.tool("ConsumerGroupCommand", &args);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `ConsumerGroupCommand --describe --members --verbose`, parsed.
    pub fn describe_members(&self, group: &str) -> Vec<GroupMember> {
        parse_describe_members(&self.describe_group(group, &["--members", "--verbose"]))
    }

    /// The group's committed offsets of `topic`'s partitions (`ConsumerGroupCommand --describe`);
    /// `None` for a partition listed without a commit, absent for one not listed.
    pub fn committed_offsets(&self, group: &str, topic: &str) -> BTreeMap<i32, Option<i64>> {
        parse_describe_offsets(&self.describe_group(group, &[]))
            .into_iter()
            .filter(|row| row.topic == topic)
            .map(|row| (row.partition, row.committed))
            .collect()
    }

    /// Whether the broker runs KIP-848's `consumer` group protocol, as the broker itself says:
    /// its `group.coordinator.rebalance.protocols` (ConfigCommand on node 1) holds `consumer`, the
    /// default from Kafka 4.0. Not its ApiVersions: 3.9.1 lists ConsumerGroupHeartbeat v0 while
    /// the protocol is off (a preview there) and refuses the member's join. Asked once per
    /// process and cluster; not at all where scripts/test has asked it already of this broker
    /// (`MOORING_KAFKA_CONSUMER_PROTOCOL`, `yes` or `no`, for the broker at
    /// `MOORING_KAFKA_CONSUMER_PROTOCOL_BOOTSTRAP`): each test is a process of its own, and a
    /// JVM started per test only adds to the suite's load.
    pub fn supports_consumer_protocol(&self) -> bool {
        static ANSWERS: std::sync::Mutex<BTreeMap<String, bool>> =
            std::sync::Mutex::new(BTreeMap::new());
        let asked_of = std::env::var("MOORING_KAFKA_CONSUMER_PROTOCOL_BOOTSTRAP");
        if asked_of.as_deref() == Ok(self.bootstrap()) {
            match std::env::var("MOORING_KAFKA_CONSUMER_PROTOCOL").as_deref() {
                Ok("yes") => return true,
                Ok("no") => return false,
                _ => {}
            }
        }
        let key = format!("{}@{}", self.name(), self.bootstrap());
        if let Some(&known) = ANSWERS.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return known;
        }
        let described = self.tool_ok(
            "ConfigCommand",
            &[
                "--bootstrap-server",
                self.bootstrap(),
                "--describe",
                "--entity-type",
                "brokers",
                "--entity-name",
                "1",
                "--all",
            ],
        );
        let supported = rebalance_protocols(&described).any(|p| p == "consumer");
        ANSWERS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, supported);
        supported
    }

    /// Panics unless the broker runs the consumer group protocol
    /// ([`Cluster::supports_consumer_protocol`]). A test of that protocol (`consumer_protocol`
    /// in its name) calls it before anything else: scripts/test leaves those tests out where the
    /// broker lacks the protocol (the consumer-protocol filter of .config/nextest.toml), so one
    /// that gets here on such a broker was run by hand or the filter missed it, and must fail,
    /// not pass without running.
    pub fn require_consumer_protocol(&self) {
        assert!(
            self.supports_consumer_protocol(),
            "Kafka {} ({}) has no consumer group protocol: its \
             group.coordinator.rebalance.protocols lacks `consumer`. This test of that protocol \
             should have been left out by the runner (the consumer-protocol filter of \
             .config/nextest.toml, which scripts/test applies on such a broker)",
            self.var("MOORING_KAFKA_VERSION"),
            self.bootstrap()
        );
    }

    /// Sets dynamic configs of a group (`ConfigCommand --alter --entity-type groups`), before
    /// or after it exists: e.g. `consumer.session.timeout.ms` and `consumer.heartbeat.interval.ms`,
    /// the session timeout and heartbeat interval the broker gives a `consumer`-protocol group's
    /// members (within `group.consumer.min.*`/`max.*`, which `scripts/kafka` lowers for tests).
    pub fn set_group_config(&self, group: &str, configs: &[(&str, &str)]) {
        let configs: Vec<String> = configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        self.tool_ok(
            "ConfigCommand",
            &[
                "--bootstrap-server",
                self.bootstrap(),
                "--alter",
                "--entity-type",
                "groups",
                "--entity-name",
                group,
                "--add-config",
                &configs.join(","),
            ],
        );
    }

    /// The group's type as Kafka lists it (`ConsumerGroupCommand --list --type`): `Classic` or
    /// `Consumer` (a classic group converts to a consumer group when a consumer-protocol member
    /// joins it, and back when the last one leaves, under `group.consumer.migration.policy`);
    /// `None` if the group is unknown.
    pub fn group_type(&self, group: &str) -> Option<String> {
        let out = self.tool_ok(
            "ConsumerGroupCommand",
            &["--bootstrap-server", self.bootstrap(), "--list", "--type"],
        );
        parse_group_types(&out).remove(group)
    }

    /// `ConsumerGroupCommand --describe --state`, parsed; `None` if the group is unknown.
    pub fn group_state(&self, group: &str) -> Option<GroupState> {
        parse_state(&self.describe_group(group, &["--state"]))
    }

    /// SIGKILLs node `node` (1-based).
    pub fn kill(&self, node: usize) {
        self.script_ok(&["kill", &node.to_string()]);
    }

    /// Starts node `node` again and waits until it answers.
    pub fn restart(&self, node: usize) {
        self.script_ok(&["restart", &node.to_string()]);
    }

    fn script_ok(&self, args: &[&str]) {
        let out = run_script(&self.name, args)
            .unwrap_or_else(|e| panic!("could not run scripts/kafka {args:?}: {e}"));
        assert!(
            out.status.success(),
            "scripts/kafka --cluster {} {args:?} failed:\n{}",
            self.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.owned {
            let _ = run_script(&self.name, &["stop"]);
        }
    }
}

fn run_script(cluster: &str, args: &[&str]) -> std::io::Result<Output> {
    Command::new(kafka_script())
        .arg("--cluster")
        .arg(cluster)
        .args(args)
        .stdin(Stdio::null())
        .output()
}

fn script_env(cluster: &str) -> Result<HashMap<String, String>, String> {
    let out = run_script(cluster, &["env"]).map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(parse_env(&String::from_utf8_lossy(&out.stdout)))
}

fn parse_env(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The group protocols in ConfigCommand's `--describe --all` output of a broker
/// (`group.coordinator.rebalance.protocols=classic,consumer sensitive=false ...`); none when the
/// broker has no such config (before Kafka 3.7).
fn rebalance_protocols(described: &str) -> impl Iterator<Item = &str> {
    described
        .lines()
        .filter_map(|line| {
            line.trim()
                .strip_prefix("group.coordinator.rebalance.protocols=")
        })
        .take(1)
        .flat_map(|rest| rest.split_whitespace().next().unwrap_or("").split(','))
}

#[cfg(test)]
mod rebalance_protocols_tests {
    use super::rebalance_protocols;

    #[test]
    fn reads_the_protocols_from_config_commands_lines() {
        let v4 = "All configs for broker 1 are:\n  group.coordinator.new.enable=true sensitive=false\n  \
                  group.coordinator.rebalance.protocols=classic,consumer,streams sensitive=false \
                  synonyms={DEFAULT_CONFIG:group.coordinator.rebalance.protocols=classic,consumer,streams}\n";
        assert_eq!(
            rebalance_protocols(v4).collect::<Vec<_>>(),
            ["classic", "consumer", "streams"]
        );
        let v3 = "  group.coordinator.rebalance.protocols=classic sensitive=false synonyms={}\n";
        assert_eq!(rebalance_protocols(v3).collect::<Vec<_>>(), ["classic"]);
        assert_eq!(
            rebalance_protocols("  log.dirs=/x sensitive=false\n").count(),
            0
        );
    }
}
