//! The group member against the real broker (`scripts/kafka`), through the real `Client`:
//! our members alone for every assignor, static membership (restart within the session timeout,
//! two processes with one instance id), cooperative rebalances that move only what must move.
//! Assignments are checked against Kafka's own view (`ConsumerGroupCommand --describe --members`),
//! offsets against `--describe --offsets`; a member follows its coordinator to another node of a
//! three-node cluster.
//!
//! The tests run on a multi-threaded runtime: Kafka's tools run as blocking child processes (a JVM
//! each, seconds on a loaded machine), and on a single-threaded runtime they would hold up the
//! members' heartbeats past the session timeout.
//! Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-group --test group_real_broker`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mooring_client::config::ClientConfig;
use mooring_client::Client;
use mooring_group::{
    GroupConfig, GroupEventKind, GroupHandle, GroupMember, MemberSnapshot, MemberState,
    NoopListener, OffsetAndMetadata, RebalanceListener, TopicPartition,
};
use mooring_testkit::{unique, Cluster};
use mooring_wire::messages::OffsetCommitRequest;

const PARTITIONS: i32 = 12;

async fn client(cluster: &Cluster) -> Arc<Client> {
    let mut config = ClientConfig::new(cluster.bootstrap().split(','));
    config.client_id = "mooring-group-test".into();
    Arc::new(Client::connect(config).await.unwrap())
}

