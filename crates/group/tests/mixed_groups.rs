//! Mixed consumer groups on the real broker: our members (`GroupMember` over the real `Client`)
//! in one classic group with Java consumers (Kafka's own `VerifiableConsumer`, kafka-clients from
//! the broker's jars) and librdkafka consumers (PyPI confluent-kafka, `tests/peers/group_member.py`),
//! with `range` and with `cooperative-sticky`. Whoever leads runs its own assignor for everyone, so
//! each mix runs twice: once with one of ours as leader and once with a Java member as leader (the
//! first member of a new group leads it; start order decides). Every member's own view, and Kafka's
//! (`ConsumerGroupCommand --describe --members`), must show a disjoint, complete, balanced
//! assignment.
//!
//! The defaults are pinned too, as the README documents them: our default (`cooperative-sticky`)
//! and librdkafka's (`range,roundrobin`) share no protocol, so the broker refuses whichever joins
//! second (INCONSISTENT_GROUP_PROTOCOL); either one-line fix gives a working group.
//!
//! Child processes are killed when their guard drops, panics included.
//! Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-group --test mixed_groups`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_client::config::ClientConfig;
use mooring_client::Client;
use mooring_group::assignor::RebalanceProtocol;
use mooring_group::{
    GroupConfig, GroupHandle, GroupMember, MemberSnapshot, MemberState, NoopListener,
};
use mooring_testkit::{unique, Cluster};
use mooring_wire::error_code::ErrorCode;
use regex::Regex;

const PARTITIONS: i32 = 12;
const SESSION_TIMEOUT_MS: &str = "6000";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Range,
    CooperativeSticky,
}

impl Strategy {
    /// Our (and librdkafka's, and the protocol's) name.
    fn name(self) -> &'static str {
        match self {
            Strategy::Range => "range",
            Strategy::CooperativeSticky => "cooperative-sticky",
        }
    }

    fn java_class(self) -> &'static str {
        match self {
            Strategy::Range => "org.apache.kafka.clients.consumer.RangeAssignor",
            Strategy::CooperativeSticky => {
                "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
            }
        }
    }
}

