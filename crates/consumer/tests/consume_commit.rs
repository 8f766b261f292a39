//! Consuming against the real broker (`scripts/kafka start`): everything produced is handled
//! exactly once with commits, a restarted consumer resumes from the committed offsets, and
//! `auto.offset.reset=none` without commits is a typed error naming the partitions.
//! Run with `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-consumer`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use common::{consumer, spawn_run, stop, wait_until, Seen};
use mooring_consumer::{ConsumerError, TopicPartition};
use mooring_testkit::{unique, Cluster};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn consumes_everything_once_and_a_restart_resumes_from_the_commits() {
    let cluster = Cluster::shared();
    let topic = unique("consume-once");
    let group = unique("consume-once-g");
    cluster.create_topic(&topic, 4);
    assert_eq!(cluster.produce_verifiable(&topic, 2000, 0, &[]), 2000);

    let c = consumer(&cluster, &group, &[("mooring.concurrency", "8")]);
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("2000 records handled", Duration::from_secs(40), || {
        seen.distinct() >= 2000
    })
    .await;
    stop(&c, run).await.unwrap();
    let lost = 2000 - seen.distinct();
    let duplicates = seen.duplicates();
    println!("first run: lost = {lost}, duplicates = {duplicates}");
    assert_eq!((lost, duplicates), (0, 0));
    let mut values = seen.values();
    values.sort_by_key(|v| v.parse::<u64>().unwrap());
    assert_eq!(values, (0..2000).map(|v| v.to_string()).collect::<Vec<_>>());

    // A second consumer in the same group starts from the commits: it sees only new records.
    assert_eq!(cluster.produce_verifiable(&topic, 500, 0, &[]), 500);
    let c2 = consumer(&cluster, &group, &[]);
    c2.subscribe([topic.clone()]).unwrap();
    let seen2 = Seen::default();
    let run2 = spawn_run(&c2, &seen2, Duration::ZERO);
    wait_until("500 new records handled", Duration::from_secs(40), || {
        seen2.distinct() >= 500
    })
    .await;
    // Give a duplicate a chance to show up before stopping.
    let end: i64 = cluster.end_offsets(&topic).values().sum();
    assert_eq!(end, 2500);
    stop(&c2, run2).await.unwrap();
    let first = seen.offsets();
    let again: Vec<(String, i32, i64)> = seen2
        .offsets()
        .into_iter()
        .filter(|k| first.binary_search(k).is_ok())
        .collect();
    println!(
        "restart: new = {}, re-delivered = {}, duplicates = {}",
        seen2.distinct(),
        again.len(),
        seen2.duplicates()
    );
    assert!(
        again.is_empty(),
        "records handled again after a clean shutdown: {again:?}"
    );
    assert_eq!((seen2.distinct(), seen2.duplicates()), (500, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reset_none_without_commits_names_the_partitions() {
    let cluster = Cluster::shared();
    let topic = unique("reset-none");
    cluster.create_topic(&topic, 2);
    let c = consumer(
        &cluster,
        &unique("reset-none-g"),
        &[("auto.offset.reset", "none")],
    );
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    let result = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("run ends by itself")
        .unwrap();
    match result {
        Err(ConsumerError::NoOffsetForPartition { partitions }) => assert_eq!(
            partitions,
            [
                TopicPartition::new(&topic, 0),
                TopicPartition::new(&topic, 1)
            ]
        ),
        other => panic!("expected NoOffsetForPartition, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn commit_by_hand_then_seek_back_to_the_beginning() {
    let cluster = Cluster::shared();
    let topic = unique("manual-commit");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, 300, 10, &[]), 300);
    let ends = cluster.end_offsets(&topic);
    let c = consumer(
        &cluster,
        &unique("manual-commit-g"),
        &[("enable.auto.commit", "false")],
    );
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("300 records handled", Duration::from_secs(30), || {
        seen.distinct() == 300
    })
    .await;
    let tps: Vec<TopicPartition> = (0..2).map(|p| TopicPartition::new(&topic, p)).collect();
    assert!(
        tps.iter().all(|tp| c.committed(tp).is_none()),
        "nothing committed without auto-commit"
    );
    c.commit().await.unwrap();
    for tp in &tps {
        assert_eq!(c.committed(tp), Some(ends[&tp.partition]), "{tp}");
    }

    // Back to the beginning: every record is handled a second time.
    c.seek_to_beginning(tps.clone()).unwrap();
    wait_until(
        "every record handled twice",
        Duration::from_secs(30),
        || seen.duplicates() == 300,
    )
    .await;
    stop(&c, run).await.unwrap();
    assert_eq!((seen.distinct(), seen.duplicates()), (300, 300));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_static_member_restarts_without_a_rebalance() {
    let cluster = Cluster::shared();
    let topic = unique("static");
    let group = unique("static-g");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, 100, 0, &[]), 100);
    // A session long enough for the Kafka tool run between the two lives, on a loaded machine.
    let extra = [
        ("group.instance.id", "pod-0"),
        ("session.timeout.ms", "20000"),
    ];
    let c = consumer(&cluster, &group, &extra);
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("100 records handled", Duration::from_secs(30), || {
        seen.distinct() == 100
    })
    .await;
    let before = c.member_state().unwrap();
    // The commits acknowledged to the first life so far (its shutdown may commit further, which
    // only moves them on): the second life may see again at most the records after them.
    let first_end = cluster.end_offsets(&topic);
    let acknowledged: BTreeMap<i32, Option<i64>> = first_end
        .keys()
        .map(|&p| (p, c.committed(&TopicPartition::new(&topic, p))))
        .collect();
    stop(&c, run).await.unwrap();
    // No LeaveGroup: the coordinator still counts the member.
    let state = cluster.group_state(&group).expect("group exists");
    assert_eq!(state.members, 1, "{state:?}");
    // Where the group's commits stand between the two lives (nothing commits then): the second
    // life starts from them, so it sees again exactly the records from them to the first life's
    // end.
    let committed = cluster.committed_offsets(&group, &topic);

    let c2 = consumer(&cluster, &group, &extra);
    c2.subscribe([topic.clone()]).unwrap();
    let seen2 = Seen::default();
    let run2 = spawn_run(&c2, &seen2, Duration::ZERO);
    assert_eq!(cluster.produce_verifiable(&topic, 50, 0, &[]), 50);
    // The second life reads each partition from its commit (the log's start without one:
    // auto.offset.reset=earliest on a topic that lost nothing).
    let start = |p: i32| committed.get(&p).copied().flatten().unwrap_or(0);
    let expected_again: BTreeSet<(i32, i64)> = first_end
        .iter()
        .flat_map(|(&p, &end)| (start(p)..end).map(move |o| (p, o)))
        .collect();
    let after_first = |(_, p, o): &(String, i32, i64)| *o >= first_end[p];
    wait_until(
        "50 new records handled, and those after the commits again",
        Duration::from_secs(30),
        || {
            let offsets = seen2.offsets();
            offsets.iter().filter(|k| after_first(k)).count() == 50
                && expected_again
                    .iter()
                    .all(|&(p, o)| offsets.contains(&(topic.clone(), p, o)))
        },
    )
    .await;
    let after = c2.member_state().unwrap();
    stop(&c2, run2).await.unwrap();
    let again: BTreeSet<(i32, i64)> = seen2
        .offsets()
        .into_iter()
        .filter(|k| !after_first(k))
        .map(|(_, p, o)| (p, o))
        .collect();
    let bound: i64 = first_end
        .iter()
        .map(|(p, end)| end - acknowledged[p].unwrap_or(0))
        .sum();
    println!(
        "static restart: generation {} → {}, acknowledged commits {acknowledged:?}, group's \
         {committed:?}, first life's end {first_end:?}: re-delivered {} (bound {bound})",
        before.generation,
        after.generation,
        again.len()
    );
    assert_eq!(
        seen2.duplicates(),
        0,
        "a record handled twice by the second life"
    );
    assert!(
        again
            .iter()
            .all(|(p, o)| *o >= acknowledged[p].unwrap_or(0)),
        "re-delivered records the first life's acknowledged commits covered: {again:?}, \
         acknowledged {acknowledged:?}"
    );
    assert!(again.len() as i64 <= bound, "{again:?}, bound {bound}");
    assert_eq!(
        again, expected_again,
        "not the records from the group's commits on"
    );
    assert_eq!(
        after.generation, before.generation,
        "the restart rebalanced"
    );
    assert_eq!(after.assignment, before.assignment);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pattern_subscription_consumes_every_matching_topic() {
    let cluster = Cluster::shared();
    let prefix = unique("pattern");
    let (t1, t2) = (format!("{prefix}-a"), format!("{prefix}-b"));
    cluster.create_topic(&t1, 2);
    cluster.create_topic(&t2, 1);
    cluster.create_topic(&format!("x{prefix}-c"), 1); // does not match: the whole name must
    assert_eq!(cluster.produce_verifiable(&t1, 100, 0, &[]), 100);
    assert_eq!(cluster.produce_verifiable(&t2, 50, 0, &[]), 50);
    let c = consumer(&cluster, &unique("pattern-g"), &[]);
    c.subscribe_pattern(&format!("{}-.*", regex_escape(&prefix)))
        .unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("150 records handled", Duration::from_secs(30), || {
        seen.distinct() >= 150
    })
    .await;
    let assigned: Vec<String> = c.assignment().into_iter().map(|tp| tp.topic).collect();
    stop(&c, run).await.unwrap();
    assert_eq!(assigned, [t1.clone(), t1, t2]);
    assert_eq!((seen.distinct(), seen.duplicates()), (150, 0));
}

/// A pattern that also matches an internal topic (`__consumer_offsets`) subscribes only to the
/// others, as Java's `exclude.internal.topics=true` (the default) has it: the group never assigns
/// this member a partition of the offsets topic.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pattern_subscription_leaves_internal_topics_out() {
    let cluster = Cluster::shared();
    let topic = unique("pattern-internal");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, 40, 0, &[]), 40);
    let c = consumer(&cluster, &unique("pattern-internal-g"), &[]);
    c.subscribe_pattern(&format!("__consumer_offsets|{}", regex_escape(&topic)))
        .unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("40 records handled", Duration::from_secs(30), || {
        seen.distinct() >= 40
    })
    .await;
    let assigned: Vec<String> = c.assignment().into_iter().map(|tp| tp.topic).collect();
    let member = c.member_state().expect("in the group");
    stop(&c, run).await.unwrap();
    assert_eq!(assigned, [topic.clone(), topic.clone()]);
    let subscribed: Vec<String> = member.subscription.into_iter().collect();
    assert_eq!(subscribed, std::slice::from_ref(&topic));
    assert!(
        seen.offsets().iter().all(|(t, _, _)| *t == topic),
        "records of another topic were handled"
    );
}

