//! Kafka's consumer system tests (tests/kafkatest/tests/client/consumer_test.py: OffsetValidationTest
//! and AssignmentValidationTest) against the real broker, driving `verifiable-consumer` processes
//! (ours, and Kafka's Java `VerifiableConsumer` in the mixed scenario) and judging them only by
//! their JSON event lines, as kafkatest's `verifiable_consumer.py` does.
//!
//! The driver keeps, per member, its state (started, joined, rebalancing, dead), assignment,
//! revokes, assignments, position and commits, and for the group the position and the commit of
//! every partition, every offset consumed (to count losses and duplicates) and every ownership
//! interval (no partition owned by two members at once). The checks Python makes while reading
//! events (records consumed only while joined and assigned, contiguous per member, never behind
//! the group's commit; commits never ahead of the position) are collected as violations.
//!
//! Smaller than Kafka's: 6 s sessions (10 s for static members, 30 s while brokers fail),
//! 500 ms heartbeats, two bounce rounds, a producer at 300 records/s. Every child process is
//! killed when its scenario ends, pass or fail.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mooring_testkit::{kafka_script, unique, unix_millis, wait_blocking, Cluster};
use serde_json::Value;

const RANGE: &str = "org.apache.kafka.clients.consumer.RangeAssignor";
const COOPERATIVE: &str = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Impl {
    Mooring,
    Java,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Dead,
    Started,
    Joined,
    Rebalancing,
}

/// One member's view, from its own events (kafkatest's `ConsumerEventHandler`).
#[derive(Debug)]
struct MemberView {
    status: Status,
    assignment: BTreeSet<i32>,
    revoked: u32,
    assigned: u32,
    consumed: u64,
    position: BTreeMap<i32, i64>,
    /// Fatal errors it reported (`shutdown_complete` with an `error`), e.g. fenced.
    errors: Vec<String>,
}

impl MemberView {
    fn new() -> Self {
        MemberView {
            status: Status::Dead,
            assignment: BTreeSet::new(),
            revoked: 0,
            assigned: 0,
            consumed: 0,
            position: BTreeMap::new(),
            errors: Vec::new(),
        }
    }
}

/// The group's view.
#[derive(Debug, Default)]
struct Global {
    members: Vec<MemberView>,
    position: BTreeMap<i32, i64>,
    committed: BTreeMap<i32, i64>,
    /// (partition, offset) → times consumed.
    seen: BTreeMap<(i32, i64), u32>,
    /// (member, partition) → since when it owns the partition (event time, ms).
    owning: BTreeMap<(usize, i32), i64>,
    /// Closed ownership intervals: (partition, member, from, to).
    intervals: Vec<(i32, usize, i64, i64)>,
    violations: Vec<String>,
}

