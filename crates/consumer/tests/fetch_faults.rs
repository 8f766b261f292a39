//! The fetcher's error table (`mooring_consumer::fetcher`'s module docs), row by row, on
//! franz-go's kfake: a consumer of three partitions reads from kfake while the test injects a
//! partition error into one Fetch answer (kfake's own fault, inside its fetch session) or cuts a
//! Fetch response mid-frame, and checks the reaction the row names in what kfake saw and in the
//! consumer's events; each test ends with the group Stable and every acknowledged offset handled
//! and committed.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod kfake_support;

use std::time::Duration;

use kfake_support::*;
use mooring_consumer::subscription::OffsetResetStrategy;
use mooring_consumer::{ConsumerError, ConsumerEvent};
use mooring_testkit::kfake::{Fault, Observed};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{FetchRequest, ListOffsetsRequest, Message, MetadataRequest};

const FETCH: i16 = FetchRequest::API_KEY;
const METADATA: i16 = MetadataRequest::API_KEY;
const LIST_OFFSETS: i16 = ListOffsetsRequest::API_KEY;

/// `retry.backoff.ms` in these tests: long enough that the other partitions' records, produced
/// after the error, are fetched within it.
const FETCH_BACKOFF: Duration = Duration::from_millis(1000);
/// `fetch.max.wait.ms` of the consumer under test (kfake_support's props).
const FETCH_MAX_WAIT: Duration = Duration::from_millis(200);

/// Row "partition | NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ... | back off the partition;
/// metadata refresh", with NOT_LEADER_OR_FOLLOWER.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_not_leader_or_follower_backs_off_the_partition_and_refreshes_metadata() {
    partition_is_backed_off(ErrorCode::NotLeaderOrFollower).await;
}

/// Row "partition | NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, ... | back off the partition;
/// metadata refresh", with FENCED_LEADER_EPOCH (KIP-320).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_fenced_leader_epoch_backs_off_the_partition_and_refreshes_metadata() {
    partition_is_backed_off(ErrorCode::FencedLeaderEpoch).await;
}

/// Partition 1's answer in one Fetch carries `error`: partition 1 is not fetched again for
/// `retry.backoff.ms`, metadata is refreshed, partitions 0 and 2 go on (records produced after
/// the error are fetched within the back-off), a `FetchError` event names partition 1, and
/// nothing is lost.
async fn partition_is_backed_off(error: ErrorCode) {
    let code = error.code();
    let backoff = FETCH_BACKOFF.as_millis().to_string();
    let mut s = Scenario::start(
        3,
        &[
            ("retry.backoff.ms", &backoff),
            ("retry.backoff.max.ms", "2000"),
        ],
    )
    .await;
    s.wait_settled().await;
    s.kfake
        .fault(Fault::new(FETCH, code).partitions(&s.topic, &[1]));
    let (_, refused) = s.wait_answered(FETCH, code);
    assert_eq!(refused.entity_errors(), [(s.topic.clone(), 1, code)]);
    s.produce(BATCH);
    let topic = s.topic.clone();
    let lists_1 = move |o: &Observed| {
        o.rows("partitions")
            .iter()
            .any(|(t, p, _)| *t == topic && *p == 1)
    };
    let refetched = s.wait_request_after(
        "partition 1 fetched again",
        FETCH,
        refused.at_micros,
        &lists_1,
    );
    let seen = s.seen();
    // The first failure waits retry.backoff.ms exactly (the doubled 2 s is for a second one),
    // then the other partitions' long poll in flight to the one broker ends (fetch.max.wait.ms,
    // 200 ms) before the next Fetch lists partition 1: between 1 s and 1.2 s + LATE.
    assert!(
        waited_for(
            gap(&refused, &refetched),
            FETCH_BACKOFF,
            FETCH_BACKOFF + FETCH_MAX_WAIT
        ),
        "partition 1 fetched again after {:?}:\n{}",
        gap(&refused, &refetched),
        timeline(&seen, refused.at_micros)
    );
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(METADATA))
            .is_some_and(|m| m.at_micros < refetched.at_micros),
        "no metadata refresh:\n{}",
        timeline(&seen, refused.at_micros)
    );
    let others = between(&seen, refused.at_micros, refetched.at_micros, |o| {
        o.is_response(FETCH)
            && o.rows("partitions").iter().any(|(t, p, rest)| {
                *t == s.topic && *p != 1 && rest.get(2).is_some_and(|bytes| *bytes > 0)
            })
    });
    assert!(
        !others.is_empty(),
        "partitions 0 and 2 not fetched during partition 1's back-off:\n{}",
        timeline(&seen, refused.at_micros)
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
    s.stop().await;
}

