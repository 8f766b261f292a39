//! The group member's error table (JoinGroup, SyncGroup and Heartbeat rows, in
//! `mooring_group`'s module docs), row by row, on franz-go's kfake: a Mooring
//! consumer in a group consumes from kfake while the test injects the row's error (or stall) and
//! checks the reaction the row names in what kfake saw (the requests that followed, and when) and
//! in the member's events; each test ends with the group Stable (the member's view and
//! DescribeGroups at kfake) and every acknowledged offset handled and committed. The rows that
//! reset or end the membership are in `membership_faults.rs`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod kfake_support;

use std::time::Duration;

use kfake_support::*;
use mooring_consumer::{GroupEventKind, RebalanceCause};
use mooring_testkit::kfake::{Fault, Observed};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{
    FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest, Message, OffsetCommitRequest,
    SyncGroupRequest,
};

const JOIN: i16 = JoinGroupRequest::API_KEY;
const SYNC: i16 = SyncGroupRequest::API_KEY;
const HEARTBEAT_KEY: i16 = HeartbeatRequest::API_KEY;
const FIND: i16 = FindCoordinatorRequest::API_KEY;
const COMMIT: i16 = OffsetCommitRequest::API_KEY;

/// Row "JoinGroup | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport
/// error | forget the coordinator (rediscover), JoinGroup again after `retry.backoff.ms`".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_group_not_coordinator_rediscovers_then_rejoins_after_backoff() {
    let code = ErrorCode::NotCoordinator.code();
    let s = Scenario::start_with(3, &[], |kfake, _, group| {
        kfake.fault(Fault::new(JOIN, code).group(group));
    })
    .await;
    let (_, refused) = s.wait_answered(JOIN, code);
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    let seen = s.seen();
    let rediscovered = between(&seen, refused.at_micros, again.at_micros, |o| {
        o.is_request(FIND)
    });
    assert!(
        !rediscovered.is_empty(),
        "no FindCoordinator between the refused JoinGroup and the next:\n{}",
        timeline(&seen, refused.at_micros)
    );
    // Group requests retry after retry.backoff.ms, fixed (no growth); the FindCoordinator in
    // between is answered at once: 250 ms to 250 ms + LATE.
    assert!(
        waited_for(gap(&refused, &again), BACKOFF, BACKOFF),
        "JoinGroup again after {:?}, not retry.backoff.ms",
        gap(&refused, &again)
    );
    s.wait_settled().await;
    assert!(s.group_events().iter().any(|(_, e)| matches!(
        e,
        GroupEventKind::RebalanceFailed {
            code: Some(ErrorCode::NotCoordinator),
            ..
        }
    )));
    s.stop().await;
}

/// Row "JoinGroup | REBALANCE_IN_PROGRESS, COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT |
/// JoinGroup again after `retry.backoff.ms`" (no rediscovery: the coordinator is right).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_group_coordinator_load_in_progress_rejoins_after_backoff() {
    let code = ErrorCode::CoordinatorLoadInProgress.code();
    let s = Scenario::start_with(3, &[], |kfake, _, group| {
        kfake.fault(Fault::new(JOIN, code).group(group));
    })
    .await;
    let (_, refused) = s.wait_answered(JOIN, code);
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    let seen = s.seen();
    assert_rediscovery(&seen, &refused, &again, false, "the retried JoinGroup");
    // Group requests retry after retry.backoff.ms, fixed (no growth): 250 ms to 250 ms + LATE.
    assert!(
        waited_for(gap(&refused, &again), BACKOFF, BACKOFF),
        "JoinGroup again after {:?}, not retry.backoff.ms",
        gap(&refused, &again)
    );
    s.wait_settled().await;
    s.stop().await;
}

