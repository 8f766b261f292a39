//! The group member's error table (in `mooring_group`'s module docs), the rows that
//! reset or end the membership, row by row, on franz-go's kfake: a settled cooperative member is
//! made to rejoin and its JoinGroup or SyncGroup is refused (UNKNOWN_MEMBER_ID,
//! ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, FENCED_INSTANCE_ID under both fenced policies), or
//! its LeaveGroup on close is. The test checks the reaction the row names in what kfake saw (the
//! member id, generation and owned partitions of the JoinGroup that follows, and when) and in
//! the member's events; every acknowledged record is handled, and a member that stays ends with
//! the group Stable and everything committed.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod kfake_support;

use std::time::Duration;

use kfake_support::*;
use mooring_client::Error as CoordinatorError;
use mooring_consumer::{ConsumerError, GroupEventKind};
use mooring_group::{FencedPolicy, MemberSnapshot};
use mooring_testkit::kfake::{Fault, Observed};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{
    DescribeGroupsRequest, FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest,
    LeaveGroupRequest, Message, OffsetCommitRequest, SyncGroupRequest,
};

const JOIN: i16 = JoinGroupRequest::API_KEY;
const SYNC: i16 = SyncGroupRequest::API_KEY;
const HEARTBEAT_KEY: i16 = HeartbeatRequest::API_KEY;
const FIND: i16 = FindCoordinatorRequest::API_KEY;
const COMMIT: i16 = OffsetCommitRequest::API_KEY;
const LEAVE: i16 = LeaveGroupRequest::API_KEY;
const DESCRIBE: i16 = DescribeGroupsRequest::API_KEY;

/// A settled cooperative member (its partitions stay owned through a rejoin, so they can be
/// lost) is made to rejoin by one REBALANCE_IN_PROGRESS heartbeat, and its next `api` request
/// (JoinGroup or SyncGroup) is answered `code`: returns the scenario, the member before, the
/// refused request and its answer.
async fn rejoin_refused(
    api: i16,
    code: ErrorCode,
    extra: &[(&str, &str)],
) -> (Scenario, MemberSnapshot, Observed, Observed) {
    let mut all = vec![("partition.assignment.strategy", "cooperative-sticky")];
    all.extend_from_slice(extra);
    let s = Scenario::start(3, &all).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(api, code.code()).member(&before.member_id));
    s.kfake.fault(
        Fault::new(HEARTBEAT_KEY, ErrorCode::RebalanceInProgress.code()).member(&before.member_id),
    );
    let (refused_req, refused) = s.wait_answered(api, code.code());
    assert_eq!(refused_req.member(), Some(before.member_id.as_str()));
    if api == JOIN {
        assert_eq!(
            subscription(&refused_req),
            (i64::from(before.generation), 3),
            "the refused JoinGroup subscribes owning the three partitions in the generation before"
        );
    }
    (s, before, refused_req, refused)
}

/// What a JoinGroup's subscription says: the generation its partitions were owned in (-1: none)
/// and how many it owns.
fn subscription(join: &Observed) -> (i64, i64) {
    (
        join.int("sub_gen").unwrap_or(i64::MIN),
        join.int("owned").unwrap_or(-1),
    )
}

/// "JoinGroup again at once": within `retry.backoff.ms` of the refusal.
fn assert_at_once(s: &Scenario, refused: &Observed, again: &Observed) {
    assert!(
        gap(refused, again) < BACKOFF,
        "JoinGroup again after {:?}, not at once:\n{}",
        gap(refused, again),
        timeline(&s.seen(), refused.at_micros)
    );
}

/// Waits until the member reported its three partitions lost after `since` (µs).
async fn wait_lost(s: &Scenario, since: i64) {
    s.wait_group_event(
        "the three partitions lost",
        since,
        |e| matches!(e, GroupEventKind::PartitionsLost { partitions, .. } if partitions.len() == 3),
    )
    .await;
}