/// Creates `topic` with [`PARTITIONS`] partitions and waits until the broker's metadata lists
/// them all. KRaft answers CreateTopics once the controller has the topic; the broker's own
/// metadata can follow a moment later, and a leader assigning before then assigns nothing and,
/// with no consumer runtime here to tell it of the topic's arrival (`metadata_changed`), never
/// rejoins.
async fn create_topic(cluster: &Cluster, topic: &str) {
    cluster.create_topic(topic, PARTITIONS as u32);
    let transport = client(cluster).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let topics = [topic.to_string()];
    while transport
        .partition_counts(&topics)
        .await
        .ok()
        .and_then(|counts| counts.get(topic).copied())
        != Some(PARTITIONS)
    {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{topic}: not in the broker's metadata 30 s after its creation"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn config(group: &str, strategy: &str, instance: Option<&str>) -> GroupConfig {
    GroupConfig::from_properties([
        ("group.id", group),
        ("group.instance.id", instance.unwrap_or("")),
        ("session.timeout.ms", "6000"),
        ("heartbeat.interval.ms", "1000"),
        ("max.poll.interval.ms", "20000"),
        ("retry.backoff.ms", "100"),
        ("partition.assignment.strategy", strategy),
    ])
    .unwrap()
}

/// One Client per member: the broker answers one connection's requests in order, so a JoinGroup
/// it holds would block every other member sharing that connection.
async fn spawn(
    cluster: &Cluster,
    group: &str,
    strategy: &str,
    instance: Option<&str>,
) -> GroupHandle<Client> {
    let member = GroupMember::spawn(
        client(cluster).await,
        config(group, strategy, instance),
        NoopListener,
    )
    .unwrap();
    member
}

/// Waits until every member is Stable in one generation and their assignments cover the topic
/// exactly once; returns the snapshots.
async fn settle(members: &[&GroupHandle<Client>], topic: &str) -> Vec<MemberSnapshot> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let snaps: Vec<MemberSnapshot> = members.iter().map(|m| m.state()).collect();
        let generations: BTreeSet<i32> = snaps.iter().map(|s| s.generation).collect();
        let all: Vec<&TopicPartition> = snaps.iter().flat_map(|s| s.assignment.iter()).collect();
        let distinct: BTreeSet<&TopicPartition> = all.iter().copied().collect();
        let complete = (0..PARTITIONS).all(|p| distinct.contains(&TopicPartition::new(topic, p)));
        if snaps.iter().all(|s| s.state == MemberState::Stable)
            && generations.len() == 1
            && all.len() == distinct.len()
            && complete
        {
            return snaps;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "group did not settle: {snaps:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Kafka's view (ConsumerGroupCommand) of member id → partitions, for `topic`.
fn kafka_view(cluster: &Cluster, group: &str, topic: &str) -> BTreeMap<String, BTreeSet<i32>> {
    cluster
        .describe_members(group)
        .into_iter()
        .map(|m| {
            let parts = m.assignment.get(topic).cloned().unwrap_or_default();
            (m.consumer_id, parts.into_iter().collect())
        })
        .collect()
}

/// As [`settle`], and Kafka's view agrees. A cooperative member is Stable with its old assignment
/// while its `revoked` listener runs (it still owns those partitions until it returns, then rejoins),
/// so "every member Stable in one generation, covering the topic" can hold for a moment before the
/// follow-up rebalance; the coordinator's view (what SyncGroup handed out) tells the two apart.
async fn settle_agreed(
    cluster: &Cluster,
    group: &str,
    members: &[&GroupHandle<Client>],
    topic: &str,
) -> Vec<MemberSnapshot> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        let snaps = settle(members, topic).await;
        let ours: BTreeMap<String, BTreeSet<i32>> = snaps
            .iter()
            .map(|s| {
                (
                    s.member_id.clone(),
                    s.assignment.iter().map(|tp| tp.partition).collect(),
                )
            })
            .collect();
        let theirs = kafka_view(cluster, group, topic);
        let now: Vec<MemberSnapshot> = members.iter().map(|m| m.state()).collect();
        if theirs == ours && now == snaps {
            return snaps;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "Kafka sees {theirs:?}, we have {ours:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn three_members_settle(strategy: &str) {
    let cluster = Cluster::shared();
    let topic = unique("group-three");
    let group = unique("g-three");
    create_topic(&cluster, &topic).await;
    let a = spawn(&cluster, &group, strategy, None).await;
    let b = spawn(&cluster, &group, strategy, None).await;
    let c = spawn(&cluster, &group, strategy, None).await;
    for m in [&a, &b, &c] {
        m.subscribe([topic.clone()]).await.unwrap();
    }
    let snaps = settle_agreed(&cluster, &group, &[&a, &b, &c], &topic).await;
    assert!(snaps
        .iter()
        .all(|s| s.protocol_name.as_deref() == Some(strategy)));
    assert_eq!(snaps.iter().filter(|s| s.is_leader()).count(), 1);
    for m in [&a, &b, &c] {
        m.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_range() {
    three_members_settle("range").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_roundrobin() {
    three_members_settle("roundrobin").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_sticky() {
    three_members_settle("sticky").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_members_cooperative_sticky() {
    three_members_settle("cooperative-sticky").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperative_fourth_member_revokes_only_what_moves() {
    let cluster = Cluster::shared();
    let topic = unique("group-coop");
    let group = unique("g-coop");
    create_topic(&cluster, &topic).await;
    let members: Vec<GroupHandle<Client>> = vec![
        spawn(&cluster, &group, "cooperative-sticky", None).await,
        spawn(&cluster, &group, "cooperative-sticky", None).await,
        spawn(&cluster, &group, "cooperative-sticky", None).await,
    ];
    let mut events: Vec<_> = members.iter().map(|m| m.take_events().unwrap()).collect();
    for m in &members {
        m.subscribe([topic.clone()]).await.unwrap();
    }
    let before = settle_agreed(
        &cluster,
        &group,
        &members.iter().collect::<Vec<_>>(),
        &topic,
    )
    .await;
    for rx in &mut events {
        while rx.try_recv().is_ok() {}
    }
    let fourth = spawn(&cluster, &group, "cooperative-sticky", None).await;
    fourth.subscribe([topic.clone()]).await.unwrap();
    let mut all: Vec<&GroupHandle<Client>> = members.iter().collect();
    all.push(&fourth);
    let after = settle_agreed(&cluster, &group, &all, &topic).await;
    assert_eq!(after[3].assignment.len(), 3, "{after:#?}");
    for (i, rx) in events.iter_mut().enumerate() {
        let mut revoked = BTreeSet::new();
        while let Ok(e) = rx.try_recv() {
            if let GroupEventKind::PartitionsRevoked { partitions, .. } = e.kind {
                revoked.extend(partitions);
            }
        }
        let moved: BTreeSet<TopicPartition> = before[i]
            .assignment
            .difference(&after[i].assignment)
            .cloned()
            .collect();
        assert_eq!(revoked, moved, "member {i} revoked only what moved");
        assert!(
            after[i].assignment.is_subset(&before[i].assignment),
            "member {i} gained nothing"
        );
    }
    for m in all {
        m.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_member_restart_keeps_generation_and_assignment() {
    let cluster = Cluster::shared();
    let topic = unique("group-static");
    let group = unique("g-static");
    create_topic(&cluster, &topic).await;
    let a = spawn(&cluster, &group, "range", Some("static-a")).await;
    let b = spawn(&cluster, &group, "range", Some("static-b")).await;
    a.subscribe([topic.clone()]).await.unwrap();
    b.subscribe([topic.clone()]).await.unwrap();
    let before = settle(&[&a, &b], &topic).await;
    // Restart b within the session timeout: close sends no LeaveGroup for a static member.
    b.close().await.unwrap();
    let b2 = spawn(&cluster, &group, "range", Some("static-b")).await;
    b2.subscribe([topic.clone()]).await.unwrap();
    let after = settle(&[&a, &b2], &topic).await;
    assert_eq!(after[0].generation, before[0].generation, "no rebalance");
    assert_eq!(after[1].assignment, before[1].assignment);
    assert_eq!(after[0].assignment, before[0].assignment);
    a.leave().await.unwrap();
    b2.leave().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_members_with_one_instance_id_the_older_is_fenced() {
    let cluster = Cluster::shared();
    let topic = unique("group-fenced");
    let group = unique("g-fenced");
    create_topic(&cluster, &topic).await;
    let old = spawn(&cluster, &group, "range", Some("twin")).await;
    let mut old_events = old.take_events().unwrap();
    old.subscribe([topic.clone()]).await.unwrap();
    settle(&[&old], &topic).await;
    let new = spawn(&cluster, &group, "range", Some("twin")).await;
    new.subscribe([topic.clone()]).await.unwrap();
    settle(&[&new], &topic).await;
    let mut rx = old.watch_state();
    tokio::time::timeout(
        Duration::from_secs(20),
        rx.wait_for(|s| s.state == MemberState::Fenced),
    )
    .await
    .unwrap()
    .unwrap();
    // The event follows the state change (on a multi-threaded runtime we may look in between).
    let told = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(e) = old_events.recv().await {
            if matches!(e.kind, GroupEventKind::Fenced { ref instance_id, retry_in: None, .. } if instance_id == "twin")
            {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(told, "the fenced member was told");
    // It does not fight: the new one stays stable with everything for a while.
    let generation = new.state().generation;
    tokio::time::sleep(Duration::from_secs(8)).await;
    assert_eq!(new.state().state, MemberState::Stable);
    assert_eq!(new.state().generation, generation);
    assert_eq!(old.state().state, MemberState::Fenced);
    new.leave().await.unwrap();
    old.close().await.unwrap();
}

// ---- offset commit and fetch ---------------------------------------------------------------------

/// `ConsumerGroupCommand --describe --offsets`: partition → CURRENT-OFFSET for `topic` (columns
/// GROUP TOPIC PARTITION CURRENT-OFFSET ...; a partition without a commit shows `-` and is left out).
fn kafka_offsets(cluster: &Cluster, group: &str, topic: &str) -> BTreeMap<i32, i64> {
    let out = cluster.tool_ok(
        "ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--describe",
            "--group",
            group,
            "--offsets",
        ],
    );
    out.lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            if cols.len() < 4 || cols[1] != topic {
                return None;
            }
            Some((cols[2].parse().ok()?, cols[3].parse().ok()?))
        })
        .collect()
}

/// What each test commits for partition `p`.
fn offset_for(p: i32, base: i64) -> OffsetAndMetadata {
    OffsetAndMetadata {
        offset: base + i64::from(p),
        leader_epoch: Some(0),
        metadata: format!("mooring-{p}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_read_back_and_match_consumer_group_command() {
    let cluster = Cluster::shared();
    let topic = unique("group-commit");
    let group = unique("g-commit");
    create_topic(&cluster, &topic).await;
    let transport = client(&cluster).await;
    let a = GroupMember::spawn(
        Arc::clone(&transport),
        config(&group, "range", None),
        NoopListener,
    )
    .unwrap();
    let b = spawn(&cluster, &group, "range", None).await;
    a.subscribe([topic.clone()]).await.unwrap();
    b.subscribe([topic.clone()]).await.unwrap();
    let snaps = settle(&[&a, &b], &topic).await;

    // The version the member's commits go at: Kafka 4.4 negotiates v10 (topics by id).
    let version = transport
        .coordinator_connection(&group)
        .await
        .unwrap()
        .version::<OffsetCommitRequest>()
        .unwrap();
    eprintln!("OffsetCommit negotiated at v{version}");

    // Each member commits its own partitions, with metadata and a leader epoch.
    let mut expected = BTreeMap::new();
    for (m, snap) in [&a, &b].into_iter().zip(&snaps) {
        let offsets: BTreeMap<TopicPartition, OffsetAndMetadata> = snap
            .assignment
            .iter()
            .map(|tp| (tp.clone(), offset_for(tp.partition, 1000)))
            .collect();
        expected.extend(offsets.clone());
        m.commit(offsets).await.unwrap();
    }
    assert_eq!(expected.len(), PARTITIONS as usize);

    // Both members read every partition back (OffsetFetch, require_stable).
    let all: Vec<TopicPartition> = (0..PARTITIONS)
        .map(|p| TopicPartition::new(topic.clone(), p))
        .collect();
    for m in [&a, &b] {
        let got = m.committed(all.clone()).await.unwrap();
        let got: BTreeMap<TopicPartition, OffsetAndMetadata> = got
            .into_iter()
            .map(|(tp, o)| (tp, o.expect("committed")))
            .collect();
        assert_eq!(got, expected);
    }
    // A partition of a topic nobody committed to reads back as None.
    let other = unique("group-commit-none");
    cluster.create_topic(&other, 1);
    let none = a
        .committed([TopicPartition::new(other.clone(), 0)])
        .await
        .unwrap();
    assert_eq!(none.values().collect::<Vec<_>>(), [&None]);

    // The admin look-up agrees, metadata included.
    let admin = transport.committed_offsets(&group, None).await.unwrap();
    for (tp, om) in &expected {
        let c = &admin[tp];
        assert_eq!(c, om, "{tp}");
    }

    // And so does Kafka's own tool.
    let tool = kafka_offsets(&cluster, &group, &topic);
    let want: BTreeMap<i32, i64> = expected
        .iter()
        .map(|(tp, om)| (tp.partition, om.offset))
        .collect();
    assert_eq!(tool, want);
    a.close().await.unwrap();
    b.close().await.unwrap();
}

/// Commits, from inside `revoked`, the partitions the member keeps (cooperative: the rebalance is
/// still going on; the member rejoins once the listener returns).
#[derive(Debug, Default, Clone)]
struct CommitKeptOnRevoke {
    handle: Arc<OnceLock<GroupHandle<Client>>>,
    /// (revoked, kept and committed, the commit's outcome).
    commits: Arc<Mutex<Vec<RevokeCommit>>>,
}

type RevokeCommit = (Vec<TopicPartition>, Vec<TopicPartition>, Result<(), String>);

impl RebalanceListener for CommitKeptOnRevoke {
    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        let Some(handle) = self.handle.get() else {
            return;
        };
        let kept: Vec<TopicPartition> = handle
            .assignment()
            .into_iter()
            .filter(|tp| !partitions.contains(tp))
            .collect();
        let offsets = kept
            .iter()
            .map(|tp| (tp.clone(), offset_for(tp.partition, 500)))
            .collect();
        let result = handle.commit(offsets).await.map_err(|e| e.to_string());
        self.commits
            .lock()
            .unwrap()
            .push((partitions, kept, result));
    }
    async fn assigned(&self, _: Vec<TopicPartition>) {}
    async fn lost(&self, _: Vec<TopicPartition>) {}
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperative_commit_of_kept_partitions_during_a_rebalance() {
    let cluster = Cluster::shared();
    let topic = unique("group-coop-commit");
    let group = unique("g-coop-commit");
    create_topic(&cluster, &topic).await;
    let mut listeners = Vec::new();
    let mut members = Vec::new();
    for _ in 0..2 {
        let listener = CommitKeptOnRevoke::default();
        let member = GroupMember::spawn(
            client(&cluster).await,
            config(&group, "cooperative-sticky", None),
            listener.clone(),
        )
        .unwrap();
        listener.handle.set(member.clone()).unwrap();
        member.subscribe([topic.clone()]).await.unwrap();
        listeners.push(listener);
        members.push(member);
    }
    let before = settle_agreed(
        &cluster,
        &group,
        &members.iter().collect::<Vec<_>>(),
        &topic,
    )
    .await;
    for listener in &listeners {
        listener.commits.lock().unwrap().clear(); // revokes while the group formed
    }
    let third = spawn(&cluster, &group, "cooperative-sticky", None).await;
    third.subscribe([topic.clone()]).await.unwrap();
    let mut all: Vec<&GroupHandle<Client>> = members.iter().collect();
    all.push(&third);
    let after = settle_agreed(&cluster, &group, &all, &topic).await;
    assert_eq!(after[2].assignment.len(), 4, "{after:#?}");

    let mut committed = BTreeMap::new();
    for (i, listener) in listeners.iter().enumerate() {
        let calls = listener.commits.lock().unwrap().clone();
        assert!(!calls.is_empty(), "member {i} had partitions revoked");
        for (revoked, kept, result) in calls {
            assert!(
                result.is_ok(),
                "member {i}: committing {kept:?} while {revoked:?} moved: {result:?}"
            );
            assert!(!kept.is_empty(), "member {i} kept something");
            let kept_set: BTreeSet<TopicPartition> = kept.iter().cloned().collect();
            assert!(kept_set.is_subset(&before[i].assignment));
            assert!(kept_set.is_subset(&after[i].assignment), "kept means kept");
            for tp in kept {
                committed.insert(tp.clone(), offset_for(tp.partition, 500));
            }
        }
    }
    let read = third
        .committed(committed.keys().cloned().collect::<Vec<_>>())
        .await
        .unwrap();
    for (tp, om) in &committed {
        assert_eq!(read[tp].as_ref(), Some(om), "{tp}");
    }
    let tool = kafka_offsets(&cluster, &group, &topic);
    for (tp, om) in &committed {
        assert_eq!(tool.get(&tp.partition), Some(&om.offset), "{tp}");
    }
    for m in all {
        m.close().await.unwrap();
    }
}

// ---- coordinator failover (three nodes) ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn member_follows_its_coordinator_to_another_node() {
    // Internal topics there have RF 3, so the group's offsets partition gets a new leader.
    let cluster = Cluster::dedicated("t-member-failover", 3, 25000);
    let topic = unique("group-failover");
    let group = unique("g-failover");
    create_topic(&cluster, &topic).await;
    let transport = client(&cluster).await;
    let member = GroupMember::spawn(
        Arc::clone(&transport),
        config(&group, "range", None),
        NoopListener,
    )
    .unwrap();
    let mut events = member.take_events().unwrap();
    member.subscribe([topic.clone()]).await.unwrap();
    let before = settle(&[&member], &topic).await.remove(0);
    let old = cluster
        .group_state(&group)
        .expect("Kafka knows the group")
        .coordinator_id;
    assert_eq!(transport.cached_coordinator(&group), Some(old));
    while events.try_recv().is_ok() {}

    let killed = tokio::time::Instant::now();
    cluster.kill(usize::try_from(old).unwrap());

    // The member finds the new coordinator and ends Stable with every partition, and Kafka (asked
    // through the two live nodes) sees it there.
    let deadline = killed + Duration::from_secs(60);
    let (after, new) = loop {
        let snap = member.state();
        let moved = transport
            .cached_coordinator(&group)
            .filter(|node| *node != old);
        if let (Some(new), MemberState::Stable, true) = (
            moved,
            &snap.state,
            snap.assignment.len() == PARTITIONS as usize,
        ) {
            let kafka = cluster.group_state(&group);
            if kafka
                .as_ref()
                .is_some_and(|k| k.coordinator_id == new && k.state == "Stable" && k.members == 1)
                && member.state() == snap
            {
                break (snap, new);
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no recovery within 60 s: {snap:#?}, Kafka: {:?}",
            cluster.group_state(&group)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let took = killed.elapsed();
    assert_eq!(after.assignment, before.assignment);
    assert_eq!(after.member_id, before.member_id, "membership kept");

    let mut rebalances = 0;
    let mut heartbeat_errors = 0;
    while let Ok(e) = events.try_recv() {
        match e.kind {
            GroupEventKind::RebalanceStarted { .. } => rebalances += 1,
            GroupEventKind::Heartbeat { error: Some(_), .. } => heartbeat_errors += 1,
            _ => {}
        }
    }
    eprintln!(
        "coordinator {old} -> {new} in {took:?}: {rebalances} rebalance(s), {heartbeat_errors} \
         failed heartbeat(s), generation {} -> {}",
        before.generation, after.generation
    );
    assert!(rebalances <= 1, "{rebalances} rebalances");
    assert_eq!(
        after.generation - before.generation,
        rebalances,
        "a generation per rebalance"
    );
    member.close().await.unwrap();
}