/// Row "SyncGroup | UNKNOWN_MEMBER_ID | lost; reset member id and generation; JoinGroup again at
/// once". A cooperative member keeps its partitions through a rejoin (triggered here by one
/// REBALANCE_IN_PROGRESS heartbeat), so they are owned when SyncGroup is refused and are reported
/// lost. kfake keeps the forgotten member until the rebalance timeout (3 s), as Kafka does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_group_unknown_member_id_loses_partitions_and_rejoins_with_an_empty_member_id() {
    let code = ErrorCode::UnknownMemberId.code();
    let mut s = Scenario::start(
        3,
        &[
            ("partition.assignment.strategy", "cooperative-sticky"),
            ("max.poll.interval.ms", "3000"),
        ],
    )
    .await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(SYNC, code).member(&before.member_id));
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, ErrorCode::RebalanceInProgress.code()).member(&before.member_id),
    );
    let (refused_req, refused) = s.wait_answered(SYNC, code);
    assert_eq!(refused_req.member(), Some(before.member_id.as_str()));
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    assert_eq!(
        again.member(),
        Some(""),
        "the JoinGroup after UNKNOWN_MEMBER_ID must come with an empty member id:\n{}",
        timeline(&s.seen(), refused.at_micros)
    );
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_ne!(after.member_id, before.member_id);
    let events = s.group_events();
    let lost: Vec<_> = events
        .iter()
        .filter_map(|(at, e)| match e {
            GroupEventKind::PartitionsLost { partitions, .. } => Some((micros(*at), partitions)),
            _ => None,
        })
        .collect();
    assert!(
        lost.iter()
            .any(|(at, p)| p.len() == 3 && *at >= refused.at_micros - 1000),
        "the three owned partitions were not reported lost: {events:#?}"
    );
    s.stop().await;
}

/// The connections-and-timeouts table, row "SyncGroup | group | rebalance timeout, at least
/// `request.timeout.ms`", with SyncGroup row NONE: a SyncGroup kfake holds for 3 s (longer than
/// `request.timeout.ms`, 2 s, and the session, 2 s; shorter than the rebalance timeout, 6 s) is
/// waited for on the group connection while heartbeats go on on the other, so the member keeps
/// its session and its generation and becomes Stable without another JoinGroup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_group_held_3s_is_waited_for_on_the_group_connection_while_heartbeats_go_on() {
    let stall = Duration::from_secs(3);
    let s = Scenario::start_with(
        3,
        &[
            ("session.timeout.ms", "2000"),
            ("request.timeout.ms", "2000"),
            ("max.poll.interval.ms", "6000"),
        ],
        |kfake, _, _| kfake.stall(SYNC, stall, 1, None),
    )
    .await;
    let sync = s.wait_seen("the held SyncGroup answered", |o| {
        o.is_response(SYNC) && o.error() == Some(0)
    });
    let seen = s.seen();
    let sent = seen
        .iter()
        .find(|o| o.kind == "req" && o.conn == sync.conn && o.corr == sync.corr)
        .unwrap()
        .clone();
    assert!(
        gap(&sent, &sync) >= stall,
        "SyncGroup answered after {:?}",
        gap(&sent, &sync)
    );
    let heartbeats = between(&seen, sent.at_micros, sync.at_micros, |o| {
        o.is_response(HEARTBEAT_KEY) && o.error() == Some(0)
    });
    assert!(
        heartbeats.len() >= 3 && heartbeats.iter().all(|h| h.conn != sync.conn),
        "heartbeats during the held SyncGroup: {}\n{}",
        heartbeats.len(),
        timeline(&seen, sent.at_micros)
    );
    let member = s.wait_settled().await;
    assert_eq!(member.generation, sent.generation().unwrap());
    let seen = s.seen();
    let joins = requests(&seen, JOIN);
    assert_eq!(
        joins.len(),
        2,
        "one join (and its MEMBER_ID_REQUIRED round) expected:\n{}",
        timeline(&s.seen(), 0)
    );
    s.stop().await;
}

/// Row "SyncGroup | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport
/// error | rediscover; JoinGroup again after `retry.backoff.ms`", the transport error being the
/// SyncGroup's timeout: kfake holds it 3 s, past its timeout (the rebalance timeout, 1.5 s). The
/// member keeps its member id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_group_held_past_its_timeout_rediscovers_and_rejoins_after_backoff() {
    let stall = Duration::from_secs(3);
    let s = Scenario::start_with(
        3,
        &[
            ("request.timeout.ms", "1000"),
            ("max.poll.interval.ms", "1500"),
        ],
        |kfake, _, _| kfake.stall(SYNC, stall, 1, None),
    )
    .await;
    let held = s.wait_seen("the held SyncGroup", |o| o.is_request(SYNC));
    let again = s.wait_request_after(
        "a JoinGroup after the held SyncGroup",
        JOIN,
        held.at_micros,
        |_| true,
    );
    let seen = s.seen();
    let timed_out = Duration::from_millis(1500);
    // The SyncGroup times out after the rebalance timeout, then the JoinGroup follows after
    // retry.backoff.ms (fixed): 1.75 s to 1.75 s + LATE.
    assert!(
        waited_for(gap(&held, &again), timed_out + BACKOFF, timed_out + BACKOFF),
        "JoinGroup {:?} after the held SyncGroup:\n{}",
        gap(&held, &again),
        timeline(&seen, held.at_micros)
    );
    assert_rediscovery(&seen, &held, &again, true, "the JoinGroup");
    assert_eq!(again.member(), held.member(), "the member id is kept");
    s.wait_settled().await;
    s.stop().await;
}