/// Nothing was revoked after `since` (µs) (cooperative, the same assignment), and nothing lost
/// unless `lost`.
fn assert_not_revoked(s: &Scenario, since: i64, lost: bool) {
    let events = s.group_events();
    assert!(
        !events.iter().any(|(at, e)| micros(*at) > since
            && match e {
                GroupEventKind::PartitionsRevoked { partitions, .. } => !partitions.is_empty(),
                GroupEventKind::PartitionsLost { .. } => !lost,
                _ => false,
            }),
        "revoked, or lost (expected: {lost}): {events:#?}"
    );
}

/// Row "JoinGroup | UNKNOWN_MEMBER_ID | lost; reset member id and generation; JoinGroup again at
/// once": the next JoinGroup comes within `retry.backoff.ms`, with an empty member id, owning
/// nothing in no generation. kfake keeps the forgotten member until its session (1 s) expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_group_unknown_member_id_loses_partitions_and_rejoins_at_once_as_a_new_member() {
    let (mut s, before, _, refused) = rejoin_refused(
        JOIN,
        ErrorCode::UnknownMemberId,
        &[("session.timeout.ms", "1000")],
    )
    .await;
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    assert_at_once(&s, &refused, &again);
    assert_eq!(
        (again.member(), subscription(&again)),
        (Some(""), (-1, 0)),
        "a new member, owning nothing in no generation"
    );
    wait_lost(&s, refused.at_micros).await;
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_not_revoked(&s, refused.at_micros, true);
    assert_ne!(after.member_id, before.member_id);
    s.stop().await;
}

/// Row "JoinGroup | ILLEGAL_GENERATION | lost; reset generation (keep member id); JoinGroup
/// again at once": the next JoinGroup comes within `retry.backoff.ms`, with the member id, owning
/// nothing in no generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_group_illegal_generation_loses_partitions_and_rejoins_at_once_keeping_the_member_id()
{
    let (mut s, before, _, refused) = rejoin_refused(JOIN, ErrorCode::IllegalGeneration, &[]).await;
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    assert_at_once(&s, &refused, &again);
    assert_eq!(
        (again.member(), subscription(&again)),
        (Some(before.member_id.as_str()), (-1, 0)),
        "the same member, owning nothing in no generation"
    );
    wait_lost(&s, refused.at_micros).await;
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_not_revoked(&s, refused.at_micros, true);
    assert_eq!(after.member_id, before.member_id);
    assert!(after.generation > before.generation);
    s.stop().await;
}

/// Row "JoinGroup | FENCED_INSTANCE_ID | lost; → FENCED; `Fenced` event; `FencedPolicy`", with the
/// default policy `stop`: the partitions are lost, the member sends nothing more to the group,
/// and `run` ends with the typed error naming group and instance id. Every acknowledged record
/// was handled before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_group_fenced_instance_id_loses_partitions_and_stops_with_policy_stop() {
    let instance = "fenced-stop-0";
    let (mut s, _, _, refused) = rejoin_refused(
        JOIN,
        ErrorCode::FencedInstanceId,
        &[("group.instance.id", instance)],
    )
    .await;
    let result = s.run_ended().await;
    assert!(
        matches!(
            &result,
            Err(ConsumerError::Client(CoordinatorError::FencedInstanceId { group, instance_id }))
                if *group == s.group && instance_id == instance
        ),
        "run ends with FencedInstanceId: {result:?}"
    );
    // Lost, then fenced: once the Fenced event is in, so is the loss.
    s.wait_group_event("Fenced, no retry", refused.at_micros, |e| {
        matches!(e, GroupEventKind::Fenced { instance_id, policy: FencedPolicy::Stop, retry_in: None }
            if instance_id == instance)
    })
    .await;
    wait_lost(&s, refused.at_micros).await;
    assert_not_revoked(&s, refused.at_micros, true);
    // What was sent before `run` returned is reported.
    s.catch_up().await;
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| {
            [JOIN, SYNC, HEARTBEAT_KEY, COMMIT, LEAVE].contains(&o.key) && o.kind == "req"
        })
        .is_none(),
        "a group request after the fencing:\n{}",
        timeline(&seen, refused.at_micros)
    );
    s.assert_all_handled();
}

