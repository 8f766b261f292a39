//! The fetcher's reactions to Fetch answers, driven by constructed responses through `handle`;
//! those of fetching from a replica other than the leader in `replica.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed unwrap is a failed test

mod admission;
mod off_loop;
mod replica;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mooring_client::conn::FrameMemory;
use mooring_client::Client;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::fetch::{FetchResponse, FetchableTopicResponse, PartitionData};
use mooring_wire::records::RecordBatch;

use mooring_client::metadata::{BrokerInfo, Metadata, PartitionInfo, TopicInfo};
use mooring_client::Error as ClientError;
use mooring_wire::primitives::Uuid;
use tokio::time::{advance, Instant};

use super::partition_errors::CORRUPT_FETCHES;
use super::session::SessionRequest;
use super::{Fetcher, FinishedFetch};
use crate::config::ConsumerConfig;
use crate::error::ConsumerError;
use mooring_group::EventSink;

use crate::events::{ConsumerEvent, ConsumerEvents};
use crate::processing::{ConsumerRecord, Handler, ProcessingEngine};
use crate::shared::Shared;
use crate::subscription::{OffsetResetStrategy, SubscriptionState};
use crate::TopicPartition;

const NODE: i32 = 1;

/// Records the offsets it handles.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<(TopicPartition, i64)>>>);

impl Handler for Recorder {
    type Error = String;

    async fn handle(&self, record: ConsumerRecord) -> Result<(), String> {
        self.0
            .lock()
            .unwrap()
            .push((record.topic_partition(), record.offset()));
        Ok(())
    }
}

struct Harness {
    fetcher: Fetcher<Recorder>,
    events: ConsumerEvents,
    /// By node, the partitions its request in flight fetched from a replica, and its rack.
    in_flight: HashMap<i32, (BTreeSet<TopicPartition>, String)>,
}

fn tp(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition::new(topic, partition)
}

/// A fetcher with `partitions` assigned by hand, each at position 0.
fn harness(partitions: &[TopicPartition]) -> Harness {
    harness_with(partitions, &[])
}

/// [`harness`] with more (or other) consumer properties.
fn harness_with(partitions: &[TopicPartition], extra: &[(&str, &str)]) -> Harness {
    let mut props = vec![
        ("bootstrap.servers", "127.0.0.1:1"),
        ("retry.backoff.ms", "100"),
        ("retry.backoff.max.ms", "1000"),
        ("metadata.max.age.ms", "300000"),
    ];
    props.retain(|(k, _)| !extra.iter().any(|(e, _)| e == k));
    props.extend_from_slice(extra);
    let config = ConsumerConfig::from_properties(props).expect("config");
    let client = Client::new(config.client.clone()).expect("client");
    let (sink, events) = EventSink::channel(256);
    let mut subs = SubscriptionState::new(OffsetResetStrategy::Earliest);
    subs.assign(partitions.iter().cloned()).expect("assign");
    for p in partitions {
        subs.seek(p, 0).expect("seek");
    }
    let (engine, _engine_events) =
        ProcessingEngine::new(config.processing.clone(), Recorder::default()).expect("engine");
    engine.add_partitions(partitions.iter().cloned());
    let shared = Arc::new(Shared::new(
        config,
        subs,
        client,
        FrameMemory::new(1 << 20),
        sink,
    ));
    Harness {
        fetcher: Fetcher::new(shared, engine, None),
        events,
        in_flight: HashMap::new(),
    }
}

impl Harness {
    /// What `send_fetches` would send to [`NODE`] now (recorded in the session's books, as if
    /// sent), or `None` when nothing is to be fetched there.
    fn send(&mut self, metadata: &Metadata) -> Option<Arc<SessionRequest>> {
        self.send_to(NODE, metadata)
    }

    /// What `send_fetches` would send to `node` now, as [`send`](Self::send) for [`NODE`].
    fn send_to(&mut self, node: i32, metadata: &Metadata) -> Option<Arc<SessionRequest>> {
        let now = Instant::now();
        let mut by_node = self.fetcher.plan(metadata, now);
        let wanted = by_node.remove(&node)?;
        let rack = self.fetcher.rack_for(wanted.keys(), now);
        let from_replica = self.fetcher.replicas.served_by(node, wanted.keys());
        self.in_flight.insert(node, (from_replica, rack));
        let (plan, _ids) = self.fetcher.session_plan(node, wanted, metadata);
        self.fetcher.busy.insert(node);
        Some(plan)
    }

