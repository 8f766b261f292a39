//! The share consumer's error tables (the share member's, in `mooring_group::share`'s module docs,
//! and the share fetcher's, in `mooring_consumer::share`'s `fetcher.rs`), row by row, on franz-go's
//! kfake, which runs share groups (KIP-932, renewals included) and injects an error into one
//! request: a ShareConsumer consumes from a topic of three partitions (20 records each,
//! acknowledged by kfake), the test injects the row's error, produces 20 more to each partition,
//! and checks the reaction in what kfake saw of the consumer's requests and in the consumer's
//! counters. Where records flow, every acknowledged record is accepted; a record handed out twice
//! is only ever one whose verdict the injected error lost, and is counted as such.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_client::error::Resource;
use mooring_client::Error;
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::share::{ShareConsumer, ShareConsumerConfig};
use mooring_consumer::ConsumerError;
use mooring_testkit::kfake::{Fault, Kfake, KfakeConfig, Observed};
use mooring_testkit::unique;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{
    Message, ShareAcknowledgeRequest, ShareFetchRequest, ShareGroupHeartbeatRequest,
};
use tokio::task::JoinHandle;

const HEARTBEAT: i16 = ShareGroupHeartbeatRequest::API_KEY;
const FETCH: i16 = ShareFetchRequest::API_KEY;
const ACKNOWLEDGE: i16 = ShareAcknowledgeRequest::API_KEY;
/// The client id of the consumer under test.
const CLIENT_ID: &str = "mooring-share-under-test";
const PARTITIONS: i32 = 3;
/// Records produced to each partition at the start, and again after each fault.
const BATCH: u32 = 20;
/// kfake's share heartbeat interval and lock duration here.
const INTERVAL_MS: &str = "300";
const LOCK_MS: &str = "2000";
/// `retry.backoff.ms` of the consumer.
const BACKOFF: Duration = Duration::from_millis(250);
const WAIT: Duration = Duration::from_secs(20);

/// (partition, offset) → how many times it was handed out.
type Seen = Arc<Mutex<BTreeMap<(i32, i64), u32>>>;

struct Scenario {
    kfake: Kfake,
    topic: String,
    group: String,
    consumer: ShareConsumer,
    acked: BTreeSet<(i32, i64)>,
    seen: Seen,
    run: Option<JoinHandle<Result<(), ConsumerError>>>,
}

impl Scenario {
    /// kfake with the topic and a consumer (with `extra` properties) in a share group starting
    /// at the earliest offset, whose handler takes `pace` a record; `before` runs before the
    /// consumer starts (a fault for its first requests). Waits until the first batches are
    /// accepted unless `settle` is false.
    async fn start_paced(
        extra: &[(&str, &str)],
        pace: Duration,
        before: impl FnOnce(&Kfake, &str),
        settle: bool,
    ) -> Scenario {
        let topic = unique("share-faults");
        let group = unique("share-faults");
        let kfake = Kfake::start(
            KfakeConfig::new([(topic.clone(), PARTITIONS as u32)])
                .broker_config("group.share.heartbeat.interval.ms", INTERVAL_MS)
                .broker_config("group.share.record.lock.duration.ms", LOCK_MS)
                .broker_config("share.record.lock.sweep.interval.ms", "100"),
        );
        kfake.set_group_config(&group, &[("share.auto.offset.reset", "earliest")]);
        let mut s = Scenario {
            consumer: consumer(&kfake, &group, extra),
            kfake,
            topic,
            group,
            acked: BTreeSet::new(),
            seen: Arc::default(),
            run: None,
        };
        s.produce();
        before(&s.kfake, &s.group);
        s.consumer.subscribe([s.topic.clone()]).unwrap();
        let seen = Arc::clone(&s.seen);
        let consumer = s.consumer.clone();
        s.run = Some(tokio::spawn(async move {
            consumer
                .run(move |record: ConsumerRecord| {
                    *seen
                        .lock()
                        .unwrap()
                        .entry((record.partition(), record.offset()))
                        .or_default() += 1;
                    async move {
                        tokio::time::sleep(pace).await;
                        Ok::<(), String>(())
                    }
                })
                .await
        }));
        if settle {
            s.wait_all_accepted().await;
        }
        s
    }

    /// [`Scenario::start_paced`] with a handler that takes no time.
    async fn start(
        extra: &[(&str, &str)],
        before: impl FnOnce(&Kfake, &str),
        settle: bool,
    ) -> Scenario {
        Scenario::start_paced(extra, Duration::ZERO, before, settle).await
    }