/// Row "Heartbeat | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport
/// error | rediscover; next heartbeat after `retry.backoff.ms`; membership kept".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_not_coordinator_rediscovers_and_keeps_membership() {
    let code = ErrorCode::NotCoordinator.code();
    let mut s = Scenario::start(3, &[]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(HEARTBEAT_KEY, code).member(&before.member_id));
    let (_, refused) = s.wait_answered(HEARTBEAT_KEY, code);
    let next = s.wait_request_after(
        "the next heartbeat",
        HEARTBEAT_KEY,
        refused.at_micros,
        |_| true,
    );
    let seen = s.seen();
    assert_rediscovery(&seen, &refused, &next, true, "the next heartbeat");
    // The next heartbeat after retry.backoff.ms (fixed), the FindCoordinator answered at once:
    // 250 ms to 250 ms + LATE.
    assert!(
        waited_for(gap(&refused, &next), BACKOFF, BACKOFF),
        "next heartbeat after {:?}",
        gap(&refused, &next)
    );
    assert_eq!(next.member(), Some(before.member_id.as_str()));
    assert_eq!(next.generation(), Some(before.generation));
    assert_membership_kept(&mut s, &before, refused.at_micros).await;
    s.stop().await;
}

/// Row "Heartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | next heartbeat after
/// `retry.backoff.ms`" (not after `heartbeat.interval.ms`, 2 s here; no rediscovery).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_coordinator_load_in_progress_retries_after_backoff_keeping_membership() {
    let code = ErrorCode::CoordinatorLoadInProgress.code();
    let mut s = Scenario::start(
        3,
        &[
            ("heartbeat.interval.ms", "2000"),
            ("session.timeout.ms", "6000"),
        ],
    )
    .await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(HEARTBEAT_KEY, code).member(&before.member_id));
    let (_, refused) = s.wait_answered(HEARTBEAT_KEY, code);
    let next = s.wait_request_after(
        "the next heartbeat",
        HEARTBEAT_KEY,
        refused.at_micros,
        |_| true,
    );
    let seen = s.seen();
    let waited = gap(&refused, &next);
    // retry.backoff.ms (fixed), not the 2 s interval: 250 ms to 250 ms + LATE.
    assert!(
        waited_for(waited, BACKOFF, BACKOFF),
        "next heartbeat after {waited:?}: retry.backoff.ms is {BACKOFF:?}, the interval 2 s"
    );
    assert_rediscovery(&seen, &refused, &next, false, "the next heartbeat");
    assert_membership_kept(&mut s, &before, refused.at_micros).await;
    s.stop().await;
}

/// Row "Heartbeat | REBALANCE_IN_PROGRESS | rejoin (cause `MemberJoined`; eager members revoke
/// first)": the partitions are revoked before the JoinGroup, which keeps the member id; nothing
/// is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_rebalance_in_progress_revokes_then_rejoins_with_the_same_member_id() {
    let code = ErrorCode::RebalanceInProgress.code();
    let mut s = Scenario::start(3, &[]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(HEARTBEAT_KEY, code).member(&before.member_id));
    let (_, told) = s.wait_answered(HEARTBEAT_KEY, code);
    let join = s.wait_request_after("the rejoin", JOIN, told.at_micros, |_| true);
    assert_eq!(join.member(), Some(before.member_id.as_str()));
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_eq!(after.member_id, before.member_id);
    assert!(after.generation > before.generation);
    let events = s.group_events();
    let revoked = events.iter().find_map(|(at, e)| match e {
        GroupEventKind::PartitionsRevoked { partitions, .. } if micros(*at) > told.at_micros => {
            Some((micros(*at), partitions.len()))
        }
        _ => None,
    });
    assert!(
        matches!(revoked, Some((at, 3)) if at <= join.at_micros),
        "eager: all three partitions revoked before the JoinGroup: {events:#?}"
    );
    assert!(events.iter().any(|(_, e)| matches!(
        e,
        GroupEventKind::RebalanceStarted {
            cause: RebalanceCause::MemberJoined,
            ..
        }
    )));
    assert!(
        !events
            .iter()
            .any(|(_, e)| matches!(e, GroupEventKind::PartitionsLost { .. })),
        "nothing is lost: {events:#?}"
    );
    s.stop().await;
}

