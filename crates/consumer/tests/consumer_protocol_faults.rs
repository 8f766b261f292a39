//! The consumer protocol's error table (KIP-848: ConsumerGroupHeartbeat and its leave, in
//! `mooring_group::consumer`'s module docs), row by row, on franz-go's kfake: a
//! Mooring consumer with `group.protocol=consumer` consumes from kfake (which runs the broker-side
//! assignment, with a heartbeat interval of 1 s) while the test answers one of its heartbeats
//! with the row's error, and checks the reaction the row names in what kfake saw (the heartbeat
//! that followed, its epoch, whether it was full, when) and in the member's events. Where records
//! flow, every acknowledged record is handled exactly once.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod kfake_support;

use std::time::Duration;

use kfake_support::*;
use mooring_client::error::Resource;
use mooring_client::Error;
use mooring_consumer::{ConsumerError, GroupEventKind, RebalanceCause};
use mooring_group::MemberSnapshot;
use mooring_testkit::kfake::{Fault, Kfake, Observed};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{ConsumerGroupHeartbeatRequest, FindCoordinatorRequest, Message};

const HEARTBEAT_KEY: i16 = ConsumerGroupHeartbeatRequest::API_KEY;
const FIND: i16 = FindCoordinatorRequest::API_KEY;
/// kfake's `group.consumer.heartbeat.interval.ms` here: the member's heartbeat interval.
const INTERVAL: Duration = Duration::from_secs(1);
const PARTITIONS: i32 = 3;

/// A consumer-protocol member on kfake (heartbeat interval [`INTERVAL`]), `extra` properties on
/// top; `before_join` as in [`Scenario::start_with`].
async fn start(extra: &[(&str, &str)], before_join: impl FnOnce(&Kfake, &str, &str)) -> Scenario {
    let mut all = vec![
        ("group.protocol", "consumer"),
        // The broker sets these under the consumer protocol; the client refuses them.
        ("session.timeout.ms", ""),
        ("heartbeat.interval.ms", ""),
        ("partition.assignment.strategy", ""),
    ];
    all.extend_from_slice(extra);
    let interval = INTERVAL.as_millis().to_string();
    Scenario::start_configured(
        PARTITIONS,
        &all,
        |c| c.broker_config("group.consumer.heartbeat.interval.ms", &interval),
        before_join,
    )
    .await
}

/// Started and settled: the member Stable at an epoch above 0, owning every partition, every
/// record handled and committed.
async fn settled(extra: &[(&str, &str)]) -> (Scenario, MemberSnapshot) {
    let s = start(extra, |_, _, _| {}).await;
    let member = s.wait_settled_consumer_protocol().await;
    assert!(member.generation > 0, "member epoch {}", member.generation);
    assert_eq!(member.assignment.len(), PARTITIONS as usize);
    (s, member)
}

/// Whether a heartbeat is full: it carries the subscription and the owned partitions (an
/// incremental one leaves both null).
fn is_full(heartbeat: &Observed) -> bool {
    heartbeat.raw.get("topics").is_some_and(|t| t.is_array()) && heartbeat.int("owned").is_some()
}

/// A heartbeat's member epoch.
fn epoch(heartbeat: &Observed) -> Option<i64> {
    heartbeat.int("epoch")
}

/// Rows "ConsumerGroupHeartbeat | FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID | lost; → FENCED; rejoin
/// at epoch 0 with the same member id (cause `EpochFenced`)": one heartbeat of the stable member
/// answered `error`; the three partitions are lost, the next heartbeat is a full one at epoch 0
/// with the same member id, owning nothing, sent as soon as `lost` returned (before the interval
/// would have sent one), and the member consumes again, each record once.
async fn fenced_then_rejoined(error: ErrorCode) {
    let code = error.code();
    let (mut s, before) = settled(&[]).await;
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, code)
            .top_level()
            .member(&before.member_id),
    );
    let (_, refused) = s.wait_answered(HEARTBEAT_KEY, code);
    let rejoin = s.wait_request_after("the rejoin", HEARTBEAT_KEY, refused.at_micros, |_| true);
    let all = timeline(&s.seen(), refused.at_micros - 1);
    assert_eq!(epoch(&rejoin), Some(0), "the rejoin at epoch 0:\n{all}");
    assert_eq!(rejoin.member(), Some(before.member_id.as_str()), "{all}");
    assert!(
        is_full(&rejoin) && rejoin.int("owned") == Some(0),
        "a full heartbeat owning nothing:\n{all}"
    );
    assert!(
        gap(&refused, &rejoin) < INTERVAL,
        "rejoined {:?} after the refusal, not at once:\n{all}",
        gap(&refused, &rejoin)
    );
    let (lost_at, lost) = s
        .wait_group_event("partitions lost", refused.at_micros, |e| {
            matches!(e, GroupEventKind::PartitionsLost { .. })
        })
        .await;
    assert!(
        matches!(&lost, GroupEventKind::PartitionsLost { partitions, .. } if partitions.len() == PARTITIONS as usize),
        "{lost:?}"
    );
    assert!(
        lost_at <= rejoin.at_micros,
        "lost after the rejoin was sent:\n{all}"
    );
    s.wait_group_event("the rejoin's RebalanceStarted", refused.at_micros, |e| {
        matches!(
            e,
            GroupEventKind::RebalanceStarted {
                cause: RebalanceCause::EpochFenced,
                ..
            }
        )
    })
    .await;
    s.produce(BATCH);
    let after = s.wait_settled_consumer_protocol().await;
    assert_eq!(after.member_id, before.member_id);
    assert!(after.generation > 0);
    s.assert_no_duplicates();
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_fenced_member_epoch_loses_partitions_and_rejoins_at_epoch_zero_with_the_same_member_id(
) {
    fenced_then_rejoined(ErrorCode::FencedMemberEpoch).await;
}