impl Global {
    fn partitions(event: &Value) -> Vec<i32> {
        event["partitions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p["partition"].as_i64())
                    .map(|p| p as i32)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn end_ownership(&mut self, member: usize, partition: i32, at: i64) {
        if let Some(from) = self.owning.remove(&(member, partition)) {
            self.intervals.push((partition, member, from, at));
        }
    }

    fn dead(&mut self, member: usize, at: i64) {
        let owned: Vec<i32> = self
            .owning
            .keys()
            .filter(|(m, _)| *m == member)
            .map(|(_, p)| *p)
            .collect();
        for p in owned {
            self.end_ownership(member, p, at);
        }
        let view = &mut self.members[member];
        view.status = Status::Dead;
        view.assignment.clear();
        view.position.clear();
    }

    fn handle(&mut self, member: usize, event: &Value) {
        let at = event["timestamp"].as_i64().unwrap_or_else(unix_millis);
        match event["name"].as_str().unwrap_or_default() {
            "startup_complete" => self.members[member].status = Status::Started,
            "shutdown_complete" => {
                if let Some(error) = event["error"].as_str() {
                    self.members[member].errors.push(error.to_owned());
                }
                self.dead(member, at);
            }
            "partitions_revoked" => {
                let view = &mut self.members[member];
                view.revoked += 1;
                view.status = Status::Rebalancing;
                view.position.clear();
                let revoked = Self::partitions(event);
                for p in &revoked {
                    view.assignment.remove(p);
                }
                for p in revoked {
                    self.end_ownership(member, p, at);
                }
            }
            "partitions_assigned" => {
                let view = &mut self.members[member];
                view.assigned += 1;
                view.status = Status::Joined;
                let added = Self::partitions(event);
                view.assignment.extend(added.iter().copied());
                for p in added {
                    self.owning.entry((member, p)).or_insert(at);
                }
            }
            "records_consumed" => self.consumed(member, event),
            "offsets_committed" => self.committed(member, event),
            _ => {}
        }
    }

    fn consumed(&mut self, member: usize, event: &Value) {
        let view = &mut self.members[member];
        if view.status != Status::Joined {
            self.violations.push(format!(
                "member {member} consumed records while {:?}",
                view.status
            ));
        }
        let mut count = 0;
        for batch in event["partitions"].as_array().into_iter().flatten() {
            let p = batch["partition"].as_i64().unwrap_or(-1) as i32;
            let min = batch["minOffset"].as_i64().unwrap_or(-1);
            let max = batch["maxOffset"].as_i64().unwrap_or(-1);
            let n = batch["count"].as_i64().unwrap_or(-1);
            count += n.max(0) as u64;
            let view = &mut self.members[member];
            if !view.assignment.contains(&p) {
                self.violations.push(format!(
                    "member {member} consumed partition {p}, not assigned ({:?})",
                    view.assignment
                ));
            }
            if let Some(position) = view.position.get(&p) {
                if *position != min {
                    self.violations.push(format!(
                        "member {member} consumed partition {p} from {min}, its position was {position}"
                    ));
                }
            }
            view.position.insert(p, max + 1);
            if n != max - min + 1 {
                self.violations.push(format!(
                    "member {member}: partition {p} count {n} for offsets {min}..={max}"
                ));
            }
            if let Some(committed) = self.committed.get(&p) {
                if *committed > min {
                    self.violations.push(format!(
                        "member {member} consumed partition {p} from {min}, behind the commit {committed}"
                    ));
                }
            }
            self.position.insert(p, max + 1);
            for offset in min..=max {
                *self.seen.entry((p, offset)).or_insert(0) += 1;
            }
        }
        let total: u64 = event["count"].as_u64().unwrap_or(0);
        if total != count {
            self.violations.push(format!(
                "member {member}: records_consumed count {total} is not the sum {count}"
            ));
        }
        self.members[member].consumed += total;
    }

    fn committed(&mut self, member: usize, event: &Value) {
        if event["success"].as_bool() != Some(true) {
            return;
        }
        for commit in event["offsets"].as_array().into_iter().flatten() {
            let p = commit["partition"].as_i64().unwrap_or(-1) as i32;
            let offset = commit["offset"].as_i64().unwrap_or(-1);
            let view = &self.members[member];
            if !view.assignment.contains(&p) {
                self.violations.push(format!(
                    "member {member} committed partition {p}, not assigned ({:?})",
                    view.assignment
                ));
            }
            if self.position.get(&p).is_none_or(|pos| *pos < offset) {
                self.violations.push(format!(
                    "member {member} committed {offset} on partition {p}, ahead of the position {:?}",
                    self.position.get(&p)
                ));
            }
            self.committed.insert(p, offset);
        }
    }

    fn total_consumed(&self) -> u64 {
        self.members.iter().map(|m| m.consumed).sum()
    }

    fn duplicates(&self) -> u64 {
        self.seen.values().map(|n| u64::from(n - 1)).sum()
    }

    /// Records never consumed: offsets below a partition's end of log (`ends`), and offsets the
    /// broker acknowledged to the producer (`acked`), which the log's end would not show if the
    /// log lost them.
    fn lost(&self, ends: &BTreeMap<i32, i64>, acked: &BTreeSet<(i32, i64)>) -> i64 {
        let mut expected: BTreeSet<(i32, i64)> = acked.clone();
        for (p, end) in ends {
            expected.extend((0..*end).map(|o| (*p, o)));
        }
        expected
            .iter()
            .filter(|k| !self.seen.contains_key(k))
            .count() as i64
    }

    /// Pairs of members whose ownership of a partition overlapped in time.
    fn overlaps(&self) -> Vec<String> {
        let now = unix_millis();
        let mut all: Vec<(i32, usize, i64, i64)> = self.intervals.clone();
        all.extend(
            self.owning
                .iter()
                .map(|((m, p), from)| (*p, *m, *from, now)),
        );
        let mut found = Vec::new();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                if a.0 == b.0 && a.1 != b.1 && a.2 < b.3 && b.2 < a.3 {
                    found.push(format!(
                        "partition {}: member {} [{}, {}) and member {} [{}, {})",
                        a.0, a.1, a.2, a.3, b.1, b.2, b.3
                    ));
                }
            }
        }
        found
    }
}

/// A consumer process.
struct Member {
    imp: Impl,
    flags: Vec<String>,
    child: Option<Child>,
    reader: Option<JoinHandle<()>>,
    stderr: Arc<Mutex<String>>,
}

/// Kafka's `VerifiableProducer` writing throughout a scenario, throttled; the offsets the broker
/// acknowledged (its `producer_send_success` lines) are collected as they come.
struct Producer {
    child: Child,
    reader: Option<JoinHandle<()>>,
}

