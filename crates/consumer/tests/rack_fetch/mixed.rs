//! Rack-aware assignment (KIP-881) in a classic group that mixes ours with Kafka's Java
//! consumer: a topic whose partitions each have one replica, spread evenly over the three racks,
//! and one member per rack (ours in r1 and r3, Java's `VerifiableConsumer` in r2, each with its
//! `client.rack`). Whichever member leads the group (and so computes the assignment), range and
//! cooperative-sticky give each member the partitions of its own rack; the broker's view
//! (`ConsumerGroupCommand --describe --members`) and every member's own agree on it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_client::{Client, ClientConfig};
use mooring_consumer::{Consumer, ConsumerError};
use mooring_testkit::{kafka_script, unique, Cluster};
use serde_json::Value;
use tokio::task::JoinHandle;

use crate::common::{self, poll_until, stop, wait_until, Seen};

const PARTITIONS: i32 = 9;
/// Partition p's one replica: node (p mod 3) + 1, so a range over partitions in order (what a
/// range assignor does without racks) crosses all three racks.
const REPLICAS: &str = "1,2,3,1,2,3,1,2,3";
/// (classic protocol name, Java's assignor class).
const ASSIGNORS: [(&str, &str); 2] = [
    ("range", "org.apache.kafka.clients.consumer.RangeAssignor"),
    (
        "cooperative-sticky",
        "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
    ),
];

/// Which member joins first, and so leads the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leader {
    Ours,
    Java,
}

/// Runs the mixed group under each assignor, once led by ours and once by Java's; asserts the
/// same rack-aligned assignment every time.
pub async fn rack_aware_mixed_group(cluster: &Cluster) {
    let topic = unique("rack-mixed");
    cluster.tool_ok(
        "TopicCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--create",
            "--topic",
            &topic,
            "--replica-assignment",
            REPLICAS,
        ],
    );
    let racks = partition_racks(cluster, &topic).await;
    for rack in ["r1", "r2", "r3"] {
        let in_rack = racks.values().filter(|r| r.contains(rack)).count();
        assert_eq!(in_rack, 3, "three partitions with a replica in {rack}");
    }
    let mut outcomes = BTreeMap::new();
    for (name, class) in ASSIGNORS {
        for leader in [Leader::Ours, Leader::Java] {
            let by_rack = round(cluster, &topic, &racks, leader, name, class).await;
            outcomes.insert((name, format!("{leader:?}")), by_rack);
        }
    }
    let distinct: BTreeSet<_> = outcomes.values().collect();
    assert_eq!(
        distinct.len(),
        1,
        "one assignment whichever member leads and whichever assignor: {outcomes:?}"
    );
}

/// Partition → the racks of its replicas, from our client's metadata.
async fn partition_racks(cluster: &Cluster, topic: &str) -> BTreeMap<i32, BTreeSet<String>> {
    let admin = Client::connect(ClientConfig::new(cluster.bootstrap().split(',')))
        .await
        .unwrap();
    let mut metadata = admin.refresh_metadata().await.unwrap();
    for _ in 0..50 {
        if metadata.partition_count(topic) == Some(PARTITIONS) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        metadata = admin.refresh_metadata().await.unwrap();
    }
    let partitions = &metadata.topics[topic].partitions;
    let racks = partitions
        .iter()
        .map(|(p, info)| {
            let racks = info
                .replicas
                .iter()
                .map(|node| metadata.brokers[node].rack.clone().unwrap())
                .collect();
            (*p, racks)
        })
        .collect();
    println!("replica racks by partition: {racks:?}");
    racks
}

/// One of ours in the group, with its `client.rack`.
struct Ours {
    rack: &'static str,
    consumer: Consumer,
    run: JoinHandle<Result<(), ConsumerError>>,
}

impl Ours {
    fn start(cluster: &Cluster, group: &str, topic: &str, rack: &'static str, name: &str) -> Ours {
        let client_id = format!("ours-{rack}");
        let consumer = common::consumer(
            cluster,
            group,
            &[
                ("client.rack", rack),
                ("client.id", &client_id),
                ("partition.assignment.strategy", name),
            ],
        );
        consumer.subscribe([topic]).unwrap();
        let run = common::spawn_run(&consumer, &Seen::default(), Duration::ZERO);
        Ours {
            rack,
            consumer,
            run,
        }
    }

    fn partitions(&self) -> BTreeSet<i32> {
        self.consumer
            .assignment()
            .iter()
            .map(|tp| tp.partition)
            .collect()
    }
}

/// Kafka's Java `VerifiableConsumer` in the group, with its `client.rack`; its partitions as its
/// `partitions_assigned` and `partitions_revoked` lines tell them. Killed when dropped.
struct Java {
    child: Child,
    config: PathBuf,
    owned: Arc<Mutex<BTreeSet<i32>>>,
}

impl Java {
    fn start(cluster: &Cluster, group: &str, topic: &str, rack: &str, class: &str) -> Java {
        let config = std::env::temp_dir().join(format!("{group}-java.properties"));
        std::fs::write(
            &config,
            format!("client.rack={rack}\nclient.id=java-{rack}\nheartbeat.interval.ms=500\n"),
        )
        .unwrap();
        let mut child = Command::new(kafka_script())
            .args(["--cluster", cluster.name(), "tool", "VerifiableConsumer"])
            .args(["--bootstrap-server", cluster.bootstrap(), "--topic", topic])
            .args(["--group-id", group, "--assignment-strategy", class])
            .args(["--session-timeout", "6000", "--consumer.config"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let owned = Arc::new(Mutex::new(BTreeSet::new()));
        let view = Arc::clone(&owned);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let Ok(event) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                let partitions = event["partitions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["partition"].as_i64())
                    .map(|p| p as i32);
                let mut view = view.lock().unwrap();
                match event["name"].as_str() {
                    // Eager: everything, then the new assignment; cooperative: what moves.
                    Some("partitions_revoked") => partitions.for_each(|p| {
                        view.remove(&p);
                    }),
                    Some("partitions_assigned") => view.extend(partitions),
                    _ => {}
                }
            }
        });
        Java {
            child,
            config,
            owned,
        }
    }