    /// When kfake last reported anything.
    fn now(&self) -> i64 {
        self.kfake.observed().last().map_or(0, |o| o.at_micros)
    }

    fn produce(&mut self) {
        for p in 0..PARTITIONS {
            for offset in self.kfake.produce(&self.topic, p, BATCH) {
                self.acked.insert((p, offset));
            }
        }
    }

    /// Waits until every acknowledged record was handed out and accepted.
    async fn wait_all_accepted(&self) {
        let want = self.acked.len() as u64;
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            let all_seen = {
                let seen = self.seen.lock().unwrap();
                self.acked.iter().all(|k| seen.contains_key(k))
            };
            if all_seen && self.consumer.stats().accepted >= want {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{} of {want} accepted: {:?}",
                self.consumer.stats().accepted,
                self.consumer.stats()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The records handed out more than once.
    fn again(&self) -> Vec<(i32, i64)> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(k, _)| *k)
            .collect()
    }

    /// The consumer's requests of API `key`, in order.
    fn requests(&self, key: i16) -> Vec<Observed> {
        self.kfake
            .observed()
            .into_iter()
            .filter(|o| o.client == CLIENT_ID && o.is_request(key))
            .collect()
    }

    /// Stops the consumer and returns how `run` ended.
    async fn stop(mut self) -> Result<(), ConsumerError> {
        self.consumer.shutdown_handle().shutdown();
        self.run.take().unwrap().await.unwrap()
    }
}

fn consumer(kfake: &Kfake, group: &str, extra: &[(&str, &str)]) -> ShareConsumer {
    let bootstrap = kfake.bootstrap();
    let backoff = BACKOFF.as_millis().to_string();
    let mut props = vec![
        ("bootstrap.servers", bootstrap.as_str()),
        ("group.id", group),
        ("client.id", CLIENT_ID),
        ("request.timeout.ms", "5000"),
        ("retry.backoff.ms", backoff.as_str()),
        ("retry.backoff.max.ms", "1000"),
        ("fetch.max.wait.ms", "200"),
        ("mooring.shutdown.timeout.ms", "3000"),
    ];
    props.extend_from_slice(extra);
    ShareConsumer::new(ShareConsumerConfig::from_properties(props).unwrap()).unwrap()
}

/// The epoch a share heartbeat or a share session request carried.
fn epoch(o: &Observed, field: &str) -> i64 {
    o.int(field).unwrap_or(i64::MIN)
}

// ---------- ShareGroupHeartbeat ----------

/// Rows "ShareGroupHeartbeat | FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID | lost; → FENCED; rejoin
/// at epoch 0 with the same member id": the next heartbeat is a full one at epoch 0 with the same
/// member id, and the member consumes again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fenced_member_rejoins_at_epoch_zero_with_its_id_and_consumes_again() {
    for code in [ErrorCode::FencedMemberEpoch, ErrorCode::UnknownMemberId] {
        let mut s = Scenario::start(&[], |_, _| {}, true).await;
        let since = s.now();
        let member = s.consumer.member_state().unwrap().member_id;
        s.kfake.fault(
            Fault::new(HEARTBEAT, code.code())
                .group(&s.group)
                .top_level(),
        );
        let rejoin = s.kfake.wait_for("the rejoin", WAIT, |o| {
            o.client == CLIENT_ID
                && o.is_request(HEARTBEAT)
                && o.int("epoch") == Some(0)
                && o.at_micros > since
        });
        assert_eq!(
            rejoin.member(),
            Some(member.as_str()),
            "{code}: the same id"
        );
        assert!(
            rejoin.raw.get("topics").is_some_and(|t| t.is_array()),
            "{code}: full"
        );
        s.produce();
        s.wait_all_accepted().await;
        s.stop().await.unwrap();
    }
}

/// Rows "COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR | rediscover; a full heartbeat after
/// retry.backoff.ms; membership kept".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_coordinator_error_is_retried_after_the_backoff_keeping_the_membership() {
    let mut s = Scenario::start(&[], |_, _| {}, true).await;
    let epoch_before = s.consumer.member_state().unwrap().generation;
    s.kfake.fault(
        Fault::new(HEARTBEAT, ErrorCode::NotCoordinator.code())
            .group(&s.group)
            .top_level(),
    );
    let refused = s.kfake.wait_for("the refused heartbeat", WAIT, |o| {
        o.is_response(HEARTBEAT) && o.error() == Some(ErrorCode::NotCoordinator.code())
    });
    let retry = s.kfake.wait_for("the retry", WAIT, |o| {
        o.client == CLIENT_ID && o.is_request(HEARTBEAT) && o.at_micros > refused.at_micros
    });
    let waited = Duration::from_micros((retry.at_micros - refused.at_micros) as u64);
    assert!(
        waited >= BACKOFF - Duration::from_millis(20),
        "retried after {waited:?}"
    );
    assert!(
        epoch(&retry, "epoch") >= i64::from(epoch_before),
        "the membership kept"
    );
    assert!(
        retry.raw.get("topics").is_some_and(|t| t.is_array()),
        "full"
    );
    s.produce();
    s.wait_all_accepted().await;
    assert!(
        s.again().is_empty(),
        "nothing handed out twice: {:?}",
        s.again()
    );
    s.stop().await.unwrap();
}