/// One scenario: a topic, a group, its members and maybe a producer. Dropping it kills every
/// process it started.
struct Scenario<'c> {
    cluster: &'c Cluster,
    topic: String,
    group: String,
    config: PathBuf,
    members: Vec<Member>,
    global: Arc<Mutex<Global>>,
    producer: Option<Producer>,
    /// (partition, offset) of every record the broker acknowledged to the producer.
    acked: Arc<Mutex<BTreeSet<(i32, i64)>>>,
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn signal(child: &Child, signal: &str) {
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
    }
}

impl<'c> Scenario<'c> {
    /// A topic with `partitions` partitions and a group; `session_ms` for every member.
    fn new(cluster: &'c Cluster, name: &str, partitions: u32) -> Self {
        let topic = unique(&format!("vc-{name}"));
        let group = unique(&format!("vc-{name}-g"));
        cluster.create_topic(&topic, partitions);
        let config = std::env::temp_dir().join(format!("{group}.properties"));
        // Read by both implementations: fast heartbeats so rebalances settle quickly.
        std::fs::write(&config, "heartbeat.interval.ms=500\n").unwrap();
        Scenario {
            cluster,
            topic,
            group,
            config,
            members: Vec::new(),
            global: Arc::new(Mutex::new(Global::default())),
            producer: None,
            acked: Arc::new(Mutex::new(BTreeSet::new())),
        }
    }

    /// Adds (does not start) a member with these extra flags.
    fn add(&mut self, imp: Impl, flags: &[&str]) -> usize {
        self.members.push(Member {
            imp,
            flags: flags.iter().map(|s| s.to_string()).collect(),
            child: None,
            reader: None,
            stderr: Arc::new(Mutex::new(String::new())),
        });
        self.global.lock().unwrap().members.push(MemberView::new());
        self.members.len() - 1
    }

    fn add_n(&mut self, n: usize, imp: Impl, flags: &[&str]) {
        for _ in 0..n {
            self.add(imp, flags);
        }
    }

