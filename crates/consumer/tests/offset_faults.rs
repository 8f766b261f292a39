//! The group member's error table (OffsetCommit and OffsetFetch rows, in
//! `mooring_group`'s module docs), row by row, on franz-go's kfake: the error is
//! injected into the consumer's commits (auto-commit every 200 ms) or its first OffsetFetch, and
//! the test checks the reaction the row names in what kfake saw and in the member's events; each
//! test ends with the group Stable and every acknowledged offset handled and committed.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod kfake_support;

use std::collections::BTreeMap;
use std::time::Duration;

use kfake_support::*;
use mooring_client::Error as CoordinatorError;
use mooring_consumer::{ConsumerError, GroupEventKind};
use mooring_group::FencedPolicy;
use mooring_testkit::kfake::{Fault, Observed};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{
    FindCoordinatorRequest, HeartbeatRequest, JoinGroupRequest, Message, OffsetCommitRequest,
    OffsetFetchRequest, SyncGroupRequest,
};

const COMMIT: i16 = OffsetCommitRequest::API_KEY;
const OFFSET_FETCH: i16 = OffsetFetchRequest::API_KEY;
const FIND: i16 = FindCoordinatorRequest::API_KEY;
const JOIN: i16 = JoinGroupRequest::API_KEY;
const SYNC: i16 = SyncGroupRequest::API_KEY;
const HEARTBEAT_KEY: i16 = HeartbeatRequest::API_KEY;

/// Row "OffsetCommit | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport
/// error | rediscover, then as the row above" (resend the failed partitions after
/// `retry.backoff.ms`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_not_coordinator_rediscovers_and_resends_after_backoff() {
    commit_is_resent(ErrorCode::NotCoordinator, true).await;
}

/// Row "OffsetCommit | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, UNKNOWN_TOPIC_OR_PARTITION,
/// UNSTABLE_OFFSET_COMMIT | resend the failed partitions after `retry.backoff.ms`, at most
/// `mooring.commit.retries` times" (no rediscovery).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_coordinator_load_in_progress_resends_after_backoff() {
    commit_is_resent(ErrorCode::CoordinatorLoadInProgress, false).await;
}

/// One commit answered `error`: the same offsets are sent again after `retry.backoff.ms`, after a
/// FindCoordinator iff `rediscover`, and the commit succeeds.
async fn commit_is_resent(error: ErrorCode, rediscover: bool) {
    let code = error.code();
    let mut s = Scenario::start(3, &[]).await;
    let member = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(COMMIT, code).member(&member.member_id));
    s.produce(BATCH);
    let (failed, refused) = s.wait_answered(COMMIT, code);
    let resent = s.wait_request_after("the resent commit", COMMIT, refused.at_micros, |_| true);
    let seen = s.seen();
    assert_rediscovery(&seen, &refused, &resent, rediscover, "the resend");
    // Resent after retry.backoff.ms (fixed, no growth), a FindCoordinator in between answered
    // at once: 250 ms to 250 ms + LATE.
    assert!(
        waited_for(gap(&refused, &resent), BACKOFF, BACKOFF),
        "resent after {:?}",
        gap(&refused, &resent)
    );
    assert_eq!(
        resent.rows("offsets"),
        failed.rows("offsets"),
        "the same offsets"
    );
    assert_eq!(resent.generation(), Some(member.generation));
    s.wait_settled().await;
    assert_no_failed_commit(&s);
    s.stop().await;
}

