//! A group subscription follows the topics' metadata (real broker): a topic created after the
//! consumer subscribed is consumed without waiting `metadata.max.age.ms` (missing topics are
//! looked up again every `retry.backoff.ms`, doubling), and partitions added to a topic are
//! assigned by the leader's rejoin and consumed after the next metadata refresh.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::time::Duration;

use common::{consumer, spawn_run, stop, wait_until, Seen};
use mooring_testkit::{unique, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_topic_created_after_subscribing_is_consumed() {
    let cluster = Cluster::shared();
    let topic = unique("later-topic");
    let group = unique("later-topic-g");
    // The periodic refresh alone would take five minutes: only the missing-topic lookups (every
    // 100 ms doubling to 1 s here) can assign the topic in time.
    let c = consumer(
        &cluster,
        &group,
        &[
            ("metadata.max.age.ms", "300000"),
            ("retry.backoff.max.ms", "1000"),
        ],
    );
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    // In the group before the topic exists, subscribed to it and owning nothing: what follows is
    // the lookups' doing, not the member's first metadata.
    wait_until(
        "in the group, subscribed to the missing topic, nothing assigned",
        Duration::from_secs(30),
        || {
            c.member_state().is_some_and(|m| {
                m.generation >= 1 && m.subscription.contains(&topic) && m.assignment.is_empty()
            })
        },
    )
    .await;

    cluster.create_topic(&topic, 3);
    // Found by a lookup within a second of its creation, then the leader's rejoin assigns it;
    // 10 s for a loaded machine, still far from the five minutes of metadata.max.age.ms.
    wait_until(
        "the topic's three partitions assigned after its creation",
        Duration::from_secs(10),
        || c.assignment().len() == 3,
    )
    .await;
    assert_eq!(cluster.produce_verifiable(&topic, 300, 30, &[]), 300);
    wait_until(
        "every record of the topic created after subscribing",
        Duration::from_secs(30),
        || seen.distinct() == 300,
    )
    .await;
    assert_eq!(seen.partitions_seen(), vec![0, 1, 2]);
    assert_eq!(seen.duplicates(), 0);
    stop(&c, run).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn added_partitions_are_assigned_and_consumed() {
    let cluster = Cluster::shared();
    let topic = unique("grown-topic");
    let group = unique("grown-topic-g");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, 100, 30, &[]), 100);
    let c = consumer(&cluster, &group, &[("metadata.max.age.ms", "1000")]);
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("the first 100 records", Duration::from_secs(30), || {
        seen.distinct() == 100
    })
    .await;
    assert_eq!(seen.partitions_seen(), vec![0, 1]);

    cluster.tool_ok(
        "TopicCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--alter",
            "--topic",
            &topic,
            "--partitions",
            "4",
        ],
    );
    assert_eq!(cluster.produce_verifiable(&topic, 400, 30, &[]), 400);
    wait_until(
        "every record, on the added partitions too",
        Duration::from_secs(30),
        || seen.distinct() == 500,
    )
    .await;
    assert_eq!(seen.partitions_seen(), vec![0, 1, 2, 3]);
    assert_eq!(seen.duplicates(), 0);
    stop(&c, run).await.unwrap();
}