    /// One round of the fetch loop as `send_fetches` plays it, `woken` or on an idle tick: what it
    /// sends to [`NODE`] (recorded as sent; nothing while NODE has a Fetch in flight), `None`
    /// when it planned nothing.
    fn round(&mut self, metadata: &Arc<Metadata>, woken: bool) -> Option<Vec<TopicPartition>> {
        let mut by_leader = self.fetcher.plan_round(metadata, Instant::now(), woken)?;
        let listed = match by_leader.remove(&NODE) {
            Some(wanted) if !self.fetcher.busy.contains(&NODE) => {
                let (plan, _ids) = self.fetcher.session_plan(NODE, wanted, metadata);
                self.fetcher.busy.insert(NODE);
                plan.session.keys().cloned().collect()
            }
            _ => Vec::new(),
        };
        Some(listed)
    }

    /// Hands the fetcher an answer from [`NODE`] with this session id.
    fn answer_in(&mut self, session_id: i32, partitions: Vec<(TopicPartition, PartitionData)>) {
        self.answer_from(NODE, session_id, partitions);
    }

    /// Hands the fetcher an answer from `node` to its request in flight, with this session id.
    fn answer_from(
        &mut self,
        node: i32,
        session_id: i32,
        partitions: Vec<(TopicPartition, PartitionData)>,
    ) {
        let mut responses: Vec<FetchableTopicResponse> = Vec::new();
        for (p, data) in partitions {
            match responses.last_mut() {
                Some(last) if last.topic == p.topic => last.partitions.push(data),
                _ => responses.push(FetchableTopicResponse {
                    topic: p.topic.clone(),
                    partitions: vec![data],
                    ..Default::default()
                }),
            }
        }
        let from_replica = self.in_flight.remove(&node).unwrap_or_default().0;
        self.fetcher.handle(FinishedFetch {
            node,
            names: HashMap::new(),
            from_replica,
            result: Ok(FetchResponse {
                session_id,
                responses,
                ..Default::default()
            }),
        });
    }

    /// An answer of a broker that keeps no session.
    fn answer(&mut self, partitions: Vec<(TopicPartition, PartitionData)>) {
        self.answer_in(0, partitions);
    }

    fn position(&self, p: &TopicPartition) -> i64 {
        self.fetcher
            .shared
            .subs()
            .position(p)
            .expect("position")
            .offset
    }

    fn events(&mut self) -> Vec<ConsumerEvent> {
        let mut out = Vec::new();
        while let Ok(e) = self.events.try_recv() {
            out.push(e);
        }
        out
    }

    /// The partitions of this module's `FetchError` events so far.
    fn fetch_errors(&mut self) -> Vec<(Option<TopicPartition>, String)> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                ConsumerEvent::FetchError {
                    partition, error, ..
                } => Some((partition, error)),
                _ => None,
            })
            .collect()
    }
}

/// Metadata in which [`NODE`] leads every partition of `topics` (name, partition count).
fn metadata(topics: &[(&str, i32)]) -> Metadata {
    let mut m = Metadata::default();
    m.brokers.insert(
        NODE,
        BrokerInfo {
            node_id: NODE,
            host: "127.0.0.1".into(),
            port: 1,
            rack: None,
        },
    );
    for (i, (name, count)) in topics.iter().enumerate() {
        let partitions = (0..*count)
            .map(|p| {
                (
                    p,
                    PartitionInfo {
                        partition: p,
                        leader: NODE,
                        leader_epoch: 0,
                        replicas: vec![NODE],
                        isr: vec![NODE],
                        error: ErrorCode::None,
                    },
                )
            })
            .collect();
        m.topics.insert(
            (*name).to_string(),
            TopicInfo {
                name: (*name).to_string(),
                id: Uuid([u8::try_from(i + 1).expect("few topics"); 16]),
                is_internal: false,
                partitions,
                error: ErrorCode::None,
            },
        );
    }
    m
}