    fn command(&self, member: &Member) -> Command {
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
            .arg(&self.config)
            .args(&member.flags)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn start(&mut self, i: usize) {
        assert!(self.members[i].child.is_none(), "member {i} is running");
        let mut child = self.command(&self.members[i]).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let global = Arc::clone(&self.global);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
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

    fn start_all(&mut self) {
        for i in 0..self.members.len() {
            self.start(i);
        }
    }

    /// SIGTERM (clean: the member commits and closes) or SIGKILL, then waits for the process
    /// and for its last event.
    fn stop(&mut self, i: usize, clean: bool) {
        self.signal_stop(i, clean);
        self.reap(i, clean);
    }

    fn signal_stop(&mut self, i: usize, clean: bool) {
        let child = self.members[i].child.as_mut().expect("member running");
        if clean {
            signal(child, "-TERM");
        } else {
            let _ = child.kill();
        }
    }

    fn reap(&mut self, i: usize, clean: bool) {
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

    fn stop_all(&mut self) {
        for i in 0..self.members.len() {
            if self.members[i].child.is_some() {
                self.signal_stop(i, true);
            }
        }
        for i in 0..self.members.len() {
            self.reap(i, true);
        }
    }

    fn view<T>(&self, f: impl FnOnce(&Global) -> T) -> T {
        f(&self.global.lock().unwrap())
    }

    fn joined(&self) -> usize {
        self.view(|g| {
            g.members
                .iter()
                .filter(|m| m.status == Status::Joined)
                .count()
        })
    }

    fn dead(&self) -> usize {
        self.view(|g| {
            g.members
                .iter()
                .filter(|m| m.status == Status::Dead)
                .count()
        })
    }

    /// Every running member joined (`await_all_members`).
    fn await_all_members(&self) {
        let running = self.members.iter().filter(|m| m.child.is_some()).count();
        self.await_members(running);
    }

    fn await_members(&self, n: usize) {
        wait_blocking(
            &format!("{n} members joined ({})", self.describe()),
            Duration::from_secs(45),
            || self.joined() == n,
        );
    }

    /// At least `n` more records consumed (`await_consumed_messages`).
    fn await_consumed(&self, n: u64) {
        let from = self.view(Global::total_consumed);
        wait_blocking(
            &format!("{n} more records consumed ({})", self.describe()),
            Duration::from_secs(45),
            || self.view(Global::total_consumed) >= from + n,
        );
    }

    fn owner(&self, partition: i32) -> Option<usize> {
        self.view(|g| {
            g.members
                .iter()
                .position(|m| m.status != Status::Dead && m.assignment.contains(&partition))
        })
    }

    fn num_rebalances(&self) -> u32 {
        self.view(|g| g.members.iter().map(|m| m.assigned).max().unwrap_or(0))
    }

    fn describe(&self) -> String {
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
    fn start_producer(&mut self, rate: u32) {
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

    fn stop_producer(&mut self) {
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
    fn drain(&mut self) -> BTreeMap<i32, i64> {
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
    fn verdict(&self, ends: &BTreeMap<i32, i64>) -> Verdict {
        let acked = self.acked.lock().unwrap().clone();
        self.view(|g| Verdict {
            total_consumed: g.total_consumed(),
            position: g.position.values().sum(),
            committed: g.committed.values().sum(),
            lost: g.lost(ends, &acked),
            acked: acked.len(),
            duplicates: g.duplicates(),
            violations: g.violations.clone(),
            overlaps: g.overlaps(),
        })
    }

    fn stderr(&self, i: usize) -> String {
        self.members[i].stderr.lock().unwrap().clone()
    }
}

#[derive(Debug)]
struct Verdict {
    total_consumed: u64,
    /// Sum over partitions of the group's position.
    position: i64,
    /// Sum over partitions of the last successful commit.
    committed: i64,
    lost: i64,
    /// Records acknowledged to the producer.
    acked: usize,
    duplicates: u64,
    violations: Vec<String>,
    overlaps: Vec<String>,
}

impl Verdict {
    /// A clean shutdown: nothing lost, position == total consumed (no duplicate), every
    /// event-stream check held.
    fn assert_clean(&self, what: &str) {
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
            self.position as u64, self.total_consumed,
            "{what}: total consumed did not match the consumed position"
        );
        assert_eq!(self.duplicates, 0, "{what}: duplicates");
    }

    fn assert_committed_all(&self, what: &str) {
        assert_eq!(
            self.committed, self.position,
            "{what}: last committed offset did not match the last consumed position"
        );
    }
}

fn flags<'a>(strategy: &'a str, session_ms: &'a str) -> Vec<&'a str> {
    vec![
        "--assignment-strategy",
        strategy,
        "--session-timeout",
        session_ms,
    ]
}

// ---- OffsetValidationTest ------------------------------------------------------------------

fn consumer_bounce(name: &str, rolling: bool, imps: [Impl; 3], swap: bool) {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, 1);
    for imp in imps {
        s.add(imp, &flags(RANGE, "6000"));
    }
    s.start_producer(300);
    s.start_all();
    s.await_all_members();
    for _ in 0..2 {
        if rolling {
            for i in 0..3 {
                s.stop(i, true);
                wait_blocking("the member is dead", Duration::from_secs(11), || {
                    s.dead() == 1
                });
                if swap {
                    s.members[i].imp = match s.members[i].imp {
                        Impl::Java => Impl::Mooring,
                        Impl::Mooring => Impl::Java,
                    };
                }
                s.start(i);
                s.await_all_members();
                s.await_consumed(100);
            }
        } else {
            s.stop_all();
            for i in 0..3 {
                s.start(i);
            }
            s.await_all_members();
            s.await_consumed(100);
        }
    }
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean(name);
    verdict.assert_committed_all(name);
}

#[test]
fn consumer_bounce_rolling() {
    consumer_bounce("bounce-rolling", true, [Impl::Mooring; 3], false);
}

#[test]
fn consumer_bounce_all() {
    consumer_bounce("bounce-all", false, [Impl::Mooring; 3], false);
}

/// Ours and Kafka's Java VerifiableConsumer in one group, swapped at every restart.
#[test]
fn consumer_bounce_rolling_mixed_with_java() {
    consumer_bounce(
        "bounce-mixed",
        true,
        [Impl::Java, Impl::Mooring, Impl::Java],
        true,
    );
}

fn static_consumer_bounce(name: &str, strategy: &str, rolling: bool, static_membership: bool) {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, 3);
    let ids: Vec<String> = (0..3).map(|i| format!("{name}-{i}")).collect();
    for id in &ids {
        let mut f = flags(strategy, "10000");
        if static_membership {
            f.extend(["--group-instance-id", id]);
        }
        s.add(Impl::Mooring, &f);
    }
    s.start_producer(300);
    s.start_all();
    s.await_all_members();
    let before = s.view(|g| g.members[0].revoked);
    for _ in 0..2 {
        if rolling {
            for i in 1..3 {
                s.stop(i, true);
                wait_blocking("the member is dead", Duration::from_secs(15), || {
                    s.dead() == 1
                });
                s.start(i);
                s.await_all_members();
                s.await_consumed(100);
            }
        } else {
            for i in 1..3 {
                s.signal_stop(i, true);
            }
            for i in 1..3 {
                s.reap(i, true);
            }
            for i in 1..3 {
                s.start(i);
            }
            s.await_all_members();
            s.await_consumed(100);
        }
    }
    let revokes = s.view(|g| g.members[0].revoked) - before;
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    eprintln!("{name}: revokes of the member kept alive: {revokes}");
    if static_membership {
        assert_eq!(revokes, 0, "{name}: static members restarted, yet a revoke");
    } else {
        assert!(
            revokes > 0,
            "{name}: dynamic members restarted, yet no revoke"
        );
    }
    verdict.assert_clean(name);
}

#[test]
fn static_consumer_bounce_rolling() {
    static_consumer_bounce("static-rolling", RANGE, true, true);
}

#[test]
fn static_consumer_bounce_all() {
    static_consumer_bounce("static-all", RANGE, false, true);
}

#[test]
fn dynamic_consumer_bounce_rolling_revokes() {
    static_consumer_bounce("dynamic-rolling", RANGE, true, false);
}

#[test]
fn static_consumer_bounce_rolling_cooperative() {
    static_consumer_bounce("static-coop", COOPERATIVE, true, true);
}

fn fencing_static_consumer(name: &str, stable_first: bool) {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, 3);
    let ids: Vec<String> = (0..3).map(|i| format!("{name}-{i}")).collect();
    for id in &ids {
        let mut f = flags(RANGE, "10000");
        f.extend(["--group-instance-id", id]);
        s.add(Impl::Mooring, &f);
    }
    // The conflicting member shares the first one's instance id.
    let mut f = flags(RANGE, "10000");
    f.extend(["--group-instance-id", &ids[0]]);
    let conflict = s.add(Impl::Mooring, &f);
    s.start_producer(300);
    if stable_first {
        for i in 0..3 {
            s.start(i);
        }
        s.await_members(3);
        s.start(conflict);
        wait_blocking(
            &format!("the older member is fenced ({})", s.describe()),
            Duration::from_secs(20),
            || {
                s.view(|g| g.members[0].status == Status::Dead)
                    && s.view(|g| g.members[conflict].status == Status::Joined)
            },
        );
    } else {
        s.start_all();
        wait_blocking(
            &format!("three joined, one dead ({})", s.describe()),
            Duration::from_secs(30),
            || s.joined() == 3 && s.dead() == 1,
        );
    }
    let fenced = s.view(|g| {
        g.members
            .iter()
            .position(|m| m.status == Status::Dead)
            .unwrap()
    });
    assert!(
        fenced == 0 || fenced == conflict,
        "{name}: member {fenced} died, it shares no instance id"
    );
    let said = s.view(|g| g.members[fenced].errors.clone());
    let stderr = s.stderr(fenced);
    eprintln!("{name}: member {fenced} fenced: {said:?} / {stderr}");
    assert!(
        said.iter().any(|e| e.to_lowercase().contains("fenced")),
        "{name}: the fenced member did not say so: {said:?} {stderr}"
    );
    s.await_consumed(100);
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    eprintln!("{name}: {verdict:?}");
    assert_eq!(verdict.lost, 0, "{name}: records lost");
    assert!(verdict.position as u64 <= verdict.total_consumed);
}

#[test]
fn fencing_static_consumer_stable() {
    fencing_static_consumer("fencing-stable", true);
}

#[test]
fn fencing_static_consumer_all() {
    fencing_static_consumer("fencing-all", false);
}

fn consumer_failure(name: &str, autocommit: bool) {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, 1);
    let mut f = flags(RANGE, "6000");
    if autocommit {
        f.push("--enable-autocommit");
    }
    s.add_n(3, Impl::Mooring, &f);
    s.start_all();
    s.await_all_members();
    let owner = s.owner(0).expect("partition 0 has an owner");
    s.start_producer(300);
    s.await_consumed(300);
    // SIGKILL: no commit, no LeaveGroup; the group notices after the session timeout.
    s.stop(owner, false);
    wait_blocking(
        &format!("two members, partition 0 taken over ({})", s.describe()),
        Duration::from_secs(17),
        || s.joined() == 2 && s.owner(0).is_some_and(|o| o != owner),
    );
    s.await_consumed(500);
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    eprintln!("{name}: {verdict:?}");
    assert!(
        verdict.violations.is_empty(),
        "{name}: {:?}",
        verdict.violations
    );
    assert!(
        verdict.overlaps.is_empty(),
        "{name}: {:?}",
        verdict.overlaps
    );
    assert_eq!(verdict.lost, 0, "{name}: records lost");
    // A hard failure may duplicate (what the killed member consumed after its last commit).
    assert!(
        verdict.position as u64 <= verdict.total_consumed,
        "{name}: position greater than the records consumed"
    );
    if !autocommit {
        verdict.assert_committed_all(name);
    }
}

#[test]
fn consumer_failure_manual_commit() {
    consumer_failure("failure-manual", false);
}

#[test]
fn consumer_failure_autocommit() {
    consumer_failure("failure-auto", true);
}

/// A three-node cluster of the broker scenarios, each scenario with its own name and ports. A
/// node can still lose its port to a client's connection and fail to start ("Address already in
/// use"): try again (each attempt stops what the last one started), and stop everything before
/// giving up.
fn dedicated_cluster(name: &str, port_base: u16) -> Cluster {
    for attempt in 1..=3 {
        match std::panic::catch_unwind(|| Cluster::dedicated(name, 3, port_base)) {
            Ok(cluster) => return cluster,
            Err(_) => eprintln!("starting cluster {name}: attempt {attempt} failed"),
        }
    }
    let _ = Command::new(kafka_script())
        .args(["--cluster", name, "stop"])
        .status();
    panic!("cluster {name} did not start in three attempts");
}

/// Broker rolling bounce (every node restarted cleanly, one at a time), then a broker failure
/// (SIGKILL of the group's coordinator): no rebalance, nothing lost, no duplicate, everything
/// committed. One three-node cluster for both.
#[test]
fn broker_rolling_bounce_then_failure() {
    let cluster = dedicated_cluster("t-vc-brokers", 26000);
    let mut s = Scenario::new(&cluster, "brokers", 1);
    // Sessions outlast a coordinator's move (as kafkatest's 30 s).
    s.add_n(3, Impl::Mooring, &flags(RANGE, "30000"));
    s.start_producer(200);
    s.start_all();
    s.await_all_members();
    s.await_consumed(200);
    let rebalances = s.num_rebalances();
    for node in 1..=3 {
        cluster.restart(node);
        s.await_all_members();
        s.await_consumed(200);
    }
    let after_bounce = s.num_rebalances() - rebalances;
    eprintln!("broker rolling bounce: {after_bounce} unexpected rebalances");
    assert_eq!(after_bounce, 0, "broker rolling bounce caused rebalances");

    // kafkatest picks a broker arbitrarily ("TODO: target the coordinator"); we kill the
    // group's coordinator.
    let coordinator = cluster
        .group_state(&s.group)
        .expect("Kafka knows the group")
        .coordinator_id;
    eprintln!("broker failure: SIGKILL node {coordinator}, the group's coordinator");
    cluster.kill(usize::try_from(coordinator).unwrap());
    s.await_consumed(500);
    let after_failure = s.num_rebalances() - rebalances;
    eprintln!("broker failure: {after_failure} unexpected rebalances");
    assert_eq!(after_failure, 0, "broker failure caused a rebalance");
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean("broker bounce and failure");
    verdict.assert_committed_all("broker bounce and failure");
}

/// Kafka's view of a group of static members: `group.instance.id` → member id, once every one of
/// the scenario's members is listed.
fn member_ids(s: &Scenario) -> BTreeMap<String, String> {
    let mut ids = BTreeMap::new();
    wait_blocking(
        &format!(
            "Kafka lists {} static members ({})",
            s.members.len(),
            s.describe()
        ),
        Duration::from_secs(60),
        || {
            ids = s
                .cluster
                .describe_members(&s.group)
                .into_iter()
                .filter_map(|m| Some((m.group_instance_id?, m.consumer_id)))
                .collect();
            ids.len() == s.members.len()
        },
    );
    ids
}

/// Restarts every member cleanly, one at a time (`rolling`) or all at once, as kafkatest's
/// `rolling_bounce_consumers` and `bounce_all_consumers` do, once.
fn bounce_consumers(s: &mut Scenario, rolling: bool) {
    let n = s.members.len();
    if rolling {
        for i in 0..n {
            s.stop(i, true);
            wait_blocking("the member is dead", Duration::from_secs(15), || {
                s.dead() == 1
            });
            s.start(i);
            s.await_all_members();
            s.await_consumed(50);
        }
    } else {
        for i in 0..n {
            s.signal_stop(i, true);
        }
        for i in 0..n {
            s.reap(i, true);
        }
        for i in 0..n {
            s.start(i);
        }
        s.await_all_members();
        s.await_consumed(50);
    }
}

/// Waits until every partition's commit has moved past `before` (the group commits again).
fn await_commits_past(s: &Scenario, before: &BTreeMap<i32, i64>) {
    wait_blocking(
        &format!("commits past {before:?} ({})", s.describe()),
        Duration::from_secs(45),
        || {
            s.view(|g| {
                before
                    .iter()
                    .all(|(p, c)| g.committed.get(p).is_some_and(|now| now > c))
            })
        },
    );
}

/// Kafka's `test_static_consumer_persisted_after_rejoin`, both bounce modes at once on one
/// three-node cluster: three static members of a group consume and commit; they restart (in one
/// group one at a time, in the other all at once), which gives each a new member id under its
/// instance id; then every broker restarts in turn, so the coordinator moves and loads the group
/// from `__consumer_offsets`, where the new ids must be. The members must keep consuming and
/// committing after every broker restart under the ids they rejoined with: never fenced by a
/// stale member id, no rebalance, nothing lost against the producer's acknowledgements, nothing
/// consumed twice, everything committed.
#[test]
fn static_consumer_persisted_after_rejoin_broker_rolling_bounce() {
    let cluster = dedicated_cluster("t-vc-static-rejoin", 22000);
    let mut groups: Vec<(bool, Scenario)> = [(true, "rejoin-rolling"), (false, "rejoin-all")]
        .into_iter()
        .map(|(rolling, name)| {
            let mut s = Scenario::new(&cluster, name, 3);
            for i in 0..3 {
                let id = format!("{name}-{i}");
                let mut f = flags(RANGE, "30000");
                f.extend(["--group-instance-id", &id]);
                s.add(Impl::Mooring, &f);
            }
            (rolling, s)
        })
        .collect();
    for (_, s) in &mut groups {
        s.start_producer(100);
        s.start_all();
    }
    for (_, s) in &groups {
        s.await_all_members();
        s.await_consumed(100);
    }

    // The restart: same instance ids, new member ids, which the coordinator must persist.
    let mut rejoined = Vec::new();
    for (rolling, s) in &mut groups {
        let before = member_ids(s);
        bounce_consumers(s, *rolling);
        let after = member_ids(s);
        eprintln!("{}: member ids {before:?} -> {after:?}", s.group);
        assert_eq!(
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>(),
            "{}: the instance ids changed",
            s.group
        );
        for (instance, id) in &after {
            assert_ne!(
                &before[instance], id,
                "{}: {instance} rejoined under its old member id",
                s.group
            );
        }
        rejoined.push(after);
    }
    let rebalances: Vec<u32> = groups.iter().map(|(_, s)| s.num_rebalances()).collect();

    // Every broker restarts in turn; after each, every group consumes and commits again.
    for node in 1..=3 {
        let coordinators: Vec<i32> = groups
            .iter()
            .map(|(_, s)| {
                cluster
                    .group_state(&s.group)
                    .expect("Kafka knows the group")
                    .coordinator_id
            })
            .collect();
        let committed: Vec<BTreeMap<i32, i64>> = groups
            .iter()
            .map(|(_, s)| s.view(|g| g.committed.clone()))
            .collect();
        eprintln!("restarting node {node}; the groups' coordinators: {coordinators:?}");
        cluster.restart(node);
        for ((_, s), before) in groups.iter().zip(&committed) {
            s.await_all_members();
            s.await_consumed(100);
            await_commits_past(s, before);
        }
    }

    for (((_, s), ids), rebalances) in groups.iter_mut().zip(&rejoined).zip(rebalances) {
        let name = s.group.clone();
        assert_eq!(
            &member_ids(s),
            ids,
            "{name}: the members' ids after the broker bounce are not the ones they rejoined with"
        );
        let after_bounce = s.num_rebalances() - rebalances;
        eprintln!("{name}: {after_bounce} rebalances during the broker bounce");
        assert_eq!(
            after_bounce, 0,
            "{name}: the broker bounce caused rebalances"
        );
        let ends = s.drain();
        s.stop_all();
        for i in 0..s.members.len() {
            let errors = s.view(|g| g.members[i].errors.clone());
            let stderr = s.stderr(i);
            assert!(
                errors.is_empty() && !stderr.to_lowercase().contains("fenced"),
                "{name}: member {i} was fenced or failed: {errors:?}\n{stderr}"
            );
        }
        let verdict = s.verdict(&ends);
        verdict.assert_clean(&name);
        verdict.assert_committed_all(&name);
    }
}

/// Consumers started one by one, then stopped one by one; the partition stays readable after
/// every rebalance.
#[test]
fn group_consumption() {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, "group", 1);
    s.add_n(3, Impl::Mooring, &flags(RANGE, "6000"));
    s.start_producer(300);
    for i in 0..3 {
        s.start(i);
        s.await_members(i + 1);
        s.await_consumed(100);
    }
    for i in 0..2 {
        s.stop(i, true);
        s.await_members(2 - i);
        s.await_consumed(100);
    }
    let ends = s.drain();
    s.stop(2, true);
    let verdict = s.verdict(&ends);
    verdict.assert_clean("group consumption");
    verdict.assert_committed_all("group consumption");
}

// ---- AssignmentValidationTest --------------------------------------------------------------

fn valid_assignment(name: &str, strategy: &str) {
    const PARTITIONS: u32 = 6;
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, name, PARTITIONS);
    s.add_n(3, Impl::Mooring, &flags(strategy, "6000"));
    for n in 1..=3 {
        s.start(n - 1);
        s.await_members(n);
        wait_blocking(
            &format!("a valid assignment over {n} members ({})", s.describe()),
            Duration::from_secs(30),
            || {
                s.view(|g| {
                    let joined: Vec<&MemberView> = g
                        .members
                        .iter()
                        .filter(|m| m.status == Status::Joined)
                        .collect();
                    let total: usize = joined.iter().map(|m| m.assignment.len()).sum();
                    let union: BTreeSet<i32> = joined
                        .iter()
                        .flat_map(|m| m.assignment.iter().copied())
                        .collect();
                    joined.len() == n
                        && total == PARTITIONS as usize
                        && union.len() == PARTITIONS as usize
                        && joined.iter().all(|m| !m.assignment.is_empty())
                })
            },
        );
    }
    s.stop_all();
    let overlaps = s.view(Global::overlaps);
    let violations = s.view(|g| g.violations.clone());
    assert!(overlaps.is_empty(), "{name}: {overlaps:?}");
    assert!(violations.is_empty(), "{name}: {violations:?}");
}

