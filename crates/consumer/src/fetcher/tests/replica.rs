//! Fetching from the replica a leader names (KIP-392), row by row of `replica.rs`'s reaction
//! table: the lease, its end, each error of the replica, a dead replica, a replica gone from
//! metadata, and the leader's own errors, which alone may reset a position.

use super::*;

const LEADER: i32 = NODE;
/// The replica in the consumer's rack (`r2`).
const NEAR: i32 = 2;

/// Three brokers in racks r1..r3; [`LEADER`] leads every partition of `topics`, replicated on
/// all three.
fn cluster(topics: &[(&str, i32)]) -> Metadata {
    let mut m = metadata(topics);
    for node in [1, 2, 3] {
        m.brokers.insert(
            node,
            BrokerInfo {
                node_id: node,
                host: "127.0.0.1".into(),
                port: node,
                rack: Some(format!("r{node}")),
            },
        );
    }
    for topic in m.topics.values_mut() {
        for p in topic.partitions.values_mut() {
            p.replicas = vec![1, 2, 3];
            p.isr = vec![1, 2, 3];
        }
    }
    m
}

/// A consumer in rack r2 (`client.rack`).
fn rack_harness(partitions: &[TopicPartition]) -> Harness {
    harness_with(partitions, &[("client.rack", "r2")])
}

/// The leader's answer naming `replica` as the partition's preferred read replica: no records.
fn preferred(partition: i32, replica: i32) -> PartitionData {
    PartitionData {
        partition_index: partition,
        high_watermark: 100,
        last_stable_offset: 100,
        log_start_offset: 0,
        preferred_read_replica: replica,
        ..Default::default()
    }
}

impl Harness {
    /// The rack the last request to `node` carried.
    fn rack(&self, node: i32) -> &str {
        self.in_flight.get(&node).map_or("(none sent)", |(_, r)| r)
    }

    /// `FetchError` events so far, with the node each names.
    fn fetch_errors_by_node(&mut self) -> Vec<(i32, Option<TopicPartition>, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                ConsumerEvent::FetchError {
                    node,
                    partition,
                    error,
                } => Some((node, partition, error)),
                _ => None,
            })
            .collect()
    }

    fn reset_pending(&self, p: &TopicPartition) -> Option<OffsetResetStrategy> {
        self.fetcher
            .shared
            .subs()
            .partition(p)
            .and_then(|s| s.reset_pending())
    }
}

/// `tp` moved to [`NEAR`] by the leader's answer, its records 0..3 read there, and the next
/// request to NEAR in flight.
fn on_the_near_replica(tp: &TopicPartition, md: &Metadata) -> Harness {
    let mut h = rack_harness(std::slice::from_ref(tp));
    h.send_to(LEADER, md).expect("the leader first");
    h.answer_from(LEADER, 5, vec![(tp.clone(), preferred(tp.partition, NEAR))]);
    h.send_to(NEAR, md).expect("the replica");
    h.answer_from(
        NEAR,
        9,
        vec![(tp.clone(), records(tp.partition, batch(0, 3)))],
    );
    assert_eq!(h.position(tp), 3);
    h.send_to(NEAR, md).expect("the replica again");
    h
}