/// Row "GROUP_AUTHORIZATION_FAILED | lost; → FATAL with Error::Authorization naming the group":
/// `run` ends with the typed error, once, and no heartbeat follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_authorization_failure_ends_run_with_the_typed_error() {
    let s = Scenario::start(
        &[],
        |kfake, group| {
            kfake.fault(
                Fault::new(HEARTBEAT, ErrorCode::GroupAuthorizationFailed.code())
                    .group(group)
                    .top_level(),
            )
        },
        false,
    )
    .await;
    let mut s = s;
    let error = tokio::time::timeout(WAIT, s.run.take().unwrap())
        .await
        .expect("run ends")
        .unwrap()
        .expect_err("fatal");
    assert!(
        matches!(&error, ConsumerError::Client(Error::Authorization { resource: Resource::Group(g), .. }) if *g == s.group),
        "{error}"
    );
    tokio::time::sleep(Duration::from_secs(1)).await;
    let joins = s
        .requests(HEARTBEAT)
        .into_iter()
        .filter(|o| epoch(o, "epoch") == 0)
        .count();
    assert_eq!(joins, 1, "never retried");
}

// ---------- ShareFetch and ShareAcknowledge ----------

/// Row "request | SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH | the session starts over
/// (epoch 0) at once": the next ShareFetch opens a new session listing every share-partition, and
/// every record is accepted; a record handed out again is one whose verdict the refused request
/// carried (counted as failed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_share_session_starts_over_at_epoch_zero() {
    for code in [
        ErrorCode::ShareSessionNotFound,
        ErrorCode::InvalidShareSessionEpoch,
    ] {
        let mut s = Scenario::start(&[], |_, _| {}, true).await;
        s.kfake
            .fault(Fault::new(FETCH, code.code()).group(&s.group).top_level());
        s.produce();
        s.wait_all_accepted().await;
        // The refused answer, then the consumer's next ShareFetch on that connection.
        let fetches: Vec<Observed> = s
            .kfake
            .observed()
            .into_iter()
            .filter(|o| o.key == FETCH)
            .collect();
        let refused = fetches
            .iter()
            .position(|o| o.is_response(FETCH) && o.error() == Some(code.code()))
            .expect("the refused answer");
        let next = fetches[refused..]
            .iter()
            .find(|o| o.is_request(FETCH) && o.conn == fetches[refused].conn)
            .expect("a ShareFetch after it");
        assert_eq!(
            epoch(next, "share_epoch"),
            0,
            "{code}: a new session at once"
        );
        let listed = next.raw["partitions"].as_array().map_or(0, Vec::len);
        assert_eq!(
            listed, PARTITIONS as usize,
            "{code}: every share-partition again"
        );
        let stats = s.consumer.stats();
        assert!(
            s.again().len() as u64 <= stats.acknowledgements_failed,
            "{code}: handed out again {:?} beyond the verdicts lost {stats:?}",
            s.again()
        );
        s.stop().await.unwrap();
    }
}

/// Row "request | transport error | the session starts over after retry.backoff.ms": a ShareFetch
/// answer cut halfway (kfake applied it: its records were acquired), the connection closed; the
/// records come again once their locks run out, and every one is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_fetch_answer_cut_off_loses_nothing() {
    let mut s = Scenario::start(&[], |_, _| {}, true).await;
    s.kfake.drop_responses(FETCH, 1);
    s.produce();
    s.wait_all_accepted().await;
    s.kfake.wait_for("the cut answer", WAIT, |o| {
        o.kind == "dropped" && o.key == FETCH
    });
    let reopened = s
        .requests(FETCH)
        .iter()
        .rev()
        .any(|o| epoch(o, "share_epoch") == 0);
    assert!(reopened, "a new session after the connection closed");
    s.stop().await.unwrap();
}