/// Row "JoinGroup | FENCED_INSTANCE_ID | ...; `FencedPolicy`", with `retry:1000` (the wait is
/// never shorter than the session, 1 s, and doubles with every fencing): a twin takes the
/// instance id while the member waits; the member's retry asks the coordinator (DescribeGroups),
/// finds the twin alive and waits again (2 s) without joining; once the twin has left, the next
/// retry rejoins and the member alone consumes everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn join_group_fenced_instance_id_with_policy_retry_rejoins_once_no_live_member_holds_the_id()
{
    let instance = "fenced-retry-0";
    let config = [
        ("group.instance.id", instance),
        ("session.timeout.ms", "1000"),
        ("partition.assignment.strategy", "cooperative-sticky"),
    ];
    let (mut s, _, _, refused) = rejoin_refused(
        JOIN,
        ErrorCode::FencedInstanceId,
        &[
            config[0],
            config[1],
            ("mooring.fenced.policy", "retry:1000"),
        ],
    )
    .await;
    let fenced = |retry: u64| {
        move |e: &GroupEventKind| {
            matches!(e, GroupEventKind::Fenced { instance_id, policy: FencedPolicy::RetryAfter(_), retry_in }
                if instance_id == instance && *retry_in == Some(Duration::from_secs(retry)))
        }
    };
    s.wait_group_event("Fenced, retry in 1 s", refused.at_micros, fenced(1))
        .await;
    wait_lost(&s, refused.at_micros).await;
    let twin = s.start_twin(&[
        config[0],
        config[1],
        config[2],
        ("mooring.leave.group.on.close", "true"),
    ]);
    let from_twin = |key: i16| {
        s.kfake.wait_for("the twin's answer", WAIT, |o| {
            o.client == TWIN_CLIENT_ID && o.is_response(key) && o.error() == Some(0)
        })
    };
    let twin_synced = from_twin(SYNC);
    let asked = s.wait_request_after(
        "the first retry's DescribeGroups",
        DESCRIBE,
        refused.at_micros,
        |_| true,
    );
    assert!(
        twin_synced.at_micros < asked.at_micros
            // The first retry after max(base, session timeout) = 1 s (no growth before it is
            // fenced again): 1 s to 1 s + LATE.
            && waited_for(
                gap(&refused, &asked),
                Duration::from_secs(1),
                Duration::from_secs(1)
            ),
        "the twin holds the id before the first retry, 1 s after the fencing:\n{}",
        timeline(&s.kfake.observed(), refused.at_micros)
    );
    s.wait_group_event(
        "Fenced again, retry in 2 s: the twin lives",
        asked.at_micros,
        fenced(2),
    )
    .await;
    twin.stop().await;
    let twin_left = from_twin(LEAVE);
    let rejoin = s.wait_request_after("the rejoin", JOIN, refused.at_micros, |_| true);
    let seen = s.kfake.observed();
    assert!(
        rejoin.at_micros > twin_left.at_micros
            && !between(&seen, twin_left.at_micros, rejoin.at_micros, |o| {
                o.client == CLIENT_ID && o.is_request(DESCRIBE)
            })
            .is_empty(),
        "the member rejoins after the twin left, having asked again:\n{}",
        timeline(&seen, refused.at_micros)
    );
    s.produce(BATCH);
    s.wait_settled().await;
    assert_not_revoked(&s, refused.at_micros, true);
    s.stop().await;
}

/// Row "SyncGroup | REBALANCE_IN_PROGRESS | JoinGroup again at once, keeping member id and
/// generation": the next JoinGroup comes within `retry.backoff.ms` with the member id, owning the
/// three partitions in the generation of the refused SyncGroup; nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_group_rebalance_in_progress_rejoins_at_once_keeping_member_id_and_generation() {
    let (mut s, before, refused_req, refused) =
        rejoin_refused(SYNC, ErrorCode::RebalanceInProgress, &[]).await;
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    assert_at_once(&s, &refused, &again);
    let generation = i64::from(refused_req.generation().unwrap());
    assert!(generation > i64::from(before.generation));
    assert_eq!(
        (again.member(), subscription(&again)),
        (Some(before.member_id.as_str()), (generation, 3)),
        "the same member, owning its partitions in the generation of the SyncGroup"
    );
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_not_revoked(&s, refused.at_micros, false);
    assert_eq!(after.member_id, before.member_id);
    s.stop().await;
}