#[test]
fn valid_assignment_range() {
    valid_assignment("assign-range", RANGE);
}

#[test]
fn valid_assignment_cooperative_sticky() {
    valid_assignment("assign-coop", COOPERATIVE);
}

#[test]
fn valid_assignment_roundrobin_and_sticky() {
    valid_assignment(
        "assign-rr",
        "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    );
    valid_assignment(
        "assign-sticky",
        "org.apache.kafka.clients.consumer.StickyAssignor",
    );
}

/// The cooperative protocol through a rolling bounce: only moving partitions are revoked, and
/// still nothing is lost or duplicated.
#[test]
fn consumer_bounce_rolling_cooperative() {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, "bounce-coop", 3);
    s.add_n(3, Impl::Mooring, &flags(COOPERATIVE, "6000"));
    s.start_producer(300);
    s.start_all();
    s.await_all_members();
    for i in 0..3 {
        s.stop(i, true);
        s.start(i);
        s.await_all_members();
        s.await_consumed(100);
    }
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean("cooperative rolling bounce");
    verdict.assert_committed_all("cooperative rolling bounce");
}

// ---- The event lines themselves -------------------------------------------------------------

/// The JSON shape of a value: objects by key, arrays by their first element, leaves by type.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        Value::Array(items) => Value::Array(items.first().map(shape).into_iter().collect()),
        Value::String(_) => Value::from("string"),
        Value::Number(_) => Value::from("number"),
        Value::Bool(_) => Value::from("bool"),
        Value::Null => Value::from("null"),
    }
}