/// Rows "the leader answers with preferred read replica R", "R answers -1", "the lease ends",
/// "the leader answers -1".
#[tokio::test(start_paused = true)]
async fn the_preferred_replica_serves_the_partition_until_its_lease_ends() {
    let a0 = tp("a", 0);
    let md = cluster(&[("a", 1)]);
    let mut h = rack_harness(std::slice::from_ref(&a0));
    let first = h.send_to(LEADER, &md).expect("the leader first");
    assert_eq!(listed(&Some(first)), vec![a0.clone()]);
    assert_eq!(h.rack(LEADER), "r2", "client.rack travels in every request");
    h.answer_from(LEADER, 5, vec![(a0.clone(), preferred(0, NEAR))]);
    assert_eq!(h.position(&a0), 0, "the leader skipped the read");

    // At once to the replica, in a session of its own.
    assert!(h.send_to(LEADER, &md).is_none(), "no longer the leader's");
    let to_near = h.send_to(NEAR, &md).expect("the replica at once");
    assert!(to_near.is_full());
    assert_eq!(to_near.to_send[&a0].fetch_offset, 0);
    assert_eq!(to_near.to_send[&a0].current_leader_epoch, 0);
    h.answer_from(NEAR, 9, vec![(a0.clone(), records(0, batch(0, 3)))]);
    assert_eq!(h.position(&a0), 3);

    // The replica's answers carry -1: the lease stands.
    let next = h.send_to(NEAR, &md).expect("the replica again");
    assert_eq!(next.to_send[&a0].fetch_offset, 3);
    let bytes = batch(3, 2);
    let (first_bytes, second_bytes) = (batch(0, 3).len() as u64, bytes.len() as u64);
    h.answer_from(NEAR, 9, vec![(a0.clone(), records(0, bytes))]);
    assert_eq!(h.position(&a0), 5);

    // The fetch stats: every record byte from the replica, which serves the partition now.
    let stats = h.fetcher.shared.fetch_stats.snapshot();
    let near = stats.broker(NEAR).expect("fetched from the replica");
    assert_eq!(
        (near.record_bytes, near.records, near.follower_partitions),
        (first_bytes + second_bytes, 5, 1)
    );
    assert!(
        stats.broker(LEADER).is_none(),
        "no record byte from the leader"
    );
    assert_eq!(stats.follower_partitions, [(a0.clone(), NEAR)]);
    assert_eq!(
        h.fetcher.next_expiry(Instant::now()),
        Some(Instant::now() + Duration::from_secs(300)),
        "the plan changes when the lease ends"
    );

    // metadata.max.age.ms after the leader's answer: back to the leader, which chooses again.
    advance(Duration::from_secs(300)).await;
    assert!(h.send_to(NEAR, &md).is_none(), "lease over");
    let back = h.send_to(LEADER, &md).expect("the leader again");
    assert_eq!(back.to_send[&a0].fetch_offset, 5);
    // The leader's -1: it serves the partition itself, and goes on doing so.
    h.answer_from(LEADER, 5, vec![(a0.clone(), records(0, batch(5, 1)))]);
    assert_eq!(h.position(&a0), 6);
    assert_eq!(listed(&h.send_to(LEADER, &md)), vec![a0.clone()]);
    assert!(h.fetch_errors().is_empty());
    let stats = h.fetcher.shared.fetch_stats.snapshot();
    assert!(stats.follower_partitions.is_empty());
    assert_eq!(stats.broker(LEADER).map(|b| b.records), Some(1));
}

/// Row "a partition error from R": each of them sends the partition to its leader at once,
/// without a back-off and without moving the position; the leader's requests carry no rack
/// while the partition avoids R, and a preference naming R meanwhile is not followed; after
/// `retry.backoff.ms` the rack travels again.
#[tokio::test(start_paused = true)]
async fn every_error_of_the_replica_sends_the_partition_back_to_its_leader_at_once() {
    let a0 = tp("a", 0);
    let md = cluster(&[("a", 1)]);
    for code in [
        ErrorCode::NotLeaderOrFollower,
        ErrorCode::ReplicaNotAvailable,
        ErrorCode::FencedLeaderEpoch,
        ErrorCode::UnknownLeaderEpoch,
        ErrorCode::KafkaStorageError,
        ErrorCode::OffsetNotAvailable,
        ErrorCode::UnknownTopicOrPartition,
        ErrorCode::UnknownTopicId,
        ErrorCode::OffsetOutOfRange,
        ErrorCode::UnsupportedCompressionType,
    ] {
        let mut h = on_the_near_replica(&a0, &md);
        let _ = h.events();
        h.fetcher.refresh_metadata = false;
        h.answer_from(NEAR, 9, vec![(a0.clone(), error(0, code))]);
        assert!(h.fetcher.shared.fatal().is_none(), "{code}: not fatal");
        assert_eq!(h.position(&a0), 3, "{code}: the position stays");
        assert_eq!(h.reset_pending(&a0), None, "{code}: no reset");
        assert!(h.fetcher.refresh_metadata, "{code}: metadata refreshed");
        assert_eq!(
            h.fetch_errors_by_node(),
            [(NEAR, Some(a0.clone()), code.to_string())],
            "{code}"
        );
        assert!(h.send_to(NEAR, &md).is_none(), "{code}: the lease ended");
        let back = h
            .send_to(LEADER, &md)
            .unwrap_or_else(|| panic!("{code}: to the leader at once, not backed off"));
        assert_eq!(back.to_send[&a0].fetch_offset, 3, "{code}");
        assert_eq!(h.rack(LEADER), "", "{code}: the leader serves it itself");

        // The leader naming the replica again meanwhile is not followed.
        h.answer_from(LEADER, 5, vec![(a0.clone(), preferred(0, NEAR))]);
        assert!(h.send_to(NEAR, &md).is_none(), "{code}: avoided");
        h.send_to(LEADER, &md).expect("the leader");
        h.answer_from(LEADER, 5, vec![(a0.clone(), records(0, batch(3, 1)))]);
        assert_eq!(h.position(&a0), 4, "{code}: read from the leader");

        // After retry.backoff.ms the rack travels again: the leader may name the replica.
        advance(100 * MS).await;
        h.send_to(LEADER, &md).expect("the leader");
        assert_eq!(h.rack(LEADER), "r2", "{code}");
        h.answer_from(LEADER, 5, vec![(a0.clone(), preferred(0, NEAR))]);
        assert!(h.send_to(NEAR, &md).is_some(), "{code}: the replica again");
    }
}

