//! Share groups (KIP-932) on the shared real broker: a Mooring share consumer with its exporter
//! (`ShareTelemetryExporter::from_config`) beside a real sidecar watching the group.
//!
//! The records' values say what the handler does: accept; release once (a handler error) and
//! accept the redelivery; reject (`RejectRecord`: poison); release every time, so the group's
//! `share.delivery.count.limit` (2 here) archives the record. `/metrics` must count exactly what
//! happened: acquired, accepted, released, rejected, acquired by delivery count, archived (the
//! releases at the limit, which the sidecar knows from the broker's DescribeConfigs). Then the
//! broker watch: the share group's state, members, and each share-partition's start offset and
//! lag must be what Kafka's `ShareGroupCommand --describe` says, while the member runs and after
//! it left with new records waiting.
//!
//! Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-sidecar --test share_group`.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{get, get_json, metric};
use mooring_testkit::{unique, Cluster};
use support::eventually;
use support::share::{
    run, share_consumer, share_group, stop, ACCEPT, ALWAYS_FAIL, REJECT, RELEASE_ONCE,
};

const SHARE_GROUP_COMMAND: &str = "org.apache.kafka.tools.consumer.group.ShareGroupCommand";

/// Kafka's view of the group: (state, members) from `--describe --state`, and each
/// share-partition's (start offset, lag) from `--describe`.
struct KafkaView {
    state: String,
    members: i64,
    offsets: BTreeMap<i32, (i64, i64)>,
}

/// Records go to both share-partitions in turn: a share-partition that never held a record may
/// be left out of Kafka's describe, which the views compare.
const SPREAD: &[&str] =
    &["partitioner.class=org.apache.kafka.clients.producer.RoundRobinPartitioner"];

fn kafka_view(cluster: &Cluster, group: &str, topic: &str) -> KafkaView {
    let describe = |extra: &[&str]| {
        let mut args = vec!["--bootstrap-server", cluster.bootstrap(), "--describe"];
        args.extend_from_slice(extra);
        args.extend(["--group", group]);
        cluster.tool_ok(SHARE_GROUP_COMMAND, &args)
    };
    // GROUP COORDINATOR (ID) STATE #MEMBERS: the coordinator's cell holds spaces, so the state and
    // the count are read from the end of the row.
    let state = describe(&["--state"]);
    let row: Vec<&str> = state
        .lines()
        .find(|l| l.starts_with(group))
        .unwrap_or_else(|| panic!("no state row for {group}:\n{state}"))
        .split_whitespace()
        .collect();
    let members = row[row.len() - 1].parse().unwrap();
    let state_name = row[row.len() - 2].to_string();
    // GROUP TOPIC PARTITION START-OFFSET LAG
    let text = describe(&[]);
    let offsets = text
        .lines()
        .filter(|l| l.starts_with(group))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[1] == topic)
                .then(|| Some((f[2].parse().ok()?, (f[3].parse().ok()?, f[4].parse().ok()?))))
                .flatten()
        })
        .collect();
    KafkaView {
        state: state_name,
        members,
        offsets,
    }
}

/// The sidecar's view: (state, members) and each share-partition's (start offset, lag).
async fn sidecar_view(addr: std::net::SocketAddr, topic: &str) -> KafkaView {
    let group = get_json(addr, "/debug/group").await;
    let view = &group["broker_view"];
    let partitions = get_json(addr, "/debug/partitions").await;
    let offsets = partitions["lag"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["topic"] == topic)
        .filter_map(|p| {
            Some((
                p["partition"].as_i64()? as i32,
                (
                    p["lag"]["start_offset"].as_i64()?,
                    p["lag"]["lag_records"].as_i64()?,
                ),
            ))
        })
        .collect();
    KafkaView {
        state: view["state"].as_str().unwrap_or("").to_string(),
        members: view["members"].as_array().map_or(-1, |m| m.len() as i64),
        offsets,
    }
}

