//! `consumer`-protocol (KIP-848) groups on the shared real broker.
//!
//! The broker watch, with Kafka's own Java `VerifiableConsumer` (`--group-protocol CONSUMER`) as
//! the members: Kafka 4.4 answers DescribeGroups for such a group with GROUP_ID_NOT_FOUND ("Group
//! … is not a classic group.", state `Dead`, no members), so the watch must ask
//! ConsumerGroupDescribe instead: the sidecar's state, members, group epoch and assignment epoch
//! must be what Kafka's `ConsumerGroupCommand --describe --state --verbose` says, and every
//! partition's owner known.
//!
//! End to end, with Mooring consumers speaking the protocol and exporting to their sidecars: a
//! member's own join, another member's join and clean leave (named by the broker's members per
//! epoch), each reconciliation's epochs, phases and partitions moved; then a second process with
//! the same `group.instance.id` waits (UNRELEASED_INSTANCE_ID) while staying ready, and takes the
//! place once the first closes: a static rejoin, no rebalance.
//!
//! Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-sidecar --test consumer_protocol`.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{get, get_json, metric};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerConfig};
use mooring_testkit::{unique, Cluster};
use support::{exporter, ready, run, stop, total_rebalances, watching_sidecar};

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

/// The group's heartbeat interval and session timeout (the broker's dynamic group configs; the
/// test broker's minimums are 500 ms and 1 s), set before any member joins.
fn group_timeouts(cluster: &Cluster, group: &str) {
    cluster.set_group_config(
        group,
        &[
            ("consumer.heartbeat.interval.ms", "500"),
            ("consumer.session.timeout.ms", "6000"),
        ],
    );
}

/// Our consumer speaking the consumer protocol, subscribed to `topic`.
fn member(cluster: &Cluster, group: &str, topic: &str, instance_id: Option<&str>) -> Consumer {
    let mut props = vec![
        ("bootstrap.servers", cluster.bootstrap()),
        ("group.id", group),
        ("group.protocol", "consumer"),
        ("auto.offset.reset", "earliest"),
        ("fetch.max.wait.ms", "200"),
        ("retry.backoff.ms", "100"),
        ("mooring.shutdown.timeout.ms", "5000"),
    ];
    if let Some(id) = instance_id {
        props.push(("group.instance.id", id));
    }
    let props: Vec<(String, String)> = props
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let c = Consumer::new(ConsumerConfig::from_properties(props).unwrap()).unwrap();
    c.subscribe([topic.to_string()]).unwrap();
    c
}

