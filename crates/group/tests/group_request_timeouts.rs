//! Group requests are timed by the rebalance, not by `request.timeout.ms`, against the real
//! broker (`scripts/kafka`).
//!
//! The coordinator may hold a JoinGroup until every member has rejoined, up to the rebalance
//! timeout. Here `request.timeout.ms` is 5 s and one member's `revoked` listener takes 12 s, so the
//! other member's follow-up JoinGroup of a cooperative rebalance is held about 12 s. It must be
//! answered (no `RebalanceFailed`, one `RebalanceCompleted` per member for that generation), and
//! the member's commits, sent all the while, must all succeed on a connection nobody tore down.
//!
//! Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-group --test group_request_timeouts`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_client::config::ClientConfig;
use mooring_client::Client;
use mooring_group::{
    EventReceiver, GroupConfig, GroupEventKind, GroupHandle, GroupMember, MemberSnapshot,
    MemberState, NoopListener, OffsetAndMetadata, RebalanceListener, TopicPartition,
};
use mooring_testkit::{unique, Cluster};
use tokio::time::Instant;

const PARTITIONS: i32 = 6;
const REQUEST_TIMEOUT: Duration = Duration::from_millis(5_000);
const SLOW_REVOKE: Duration = Duration::from_secs(12);

/// One Client per member (as each consumer has its own), with `request.timeout.ms` 5000.
async fn client(cluster: &Cluster) -> Arc<Client> {
    let mut config = ClientConfig::new(cluster.bootstrap().split(','));
    config.client_id = "mooring-timeouts-test".into();
    config.request_timeout = REQUEST_TIMEOUT;
    Arc::new(Client::connect(config).await.unwrap())
}

/// The rebalance timeout (`max.poll.interval.ms`, 30 s) is well above the slow revoke, so the
/// coordinator keeps waiting for the slow member rather than dropping it.
fn config(group: &str) -> GroupConfig {
    GroupConfig::from_properties([
        ("group.id", group),
        ("session.timeout.ms", "10000"),
        ("heartbeat.interval.ms", "500"),
        ("max.poll.interval.ms", "30000"),
        ("retry.backoff.ms", "100"),
        ("partition.assignment.strategy", "cooperative-sticky"),
    ])
    .unwrap()
}

/// A `revoked` listener that takes [`SLOW_REVOKE`] whenever it is given partitions.
#[derive(Debug, Clone, Default)]
struct SlowRevoke {
    revokes: Arc<Mutex<Vec<Vec<TopicPartition>>>>,
}

impl RebalanceListener for SlowRevoke {
    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        if partitions.is_empty() {
            return;
        }
        self.revokes.lock().unwrap().push(partitions);
        tokio::time::sleep(SLOW_REVOKE).await;
    }
    async fn assigned(&self, _: Vec<TopicPartition>) {}
    async fn lost(&self, _: Vec<TopicPartition>) {}
}

type Timeline = Arc<Mutex<Vec<(Instant, GroupEventKind)>>>;

/// Collects a member's events with the instant each arrived.
fn collect(mut events: EventReceiver) -> Timeline {
    let timeline: Timeline = Arc::default();
    let out = Arc::clone(&timeline);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            out.lock().unwrap().push((Instant::now(), event.kind));
        }
    });
    timeline
}

