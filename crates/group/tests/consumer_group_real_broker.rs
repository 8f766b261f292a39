//! The `consumer`-protocol member (KIP-848) against the real broker (`scripts/kafka`), through the
//! real `Client`: a member alone gets every partition; a second one takes half and the first
//! revokes only what moves; a dynamic member leaving (-1) hands everything to the other; a static
//! member closing (-2) keeps its partitions for its successor; a second process with a live
//! instance id waits (UNRELEASED_INSTANCE_ID) and takes over once the first closes; a member whose
//! heartbeats stop past the session timeout is fenced, loses its partitions and rejoins, and so
//! does one whose group was deleted meanwhile (GROUP_ID_NOT_FOUND); a commit
//! with the member epoch is accepted and read back.
//!
//! Each test has a group and a topic of its own and sets the group's heartbeat interval and
//! session timeout (the broker's dynamic group configs, with Kafka's ConfigCommand; the test
//! broker's minimums are 500 ms and 1 s). Heartbeats stop only through [`Blocking`], a wrapper of
//! the real client that refuses to send them: fault injection, the broker is real.
//! Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-group --test consumer_group_real_broker`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_client::config::ClientConfig;
use mooring_client::CoordinatorCall;
use mooring_client::{Client, Error, Result};
use mooring_group::assignor::PartitionsPerTopic;
use mooring_group::GroupTransport;
use mooring_group::{
    ConsumerMemberState, GroupConfig, GroupEvent, GroupEventKind, GroupHandle, GroupMember,
    MemberSnapshot, OffsetAndMetadata, RebalanceCause, RebalanceListener, TopicPartition,
};
use mooring_testkit::{unique, Cluster};
use mooring_wire::messages::{OffsetCommitRequest, Request};
use mooring_wire::primitives::Uuid;
use tokio::time::Instant;

const PARTITIONS: i32 = 6;

async fn client(cluster: &Cluster) -> Client {
    let mut config = ClientConfig::new(cluster.bootstrap().split(','));
    config.client_id = "mooring-kip848-test".into();
    Client::connect(config).await.unwrap()
}

