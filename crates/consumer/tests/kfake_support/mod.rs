//! Helpers of the fault-injection tests on franz-go's kfake (`mooring_testkit::kfake`): one kfake
//! per test, records produced through it (acks=all, so the acknowledged offsets are known), a
//! Mooring consumer in a group on it recording every record handled and every event, and checks
//! that the group ends Stable (the member's view and the broker's, by DescribeGroups) with every
//! acknowledged offset handled and committed.
//!
//! Timeouts are short (kfake answers in microseconds): 3 s sessions, 300 ms heartbeats, 250 ms
//! `retry.backoff.ms`. With `MOORING_KFAKE_TIMELINE` set, each test prints what kfake saw of the
//! consumer (Fetch requests and answers without errors left out) when it stops.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses part of it; a failed unwrap fails the test

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use mooring_client::admin::GroupDescription;
use mooring_client::{Client, ClientConfig};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerConfig, ConsumerError, ConsumerEvent, GroupEventKind};
use mooring_group::{MemberSnapshot, MemberState};
use mooring_testkit::kfake::{Kfake, KfakeConfig, Observed};
use mooring_testkit::unique;
use mooring_wire::messages::{DescribeGroupsRequest, FindCoordinatorRequest, Message};
use tokio::task::JoinHandle;

mod twin;
#[allow(unused_imports)] // used by some of the test binaries only
pub use twin::*;

/// The client id of the consumer under test: kfake's reports are filtered by it.
pub const CLIENT_ID: &str = "mooring-under-test";
/// The client id of the test's own client (DescribeGroups, OffsetFetch).
const ADMIN_CLIENT_ID: &str = "test-admin";
/// DescribeGroups' API key.
const DESCRIBE_GROUPS: i16 = DescribeGroupsRequest::API_KEY;
/// `retry.backoff.ms` of the consumer under test.
pub const BACKOFF: Duration = Duration::from_millis(250);
/// `heartbeat.interval.ms` of the consumer under test.
pub const HEARTBEAT: Duration = Duration::from_millis(300);
/// Records produced to each partition before the consumer starts, and again after each fault.
pub const BATCH: u32 = 20;
/// How long a test waits for anything.
pub const WAIT: Duration = Duration::from_secs(20);

