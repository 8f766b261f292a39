//! The scenario driver: a topic and a share group on the shared cluster, `verifiable-share-consumer`
//! processes (ours, Kafka's Java tool, or the librdkafka peer in its shape) in the group, Kafka's `VerifiableProducer` writing, every
//! event line read into [`Global`], and the end-of-scenario [`Verdict`]. Every child process is
//! killed when its scenario is dropped, pass or fail.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mooring_testkit::{
    kafka_script, peer_python, unique, wait_blocking, BackgroundProducer, Cluster,
};
use serde_json::Value;

use crate::events::{End, Global, Inc, Key, MemberView, Status};

/// The group's record lock: long enough that no record is held past it on a loaded machine,
/// short enough that what a killed member held comes back within a scenario.
const LOCK_MS: &str = "10000";

/// Which `verifiable-share-consumer` a member runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Impl {
    Mooring,
    Java,
    /// tests/peers/verifiable_share_consumer.py: librdkafka's share consumer (a preview in
    /// librdkafka 2.16) through PyPI confluent-kafka.
    Librdkafka,
}

/// A member's process.
pub struct Member {
    pub imp: Impl,
    pub child: Option<Child>,
    pub reader: Option<JoinHandle<()>>,
    pub stderr: Arc<Mutex<String>>,
}

/// One scenario: a topic, a share group, its members and a producer. Dropping it kills every
/// process it started.
pub struct Scenario<'c> {
    pub name: String,
    pub cluster: &'c Cluster,
    pub topic: String,
    pub group: String,
    /// The `--command-config` file every member reads.
    pub config: PathBuf,
    pub members: Vec<Member>,
    pub global: Arc<Mutex<Global>>,
    pub producer: Option<BackgroundProducer>,
    /// (partition, offset) of every record the broker acknowledged to the producer, once it
    /// stopped.
    pub acked: Vec<Key>,
    pub started: Instant,
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

impl Drop for Scenario<'_> {
    fn drop(&mut self) {
        for member in &mut self.members {
            if let Some(child) = member.child.as_mut() {
                kill(child);
            }
        }
        drop(self.producer.take());
        let _ = std::fs::remove_file(&self.config);
    }
}

impl<'c> Scenario<'c> {
    /// A topic of `partitions` partitions and a share group with 500 ms heartbeats, 6 s
    /// sessions and a 10 s record lock (members set `share.auto.offset.reset` themselves, with
    /// `--offset-reset-strategy earliest`, as Kafka's test does), with `imps` members (not
    /// started).
    pub fn new(cluster: &'c Cluster, name: &str, partitions: u32, imps: &[Impl]) -> Self {
        let topic = unique(&format!("vsc-{name}"));
        let group = unique(&format!("vsc-{name}-g"));
        cluster.create_topic(&topic, partitions);
        cluster.set_group_config(
            &group,
            &[
                ("share.heartbeat.interval.ms", "500"),
                ("share.session.timeout.ms", "6000"),
                ("share.record.lock.duration.ms", LOCK_MS),
            ],
        );
        let config = std::env::temp_dir().join(format!("{group}.properties"));
        // Read by both implementations (Java's tool gives the file to its admin client too).
        std::fs::write(&config, "retry.backoff.ms=100\n").unwrap();
        let mut global = Global::new(&topic);
        let members = imps
            .iter()
            .map(|imp| {
                global.members.push(MemberView::new());
                Member {
                    imp: *imp,
                    child: None,
                    reader: None,
                    stderr: Arc::new(Mutex::new(String::new())),
                }
            })
            .collect();
        Scenario {
            name: name.to_owned(),
            cluster,
            topic,
            group,
            config,
            members,
            global: Arc::new(Mutex::new(global)),
            producer: None,
            acked: Vec::new(),
            started: Instant::now(),
        }
    }