/// Row "ConsumerGroupHeartbeat | GROUP_ID_NOT_FOUND (a heartbeat above epoch 0 whose group the
/// coordinator deleted meanwhile) | as UNKNOWN_MEMBER_ID: lost; → FENCED; rejoin at epoch 0".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_group_id_not_found_loses_partitions_and_rejoins_at_epoch_zero_with_the_same_member_id(
) {
    fenced_then_rejoined(ErrorCode::GroupIdNotFound).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_unknown_member_id_loses_partitions_and_rejoins_at_epoch_zero_with_the_same_member_id(
) {
    fenced_then_rejoined(ErrorCode::UnknownMemberId).await;
}

/// One heartbeat of the stable member answered `error`: the next heartbeat is a full one at the
/// same epoch after `retry.backoff.ms` (not after the 1 s interval), after a FindCoordinator iff
/// `rediscover`; nothing is revoked or lost, no join at epoch 0 follows, and the member consumes
/// on in the same epoch, each record once.
async fn retried_keeping_membership(error: ErrorCode, rediscover: bool) {
    let code = error.code();
    let (mut s, before) = settled(&[]).await;
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, code)
            .top_level()
            .member(&before.member_id),
    );
    let (_, refused) = s.wait_answered(HEARTBEAT_KEY, code);
    let next = s.wait_request_after(
        "the next heartbeat",
        HEARTBEAT_KEY,
        refused.at_micros,
        |_| true,
    );
    let seen = s.seen();
    let all = timeline(&seen, refused.at_micros - 1);
    let waited = gap(&refused, &next);
    assert!(
        waited_for(waited, BACKOFF, BACKOFF),
        "next heartbeat after {waited:?}: retry.backoff.ms is {BACKOFF:?}, the interval {INTERVAL:?}\n{all}"
    );
    assert!(
        is_full(&next) && next.int("owned") == Some(i64::from(PARTITIONS)),
        "a full heartbeat owning the partitions:\n{all}"
    );
    assert_eq!(epoch(&next), Some(i64::from(before.generation)), "{all}");
    assert_eq!(next.member(), Some(before.member_id.as_str()));
    assert_rediscovery(&seen, &refused, &next, rediscover, "the next heartbeat");
    s.produce(BATCH);
    let after = s.wait_settled_consumer_protocol().await;
    assert_eq!(
        (after.member_id.as_str(), after.generation),
        (before.member_id.as_str(), before.generation)
    );
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(HEARTBEAT_KEY)
            && epoch(o) == Some(0))
        .is_none(),
        "a join at epoch 0 after the error:\n{}",
        timeline(&seen, refused.at_micros - 1)
    );
    let events = s.group_events();
    assert!(
        !events.iter().any(|(at, e)| micros(*at) > refused.at_micros
            && matches!(
                e,
                GroupEventKind::PartitionsLost { .. } | GroupEventKind::PartitionsRevoked { .. }
            )),
        "partitions revoked or lost: {events:#?}"
    );
    s.assert_no_duplicates();
    s.stop().await;
}

/// Row "ConsumerGroupHeartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | a full
/// heartbeat after `retry.backoff.ms`" (no rediscovery), with COORDINATOR_LOAD_IN_PROGRESS.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_coordinator_load_in_progress_sends_a_full_heartbeat_after_backoff() {
    retried_keeping_membership(ErrorCode::CoordinatorLoadInProgress, false).await;
}

/// Row "ConsumerGroupHeartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | ...", with
/// REQUEST_TIMED_OUT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_request_timed_out_sends_a_full_heartbeat_after_backoff() {
    retried_keeping_membership(ErrorCode::RequestTimedOut, false).await;
}