fn listed(plan: &Option<Arc<SessionRequest>>) -> Vec<TopicPartition> {
    plan.as_ref()
        .map(|p| p.session.keys().cloned().collect())
        .unwrap_or_default()
}

fn error(partition: i32, code: ErrorCode) -> PartitionData {
    PartitionData {
        partition_index: partition,
        error_code: code.code(),
        high_watermark: -1,
        last_stable_offset: -1,
        log_start_offset: -1,
        ..Default::default()
    }
}

fn batch(base: i64, n: i64) -> Bytes {
    let mut b = RecordBatch::builder(base).partition_leader_epoch(0);
    for i in 0..n {
        b = b.record(
            1_000 + i,
            None,
            Some(Bytes::from((base + i).to_string())),
            vec![],
        );
    }
    let mut buf = BytesMut::new();
    b.build().encode(&mut buf).expect("encode");
    buf.freeze()
}

/// A batch whose last byte is flipped: its CRC-32C no longer matches.
fn corrupt_batch(base: i64, n: i64) -> Bytes {
    let mut bytes = BytesMut::from(&batch(base, n)[..]);
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    bytes.freeze()
}

fn records(partition: i32, bytes: Bytes) -> PartitionData {
    PartitionData {
        partition_index: partition,
        high_watermark: 100,
        last_stable_offset: 100,
        log_start_offset: 0,
        records: Some(bytes),
        ..Default::default()
    }
}

const MS: Duration = Duration::from_millis(1);

#[tokio::test(start_paused = true)]
async fn a_partition_error_backs_off_that_partition_alone() {
    let (a0, a1) = (tp("a", 0), tp("a", 1));
    let md = metadata(&[("a", 2)]);
    let mut h = harness(&[a0.clone(), a1.clone()]);
    let first = h.send(&md);
    assert_eq!(listed(&first), [a0.clone(), a1.clone()]);
    h.answer_in(
        7,
        vec![
            (a0.clone(), error(0, ErrorCode::NotLeaderOrFollower)),
            (a1.clone(), records(1, batch(0, 3))),
        ],
    );
    assert_eq!(
        h.position(&a1),
        3,
        "the healthy partition's records were taken"
    );
    assert!(
        !h.fetcher.backoff_until.contains_key(&NODE),
        "the broker is not backed off for one partition's error"
    );
    assert!(
        h.fetcher.refresh_metadata,
        "a leader change: metadata refreshed"
    );
    assert_eq!(
        h.fetch_errors(),
        [(Some(a0.clone()), ErrorCode::NotLeaderOrFollower.to_string())]
    );

    // The next request goes at once, without the failed partition: forgotten from the
    // incremental session, so the broker stops fetching it too.
    let next = h.send(&md).expect("the broker is fetched at once");
    assert_eq!(next.session_id, 7, "the session is kept");
    assert_eq!(next.to_forget, vec![a0.clone()]);
    assert_eq!(next.session.keys().collect::<Vec<_>>(), [&a1]);
    h.answer_in(7, vec![(a1.clone(), records(1, batch(3, 2)))]);
    assert_eq!(h.position(&a1), 5);

    // After retry.backoff.ms it is listed again.
    advance(100 * MS).await;
    let again = h.send(&md).expect("request");
    assert_eq!(again.session_id, 7);
    assert_eq!(
        again.to_send[&a0].fetch_offset, 0,
        "listed anew in the session"
    );
    assert_eq!(listed(&Some(again)), [a0.clone(), a1.clone()]);

    // Failures in a row double the back-off, up to retry.backoff.max.ms.
    h.answer_in(
        7,
        vec![(a0.clone(), error(0, ErrorCode::KafkaStorageError))],
    );
    advance(100 * MS).await;
    assert_eq!(
        listed(&h.send(&md)),
        vec![a1.clone()],
        "200 ms the second time"
    );
    h.answer_in(7, vec![]);
    advance(100 * MS).await;
    assert_eq!(listed(&h.send(&md)), [a0.clone(), a1.clone()]);
    h.answer_in(7, vec![(a0.clone(), records(0, batch(0, 1)))]);
    assert_eq!(h.position(&a0), 1);
    // A success resets it: the next error backs off 100 ms again.
    let _ = h.send(&md);
    h.answer_in(
        7,
        vec![(a0.clone(), error(0, ErrorCode::FencedLeaderEpoch))],
    );
    advance(100 * MS).await;
    assert_eq!(listed(&h.send(&md)), [a0, a1]);
}