/// A Java or librdkafka member in its own process. Its stdout (VerifiableConsumer-shaped JSON
/// lines) and stderr are collected by reader threads; dropping the guard kills the process.
struct Peer {
    client_id: String,
    child: Child,
    _stdin: Option<ChildStdin>,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    fn start(client_id: &str, mut command: Command) -> Peer {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {client_id}: {e}"));
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(String::new()));
        let out = child.stdout.take().expect("piped stdout");
        let lines = Arc::clone(&stdout);
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let mut err = child.stderr.take().expect("piped stderr");
        let text = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                text.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Peer {
            client_id: client_id.into(),
            _stdin: child.stdin.take(),
            child,
            stdout,
            stderr,
        }
    }

    /// Kafka's VerifiableConsumer (kafka-clients, classic protocol).
    fn java(cluster: &Cluster, topic: &str, group: &str, strategy: Strategy, id: &str) -> Peer {
        let dir = std::env::temp_dir().join(unique("mixed-java"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let props = dir.join("consumer.properties");
        std::fs::write(
            &props,
            format!("client.id={id}\nheartbeat.interval.ms=1000\n"),
        )
        .expect("write consumer config");
        let mut command = Command::new(mooring_testkit::kafka_script());
        command
            .args(["--cluster", cluster.name(), "tool", "VerifiableConsumer"])
            .args(["--bootstrap-server", cluster.bootstrap()])
            .args(["--topic", topic, "--group-id", group])
            .args(["--assignment-strategy", strategy.java_class()])
            .args(["--session-timeout", SESSION_TIMEOUT_MS])
            .arg("--command-config")
            .arg(&props);
        Peer::start(id, command)
    }

    /// librdkafka through confluent-kafka; `strategy` is its `partition.assignment.strategy`, or
    /// `default` for none (librdkafka's own default).
    fn librdkafka(cluster: &Cluster, topic: &str, group: &str, strategy: &str, id: &str) -> Peer {
        let script =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers/group_member.py");
        let mut command = Command::new(mooring_testkit::peer_python());
        command
            .arg(script)
            .args([cluster.bootstrap(), group, topic, strategy, id])
            .arg(SESSION_TIMEOUT_MS);
        Peer::start(id, command)
    }

    /// The member's own view of its partitions of `topic`: its assigned/revoked/lost events
    /// applied in order (cooperative events carry only the change, eager ones everything).
    fn assignment(&self, topic: &str) -> BTreeSet<i32> {
        static NAME: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        static PARTITION: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        let name = NAME.get_or_init(|| Regex::new(r#""name"\s*:\s*"([a-z_]+)""#).unwrap());
        let partition = PARTITION.get_or_init(|| {
            Regex::new(r#"\{\s*"topic"\s*:\s*"([^"]+)"\s*,\s*"partition"\s*:\s*(\d+)\s*\}"#)
                .unwrap()
        });
        let mut owned = BTreeSet::new();
        for line in self.stdout.lock().unwrap().iter() {
            let Some(event) = name.captures(line).map(|c| c[1].to_string()) else {
                continue;
            };
            let parts = partition
                .captures_iter(line)
                .filter(|c| &c[1] == topic)
                .filter_map(|c| c[2].parse::<i32>().ok());
            match event.as_str() {
                "partitions_assigned" => owned.extend(parts),
                "partitions_revoked" | "partitions_lost" => {
                    for p in parts {
                        owned.remove(&p);
                    }
                }
                _ => {}
            }
        }
        owned
    }

    /// The error code of the peer's `error` event, if it printed one.
    fn error_code(&self) -> Option<i16> {
        static CODE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
        let code = CODE
            .get_or_init(|| Regex::new(r#""name"\s*:\s*"error".*"code"\s*:\s*(-?\d+)"#).unwrap());
        self.stdout
            .lock()
            .unwrap()
            .iter()
            .find_map(|line| code.captures(line).and_then(|c| c[1].parse().ok()))
    }

    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    fn diagnostics(&self) -> String {
        let out = self.stdout.lock().unwrap().join("\n");
        let err = self.stderr.lock().unwrap().clone();
        format!("--- {} stdout\n{out}\n--- stderr\n{err}", self.client_id)
    }
}

/// One of our members; `strategy` is its `partition.assignment.strategy`, `None` for the default.
async fn ours(
    cluster: &Cluster,
    group: &str,
    strategy: Option<&str>,
    id: &str,
) -> GroupHandle<Client> {
    // One Client per member: the broker answers one connection's requests in order, so a
    // JoinGroup it holds would block every other member sharing that connection.
    let mut config = ClientConfig::new(cluster.bootstrap().split(','));
    config.client_id = id.into();
    let client = Arc::new(Client::connect(config).await.unwrap());
    let mut props = vec![
        ("group.id", group),
        ("session.timeout.ms", SESSION_TIMEOUT_MS),
        ("heartbeat.interval.ms", "1000"),
        ("max.poll.interval.ms", "20000"),
        ("retry.backoff.ms", "100"),
    ];
    props.extend(strategy.map(|s| ("partition.assignment.strategy", s)));
    let group_config = GroupConfig::from_properties(props).unwrap();
    GroupMember::spawn(client, group_config, NoopListener).unwrap()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leader {
    Ours,
    Java,
}

/// Polls `done` every 200 ms until it holds or `limit` passes (then panics with `why()`).
async fn wait_for(limit: Duration, mut done: impl FnMut() -> bool, why: impl Fn() -> String) {
    let deadline = tokio::time::Instant::now() + limit;
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "{}", why());
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Two of ours, one Java and one librdkafka member, `leader` started first and alone.
async fn mixed_group(strategy: Strategy, leader: Leader) {
    let cluster = Cluster::shared();
    let topic = unique("mixed");
    let group = unique("g-mixed");
    cluster.create_topic(&topic, PARTITIONS as u32);
    let all: BTreeSet<i32> = (0..PARTITIONS).collect();

    // The first member alone: it leads the group from its first generation on.
    let mut ours_members: Vec<(String, GroupHandle<Client>)> = Vec::new();
    let mut peers: Vec<Peer> = Vec::new();
    match leader {
        Leader::Ours => {
            let m = ours(&cluster, &group, Some(strategy.name()), "ours-0").await;
            m.subscribe([topic.clone()]).await.unwrap();
            let mut rx = m.watch_state();
            tokio::time::timeout(
                Duration::from_secs(30),
                rx.wait_for(|s| s.state == MemberState::Stable && s.assignment.len() == 12),
            )
            .await
            .expect("ours-0 alone gets every partition")
            .unwrap();
            assert!(m.state().is_leader());
            ours_members.push(("ours-0".into(), m));
        }
        Leader::Java => {
            let java = Peer::java(&cluster, &topic, &group, strategy, "java-0");
            wait_for(
                Duration::from_secs(30),
                || java.assignment(&topic) == all,
                || {
                    format!(
                        "java-0 alone never got every partition\n{}",
                        java.diagnostics()
                    )
                },
            )
            .await;
            peers.push(java);
        }
    }
    // The others join together.
    if leader == Leader::Java {
        let m = ours(&cluster, &group, Some(strategy.name()), "ours-0").await;
        m.subscribe([topic.clone()]).await.unwrap();
        ours_members.push(("ours-0".into(), m));
    } else {
        peers.push(Peer::java(&cluster, &topic, &group, strategy, "java-0"));
    }
    let m = ours(&cluster, &group, Some(strategy.name()), "ours-1").await;
    m.subscribe([topic.clone()]).await.unwrap();
    ours_members.push(("ours-1".into(), m));
    peers.push(Peer::librdkafka(
        &cluster,
        &topic,
        &group,
        strategy.name(),
        "rdkafka-0",
    ));

    // Every member's own view, and Kafka's, agree on a disjoint, complete, balanced assignment.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    let (snaps, views, kafka) = loop {
        for p in &mut peers {
            assert!(p.alive(), "{} exited\n{}", p.client_id, p.diagnostics());
        }
        let snaps: Vec<MemberSnapshot> = ours_members.iter().map(|(_, m)| m.state()).collect();
        let mut views: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
        for ((id, _), s) in ours_members.iter().zip(&snaps) {
            views.insert(
                id.clone(),
                s.assignment.iter().map(|tp| tp.partition).collect(),
            );
        }
        for p in &peers {
            views.insert(p.client_id.clone(), p.assignment(&topic));
        }
        let stable = snaps.iter().all(|s| s.state == MemberState::Stable)
            && snaps
                .iter()
                .map(|s| s.generation)
                .collect::<BTreeSet<_>>()
                .len()
                == 1;
        let total: usize = views.values().map(BTreeSet::len).sum();
        let union: BTreeSet<i32> = views.values().flatten().copied().collect();
        let balanced = views.values().all(|v| v.len() == 3);
        if stable && total == 12 && union == all && balanced {
            // Kafka's view: client id → (member id, partitions).
            let kafka: BTreeMap<String, (String, BTreeSet<i32>)> = cluster
                .describe_members(&group)
                .into_iter()
                .map(|m| {
                    let parts = m.assignment.get(&topic).cloned().unwrap_or_default();
                    (m.client_id, (m.consumer_id, parts.into_iter().collect()))
                })
                .collect();
            let kafka_parts: BTreeMap<String, BTreeSet<i32>> = kafka
                .iter()
                .map(|(c, (_, p))| (c.clone(), p.clone()))
                .collect();
            let still: Vec<MemberSnapshot> = ours_members.iter().map(|(_, m)| m.state()).collect();
            if kafka_parts == views && still == snaps {
                break (snaps, views, kafka);
            }
        }
        if tokio::time::Instant::now() >= deadline {
            let diagnostics: Vec<String> = peers.iter().map(Peer::diagnostics).collect();
            panic!(
                "the mixed group never agreed: views {views:?}\nours {snaps:#?}\n{}",
                diagnostics.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    };

    // Our members' member ids are Kafka's, and they agree on who leads.
    for ((id, _), s) in ours_members.iter().zip(&snaps) {
        assert_eq!(kafka[id].0, s.member_id, "{id}");
        assert_eq!(s.protocol_name.as_deref(), Some(strategy.name()));
    }
    let leader_id = snaps[0].leader_id.clone().expect("a leader");
    assert!(snaps
        .iter()
        .all(|s| s.leader_id.as_deref() == Some(&leader_id)));
    let leader_client = kafka
        .iter()
        .find(|(_, (member, _))| *member == leader_id)
        .map(|(client, _)| client.clone())
        .expect("the leader is a member");
    let expected = match leader {
        Leader::Ours => "ours-0",
        Leader::Java => "java-0",
    };
    assert_eq!(leader_client, expected, "views {views:?}");
    eprintln!("{} led by {leader_client}: {views:?}", strategy.name());

    for (_, m) in &ours_members {
        m.close().await.unwrap();
    }
    drop(peers); // kills the Java and Python processes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_range_ours_leads() {
    mixed_group(Strategy::Range, Leader::Ours).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_range_java_leads() {
    mixed_group(Strategy::Range, Leader::Java).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_cooperative_sticky_ours_leads() {
    mixed_group(Strategy::CooperativeSticky, Leader::Ours).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_cooperative_sticky_java_leads() {
    mixed_group(Strategy::CooperativeSticky, Leader::Java).await;
}

/// INCONSISTENT_GROUP_PROTOCOL's code.
const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;

/// A fresh topic of [`PARTITIONS`] partitions and a fresh group name.
fn topic_and_group(cluster: &Cluster, name: &str) -> (String, String) {
    let topic = unique(name);
    cluster.create_topic(&topic, PARTITIONS as u32);
    (topic, unique(&format!("g-{name}")))
}

/// Waits until our member is Stable holding every partition, and returns its state.
async fn alone_with_everything(member: &GroupHandle<Client>) -> MemberSnapshot {
    let mut rx = member.watch_state();
    let snap = tokio::time::timeout(
        Duration::from_secs(30),
        rx.wait_for(|s| {
            s.state == MemberState::Stable && s.assignment.len() == PARTITIONS as usize
        }),
    )
    .await
    .expect("our member alone gets every partition")
    .unwrap()
    .clone();
    snap
}

/// Our member joins first on its default strategy, a librdkafka member second on its own: the
/// broker refuses the librdkafka member and ours keeps the group as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_librdkafka_joining_second_is_refused() {
    let cluster = Cluster::shared();
    let (topic, group) = topic_and_group(&cluster, "defaults-rdk-second");
    let m = ours(&cluster, &group, None, "ours-0").await;
    m.subscribe([topic.clone()]).await.unwrap();
    let before = alone_with_everything(&m).await;
    assert_eq!(before.protocol_name.as_deref(), Some("cooperative-sticky"));
    assert_eq!(before.rebalance_protocol, RebalanceProtocol::Cooperative);

    let peer = Peer::librdkafka(&cluster, &topic, &group, "default", "rdkafka-0");
    wait_for(
        Duration::from_secs(60),
        || peer.error_code().is_some(),
        || format!("librdkafka reported no error\n{}", peer.diagnostics()),
    )
    .await;
    assert_eq!(
        peer.error_code(),
        Some(INCONSISTENT_GROUP_PROTOCOL),
        "{}",
        peer.diagnostics()
    );
    assert!(peer.assignment(&topic).is_empty(), "{}", peer.diagnostics());
    let after = m.state();
    assert_eq!(
        (after.state, after.generation, &after.assignment),
        (MemberState::Stable, before.generation, &before.assignment),
        "our member was disturbed"
    );
    m.close().await.unwrap();
}

/// A librdkafka member joins first on its default strategy, ours second on its own: the broker
/// refuses ours (FAILED with INCONSISTENT_GROUP_PROTOCOL) and the librdkafka member keeps the
/// group as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_mooring_joining_second_is_refused() {
    let cluster = Cluster::shared();
    let (topic, group) = topic_and_group(&cluster, "defaults-ours-second");
    let all: BTreeSet<i32> = (0..PARTITIONS).collect();
    let mut peer = Peer::librdkafka(&cluster, &topic, &group, "default", "rdkafka-0");
    wait_for(
        Duration::from_secs(30),
        || peer.assignment(&topic) == all,
        || {
            format!(
                "librdkafka alone never got every partition\n{}",
                peer.diagnostics()
            )
        },
    )
    .await;

    let m = ours(&cluster, &group, None, "ours-0").await;
    m.subscribe([topic.clone()]).await.unwrap();
    let mut rx = m.watch_state();
    let failed = tokio::time::timeout(
        Duration::from_secs(30),
        rx.wait_for(|s| matches!(s.state, MemberState::Failed(_) | MemberState::Stable)),
    )
    .await
    .expect("our member neither joined nor failed")
    .unwrap()
    .clone();
    assert_eq!(
        failed.state,
        MemberState::Failed(ErrorCode::InconsistentGroupProtocol),
        "{failed:?}"
    );
    assert!(failed.assignment.is_empty());
    assert!(peer.alive(), "{}", peer.diagnostics());
    assert_eq!(peer.error_code(), None, "{}", peer.diagnostics());
    assert_eq!(peer.assignment(&topic), all, "{}", peer.diagnostics());
    m.close().await.unwrap();
}

/// Waits until our member and the librdkafka member split every partition between them (Kafka's
/// view agreeing) and returns the group's protocol as Kafka describes it.
async fn shared_group(
    cluster: &Cluster,
    topic: &str,
    group: &str,
    m: &GroupHandle<Client>,
    peer: &mut Peer,
) -> String {
    let all: BTreeSet<i32> = (0..PARTITIONS).collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(90);
    loop {
        assert!(
            peer.alive(),
            "{} exited\n{}",
            peer.client_id,
            peer.diagnostics()
        );
        let snap = m.state();
        let ours: BTreeSet<i32> = snap.assignment.iter().map(|tp| tp.partition).collect();
        let theirs = peer.assignment(topic);
        let split = snap.state == MemberState::Stable
            && ours.is_disjoint(&theirs)
            && ours.union(&theirs).copied().collect::<BTreeSet<_>>() == all
            && ours.len() == theirs.len();
        if split {
            if let Some(state) = cluster.group_state(group) {
                let kafka: BTreeSet<i32> = cluster
                    .describe_members(group)
                    .into_iter()
                    .filter_map(|member| member.assignment.get(topic).cloned())
                    .flatten()
                    .collect();
                if state.state == "Stable" && state.members == 2 && kafka == all {
                    return state.assignment_strategy;
                }
            }
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the two never split the partitions: ours {snap:?}, librdkafka {theirs:?}\n{}",
            peer.diagnostics()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The README's one-line fixes: `partition.assignment.strategy=cooperative-sticky` on librdkafka
/// (the group is cooperative), or `range,cooperative-sticky` on ours (the group is eager, on range).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_one_line_fixes_share_a_protocol() {
    let cluster = Cluster::shared();

    let (topic, group) = topic_and_group(&cluster, "fix-on-librdkafka");
    let m = ours(&cluster, &group, None, "ours-0").await;
    m.subscribe([topic.clone()]).await.unwrap();
    alone_with_everything(&m).await;
    let mut peer = Peer::librdkafka(&cluster, &topic, &group, "cooperative-sticky", "rdkafka-0");
    let protocol = shared_group(&cluster, &topic, &group, &m, &mut peer).await;
    assert_eq!(protocol, "cooperative-sticky");
    assert_eq!(m.state().rebalance_protocol, RebalanceProtocol::Cooperative);
    m.close().await.unwrap();
    drop(peer);

    let (topic, group) = topic_and_group(&cluster, "fix-on-mooring");
    let m = ours(&cluster, &group, Some("range,cooperative-sticky"), "ours-0").await;
    m.subscribe([topic.clone()]).await.unwrap();
    alone_with_everything(&m).await;
    let mut peer = Peer::librdkafka(&cluster, &topic, &group, "default", "rdkafka-0");
    let protocol = shared_group(&cluster, &topic, &group, &m, &mut peer).await;
    assert_eq!(protocol, "range");
    assert_eq!(m.state().rebalance_protocol, RebalanceProtocol::Eager);
    m.close().await.unwrap();
}