/// Under the consumer protocol the broker matches the pattern: RE2/J syntax the `regex` crate
/// refuses (`\Q...\E` quoting) works, only whole names match, and a matching topic created
/// while the member runs is assigned to it too (the broker re-evaluates its regular expressions,
/// at most every 10 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_pattern_subscription_under_the_consumer_protocol_is_matched_by_the_broker() {
    let cluster = Cluster::shared();
    common::require_protocol(&cluster, "consumer");
    let prefix = unique("re2j");
    let (t1, t2, t3) = (
        format!("{prefix}-a"),
        format!("{prefix}-b"),
        format!("{prefix}-c"),
    );
    cluster.create_topic(&t1, 2);
    cluster.create_topic(&t2, 1);
    cluster.create_topic(&format!("x{prefix}-d"), 1); // does not match: the whole name must
    assert_eq!(cluster.produce_verifiable(&t1, 100, 0, &[]), 100);
    assert_eq!(cluster.produce_verifiable(&t2, 50, 0, &[]), 50);
    let c = common::consumer_for(&cluster, &unique("re2j-g"), "consumer", &[]);
    let pattern = format!(r"\Q{prefix}-\E.*");
    assert!(
        regex::Regex::new(&pattern).is_err(),
        "not the regex crate's syntax"
    );
    c.subscribe_pattern(&pattern).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until("150 records handled", Duration::from_secs(30), || {
        seen.distinct() >= 150
    })
    .await;
    let assigned: Vec<String> = c.assignment().into_iter().map(|tp| tp.topic).collect();
    assert_eq!(assigned, [t1.clone(), t1.clone(), t2.clone()]);
    cluster.create_topic(&t3, 1);
    assert_eq!(cluster.produce_verifiable(&t3, 20, 0, &[]), 20);
    wait_until(
        "the new matching topic assigned and consumed",
        Duration::from_secs(40),
        || seen.distinct() >= 170,
    )
    .await;
    let assigned: Vec<String> = c.assignment().into_iter().map(|tp| tp.topic).collect();
    stop(&c, run).await.unwrap();
    assert_eq!(assigned, [t1.clone(), t1, t2, t3]);
    assert_eq!((seen.distinct(), seen.duplicates()), (170, 0));
}

