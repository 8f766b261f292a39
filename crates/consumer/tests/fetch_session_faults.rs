//! The fetcher's error table (`mooring_consumer::fetcher`'s module docs), its rows about
//! incremental fetch sessions (KIP-227), on franz-go's kfake, which keeps real fetch sessions: a
//! Mooring consumer in a group fetches in a session from kfake while the test answers one Fetch
//! with the row's error, and checks in what kfake saw that the session starts over (a full
//! request: session id 0, epoch 0, every partition listed) when the row says so, and when. Each
//! test ends with the group Stable and every acknowledged record handled, each once, and
//! committed.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod kfake_support;

use std::time::Duration;

use kfake_support::*;
use mooring_consumer::ConsumerEvent;
use mooring_testkit::kfake::{Fault, Observed};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{FetchRequest, Message, MetadataRequest};

const FETCH: i16 = FetchRequest::API_KEY;
const METADATA: i16 = MetadataRequest::API_KEY;
/// `retry.backoff.ms` here: long enough that a broker backed off (the request row's reaction to
/// other errors) is told from a request sent at once.
const FETCH_BACKOFF: Duration = Duration::from_secs(1);
const PARTITIONS: i32 = 3;

/// A scenario whose consumer backs off for [`FETCH_BACKOFF`], settled, fetching in a session.
async fn in_a_session() -> Scenario {
    let backoff = FETCH_BACKOFF.as_millis().to_string();
    let s = Scenario::start(
        PARTITIONS,
        &[
            ("retry.backoff.ms", &backoff),
            ("retry.backoff.max.ms", "2000"),
        ],
    )
    .await;
    s.wait_settled().await;
    let fetch = s.wait_seen("an incremental Fetch", |o| {
        o.is_request(FETCH)
            && o.int("session").is_some_and(|id| id != 0)
            && o.int("epoch").is_some_and(|e| e > 0)
    });
    assert_ne!(fetch.int("session"), Some(0));
    s
}

/// Whether a Fetch request is full: session id 0, epoch 0 (a new session).
fn is_full(fetch: &Observed) -> bool {
    (fetch.int("session"), fetch.int("epoch")) == (Some(0), Some(0))
}

/// The partitions a Fetch request lists.
fn listed(fetch: &Observed, topic: &str) -> Vec<i32> {
    fetch
        .rows("partitions")
        .into_iter()
        .filter(|(t, _, _)| t == topic)
        .map(|(_, p, _)| p)
        .collect()
}

/// Row "request | FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH | the session starts
/// over with a full request, at once": one Fetch of the session answered `error` at the top
/// level; the next Fetch is full, lists every partition, and goes at once (within [`LATE`], not
/// after the broker back-off of `retry.backoff.ms`, 1 s here, that other request errors get),
/// and the records produced next are all handled, once.
async fn session_starts_over(error: ErrorCode) {
    let code = error.code();
    let mut s = in_a_session().await;
    s.kfake.fault(Fault::new(FETCH, code).top_level());
    let (request, refused) = s.wait_answered(FETCH, code);
    assert_ne!(
        request.int("session"),
        Some(0),
        "the refused Fetch was in a session"
    );
    let next = s.wait_request_after("the next Fetch", FETCH, refused.at_micros, |_| true);
    let seen = s.seen();
    let all = timeline(&seen, refused.at_micros - 1);
    assert!(is_full(&next), "a full request next: {:?}\n{all}", next.raw);
    assert_eq!(
        listed(&next, &s.topic),
        (0..PARTITIONS).collect::<Vec<_>>(),
        "{:?}",
        next.raw
    );
    let waited = gap(&refused, &next);
    assert!(
        waited < LATE.min(FETCH_BACKOFF),
        "the full request {waited:?} after the refusal, not at once (the broker back-off is {FETCH_BACKOFF:?})\n{all}"
    );
    s.produce(BATCH);
    s.wait_settled().await;
    let sessions: Vec<i64> = requests(&s.seen(), FETCH)
        .iter()
        .filter(|o| o.at_micros > next.at_micros)
        .filter_map(|o| o.int("session"))
        .filter(|id| *id != 0)
        .collect();
    assert!(
        !sessions.is_empty(),
        "the new session is fetched in incrementally"
    );
    s.assert_no_duplicates();
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_session_id_not_found_starts_the_session_over_with_a_full_request_at_once() {
    session_starts_over(ErrorCode::FetchSessionIdNotFound).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_invalid_fetch_session_epoch_starts_the_session_over_with_a_full_request_at_once() {
    session_starts_over(ErrorCode::InvalidFetchSessionEpoch).await;
}

/// Row "partition | UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, INCONSISTENT_TOPIC_ID | back off
/// the partition; the broker's session starts over (it may name the topic by a stale id);
/// metadata refresh. Topic still listed: retried as above", with UNKNOWN_TOPIC_ID for partition
/// 1: the next Fetch is full (a new session) and leaves partition 1 out, metadata is refreshed,
/// partition 1 is listed again after `retry.backoff.ms` (1 s), a `FetchError` event names it, and
/// every record is handled once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_unknown_topic_id_backs_off_the_partition_and_starts_the_session_over() {
    let code = ErrorCode::UnknownTopicId.code();
    let mut s = in_a_session().await;
    s.kfake
        .fault(Fault::new(FETCH, code).partitions(&s.topic, &[1]));
    let (_, refused) = s.wait_answered(FETCH, code);
    assert_eq!(refused.entity_errors(), [(s.topic.clone(), 1, code)]);
    s.produce(BATCH);
    let next = s.wait_request_after("the next Fetch", FETCH, refused.at_micros, |_| true);
    let topic = s.topic.clone();
    let relisted =
        s.wait_request_after("partition 1 fetched again", FETCH, refused.at_micros, |o| {
            listed(o, &topic).contains(&1)
        });
    let seen = s.seen();
    let all = timeline(&seen, refused.at_micros - 1);
    assert!(
        is_full(&next),
        "a full request next (the session starts over): {:?}\n{all}",
        next.raw
    );
    assert_eq!(
        listed(&next, &s.topic),
        [0, 2],
        "partition 1 left out: {:?}",
        next.raw
    );
    // Partition 1's first failure waits retry.backoff.ms (the doubled 2 s is for a second one);
    // the long poll in flight meanwhile (fetch.max.wait.ms, 200 ms) may end first.
    let waited = gap(&refused, &relisted);
    assert!(
        waited_for(
            waited,
            FETCH_BACKOFF,
            FETCH_BACKOFF + Duration::from_millis(200)
        ),
        "partition 1 listed again after {waited:?}\n{all}"
    );
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(METADATA))
            .is_some_and(|m| m.at_micros < relisted.at_micros),
        "no metadata refresh:\n{all}"
    );
    s.wait_settled().await;
    let events = s.consumer_events();
    assert!(
        events.iter().any(|(_, e)| matches!(
            e,
            ConsumerEvent::FetchError { partition: Some(tp), .. } if tp.partition == 1
        )),
        "no FetchError naming partition 1: {events:#?}"
    );
    s.assert_no_duplicates();
    s.stop().await;
}