/// Row "ConsumerGroupHeartbeat | COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, NETWORK_EXCEPTION,
/// transport error | rediscover; a full heartbeat after `retry.backoff.ms`; membership kept",
/// with NOT_COORDINATOR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_not_coordinator_rediscovers_and_sends_a_full_heartbeat_after_backoff() {
    retried_keeping_membership(ErrorCode::NotCoordinator, true).await;
}

/// Row "ConsumerGroupHeartbeat | UNRELEASED_INSTANCE_ID | → INSTANCE_ID_UNRELEASED;
/// `InstanceIdUnreleased` event; join again after `retry.backoff.ms` doubling up to the heartbeat
/// interval": a static member's first two joins are refused; the second comes after
/// `retry.backoff.ms` (250 ms), the third after twice that (500 ms), each an `InstanceIdUnreleased`
/// event, and the third joins and consumes everything once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_unreleased_instance_id_joins_again_after_a_doubling_backoff() {
    let code = ErrorCode::UnreleasedInstanceId.code();
    let instance = mooring_testkit::unique("instance");
    let s = start(
        &[("group.instance.id", instance.as_str())],
        |kfake, _, _| {
            kfake.fault(Fault::new(HEARTBEAT_KEY, code).top_level().count(2));
        },
    )
    .await;
    let member = s.wait_settled_consumer_protocol().await;
    assert!(member.generation > 0);
    let seen = s.seen();
    let joins: Vec<&Observed> = requests(&seen, HEARTBEAT_KEY)
        .into_iter()
        .filter(|o| epoch(o) == Some(0))
        .collect();
    let all = timeline(&seen, 0);
    assert!(joins.len() >= 3, "three joins at epoch 0:\n{all}");
    assert!(
        joins[..3]
            .iter()
            .all(|j| j.raw.get("instance").and_then(|i| i.as_str()) == Some(instance.as_str())),
        "each join carries the instance id:\n{all}"
    );
    let answers: Vec<&Observed> = seen
        .iter()
        .filter(|o| o.is_response(HEARTBEAT_KEY))
        .take(3)
        .collect();
    assert!(
        answers.len() == 3
            && answers[0].error() == Some(code)
            && answers[1].error() == Some(code)
            && answers[2].error() == Some(0),
        "two refusals, then a join:\n{all}"
    );
    let (first, second) = (gap(answers[0], joins[1]), gap(answers[1], joins[2]));
    assert!(
        waited_for(first, BACKOFF, BACKOFF) && waited_for(second, BACKOFF * 2, BACKOFF * 2),
        "joined again after {first:?}, then {second:?}: expected {BACKOFF:?}, then {:?}\n{all}",
        BACKOFF * 2
    );
    let unreleased: Vec<GroupEventKind> = s
        .group_events()
        .into_iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, GroupEventKind::InstanceIdUnreleased { .. }))
        .collect();
    assert_eq!(unreleased.len(), 2, "{unreleased:#?}");
    s.assert_no_duplicates();
    s.stop().await;
}

/// Row "ConsumerGroupHeartbeat | any other (UNSUPPORTED_ASSIGNOR, ...) | lost; → FATAL(code)
/// with the error, `RebalanceFailed`, said once", with UNSUPPORTED_ASSIGNOR: the partitions are
/// lost, a `RebalanceFailed` names the code, the member sends no heartbeat more, and `run` ends
/// with the error. Every acknowledged record was handled before, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_unsupported_assignor_loses_partitions_and_ends_run_with_the_error() {
    let code = ErrorCode::UnsupportedAssignor.code();
    let (mut s, before) = settled(&[]).await;
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, code)
            .top_level()
            .member(&before.member_id),
    );
    let (_, refused) = s.wait_answered(HEARTBEAT_KEY, code);
    let ended = s.run_ended().await;
    assert!(
        matches!(&ended, Err(ConsumerError::Client(Error::Broker { code: c, .. })) if *c == ErrorCode::UnsupportedAssignor),
        "run ended with {ended:?}"
    );
    s.wait_group_event("partitions lost", refused.at_micros, |e| {
        matches!(e, GroupEventKind::PartitionsLost { partitions, .. } if partitions.len() == PARTITIONS as usize)
    })
    .await;
    s.wait_group_event("RebalanceFailed", refused.at_micros, |e| {
        matches!(
            e,
            GroupEventKind::RebalanceFailed {
                code: Some(ErrorCode::UnsupportedAssignor),
                ..
            }
        )
    })
    .await;
    s.catch_up().await;
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(HEARTBEAT_KEY)).is_none(),
        "a heartbeat after the fatal answer:\n{}",
        timeline(&seen, refused.at_micros - 1)
    );
    s.assert_all_handled();
    s.assert_no_duplicates();
}