/// Row "Heartbeat | ILLEGAL_GENERATION | heartbeats stop; lost; reset generation; rejoin (cause
/// `Fenced`)": the partitions are lost (no commit in the fenced generation), the JoinGroup keeps
/// the member id, the new generation consumes everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_illegal_generation_loses_partitions_and_rejoins_keeping_the_member_id() {
    let code = ErrorCode::IllegalGeneration.code();
    let mut s = Scenario::start(3, &[]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(HEARTBEAT_KEY, code).member(&before.member_id));
    let (_, fenced) = s.wait_answered(HEARTBEAT_KEY, code);
    let join = s.wait_request_after("the rejoin", JOIN, fenced.at_micros, |_| true);
    assert_eq!(join.member(), Some(before.member_id.as_str()));
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_eq!(after.member_id, before.member_id);
    assert!(after.generation > before.generation);
    let seen = s.seen();
    let old_generation = |o: &Observed| o.generation() == Some(before.generation);
    assert!(
        between(&seen, fenced.at_micros, join.at_micros, |o| {
            (o.is_request(HEARTBEAT_KEY) || o.is_request(COMMIT)) && old_generation(o)
        })
        .is_empty(),
        "heartbeat or commit in the fenced generation:\n{}",
        timeline(&seen, fenced.at_micros)
    );
    let events = s.group_events();
    assert!(
        events.iter().any(|(at, e)| micros(*at) > fenced.at_micros
            && matches!(e, GroupEventKind::PartitionsLost { partitions, .. } if partitions.len() == 3)),
        "the three partitions are lost: {events:#?}"
    );
    assert!(
        !events.iter().any(|(at, e)| micros(*at) > fenced.at_micros
            && matches!(e, GroupEventKind::PartitionsRevoked { .. })),
        "lost, not revoked: {events:#?}"
    );
    assert!(events.iter().any(|(_, e)| matches!(
        e,
        GroupEventKind::RebalanceStarted {
            cause: RebalanceCause::Fenced,
            ..
        }
    )));
    s.stop().await;
}

/// Row "Heartbeat | UNKNOWN_MEMBER_ID | heartbeats stop; lost; reset member id and generation;
/// rejoin (cause `SessionTimeout`)": the JoinGroup comes with an empty member id. kfake removes
/// the forgotten member when its session (3 s) expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_unknown_member_id_loses_partitions_and_rejoins_as_a_new_member() {
    let code = ErrorCode::UnknownMemberId.code();
    let mut s = Scenario::start(3, &[]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(HEARTBEAT_KEY, code).member(&before.member_id));
    let (_, forgotten) = s.wait_answered(HEARTBEAT_KEY, code);
    let join = s.wait_request_after("the rejoin", JOIN, forgotten.at_micros, |_| true);
    assert_eq!(join.member(), Some(""), "a new member id is asked for");
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_ne!(after.member_id, before.member_id);
    let events = s.group_events();
    assert!(
        events.iter().any(|(at, e)| micros(*at) > forgotten.at_micros
            && matches!(e, GroupEventKind::PartitionsLost { partitions, .. } if partitions.len() == 3)),
        "the three partitions are lost: {events:#?}"
    );
    assert!(events.iter().any(|(_, e)| matches!(
        e,
        GroupEventKind::RebalanceStarted {
            cause: RebalanceCause::SessionTimeout,
            ..
        }
    )));
    s.stop().await;
}