/// Waits until every member is Stable in one generation, each owns something, and together they
/// own every partition once; returns the snapshots.
async fn settle(members: &[&GroupHandle<Client>], topic: &str) -> Vec<MemberSnapshot> {
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let snaps: Vec<MemberSnapshot> = members.iter().map(|m| m.state()).collect();
        let generations: BTreeSet<i32> = snaps.iter().map(|s| s.generation).collect();
        let owned: Vec<&TopicPartition> = snaps.iter().flat_map(|s| s.assignment.iter()).collect();
        let distinct: BTreeSet<&TopicPartition> = owned.iter().copied().collect();
        let complete = (0..PARTITIONS).all(|p| distinct.contains(&TopicPartition::new(topic, p)));
        if snaps
            .iter()
            .all(|s| s.state == MemberState::Stable && !s.assignment.is_empty())
            && generations.len() == 1
            && owned.len() == distinct.len()
            && complete
        {
            return snaps;
        }
        assert!(
            Instant::now() < deadline,
            "group did not settle: {snaps:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One commit of the loop: when it was sent, when it returned, what it returned.
type CommitLog = Arc<Mutex<Vec<(Instant, Instant, Result<(), String>)>>>;

/// Commits `member`'s whole assignment every 200 ms until `stop`, once its assignment has shrunk
/// below `before` (the partitions it gives up in the first round are not committed: a commit that
/// straddles their revocation fails by design, whatever the timeouts).
fn commit_loop(
    member: GroupHandle<Client>,
    before: BTreeSet<TopicPartition>,
    stop: Arc<AtomicBool>,
) -> (CommitLog, tokio::task::JoinHandle<()>) {
    let log: CommitLog = Arc::default();
    let out = Arc::clone(&log);
    let task = tokio::spawn(async move {
        let mut rx = member.watch_state();
        let kept = rx
            .wait_for(|s| s.assignment.len() < before.len() && !s.assignment.is_empty())
            .await
            .unwrap()
            .assignment
            .clone();
        let mut offset = 0;
        while !stop.load(Ordering::SeqCst) {
            offset += 1;
            let offsets: BTreeMap<TopicPartition, OffsetAndMetadata> = kept
                .iter()
                .map(|tp| (tp.clone(), OffsetAndMetadata::new(offset)))
                .collect();
            let sent = Instant::now();
            let result = member.commit(offsets).await.map_err(|e| e.to_string());
            out.lock().unwrap().push((sent, Instant::now(), result));
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    (log, task)
}

/// Per generation, how many `RebalanceCompleted` a timeline has.
fn completed_per_generation(timeline: &[(Instant, GroupEventKind)]) -> BTreeMap<i32, usize> {
    let mut out = BTreeMap::new();
    for (_, kind) in timeline {
        if let GroupEventKind::RebalanceCompleted { generation, .. } = kind {
            *out.entry(*generation).or_default() += 1;
        }
    }
    out
}

fn failures(timeline: &[(Instant, GroupEventKind)]) -> Vec<String> {
    timeline
        .iter()
        .filter_map(|(_, kind)| match kind {
            GroupEventKind::RebalanceFailed { error, .. } => Some(error.clone()),
            GroupEventKind::Commit {
                error: Some(error), ..
            } => Some(format!("commit: {error}")),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_held_past_the_request_timeout_completes_once_and_commits_go_on() {
    let cluster = Cluster::shared();
    let topic = unique("timeouts");
    let group = unique("g-timeouts");
    cluster.create_topic(&topic, PARTITIONS as u32);

    let a_client = client(&cluster).await;
    let a = GroupMember::spawn(Arc::clone(&a_client), config(&group), NoopListener).unwrap();
    let slow = SlowRevoke::default();
    let b = GroupMember::spawn(client(&cluster).await, config(&group), slow.clone()).unwrap();
    let mut a_events = a.take_events().unwrap();
    let mut b_events = b.take_events().unwrap();
    a.subscribe([topic.clone()]).await.unwrap();
    b.subscribe([topic.clone()]).await.unwrap();
    let before = settle(&[&a, &b], &topic).await;
    // Events from here on: the group of two formed without a slow revoke (b had nothing yet).
    while a_events.try_recv().is_ok() {}
    while b_events.try_recv().is_ok() {}
    let a_timeline = collect(a_events);
    let b_timeline = collect(b_events);
    slow.revokes.lock().unwrap().clear();
    // a's connections from here on: the general one to the coordinator (opened now if its first
    // heartbeat has not yet) and the group one (opened by its first JoinGroup).
    a_client.coordinator_connection(&group).await.unwrap();
    let connections_before = a_client.connection_attempts();

    // A third member joins: a and b each give up a partition in the first round; b's revoke takes
    // 12 s, and a's follow-up JoinGroup waits for b's at the coordinator.
    let stop = Arc::new(AtomicBool::new(false));
    let (commits, committer) =
        commit_loop(a.clone(), before[0].assignment.clone(), Arc::clone(&stop));
    let c = GroupMember::spawn(client(&cluster).await, config(&group), NoopListener).unwrap();
    let c_timeline = collect(c.take_events().unwrap());
    c.subscribe([topic.clone()]).await.unwrap();
    let after = settle(&[&a, &b, &c], &topic).await;
    stop.store(true, Ordering::SeqCst);
    committer.await.unwrap();
    assert!(
        !slow.revokes.lock().unwrap().is_empty(),
        "b was given a slow revoke"
    );

    let a_timeline = a_timeline.lock().unwrap().clone();
    let b_timeline = b_timeline.lock().unwrap().clone();
    let c_timeline = c_timeline.lock().unwrap().clone();
    let joins: Vec<(Instant, i32, Duration)> = a_timeline
        .iter()
        .filter_map(|(at, kind)| match kind {
            GroupEventKind::Joined {
                generation,
                join_time,
                ..
            } => Some((*at, *generation, *join_time)),
            _ => None,
        })
        .collect();
    let commits = commits.lock().unwrap().clone();
    eprintln!(
        "a's joins (generation, join time): {:?}",
        joins.iter().map(|(_, g, t)| (g, t)).collect::<Vec<_>>()
    );
    eprintln!(
        "a: {} commits, {} failed; a's failures: {:?}; b's: {:?}; c's: {:?}",
        commits.len(),
        commits.iter().filter(|(_, _, r)| r.is_err()).count(),
        failures(&a_timeline),
        failures(&b_timeline),
        failures(&c_timeline),
    );
    eprintln!(
        "a's connection attempts during the rebalance: {}",
        a_client.connection_attempts() - connections_before
    );

    // No failed rebalance, no failed commit, on any member.
    let timelines = [("a", &a_timeline), ("b", &b_timeline), ("c", &c_timeline)];
    for (name, timeline) in timelines {
        assert_eq!(
            failures(timeline),
            Vec::<String>::new(),
            "{name}'s failures"
        );
    }

    // a's follow-up JoinGroup was held past request.timeout.ms, and answered.
    let &(held_until, held_generation, held_for) =
        joins.iter().max_by_key(|(_, _, t)| *t).expect("a joined");
    assert!(
        held_for > REQUEST_TIMEOUT,
        "a's longest join took {held_for:?}, not past the request timeout"
    );
    assert_eq!(
        after[0].generation, held_generation,
        "the held join's generation is the last"
    );

    // The held rebalance completed once on every member, as did every other.
    for (name, timeline) in timelines {
        let completed = completed_per_generation(timeline);
        assert_eq!(
            completed.get(&held_generation),
            Some(&1),
            "{name} completed generation {held_generation} once: {completed:?}"
        );
        assert!(
            completed.values().all(|n| *n == 1),
            "{name}: one completion per generation: {completed:?}"
        );
    }

    // a kept committing while its JoinGroup was held, and every commit succeeded.
    let held_from = held_until - held_for;
    let during = commits
        .iter()
        .filter(|(sent, done, _)| *sent < held_until && *done > held_from)
        .count();
    assert!(during >= 3, "{during} commits overlapped the held join");
    let failed: Vec<&String> = commits
        .iter()
        .filter_map(|(_, _, r)| r.as_ref().err())
        .collect();
    assert!(failed.is_empty(), "commits failed: {failed:?}");
    // Nothing of a's was torn down and remade.
    assert_eq!(a_client.connection_attempts(), connections_before);

    for m in [&a, &b, &c] {
        m.close().await.unwrap();
    }
}