    fn partitions(&self) -> BTreeSet<i32> {
        self.owned.lock().unwrap().clone()
    }
}

impl Drop for Java {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}

/// One group: the first joiner (ours in r1, or Java's in r2) alone until it owns every
/// partition, then the others. Returns rack → partitions once the members' views and the
/// broker's agree on a complete assignment.
async fn round(
    cluster: &Cluster,
    topic: &str,
    racks: &BTreeMap<i32, BTreeSet<String>>,
    leader: Leader,
    name: &str,
    class: &str,
) -> BTreeMap<String, BTreeSet<i32>> {
    let group = unique("rack-mixed-g");
    let all: BTreeSet<i32> = (0..PARTITIONS).collect();
    let mut ours = Vec::new();
    let java;
    if leader == Leader::Ours {
        ours.push(Ours::start(cluster, &group, topic, "r1", name));
        wait_until("ours in r1 owns every partition", secs(60), || {
            ours[0].partitions() == all
        })
        .await;
        java = Java::start(cluster, &group, topic, "r2", class);
    } else {
        java = Java::start(cluster, &group, topic, "r2", class);
        wait_until("Java's in r2 owns every partition", secs(60), || {
            java.partitions() == all
        })
        .await;
        ours.push(Ours::start(cluster, &group, topic, "r1", name));
    }
    ours.push(Ours::start(cluster, &group, topic, "r3", name));

    let views = || -> BTreeMap<String, BTreeSet<i32>> {
        let mut views: BTreeMap<String, BTreeSet<i32>> = ours
            .iter()
            .map(|o| (format!("ours-{}", o.rack), o.partitions()))
            .collect();
        views.insert("java-r2".into(), java.partitions());
        views
    };
    let complete = |v: &BTreeMap<String, BTreeSet<i32>>| {
        v.values().map(BTreeSet::len).sum::<usize>() == all.len()
            && v.values().flatten().copied().collect::<BTreeSet<i32>>() == all
    };
    let mut agreed = None;
    let settled = poll_until(secs(90), || {
        let v = views();
        if !complete(&v) {
            return false;
        }
        // Between two `Stable` looks, so not a member that has joined and awaits its first
        // assignment (the tool lists it with none while the group rebalances).
        let stable = || {
            let state = tokio::task::block_in_place(|| cluster.group_state(&group));
            state.is_some_and(|s| s.state == "Stable" && s.members == 3)
        };
        if !stable() {
            return false;
        }
        let members = tokio::task::block_in_place(|| cluster.describe_members(&group));
        if !stable() {
            return false;
        }
        let broker: BTreeMap<String, BTreeSet<i32>> = members
            .iter()
            .map(|m| {
                let parts = m.assignment.get(topic).cloned().unwrap_or_default();
                (m.client_id.clone(), parts.into_iter().collect())
            })
            .collect();
        let java_id = members
            .iter()
            .find(|m| m.client_id == "java-r2")
            .map(|m| m.consumer_id.clone());
        let same = broker == v && v == views();
        if same {
            agreed = Some((v, java_id));
        }
        same
    })
    .await;
    let (true, Some((by_member, java_id))) = (settled, agreed) else {
        panic!(
            "{name}, {leader:?} leading: the members' views {:?} and the broker's {:?} never \
             agreed on a complete assignment",
            views(),
            cluster.describe_members(&group)
        );
    };

    // Who led: ours both name the leader of the generation they are in.
    let states: Vec<_> = ours
        .iter()
        .map(|o| o.consumer.member_state().unwrap())
        .collect();
    let expected_leader = match leader {
        Leader::Ours => Some(states[0].member_id.clone()),
        Leader::Java => java_id,
    };
    for state in &states {
        assert_eq!(
            state.leader_id, expected_leader,
            "{name}: the first joiner leads"
        );
        assert_eq!(state.protocol_name.as_deref(), Some(name));
    }

    let by_rack: BTreeMap<String, BTreeSet<i32>> = by_member
        .into_iter()
        .map(|(member, parts)| (member.rsplit('-').next().unwrap().to_owned(), parts))
        .collect();
    let in_rack: usize = by_rack
        .iter()
        .map(|(rack, parts)| parts.iter().filter(|p| racks[p].contains(rack)).count())
        .sum();
    let leader_name = format!("{leader:?}").to_lowercase();
    println!(
        "rack-aware mixed group (leader {leader_name}, {name}): {in_rack}/{PARTITIONS} \
         partitions in the member's rack; {by_rack:?}"
    );
    assert!(
        by_rack.values().all(|parts| parts.len() == 3),
        "{name}, {leader:?} leading: balanced, three each: {by_rack:?}"
    );
    assert_eq!(
        in_rack, PARTITIONS as usize,
        "{name}, {leader:?} leading: every partition owned by the member in its replica's rack: \
         {by_rack:?}"
    );

    drop(java);
    for o in ours {
        stop(&o.consumer, o.run).await.unwrap();
    }
    by_rack
}

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}