/// Creates `topic` and waits until the broker's metadata lists every partition.
async fn create_topic(cluster: &Cluster, topic: &str) {
    cluster.create_topic(topic, PARTITIONS as u32);
    let transport = client(cluster).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let topics = [topic.to_string()];
    while transport
        .partition_counts(&topics)
        .await
        .ok()
        .and_then(|counts| counts.get(topic).copied())
        != Some(PARTITIONS)
    {
        assert!(
            Instant::now() < deadline,
            "{topic}: not in metadata in 30 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Sets the group's heartbeat interval and session timeout on the broker (KIP-848 group configs),
/// before any member joins.
fn group_timeouts(cluster: &Cluster, group: &str, session_ms: u32) {
    let session = session_ms.to_string();
    cluster.set_group_config(
        group,
        &[
            ("consumer.heartbeat.interval.ms", "500"),
            ("consumer.session.timeout.ms", &session),
        ],
    );
}

fn config(group: &str, instance: Option<&str>) -> GroupConfig {
    GroupConfig::from_properties([
        ("group.id", group),
        ("group.protocol", "consumer"),
        ("group.instance.id", instance.unwrap_or("")),
        ("max.poll.interval.ms", "20000"),
        ("retry.backoff.ms", "100"),
    ])
    .unwrap()
}

/// The real client, with ConsumerGroupHeartbeat refused while `blocked` (as if the network to the
/// coordinator were cut for heartbeats alone), and the OffsetCommits it sends recorded.
struct Blocking {
    inner: Client,
    blocked: AtomicBool,
    commits: Arc<Mutex<Vec<(i32, String)>>>,
}

impl std::fmt::Debug for Blocking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Blocking")
    }
}

impl GroupTransport for Blocking {
    fn call_coordinator_with<R, F>(
        &self,
        group: &str,
        call: CoordinatorCall,
        build: F,
    ) -> impl Future<Output = Result<R::Response>> + Send
    where
        R: Request + Send + 'static,
        R::Response: Send + 'static,
        F: FnOnce(i16) -> R + Send,
    {
        let refused = R::API_KEY == 68 && self.blocked.load(Ordering::SeqCst);
        let commits = Arc::clone(&self.commits);
        let build = move |version: i16| {
            let request = build(version);
            if let Some(commit) = (&request as &dyn Any).downcast_ref::<OffsetCommitRequest>() {
                commits.lock().unwrap().push((
                    commit.generation_id_or_member_epoch,
                    commit.member_id.clone(),
                ));
            }
            request
        };
        let group = group.to_owned();
        async move {
            if refused {
                return Err(Error::Disconnected {
                    broker: "the coordinator (heartbeats blocked by the test)".into(),
                });
            }
            self.inner.call_coordinator_with(&group, call, build).await
        }
    }

    fn request_timeout(&self) -> Duration {
        GroupTransport::request_timeout(&self.inner)
    }

    fn principal(&self) -> String {
        GroupTransport::principal(&self.inner)
    }

    fn forget_coordinator(&self, group: &str) {
        self.inner.forget_coordinator(group)
    }

    fn partition_counts(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<BTreeMap<String, i32>>> + Send {
        self.inner.partition_counts(topics)
    }

    fn partitions_per_topic(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<PartitionsPerTopic>> + Send {
        self.inner.partitions_per_topic(topics)
    }

    fn topic_ids(
        &self,
        topics: &[String],
        refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<String, Uuid>>> + Send {
        self.inner.topic_ids(topics, refresh)
    }

    fn topic_names(
        &self,
        ids: &[Uuid],
        refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<Uuid, String>>> + Send {
        self.inner.topic_names(ids, refresh)
    }

    fn coordinator_version<R>(&self, group: &str) -> impl Future<Output = Result<i16>> + Send
    where
        R: Request + Send + 'static,
    {
        self.inner.coordinator_version::<R>(group)
    }
}

/// What the listener was told, in order.
#[derive(Debug, Default)]
struct Calls(Mutex<Vec<(&'static str, BTreeSet<TopicPartition>)>>);

impl Calls {
    fn of(&self, kind: &str) -> BTreeSet<TopicPartition> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| *k == kind)
            .flat_map(|(_, p)| p.iter().cloned())
            .collect()
    }

    fn push(&self, kind: &'static str, p: Vec<TopicPartition>) {
        self.0.lock().unwrap().push((kind, p.into_iter().collect()));
    }
}

/// The member's listener: records into [`Calls`].
struct Recording(Arc<Calls>);

impl RebalanceListener for Recording {
    async fn revoked(&self, p: Vec<TopicPartition>) {
        self.0.push("revoked", p);
    }
    async fn assigned(&self, p: Vec<TopicPartition>) {
        self.0.push("assigned", p);
    }
    async fn lost(&self, p: Vec<TopicPartition>) {
        self.0.push("lost", p);
    }
}

/// A member on a client of its own, with its listener calls and its events.
struct Member {
    handle: GroupHandle<Blocking>,
    transport: Arc<Blocking>,
    calls: Arc<Calls>,
    events: Arc<Mutex<Vec<GroupEvent>>>,
}

impl Member {
    async fn spawn(cluster: &Cluster, group: &str, instance: Option<&str>) -> Member {
        let transport = Arc::new(Blocking {
            inner: client(cluster).await,
            blocked: AtomicBool::new(false),
            commits: Arc::default(),
        });
        let calls = Arc::new(Calls::default());
        let handle = GroupMember::spawn(
            Arc::clone(&transport),
            config(group, instance),
            Recording(calls.clone()),
        )
        .unwrap();
        let mut rx = handle.take_events().unwrap();
        let events: Arc<Mutex<Vec<GroupEvent>>> = Arc::default();
        let sink = Arc::clone(&events);
        tokio::spawn(async move {
            while let Some(e) = rx.recv().await {
                sink.lock().unwrap().push(e);
            }
        });
        Member {
            handle,
            transport,
            calls,
            events,
        }
    }

    fn owned(&self) -> BTreeSet<TopicPartition> {
        self.handle.assignment()
    }

    fn events_matching(&self, f: impl Fn(&GroupEventKind) -> bool) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| f(&e.kind))
            .count()
    }

    /// Waits (≤ 30 s) until `n` events match `f` (they reach the test through a task of its own).
    async fn await_events(&self, n: usize, what: &str, f: impl Fn(&GroupEventKind) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.events_matching(&f) < n {
            assert!(
                Instant::now() < deadline,
                "{what}: {:#?}",
                self.events.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn whole(topic: &str) -> BTreeSet<TopicPartition> {
    (0..PARTITIONS)
        .map(|p| TopicPartition::new(topic, p))
        .collect()
}

/// Waits (≤ `limit`) until `done` holds of the members' snapshots; returns them.
async fn until(
    members: &[&Member],
    limit: Duration,
    what: &str,
    done: impl Fn(&[MemberSnapshot]) -> bool,
) -> Vec<MemberSnapshot> {
    let deadline = Instant::now() + limit;
    loop {
        let snaps: Vec<MemberSnapshot> = members.iter().map(|m| m.handle.state()).collect();
        if done(&snaps) {
            return snaps;
        }
        assert!(
            Instant::now() < deadline,
            "{what} not reached in {limit:?}: {snaps:#?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Every member stable, their assignments disjoint and covering the topic.
fn settled(topic: &str) -> impl Fn(&[MemberSnapshot]) -> bool + '_ {
    move |snaps| {
        let all: Vec<&TopicPartition> = snaps.iter().flat_map(|s| s.assignment.iter()).collect();
        let distinct: BTreeSet<TopicPartition> = all.iter().map(|tp| (*tp).clone()).collect();
        snaps
            .iter()
            .all(|s| s.consumer_state == Some(ConsumerMemberState::Stable))
            && all.len() == distinct.len()
            && distinct == whole(topic)
    }
}

/// Lets `a`'s heartbeats through again, then waits (≤ 30 s each) until it has lost every
/// partition and is settled again under the same member id; returns its snapshots then.
async fn unblock_then_lost_and_rejoined(
    s: &Setup,
    a: &Member,
    member_id: &str,
    what: &str,
) -> Vec<MemberSnapshot> {
    a.transport.blocked.store(false, Ordering::SeqCst);
    let deadline = Instant::now() + Duration::from_secs(30);
    while a.calls.of("lost") != whole(&s.topic) {
        assert!(Instant::now() < deadline, "{what}: {:?}", a.handle.state());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    until(&[a], Duration::from_secs(30), "a rejoined", |snaps| {
        settled(&s.topic)(snaps) && snaps[0].member_id == member_id
    })
    .await
}

struct Setup {
    cluster: Cluster,
    group: String,
    topic: String,
}

async fn setup(name: &str, session_ms: u32) -> Setup {
    let cluster = Cluster::shared();
    let topic = unique(name);
    let group = unique(name);
    create_topic(&cluster, &topic).await;
    group_timeouts(&cluster, &group, session_ms);
    Setup {
        cluster,
        group,
        topic,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_alone_gets_every_partition() {
    let s = setup("kip848-alone", 6000).await;
    let a = Member::spawn(&s.cluster, &s.group, None).await;
    a.handle.subscribe([s.topic.clone()]).await.unwrap();
    let snaps = until(
        &[&a],
        Duration::from_secs(60),
        "one member",
        settled(&s.topic),
    )
    .await;
    assert!(snaps[0].generation > 0, "the member epoch: {snaps:?}");
    assert_eq!(a.calls.of("assigned"), whole(&s.topic));
    a.await_events(1, "reconciled", |k| {
        matches!(k, GroupEventKind::Reconciled { .. })
    })
    .await;
    a.handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_member_takes_half_and_the_first_revokes_only_what_moves() {
    let s = setup("kip848-second", 6000).await;
    let a = Member::spawn(&s.cluster, &s.group, None).await;
    a.handle.subscribe([s.topic.clone()]).await.unwrap();
    until(&[&a], Duration::from_secs(60), "a alone", settled(&s.topic)).await;
    let b = Member::spawn(&s.cluster, &s.group, None).await;
    b.handle.subscribe([s.topic.clone()]).await.unwrap();
    let snaps = until(&[&a, &b], Duration::from_secs(60), "two members", |snaps| {
        settled(&s.topic)(snaps) && snaps.iter().all(|s| !s.assignment.is_empty())
    })
    .await;
    let (kept, moved) = (&snaps[0].assignment, &snaps[1].assignment);
    let revoked = a.calls.of("revoked");
    assert_eq!(&revoked, moved, "a revoked exactly what b got");
    assert!(revoked.len() < PARTITIONS as usize, "never everything");
    assert!(kept.is_disjoint(&revoked));
    assert_eq!(a.calls.of("lost"), BTreeSet::new());
    for m in [&a, &b] {
        m.handle.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamic_member_leaving_hands_everything_to_the_other() {
    let s = setup("kip848-leave", 6000).await;
    let a = Member::spawn(&s.cluster, &s.group, None).await;
    let b = Member::spawn(&s.cluster, &s.group, None).await;
    for m in [&a, &b] {
        m.handle.subscribe([s.topic.clone()]).await.unwrap();
    }
    until(&[&a, &b], Duration::from_secs(60), "two members", |snaps| {
        settled(&s.topic)(snaps) && snaps.iter().all(|s| !s.assignment.is_empty())
    })
    .await;
    b.handle.close().await.unwrap();
    b.await_events(1, "left with -1", |k| {
        matches!(
            k,
            GroupEventKind::Left {
                sent_leave_group: true,
                error: None
            }
        )
    })
    .await;
    // A few heartbeat intervals (500 ms), far below the session timeout (6 s).
    let left_at = Instant::now();
    until(
        &[&a],
        Duration::from_secs(5),
        "a owning everything",
        settled(&s.topic),
    )
    .await;
    assert!(left_at.elapsed() < Duration::from_secs(5));
    a.handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_static_member_closing_keeps_its_partitions_for_its_successor() {
    let s = setup("kip848-static", 20_000).await;
    let instance = unique("pod");
    let a = Member::spawn(&s.cluster, &s.group, Some(&instance)).await;
    let b = Member::spawn(&s.cluster, &s.group, None).await;
    for m in [&a, &b] {
        m.handle.subscribe([s.topic.clone()]).await.unwrap();
    }
    let snaps = until(&[&a, &b], Duration::from_secs(60), "two members", |snaps| {
        settled(&s.topic)(snaps) && snaps.iter().all(|s| !s.assignment.is_empty())
    })
    .await;
    let held = snaps[0].assignment.clone();
    a.handle.close().await.unwrap(); // epoch -2
                                     // For several seconds (the session timeout is 20 s) nobody gets them.
    let watch_until = Instant::now() + Duration::from_secs(4);
    while Instant::now() < watch_until {
        assert!(
            b.owned().is_disjoint(&held),
            "b took a static member's partitions: {:?}",
            b.owned()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The restarted process, same instance id, takes them back.
    let a2 = Member::spawn(&s.cluster, &s.group, Some(&instance)).await;
    a2.handle.subscribe([s.topic.clone()]).await.unwrap();
    let snaps = until(
        &[&a2, &b],
        Duration::from_secs(30),
        "a's successor",
        settled(&s.topic),
    )
    .await;
    assert_eq!(snaps[0].assignment, held, "the same partitions back");
    assert_eq!(a2.calls.of("assigned"), held);
    for m in [&a2, &b] {
        m.handle.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_process_with_a_live_instance_id_waits_then_takes_over() {
    let s = setup("kip848-unreleased", 20_000).await;
    let instance = unique("pod");
    let first = Member::spawn(&s.cluster, &s.group, Some(&instance)).await;
    first.handle.subscribe([s.topic.clone()]).await.unwrap();
    until(
        &[&first],
        Duration::from_secs(60),
        "the first",
        settled(&s.topic),
    )
    .await;
    let second = Member::spawn(&s.cluster, &s.group, Some(&instance)).await;
    second.handle.subscribe([s.topic.clone()]).await.unwrap();
    second
        .await_events(3, "UNRELEASED_INSTANCE_ID retries", |k| {
            matches!(
                k,
                GroupEventKind::InstanceIdUnreleased {
                    retry_in: Some(_),
                    ..
                }
            )
        })
        .await;
    assert_eq!(
        second.handle.state().consumer_state,
        Some(ConsumerMemberState::InstanceIdUnreleased)
    );
    assert!(second.handle.state().failure.is_none());
    assert_eq!(
        first.owned(),
        whole(&s.topic),
        "the first keeps its partitions meanwhile"
    );
    first.handle.close().await.unwrap(); // -2: releases the instance id
    until(
        &[&second],
        Duration::from_secs(30),
        "the second",
        settled(&s.topic),
    )
    .await;
    second.handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_silent_past_its_session_is_fenced_loses_and_rejoins() {
    let s = setup("kip848-fenced", 2000).await;
    let a = Member::spawn(&s.cluster, &s.group, None).await;
    a.handle.subscribe([s.topic.clone()]).await.unwrap();
    let before = until(&[&a], Duration::from_secs(60), "a", settled(&s.topic)).await;
    a.transport.blocked.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(5)).await; // past the 2 s session timeout
    assert_eq!(
        a.calls.of("lost"),
        BTreeSet::new(),
        "nothing lost while merely unheard"
    );
    let after = unblock_then_lost_and_rejoined(&s, &a, &before[0].member_id, "not fenced").await;
    assert!(after[0].generation > 0);
    a.await_events(1, "a rebalance for the fencing", |k| {
        matches!(
            k,
            GroupEventKind::RebalanceStarted {
                cause: RebalanceCause::EpochFenced,
                ..
            }
        )
    })
    .await;
    a.handle.close().await.unwrap();
}

/// The group deleted while its only member was silent past its session (the coordinator's periodic
/// clean-up removes an empty group without offsets; here Kafka's ConsumerGroupCommand --delete does
/// it on purpose): the member's next heartbeat is answered GROUP_ID_NOT_FOUND, and the member loses
/// its partitions and rejoins at epoch 0, which recreates the group, instead of failing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_whose_group_was_deleted_while_it_was_silent_rejoins_and_recreates_it() {
    let s = setup("kip848-deleted", 2000).await;
    let a = Member::spawn(&s.cluster, &s.group, None).await;
    a.handle.subscribe([s.topic.clone()]).await.unwrap();
    let before = until(&[&a], Duration::from_secs(60), "a", settled(&s.topic)).await;
    a.transport.blocked.store(true, Ordering::SeqCst);
    // The session expires, the group empties; then it can be deleted (NON_EMPTY_GROUP until then).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = s.cluster.tool(
            "ConsumerGroupCommand",
            &[
                "--bootstrap-server",
                s.cluster.bootstrap(),
                "--delete",
                "--group",
                &s.group,
            ],
        );
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() && said.contains("successful") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the group was not deleted in 60 s: {said} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert_eq!(s.cluster.group_state(&s.group), None, "the group is gone");
    let after = unblock_then_lost_and_rejoined(
        &s,
        &a,
        &before[0].member_id,
        "not told its membership is gone",
    )
    .await;
    assert!(after[0].failure.is_none(), "{:?}", after[0].failure);
    let group = s
        .cluster
        .group_state(&s.group)
        .expect("the group exists again");
    assert_eq!(
        (group.state.as_str(), group.members),
        ("Stable", 1),
        "{group:?}"
    );
    a.handle.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_carries_the_member_epoch_and_is_read_back() {
    let s = setup("kip848-commit", 6000).await;
    let a = Member::spawn(&s.cluster, &s.group, None).await;
    a.handle.subscribe([s.topic.clone()]).await.unwrap();
    let snaps = until(&[&a], Duration::from_secs(60), "a", settled(&s.topic)).await;
    let offsets: BTreeMap<TopicPartition, OffsetAndMetadata> = whole(&s.topic)
        .into_iter()
        .map(|tp| {
            let offset = i64::from(tp.partition) * 10 + 3;
            (tp, OffsetAndMetadata::new(offset))
        })
        .collect();
    a.handle.commit(offsets.clone()).await.unwrap();
    let commits = a.transport.commits.lock().unwrap().clone();
    let epoch = a.handle.state().generation;
    assert_eq!(
        commits.last().unwrap(),
        &(epoch, snaps[0].member_id.clone())
    );
    let read = a.handle.committed(offsets.keys().cloned()).await.unwrap();
    for (tp, om) in &offsets {
        assert_eq!(read[tp].as_ref().map(|r| r.offset), Some(om.offset), "{tp}");
    }
    let theirs = s.cluster.committed_offsets(&s.group, &s.topic);
    assert_eq!(
        theirs.get(&1).copied().flatten(),
        Some(13),
        "Kafka's view: {theirs:?}"
    );
    a.handle.close().await.unwrap();
}

/// On Kafka 4 the consumer protocol runs; on a 3.x broker (the compatibility phase: 3.9.1 and
/// 3.7.2 offer no ConsumerGroupHeartbeat unless its preview is turned on) the member fails at once
/// with a typed error that says to use classic, and sends nothing more: no retry loop.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_consumer_protocol_runs_on_kafka_4_and_is_refused_clearly_by_older_brokers() {
    let cluster = Cluster::shared();
    // What the broker says (its group.coordinator.rebalance.protocols), not its release string.
    let protocol_on = cluster.supports_consumer_protocol();
    let topic = unique("kip848-support");
    let group = unique("kip848-support");
    create_topic(&cluster, &topic).await;
    let a = Member::spawn(&cluster, &group, None).await;
    a.handle.subscribe([topic.clone()]).await.unwrap();
    if protocol_on {
        until(
            &[&a],
            Duration::from_secs(60),
            "one member",
            settled(&topic),
        )
        .await;
        a.handle.close().await.unwrap();
        return;
    }
    let snaps = until(&[&a], Duration::from_secs(10), "a failed member", |s| {
        s[0].consumer_state == Some(ConsumerMemberState::Fatal)
    })
    .await;
    let failure = snaps[0].failure.clone().expect("the failure is kept");
    assert!(
        matches!(*failure, Error::ConsumerProtocolUnsupported { .. }),
        "{failure:?}"
    );
    assert!(failure.to_string().contains("use classic"), "{failure}");
    // Nothing is retried: the member stays failed and no heartbeat goes out.
    let heartbeats = a.events_matching(|k| matches!(k, GroupEventKind::Heartbeat { .. }));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        a.handle.state().consumer_state,
        Some(ConsumerMemberState::Fatal)
    );
    assert_eq!(
        a.events_matching(|k| matches!(k, GroupEventKind::Heartbeat { .. })),
        heartbeats
    );
}