/// Polls `check` until it holds; after `timeout` fails with what the sidecar shows.
async fn until<F, Fut>(addr: std::net::SocketAddr, what: &str, timeout: Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    while !check().await {
        if Instant::now() > deadline {
            let text = metrics(addr).await;
            let shown: Vec<&str> = text
                .lines()
                .filter(|l| {
                    !l.starts_with('#')
                        && (l.contains("rebalances_total")
                            || l.contains("epoch")
                            || l.contains("assigned_partitions")
                            || l.contains("reconcil")
                            || l.contains("instance_id"))
                        && !l.contains("_bucket")
                })
                .collect();
            panic!(
                "timed out waiting for {what}:\n{}\n{}\n{}\n{}",
                shown.join("\n"),
                get_json(addr, "/debug/rebalances").await,
                get_json(addr, "/debug/group").await,
                get(addr, "/readyz").await.1
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn metrics(addr: std::net::SocketAddr) -> String {
    get(addr, "/metrics").await.1
}

async fn value(addr: std::net::SocketAddr, series: &str) -> f64 {
    metric(&metrics(addr).await, series).unwrap_or(f64::NAN)
}

/// The member epoch equals the group epoch the watch read, and the member is ready.
async fn caught_up(addr: std::net::SocketAddr) -> bool {
    let text = metrics(addr).await;
    let epoch = metric(&text, "mooring_member_epoch");
    epoch.is_some_and(|e| e > 0.0)
        && epoch == metric(&text, "mooring_group_epoch")
        && ready(addr).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_consumer_protocol_member_reports_its_reconciliations_to_its_sidecar() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-k848-e2e");
    let group = unique("sidecar-k848-e2e-g");
    cluster.create_topic(&topic, 4);
    cluster.produce_perf(&topic, 200, 100);
    group_timeouts(&cluster, &group);
    let s = watching_sidecar(&cluster, &group, 300, "").await;
    let addr = s.addr;
    let handler = |_r: ConsumerRecord| async { Ok::<(), String>(()) };

    // Alone: its own join gets every partition.
    let a = member(&cluster, &group, &topic, Some("pod-a"));
    let export_a = exporter(&a, addr);
    let run_a = run(&a, handler);
    until(
        addr,
        "the first member caught up",
        Duration::from_secs(30),
        || caught_up(addr),
    )
    .await;
    let text = metrics(addr).await;
    assert_eq!(
        metric(&text, "mooring_group_protocol{protocol=\"consumer\"}"),
        Some(1.0)
    );
    assert_eq!(
        metric(&text, "mooring_rebalances_total{cause=\"member_joined\"}"),
        Some(1.0),
        "{text}"
    );
    assert_eq!(metric(&text, "mooring_assigned_partitions"), Some(4.0));
    assert_eq!(
        metric(&text, "mooring_reconcile_partitions_moved_sum"),
        Some(4.0)
    );

    // Another member joins, then leaves cleanly: each moves two partitions of ours, and the
    // broker's members at the epochs before and after name why.
    let b = member(&cluster, &group, &topic, None);
    let run_b = run(&b, handler);
    until(
        addr,
        "the join moved two partitions",
        Duration::from_secs(30),
        || async {
            value(addr, "mooring_rebalances_total{cause=\"member_joined\"}").await == 2.0
                && value(addr, "mooring_assigned_partitions").await == 2.0
                && caught_up(addr).await
        },
    )
    .await;
    stop(&b, run_b).await;
    until(
        addr,
        "the leave gave them back",
        Duration::from_secs(30),
        || async {
            value(addr, "mooring_rebalances_total{cause=\"member_left\"}").await == 1.0
                && value(addr, "mooring_assigned_partitions").await == 4.0
                && caught_up(addr).await
        },
    )
    .await;
    let text = metrics(addr).await;
    assert_eq!(total_rebalances(&text), 3.0, "{text}");
    let reconciliations = metric(&text, "mooring_reconciliations_total").unwrap();
    assert!(reconciliations >= 3.0, "{text}");
    assert_eq!(
        metric(&text, "mooring_reconcile_partitions_moved_sum"),
        Some(8.0),
        "4 + 2 + 2"
    );
    for phase in ["revoke", "assign", "acknowledge"] {
        let series = format!("mooring_reconcile_phase_duration_seconds_count{{phase=\"{phase}\"}}");
        assert_eq!(metric(&text, &series), Some(reconciliations), "{series}");
    }
    assert_eq!(
        metric(&text, "mooring_rebalance_duration_seconds_count"),
        Some(3.0)
    );
    let r = get_json(addr, "/debug/rebalances").await;
    let list = r["rebalances"].as_array().unwrap();
    let seen: Vec<(&str, &str)> = list
        .iter()
        .map(|x| {
            (
                x["cause"].as_str().unwrap(),
                x["cause_basis"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("member_joined", "member"),
            ("member_joined", "broker_view"),
            ("member_left", "broker_view")
        ],
        "{r}"
    );
    assert_eq!(list[1]["revoked"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(
        list[1]["members_joined"].as_array().unwrap().len(),
        1,
        "{r}"
    );
    assert_eq!(list[2]["assigned"].as_array().unwrap().len(), 2, "{r}");
    assert_eq!(list[2]["members_left"].as_array().unwrap().len(), 1, "{r}");
    // The join's revoke came at the epoch the member held (it moves on once it has revoked);
    // the leave's partitions came with a new one.
    let epochs = |i: usize| {
        let e = &list[i]["reconciliation"];
        (
            e["member_epoch_before"].as_i64().unwrap(),
            e["member_epoch"].as_i64().unwrap(),
        )
    };
    assert_eq!(epochs(0).0, -1, "{r}");
    assert!(epochs(0).1 > 0, "{r}");
    assert_eq!(epochs(1).0, epochs(1).1, "{r}");
    assert!(epochs(2).1 > epochs(2).0, "{r}");

    // A second process with the same instance id, beside its own sidecar, waits while the first
    // holds the id (and stays ready), then takes its place when it closes (epoch -2).
    let s2 = watching_sidecar(&cluster, &group, 300, "").await;
    let addr2 = s2.addr;
    // The new pod's sidecar reads the group before its consumer starts, as a native sidecar does.
    until(
        addr2,
        "the second sidecar read the group",
        Duration::from_secs(10),
        || async { value(addr2, "mooring_group_epoch").await > 0.0 },
    )
    .await;
    let a2 = member(&cluster, &group, &topic, Some("pod-a"));
    let export_a2 = exporter(&a2, addr2);
    let run_a2 = run(&a2, handler);
    until(
        addr2,
        "the second process waits",
        Duration::from_secs(30),
        || async { value(addr2, "mooring_instance_id_unreleased_attempts_total").await >= 2.0 },
    )
    .await;
    let (status, body) = get(addr2, "/readyz").await;
    assert_eq!(
        status, 200,
        "a member waiting for its instance id is ready: {body}"
    );
    assert!(body.contains("\"instance_id\":\"pod-a\""), "{body}");
    assert!(value(addr2, "mooring_instance_id_unreleased_wait_seconds").await > 0.0);
    let epoch_before = value(addr2, "mooring_group_epoch").await;
    stop(&a, run_a).await;
    export_a.shutdown().await;
    until(
        addr2,
        "the successor took the place",
        Duration::from_secs(30),
        || async {
            value(addr2, "mooring_assigned_partitions").await == 4.0 && caught_up(addr2).await
        },
    )
    .await;
    let text = metrics(addr2).await;
    assert_eq!(
        total_rebalances(&text),
        0.0,
        "a static rejoin is no rebalance:\n{text}"
    );
    assert_eq!(
        metric(&text, "mooring_instance_id_unreleased_wait_seconds"),
        Some(0.0)
    );
    assert_eq!(
        metric(&text, "mooring_group_epoch"),
        Some(epoch_before),
        "the group epoch did not move"
    );
    let r = get_json(addr2, "/debug/rebalances").await;
    let last = r["rebalances"].as_array().unwrap().last().cloned().unwrap();
    assert_eq!(last["outcome"], "static_rejoin", "{r}");
    assert_eq!(last["assigned"].as_array().unwrap().len(), 4, "{r}");

    stop(&a2, run_a2).await;
    export_a2.shutdown().await;
    s2.shutdown().await;
    s.shutdown().await;
    cluster.delete_topic(&topic);
}
