//! Unit tests of the share member with the scripted transport
//! ([`fake`](crate::classic::tests::fake)): one test (or loop iteration) per row of the error
//! table of the [module docs](crate::share), and joining, taking assignments and leaving. Time is
//! paused (`start_paused`): waits are on conditions, tokio advances the clock when every task
//! idles.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use mooring_client::error::{Error, Resource};
use mooring_wire::error_code::ErrorCode as E;
use mooring_wire::messages::share_group_heartbeat::{Assignment, TopicPartitions};
use mooring_wire::messages::{ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};

use crate::classic::tests::fake::{topic_id, Fake, PRINCIPAL};
use crate::classic::tests::{drain, wait_state, wait_until, Recorder};
use crate::reaction::Reaction;
use crate::share::reaction;
use crate::{
    EventReceiver, GroupConfig, GroupEventKind, GroupHandle, GroupMember, GroupProtocol,
    MemberState, OffsetAndMetadata, RebalanceCause, ShareMemberState, TopicPartition,
};

/// ShareGroupHeartbeat's API key.
const HEARTBEAT: i16 = 76;

fn config() -> GroupConfig {
    let mut c = GroupConfig::new("g");
    c.protocol = GroupProtocol::Share;
    c.heartbeat_interval = Duration::from_secs(1);
    c.rebalance_timeout = Duration::from_secs(30);
    c.retry_backoff = Duration::from_millis(100);
    c.client_rack = Some("rack-a".into());
    c
}

fn tps(t: &str, ps: &[i32]) -> Vec<TopicPartition> {
    ps.iter().map(|p| TopicPartition::new(t, *p)).collect()
}

struct Setup {
    fake: Arc<Fake>,
    member: GroupHandle<Fake>,
    listener: Arc<Recorder>,
    events: EventReceiver,
}

fn start() -> Setup {
    let fake = Fake::new();
    fake.set_partitions("t", 4);
    fake.set_partitions("u", 2);
    let listener = Arc::new(Recorder::default());
    let member = GroupMember::spawn(fake.clone(), config(), listener.clone()).unwrap();
    let events = member.take_events().unwrap();
    Setup {
        fake,
        member,
        listener,
        events,
    }
}