/// Row "SyncGroup | ILLEGAL_GENERATION | lost; reset generation; JoinGroup again at once": the next
/// JoinGroup comes within `retry.backoff.ms` with the member id, owning nothing in no generation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sync_group_illegal_generation_loses_partitions_and_rejoins_at_once_keeping_the_member_id()
{
    let (mut s, before, _, refused) = rejoin_refused(SYNC, ErrorCode::IllegalGeneration, &[]).await;
    let again = s.wait_request_after("the JoinGroup after", JOIN, refused.at_micros, |_| true);
    assert_at_once(&s, &refused, &again);
    assert_eq!(
        (again.member(), subscription(&again)),
        (Some(before.member_id.as_str()), (-1, 0)),
        "the same member, owning nothing in no generation"
    );
    wait_lost(&s, refused.at_micros).await;
    s.produce(BATCH);
    let after = s.wait_settled().await;
    assert_not_revoked(&s, refused.at_micros, true);
    assert_eq!(after.member_id, before.member_id);
    s.stop().await;
}

/// Row "LeaveGroup | UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (top level or the member's entry) |
/// done": a dynamic member's close sends one LeaveGroup, answered UNKNOWN_MEMBER_ID at the top
/// level; it is not sent again, and the close ends without an error (`Left`, no error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leave_group_unknown_member_id_on_close_is_done() {
    let code = ErrorCode::UnknownMemberId.code();
    let mut s = Scenario::start(3, &[]).await;
    s.wait_settled().await;
    s.kfake.fault(Fault::new(LEAVE, code).group(&s.group));
    s.shutdown().await.unwrap();
    s.catch_up().await;
    let seen = s.seen();
    let leaves = requests(&seen, LEAVE);
    assert!(
        leaves.len() == 1 && answered_with(&seen, LEAVE, code).is_some(),
        "one LeaveGroup, answered UNKNOWN_MEMBER_ID:\n{}",
        timeline(&seen, leaves.first().map_or(0, |l| l.at_micros))
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
}

/// Row "LeaveGroup | COORDINATOR_LOAD_IN_PROGRESS, ... | one retry after `retry.backoff.ms`
/// (rediscovering for coordinator errors), then give up: the session timeout removes the
/// member": a dynamic member's close sends LeaveGroup twice, the second after the back-off and
/// without a FindCoordinator, then `Left` with the error; kfake still holds the member, and
/// drops it when its session (3 s) expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leave_group_coordinator_load_in_progress_on_close_retries_once_then_gives_up() {
    let code = ErrorCode::CoordinatorLoadInProgress.code();
    let mut s = Scenario::start(3, &[]).await;
    let member = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(LEAVE, code).group(&s.group).count(3));
    s.shutdown().await.unwrap();
    s.catch_up().await;
    let seen = s.seen();
    let leaves = requests(&seen, LEAVE);
    let (_, refused) = answered_with(&seen, LEAVE, code).expect("LeaveGroup refused");
    let all = timeline(&seen, refused.at_micros - 1);
    assert_eq!(leaves.len(), 2, "LeaveGroup sent twice:\n{all}");
    assert!(
        // One retry after retry.backoff.ms (fixed): 250 ms to 250 ms + LATE.
        waited_for(gap(&refused, leaves[1]), BACKOFF, BACKOFF)
            && between(&seen, refused.at_micros, leaves[1].at_micros, |o| o
                .is_request(FIND))
            .is_empty(),
        "the second LeaveGroup after retry.backoff.ms, without rediscovery:\n{all}"
    );
    let (_, left) = s
        .wait_group_event("Left", 0, |e| matches!(e, GroupEventKind::Left { .. }))
        .await;
    assert!(
        matches!(&left, GroupEventKind::Left { sent_leave_group: true, error: Some(e) }
            if e.contains("COORDINATOR_LOAD_IN_PROGRESS")),
        "{left:?}"
    );
    let described = s.described().await;
    assert!(
        described
            .members
            .iter()
            .any(|m| m.member_id == member.member_id),
        "kfake still holds the member: {described:?}"
    );
    let deadline = tokio::time::Instant::now() + WAIT;
    while !s.described().await.members.is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the session timeout did not remove the member"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