/// Row "OFFSET_OUT_OF_RANGE from R": a replica behind the leader never resets the position; the
/// leader has the records; only the leader's own OFFSET_OUT_OF_RANGE resets.
#[tokio::test(start_paused = true)]
async fn offset_out_of_range_from_a_replica_is_for_the_leader_to_decide() {
    let a0 = tp("a", 0);
    let md = cluster(&[("a", 1)]);
    let mut h = on_the_near_replica(&a0, &md);
    h.answer_from(
        NEAR,
        9,
        vec![(a0.clone(), error(0, ErrorCode::OffsetOutOfRange))],
    );
    assert_eq!((h.position(&a0), h.reset_pending(&a0)), (3, None));
    h.send_to(LEADER, &md).expect("the leader");
    h.answer_from(LEADER, 5, vec![(a0.clone(), records(0, batch(3, 2)))]);
    assert_eq!(h.position(&a0), 5, "the leader had them");

    let _ = h.send_to(LEADER, &md).expect("the leader");
    h.answer_from(
        LEADER,
        5,
        vec![(a0.clone(), error(0, ErrorCode::OffsetOutOfRange))],
    );
    assert_eq!(
        h.reset_pending(&a0),
        Some(OffsetResetStrategy::Earliest),
        "the leader's word resets by auto.offset.reset"
    );
}

/// Whether a partition came from a replica is what its request was sent as: a lease ending
/// while the replica's request is in flight does not make the replica's answer the leader's.
#[tokio::test(start_paused = true)]
async fn a_lease_ending_in_flight_leaves_the_replicas_answer_a_replicas() {
    let a0 = tp("a", 0);
    let md = cluster(&[("a", 1)]);
    let mut h = on_the_near_replica(&a0, &md);
    advance(Duration::from_secs(300)).await;
    h.send_to(LEADER, &md).expect("lease over: the leader");
    h.answer_from(
        NEAR,
        9,
        vec![(a0.clone(), error(0, ErrorCode::OffsetOutOfRange))],
    );
    assert_eq!((h.position(&a0), h.reset_pending(&a0)), (3, None));
}

