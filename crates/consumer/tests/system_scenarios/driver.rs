//! The scenario driver: a topic and a group on a real cluster, `verifiable-consumer` processes
//! (ours or Kafka's Java tool) speaking one group protocol, Kafka's `VerifiableProducer` writing
//! throughout, every event line read into [`Global`], and the end-of-scenario [`Verdict`].
//! Every child process is killed when its scenario is dropped, pass or fail.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mooring_testkit::{kafka_script, peer_python, unique, unix_millis, wait_blocking, Cluster};
use serde_json::Value;

use crate::events::{Global, MemberView, Status};

pub const RANGE: &str = "org.apache.kafka.clients.consumer.RangeAssignor";
pub const COOPERATIVE: &str = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";

/// The group protocol of a scenario's members (Kafka's tests run theirs under both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Classic,
    /// KIP-848: `--group-protocol consumer`.
    Consumer,
}

/// Which `verifiable-consumer` a member runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impl {
    Mooring,
    Java,
    /// librdkafka through confluent-kafka: `tests/peers/verifiable_consumer.py`.
    Librdkafka,
}

/// The broker-side assignor standing for a classic strategy (or named as is).
fn remote_assignor(strategy: &str) -> &str {
    match strategy.rsplit('.').next().unwrap_or(strategy) {
        "RangeAssignor" | "range" => "range",
        "CooperativeStickyAssignor" | "StickyAssignor" | "uniform" => "uniform",
        other => panic!("no remote assignor stands for {other}"),
    }
}

/// A consumer process.
pub struct Member {
    pub imp: Impl,
    pub flags: Vec<String>,
    /// A config file of its own, else the scenario's.
    pub config: Option<PathBuf>,
    pub child: Option<Child>,
    pub reader: Option<JoinHandle<()>>,
    pub stderr: Arc<Mutex<String>>,
}

impl Member {
    /// Whether its flags make it speak the consumer protocol ([`Scenario::flags_for`]).
    pub fn speaks_consumer_protocol(&self) -> bool {
        self.flags
            .windows(2)
            .any(|pair| pair[0] == "--group-protocol" && pair[1] == "consumer")
    }
}

/// Kafka's `VerifiableProducer` writing throughout a scenario, throttled; the offsets the broker
/// acknowledged (its `producer_send_success` lines) are collected as they come.
pub struct Producer {
    pub child: Child,
    pub reader: Option<JoinHandle<()>>,
}

/// One scenario: a topic, a group, its members and maybe a producer. Dropping it kills every
/// process it started.
pub struct Scenario<'c> {
    pub cluster: &'c Cluster,
    pub topic: String,
    pub partitions: u32,
    pub group: String,
    /// The group protocol every member speaks.
    pub protocol: Protocol,
    /// The consumer config file every member reads.
    pub config: PathBuf,
    /// Member config files of their own ([`Scenario::add_with_config`]), removed with the rest.
    pub own_configs: Vec<PathBuf>,
    /// `consumer` protocol: the session timeout set on the group, once set.
    pub group_session_ms: Cell<Option<String>>,
    pub members: Vec<Member>,
    pub global: Arc<Mutex<Global>>,
    pub producer: Option<Producer>,
    /// (partition, offset) of every record the broker acknowledged to the producer.
    pub acked: Arc<Mutex<BTreeSet<(i32, i64)>>>,
}

pub fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

pub fn signal(child: &Child, signal: &str) {
    let _ = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status();
}

impl Drop for Scenario<'_> {
    fn drop(&mut self) {
        for member in &mut self.members {
            if let Some(child) = member.child.as_mut() {
                kill(child);
            }
        }
        if let Some(producer) = self.producer.as_mut() {
            kill(&mut producer.child);
        }
        let _ = std::fs::remove_file(&self.config);
        for config in &self.own_configs {
            let _ = std::fs::remove_file(config);
        }
    }
}