#[tokio::test(start_paused = true)]
async fn a_partition_without_a_known_leader_waits_for_metadata_alone() {
    let (a0, b0) = (tp("a", 0), tp("b", 0));
    let mut h = harness(&[a0.clone(), b0.clone()]);
    let mut md = metadata(&[("a", 1), ("b", 1)]);
    if let Some(p) = md
        .topics
        .get_mut("b")
        .and_then(|t| t.partitions.get_mut(&0))
    {
        p.leader = -1;
    }
    h.fetcher.refresh_metadata = false;
    assert_eq!(listed(&h.send(&md)), vec![a0.clone()]);
    assert!(h.fetcher.refresh_metadata);
    h.answer(vec![]);
    // Until its back-off ends, it does not ask for metadata again.
    h.fetcher.refresh_metadata = false;
    assert_eq!(listed(&h.send(&md)), [a0]);
    assert!(!h.fetcher.refresh_metadata, "no metadata request per round");
}

#[tokio::test(start_paused = true)]
async fn a_failed_request_still_backs_off_the_broker() {
    let a0 = tp("a", 0);
    let mut h = harness(std::slice::from_ref(&a0));
    let _ = h.send(&metadata(&[("a", 1)]));
    h.fetcher.handle(FinishedFetch {
        node: NODE,
        names: HashMap::new(),
        from_replica: BTreeSet::new(),
        result: Err(ClientError::Disconnected {
            broker: "127.0.0.1:1".into(),
        }),
    });
    assert!(h
        .fetcher
        .backoff_until
        .get(&NODE)
        .is_some_and(|t| *t > Instant::now()));
    assert_eq!(h.fetch_errors().len(), 1);
    assert!(h.fetcher.shared.fatal().is_none());
}

#[tokio::test(start_paused = true)]
async fn a_corrupt_batch_is_fetched_again_and_fatal_only_when_it_repeats() {
    let a0 = tp("a", 0);
    let md = metadata(&[("a", 1)]);
    let mut h = harness(std::slice::from_ref(&a0));

    // A byte flipped in flight: fetched again from the same offset after a back-off.
    let _ = h.send(&md);
    h.answer(vec![(a0.clone(), records(0, corrupt_batch(0, 3)))]);
    assert!(
        h.fetcher.shared.fatal().is_none(),
        "one CRC mismatch is not fatal"
    );
    assert_eq!(h.position(&a0), 0, "nothing skipped");
    let errors = h.fetch_errors();
    assert_eq!(errors.len(), 1);
    assert!(
        errors[0].1.contains("offset 0 (fetch 1 of 3)"),
        "{errors:?}"
    );
    assert!(h.send(&md).is_none(), "backed off");
    advance(100 * MS).await;
    let again = h.send(&md).expect("fetched again");
    assert_eq!(again.to_send[&a0].fetch_offset, 0);

    // The fresh fetch reads: records before the next corrupt batch are handed out, the position
    // stops at it, and the streak starts over.
    let mut bytes = BytesMut::from(&batch(0, 3)[..]);
    bytes.extend_from_slice(&corrupt_batch(3, 3));
    h.answer(vec![(a0.clone(), records(0, bytes.freeze()))]);
    assert_eq!(h.position(&a0), 3);
    for fetch in 1..CORRUPT_FETCHES {
        let _ = h.send(&md).expect("fetched");
        h.answer(vec![(a0.clone(), records(0, corrupt_batch(3, 3)))]);
        assert!(h.fetcher.shared.fatal().is_none(), "fetch {fetch}");
        advance(Duration::from_secs(1)).await;
    }
    let _ = h.send(&md).expect("fetched");
    h.answer(vec![(a0.clone(), records(0, corrupt_batch(3, 3)))]);
    match h.fetcher.shared.fatal() {
        Some(ConsumerError::CorruptRecords {
            partition,
            offset,
            fetches,
            ..
        }) => assert_eq!(
            (partition, offset, fetches),
            (a0.clone(), 3, CORRUPT_FETCHES)
        ),
        other => panic!("expected CorruptRecords, got {other:?}"),
    }
    assert_eq!(h.position(&a0), 3, "never past the corrupt batch");
    assert!(h.fetcher.shared.is_shutting_down());
}