    fn command(&self, imp: Impl) -> Command {
        let mut command = match imp {
            Impl::Mooring => Command::new(env!("CARGO_BIN_EXE_verifiable-share-consumer")),
            Impl::Java => {
                let mut c = Command::new(kafka_script());
                c.args([
                    "--cluster",
                    self.cluster.name(),
                    "tool",
                    "VerifiableShareConsumer",
                ]);
                c
            }
            Impl::Librdkafka => {
                let mut c = Command::new(peer_python());
                c.arg(
                    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                        .join("../../tests/peers/verifiable_share_consumer.py"),
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
                "--offset-reset-strategy",
                "earliest",
                "--acknowledgement-mode",
                "auto",
                "--command-config",
            ])
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Starts member `i` (a new incarnation).
    pub fn start(&mut self, i: usize) {
        assert!(self.members[i].child.is_none(), "member {i} is running");
        let mut child = self.command(self.members[i].imp).spawn().unwrap();
        let inc: Inc = {
            let mut global = self.global.lock().unwrap();
            let view = &mut global.members[i];
            view.incarnation += 1;
            view.consumed_now = 0;
            view.status = Status::Starting;
            (i, view.incarnation)
        };
        let stdout = child.stdout.take().unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let global = Arc::clone(&self.global);
        // Every member's event lines, prefixed with the member's incarnation.
        let trace = mooring_testkit::scenario_events_file(&self.group);
        let reader = std::thread::spawn(move || {
            let mut trace = trace;
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(file) = trace.as_mut() {
                    use std::io::Write;
                    let _ = writeln!(file, "{}.{} {line}", inc.0, inc.1);
                }
                if let Ok(event) = serde_json::from_str::<Value>(&line) {
                    global.lock().unwrap().handle(inc, &event);
                }
            }
        });
        let errors = Arc::clone(&self.members[i].stderr);
        // ... and each incarnation's stderr in DIR/GROUP-MEMBER.INCARNATION.err.
        let stderr_file = std::env::var_os("MOORING_SCENARIO_EVENTS")
            .map(|dir| PathBuf::from(dir).join(format!("{}-{}.{}.err", self.group, inc.0, inc.1)));
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            if let Some(path) = stderr_file {
                let _ = std::fs::write(path, &text);
            }
            let mut errors = errors.lock().unwrap();
            errors.push_str(&format!("--- incarnation {} ---\n", inc.1));
            errors.push_str(&text);
        });
        self.members[i].child = Some(child);
        self.members[i].reader = Some(reader);
    }

    pub fn start_all(&mut self) {
        for i in 0..self.members.len() {
            self.start(i);
        }
    }

    /// SIGTERM (`clean`: the member acknowledges what it reported and leaves) or SIGKILL, then
    /// waits for the process and its last line.
    pub fn stop(&mut self, i: usize, clean: bool) {
        let member = &mut self.members[i];
        let Some(mut child) = member.child.take() else {
            return;
        };
        if clean {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
        } else {
            let _ = child.kill();
        }
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
        let view = &mut global.members[i];
        let incarnation = view.incarnation;
        view.ends
            .insert(incarnation, if clean { End::Clean } else { End::Killed });
        if clean && view.status != Status::Dead {
            global.violations.push(format!(
                "member {i} stopped cleanly without shutdown_complete"
            ));
        }
        global.members[i].status = Status::Dead;
    }

    /// Every running member stopped cleanly, all signalled first.
    pub fn stop_all(&mut self) {
        let running: Vec<usize> = (0..self.members.len())
            .filter(|i| self.members[*i].child.is_some())
            .collect();
        for &i in &running {
            if let Some(child) = &self.members[i].child {
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status();
            }
        }
        for i in running {
            self.stop(i, true);
        }
    }

    pub fn view<T>(&self, f: impl FnOnce(&Global) -> T) -> T {
        f(&self.global.lock().unwrap())
    }

    fn running(&self) -> usize {
        self.members.iter().filter(|m| m.child.is_some()).count()
    }

    /// Every running member said `startup_complete` (`await_all_members`).
    pub fn await_all_members(&self) {
        let n = self.running();
        wait_blocking(
            &format!("{n} members started ({})", self.describe()),
            Duration::from_secs(45),
            || {
                self.view(|g| {
                    g.members
                        .iter()
                        .filter(|m| m.status == Status::Started)
                        .count()
                }) == n
            },
        );
    }

    /// At least `n` more records reported consumed, by anyone (`await_consumed_messages`).
    pub fn await_consumed(&self, n: u64) {
        let from = self.view(Global::total_consumed);
        wait_blocking(
            &format!("{n} more records consumed ({})", self.describe()),
            Duration::from_secs(45),
            || self.view(Global::total_consumed) >= from + n,
        );
    }

    /// Member `i`'s current incarnation has consumed something
    /// (`await_consumed_messages_by_a_consumer`).
    pub fn await_consumed_by(&self, i: usize) {
        wait_blocking(
            &format!("member {i} consumed ({})", self.describe()),
            Duration::from_secs(45),
            || self.view(|g| g.members[i].consumed_now > 0),
        );
    }

    pub fn describe(&self) -> String {
        self.view(|g| {
            g.members
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    format!(
                        "#{i} {:?}.{} {:?} consumed {} acknowledged {}/failed {}",
                        self.members[i].imp,
                        m.incarnation,
                        m.status,
                        m.consumed,
                        m.acknowledged,
                        m.acknowledged_failed
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        })
    }

    /// Kafka's VerifiableProducer writing `count` records (`None`: until stopped) at `rate` a
    /// second, spread over the partitions in turn (the default sticky partitioner fills one
    /// partition for a while at such rates, and a member of a share-partition without records
    /// has nothing to show).
    pub fn start_producer(&mut self, count: Option<u64>, rate: u32) {
        self.producer = Some(self.cluster.spawn_verifiable_producer(
            &self.topic,
            count,
            rate,
            &[(
                "partitioner.class",
                "org.apache.kafka.clients.producer.RoundRobinPartitioner",
            )],
        ));
    }

    /// Waits until a producer of a given count has written it all.
    pub fn await_producer_done(&self) {
        let producer = self.producer.as_ref().expect("a producer");
        wait_blocking(
            &format!(
                "the producer done ({} acknowledged; {})",
                producer.acked_count(),
                self.describe()
            ),
            Duration::from_secs(60),
            || producer.is_finished(),
        );
    }

    /// Stops the producer, then waits until every record it had acknowledged is accepted, or
    /// was handed to a member killed before it said (in doubt), and the broker says the group
    /// has nothing left to deliver (its share lag is 0 on every partition).
    pub fn drain(&mut self) {
        if let Some(producer) = self.producer.take() {
            self.acked = producer.stop();
        }
        assert!(
            !self.acked.is_empty(),
            "the producer had nothing acknowledged"
        );
        let acked = self.acked.clone();
        wait_blocking(
            &format!(
                "all {} acknowledged records accepted or in doubt ({})",
                acked.len(),
                self.describe()
            ),
            Duration::from_secs(60),
            || {
                self.view(|g| {
                    acked
                        .iter()
                        .all(|k| g.accepted.contains_key(k) || in_doubt(g, k))
                })
            },
        );
        let ends = self.cluster.end_offsets(&self.topic);
        let deadline = Instant::now() + Duration::from_secs(45);
        loop {
            let lag = share_lag(self.cluster, &self.group, &self.topic);
            let settled = ends
                .iter()
                .all(|(p, end)| *end == 0 || lag.get(p) == Some(&Some(0)));
            if settled {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the share group's lag did not reach 0: {lag:?} (log ends {ends:?}; {})",
                self.describe()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// The end-of-scenario verdict (every member stopped).
    pub fn verdict(&self) -> Verdict {
        let acked: BTreeSet<Key> = self.acked.iter().copied().collect();
        let imps: Vec<Impl> = self.members.iter().map(|m| m.imp).collect();
        let mut v = self.view(|g| judge(g, &acked, &imps));
        v.seconds = self.started.elapsed().as_secs();
        v
    }

    /// Every member's stderr, for a failed verdict.
    pub fn stderr(&self) -> String {
        self.members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                format!(
                    "=== member {i} ({:?}) ===\n{}",
                    m.imp,
                    m.stderr.lock().unwrap()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Handed to an incarnation that was killed, and no acknowledgement of it seen: the broker may
/// have taken the acknowledgement before the kill.
fn in_doubt(g: &Global, key: &Key) -> bool {
    g.deliveries.get(key).is_some_and(|d| {
        d.iter()
            .any(|(m, inc)| g.members[*m].ends.get(inc) == Some(&End::Killed))
    })
}

/// `ShareGroupCommand --describe --offsets`: each partition's LAG (`None` for `-`: no state).
fn share_lag(cluster: &Cluster, group: &str, topic: &str) -> BTreeMap<i32, Option<i64>> {
    let out = cluster.tool(
        "org.apache.kafka.tools.consumer.group.ShareGroupCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--describe",
            "--group",
            group,
            "--offsets",
        ],
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            match cols.as_slice() {
                [g, t, partition, _start, lag] if *g == group && *t == topic => {
                    Some((partition.parse().ok()?, lag.parse().ok()))
                }
                _ => None,
            }
        })
        .collect()
}

/// What the scenario's event lines add up to.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Records the producer had acknowledged.
    pub acked: usize,
    pub total_consumed: u64,
    pub total_acknowledged: u64,
    /// Acknowledged records accepted exactly once.
    pub accepted_once: usize,
    /// Records the broker took an acknowledgement of twice (must be none).
    pub accepted_twice: Vec<Key>,
    /// Acknowledged records nobody accepted and no killed member held (must be none).
    pub lost: Vec<Key>,
    /// Acknowledged records whose only acceptance may have been a killed member's (the broker's
    /// lag of 0 says it took them).
    pub in_doubt: usize,
    /// Deliveries beyond a record's first.
    pub redelivered: u64,
    /// Deliveries that ended without the broker taking their acknowledgement, by why: the
    /// member was killed; the answer said it failed (the lock ran out, or refused); a Java or
    /// librdkafka member stopped cleanly between a poll and its acknowledgement (their `auto`
    /// mode acknowledges a poll at the next).
    pub unaccepted_killed: u64,
    pub unaccepted_refused: u64,
    pub unaccepted_peer_clean_stop: u64,
    /// Deliveries to our members, stopped cleanly, whose acknowledgement never got an answer
    /// (neither taken nor refused) and which came again: the consumer dropped the verdict and
    /// the broker handed the record out again when its lock ran out (seen for records a fetch
    /// brought of a share-partition revoked while it was in flight).
    pub ours_unanswered_redelivered: u64,
    pub ours_unanswered_examples: Vec<String>,
    /// The same, for records that never came again (must be none: ours acknowledges every
    /// record it reports before it exits, and a record without an answer comes again).
    pub ours_unanswered_at_clean_stop: Vec<String>,
    /// Errors of the failed acknowledgements, counted.
    pub refusals: BTreeMap<String, u64>,
    pub violations: Vec<String>,
    /// Every member's consumed and acknowledged counts (Kafka's test wants each above 0).
    pub per_member: Vec<(u64, u64)>,
    pub seconds: u64,
}

fn judge(g: &Global, acked: &BTreeSet<Key>, imps: &[Impl]) -> Verdict {
    let mut v = Verdict {
        acked: acked.len(),
        total_consumed: g.total_consumed(),
        total_acknowledged: g.total_acknowledged(),
        violations: g.violations.clone(),
        per_member: g
            .members
            .iter()
            .map(|m| (m.consumed, m.acknowledged))
            .collect(),
        ..Verdict::default()
    };
    let keys: BTreeSet<Key> = g.deliveries.keys().chain(acked).copied().collect();
    for key in keys {
        let deliveries = g.deliveries.get(&key).map_or(&[][..], Vec::as_slice);
        let accepted = g.accepted.get(&key).map_or(&[][..], Vec::as_slice);
        let refused = g.refused.get(&key).map_or(&[][..], Vec::as_slice);
        v.redelivered += deliveries.len().saturating_sub(1) as u64;
        if accepted.len() > 1 {
            v.accepted_twice.push(key);
        }
        if acked.contains(&key) {
            if accepted.len() == 1 {
                v.accepted_once += 1;
            } else if accepted.is_empty() {
                if in_doubt(g, &key) {
                    v.in_doubt += 1;
                } else {
                    v.lost.push(key);
                }
            }
        }
        for (_, error) in refused {
            *v.refusals.entry(error.clone()).or_default() += 1;
        }
        // Each incarnation's deliveries of the record, less those answered.
        let mut by_inc: BTreeMap<Inc, i64> = BTreeMap::new();
        for inc in deliveries {
            *by_inc.entry(*inc).or_default() += 1;
        }
        for inc in accepted {
            *by_inc.entry(*inc).or_default() -= 1;
        }
        for (inc, _) in refused {
            if by_inc.get(inc).is_some_and(|n| *n > 0) {
                *by_inc.entry(*inc).or_default() -= 1;
                v.unaccepted_refused += 1;
            }
        }
        for ((member, incarnation), unanswered) in by_inc {
            if unanswered <= 0 {
                continue;
            }
            let unanswered = unanswered.unsigned_abs();
            match (g.members[member].ends.get(&incarnation), imps[member]) {
                (Some(End::Killed), _) => v.unaccepted_killed += unanswered,
                (Some(End::Clean), Impl::Java | Impl::Librdkafka) => {
                    v.unaccepted_peer_clean_stop += unanswered;
                }
                (Some(End::Clean), Impl::Mooring) => {
                    let what = format!("{key:?}: member {member}.{incarnation} (x{unanswered})");
                    if deliveries.len() > 1 {
                        v.ours_unanswered_redelivered += unanswered;
                        if v.ours_unanswered_examples.len() < 10 {
                            v.ours_unanswered_examples.push(what);
                        }
                    } else {
                        v.ours_unanswered_at_clean_stop.push(what);
                    }
                }
                (None, _) => v.violations.push(format!(
                    "{key:?}: member {member}.{incarnation} still running at the verdict"
                )),
            }
        }
    }
    v
}

impl Verdict {
    /// Nothing lost, nothing accepted twice, every delivery beyond a record's first explained
    /// (its member was killed, its acknowledgement failed, or a Java or librdkafka member stopped
    /// between a poll and its acknowledgement), every line as the tool's contract says.
    pub fn assert_sound(&self, what: &str) {
        eprintln!(
            "{what}: {} acknowledged by the producer, {} accepted once, {} in doubt, 0 lost; \
             {} consumed, {} redelivered (after a kill {}, after a failed acknowledgement {}, \
             after a peer's clean stop {}, after our verdict got no answer {}); {} s",
            self.acked,
            self.accepted_once,
            self.in_doubt,
            self.total_consumed,
            self.redelivered,
            self.unaccepted_killed,
            self.unaccepted_refused,
            self.unaccepted_peer_clean_stop,
            self.ours_unanswered_redelivered,
            self.seconds
        );
        eprintln!("{what}: {self:?}");
        assert!(self.violations.is_empty(), "{what}: {:?}", self.violations);
        assert!(
            self.acked > 0,
            "{what}: the producer had nothing acknowledged"
        );
        assert!(
            self.lost.is_empty(),
            "{what}: {} records lost: {:?}",
            self.lost.len(),
            self.lost.iter().take(20).collect::<Vec<_>>()
        );
        assert!(
            self.accepted_twice.is_empty(),
            "{what}: accepted twice: {:?}",
            self.accepted_twice
        );
        assert!(
            self.ours_unanswered_at_clean_stop.is_empty(),
            "{what}: our members stopped cleanly without an answer to records they reported: {:?}",
            self.ours_unanswered_at_clean_stop
        );
        assert_eq!(
            self.accepted_once + self.in_doubt,
            self.acked,
            "{what}: every acknowledged record accepted once (or in doubt)"
        );
    }

    /// As Kafka's test: no kill, so every record accepted exactly once, and each member both
    /// consumed and acknowledged something.
    pub fn assert_all_accepted_once(&self, what: &str) {
        self.assert_sound(what);
        assert_eq!(self.in_doubt, 0, "{what}: in doubt without a kill");
        assert_eq!(
            self.total_acknowledged as usize, self.acked,
            "{what}: total acknowledged successfully == records acknowledged to the producer"
        );
        assert!(
            self.total_consumed as usize >= self.acked,
            "{what}: total consumed < acknowledged by the producer"
        );
    }

    pub fn assert_every_member_worked(&self, what: &str) {
        for (i, (consumed, acknowledged)) in self.per_member.iter().enumerate() {
            assert!(
                *consumed > 0 && *acknowledged > 0,
                "{what}: member {i} consumed {consumed} and acknowledged {acknowledged}"
            );
        }
    }
}