/// Row "partition | OFFSET_OUT_OF_RANGE | reset by `auto.offset.reset`; `none`:
/// `ConsumerError::OffsetOutOfRange`", with `earliest`: partition 1's answer carries the error
/// while the member is at its end (20); the position is looked up again (ListOffsets), reset to
/// the log's start, 0 (an `OffsetReset` event), and partition 1 is fetched, and handled, again
/// from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_offset_out_of_range_resets_the_position_by_auto_offset_reset() {
    let code = ErrorCode::OffsetOutOfRange.code();
    let mut s = Scenario::start(3, &[("auto.offset.reset", "earliest")]).await;
    s.wait_settled().await;
    s.kfake
        .fault(Fault::new(FETCH, code).partitions(&s.topic, &[1]));
    let (_, refused) = s.wait_answered(FETCH, code);
    assert_eq!(refused.entity_errors(), [(s.topic.clone(), 1, code)]);
    let topic = s.topic.clone();
    let from_start = s.wait_request_after(
        "partition 1 fetched from offset 0",
        FETCH,
        refused.at_micros,
        move |o| {
            o.rows("partitions")
                .iter()
                .any(|(t, p, rest)| *t == topic && *p == 1 && rest.first() == Some(&0))
        },
    );
    let seen = s.seen();
    assert!(
        !between(&seen, refused.at_micros, from_start.at_micros, |o| o
            .is_request(LIST_OFFSETS))
        .is_empty(),
        "no ListOffsets before fetching from 0:\n{}",
        timeline(&seen, refused.at_micros)
    );
    s.produce(BATCH);
    s.wait_settled().await;
    let events = s.consumer_events();
    assert!(
        events.iter().any(|(_, e)| matches!(
            e,
            ConsumerEvent::OffsetReset { partition, strategy: OffsetResetStrategy::Earliest, offset: 0 }
                if partition.partition == 1
        )),
        "no OffsetReset of partition 1 to 0: {events:#?}"
    );
    let again = s
        .handled()
        .iter()
        .filter(|(p, o)| *p == 1 && *o < i64::from(BATCH))
        .count();
    assert_eq!(
        again,
        2 * BATCH as usize,
        "partition 1's first records handled twice"
    );
    s.stop().await;
}

/// Row "partition | OFFSET_OUT_OF_RANGE | ...; `none`: `ConsumerError::OffsetOutOfRange`": with
/// `auto.offset.reset` `none` (positions from offsets committed before the start), `run` ends with
/// the error naming partition 1, without looking any offset up. Every acknowledged record was
/// handled before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_offset_out_of_range_with_auto_offset_reset_none_ends_run_with_the_error() {
    let code = ErrorCode::OffsetOutOfRange.code();
    let mut s = Scenario::start_with(
        3,
        &[("auto.offset.reset", "none")],
        |kfake, topic, group| {
            for p in 0..3 {
                kfake.commit(group, topic, p, 0);
            }
        },
    )
    .await;
    s.wait_settled().await;
    s.kfake
        .fault(Fault::new(FETCH, code).partitions(&s.topic, &[1]));
    let (_, refused) = s.wait_answered(FETCH, code);
    let result = s.run_ended().await;
    assert!(
        matches!(
            &result,
            Err(ConsumerError::OffsetOutOfRange { partitions })
                if partitions.len() == 1 && partitions[0].topic == s.topic && partitions[0].partition == 1
        ),
        "run ends with OffsetOutOfRange for partition 1: {result:?}"
    );
    // What was sent before `run` returned is reported.
    s.catch_up().await;
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(LIST_OFFSETS)).is_none(),
        "ListOffsets after the error:\n{}",
        timeline(&seen, refused.at_micros)
    );
    s.assert_all_handled();
}

/// Row "request | transport error (connect, I/O, timeout, decode), ... | back off the broker for
/// `retry.backoff.ms`; its session starts over; metadata refresh; `FetchError` event without a
/// partition", the error being a connection closed in the middle of a Fetch response carrying
/// records: they are fetched again, on a new connection, with a full request (new session).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_connection_dropped_mid_response_backs_off_the_broker_and_restarts_the_session() {
    let mut s = Scenario::start(3, &[]).await;
    s.wait_settled().await;
    s.kfake.drop_fetch_responses_with_records(FETCH, 1);
    s.produce(BATCH);
    let cut = s.wait_seen("the cut Fetch response", |o| {
        o.kind == "dropped" && o.key == FETCH
    });
    let seen = s.seen();
    let cut_request = seen
        .iter()
        .find(|o| o.kind == "req" && o.conn == cut.conn && o.corr == cut.corr)
        .unwrap()
        .clone();
    assert_ne!(
        cut_request.int("session"),
        Some(0),
        "the cut fetch was in a session"
    );
    assert!(cut
        .rows("partitions")
        .iter()
        .any(|(_, _, rest)| rest.get(2).is_some_and(|b| *b > 0)));
    let next = s.wait_request_after("the next Fetch", FETCH, cut.at_micros, |_| true);
    let seen = s.seen();
    assert_ne!(next.conn, cut.conn, "a new connection");
    assert_eq!(
        (next.int("session"), next.int("epoch")),
        (Some(0), Some(0)),
        "a full request, creating a new session"
    );
    // The broker is backed off for retry.backoff.ms (fixed, no growth after one failure); the
    // new connection's reconnect.backoff.ms (50 ms, ±20 %) runs within it: between 250 ms and
    // 250 ms + LATE.
    assert!(
        waited_for(gap(&cut, &next), BACKOFF, BACKOFF),
        "the broker fetched again after {:?}",
        gap(&cut, &next)
    );
    assert!(
        first_after(&seen, cut.at_micros, |o| o.is_request(METADATA)).is_some(),
        "no metadata refresh:\n{}",
        timeline(&seen, cut.at_micros)
    );
    s.wait_settled().await;
    let events = s.consumer_events();
    assert!(
        events.iter().any(|(_, e)| matches!(
            e,
            ConsumerEvent::FetchError {
                partition: None,
                ..
            }
        )),
        "no FetchError for the request: {events:#?}"
    );
    s.stop().await;
}