#[tokio::test(start_paused = true)]
async fn topic_authorization_failed_is_one_fatal_error_naming_the_topics() {
    let (a0, a1, b0, c0) = (tp("a", 0), tp("a", 1), tp("b", 0), tp("c", 0));
    let md = metadata(&[("a", 2), ("b", 1), ("c", 1)]);
    let mut h = harness(&[a0.clone(), a1.clone(), b0.clone(), c0.clone()]);
    let _ = h.send(&md);
    h.answer(vec![
        (a0, error(0, ErrorCode::TopicAuthorizationFailed)),
        (a1, error(1, ErrorCode::TopicAuthorizationFailed)),
        (b0, error(0, ErrorCode::TopicAuthorizationFailed)),
        (c0, records(0, batch(0, 1))),
    ]);
    match h.fetcher.shared.fatal() {
        Some(ConsumerError::TopicAuthorizationFailed { topics, .. }) => {
            assert_eq!(topics, ["a", "b"])
        }
        other => panic!("expected TopicAuthorizationFailed, got {other:?}"),
    }
    assert!(h.fetcher.shared.is_shutting_down());

    // Metadata saying so is fatal too (the leaders are never known, so no fetch would tell).
    let mut h = harness(&[tp("d", 0)]);
    let mut md = metadata(&[("d", 1)]);
    if let Some(t) = md.topics.get_mut("d") {
        t.error = ErrorCode::TopicAuthorizationFailed;
        t.partitions.clear();
    }
    h.fetcher.refreshed(&["d".to_string()], &md);
    assert!(matches!(
        h.fetcher.shared.fatal(),
        Some(ConsumerError::TopicAuthorizationFailed { topics, .. }) if topics == ["d"]
    ));
}

#[tokio::test(start_paused = true)]
async fn a_deleted_topic_is_reported_once_and_no_longer_fetched() {
    let (a0, b0, b1) = (tp("a", 0), tp("b", 0), tp("b", 1));
    let both = metadata(&[("a", 1), ("b", 2)]);
    let mut h = harness(&[a0.clone(), b0.clone(), b1.clone()]);
    let _ = h.send(&both);
    h.answer_in(
        9,
        vec![
            (a0.clone(), records(0, batch(0, 2))),
            (b0.clone(), error(0, ErrorCode::UnknownTopicId)),
            (b1.clone(), error(1, ErrorCode::UnknownTopicId)),
        ],
    );
    assert_eq!(h.position(&a0), 2);
    assert!(!h.fetcher.backoff_until.contains_key(&NODE));
    let next = h.send(&both).expect("the broker is fetched at once");
    assert!(
        next.is_full(),
        "the session starts over: it may hold a stale topic id"
    );
    assert_eq!(listed(&Some(next)), vec![a0.clone()]);
    h.answer(vec![]);
    let _ = h.events();

    // Fresh metadata does not list it: reported once, with what the fetch said.
    let only_a = metadata(&[("a", 1)]);
    let topics = ["a".to_string(), "b".to_string()];
    h.fetcher.refreshed(&topics, &only_a);
    let unavailable: Vec<_> = h
        .events()
        .into_iter()
        .filter_map(|e| match e {
            ConsumerEvent::TopicUnavailable {
                topic,
                partitions,
                code,
                recheck_in,
            } => Some((topic, partitions, code, recheck_in)),
            _ => None,
        })
        .collect();
    assert_eq!(
        unavailable,
        [(
            "b".to_string(),
            vec![b0.clone(), b1.clone()],
            ErrorCode::UnknownTopicId,
            Duration::from_secs(300)
        )]
    );
    advance(Duration::from_secs(5)).await;
    assert_eq!(listed(&h.send(&only_a)), vec![a0.clone()], "not fetched");
    h.answer(vec![]);
    h.fetcher.refreshed(&topics, &only_a);
    assert!(h.events().is_empty(), "said once");

    // Looked up again at the metadata refresh interval; fetched again once listed.
    assert!(!h.fetcher.errors.recheck_due(Instant::now()));
    advance(Duration::from_secs(300)).await;
    assert!(h.fetcher.errors.recheck_due(Instant::now()));
    h.fetcher.refreshed(&topics, &both);
    assert_eq!(listed(&h.send(&both)), [a0, b0, b1]);
}