/// Waits until Kafka's view of the group is what `want` asks and the sidecar's is the same (both
/// read again each round: the watch looks every 300 ms), and says what they agreed on.
async fn views_agree(
    cluster: &Cluster,
    addr: std::net::SocketAddr,
    group: &str,
    topic: &str,
    want: impl Fn(&KafkaView) -> bool,
) -> KafkaView {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let kafka = kafka_view(cluster, group, topic);
        let ours = sidecar_view(addr, topic).await;
        let agree = want(&kafka)
            && ours.state == kafka.state
            && ours.members == kafka.members
            && ours.offsets == kafka.offsets
            && !kafka.offsets.is_empty();
        if agree {
            return kafka;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the sidecar's view never matched Kafka's, or Kafka's never what the test wants:\n\
             kafka: {} {} members {:?}\nours:  {} {} members {:?}\n{}",
            kafka.state,
            kafka.members,
            kafka.offsets,
            ours.state,
            ours.members,
            ours.offsets,
            get(addr, "/debug/group").await.1,
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_share_consumers_counts_and_the_broker_view_match_what_happened_and_kafka() {
    let cluster = Cluster::shared();
    let topic = unique("share-sidecar");
    cluster.create_topic(&topic, 2);
    let group = share_group(&cluster, 2);
    // 10 accepted at once, 4 released once then accepted, 3 rejected, 2 released until archived.
    for (value, count) in [
        (ACCEPT, 10),
        (RELEASE_ONCE, 4),
        (REJECT, 3),
        (ALWAYS_FAIL, 2),
    ] {
        cluster.produce_payload(&topic, count, value, SPREAD);
    }
    let sidecar = support::watching_sidecar(&cluster, &group, 300, "").await;
    let addr = sidecar.addr;
    let (consumer, exporter) = share_consumer(&cluster, &group, &topic, addr);
    let task = run(&consumer);

    // Every record done: 10 + 4 accepted, 3 rejected, 2 archived; each figure as it happened.
    let want = [
        (
            "mooring_share_records_acquired_total",
            10.0 + 4.0 * 2.0 + 3.0 + 2.0 * 2.0,
        ),
        ("mooring_share_records_accepted_total", 14.0),
        ("mooring_share_records_released_total", 4.0 + 2.0 * 2.0),
        ("mooring_share_records_rejected_total", 3.0),
        ("mooring_share_records_archived_total", 2.0),
        (
            "mooring_share_records_acquired_by_delivery_total{delivery_count=\"1\"}",
            19.0,
        ),
        (
            "mooring_share_records_acquired_by_delivery_total{delivery_count=\"2\"}",
            6.0,
        ),
        (
            "mooring_share_records_acquired_by_delivery_total{delivery_count=\"3\"}",
            0.0,
        ),
        ("mooring_share_lock_expired_total", 0.0),
        ("mooring_share_acknowledgements_failed_total", 0.0),
        ("mooring_share_delivery_count_limit", 2.0),
        ("mooring_share_member_state{state=\"stable\"}", 1.0),
        ("mooring_group_protocol{protocol=\"share\"}", 1.0),
        ("mooring_group_protocol{protocol=\"classic\"}", 0.0),
        ("mooring_assigned_partitions", 2.0),
        ("mooring_group_members", 1.0),
        ("mooring_group_state{state=\"Stable\"}", 1.0),
    ];
    eventually(
        "the sidecar to count every record's fate",
        Duration::from_secs(90),
        || async {
            let (_, text) = get(addr, "/metrics").await;
            want.iter()
                .all(|(series, v)| metric(&text, series) == Some(*v))
        },
    )
    .await;
    let (_, text) = get(addr, "/metrics").await;
    for (series, v) in want {
        assert_eq!(metric(&text, series), Some(v), "{series}:\n{text}");
    }
    // The share member's protocol stayed share through its reconciliations, each counted; its
    // join counted as a rebalance by its own cause.
    let (_, text) = get(addr, "/metrics").await;
    assert!(
        metric(&text, "mooring_reconciliations_total").unwrap_or(0.0) >= 1.0,
        "{text}"
    );
    assert_eq!(
        metric(&text, "mooring_group_protocol{protocol=\"share\"}"),
        Some(1.0)
    );
    assert_eq!(
        metric(&text, "mooring_rebalances_total{cause=\"member_joined\"}"),
        Some(1.0),
        "{}",
        get(addr, "/debug/rebalances").await.1
    );
    // The share member is ready: joined, stable, assigned.
    let (status, body) = get(addr, "/readyz").await;
    assert_eq!(status, 200, "{body}");
    // The consumer's own counters say the same (the sidecar shows what the consumer counted).
    let stats = consumer.stats();
    assert_eq!((stats.accepted, stats.released, stats.rejected), (14, 8, 3));
    // The poison and archive alerts see them (warning from 1 in the window).
    let alerts = get_json(addr, "/alerts").await;
    assert_eq!(common::level(&alerts, "share_rejected"), 1, "{alerts}");
    assert_eq!(common::level(&alerts, "share_archived"), 1, "{alerts}");
    assert_eq!(common::level(&alerts, "share_lock_expired"), 0, "{alerts}");
    // Nothing left: no lag on either share-partition; the group Stable with our member. (Kafka
    // 4.4 may leave a share-partition's start offset behind records that are all done, with lag
    // 0: the start offsets are taken as Kafka shows them.)
    let ends = cluster.end_offsets(&topic);
    let view = views_agree(&cluster, addr, &group, &topic, |k| {
        k.state == "Stable"
            && k.offsets.len() == ends.len()
            && k.offsets.values().all(|(_, lag)| *lag == 0)
    })
    .await;
    assert_eq!(view.members, 1);
    let (_, text) = get(addr, "/metrics").await;
    for (p, (start, _)) in &view.offsets {
        let series =
            format!("mooring_share_partition_start_offset{{partition=\"{p}\",topic=\"{topic}\"}}");
        assert_eq!(
            metric(&text, &series),
            Some(*start as f64),
            "{series}:\n{text}"
        );
    }
    let starts = view.offsets.clone();

    // The member leaves; new records wait: the group Empty, the start offsets where they were,
    // the lag the new records.
    stop(&consumer, task).await;
    exporter.shutdown().await;
    cluster.produce_payload(&topic, 6, ACCEPT, SPREAD);
    let view = views_agree(&cluster, addr, &group, &topic, |k| {
        k.state == "Empty" && k.offsets.values().map(|(_, lag)| lag).sum::<i64>() == 6
    })
    .await;
    assert_eq!(view.members, 0);
    for (p, (start, _)) in &view.offsets {
        assert_eq!(
            *start, starts[p].0,
            "partition {p}: nothing was consumed since"
        );
    }
    let (_, text) = get(addr, "/metrics").await;
    let exported: f64 = ends
        .keys()
        .filter_map(|p| {
            metric(
                &text,
                &format!("mooring_partition_lag_records{{partition=\"{p}\",topic=\"{topic}\"}}"),
            )
        })
        .sum();
    assert_eq!(exported, 6.0, "{text}");
    assert!(
        !text.contains("mooring_partition_owner"),
        "a share group has no owners: {text}"
    );

    sidecar.shutdown().await;
    cluster.delete_topic(&topic);
}
