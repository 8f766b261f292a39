//! Fetching from the nearest replica (KIP-392) on a three-node cluster of its own (`t-rack-fetch`,
//! port base 30000) whose nodes 1, 2, 3 sit in racks r1, r2, r3 with Kafka's
//! `RackAwareReplicaSelector` (`scripts/kafka start --racks r1,r2,r3 --jmx`), every topic
//! replicated on all three nodes and written with acks=all:
//!
//! 1. three consumers with `client.rack` r1, r2, r3, each assigned every partition, read every
//!    record from their own rack's broker (the consumer's `fetch_stats`), cross-checked against
//!    the brokers' own `BytesOutPerSec` of the topic (JmxTool);
//! 2. the same three without `client.rack` read from the leaders: the share of record bytes
//!    fetched across racks, printed beside the first figure;
//! 3. a consumer in r2 reads the partitions node 2 follows (not leads) while a producer writes;
//!    node 2 is SIGKILLed: the consumer falls back to the leaders, loses nothing (every
//!    acknowledged record handled once, in order per partition), and reads from node 2 again
//!    once it is back;
//! 4. rack-aware assignment (KIP-881) in a classic group mixing ours (r1, r3) with Kafka's Java
//!    `VerifiableConsumer` (r2), on a topic of nine single-replica partitions, three in each
//!    rack: under range and cooperative-sticky, whether ours or Java's leads (computes the
//!    assignment), every member gets the three partitions of its own rack, and the broker's
//!    view (`ConsumerGroupCommand`) and each member's agree on it.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;
#[path = "rack_fetch/mixed.rs"]
mod mixed;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{consumer, stop, wait_until, Acked, Seen};
use mooring_client::{Client, ClientConfig};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerError, FetchStats, TopicPartition};
use mooring_testkit::{unique, Cluster};
use tokio::task::JoinHandle;
use tokio::time::Instant;

const RACKS: [&str; 3] = ["r1", "r2", "r3"];
const PARTITIONS: i32 = 6;
const RECORDS: u64 = 3000;
/// Records written before the follower's failure: at 5 ms a record and 200 records buffered per
/// partition, about 15 s of work for the consumer of the four partitions node 2 follows, past
/// the 9 s (`broker.session.timeout.ms`) in which the leaders name node 2 while it is dead.
const BACKLOG: u64 = 18_000;
const HANDLER_DELAY: Duration = Duration::from_millis(5);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_node_racks_fetch_nearby_survive_a_broker_and_assign_by_rack() {
    let cluster =
        Cluster::dedicated_with("t-rack-fetch", 3, 30000, &["--racks", "r1,r2,r3", "--jmx"]);
    let topic = unique("rack");
    cluster.create_topic(&topic, PARTITIONS as u32);
    let acked = common::produce_acked(&cluster, &topic, RECORDS, 60);
    assert_eq!(
        acked.values().map(BTreeSet::len).sum::<usize>() as u64,
        RECORDS
    );
    let leaders = leaders(&cluster, &topic).await;
    println!("leaders by partition: {leaders:?}");

    let jmx_before = bytes_out(&cluster, &topic);
    let near = read_everything(&cluster, &topic, &acked, &leaders, true).await;
    let jmx_after = bytes_out(&cluster, &topic);
    let far = read_everything(&cluster, &topic, &acked, &leaders, false).await;

    let (near_cross, near_total) = cross_rack(&near);
    let (far_cross, far_total) = cross_rack(&far);
    println!(
        "cross-rack share of fetched record bytes: with client.rack {:.1} % ({near_cross} of \
         {near_total} bytes), without {:.1} % ({far_cross} of {far_total} bytes)",
        percent(near_cross, near_total),
        percent(far_cross, far_total),
    );
    for (i, stats) in near.iter().enumerate() {
        println!("  consumer in {}: {}", RACKS[i], by_broker(stats));
    }
    assert_eq!(
        near_cross, 0,
        "with client.rack every record byte comes from the consumer's own rack"
    );
    assert!(
        far_cross * 3 > far_total,
        "without client.rack most bytes come from the leaders in other racks"
    );

    // The brokers' own count of the bytes they sent consumers of the topic: what ours say.
    let ours: BTreeMap<i32, u64> = (1..=3)
        .map(|node| {
            let sum = near
                .iter()
                .filter_map(|s| s.broker(node))
                .map(|b| b.record_bytes)
                .sum();
            (node, sum)
        })
        .collect();
    let theirs: BTreeMap<i32, u64> = (1..=3)
        .map(|node| (node, jmx_after[&node] - jmx_before[&node]))
        .collect();
    println!(
        "record bytes sent by broker (JMX BytesOutPerSec): {theirs:?}, fetched by ours: {ours:?}"
    );
    assert_eq!(ours, theirs, "our per-broker counts against the brokers'");

    follower_failure(&cluster).await;
    mixed::rack_aware_mixed_group(&cluster).await;
}