#[tokio::test(start_paused = true)]
async fn a_partition_of_a_topic_gone_from_metadata_is_forgotten_by_a_full_request() {
    let (a0, b0) = (tp("a", 0), tp("b", 0));
    let both = metadata(&[("a", 1), ("b", 1)]);
    let mut h = harness(&[a0.clone(), b0.clone()]);
    let _ = h.send(&both);
    h.answer_in(
        4,
        vec![
            (a0.clone(), records(0, batch(0, 1))),
            (b0.clone(), records(0, batch(0, 1))),
        ],
    );
    // The metadata lost the topic before any fetch said so: its id cannot be named to forget it.
    let only_a = metadata(&[("a", 1)]);
    let mut by_leader = h.fetcher.plan(&only_a, Instant::now());
    let (plan, ids) = h
        .fetcher
        .session_plan(NODE, by_leader.remove(&NODE).expect("a0"), &only_a);
    assert!(plan.is_full());
    assert!(plan.to_forget.is_empty());
    assert_eq!(plan.session.keys().collect::<Vec<_>>(), [&a0]);
    let config = h.fetcher.shared.config.fetch.clone();
    assert!(super::request::build(17, &config, &plan, &ids, "").is_ok());
}

/// Kafka checksums nothing but records: one answer with a code Fetch never sends may be a byte
/// flipped in flight, so only the same offset failing fresh fetch after fresh fetch is fatal.
#[tokio::test(start_paused = true)]
async fn a_non_retriable_partition_error_is_fatal_when_fetches_in_a_row_say_it() {
    let a0 = tp("a", 0);
    let md = metadata(&[("a", 1)]);
    let mut h = harness(std::slice::from_ref(&a0));
    for fetch in 1..CORRUPT_FETCHES {
        let _ = h.send(&md).expect("fetched");
        h.answer(vec![(
            a0.clone(),
            error(0, ErrorCode::UnsupportedCompressionType),
        )]);
        assert!(h.fetcher.shared.fatal().is_none(), "fetch {fetch}");
        advance(Duration::from_secs(1)).await;
    }
    assert_eq!(
        h.fetch_errors().len() as u32,
        CORRUPT_FETCHES - 1,
        "each one said"
    );
    let _ = h.send(&md).expect("fetched");
    h.answer(vec![(
        a0.clone(),
        error(0, ErrorCode::UnsupportedCompressionType),
    )]);
    assert!(matches!(
        h.fetcher.shared.fatal(),
        Some(ConsumerError::FetchFailed { partition, code })
            if partition == a0 && code == ErrorCode::UnsupportedCompressionType
    ));
}

#[tokio::test(start_paused = true)]
async fn an_error_code_this_client_does_not_know_is_retried_as_unknown_server_error() {
    let a0 = tp("a", 0);
    let mut h = harness(std::slice::from_ref(&a0));
    let _ = h.send(&metadata(&[("a", 1)]));
    h.answer(vec![(a0.clone(), error(0, ErrorCode::from_i16(32_000)))]);
    assert!(
        h.fetcher.shared.fatal().is_none(),
        "a newer broker's code is not fatal"
    );
    assert_eq!(
        h.fetch_errors(),
        [(Some(a0.clone()), ErrorCode::from_i16(32_000).to_string())]
    );
}