/// Whether `ours` has every field of `java`, with the same shape (extra fields allowed).
fn covers(ours: &Value, java: &Value) -> bool {
    match (ours, java) {
        (Value::Object(o), Value::Object(j)) => j
            .iter()
            .all(|(k, jv)| o.get(k).is_some_and(|ov| covers(ov, jv))),
        (Value::Array(o), Value::Array(j)) => match (o.first(), j.first()) {
            (Some(ov), Some(jv)) => covers(ov, jv),
            (_, None) => true,
            (None, Some(_)) => false,
        },
        (o, j) => o == j,
    }
}

/// Runs a consumer to `--max-messages` and returns its events by name (first of each).
fn run_to_max(command: &mut Command) -> BTreeMap<String, Value> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut events = BTreeMap::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str::<Value>(&line) {
                let name = event["name"].as_str().unwrap_or_default().to_owned();
                events.entry(name).or_insert(event);
            }
        }
        events
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            kill(&mut child);
            panic!("the consumer did not stop at --max-messages");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status}");
    reader.join().unwrap()
}

/// Ours and Kafka's tool read the same records to `--max-messages`: every event Java prints,
/// ours prints too, with all of Java's fields in the same shapes.
#[test]
fn event_lines_have_javas_names_fields_and_shapes() {
    let cluster = Cluster::shared();
    let topic = unique("vc-shape");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, 40, 4, &[]), 40);
    let args = |group: &str| -> Vec<String> {
        [
            "--bootstrap-server",
            cluster.bootstrap(),
            "--topic",
            &topic,
            "--group-id",
            group,
            "--max-messages",
            "25",
            "--verbose",
            "--session-timeout",
            "6000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let java = run_to_max(
        Command::new(kafka_script())
            .args(["--cluster", cluster.name(), "tool", "VerifiableConsumer"])
            .args(args(&unique("vc-shape-java"))),
    );
    let ours = run_to_max(
        Command::new(env!("CARGO_BIN_EXE_verifiable-consumer"))
            .args(args(&unique("vc-shape-ours"))),
    );
    for name in [
        "startup_complete",
        "partitions_assigned",
        "record_data",
        "records_consumed",
        "offsets_committed",
        "partitions_revoked",
        "shutdown_complete",
    ] {
        assert!(java.contains_key(name), "Java printed no {name}: {java:?}");
    }
    for (name, event) in &java {
        let theirs = shape(event);
        let mine = ours
            .get(name)
            .map(shape)
            .unwrap_or_else(|| panic!("ours printed no {name}: {ours:?}"));
        assert!(
            covers(&mine, &theirs),
            "{name}: ours {mine} vs Java {theirs}"
        );
    }
}