/// Row "OffsetCommit | REBALANCE_IN_PROGRESS | wait (≤ rebalance timeout) until the member is
/// stable in a newer generation; resend with it if every partition is still owned". Nothing is
/// sent while the group has not moved on (a second's window); the rebalance comes with a
/// REBALANCE_IN_PROGRESS heartbeat (as a coordinator answers both during a rebalance), and the
/// commit goes again, in the new generation, after its SyncGroup. Cooperative: the member keeps
/// its partitions, so the resend is the only commit in between.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_rebalance_in_progress_waits_for_the_new_generation_and_resends_with_it() {
    let code = ErrorCode::RebalanceInProgress.code();
    let mut s = Scenario::start(
        3,
        &[("partition.assignment.strategy", "cooperative-sticky")],
    )
    .await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(COMMIT, code).member(&before.member_id));
    s.produce(BATCH);
    let (failed, refused) = s.wait_answered(COMMIT, code);
    // The window in which nothing may be sent: four back-offs.
    tokio::time::sleep(4 * BACKOFF).await;
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(COMMIT)).is_none(),
        "a commit sent again before the group moved on:\n{}",
        timeline(&seen, refused.at_micros)
    );
    s.kfake
        .fault(Fault::new(HEARTBEAT_KEY, code).member(&before.member_id));
    let resent = s.wait_request_after("the resent commit", COMMIT, refused.at_micros, |_| true);
    let seen = s.seen();
    let synced = first_after(&seen, refused.at_micros, |o| {
        o.is_response(SYNC) && o.error() == Some(0)
    })
    .expect("a SyncGroup before the resend");
    assert!(
        synced.at_micros < resent.at_micros
            && resent.generation() > Some(before.generation)
            && resent.rows("offsets") == failed.rows("offsets"),
        "the same offsets sent again in the new generation, after its SyncGroup:\n{}",
        timeline(&seen, refused.at_micros)
    );
    let after = s.wait_settled().await;
    assert_eq!(after.member_id, before.member_id);
    assert_no_failed_commit(&s);
    s.stop().await;
}

/// Row "OffsetCommit | ILLEGAL_GENERATION | fail; if it named the member's current generation:
/// lost, reset generation, rejoin": the commit fails (nothing is sent again in the fenced
/// generation), the partitions are lost, the JoinGroup keeps the member id, and the new
/// generation commits everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_illegal_generation_fails_loses_partitions_and_rejoins() {
    let code = ErrorCode::IllegalGeneration.code();
    let mut s = Scenario::start(3, &[]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(COMMIT, code).member(&before.member_id));
    s.produce(BATCH);
    let (_, refused) = s.wait_answered(COMMIT, code);
    let join = s.wait_request_after("the rejoin", JOIN, refused.at_micros, |_| true);
    assert_eq!(join.member(), Some(before.member_id.as_str()));
    let after = s.wait_settled().await;
    assert_eq!(after.member_id, before.member_id);
    assert!(after.generation > before.generation);
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| {
            o.is_request(COMMIT) && o.generation() == Some(before.generation)
        })
        .is_none(),
        "a commit in the fenced generation:\n{}",
        timeline(&seen, refused.at_micros)
    );
    let events = s.group_events();
    let since = |at: &std::time::SystemTime| micros(*at) > refused.at_micros;
    assert!(
        events.iter().any(|(at, e)| since(at)
            && matches!(e, GroupEventKind::Commit { error: Some(_), generation, .. } if *generation == before.generation)),
        "the commit fails: {events:#?}"
    );
    assert!(
        events.iter().any(|(at, e)| since(at)
            && matches!(e, GroupEventKind::PartitionsLost { partitions, .. } if partitions.len() == 3)),
        "the three partitions are lost: {events:#?}"
    );
    s.stop().await;
}

/// Row "OffsetCommit | UNKNOWN_MEMBER_ID | fail; if it named the member's current generation:
/// lost, reset member id and generation, rejoin": the commit fails, the partitions are lost, the
/// JoinGroup comes with an empty member id, and the new member commits everything. kfake keeps
/// the forgotten member until its session (1 s) expires.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_unknown_member_id_fails_loses_partitions_and_rejoins_as_a_new_member() {
    let code = ErrorCode::UnknownMemberId.code();
    let mut s = Scenario::start(3, &[("session.timeout.ms", "1000")]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(COMMIT, code).member(&before.member_id));
    s.produce(BATCH);
    let (_, refused) = s.wait_answered(COMMIT, code);
    let join = s.wait_request_after("the rejoin", JOIN, refused.at_micros, |_| true);
    assert_eq!(join.member(), Some(""), "a new member id is asked for");
    let after = s.wait_settled().await;
    assert_ne!(after.member_id, before.member_id);
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| {
            o.is_request(COMMIT) && o.member() == Some(before.member_id.as_str())
        })
        .is_none(),
        "a commit sent again by the forgotten member:\n{}",
        timeline(&seen, refused.at_micros)
    );
    wait_commit_failed_and_lost(
        &s,
        refused.at_micros,
        before.generation,
        "UNKNOWN_MEMBER_ID",
    )
    .await;
    s.stop().await;
}

