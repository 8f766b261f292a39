//! The broker watch of a `consumer`-protocol (KIP-848) group on the shared real broker, with
//! Kafka's own Java `VerifiableConsumer` (`--group-protocol CONSUMER`) as the members. Kafka 4.4
//! answers DescribeGroups for such a group with GROUP_ID_NOT_FOUND ("Group … is not a classic
//! group.", state `Dead`, no members), so the watch must ask ConsumerGroupDescribe instead: the
//! sidecar's state, members, group epoch and assignment epoch must be what Kafka's
//! `ConsumerGroupCommand --describe --state --verbose` says, and every partition's owner known.
//!
//! Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-sidecar --test consumer_protocol`.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{get, get_json, metric};
use mooring_testkit::{unique, Cluster};
use support::watching_sidecar;

/// A Java consumer-protocol member in its own process, killed when dropped.
struct JavaMember(Child);

impl JavaMember {
    fn start(cluster: &Cluster, topic: &str, group: &str, instance_id: Option<&str>) -> JavaMember {
        let mut command = Command::new(mooring_testkit::kafka_script());
        command
            .args(["--cluster", cluster.name(), "tool", "VerifiableConsumer"])
            .args(["--bootstrap-server", cluster.bootstrap(), "--topic", topic])
            .args(["--group-id", group, "--group-protocol", "CONSUMER"]);
        if let Some(id) = instance_id {
            command.args(["--group-instance-id", id]);
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start VerifiableConsumer");
        JavaMember(child)
    }
}

impl Drop for JavaMember {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Kafka's view: (state, group epoch, target assignment epoch, members) from
/// `ConsumerGroupCommand --describe --state --verbose`.
fn kafka_view(cluster: &Cluster, group: &str) -> Option<(String, i64, i64, i64)> {
    let out = cluster.tool(
        "ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--describe",
            "--group",
            group,
            "--state",
            "--verbose",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    // GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE GROUP-EPOCH TARGET-ASSIGNMENT-EPOCH #MEMBERS
    let line = text.lines().find(|l| l.starts_with(group))?;
    let fields: Vec<&str> = line.split_whitespace().collect();
    let n = fields.len();
    if n < 5 {
        return None;
    }
    Some((
        fields[n - 4].to_string(),
        fields[n - 3].parse().ok()?,
        fields[n - 2].parse().ok()?,
        fields[n - 1].parse().ok()?,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_broker_watch_describes_a_consumer_protocol_group() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-k848");
    let group = unique("sidecar-k848-g");
    cluster.create_topic(&topic, 4);
    let s = watching_sidecar(&cluster, &group, 300, "").await;
    let addr = s.addr;
    let _a = JavaMember::start(&cluster, &topic, &group, None);
    let _b = JavaMember::start(&cluster, &topic, &group, Some("java-static-b"));

    // Until Kafka says Stable with both members and the sidecar agrees on everything.
    let deadline = Instant::now() + Duration::from_secs(90);
    let (text, view) = loop {
        let kafka = kafka_view(&cluster, &group);
        let (_, text) = get(addr, "/metrics").await;
        let agreed = kafka
            .as_ref()
            .is_some_and(|(state, epoch, target, members)| {
                state == "Stable"
                    && *members == 2
                    && metric(&text, "mooring_group_state{state=\"Stable\"}") == Some(1.0)
                    && metric(&text, "mooring_group_members") == Some(2.0)
                    && metric(&text, "mooring_group_epoch") == Some(*epoch as f64)
                    && metric(&text, "mooring_group_assignment_epoch") == Some(*target as f64)
            });
        if agreed {
            break (text, kafka.unwrap());
        }
        assert!(
            Instant::now() < deadline,
            "the sidecar never agreed with Kafka ({kafka:?}):\n{}\n{}",
            text.lines()
                .filter(|l| l.starts_with("mooring_group"))
                .collect::<Vec<_>>()
                .join("\n"),
            get_json(addr, "/debug/group").await
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    };
    let (_, epoch, _, _) = view;
    assert!(epoch >= 2, "two joins, two epoch bumps at least: {epoch}");
    assert_eq!(
        metric(&text, "mooring_group_state{state=\"Dead\"}"),
        Some(0.0)
    );
    // Every partition has an owner, and the two members own them all between them.
    let owners: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("mooring_partition_owner{"))
        .collect();
    assert_eq!(owners.len(), 4, "{text}");
    assert!(
        owners
            .iter()
            .any(|l| l.contains("member=\"java-static-b\"")),
        "the static member is named by its instance id: {owners:?}"
    );

    let g = get_json(addr, "/debug/group").await;
    let view = &g["broker_view"];
    assert_eq!(view["state"], "Stable", "{g}");
    assert_eq!(view["group_type"], "consumer", "{g}");
    assert_eq!(
        view["protocol"], "uniform",
        "the broker's default assignor: {g}"
    );
    assert_eq!(view["group_epoch"], epoch, "{g}");
    let members = view["members"].as_array().unwrap();
    assert_eq!(members.len(), 2, "{g}");
    let mut partitions = 0;
    for m in members {
        assert_eq!(
            m["member_epoch"], epoch,
            "each member reconciled to the group epoch: {g}"
        );
        assert_eq!(
            m["subscribed_topics"],
            serde_json::json!([topic.clone()]),
            "{g}"
        );
        partitions += m["partitions"].as_array().unwrap().len();
    }
    assert_eq!(partitions, 4, "{g}");
    assert!(g["broker_watch_error"].is_null(), "{g}");
    s.shutdown().await;
    cluster.delete_topic(&topic);
}
