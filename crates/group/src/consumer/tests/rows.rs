//! One test (or one loop iteration) per row of the error table of the
//! [module docs](crate::consumer), heartbeat and leave heartbeat (commits: `commits.rs`).

use std::sync::atomic::Ordering;
use std::time::Duration;

use mooring_wire::error_code::ErrorCode as E;

use super::*;
use crate::classic::tests::fake::PRINCIPAL;
use crate::classic::tests::wait_until;
use crate::consumer::reaction;
use crate::reaction::Reaction;
use crate::{MemberState, RebalanceCause};
use mooring_client::error::{Error, Resource};

/// Waits until the member has sent `n` heartbeats in all.
async fn sent(s: &Setup, n: usize) {
    wait_until(|| heartbeats(s).len() >= n).await;
}

fn started_causes(events: &[GroupEvent]) -> Vec<RebalanceCause> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            GroupEventKind::RebalanceStarted { cause, .. } => Some(*cause),
            _ => None,
        })
        .collect()
}

// ---------- ConsumerGroupHeartbeat ----------

#[tokio::test(start_paused = true)]
async fn heartbeat_none_takes_the_epoch_and_keeps_the_assignment_when_none_is_given() {
    let s = start(config(None));
    stable(&s).await;
    s.fake.push(ok(4, None));
    let snap = wait_owning(&s, ConsumerMemberState::Stable, 4, &tps("t", &[0, 1])).await;
    assert_eq!(
        snap.generation, 4,
        "the snapshot's generation is the member epoch"
    );
    assert_eq!(s.listener.calls().len(), 1, "nothing to reconcile");
}