/// A request asks for no more than half the memory budget, nor more than the room the frames
/// alive and the requests in flight leave; none goes while the budget is full, unless nothing at
/// all is held (a record larger than the budget is still fetched).
#[tokio::test]
async fn requests_ask_for_what_the_memory_budget_has_room_for() {
    let mut h = harness(&[tp("t", 0)]);
    let memory = Arc::clone(&h.fetcher.shared.memory);
    assert_eq!(memory.limit(), 1 << 20);
    assert_eq!(h.fetcher.request_max_bytes(1), Some(512 * 1024));
    let frame = memory.frame(700 * 1024).freeze();
    assert_eq!(h.fetcher.request_max_bytes(1), Some(320 * 1024));
    h.fetcher.reserved.insert(NODE, 300 * 1024);
    assert_eq!(h.fetcher.request_max_bytes(1), None, "20 KiB left");
    h.fetcher.reserved.clear();
    drop(frame);
    assert_eq!(h.fetcher.request_max_bytes(1), Some(512 * 1024));
    let huge = memory.frame(3 << 20).freeze();
    assert_eq!(h.fetcher.request_max_bytes(1), None);
    drop(huge);
    h.fetcher.reserved.insert(NODE, 2 << 20);
    assert_eq!(h.fetcher.request_max_bytes(1), None);
    h.fetcher.reserved.clear();
    assert_eq!(
        h.fetcher.request_max_bytes(1),
        Some(512 * 1024),
        "nothing held: a request always goes"
    );
}

/// An idle tick while every broker of the last plan waits on its Fetch plans nothing (planning
/// goes over every assigned partition, ten times a second when idle, and could send nothing);
/// anything that may change the plan plans again: a wake, new metadata, a new assignment, an
/// answer, a partition's back-off ending.
#[tokio::test(start_paused = true)]
async fn an_idle_tick_plans_nothing_while_the_last_plan_waits_on_its_fetch() {
    let (a0, a1) = (tp("a", 0), tp("a", 1));
    let md = Arc::new(metadata(&[("a", 2)]));
    let mut h = harness(&[a0.clone(), a1.clone()]);
    assert_eq!(h.round(&md, true), Some(vec![a0.clone(), a1.clone()]));
    assert_eq!(h.round(&md, false), None, "idle tick, the Fetch in flight");
    assert_eq!(
        h.round(&md, true),
        Some(vec![]),
        "woken: planned (NODE busy)"
    );

    let refreshed = Arc::new(metadata(&[("a", 2)]));
    assert_eq!(h.round(&refreshed, false), Some(vec![]), "new metadata");
    assert_eq!(h.round(&refreshed, false), None);
    h.fetcher.shared.assignment_changed();
    assert_eq!(h.round(&refreshed, false), Some(vec![]), "new assignment");
    assert_eq!(h.round(&refreshed, false), None);

    // The answer frees NODE: the next tick plans, without a0, backed off for retry.backoff.ms.
    h.answer(vec![(a0.clone(), error(0, ErrorCode::NotLeaderOrFollower))]);
    assert_eq!(h.round(&refreshed, false), Some(vec![a1.clone()]));
    assert_eq!(h.round(&refreshed, false), None);
    advance(100 * MS).await;
    assert_eq!(
        h.round(&refreshed, false),
        Some(vec![]),
        "a0's back-off ended: planned (NODE still busy)"
    );
    h.answer(vec![]);
    assert_eq!(h.round(&refreshed, false), Some(vec![a0, a1]));
}

/// An idle tick does not go over the partitions looking for one without a position: a partition
/// comes to need one only with a wake (an assignment, a seek to the beginning or end, an answer
/// out of range); a look-up that failed is retried on a tick once its back-off ends.
#[tokio::test(start_paused = true)]
async fn an_idle_tick_looks_up_offsets_only_when_a_retry_is_due() {
    let a0 = tp("a", 0);
    let mut h = harness(std::slice::from_ref(&a0));
    h.fetcher
        .shared
        .subs()
        .seek_to_beginning([a0.clone()])
        .expect("seek");
    h.fetcher.initialize_positions(false);
    assert!(h.fetcher.positions_task.is_none(), "idle tick: no look-up");
    h.fetcher.initialize_positions(true);
    assert!(h.fetcher.positions_task.is_some(), "woken: looked up");

    // The look-up failed: retried after the back-off, on a tick.
    if let Some(task) = h.fetcher.positions_task.take() {
        task.abort();
    }
    h.fetcher.positions_retry_at = Some(Instant::now() + 100 * MS);
    h.fetcher.initialize_positions(false);
    assert!(h.fetcher.positions_task.is_none(), "back-off running");
    advance(100 * MS).await;
    h.fetcher.initialize_positions(false);
    assert!(h.fetcher.positions_task.is_some(), "retry due: looked up");
}