/// Partition → leader node, from fresh metadata.
async fn leaders(cluster: &Cluster, topic: &str) -> BTreeMap<i32, i32> {
    let admin = Client::connect(ClientConfig::new(cluster.bootstrap().split(',')))
        .await
        .unwrap();
    let metadata = admin.refresh_metadata().await.unwrap();
    (0..PARTITIONS)
        .map(|p| (p, metadata.leader_for(topic, p).unwrap().0))
        .collect()
}

/// A consumer assigned `partitions` by hand, with `client.rack` `rack` and `extra` properties.
fn rack_consumer(
    cluster: &Cluster,
    partitions: impl IntoIterator<Item = TopicPartition>,
    rack: Option<&str>,
    extra: &[(&str, &str)],
) -> Consumer {
    let group = unique("rack-g");
    let mut extra = [&[("mooring.concurrency", "4")], extra].concat();
    if let Some(rack) = rack {
        extra.push(("client.rack", rack));
    }
    let c = consumer(cluster, &group, &extra);
    c.assign(partitions).unwrap();
    c
}

/// Three consumers, one per rack (with its `client.rack` when `with_rack`), each assigned every
/// partition of `topic`: each handles every acknowledged record once; their fetch stats.
async fn read_everything(
    cluster: &Cluster,
    topic: &str,
    acked: &Acked,
    leaders: &BTreeMap<i32, i32>,
    with_rack: bool,
) -> Vec<FetchStats> {
    let all: Vec<TopicPartition> = (0..PARTITIONS)
        .map(|p| TopicPartition::new(topic, p))
        .collect();
    let mut running = Vec::new();
    for rack in RACKS {
        let c = rack_consumer(cluster, all.clone(), with_rack.then_some(rack), &[]);
        let seen = Seen::default();
        let run = common::spawn_run(&c, &seen, Duration::ZERO);
        running.push((c, seen, run));
    }
    let total = acked.values().map(BTreeSet::len).sum::<usize>();
    for (i, (c, seen, _)) in running.iter().enumerate() {
        wait_until(
            &format!("consumer {} handled every record", RACKS[i]),
            Duration::from_secs(60),
            || seen.distinct() >= total,
        )
        .await;
        if with_rack {
            // Node i+1 is in the consumer's rack: it serves every partition it does not lead.
            let node = i as i32 + 1;
            let followed: Vec<(TopicPartition, i32)> = leaders
                .iter()
                .filter(|(_, leader)| **leader != node)
                .map(|(p, _)| (TopicPartition::new(topic, *p), node))
                .collect();
            assert_eq!(
                c.fetch_stats().follower_partitions,
                followed,
                "consumer {}: its rack's follower serves what it does not lead",
                RACKS[i]
            );
        }
    }
    let mut stats = Vec::new();
    for (c, seen, run) in running {
        stop(&c, run).await.unwrap();
        assert_eq!(
            (seen.distinct(), seen.duplicates()),
            (total, 0),
            "every record once"
        );
        let handled: Vec<(i32, i64)> = seen.offsets().into_iter().map(|(_, p, o)| (p, o)).collect();
        assert!(common::lost(acked, &handled).is_empty());
        stats.push(c.fetch_stats());
    }
    stats
}