/// Row "a request to R fails as a whole": every partition R served goes to its leader at once
/// (the leader is not backed off, R is), with no rack while they avoid R.
#[tokio::test(start_paused = true)]
async fn a_dead_replica_sends_every_partition_it_served_to_its_leader() {
    let (a0, a1) = (tp("a", 0), tp("a", 1));
    let md = cluster(&[("a", 2)]);
    let mut h = rack_harness(&[a0.clone(), a1.clone()]);
    h.send_to(LEADER, &md).expect("the leader first");
    h.answer_from(
        LEADER,
        5,
        vec![
            (a0.clone(), preferred(0, NEAR)),
            (a1.clone(), preferred(1, NEAR)),
        ],
    );
    let near = h.send_to(NEAR, &md).expect("the replica");
    assert_eq!(listed(&Some(near)), [a0.clone(), a1.clone()]);
    h.in_flight.remove(&NEAR);
    h.fetcher.handle(FinishedFetch {
        node: NEAR,
        names: HashMap::new(),
        from_replica: BTreeSet::from([a0.clone(), a1.clone()]),
        result: Err(ClientError::Disconnected {
            broker: "127.0.0.1:2".into(),
        }),
    });
    assert!(
        h.fetcher.backoff_until.contains_key(&NEAR),
        "the replica is backed off"
    );
    assert!(!h.fetcher.backoff_until.contains_key(&LEADER));
    let back = h.send_to(LEADER, &md).expect("the leader at once");
    assert_eq!(listed(&Some(back)), [a0.clone(), a1.clone()]);
    assert_eq!(h.rack(LEADER), "");
    // The replica back after its back-off: the leader names it again and it serves again.
    h.answer_from(LEADER, 5, vec![(a0.clone(), records(0, batch(0, 2)))]);
    advance(Duration::from_secs(1)).await;
    h.send_to(LEADER, &md).expect("the leader");
    assert_eq!(h.rack(LEADER), "r2");
    h.answer_from(LEADER, 5, vec![(a0.clone(), preferred(0, NEAR))]);
    let again = h.send_to(NEAR, &md).expect("the replica again");
    assert_eq!(again.to_send[&a0].fetch_offset, 2);
    assert!(again.is_full(), "its session started over");
}

/// Row "R no longer in metadata's brokers, or no longer a replica of the partition": the lease
/// ends at the next plan, metadata is refreshed, and the leader serves.
#[tokio::test(start_paused = true)]
async fn a_replica_gone_from_metadata_ends_its_lease() {
    let a0 = tp("a", 0);
    let md = cluster(&[("a", 1)]);
    for gone in ["broker", "replica"] {
        let mut h = on_the_near_replica(&a0, &md);
        h.answer_from(NEAR, 9, vec![]);
        let mut without = md.clone();
        match gone {
            "broker" => {
                without.brokers.remove(&NEAR);
            }
            _ => {
                if let Some(p) = without
                    .topics
                    .get_mut("a")
                    .and_then(|t| t.partitions.get_mut(&0))
                {
                    p.replicas = vec![1, 3];
                    p.isr = vec![1, 3];
                }
            }
        }
        h.fetcher.refresh_metadata = false;
        assert!(h.send_to(NEAR, &without).is_none(), "{gone}");
        assert!(h.fetcher.refresh_metadata, "{gone}: metadata refreshed");
        let back = h.send_to(LEADER, &without).expect("the leader");
        assert_eq!(back.to_send[&a0].fetch_offset, 3, "{gone}");
    }
}

/// A partition of a leader in the consumer's own rack never moves; one whose leader is elsewhere
/// does, and each is fetched from where it is read now, in its own broker's request.
#[tokio::test(start_paused = true)]
async fn partitions_are_planned_to_where_each_is_read() {
    let (a0, a1) = (tp("a", 0), tp("a", 1));
    let mut md = cluster(&[("a", 2)]);
    if let Some(p) = md
        .topics
        .get_mut("a")
        .and_then(|t| t.partitions.get_mut(&1))
    {
        p.leader = NEAR;
    }
    let mut h = rack_harness(&[a0.clone(), a1.clone()]);
    assert_eq!(listed(&h.send_to(LEADER, &md)), vec![a0.clone()]);
    h.answer_from(LEADER, 5, vec![(a0.clone(), preferred(0, NEAR))]);
    let near = h.send_to(NEAR, &md).expect("near");
    assert_eq!(listed(&Some(near)), [a0.clone(), a1.clone()]);
    assert_eq!(
        h.in_flight[&NEAR].0,
        BTreeSet::from([a0.clone()]),
        "a1 is fetched from its leader, a0 from a replica"
    );
    // a1's leader's error is a leader's: backed off as before.
    h.answer_from(
        NEAR,
        9,
        vec![(a1.clone(), error(1, ErrorCode::NotLeaderOrFollower))],
    );
    assert!(h.fetcher.errors.is_backed_off(&a1, Instant::now()));
    assert!(!h.fetcher.errors.is_backed_off(&a0, Instant::now()));
}
