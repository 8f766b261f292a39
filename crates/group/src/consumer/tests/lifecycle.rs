//! Joining, reconciling (revoke → assign → acknowledge), what each heartbeat says, subscription
//! changes, going stale, and leaving.

use std::collections::BTreeSet;
use std::time::Duration;

use super::*;
use crate::classic::tests::wait_until;
use crate::{MemberState, RebalanceCause};

#[tokio::test(start_paused = true)]
async fn a_join_is_reconciled_and_acknowledged_at_once_then_heartbeats_say_nothing_new() {
    let mut s = start(config(None));
    stable(&s).await;
    wait_until(|| heartbeats(&s).len() >= 3).await;
    let hb = heartbeats(&s);
    let join = &hb[0];
    assert_eq!(join.member_epoch, 0);
    assert_eq!(join.group_id, "g");
    assert_eq!(
        join.member_id.len(),
        22,
        "a client-made id: {}",
        join.member_id
    );
    assert_eq!(join.subscribed_topic_names, Some(vec!["t".to_string()]));
    assert_eq!(join.rebalance_timeout_ms, 30_000, "max.poll.interval.ms");
    assert_eq!(join.rack_id.as_deref(), Some("rack-a"));
    assert_eq!(join.topic_partitions, Some(Vec::new()));
    assert_eq!(join.server_assignor, None, "the broker's default assignor");
    let ack = &hb[1];
    assert_eq!(ack.member_epoch, 1);
    assert_eq!(
        ack.member_id, join.member_id,
        "one id for the member's life"
    );
    assert_eq!(
        said_owned(ack),
        Some(tps("t", &[0, 1]).into_iter().collect())
    );
    assert_eq!(
        (
            ack.subscribed_topic_names.clone(),
            ack.rebalance_timeout_ms,
            ack.rack_id.clone()
        ),
        (None, -1, None),
        "only what changed"
    );
    let steady = &hb[2];
    assert_eq!(steady.topic_partitions, None);
    assert_eq!(steady.subscribed_topic_names, None);
    let t = s.fake.times(HEARTBEAT);
    assert_eq!(t[0], t[1], "the acknowledgement goes at once");
    assert_eq!(
        t[2] - t[1],
        Duration::from_secs(1),
        "then the broker's interval"
    );
    assert_eq!(s.listener.calls(), vec![("assigned", tps("t", &[0, 1]))]);
    let snap = s.member.state();
    assert_eq!(snap.group_protocol, GroupProtocol::Consumer);
    assert_eq!(snap.state, MemberState::Stable);
    assert_eq!(snap.member_id, join.member_id);
    assert_eq!(
        snap.rebalance_protocol,
        crate::assignor::RebalanceProtocol::Cooperative
    );
    let ev = drain(&mut s.events);
    let k = kinds(&ev);
    assert!(matches!(
        k[0],
        GroupEventKind::RebalanceStarted {
            cause: RebalanceCause::MemberJoined,
            ..
        }
    ));
    assert!(k
        .iter()
        .any(|e| matches!(e, GroupEventKind::Joined { generation: 1, .. })));
    assert!(k.iter().any(|e| matches!(e, GroupEventKind::Reconciled { member_epoch: 1, added, revoked, .. } if added.len() == 2 && revoked.is_empty())));
    assert!(k
        .iter()
        .any(|e| matches!(e, GroupEventKind::RebalanceCompleted { generation: 1, .. })));
}

#[tokio::test(start_paused = true)]
async fn the_broker_interval_paces_heartbeats() {
    let s = start(config(None));
    s.fake
        .heartbeat_interval_ms
        .store(2500, std::sync::atomic::Ordering::SeqCst);
    let mut join = ok(1, Some(&[("t", &[0])]));
    join.heartbeat_interval_ms = 2500;
    s.fake.push(join);
    s.member.subscribe(["t"]).await.unwrap();
    wait_until(|| heartbeats(&s).len() >= 4).await;
    let t = s.fake.times(HEARTBEAT);
    assert_eq!(t[2] - t[1], Duration::from_millis(2500));
    assert_eq!(t[3] - t[2], Duration::from_millis(2500));
}

#[tokio::test(start_paused = true)]
async fn a_new_target_revokes_only_what_moves_then_assigns_what_is_new() {
    let mut s = start(config(None));
    stable(&s).await;
    drain(&mut s.events);
    // The coordinator takes t-1 away (same epoch: the revocation is pending)...
    s.fake.push(ok(1, Some(&[("t", &[0])])));
    wait_owning(&s, ConsumerMemberState::Stable, 1, &tps("t", &[0])).await;
    // ...bumps the epoch once acknowledged, then gives t-2.
    s.fake.push(ok(2, Some(&[("t", &[0, 2])])));
    wait_owning(&s, ConsumerMemberState::Stable, 2, &tps("t", &[0, 2])).await;
    assert_eq!(
        s.listener.calls(),
        vec![
            ("assigned", tps("t", &[0, 1])),
            ("revoked", tps("t", &[1])),
            ("assigned", vec![]),
            ("assigned", tps("t", &[2])),
        ]
    );
    let acks: Vec<BTreeSet<TopicPartition>> =
        heartbeats(&s).iter().filter_map(said_owned).collect();
    assert_eq!(
        acks[1..],
        [
            tps("t", &[0, 1]).into_iter().collect(),
            tps("t", &[0]).into_iter().collect(),
            tps("t", &[0, 2]).into_iter().collect(),
        ],
        "each reconciliation acknowledged with what is owned"
    );
    let ev = drain(&mut s.events);
    let reconciled: Vec<(i32, usize, usize)> = ev
        .iter()
        .filter_map(|e| match &e.kind {
            GroupEventKind::Reconciled {
                member_epoch,
                added,
                revoked,
                ..
            } => Some((*member_epoch, added.len(), revoked.len())),
            _ => None,
        })
        .collect();
    assert_eq!(reconciled, [(1, 0, 1), (2, 1, 0)]);
}