/// A successful answer with `epoch` and, if given, the whole assignment.
fn ok(epoch: i32, assignment: Option<&[(&str, &[i32])]>) -> ShareGroupHeartbeatResponse {
    ShareGroupHeartbeatResponse {
        member_epoch: epoch,
        heartbeat_interval_ms: 1000,
        assignment: assignment.map(|topics| Assignment {
            topic_partitions: topics
                .iter()
                .map(|(t, ps)| TopicPartitions {
                    topic_id: topic_id(t),
                    partitions: ps.to_vec(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn refused(code: E) -> ShareGroupHeartbeatResponse {
    ShareGroupHeartbeatResponse {
        error_code: code.code(),
        error_message: Some(format!("{code}")),
        member_epoch: -1,
        ..Default::default()
    }
}

fn heartbeats(s: &Setup) -> Vec<ShareGroupHeartbeatRequest> {
    s.fake.requests::<ShareGroupHeartbeatRequest>()
}

async fn sent(s: &Setup, n: usize) {
    wait_until(|| heartbeats(s).len() >= n).await;
}

async fn wait_owning(s: &Setup, state: ShareMemberState, epoch: i32, owned: &[TopicPartition]) {
    let owned: BTreeSet<TopicPartition> = owned.iter().cloned().collect();
    wait_state(&s.member, |x| {
        x.share_state == Some(state) && x.generation == epoch && x.assignment == owned
    })
    .await;
}

/// Subscribes to `t` and reaches Stable at epoch 1 owning `t-0, t-1`.
async fn stable(s: &Setup) {
    s.fake.push(ok(1, Some(&[("t", &[0, 1])])));
    s.member.subscribe(["t"]).await.unwrap();
    wait_owning(s, ShareMemberState::Stable, 1, &tps("t", &[0, 1])).await;
}

fn names(events: &mut EventReceiver) -> Vec<&'static str> {
    drain(events)
        .iter()
        .filter_map(|e| {
            Some(match &e.kind {
                GroupEventKind::RebalanceStarted { .. } => "started",
                GroupEventKind::Joined { .. } => "joined",
                GroupEventKind::PartitionsRevoked { .. } => "revoked",
                GroupEventKind::PartitionsAssigned { .. } => "assigned",
                GroupEventKind::PartitionsLost { .. } => "lost",
                GroupEventKind::Reconciled { .. } => "reconciled",
                GroupEventKind::RebalanceCompleted { .. } => "completed",
                GroupEventKind::RebalanceFailed { .. } => "failed",
                GroupEventKind::Left { .. } => "left",
                _ => return None,
            })
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_join_says_everything_takes_the_assignment_and_then_heartbeats_only_its_identity() {
    let mut s = start();
    stable(&s).await;
    assert_eq!(
        s.listener.calls(),
        vec![("assigned", tps("t", &[0, 1]))],
        "the first assignment is only added"
    );
    assert_eq!(
        names(&mut s.events),
        ["started", "joined", "assigned", "reconciled", "completed"]
    );
    sent(&s, 2).await;
    let hb = heartbeats(&s);
    let join = &hb[0];
    assert_eq!(join.member_epoch, 0);
    assert_eq!(
        join.member_id.len(),
        22,
        "a Java-form UUID the member made up"
    );
    assert_eq!(join.rack_id.as_deref(), Some("rack-a"));
    assert_eq!(join.subscribed_topic_names, Some(vec!["t".to_string()]));
    let steady = &hb[1];
    assert_eq!(
        (steady.member_epoch, &steady.member_id),
        (1, &join.member_id)
    );
    assert_eq!(
        (&steady.rack_id, &steady.subscribed_topic_names),
        (&None, &None)
    );
    let times = s.fake.times(HEARTBEAT);
    assert_eq!(
        times[1] - times[0],
        Duration::from_secs(1),
        "the broker's interval"
    );
    let snap = s.member.state();
    assert_eq!(
        (snap.state, snap.group_protocol),
        (MemberState::Stable, GroupProtocol::Share)
    );
}

#[tokio::test(start_paused = true)]
async fn a_new_assignment_revokes_what_moved_away_and_assigns_what_is_new() {
    let mut s = start();
    stable(&s).await;
    drain(&mut s.events);
    s.fake.push(ok(2, Some(&[("t", &[1, 2]), ("u", &[0])])));
    let mut want = tps("t", &[1, 2]);
    want.extend(tps("u", &[0]));
    wait_owning(&s, ShareMemberState::Stable, 2, &want).await;
    let calls = s.listener.calls();
    assert_eq!(calls[1], ("revoked", tps("t", &[0])));
    assert_eq!(
        calls[2],
        (
            "assigned",
            vec![TopicPartition::new("t", 2), TopicPartition::new("u", 0)]
        )
    );
    assert_eq!(
        names(&mut s.events),
        ["started", "revoked", "assigned", "reconciled", "completed"]
    );
    // No assignment in an answer: nothing changes.
    s.fake.push(ok(3, None));
    wait_owning(&s, ShareMemberState::Stable, 3, &want).await;
    assert_eq!(s.listener.calls().len(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_subscription_change_goes_at_once_in_the_next_heartbeat() {
    let s = start();
    stable(&s).await;
    let before = heartbeats(&s).len();
    s.member.subscribe(["t", "u"]).await.unwrap();
    sent(&s, before + 1).await;
    let said = heartbeats(&s)[before].subscribed_topic_names.clone();
    assert_eq!(said, Some(vec!["t".to_string(), "u".to_string()]));
}

// ---------- the error table: ShareGroupHeartbeat ----------

#[tokio::test(start_paused = true)]
async fn fenced_unknown_member_and_group_id_not_found_lose_everything_and_rejoin_at_epoch_zero() {
    for code in [E::FencedMemberEpoch, E::UnknownMemberId, E::GroupIdNotFound] {
        assert_eq!(reaction::heartbeat(code), Reaction::RejoinAtEpochZero);
        let mut s = start();
        stable(&s).await;
        drain(&mut s.events);
        let before = heartbeats(&s).len();
        s.fake.push(refused(code));
        s.fake.push(ok(5, Some(&[("t", &[3])])));
        sent(&s, before + 2).await;
        wait_owning(&s, ShareMemberState::Stable, 5, &tps("t", &[3])).await;
        let calls = s.listener.calls();
        assert_eq!(calls[1], ("lost", tps("t", &[0, 1])), "{code}");
        let hb = heartbeats(&s);
        let rejoin = &hb[before + 1];
        assert_eq!(rejoin.member_epoch, 0, "{code}: rejoins at epoch 0");
        assert_eq!(
            rejoin.member_id, hb[0].member_id,
            "{code}: with the same id"
        );
        assert!(rejoin.subscribed_topic_names.is_some(), "{code}: full");
        let events = drain(&mut s.events);
        assert!(events.iter().any(|e| matches!(
            e.kind,
            GroupEventKind::RebalanceStarted {
                cause: RebalanceCause::EpochFenced,
                ..
            }
        )));
    }
}

#[tokio::test(start_paused = true)]
async fn coordinator_errors_rediscover_and_load_errors_retry_a_full_heartbeat_after_the_backoff() {
    for (code, forgets) in [
        (E::NotCoordinator, 1),
        (E::CoordinatorNotAvailable, 1),
        (E::NetworkException, 1),
        (E::CoordinatorLoadInProgress, 0),
        (E::RequestTimedOut, 0),
    ] {
        let s = start();
        stable(&s).await;
        let before = heartbeats(&s).len();
        s.fake.push(refused(code));
        sent(&s, before + 2).await;
        let times = s.fake.times(HEARTBEAT);
        assert_eq!(
            times[before + 1] - times[before],
            Duration::from_millis(100),
            "{code}: retry.backoff.ms"
        );
        let retry = &heartbeats(&s)[before + 1];
        assert_eq!(retry.member_epoch, 1, "{code}: the membership is kept");
        assert!(retry.subscribed_topic_names.is_some(), "{code}: full");
        assert_eq!(s.fake.forgets.load(Ordering::SeqCst), forgets, "{code}");
        assert_eq!(s.listener.calls().len(), 1, "{code}: nothing lost");
    }
}

#[tokio::test(start_paused = true)]
async fn a_broker_without_share_groups_stops_the_member_at_once_with_a_typed_error() {
    // UNSUPPORTED_VERSION from a broker with share groups off; the API absent from ApiVersions.
    for absent in [false, true] {
        let s = start();
        if absent {
            s.fake.set_unsupported(HEARTBEAT);
        } else {
            s.fake.push(refused(E::UnsupportedVersion));
        }
        s.member.subscribe(["t"]).await.unwrap();
        let snap = wait_state(&s.member, |x| {
            x.share_state == Some(ShareMemberState::Fatal)
        })
        .await;
        assert_eq!(snap.state, MemberState::Failed(E::UnsupportedVersion));
        let failure = snap.failure.expect("the error");
        assert!(
            matches!(*failure, Error::ShareGroupsUnsupported { ref group, .. } if group == "g"),
            "{failure}"
        );
        tokio::time::sleep(Duration::from_secs(30)).await;
        assert!(heartbeats(&s).len() <= 1, "never retried");
    }
}

#[tokio::test(start_paused = true)]
async fn authorization_and_other_codes_are_fatal_lose_everything_and_a_new_subscribe_tries_again() {
    for code in [
        E::GroupAuthorizationFailed,
        E::TopicAuthorizationFailed,
        E::GroupMaxSizeReached,
        E::InvalidRequest,
    ] {
        assert_eq!(reaction::heartbeat(code), Reaction::Fatal);
        let s = start();
        stable(&s).await;
        s.fake.push(refused(code));
        let snap = wait_state(&s.member, |x| {
            x.share_state == Some(ShareMemberState::Fatal)
        })
        .await;
        assert_eq!(snap.state, MemberState::Failed(code));
        assert!(snap.assignment.is_empty());
        wait_until(|| s.listener.calls().len() == 2).await;
        assert_eq!(s.listener.calls()[1], ("lost", tps("t", &[0, 1])));
        let failure = snap.failure.unwrap();
        if code == E::GroupAuthorizationFailed {
            assert!(
                matches!(&*failure, Error::Authorization { resource: Resource::Group(g), principal, .. }
                    if g == "g" && principal == PRINCIPAL),
                "{failure}"
            );
        }
        s.member.subscribe(["t"]).await.unwrap();
        wait_state(&s.member, |x| {
            x.share_state == Some(ShareMemberState::Stable)
        })
        .await;
    }
}

// ---------- leaving ----------

#[tokio::test(start_paused = true)]
async fn close_revokes_everything_and_leaves_with_epoch_minus_one() {
    let mut s = start();
    stable(&s).await;
    drain(&mut s.events);
    s.member.close().await.unwrap();
    let hb = heartbeats(&s);
    assert_eq!(hb.last().unwrap().member_epoch, -1);
    assert_eq!(s.listener.calls()[1], ("revoked", tps("t", &[0, 1])));
    assert_eq!(names(&mut s.events), ["revoked", "left"]);
    assert_eq!(s.member.state().state, MemberState::Closed);
}

#[tokio::test(start_paused = true)]
async fn a_leave_answered_not_in_the_group_is_done_and_coordinator_errors_are_retried_once() {
    for code in [E::UnknownMemberId, E::FencedMemberEpoch, E::GroupIdNotFound] {
        assert_eq!(reaction::leave(code), Reaction::AlreadyGone);
        let s = start();
        stable(&s).await;
        s.fake.push(refused(code));
        s.member.close().await.unwrap();
    }
    let s = start();
    stable(&s).await;
    s.fake.push(refused(E::NotCoordinator));
    let before = heartbeats(&s).len();
    s.member.close().await.unwrap();
    let leaves = heartbeats(&s)[before..]
        .iter()
        .filter(|h| h.member_epoch == -1)
        .count();
    assert_eq!(leaves, 2, "one retry after rediscovering");
    let s = start();
    stable(&s).await;
    s.fake.push(refused(E::InvalidRequest));
    let err = s.member.close().await.unwrap_err();
    assert!(err.to_string().contains("ShareGroupHeartbeat"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn an_empty_subscription_leaves_and_stays_out_until_subscribed_again() {
    let s = start();
    stable(&s).await;
    s.member.subscribe(Vec::<String>::new()).await.unwrap();
    wait_state(&s.member, |x| {
        x.share_state == Some(ShareMemberState::Unsubscribed) && x.assignment.is_empty()
    })
    .await;
    let hb = heartbeats(&s);
    assert_eq!(hb.last().unwrap().member_epoch, -1);
    let before = hb.len();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(heartbeats(&s).len(), before, "nothing sent while out");
    s.fake.push(ok(9, Some(&[("u", &[1])])));
    s.member.subscribe(["u"]).await.unwrap();
    wait_owning(&s, ShareMemberState::Stable, 9, &tps("u", &[1])).await;
}

// ---------- what a share member does not do ----------

#[tokio::test(start_paused = true)]
async fn commits_and_committed_offsets_are_refused_naming_the_group() {
    let s = start();
    stable(&s).await;
    let offsets = [(TopicPartition::new("t", 0), OffsetAndMetadata::new(1))].into();
    let err = s.member.commit(offsets).await.unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, .. } if key == "group.id"),
        "{err}"
    );
    let err = s
        .member
        .committed([TopicPartition::new("t", 0)])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("share group"), "{err}");
    assert!(s.member.subscribe_regex("t.*").await.is_err());
    // A stuck handler is not the membership's business: nothing changes.
    s.member.poll_interval_exceeded().await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(s.member.state().share_state, Some(ShareMemberState::Stable));
    assert_eq!(
        s.fake.count(8) + s.fake.count(9),
        0,
        "no OffsetCommit or OffsetFetch"
    );
}

/// A member joining an idle group is first given nothing, then its share-partitions: that second
/// assignment comes of its own join (the cause a `consumer`-protocol member would read from an
/// assignment that only adds, `MemberLeft`, would be wrong: nobody left).
#[tokio::test(start_paused = true)]
async fn the_first_partitions_after_an_empty_assignment_are_the_joins() {
    let mut s = start();
    s.fake.push(ok(1, Some(&[])));
    s.fake.push(ok(2, Some(&[("t", &[0, 1])])));
    s.member.subscribe(["t"]).await.unwrap();
    wait_owning(&s, ShareMemberState::Stable, 2, &tps("t", &[0, 1])).await;
    let causes: Vec<RebalanceCause> = drain(&mut s.events)
        .iter()
        .filter_map(|e| match &e.kind {
            GroupEventKind::RebalanceStarted { cause, .. } => Some(*cause),
            _ => None,
        })
        .collect();
    assert_eq!(
        causes,
        [RebalanceCause::MemberJoined],
        "one join, one rebalance"
    );
}