/// Transport-error row of Heartbeat ("rediscover; next heartbeat after `retry.backoff.ms`;
/// membership kept"), the error being a connection closed in the middle of the heartbeat's
/// response.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_connection_dropped_mid_response_rediscovers_and_keeps_membership() {
    let mut s = Scenario::start(3, &[]).await;
    let before = s.wait_settled().await;
    s.kfake.drop_responses(HEARTBEAT_KEY, 1);
    let cut = s.wait_seen("the cut heartbeat response", |o| {
        o.kind == "dropped" && o.key == HEARTBEAT_KEY
    });
    let next = s.wait_request_after("the next heartbeat", HEARTBEAT_KEY, cut.at_micros, |_| true);
    let seen = s.seen();
    assert_ne!(next.conn, cut.conn, "a new connection");
    assert_rediscovery(&seen, &cut, &next, true, "the next heartbeat");
    // The next heartbeat after retry.backoff.ms (fixed); the new connection's
    // reconnect.backoff.ms (50 ms, ±20 %) and the FindCoordinator fit within it: 250 ms to
    // 250 ms + LATE.
    assert!(
        waited_for(gap(&cut, &next), BACKOFF, BACKOFF),
        "next heartbeat after {:?}",
        gap(&cut, &next)
    );
    assert_eq!(next.generation(), Some(before.generation));
    assert_membership_kept(&mut s, &before, cut.at_micros).await;
    s.stop().await;
}

/// After an error that must not cost the membership: no JoinGroup since `since` (µs), nothing
/// revoked or lost, and the group consumes more records in the same generation.
async fn assert_membership_kept(
    s: &mut Scenario,
    before: &mooring_group::MemberSnapshot,
    since: i64,
) {
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_eq!(
        (after.member_id.as_str(), after.generation),
        (before.member_id.as_str(), before.generation)
    );
    let seen = s.seen();
    assert!(
        first_after(&seen, since, |o| o.is_request(JOIN)).is_none(),
        "JoinGroup after the error:\n{}",
        timeline(&seen, since)
    );
    let events = s.group_events();
    assert!(
        !events.iter().any(|(at, e)| micros(*at) > since
            && matches!(
                e,
                GroupEventKind::PartitionsLost { .. } | GroupEventKind::PartitionsRevoked { .. }
            )),
        "partitions revoked or lost: {events:#?}"
    );
}

/// Row "SyncGroup | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | JoinGroup again after
/// `retry.backoff.ms`" (no rediscovery; the member id is kept).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_group_coordinator_load_in_progress_rejoins_after_backoff() {
    sync_refused_then_rejoined(ErrorCode::CoordinatorLoadInProgress, false).await;
}

/// Row "SyncGroup | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport error
/// | rediscover; JoinGroup again after `retry.backoff.ms`", with NOT_COORDINATOR.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_group_not_coordinator_rediscovers_then_rejoins_after_backoff() {
    sync_refused_then_rejoined(ErrorCode::NotCoordinator, true).await;
}

/// The member's first SyncGroup is answered `error`: JoinGroup again with the same member id after
/// `retry.backoff.ms`, after a FindCoordinator iff `rediscover`, a `RebalanceFailed` event with
/// the code, and the group settles.
async fn sync_refused_then_rejoined(error: ErrorCode, rediscover: bool) {
    let code = error.code();
    let s = Scenario::start_with(3, &[], |kfake, _, group| {
        kfake.fault(Fault::new(SYNC, code).group(group));
    })
    .await;
    let (refused_req, refused) = s.wait_answered(SYNC, code);
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    let seen = s.seen();
    assert_rediscovery(&seen, &refused, &again, rediscover, "the JoinGroup");
    // Group requests retry after retry.backoff.ms, fixed (no growth), a FindCoordinator in
    // between answered at once: 250 ms to 250 ms + LATE.
    assert!(
        waited_for(gap(&refused, &again), BACKOFF, BACKOFF),
        "JoinGroup again after {:?}, not retry.backoff.ms",
        gap(&refused, &again)
    );
    assert_eq!(
        again.member(),
        refused_req.member(),
        "the member id is kept"
    );
    s.wait_settled().await;
    assert!(s.group_events().iter().any(
        |(_, e)| matches!(e, GroupEventKind::RebalanceFailed { code: Some(c), .. } if *c == error)
    ));
    s.stop().await;
}