#[tokio::test(start_paused = true)]
async fn heartbeats_go_on_during_a_slow_revoke_and_a_target_arriving_meanwhile_waits_for_it() {
    let s = start_with(
        config(None),
        Recorder {
            revoke_delay: Duration::from_secs(5),
            ..Recorder::default()
        },
    );
    stable(&s).await;
    s.fake.push(ok(1, Some(&[("t", &[0])])));
    wait_until(|| s.listener.calls().len() == 2).await;
    let revoke_started = tokio::time::Instant::now();
    // While `revoked` runs: the next heartbeats bring a newer target.
    s.fake.push(ok(1, Some(&[("t", &[0, 3])])));
    wait_owning(&s, ConsumerMemberState::Stable, 1, &tps("t", &[0, 3])).await;
    let during: usize = s
        .fake
        .times(HEARTBEAT)
        .iter()
        .filter(|t| **t > revoke_started && **t < revoke_started + Duration::from_secs(5))
        .count();
    assert!(during >= 3, "heartbeats during the revoke: {during}");
    assert_eq!(
        s.listener.calls()[1..],
        [
            ("revoked", tps("t", &[1])),
            ("assigned", vec![]),
            ("assigned", tps("t", &[3])),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn topic_ids_metadata_cannot_name_yet_wait_and_are_looked_up_again() {
    let s = start(config(None));
    // `v` is not in the fake's metadata yet: its id cannot be named.
    s.fake.push(ok(1, Some(&[("t", &[0]), ("v", &[0])])));
    s.member.subscribe(["t", "v"]).await.unwrap();
    wait_owning(&s, ConsumerMemberState::Stable, 1, &tps("t", &[0])).await;
    assert_eq!(s.listener.calls(), vec![("assigned", tps("t", &[0]))]);
    s.fake.set_partitions("v", 1);
    let both = [tp("t", 0), tp("v", 0)];
    wait_owning(&s, ConsumerMemberState::Stable, 1, &both).await;
    assert_eq!(s.listener.calls()[1], ("assigned", vec![tp("v", 0)]));
    let last_ack = heartbeats(&s).iter().rev().find_map(said_owned).unwrap();
    assert_eq!(last_ack, both.into_iter().collect());
}

/// Between the join's answer (epoch 1 with a target) and the end of its reconciliation the
/// member is in the group: its heartbeats say only what changed, never an empty `TopicPartitions`.
/// An empty list there would tell the coordinator the member gave up what it was just assigned,
/// and the coordinator would hand those partitions to the next member while this one goes on to
/// take them (seen on a three-node cluster: a member assigned partitions another member had been
/// given 42 ms earlier, while its topic ids were looked up).
#[tokio::test(start_paused = true)]
async fn heartbeats_while_the_first_target_is_looked_up_say_no_partitions() {
    let s = start(config(None));
    s.fake.delay_name_lookups(Duration::from_millis(3500));
    s.fake.push(ok(1, Some(&[("t", &[0, 1])])));
    s.member.subscribe(["t"]).await.unwrap();
    wait_owning(&s, ConsumerMemberState::Stable, 1, &tps("t", &[0, 1])).await;
    let hb = heartbeats(&s);
    let ack = hb
        .iter()
        .position(|h| h.topic_partitions.as_ref().is_some_and(|t| !t.is_empty()))
        .unwrap();
    let meanwhile = &hb[1..ack];
    assert!(
        meanwhile.len() >= 2,
        "heartbeats went on: {}",
        meanwhile.len()
    );
    for h in meanwhile {
        assert_eq!(h.member_epoch, 1);
        assert_eq!(h.topic_partitions, None, "{h:?}");
        assert_eq!(h.subscribed_topic_names, None, "{h:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_subscription_change_is_said_at_once_and_alone() {
    let s = start(config(None));
    stable(&s).await;
    let before = heartbeats(&s).len();
    s.member.subscribe(["t", "u"]).await.unwrap();
    wait_until(|| heartbeats(&s).len() > before).await;
    let hb = heartbeats(&s);
    let change = &hb[before];
    assert_eq!(
        change.subscribed_topic_names,
        Some(vec!["t".to_string(), "u".to_string()])
    );
    assert_eq!(change.member_epoch, 1);
    assert_eq!(change.topic_partitions, None);
    let t = s.fake.times(HEARTBEAT);
    assert!(
        t[before] - t[before - 1] < Duration::from_secs(1),
        "at once"
    );
}

#[tokio::test(start_paused = true)]
async fn a_regex_subscription_is_sent_as_subscribed_topic_regex() {
    let s = start(config(None));
    s.fake.push(ok(1, Some(&[("t", &[0])])));
    s.member.subscribe_regex("t|u").await.unwrap();
    wait_owning(&s, ConsumerMemberState::Stable, 1, &tps("t", &[0])).await;
    let join = &heartbeats(&s)[0];
    assert_eq!(join.subscribed_topic_regex.as_deref(), Some("t|u"));
    assert_eq!(join.subscribed_topic_names, Some(Vec::new()));
}

#[tokio::test(start_paused = true)]
async fn a_dynamic_member_closing_revokes_then_leaves_with_epoch_minus_one() {
    let mut s = start(config(None));
    stable(&s).await;
    s.member.close().await.unwrap();
    let last = heartbeats(&s).pop().unwrap();
    assert_eq!(last.member_epoch, -1);
    assert_eq!(
        s.listener.calls().last().unwrap(),
        &("revoked", tps("t", &[0, 1]))
    );
    assert_eq!(s.member.state().state, MemberState::Closed);
    let ev = drain(&mut s.events);
    assert!(kinds(&ev).iter().any(|k| matches!(
        k,
        GroupEventKind::Left {
            sent_leave_group: true,
            error: None
        }
    )));
}

#[tokio::test(start_paused = true)]
async fn a_static_member_closing_leaves_with_epoch_minus_two_and_leave_with_minus_one() {
    for (leave, on_close, epoch) in [(false, None, -2), (true, None, -1), (false, Some(true), -1)] {
        let mut c = config(Some("pod-0"));
        c.leave_group_on_close = on_close;
        let s = start(c);
        stable(&s).await;
        if leave {
            s.member.leave().await.unwrap();
        } else {
            s.member.close().await.unwrap();
        }
        let last = heartbeats(&s).pop().unwrap();
        assert_eq!(
            last.member_epoch, epoch,
            "leave {leave}, on close {on_close:?}"
        );
        assert_eq!(last.instance_id.as_deref(), Some("pod-0"));
    }
}

#[tokio::test(start_paused = true)]
async fn a_dynamic_member_told_not_to_leave_on_close_sends_nothing() {
    let mut c = config(None);
    c.leave_group_on_close = Some(false);
    let s = start(c);
    stable(&s).await;
    let before = heartbeats(&s).len();
    s.member.close().await.unwrap();
    assert_eq!(heartbeats(&s).len(), before);
}

#[tokio::test(start_paused = true)]
async fn poll_interval_exceeded_leaves_loses_and_rejoins_at_epoch_zero() {
    let mut s = start(config(Some("pod-0")));
    stable(&s).await;
    drain(&mut s.events);
    let before = heartbeats(&s).len();
    s.member.poll_interval_exceeded().await.unwrap();
    wait_until(|| heartbeats(&s).len() >= before + 2).await;
    let hb = heartbeats(&s);
    assert_eq!(
        hb[before].member_epoch, -1,
        "leaves for good, static or not"
    );
    assert_eq!(hb[before + 1].member_epoch, 0, "rejoins");
    assert_eq!(hb[before + 1].member_id, hb[0].member_id);
    assert_eq!(s.listener.calls()[1], ("lost", tps("t", &[0, 1])));
    let t = s.fake.times(HEARTBEAT);
    assert_eq!(t[before + 1], t[before], "rejoined once `lost` returned");
    let ev = drain(&mut s.events);
    assert!(kinds(&ev).iter().any(|k| matches!(
        k,
        GroupEventKind::RebalanceStarted {
            cause: RebalanceCause::PollIntervalExceeded,
            ..
        }
    )));
}

#[tokio::test(start_paused = true)]
async fn an_empty_subscription_leaves_and_sends_nothing_more() {
    let s = start(config(None));
    stable(&s).await;
    s.member.subscribe(Vec::<String>::new()).await.unwrap();
    wait_state(&s.member, |x| {
        x.consumer_state == Some(ConsumerMemberState::Unsubscribed)
    })
    .await;
    let count = heartbeats(&s).len();
    assert_eq!(heartbeats(&s)[count - 1].member_epoch, -1);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(heartbeats(&s).len(), count);
    assert_eq!(
        s.listener.calls().last().unwrap(),
        &("revoked", tps("t", &[0, 1]))
    );
}

#[tokio::test(start_paused = true)]
async fn a_close_while_the_join_is_unanswered_still_leaves() {
    let s = start(config(None));
    s.fake.push_hang(HEARTBEAT);
    s.member.subscribe(["t"]).await.unwrap();
    wait_until(|| heartbeats(&s).len() == 1).await;
    s.member.close().await.unwrap();
    let hb = heartbeats(&s);
    assert_eq!(hb.len(), 2);
    assert_eq!(
        hb[1].member_epoch, -1,
        "the coordinator may have taken the join"
    );
    assert_eq!(hb[1].member_id, hb[0].member_id);
}