/// Row "partition | NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH | fetched again": one
/// share-partition's answer carries the error; its records are fetched again and accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_partition_error_is_fetched_again() {
    let mut s = Scenario::start(&[], |_, _| {}, true).await;
    s.kfake.fault(
        Fault::new(FETCH, ErrorCode::NotLeaderOrFollower.code())
            .partitions(&s.topic, &[1])
            .count(2),
    );
    s.produce();
    s.wait_all_accepted().await;
    s.stop().await.unwrap();
}

/// Row "request, partition | GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED | fatal":
/// `run` ends with the typed error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_fetch_refused_by_the_authorizer_ends_run() {
    let mut s = Scenario::start(&[], |_, _| {}, true).await;
    s.kfake.fault(
        Fault::new(FETCH, ErrorCode::GroupAuthorizationFailed.code())
            .group(&s.group)
            .top_level(),
    );
    s.produce();
    let error = tokio::time::timeout(WAIT, s.run.take().unwrap())
        .await
        .expect("run ends")
        .unwrap()
        .expect_err("fatal");
    assert!(
        matches!(
            &error,
            ConsumerError::Client(Error::Authorization {
                resource: Resource::Group(_),
                ..
            })
        ),
        "{error}"
    );
}

/// Row "partition, acknowledgement | INVALID_RECORD_STATE | counted as lock_expired": verdicts
/// sent in a ShareAcknowledge (the consumer holds as many records as it may, so no fetch is due)
/// are refused; they count as lock expiries, and the records come again and are accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_verdicts_count_as_lock_expiries_and_their_records_come_again() {
    // Records handled one at a time, 20 ms each: verdicts come while the consumer holds records,
    // when no fetch is due.
    let mut s = Scenario::start_paced(
        &[
            ("mooring.concurrency", "1"),
            ("mooring.buffer.max.records", "1"),
        ],
        Duration::from_millis(20),
        |_, _| {},
        true,
    )
    .await;
    let acknowledges = s.requests(ACKNOWLEDGE).len();
    assert!(acknowledges > 0, "verdicts went in ShareAcknowledge");
    s.kfake.fault(
        Fault::new(ACKNOWLEDGE, ErrorCode::InvalidRecordState.code())
            .partitions(&s.topic, &[])
            .count(1),
    );
    s.produce();
    s.wait_all_accepted().await;
    let stats = s.consumer.stats();
    assert!(stats.lock_expired >= 1, "{stats:?}");
    assert!(
        s.again().len() as u64 <= stats.lock_expired,
        "handed out again {:?} beyond the refused verdicts {stats:?}",
        s.again()
    );
    s.stop().await.unwrap();
}

/// Renewals on kfake (KIP-1222): a handler slower than the 2 s lock keeps its record, renewed in
/// ShareAcknowledge requests saying `IsRenewAck`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn renewals_go_in_share_acknowledge_requests_that_say_so() {
    let topic = unique("share-renew");
    let group = unique("share-renew");
    let kfake = Kfake::start(
        KfakeConfig::new([(topic.clone(), 1)])
            .broker_config("group.share.heartbeat.interval.ms", INTERVAL_MS)
            .broker_config("group.share.record.lock.duration.ms", LOCK_MS)
            .broker_config("share.record.lock.sweep.interval.ms", "100"),
    );
    kfake.set_group_config(&group, &[("share.auto.offset.reset", "earliest")]);
    kfake.produce(&topic, 0, 3);
    let c = consumer(&kfake, &group, &[]);
    c.subscribe([topic]).unwrap();
    let runner = c.clone();
    let run = tokio::spawn(async move {
        runner
            .run(|record: ConsumerRecord| async move {
                if record.offset() == 0 {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                Ok::<(), String>(())
            })
            .await
    });
    let deadline = tokio::time::Instant::now() + WAIT;
    while c.stats().accepted < 3 {
        assert!(tokio::time::Instant::now() < deadline, "{:?}", c.stats());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    c.shutdown_handle().shutdown();
    run.await.unwrap().unwrap();
    let stats = c.stats();
    assert_eq!((stats.acquired, stats.lock_expired), (3, 0), "{stats:?}");
    assert!(stats.renewed >= 3, "{stats:?}");
    let renewing = kfake
        .observed()
        .into_iter()
        .filter(|o| o.client == CLIENT_ID && o.is_request(ACKNOWLEDGE))
        .filter(|o| o.raw.get("renew").and_then(|r| r.as_bool()) == Some(true))
        .count();
    assert!(
        renewing >= 3,
        "{renewing} renewing ShareAcknowledge requests"
    );
}