#[tokio::test(start_paused = true)]
async fn heartbeat_fenced_member_epoch_unknown_member_id_and_group_id_not_found_lose_everything_and_rejoin_at_epoch_zero(
) {
    // GROUP_ID_NOT_FOUND: the group was deleted while the member was out of it (its session
    // expired, the group emptied, and the coordinator removed the empty group); the broker
    // recreates it for a heartbeat at epoch 0.
    for code in [E::FencedMemberEpoch, E::UnknownMemberId, E::GroupIdNotFound] {
        let mut s = start(config(None));
        stable(&s).await;
        drain(&mut s.events);
        let before = heartbeats(&s).len();
        s.fake.push(refused(code));
        sent(&s, before + 2).await;
        wait_owning(&s, ConsumerMemberState::Stable, 2, &[]).await;
        let hb = heartbeats(&s);
        let rejoin = &hb[before + 1];
        assert_eq!(rejoin.member_epoch, 0, "{code}");
        assert_eq!(
            rejoin.member_id, hb[0].member_id,
            "{code}: the same member id"
        );
        assert_eq!(
            rejoin.subscribed_topic_names,
            Some(vec!["t".to_string()]),
            "{code}: full"
        );
        let t = s.fake.times(HEARTBEAT);
        assert_eq!(t[before + 1], t[before], "{code}: rejoined at once");
        assert_eq!(s.listener.calls()[1], ("lost", tps("t", &[0, 1])), "{code}");
        let ev = drain(&mut s.events);
        assert_eq!(started_causes(&ev), [RebalanceCause::EpochFenced], "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn heartbeat_unreleased_instance_id_retries_with_a_growing_backoff_then_joins() {
    let mut s = start(config(Some("pod-0")));
    for _ in 0..4 {
        s.fake.push(refused(E::UnreleasedInstanceId));
    }
    s.fake.push(ok(3, Some(&[("t", &[0, 1])])));
    s.member.subscribe(["t"]).await.unwrap();
    wait_owning(&s, ConsumerMemberState::Stable, 3, &tps("t", &[0, 1])).await;
    let t = s.fake.times(HEARTBEAT);
    let gaps: Vec<u128> = t
        .windows(2)
        .take(4)
        .map(|w| (w[1] - w[0]).as_millis())
        .collect();
    assert_eq!(gaps, [100, 200, 400, 800], "retry.backoff.ms doubling");
    let hb = heartbeats(&s);
    assert!(hb[..5]
        .iter()
        .all(|h| h.member_epoch == 0 && h.instance_id.as_deref() == Some("pod-0")));
    let ev = drain(&mut s.events);
    let attempts: Vec<(u32, Option<Duration>)> = ev
        .iter()
        .filter_map(|e| match &e.kind {
            GroupEventKind::InstanceIdUnreleased {
                instance_id,
                attempt,
                retry_in,
            } if instance_id == "pod-0" => Some((*attempt, *retry_in)),
            _ => None,
        })
        .collect();
    assert_eq!(
        attempts,
        (1..=4)
            .map(|a| (a, Some(Duration::from_millis(100 << (a - 1)))))
            .collect::<Vec<_>>()
    );
    assert!(s.member.state().failure.is_none());
}

#[tokio::test(start_paused = true)]
async fn heartbeat_unreleased_instance_id_fails_once_its_timeout_has_passed() {
    let mut c = config(Some("pod-0"));
    c.unreleased_instance_timeout = Duration::from_secs(5);
    let mut s = start(c);
    for _ in 0..100 {
        s.fake.push(refused(E::UnreleasedInstanceId));
    }
    let began = tokio::time::Instant::now();
    s.member.subscribe(["t"]).await.unwrap();
    let snap = wait_state(&s.member, |x| {
        x.state == MemberState::Failed(E::UnreleasedInstanceId)
    })
    .await;
    let elapsed = began.elapsed();
    assert!(
        elapsed >= Duration::from_secs(5) && elapsed < Duration::from_secs(6),
        "{elapsed:?}"
    );
    assert!(
        matches!(snap.failure.as_deref(), Some(Error::InstanceIdUnreleased { instance_id, .. }) if instance_id == "pod-0"),
        "{:?}",
        snap.failure
    );
    let tries = heartbeats(&s).len();
    assert!(tries < 15, "a bounded back-off, not a storm: {tries}");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(heartbeats(&s).len(), tries, "no retry after failing");
    let ev = drain(&mut s.events);
    let last = ev.iter().rev().find_map(|e| match &e.kind {
        GroupEventKind::InstanceIdUnreleased { retry_in, .. } => Some(*retry_in),
        _ => None,
    });
    assert_eq!(last, Some(None), "the last attempt says it gives up");
}

#[tokio::test(start_paused = true)]
async fn heartbeat_coordinator_errors_rediscover_and_retry_keeping_the_membership() {
    let failures: Vec<Option<E>> = vec![
        Some(E::CoordinatorNotAvailable),
        Some(E::NotCoordinator),
        Some(E::NetworkException),
        None,
    ];
    for code in failures {
        let s = start(config(None));
        stable(&s).await;
        let before = heartbeats(&s).len();
        match code {
            Some(code) => s.fake.push(refused(code)),
            None => s
                .fake
                .push_error(HEARTBEAT, Error::Disconnected { broker: "b".into() }),
        }
        sent(&s, before + 2).await;
        let hb = heartbeats(&s);
        let retry = &hb[before + 1];
        assert_eq!(retry.member_epoch, 1, "{code:?}: membership kept");
        assert_eq!(
            retry.rebalance_timeout_ms, 30_000,
            "{code:?}: a full heartbeat"
        );
        assert_eq!(
            said_owned(retry),
            Some(tps("t", &[0, 1]).into_iter().collect())
        );
        let t = s.fake.times(HEARTBEAT);
        assert_eq!(
            t[before + 1] - t[before],
            Duration::from_millis(100),
            "{code:?}"
        );
        assert_eq!(
            s.fake.forgets.load(Ordering::SeqCst),
            1,
            "{code:?}: rediscovered"
        );
        assert_eq!(s.listener.calls().len(), 1, "{code:?}: nothing lost");
    }
}

#[tokio::test(start_paused = true)]
async fn heartbeat_load_in_progress_and_request_timed_out_retry_after_backoff() {
    for code in [E::CoordinatorLoadInProgress, E::RequestTimedOut] {
        let s = start(config(None));
        stable(&s).await;
        let before = heartbeats(&s).len();
        s.fake.push(refused(code));
        sent(&s, before + 2).await;
        let hb = heartbeats(&s);
        assert_eq!(hb[before + 1].member_epoch, 1, "{code}");
        assert!(
            hb[before + 1].subscribed_topic_names.is_some(),
            "{code}: full"
        );
        let t = s.fake.times(HEARTBEAT);
        assert_eq!(
            t[before + 1] - t[before],
            Duration::from_millis(100),
            "{code}"
        );
        assert_eq!(s.fake.forgets.load(Ordering::SeqCst), 0, "{code}");
        assert_eq!(s.member.state().state, MemberState::Stable, "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn heartbeat_on_a_broker_without_the_consumer_protocol_fails_saying_use_classic() {
    // A 3.x broker without the protocol: no ConsumerGroupHeartbeat in ApiVersions, or (a preview
    // advertised but off) UNSUPPORTED_VERSION in the answer.
    for offered in [false, true] {
        let mut s = start(config(None));
        if offered {
            s.fake.push(refused(E::UnsupportedVersion));
        } else {
            s.fake.set_unsupported(HEARTBEAT);
        }
        s.member.subscribe(["t"]).await.unwrap();
        let snap = wait_state(&s.member, |x| {
            x.state == MemberState::Failed(E::UnsupportedVersion)
        })
        .await;
        let failure = snap.failure.unwrap();
        assert!(
            matches!(*failure, Error::ConsumerProtocolUnsupported { .. }),
            "{failure:?}"
        );
        assert!(
            failure
                .to_string()
                .contains("the broker does not support group.protocol=consumer; use classic"),
            "{failure}"
        );
        tokio::time::sleep(Duration::from_secs(60)).await;
        let failed = names(&mut s.events)
            .into_iter()
            .filter(|n| *n == "failed")
            .count();
        assert_eq!(failed, 1, "said once, never retried");
        assert_eq!(heartbeats(&s).len(), usize::from(offered));
    }
}

#[tokio::test(start_paused = true)]
async fn heartbeat_group_authorization_failed_is_typed_and_said_once() {
    let s = start(config(None));
    stable(&s).await;
    s.fake.push(refused(E::GroupAuthorizationFailed));
    let snap = wait_state(&s.member, |x| {
        x.state == MemberState::Failed(E::GroupAuthorizationFailed)
    })
    .await;
    assert!(
        matches!(
            snap.failure.as_deref(),
            Some(Error::Authorization { resource: Resource::Group(g), principal, .. })
                if g == "g" && principal == PRINCIPAL
        ),
        "{:?}",
        snap.failure
    );
    let count = heartbeats(&s).len();
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(heartbeats(&s).len(), count, "heartbeats stop");
    assert_eq!(s.listener.calls()[1], ("lost", tps("t", &[0, 1])));
}

#[tokio::test(start_paused = true)]
async fn heartbeat_fatal_codes_stop_the_member_until_subscribe() {
    for code in [
        E::UnsupportedAssignor,
        E::InvalidRegularExpression,
        E::GroupMaxSizeReached,
        E::InvalidRequest,
        E::FencedInstanceId,
    ] {
        let s = start(config(None));
        stable(&s).await;
        s.fake.push(refused(code));
        let snap = wait_state(&s.member, |x| x.state == MemberState::Failed(code)).await;
        assert_eq!(
            snap.consumer_state,
            Some(ConsumerMemberState::Fatal),
            "{code}"
        );
        assert!(snap.assignment.is_empty(), "{code}");
        assert_eq!(s.listener.calls()[1], ("lost", tps("t", &[0, 1])), "{code}");
        let count = heartbeats(&s).len();
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert_eq!(heartbeats(&s).len(), count, "{code}: stopped");
        // A new subscribe tries again, at epoch 0 with the same member id.
        s.fake.push(ok(7, Some(&[("t", &[2])])));
        s.member.subscribe(["t"]).await.unwrap();
        wait_owning(&s, ConsumerMemberState::Stable, 7, &tps("t", &[2])).await;
        let hb = heartbeats(&s);
        assert_eq!(hb[count].member_epoch, 0, "{code}");
        assert_eq!(hb[count].member_id, hb[0].member_id, "{code}");
        assert!(s.member.state().failure.is_none(), "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn heartbeat_a_regex_at_v0_is_a_fatal_encoding_error_never_retried() {
    let s = start(config(None));
    s.fake.set_version(HEARTBEAT, 0);
    s.member.subscribe_regex("orders-.*").await.unwrap();
    let snap = wait_state(&s.member, |x| matches!(x.state, MemberState::Failed(_))).await;
    assert!(
        matches!(snap.failure.as_deref(), Some(Error::Encode { .. })),
        "{:?}",
        snap.failure
    );
    let text = snap.failure.unwrap().to_string();
    assert!(text.contains("subscribed_topic_regex"), "{text}");
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert!(heartbeats(&s).is_empty(), "nothing sent, nothing retried");
}

// ---------- the leave heartbeat ----------

#[tokio::test(start_paused = true)]
async fn leave_unknown_member_id_fenced_member_epoch_and_group_id_not_found_are_done() {
    for code in [E::UnknownMemberId, E::FencedMemberEpoch, E::GroupIdNotFound] {
        let s = start(config(None));
        stable(&s).await;
        s.fake.push(refused(code));
        s.member.close().await.unwrap();
        assert_eq!(heartbeats(&s).last().unwrap().member_epoch, -1, "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn leave_coordinator_errors_retry_once_then_give_up() {
    let s = start(config(None));
    stable(&s).await;
    let before = heartbeats(&s).len();
    s.fake.push(refused(E::NotCoordinator));
    s.member.close().await.unwrap();
    assert_eq!(heartbeats(&s).len(), before + 2, "one retry");
    assert_eq!(s.fake.forgets.load(Ordering::SeqCst), 1);
    let s = start(config(None));
    stable(&s).await;
    s.fake.push(refused(E::CoordinatorLoadInProgress));
    s.fake.push(refused(E::CoordinatorLoadInProgress));
    let err = s.member.close().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Broker {
                code: E::CoordinatorLoadInProgress,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(s.member.state().state, MemberState::Closed);
}

#[tokio::test(start_paused = true)]
async fn leave_other_errors_are_returned_and_the_member_ends_anyway() {
    let s = start(config(None));
    stable(&s).await;
    s.fake.push(refused(E::InvalidRequest));
    let err = s.member.close().await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Broker {
                code: E::InvalidRequest,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(s.member.state().state, MemberState::Closed);
}

#[test]
fn the_reaction_functions_are_the_table() {
    use Reaction as R;
    let heartbeat = [
        (E::None, R::Proceed),
        (E::FencedMemberEpoch, R::RejoinAtEpochZero),
        (E::UnknownMemberId, R::RejoinAtEpochZero),
        (E::GroupIdNotFound, R::RejoinAtEpochZero),
        (E::UnreleasedInstanceId, R::AwaitInstanceRelease),
        (E::CoordinatorNotAvailable, R::Rediscover),
        (E::NotCoordinator, R::Rediscover),
        (E::CoordinatorLoadInProgress, R::RetryAfterBackoff),
        (E::RequestTimedOut, R::RetryAfterBackoff),
        (E::GroupAuthorizationFailed, R::Fatal),
        (E::UnsupportedAssignor, R::Fatal),
        (E::InvalidRegularExpression, R::Fatal),
        (E::GroupMaxSizeReached, R::Fatal),
        (E::InvalidRequest, R::Fatal),
        (E::UnsupportedVersion, R::Fatal),
    ];
    for (code, expected) in heartbeat {
        assert_eq!(reaction::heartbeat(code), expected, "heartbeat {code}");
    }
    assert_eq!(reaction::leave(E::UnknownMemberId), R::AlreadyGone);
    assert_eq!(reaction::leave(E::GroupIdNotFound), R::AlreadyGone);
    assert_eq!(
        reaction::offset_commit(E::StaleMemberEpoch),
        R::RetryAfterRebalance
    );
    assert_eq!(
        reaction::offset_commit(E::UnknownMemberId),
        R::FailMemberGone
    );
    assert_eq!(
        reaction::offset_commit(E::FencedMemberEpoch),
        R::FailMemberGone
    );
    assert_eq!(reaction::offset_commit(E::NotCoordinator), R::Rediscover);
    assert_eq!(
        reaction::offset_fetch(E::StaleMemberEpoch),
        R::RetryAfterRebalance
    );
    assert_eq!(
        reaction::offset_fetch(E::UnknownMemberId),
        R::FailMemberGone
    );
}

#[tokio::test(start_paused = true)]
async fn heartbeat_security_refusals_on_the_way_stop_the_member_with_the_typed_error() {
    let refusals = [
        Error::Authorization {
            api: "FindCoordinator",
            resource: Resource::Group("g".into()),
            principal: PRINCIPAL.into(),
            code: E::GroupAuthorizationFailed,
        },
        Error::Authentication {
            broker: "node 1".into(),
            mechanism: "PLAIN".into(),
            principal: PRINCIPAL.into(),
            code: E::SaslAuthenticationFailed,
            message: "Invalid username or password".into(),
        },
    ];
    for refusal in refusals {
        let code = refusal.code().unwrap();
        let s = start(config(None));
        stable(&s).await;
        s.fake.push_error(HEARTBEAT, refusal);
        let snap = wait_state(&s.member, |x| x.state == MemberState::Failed(code)).await;
        assert!(
            snap.failure.as_deref().is_some_and(Error::is_fatal),
            "{code}"
        );
        assert_eq!(s.listener.calls()[1], ("lost", tps("t", &[0, 1])), "{code}");
        let count = heartbeats(&s).len();
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert_eq!(heartbeats(&s).len(), count, "{code}: never retried");
        assert_eq!(s.fake.forgets.load(Ordering::SeqCst), 0, "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn heartbeat_a_join_refused_as_unknown_member_retries_after_backoff_not_in_a_loop() {
    let s = start(config(None));
    s.fake.push(refused(E::UnknownMemberId));
    s.fake.push(ok(1, Some(&[("t", &[0])])));
    s.member.subscribe(["t"]).await.unwrap();
    wait_owning(&s, ConsumerMemberState::Stable, 1, &tps("t", &[0])).await;
    let t = s.fake.times(HEARTBEAT);
    assert_eq!(t[1] - t[0], Duration::from_millis(100));
    assert_eq!(heartbeats(&s)[1].member_epoch, 0);
}