/// Record bytes fetched from brokers of another rack than the consumer's (consumer `i` is in
/// `RACKS[i]`), and in all, over the consumers.
fn cross_rack(stats: &[FetchStats]) -> (u64, u64) {
    let mut cross = 0;
    for (i, s) in stats.iter().enumerate() {
        for b in &s.brokers {
            assert_eq!(
                b.rack.as_deref(),
                Some(RACKS[(b.node_id - 1) as usize]),
                "the rack from metadata"
            );
            if b.rack.as_deref() != Some(RACKS[i]) {
                cross += b.record_bytes;
            }
        }
    }
    (cross, stats.iter().map(FetchStats::record_bytes).sum())
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn by_broker(stats: &FetchStats) -> String {
    stats
        .brokers
        .iter()
        .map(|b| {
            format!(
                "node {} ({}): {} bytes, {} records",
                b.node_id,
                b.rack.as_deref().unwrap_or("-"),
                b.record_bytes,
                b.records
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Each broker's `BytesOutPerSec` count for `topic` (bytes of records it sent consumers; 0 before
/// any), read with Kafka's JmxTool.
fn bytes_out(cluster: &Cluster, topic: &str) -> BTreeMap<i32, u64> {
    let object = format!("kafka.server:type=BrokerTopicMetrics,name=BytesOutPerSec,topic={topic}");
    cluster
        .var("MOORING_KAFKA_JMX_URLS")
        .split(',')
        .enumerate()
        .map(|(i, url)| {
            let out = cluster.tool(
                "JmxTool",
                &[
                    "--one-time",
                    "true",
                    "--jmx-url",
                    url,
                    "--report-format",
                    "properties",
                    "--object-name",
                    &object,
                    "--attributes",
                    "Count",
                ],
            );
            let text = String::from_utf8_lossy(&out.stdout);
            let count = text
                .lines()
                .filter(|l| {
                    l.contains("name=BytesOutPerSec") && l.contains(&format!("topic={topic}"))
                })
                .find_map(|l| l.rsplit_once(":Count="))
                .map_or(0, |(_, n)| n.trim().parse::<f64>().unwrap() as u64);
            (i as i32 + 1, count)
        })
        .collect()
}

/// Every record a handler got, in the order it got them: (partition, offset, when).
#[derive(Clone, Default)]
struct Deliveries(Arc<Mutex<Vec<(i32, i64, Instant)>>>);

impl Deliveries {
    /// Runs `c` with a handler taking `delay` a record.
    fn run(&self, c: &Consumer, delay: Duration) -> JoinHandle<Result<(), ConsumerError>> {
        let (c, log) = (c.clone(), self.0.clone());
        tokio::spawn(async move {
            c.run(move |record: ConsumerRecord| {
                let log = log.clone();
                async move {
                    tokio::time::sleep(delay).await;
                    log.lock()
                        .unwrap()
                        .push((record.partition(), record.offset(), Instant::now()));
                    Ok::<(), String>(())
                }
            })
            .await
        })
    }

    fn all(&self) -> Vec<(i32, i64, Instant)> {
        self.0.lock().unwrap().clone()
    }

    fn count(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

/// Node 2 follows (does not lead) the partitions a consumer in r2 reads, with a backlog, while a
/// producer writes; it is SIGKILLed and started again. The leaders serve the backlog at once
/// (their requests carry no rack while the partitions avoid node 2: naming it, they would send
/// nothing until the controller fenced it).
async fn follower_failure(cluster: &Cluster) {
    let topic = unique("rack-kill");
    cluster.create_topic(&topic, PARTITIONS as u32);
    let leaders = leaders(cluster, &topic).await;
    let followed: BTreeSet<i32> = leaders
        .iter()
        .filter(|(_, l)| **l != 2)
        .map(|(p, _)| *p)
        .collect();
    let assigned: Vec<TopicPartition> = followed
        .iter()
        .map(|p| TopicPartition::new(&topic, *p))
        .collect();
    let backlog = common::produce_acked(cluster, &topic, BACKLOG, 60);
    let producer = cluster.spawn_verifiable_producer(&topic, None, 300, &[("linger.ms", "5")]);
    // A small buffer (1 s of work a partition) keeps the fetcher fetching all along, so the
    // time until the leaders serve is the fetcher's, not the buffer's.
    let c = rack_consumer(
        cluster,
        assigned.clone(),
        Some("r2"),
        &[("mooring.buffer.max.records", "200")],
    );
    let log = Deliveries::default();
    let run = log.run(&c, HANDLER_DELAY);
    let on_node_2 = |stats: &FetchStats| {
        let served: BTreeSet<&TopicPartition> = stats
            .follower_partitions
            .iter()
            .filter(|(_, node)| *node == 2)
            .map(|(tp, _)| tp)
            .collect();
        served.len() == assigned.len()
    };
    wait_until(
        "node 2 serves every assigned partition",
        Duration::from_secs(60),
        || on_node_2(&c.fetch_stats()) && log.count() > 1000,
    )
    .await;

    let before = c.fetch_stats();
    let from_leaders = |s: &FetchStats| -> u64 {
        s.brokers
            .iter()
            .filter(|b| b.node_id != 2)
            .map(|b| b.record_bytes)
            .sum()
    };
    println!("before the kill: {}", by_broker(&before));
    assert_eq!(from_leaders(&before), 0, "nothing from the leaders yet");
    let killed_at = Instant::now();
    tokio::task::block_in_place(|| cluster.kill(2));
    wait_until(
        "the leaders serve the partitions",
        Duration::from_secs(60),
        || from_leaders(&c.fetch_stats()) > 0,
    )
    .await;
    let fell_back = killed_at.elapsed();
    let at_restart = c.fetch_stats();
    let node_2_bytes = |s: &FetchStats| s.broker(2).map_or(0, |b| b.record_bytes);

    let restart_at = Instant::now();
    tokio::task::block_in_place(|| cluster.restart(2));
    let started = restart_at.elapsed();
    wait_until("node 2 serves them again", Duration::from_secs(90), || {
        let s = c.fetch_stats();
        on_node_2(&s) && node_2_bytes(&s) > node_2_bytes(&at_restart)
    })
    .await;
    let back_at = Instant::now();
    let back = back_at - restart_at;

    let acked = producer.stop();
    let acked: BTreeSet<(i32, i64)> = acked
        .into_iter()
        .chain(
            backlog
                .iter()
                .flat_map(|(p, offsets)| offsets.iter().map(|o| (*p, *o))),
        )
        .filter(|(p, _)| followed.contains(p))
        .collect();
    wait_until(
        "every acknowledged record handled",
        Duration::from_secs(120),
        || {
            let got: BTreeSet<(i32, i64)> = log.all().iter().map(|(p, o, _)| (*p, *o)).collect();
            acked.is_subset(&got)
        },
    )
    .await;
    stop(&c, run).await.unwrap();
    let after = c.fetch_stats();

    let deliveries = log.all();
    let mut by_partition: BTreeMap<i32, Vec<i64>> = BTreeMap::new();
    for (p, o, _) in &deliveries {
        by_partition.entry(*p).or_default().push(*o);
    }
    let mut duplicates = 0;
    for (p, offsets) in &by_partition {
        let unique: BTreeSet<i64> = offsets.iter().copied().collect();
        duplicates += offsets.len() - unique.len();
        assert!(
            offsets.windows(2).all(|w| w[0] < w[1]),
            "partition {p} handled in order"
        );
    }
    let got: BTreeSet<(i32, i64)> = deliveries.iter().map(|(p, o, _)| (*p, *o)).collect();
    let lost = acked.difference(&got).count();
    // The longest time the assigned partitions went without a delivery from the kill until
    // node 2 served them again.
    let mut times: Vec<Instant> = deliveries
        .iter()
        .map(|(_, _, at)| *at)
        .filter(|at| *at >= killed_at && *at <= back_at)
        .collect();
    times.sort();
    let longest_pause = times
        .windows(2)
        .map(|w| w[1] - w[0])
        .chain(times.first().map(|t| *t - killed_at))
        .max()
        .unwrap_or_default();
    println!(
        "follower node 2 SIGKILLed: acknowledged {}, lost {lost}, duplicates {duplicates}; the \
         leaders served records {fell_back:.1?} after the kill began; node 2 restarted in \
         {started:.1?}, read from again {back:.1?} after its restart began; longest pause in \
         deliveries from the kill until then {longest_pause:.1?}",
        acked.len()
    );
    println!("after: {}", by_broker(&after));
    assert_eq!((lost, duplicates), (0, 0));
    assert!(
        fell_back < Duration::from_secs(6),
        "the leaders served the backlog {fell_back:?} after the kill: they named the dead \
         follower until it was fenced"
    );
}