impl<'c> Scenario<'c> {
    /// A topic with `partitions` partitions and a group whose members speak `protocol`.
    pub fn new(cluster: &'c Cluster, name: &str, partitions: u32, protocol: Protocol) -> Self {
        let group = unique(&format!("vc-{name}-g"));
        Scenario::with_group(cluster, name, partitions, protocol, group)
    }

    /// As [`Scenario::new`], the group named `group`.
    pub fn with_group(
        cluster: &'c Cluster,
        name: &str,
        partitions: u32,
        protocol: Protocol,
        group: String,
    ) -> Self {
        let topic = unique(&format!("vc-{name}"));
        cluster.create_topic(&topic, partitions);
        let config = std::env::temp_dir().join(format!("{group}.properties"));
        // Read by both implementations: fast heartbeats so rebalances settle quickly. The
        // consumer protocol refuses the key: the broker gives the interval, set on the group.
        let heartbeat = match protocol {
            Protocol::Classic => "heartbeat.interval.ms=500\n",
            Protocol::Consumer => {
                cluster.set_group_config(&group, &[("consumer.heartbeat.interval.ms", "500")]);
                ""
            }
        };
        std::fs::write(&config, heartbeat).unwrap();
        Scenario {
            cluster,
            topic,
            partitions,
            group,
            protocol,
            config,
            own_configs: Vec::new(),
            group_session_ms: Cell::new(None),
            members: Vec::new(),
            global: Arc::new(Mutex::new(Global::default())),
            producer: None,
            acked: Arc::new(Mutex::new(BTreeSet::new())),
        }
    }

    /// The flags of a member assigned by `strategy` (a Java assignor class, or a remote
    /// assignor's name) with a `session_ms` session: the classic protocol's
    /// `--assignment-strategy` and `--session-timeout`; under the consumer protocol
    /// `--group-protocol consumer` and the remote assignor that stands for the strategy (range
    /// for range, uniform for the sticky ones), the session timeout set on the group instead
    /// (`consumer.session.timeout.ms`), as Kafka's consumer tests do.
    pub fn flags(&self, strategy: &str, session_ms: &str) -> Vec<String> {
        self.flags_for(self.protocol, strategy, session_ms)
    }

    /// As [`Scenario::flags`], for a member speaking `protocol` whatever the scenario's (a group
    /// migrating from one protocol to the other).
    pub fn flags_for(&self, protocol: Protocol, strategy: &str, session_ms: &str) -> Vec<String> {
        let flags: Vec<&str> = match protocol {
            Protocol::Classic => vec![
                "--assignment-strategy",
                strategy,
                "--session-timeout",
                session_ms,
            ],
            Protocol::Consumer => {
                let session = Some(session_ms.to_owned());
                if self.group_session_ms.replace(session.clone()) != session {
                    self.cluster.set_group_config(
                        &self.group,
                        &[("consumer.session.timeout.ms", session_ms)],
                    );
                }
                vec![
                    "--group-protocol",
                    "consumer",
                    "--group-remote-assignor",
                    remote_assignor(strategy),
                ]
            }
        };
        flags.into_iter().map(str::to_owned).collect()
    }

    /// Adds (does not start) a member with these extra flags.
    pub fn add(&mut self, imp: Impl, flags: &[String]) -> usize {
        self.members.push(Member {
            imp,
            flags: flags.to_vec(),
            config: None,
            child: None,
            reader: None,
            stderr: Arc::new(Mutex::new(String::new())),
        });
        self.global.lock().unwrap().members.push(MemberView::new());
        self.members.len() - 1
    }

    pub fn add_n(&mut self, n: usize, imp: Impl, flags: &[String]) {
        for _ in 0..n {
            self.add(imp, flags);
        }
    }

    /// Adds a member reading a config file of its own: the scenario's, then `extra`.
    pub fn add_with_config(
        &mut self,
        imp: Impl,
        flags: &[String],
        extra: &[(&str, &str)],
    ) -> usize {
        let i = self.add(imp, flags);
        let path = self.config_file(&i.to_string(), extra);
        self.members[i].config = Some(path);
        i
    }