/// The consumer's properties for `kfake`: short timeouts, then `extra` (which wins; a key given
/// with an empty value is left out, e.g. `session.timeout.ms` for `group.protocol=consumer`).
pub fn props(kfake: &Kfake, group: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let bootstrap = kfake.bootstrap();
    let backoff = BACKOFF.as_millis().to_string();
    let heartbeat = HEARTBEAT.as_millis().to_string();
    let mut all: Vec<(String, String)> = [
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", group),
        ("client.id", CLIENT_ID),
        ("session.timeout.ms", "3000"),
        ("heartbeat.interval.ms", heartbeat.as_str()),
        ("max.poll.interval.ms", "5000"),
        ("request.timeout.ms", "5000"),
        ("retry.backoff.ms", backoff.as_str()),
        ("retry.backoff.max.ms", "1000"),
        ("auto.offset.reset", "earliest"),
        ("auto.commit.interval.ms", "200"),
        ("fetch.max.wait.ms", "200"),
        ("partition.assignment.strategy", "range"),
        ("mooring.shutdown.timeout.ms", "3000"),
        ("mooring.revoke.timeout.ms", "3000"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        all.retain(|(key, _)| key != k);
        if !v.is_empty() {
            all.push((k.to_string(), v.to_string()));
        }
    }
    all
}

/// One record handled: when, partition, offset.
type Handled = (SystemTime, i32, i64);

/// A consumer in a group on its own kfake, and what it did.
pub struct Scenario {
    pub kfake: Kfake,
    pub topic: String,
    pub group: String,
    pub partitions: i32,
    pub consumer: Consumer,
    /// Offsets kfake acknowledged, per partition.
    pub acked: BTreeSet<(i32, i64)>,
    handled: Arc<Mutex<Vec<Handled>>>,
    events: Arc<Mutex<Vec<(SystemTime, ConsumerEvent)>>>,
    run: Option<JoinHandle<Result<(), ConsumerError>>>,
    admin: Client,
}

impl Scenario {
    /// kfake with one topic of `partitions`, [`BATCH`] records in each, and a consumer (with
    /// `extra` properties) that has joined, handled them all and committed them.
    pub async fn start(partitions: i32, extra: &[(&str, &str)]) -> Scenario {
        Scenario::start_with(partitions, extra, |_, _, _| {}).await
    }

    /// As [`Scenario::start`], calling `before_join(kfake, topic, group)` before the consumer
    /// starts (to commit offsets, or inject a fault for its first requests).
    pub async fn start_with(
        partitions: i32,
        extra: &[(&str, &str)],
        before_join: impl FnOnce(&Kfake, &str, &str),
    ) -> Scenario {
        Scenario::start_configured(partitions, extra, |c| c, before_join).await
    }

    /// As [`Scenario::start_with`], on a kfake whose config `configure` changes first (broker
    /// configs, more brokers).
    pub async fn start_configured(
        partitions: i32,
        extra: &[(&str, &str)],
        configure: impl FnOnce(KfakeConfig) -> KfakeConfig,
        before_join: impl FnOnce(&Kfake, &str, &str),
    ) -> Scenario {
        let topic = unique("faults");
        let group = unique("faults-group");
        let kfake = Kfake::start(configure(KfakeConfig::new([(
            topic.clone(),
            partitions as u32,
        )])));
        let admin = Client::new(
            ClientConfig::from_properties(
                [
                    ("bootstrap.servers", kfake.bootstrap()),
                    ("client.id", ADMIN_CLIENT_ID.into()),
                    ("retry.backoff.ms", "50".into()),
                ]
                .map(|(k, v)| (k.to_owned(), v)),
            )
            .unwrap(),
        )
        .unwrap();
        let consumer =
            Consumer::new(ConsumerConfig::from_properties(props(&kfake, &group, extra)).unwrap())
                .unwrap();
        let mut scenario = Scenario {
            kfake,
            topic,
            group,
            partitions,
            consumer,
            acked: BTreeSet::new(),
            handled: Arc::default(),
            events: Arc::default(),
            run: None,
            admin,
        };
        scenario.produce(BATCH);
        before_join(&scenario.kfake, &scenario.topic, &scenario.group);
        scenario.run_consumer();
        scenario
    }

    fn run_consumer(&mut self) {
        self.run = Some(spawn_run(
            &self.consumer,
            &self.topic,
            self.handled.clone(),
            self.events.clone(),
        ));
    }

    /// Produces `per_partition` records to every partition; remembers the acknowledged offsets.
    pub fn produce(&mut self, per_partition: u32) {
        for p in 0..self.partitions {
            for offset in self.kfake.produce(&self.topic, p, per_partition) {
                self.acked.insert((p, offset));
            }
        }
    }

    /// The member's current state (panics before `run` started it).
    pub fn member(&self) -> MemberSnapshot {
        self.consumer.member_state().expect("the group member runs")
    }

    /// Every record handled so far (partition, offset), with repeats.
    pub fn handled(&self) -> Vec<(i32, i64)> {
        self.handled
            .lock()
            .unwrap()
            .iter()
            .map(|(_, p, o)| (*p, *o))
            .collect()
    }

    /// Records handled after `t`.
    pub fn handled_after(&self, t: SystemTime) -> usize {
        self.handled
            .lock()
            .unwrap()
            .iter()
            .filter(|(at, _, _)| *at > t)
            .count()
    }

    /// The group member's events so far, with their times.
    pub fn group_events(&self) -> Vec<(SystemTime, GroupEventKind)> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|(at, e)| match e {
                ConsumerEvent::Group(g) => Some((*at, g.kind.clone())),
                _ => None,
            })
            .collect()
    }

    /// The consumer's other events so far, with their times.
    pub fn consumer_events(&self) -> Vec<(SystemTime, ConsumerEvent)> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, e)| !matches!(e, ConsumerEvent::Group(_)))
            .cloned()
            .collect()
    }

    /// What kfake saw of the consumer under test (its own client and the test's admin left out).
    pub fn seen(&self) -> Vec<Observed> {
        self.kfake
            .observed()
            .into_iter()
            .filter(|o| o.client == CLIENT_ID)
            .collect()
    }

    /// Waits until kfake saw something of the consumer matching `pred`; returns the first.
    #[track_caller]
    pub fn wait_seen(&self, what: &str, pred: impl Fn(&Observed) -> bool) -> Observed {
        self.kfake
            .wait_for(what, WAIT, |o| o.client == CLIENT_ID && pred(o))
    }

    /// Asserts that every acknowledged record was handled (for a test whose member does not stay
    /// in the group, so [`Scenario::wait_settled`] cannot check it).
    #[track_caller]
    pub fn assert_all_handled(&self) {
        let handled: BTreeSet<(i32, i64)> = self.handled().into_iter().collect();
        let missing: Vec<_> = self.acked.difference(&handled).collect();
        assert!(missing.is_empty(), "acknowledged, not handled: {missing:?}");
    }

    /// Asserts that no record was handled twice.
    #[track_caller]
    pub fn assert_no_duplicates(&self) {
        let mut times: BTreeMap<(i32, i64), u32> = BTreeMap::new();
        for record in self.handled() {
            *times.entry(record).or_default() += 1;
        }
        let duplicated: Vec<_> = times.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            duplicated.is_empty(),
            "handled more than once: {duplicated:?}"
        );
    }

    /// Waits until the group is Stable with this member alone (its own view and DescribeGroups
    /// at kfake), every acknowledged offset was handled and the committed offsets (OffsetFetch at
    /// kfake) are the partitions' ends. Returns the member's state.
    pub async fn wait_settled(&self) -> MemberSnapshot {
        self.wait_settled_as(true).await
    }

    /// As [`Scenario::wait_settled`] for a consumer-protocol (KIP-848) member, whose group
    /// DescribeGroups does not describe: the member Stable by its own view, every acknowledged
    /// offset handled and the committed offsets the partitions' ends.
    pub async fn wait_settled_consumer_protocol(&self) -> MemberSnapshot {
        self.wait_settled_as(false).await
    }

    async fn wait_settled_as(&self, describe: bool) -> MemberSnapshot {
        let deadline = tokio::time::Instant::now() + WAIT;
        let ends: BTreeMap<i32, i64> = (0..self.partitions)
            .map(|p| {
                let end = self
                    .acked
                    .iter()
                    .filter(|(q, _)| *q == p)
                    .map(|(_, o)| o + 1)
                    .max()
                    .unwrap_or(0);
                (p, end)
            })
            .collect();
        loop {
            let why = self.unsettled(&ends, describe).await;
            let Some(why) = why else {
                return self.member();
            };
            assert!(
                tokio::time::Instant::now() < deadline,
                "the group did not settle within {WAIT:?}: {why}\nmember: {:?}\nevents: {:#?}",
                self.consumer.member_state(),
                self.group_events()
                    .iter()
                    .map(|(_, e)| e)
                    .filter(|e| !matches!(e, GroupEventKind::Heartbeat { error: None, .. }))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Why the group is not settled yet, or `None`.
    async fn unsettled(&self, ends: &BTreeMap<i32, i64>, describe: bool) -> Option<String> {
        let Some(member) = self.consumer.member_state() else {
            return Some("the group member has not started".into());
        };
        if member.state != MemberState::Stable {
            return Some(format!("member state {:?}", member.state));
        }
        let handled: BTreeSet<(i32, i64)> = self.handled().into_iter().collect();
        let missing: Vec<&(i32, i64)> = self.acked.difference(&handled).collect();
        if !missing.is_empty() {
            return Some(format!(
                "{} acknowledged records not handled, e.g. {:?}",
                missing.len(),
                &missing[..missing.len().min(5)]
            ));
        }
        if describe {
            if let Some(why) = self.undescribed(&member).await {
                return Some(why);
            }
        }
        self.uncommitted(ends).await
    }

    /// Why DescribeGroups does not show the group Stable with `member` alone, or `None`.
    async fn undescribed(&self, member: &MemberSnapshot) -> Option<String> {
        let described = match self.admin.describe_group(&self.group).await {
            Ok(d) => d,
            Err(e) => return Some(format!("DescribeGroups failed: {e}")),
        };
        let members: Vec<&str> = described
            .members
            .iter()
            .map(|m| m.member_id.as_str())
            .collect();
        if described.state != "Stable" || members != [member.member_id.as_str()] {
            return Some(format!(
                "kfake describes the group {} with members {members:?} (ours: {})",
                described.state, member.member_id
            ));
        }
        None
    }

    /// Which partition's committed offset is not its end, or `None`.
    async fn uncommitted(&self, ends: &BTreeMap<i32, i64>) -> Option<String> {
        let committed = match self.admin.committed_offsets(&self.group, None).await {
            Ok(c) => c,
            Err(e) => return Some(format!("OffsetFetch failed: {e}")),
        };
        for (p, end) in ends {
            let at = committed
                .get(&mooring_client::TopicPartition::new(self.topic.clone(), *p))
                .map(|c| c.offset);
            if at != Some(*end) {
                return Some(format!(
                    "partition {p} committed at {at:?}, its end is {end}"
                ));
            }
        }
        None
    }

    /// Shuts the consumer down; `run` must end without an error.
    pub async fn stop(mut self) {
        if std::env::var_os("MOORING_KFAKE_TIMELINE").is_some() {
            let seen = self.seen();
            let start = seen.first().map_or(0, |o| o.at_micros);
            println!("{}", timeline(&seen, start));
        }
        if let Err(e) = self.shutdown().await {
            panic!("run ended with an error: {e}");
        }
    }

    /// Shuts the consumer down and returns what `run` returned.
    pub async fn shutdown(&mut self) -> Result<(), ConsumerError> {
        self.consumer.shutdown_handle().shutdown();
        self.run_ended().await
    }

    /// Waits (up to [`WAIT`]) for `run` to return, and returns what it returned.
    pub async fn run_ended(&mut self) -> Result<(), ConsumerError> {
        let run = self.run.take().expect("running");
        tokio::time::timeout(WAIT, run)
            .await
            .expect("run returns")
            .expect("run task")
    }

    /// Waits until the member reported an event after `after` (µs) matching `pred`; returns the
    /// first, with its time in µs.
    pub async fn wait_group_event(
        &self,
        what: &str,
        after: i64,
        pred: impl Fn(&GroupEventKind) -> bool,
    ) -> (i64, GroupEventKind) {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let found = self
                .group_events()
                .into_iter()
                .map(|(at, e)| (micros(at), e))
                .find(|(at, e)| *at > after && pred(e));
            if let Some(found) = found {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no event of the member within {WAIT:?}: {what}\nevents: {:#?}",
                self.group_events()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until kfake has reported everything it answered the consumer so far. kfake reports
    /// what it sees in order, each answer before it goes out, and the reports reach the test
    /// through a pipe: once a DescribeGroups of the test's admin sent now is reported, so is
    /// every answer the consumer already read (after `run` returned: every answer it had).
    pub async fn catch_up(&self) {
        let now = micros(SystemTime::now());
        self.described().await;
        self.kfake
            .wait_for("the admin's DescribeGroups reported", WAIT, |o| {
                o.client == ADMIN_CLIENT_ID && o.is_response(DESCRIBE_GROUPS) && o.at_micros > now
            });
    }

    /// How kfake describes the group now (DescribeGroups).
    pub async fn described(&self) -> GroupDescription {
        self.admin.describe_group(&self.group).await.unwrap()
    }
}

/// Subscribes `consumer` to `topic` and runs it, recording every record handled and every event.
fn spawn_run(
    consumer: &Consumer,
    topic: &str,
    handled: Arc<Mutex<Vec<Handled>>>,
    events: Arc<Mutex<Vec<(SystemTime, ConsumerEvent)>>>,
) -> JoinHandle<Result<(), ConsumerError>> {
    if let Some(mut rx) = consumer.events() {
        tokio::spawn(async move {
            while let Some(e) = rx.recv().await {
                let at = match &e {
                    ConsumerEvent::Group(g) => g.at,
                    _ => SystemTime::now(),
                };
                events.lock().unwrap().push((at, e));
            }
        });
    }
    consumer.subscribe([topic]).unwrap();
    let consumer = consumer.clone();
    tokio::spawn(async move {
        consumer
            .run(move |record: ConsumerRecord| {
                let handled = handled.clone();
                async move {
                    handled.lock().unwrap().push((
                        SystemTime::now(),
                        record.partition(),
                        record.offset(),
                    ));
                    Ok::<(), String>(())
                }
            })
            .await
    })
}

/// The requests of API `key` in `seen`.
pub fn requests(seen: &[Observed], key: i16) -> Vec<&Observed> {
    seen.iter().filter(|o| o.is_request(key)).collect()
}

/// The first response (whole or cut) of API `key` carrying error `code`, and the request it
/// answered (same connection and correlation id).
pub fn answered_with(seen: &[Observed], key: i16, code: i16) -> Option<(Observed, Observed)> {
    let resp = seen
        .iter()
        .find(|o| o.key == key && o.kind == "resp" && o.carries(code))?;
    let req = seen
        .iter()
        .find(|o| o.kind == "req" && o.conn == resp.conn && o.corr == resp.corr)?;
    Some((req.clone(), resp.clone()))
}

/// The time between two observations (0 if `later` is not later).
/// Asserts whether the consumer looked its coordinator up again (a FindCoordinator request)
/// between `from` and `to`, as `expected`; the timeline since `from` in the failure.
#[track_caller]
pub fn assert_rediscovery(
    seen: &[Observed],
    from: &Observed,
    to: &Observed,
    expected: bool,
    what: &str,
) {
    let find = FindCoordinatorRequest::API_KEY;
    let found = !between(seen, from.at_micros, to.at_micros, |o| o.is_request(find)).is_empty();
    assert_eq!(
        found,
        expected,
        "FindCoordinator before {what}: expected {expected}\n{}",
        timeline(seen, from.at_micros)
    );
}

pub fn gap(earlier: &Observed, later: &Observed) -> Duration {
    Duration::from_micros(u64::try_from(later.at_micros - earlier.at_micros).unwrap_or(0))
}

/// A readable list of what kfake saw between two times (for assertion messages).
pub fn timeline(seen: &[Observed], from_micros: i64) -> String {
    seen.iter()
        .filter(|o| o.at_micros >= from_micros && !(o.kind == "req" && o.api == "Fetch"))
        .filter(|o| !(o.kind == "resp" && o.api == "Fetch" && o.entity_errors().is_empty()))
        .map(|o| {
            format!(
                "{:>8} µs {:<7} {:<15} conn {:<3} {}",
                o.at_micros - from_micros,
                o.kind,
                o.api,
                o.conn,
                brief(o)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn brief(o: &Observed) -> String {
    let mut parts = Vec::new();
    if let Some(m) = o.member() {
        parts.push(format!("member {m:?}"));
    }
    if let Some(g) = o.generation() {
        parts.push(format!("gen {g}"));
    }
    if let Some(e) = o.error() {
        if e != 0 {
            parts.push(format!("err {e}"));
        }
    }
    let errs = o.entity_errors();
    if !errs.is_empty() {
        parts.push(format!("errs {errs:?}"));
    }
    parts.join(" ")
}

/// A time as microseconds since the Unix epoch (kfake's clock in [`Observed::at_micros`]).
pub fn micros(t: SystemTime) -> i64 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// Clock slack allowed when checking that a back-off was waited (the client sleeps at least the
/// back-off after reading the response kfake timed just before writing it).
pub const SLACK: Duration = Duration::from_millis(5);

/// How late a reaction may come after the wait it is due at, on a loaded 2-core machine: the
/// timer firing, the member's task being scheduled, and kfake (answering in microseconds) seeing
/// the request. A reaction that waits a different back-off (the doubled one, or an interval)
/// falls outside.
pub const LATE: Duration = Duration::from_millis(500);

/// Whether `waited` is a wait due from `due` to `latest`: not shorter than `due` (less
/// [`SLACK`]), not later than [`LATE`] past `latest`.
pub fn waited_for(waited: Duration, due: Duration, latest: Duration) -> bool {
    waited + SLACK >= due && waited <= latest + LATE
}

/// The first observation after `after` (µs) matching `pred`.
pub fn first_after(
    seen: &[Observed],
    after: i64,
    pred: impl Fn(&Observed) -> bool,
) -> Option<&Observed> {
    seen.iter().find(|o| o.at_micros > after && pred(o))
}

/// The observations strictly between `from` and `to` (µs) matching `pred`.
pub fn between(
    seen: &[Observed],
    from: i64,
    to: i64,
    pred: impl Fn(&Observed) -> bool,
) -> Vec<&Observed> {
    seen.iter()
        .filter(|o| o.at_micros > from && o.at_micros < to && pred(o))
        .collect()
}

impl Scenario {
    /// Waits until kfake answered a request of API `key` of the consumer with `code` (whole or
    /// cut); returns the request and the response.
    #[track_caller]
    pub fn wait_answered(&self, key: i16, code: i16) -> (Observed, Observed) {
        self.wait_seen(&format!("API {key} answered with error {code}"), |o| {
            o.key == key && o.kind == "resp" && o.carries(code)
        });
        answered_with(&self.seen(), key, code).expect("the answer's request was reported first")
    }

    /// Waits until kfake saw a request of API `key` after `after` (µs) matching `pred`; returns
    /// it.
    #[track_caller]
    pub fn wait_request_after(
        &self,
        what: &str,
        key: i16,
        after: i64,
        pred: impl Fn(&Observed) -> bool,
    ) -> Observed {
        self.wait_seen(what, |o| {
            o.is_request(key) && o.at_micros > after && pred(o)
        })
    }
}