/// Row "OffsetCommit | FENCED_INSTANCE_ID | fail with `Error::FencedInstanceId`; the member is
/// fenced as for JoinGroup": a static member's commit fails with the typed error, the partitions
/// are lost, a `Fenced` event, nothing more is sent to the group, and (default policy `stop`)
/// `run` ends with the error. Every acknowledged record was handled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_fenced_instance_id_fails_and_fences_the_member() {
    let code = ErrorCode::FencedInstanceId.code();
    let instance = "commit-fenced-0";
    let mut s = Scenario::start(3, &[("group.instance.id", instance)]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(COMMIT, code).member(&before.member_id));
    s.produce(BATCH);
    let (_, refused) = s.wait_answered(COMMIT, code);
    let result = s.run_ended().await;
    assert!(
        matches!(
            &result,
            Err(ConsumerError::Client(CoordinatorError::FencedInstanceId { group, instance_id }))
                if *group == s.group && instance_id == instance
        ),
        "run ends with FencedInstanceId: {result:?}"
    );
    wait_commit_failed_and_lost(
        &s,
        refused.at_micros,
        before.generation,
        "FENCED_INSTANCE_ID",
    )
    .await;
    s.wait_group_event("Fenced, no retry", refused.at_micros, |e| {
        matches!(e, GroupEventKind::Fenced { instance_id, policy: FencedPolicy::Stop, retry_in: None }
            if instance_id == instance)
    })
    .await;
    // What was sent before `run` returned is reported.
    s.catch_up().await;
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| {
            [JOIN, SYNC, HEARTBEAT_KEY, COMMIT].contains(&o.key) && o.kind == "req"
        })
        .is_none(),
        "a group request after the fencing:\n{}",
        timeline(&seen, refused.at_micros)
    );
    s.assert_all_handled();
}

/// Row "OffsetCommit | any other (OFFSET_METADATA_TOO_LARGE, ...) | fail; the member is not
/// affected": the commit fails at once (its `Commit` event says so; nothing is resent after
/// `retry.backoff.ms`), and the member keeps its generation and partitions; the next auto-commit
/// commits everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_offset_metadata_too_large_fails_and_leaves_the_member_unaffected() {
    let code = ErrorCode::OffsetMetadataTooLarge.code();
    let mut s = Scenario::start(3, &[]).await;
    let before = s.wait_settled().await;
    s.kfake
        .fault(Fault::new(COMMIT, code).member(&before.member_id));
    s.produce(BATCH);
    let (_, refused) = s.wait_answered(COMMIT, code);
    let (failed_at, _) = s
        .wait_group_event("the failed commit", refused.at_micros, |e| {
            matches!(e, GroupEventKind::Commit { error: Some(e), .. }
                if e.contains("OFFSET_METADATA_TOO_LARGE"))
        })
        .await;
    let seen = s.seen();
    assert!(
        between(&seen, refused.at_micros, failed_at, |o| o
            .is_request(COMMIT))
        .is_empty(),
        "resent before failing:\n{}",
        timeline(&seen, refused.at_micros)
    );
    let after = s.wait_settled().await;
    assert_eq!(
        (after.member_id.as_str(), after.generation),
        (before.member_id.as_str(), before.generation)
    );
    let seen = s.seen();
    assert!(
        first_after(&seen, refused.at_micros, |o| o.is_request(JOIN)).is_none(),
        "JoinGroup after the failed commit:\n{}",
        timeline(&seen, refused.at_micros)
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
    s.stop().await;
}