    /// A config file of the scenario's (removed with it) named by `suffix`: the scenario's
    /// file, then `extra`.
    pub fn config_file(&mut self, suffix: &str, extra: &[(&str, &str)]) -> PathBuf {
        let path = std::env::temp_dir().join(format!("{}-{suffix}.properties", self.group));
        let mut text = std::fs::read_to_string(&self.config).unwrap();
        for (k, v) in extra {
            text.push_str(&format!("{k}={v}\n"));
        }
        std::fs::write(&path, text).unwrap();
        self.own_configs.push(path.clone());
        path
    }

    pub fn command(&self, member: &Member) -> Command {
        let mut command = match member.imp {
            Impl::Mooring => Command::new(env!("CARGO_BIN_EXE_verifiable-consumer")),
            Impl::Java => {
                let mut c = Command::new(kafka_script());
                c.args([
                    "--cluster",
                    self.cluster.name(),
                    "tool",
                    "VerifiableConsumer",
                ]);
                c
            }
            Impl::Librdkafka => {
                let mut c = Command::new(peer_python());
                c.arg(
                    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                        .join("../../tests/peers/verifiable_consumer.py"),
                );
                c
            }
        };
        command
            .args([
                "--bootstrap-server",
                self.cluster.bootstrap(),
                "--topic",
                &self.topic,
                "--group-id",
                &self.group,
                "--consumer.config",
            ])
            .arg(member.config.as_ref().unwrap_or(&self.config))
            .args(&member.flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    pub fn start(&mut self, i: usize) {
        assert!(self.members[i].child.is_none(), "member {i} is running");
        let mut child = self.command(&self.members[i]).spawn().unwrap();
        self.global.lock().unwrap().members[i].consumer_protocol =
            self.members[i].speaks_consumer_protocol();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let global = Arc::clone(&self.global);
        // Every member's event lines, prefixed with the member's index.
        let trace = mooring_testkit::scenario_events_file(&self.group);
        let reader = std::thread::spawn(move || {
            let mut trace = trace;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(file) = trace.as_mut() {
                    use std::io::Write;
                    let _ = writeln!(file, "{i} {line}");
                }
                if let Ok(event) = serde_json::from_str::<Value>(&line) {
                    global.lock().unwrap().handle(i, &event);
                }
            }
        });
        let errors = Arc::clone(&self.members[i].stderr);
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            errors.lock().unwrap().push_str(&text);
        });
        self.members[i].child = Some(child);
        self.members[i].reader = Some(reader);
    }

    pub fn start_all(&mut self) {
        for i in 0..self.members.len() {
            self.start(i);
        }
    }

    /// SIGTERM (clean: the member commits and closes) or SIGKILL, then waits for the process
    /// and for its last event.
    pub fn stop(&mut self, i: usize, clean: bool) {
        self.signal_stop(i, clean);
        self.reap(i, clean);
    }

    pub fn signal_stop(&mut self, i: usize, clean: bool) {
        let child = self.members[i].child.as_mut().expect("member running");
        if clean {
            signal(child, "-TERM");
        } else {
            let _ = child.kill();
        }
    }

    pub fn reap(&mut self, i: usize, clean: bool) {
        let member = &mut self.members[i];
        let Some(mut child) = member.child.take() else {
            return;
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                kill(&mut child);
                panic!("member {i} did not stop within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(reader) = member.reader.take() {
            let _ = reader.join();
        }
        let mut global = self.global.lock().unwrap();
        if !clean || global.members[i].status != Status::Dead {
            // No shutdown_complete from a killed process (kafkatest's handle_kill_process).
            global.dead(i, unix_millis());
        }
    }

    pub fn stop_all(&mut self) {
        for i in 0..self.members.len() {
            if self.members[i].child.is_some() {
                self.signal_stop(i, true);
            }
        }
        for i in 0..self.members.len() {
            self.reap(i, true);
        }
    }

    pub fn view<T>(&self, f: impl FnOnce(&Global) -> T) -> T {
        f(&self.global.lock().unwrap())
    }

    pub fn joined(&self) -> usize {
        self.view(|g| {
            g.members
                .iter()
                .filter(|m| m.status == Status::Joined)
                .count()
        })
    }

    pub fn dead(&self) -> usize {
        self.view(|g| {
            g.members
                .iter()
                .filter(|m| m.status == Status::Dead)
                .count()
        })
    }

    /// Every running member joined (`await_all_members`).
    pub fn await_all_members(&self) {
        let running = self.members.iter().filter(|m| m.child.is_some()).count();
        self.await_members(running);
    }

    pub fn await_members(&self, n: usize) {
        wait_blocking(
            &format!("{n} members joined ({})", self.describe()),
            Duration::from_secs(45),
            || self.joined() == n,
        );
    }

    /// Under the consumer protocol, waits until Kafka lists every running member as speaking it
    /// (`UPGRADED` true: none a classic member in a consumer group); nothing to wait for under
    /// the classic protocol.
    pub fn await_protocol(&self) {
        if self.protocol != Protocol::Consumer {
            return;
        }
        let running = self.members.iter().filter(|m| m.child.is_some()).count();
        wait_blocking(
            &format!(
                "Kafka lists {running} members speaking the consumer protocol ({})",
                self.describe()
            ),
            Duration::from_secs(30),
            || {
                let members = self.cluster.describe_members(&self.group);
                members.len() == running && members.iter().all(|m| m.speaks_consumer_protocol())
            },
        );
    }

    /// Every partition owned by exactly one running member and every running member owning its
    /// share (at least partitions ÷ members), as the members' own events tell: the group's
    /// balanced assignment reached. Under the consumer protocol "every member joined" comes
    /// sooner (a member's first assignment may be empty while the first member still revokes
    /// what moves to it), so a count of partitions changing hands starts from here.
    pub fn await_settled(&self) {
        wait_blocking(
            &format!("a balanced assignment ({})", self.describe()),
            Duration::from_secs(45),
            || {
                self.view(|g| {
                    let running: Vec<&MemberView> = g
                        .members
                        .iter()
                        .zip(&self.members)
                        .filter(|(_, m)| m.child.is_some())
                        .map(|(view, _)| view)
                        .collect();
                    let share = self.partitions as usize / running.len().max(1);
                    let mut owners = vec![0u32; self.partitions as usize];
                    for p in running.iter().flat_map(|m| &m.assignment) {
                        if let Some(n) = owners.get_mut(*p as usize) {
                            *n += 1;
                        }
                    }
                    owners.iter().all(|&n| n == 1)
                        && running.iter().all(|m| m.assignment.len() >= share)
                })
            },
        );
    }

    /// At least `n` more records consumed (`await_consumed_messages`).
    pub fn await_consumed(&self, n: u64) {
        let from = self.view(Global::total_consumed);
        wait_blocking(
            &format!("{n} more records consumed ({})", self.describe()),
            Duration::from_secs(45),
            || self.view(Global::total_consumed) >= from + n,
        );
    }

    pub fn owner(&self, partition: i32) -> Option<usize> {
        self.view(|g| {
            g.members
                .iter()
                .position(|m| m.status != Status::Dead && m.assignment.contains(&partition))
        })
    }

    pub fn num_rebalances(&self) -> u32 {
        self.view(|g| g.members.iter().map(|m| m.assigned).max().unwrap_or(0))
    }

    pub fn describe(&self) -> String {
        self.view(|g| {
            g.members
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    format!(
                        "#{i} {:?} {:?} owns {:?} consumed {}",
                        self.members[i].imp, m.status, m.assignment, m.consumed
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// Starts Kafka's VerifiableProducer at `rate` records/s until `stop_producer`.
    pub fn start_producer(&mut self, rate: u32) {
        let mut child = Command::new(kafka_script())
            .args([
                "--cluster",
                self.cluster.name(),
                "tool",
                "VerifiableProducer",
                "--bootstrap-server",
                self.cluster.bootstrap(),
                "--topic",
                &self.topic,
                "--throughput",
                &rate.to_string(),
                "--acks",
                "-1",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let acked = Arc::clone(&self.acked);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(event) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if event["name"] == "producer_send_success" {
                    if let (Some(p), Some(o)) =
                        (event["partition"].as_i64(), event["offset"].as_i64())
                    {
                        acked.lock().unwrap().insert((p as i32, o));
                    }
                }
            }
        });
        self.producer = Some(Producer {
            child,
            reader: Some(reader),
        });
    }

    pub fn stop_producer(&mut self) {
        if let Some(mut producer) = self.producer.take() {
            signal(&producer.child, "-TERM");
            let deadline = Instant::now() + Duration::from_secs(20);
            while producer.child.try_wait().unwrap().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            kill(&mut producer.child);
            if let Some(reader) = producer.reader.take() {
                let _ = reader.join();
            }
        }
    }

    /// Stops the producer and waits until the group has consumed up to the end of the log.
    pub fn drain(&mut self) -> BTreeMap<i32, i64> {
        self.stop_producer();
        let ends = self.cluster.end_offsets(&self.topic);
        wait_blocking(
            &format!("everything consumed up to {ends:?} ({})", self.describe()),
            Duration::from_secs(60),
            || {
                self.view(|g| {
                    ends.iter()
                        .all(|(p, end)| g.position.get(p).copied().unwrap_or(0) >= *end)
                })
            },
        );
        ends
    }

    /// The end-of-scenario verdict kafkatest asserts, plus what it cannot see: records lost,
    /// below the log's end or acknowledged to the producer.
    pub fn verdict(&self, ends: &BTreeMap<i32, i64>) -> Verdict {
        let acked = self.acked.lock().unwrap().clone();
        self.view(|g| Verdict {
            total_consumed: g.total_consumed(),
            position: g.position.values().sum(),
            committed: g.committed.values().sum(),
            lost: g.lost(ends, &acked),
            acked: acked.len(),
            duplicates: g.duplicates(),
            redelivered_after_refused_commit: g.redelivered_after_refused_commit(),
            violations: g.violations.clone(),
            overlaps: g.overlaps(),
        })
    }

    pub fn stderr(&self, i: usize) -> String {
        self.members[i].stderr.lock().unwrap().clone()
    }
}

#[derive(Debug)]
pub struct Verdict {
    pub total_consumed: u64,
    /// Sum over partitions of the group's position.
    pub position: i64,
    /// Sum over partitions of the last successful commit.
    pub committed: i64,
    pub lost: i64,
    /// Records acknowledged to the producer.
    pub acked: usize,
    /// Records consumed more than once, less the next one.
    pub duplicates: u64,
    /// Records consumed again because the coordinator refused the commit covering them
    /// (ILLEGAL_GENERATION: the member's generation moved on under it); not duplicates a client
    /// could have avoided.
    pub redelivered_after_refused_commit: u64,
    pub violations: Vec<String>,
    pub overlaps: Vec<String>,
}

impl Verdict {
    /// A clean shutdown: nothing lost, position == total consumed (no duplicate), every
    /// event-stream check held.
    pub fn assert_clean(&self, what: &str) {
        eprintln!("{what}: {self:?}");
        assert!(self.violations.is_empty(), "{what}: {:?}", self.violations);
        assert!(
            self.overlaps.is_empty(),
            "{what}: overlaps {:?}",
            self.overlaps
        );
        assert!(
            self.acked > 0,
            "{what}: the producer had nothing acknowledged"
        );
        assert_eq!(self.lost, 0, "{what}: records lost");
        assert_eq!(
            self.position as u64 + self.redelivered_after_refused_commit,
            self.total_consumed,
            "{what}: total consumed did not match the consumed position (and the records a refused commit brought again)"
        );
        assert_eq!(self.duplicates, 0, "{what}: duplicates");
    }

    pub fn assert_committed_all(&self, what: &str) {
        assert_eq!(
            self.committed, self.position,
            "{what}: last committed offset did not match the last consumed position"
        );
    }
}