/// Where the two protocols differ: the broker matches a pattern against every topic it knows,
/// internal ones included, so under the consumer protocol a pattern that matches
/// `__consumer_offsets` is assigned its partitions (the classic path leaves internal topics out,
/// [`a_pattern_subscription_leaves_internal_topics_out`]); the README says to keep them out of
/// the pattern.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn under_the_consumer_protocol_the_broker_matches_internal_topics_too() {
    let cluster = Cluster::shared();
    common::require_protocol(&cluster, "consumer");
    let topic = unique("re2j-internal");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 10, 0, &[]), 10);
    let c = common::consumer_for(&cluster, &unique("re2j-internal-g"), "consumer", &[]);
    c.subscribe_pattern(&format!(r"__consumer_offsets|\Q{topic}\E"))
        .unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until(
        "the topic's records handled, the offsets topic assigned",
        Duration::from_secs(30),
        || {
            let topics: std::collections::BTreeSet<String> =
                c.assignment().into_iter().map(|tp| tp.topic).collect();
            let handled = seen
                .offsets()
                .iter()
                .filter(|(t, _, _)| *t == topic)
                .count();
            handled >= 10 && topics.contains("__consumer_offsets") && topics.contains(&topic)
        },
    )
    .await;
    stop(&c, run).await.unwrap();
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                vec![c]
            } else {
                vec!['\\', c]
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn manual_assignment_without_a_group() {
    let cluster = Cluster::shared();
    let topic = unique("assign");
    cluster.create_topic(&topic, 3);
    assert_eq!(cluster.produce_verifiable(&topic, 300, 30, &[]), 300);
    let ends = cluster.end_offsets(&topic);
    let props: Vec<(String, String)> = common::props(&cluster, "unused", &[])
        .into_iter()
        .filter(|(k, _)| {
            !k.starts_with("group.") && !k.contains("session") && !k.contains("heartbeat")
        })
        .collect();
    let config = mooring_consumer::ConsumerConfig::from_properties(props).unwrap();
    assert!(config.group.is_none());
    let c = mooring_consumer::Consumer::new(config).unwrap();
    // Two of the three partitions.
    c.assign([
        TopicPartition::new(&topic, 0),
        TopicPartition::new(&topic, 2),
    ])
    .unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    let expected = (ends[&0] + ends[&2]) as usize;
    wait_until(
        "partitions 0 and 2 consumed",
        Duration::from_secs(30),
        || seen.distinct() == expected,
    )
    .await;
    assert!(matches!(c.commit().await, Err(ConsumerError::NoGroup(_))));
    stop(&c, run).await.unwrap();
    assert_eq!(seen.count_in(1), 0);
    assert_eq!((seen.distinct(), seen.duplicates()), (expected, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn offset_out_of_range_resets_by_policy() {
    let cluster = Cluster::shared();
    let topic = unique("out-of-range");
    let group = unique("out-of-range-g");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 50, 0, &[]), 50);
    let tp = TopicPartition::new(&topic, 0);

    // earliest: a position past the log end (OFFSET_OUT_OF_RANGE) goes back to the start.
    let c = consumer(&cluster, &group, &[]);
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let run = spawn_run(&c, &seen, Duration::ZERO);
    wait_until(
        "50 records handled and committed",
        Duration::from_secs(30),
        || seen.distinct() == 50 && c.committed(&tp) == Some(50),
    )
    .await;
    c.seek(&tp, 10_000).unwrap();
    wait_until(
        "every record handled again",
        Duration::from_secs(30),
        || seen.duplicates() == 50,
    )
    .await;
    stop(&c, run).await.unwrap();

    // none: the same is a typed error naming the partition (the start used the commit).
    let c = consumer(&cluster, &group, &[("auto.offset.reset", "none")]);
    c.subscribe([topic.clone()]).unwrap();
    let run = spawn_run(&c, &Seen::default(), Duration::ZERO);
    wait_until("started from the commit", Duration::from_secs(30), || {
        c.position(&tp) == Some(50)
    })
    .await;
    c.seek(&tp, 10_000).unwrap();
    let result = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("run ends by itself")
        .unwrap();
    match result {
        Err(ConsumerError::OffsetOutOfRange { partitions }) => assert_eq!(partitions, [tp]),
        other => panic!("expected OffsetOutOfRange, got {other:?}"),
    }
}