/// Row "ConsumerGroupHeartbeat | GROUP_AUTHORIZATION_FAILED (...) | lost; → FATAL with
/// `Error::Authorization` naming group and principal, said once": `run` ends with the typed error
/// naming the group; no heartbeat follows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_heartbeat_group_authorization_failed_ends_run_with_the_typed_error() {
    let code = ErrorCode::GroupAuthorizationFailed.code();
    let (mut s, before) = settled(&[]).await;
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, code)
            .top_level()
            .member(&before.member_id),
    );
    let (_, refused) = s.wait_answered(HEARTBEAT_KEY, code);
    let ended = s.run_ended().await;
    let group = s.group.clone();
    assert!(
        matches!(&ended, Err(ConsumerError::Client(Error::Authorization { resource: Resource::Group(g), code: ErrorCode::GroupAuthorizationFailed, .. })) if *g == group),
        "run ended with {ended:?}"
    );
    s.wait_group_event("partitions lost", refused.at_micros, |e| {
        matches!(e, GroupEventKind::PartitionsLost { .. })
    })
    .await;
    s.catch_up().await;
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(HEARTBEAT_KEY)).is_none(),
        "a heartbeat after the refusal:\n{}",
        timeline(&seen, refused.at_micros - 1)
    );
    s.assert_all_handled();
}

/// Row "leave heartbeat | UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID | done":
/// a dynamic member's close sends one leave heartbeat (epoch -1), answered UNKNOWN_MEMBER_ID; it
/// is not sent again, and the close ends without an error (`Left`, no error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_leave_heartbeat_unknown_member_id_on_close_is_done() {
    let code = ErrorCode::UnknownMemberId.code();
    let (mut s, before) = settled(&[]).await;
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, code)
            .top_level()
            .member(&before.member_id)
            .epoch(-1),
    );
    s.shutdown().await.unwrap();
    s.catch_up().await;
    let seen = s.seen();
    let leaves: Vec<&Observed> = requests(&seen, HEARTBEAT_KEY)
        .into_iter()
        .filter(|o| epoch(o) == Some(-1))
        .collect();
    let all = timeline(&seen, leaves.first().map_or(0, |l| l.at_micros) - 1);
    assert!(
        leaves.len() == 1 && answered_with(&seen, HEARTBEAT_KEY, code).is_some(),
        "one leave heartbeat, answered UNKNOWN_MEMBER_ID:\n{all}"
    );
    let (_, left) = s
        .wait_group_event("Left", 0, |e| matches!(e, GroupEventKind::Left { .. }))
        .await;
    assert!(
        matches!(
            left,
            GroupEventKind::Left {
                sent_leave_group: true,
                error: None
            }
        ),
        "{left:?}"
    );
    s.assert_no_duplicates();
}

/// Row "leave heartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, NOT_COORDINATOR, ... |
/// one retry after `retry.backoff.ms` (rediscovering for coordinator errors), then give up": a
/// dynamic member's close sends the leave heartbeat twice, the second after the back-off and
/// without a FindCoordinator, then `Left` with the error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consumer_leave_heartbeat_coordinator_load_in_progress_retries_once_then_gives_up() {
    let code = ErrorCode::CoordinatorLoadInProgress.code();
    let (mut s, before) = settled(&[]).await;
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, code)
            .top_level()
            .member(&before.member_id)
            .epoch(-1)
            .count(3),
    );
    s.shutdown().await.unwrap();
    s.catch_up().await;
    let seen = s.seen();
    let leaves: Vec<&Observed> = requests(&seen, HEARTBEAT_KEY)
        .into_iter()
        .filter(|o| epoch(o) == Some(-1))
        .collect();
    let (_, refused) = answered_with(&seen, HEARTBEAT_KEY, code).expect("the leave refused");
    let all = timeline(&seen, refused.at_micros - 1);
    assert_eq!(leaves.len(), 2, "the leave heartbeat sent twice:\n{all}");
    assert!(
        waited_for(gap(&refused, leaves[1]), BACKOFF, BACKOFF)
            && between(&seen, refused.at_micros, leaves[1].at_micros, |o| o
                .is_request(FIND))
            .is_empty(),
        "the second leave after retry.backoff.ms, without rediscovery:\n{all}"
    );
    let (_, left) = s
        .wait_group_event("Left", 0, |e| matches!(e, GroupEventKind::Left { .. }))
        .await;
    assert!(
        matches!(&left, GroupEventKind::Left { sent_leave_group: true, error: Some(e) }
            if e.contains("COORDINATOR_LOAD_IN_PROGRESS")),
        "{left:?}"
    );
    s.assert_no_duplicates();
}