/// Row "OffsetCommit | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, UNKNOWN_TOPIC_OR_PARTITION,
/// UNSTABLE_OFFSET_COMMIT | resend the failed partitions after `retry.backoff.ms`, at most
/// `mooring.commit.retries` times", with UNKNOWN_TOPIC_OR_PARTITION for partition 1 in three
/// commits in a row and `mooring.commit.retries` 2: partition 1 alone is resent, twice, each after
/// the back-off and without rediscovery, then the commit fails ("gave up"); the next auto-commit
/// commits everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_unknown_topic_or_partition_resends_the_failed_partition_at_most_commit_retries_times(
) {
    let code = ErrorCode::UnknownTopicOrPartition.code();
    let mut s = Scenario::start(3, &[("mooring.commit.retries", "2")]).await;
    let member = s.wait_settled().await;
    s.kfake.fault(
        Fault::new(COMMIT, code)
            .member(&member.member_id)
            .partitions(&s.topic, &[1])
            .count(3),
    );
    s.produce(BATCH);
    let (failed, refused) = s.wait_answered(COMMIT, code);
    assert_eq!(refused.entity_errors(), [(s.topic.clone(), 1, code)]);
    let (gave_up_at, _) = s
        .wait_group_event("the commit given up", refused.at_micros, |e| {
            matches!(e, GroupEventKind::Commit { error: Some(e), .. }
                if e.contains("UNKNOWN_TOPIC_OR_PARTITION") && e.contains("gave up after 3 attempts"))
        })
        .await;
    // kfake reports what it saw through a pipe of its own, so the last resend (read by kfake
    // before the consumer gave up) may reach the test after the consumer's event: wait for both.
    let resends = |seen: &[Observed]| {
        between(seen, refused.at_micros, gave_up_at, |o| {
            o.is_request(COMMIT)
        })
        .len()
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let mut seen = s.seen();
    while resends(&seen) < 2 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
        seen = s.seen();
    }
    let all = timeline(&seen, refused.at_micros);
    let resent = between(&seen, refused.at_micros, gave_up_at, |o| {
        o.is_request(COMMIT)
    });
    let partition_1: Vec<_> = failed
        .rows("offsets")
        .into_iter()
        .filter(|(_, p, _)| *p == 1)
        .collect();
    assert!(
        resent.len() == 2 && resent.iter().all(|r| r.rows("offsets") == partition_1),
        "partition 1 alone resent twice before giving up:\n{all}"
    );
    let mut answered = refused.clone();
    for r in &resent {
        // Each resend after retry.backoff.ms (fixed, no growth between attempts): 250 ms to
        // 250 ms + LATE after the answer before it.
        assert!(
            waited_for(gap(&answered, r), BACKOFF, BACKOFF),
            "resent after {:?}, not retry.backoff.ms:\n{all}",
            gap(&answered, r)
        );
        assert!(
            between(&seen, answered.at_micros, r.at_micros, |o| o
                .is_request(FIND))
            .is_empty(),
            "FindCoordinator before a resend:\n{all}"
        );
        answered = first_after(&seen, r.at_micros, |o| o.is_response(COMMIT))
            .unwrap()
            .clone();
    }
    s.wait_settled().await;
    s.stop().await;
}

/// Waits until the commit that `refused` (µs) answered is reported failed, naming `code`, in
/// `generation`, and the three partitions lost.
async fn wait_commit_failed_and_lost(s: &Scenario, refused: i64, generation: i32, code: &str) {
    s.wait_group_event(&format!("the commit failed with {code}"), refused, |e| {
        matches!(e, GroupEventKind::Commit { error: Some(e), generation: g, .. }
            if *g == generation && e.contains(code))
    })
    .await;
    s.wait_group_event(
        "the three partitions lost",
        refused,
        |e| matches!(e, GroupEventKind::PartitionsLost { partitions, .. } if partitions.len() == 3),
    )
    .await;
}

/// Transport-error row of OffsetCommit ("rediscover, then resend the failed partitions after
/// `retry.backoff.ms`"), the error being a connection closed in the middle of the commit's
/// response (kfake stored the commit; the member cannot know, so it commits again).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_commit_connection_dropped_mid_response_rediscovers_and_resends() {
    let mut s = Scenario::start(3, &[]).await;
    let member = s.wait_settled().await;
    s.kfake.drop_responses(COMMIT, 1);
    s.produce(BATCH);
    let cut = s.wait_seen("the cut commit response", |o| {
        o.kind == "dropped" && o.key == COMMIT
    });
    let seen = s.seen();
    let cut_request = seen
        .iter()
        .find(|o| o.kind == "req" && o.conn == cut.conn && o.corr == cut.corr)
        .unwrap()
        .clone();
    let resent = s.wait_request_after("the resent commit", COMMIT, cut.at_micros, |_| true);
    let seen = s.seen();
    assert_ne!(resent.conn, cut.conn, "a new connection");
    assert_rediscovery(&seen, &cut, &resent, true, "the resend");
    // Resent after retry.backoff.ms (fixed); the new connection's reconnect.backoff.ms (50 ms,
    // ±20 %) and the FindCoordinator fit within it: 250 ms to 250 ms + LATE.
    assert!(
        waited_for(gap(&cut, &resent), BACKOFF, BACKOFF),
        "resent after {:?}",
        gap(&cut, &resent)
    );
    assert_eq!(resent.rows("offsets"), cut_request.rows("offsets"));
    assert_eq!(resent.generation(), Some(member.generation));
    s.wait_settled().await;
    assert_no_failed_commit(&s);
    s.stop().await;
}

/// Offsets committed before the consumer starts, in the OffsetFetch tests.
const COMMITTED: i64 = 5;

/// Row "OffsetFetch | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport
/// error | rediscover, retry, bounded".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_fetch_not_coordinator_rediscovers_and_retries() {
    offset_fetch_is_retried(ErrorCode::NotCoordinator, true).await;
}

/// Row "OffsetFetch | UNSTABLE_OFFSET_COMMIT, COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT |
/// retry after `retry.backoff.ms`, bounded" (no rediscovery).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn offset_fetch_coordinator_load_in_progress_retries_after_backoff() {
    offset_fetch_is_retried(ErrorCode::CoordinatorLoadInProgress, false).await;
}

/// The group has offsets committed (5 in each partition) and the member's first OffsetFetch is
/// answered `error`: it is sent again after `retry.backoff.ms`, after a FindCoordinator iff
/// `rediscover`, and consumption starts at the committed offsets.
///
/// Two look-ups run here: the `assigned` callback's (the one refused, then retried) and the fetch
/// loop's own, which starts while the first sleeps its back-off and is answered at once. So the
/// retry is the OffsetFetch at `retry.backoff.ms` after the refusal (none comes that late when the
/// refused look-up gives up), and a FindCoordinator before it is the refused look-up's.
async fn offset_fetch_is_retried(error: ErrorCode, rediscover: bool) {
    let code = error.code();
    let mut s = Scenario::start_with(3, &[], |kfake, topic, group| {
        for p in 0..3 {
            kfake.commit(group, topic, p, COMMITTED);
        }
        kfake.fault(Fault::new(OFFSET_FETCH, code).group(group));
    })
    .await;
    s.acked.retain(|(_, offset)| *offset >= COMMITTED);
    let (_, refused) = s.wait_answered(OFFSET_FETCH, code);
    let backoff_ends = refused.at_micros + i64::try_from((BACKOFF - SLACK).as_micros()).unwrap();
    let again = s.wait_request_after(
        "the OffsetFetch retried after retry.backoff.ms",
        OFFSET_FETCH,
        backoff_ends,
        |_| true,
    );
    let seen = s.seen();
    // The retry after retry.backoff.ms (fixed): 250 ms to 250 ms + LATE.
    assert!(
        waited_for(gap(&refused, &again), BACKOFF, BACKOFF),
        "OffsetFetch retried after {:?}:\n{}",
        gap(&refused, &again),
        timeline(&seen, refused.at_micros)
    );
    assert_rediscovery(&seen, &refused, &again, rediscover, "the retry");
    s.wait_settled().await;
    let mut first: BTreeMap<i32, i64> = BTreeMap::new();
    for (p, offset) in s.handled() {
        let at = first.entry(p).or_insert(offset);
        *at = (*at).min(offset);
    }
    assert_eq!(
        first,
        (0..3).map(|p| (p, COMMITTED)).collect(),
        "consumption starts at the committed offsets"
    );
    s.stop().await;
}

/// No commit of the member failed (its `Commit` events report the outcome after the retries).
fn assert_no_failed_commit(s: &Scenario) {
    let failed: Vec<_> = s
        .group_events()
        .into_iter()
        .filter(|(_, e)| matches!(e, GroupEventKind::Commit { error: Some(_), .. }))
        .collect();
    assert!(failed.is_empty(), "failed commits: {failed:#?}");
}
