//! Scenarios beyond single rows: static membership, fencing policy, cooperative and eager
//! rebalances, the leader's assignment, heartbeats during a slow listener, events.

use std::sync::atomic::Ordering;
use std::time::Duration;

use mooring_wire::consumer_protocol::{Assignment, Subscription, TopicPartitions};
use mooring_wire::error_code::ErrorCode as E;
use mooring_wire::messages::describe_groups::{DescribedGroup, DescribedGroupMember};
use mooring_wire::messages::{
    DescribeGroupsResponse, HeartbeatResponse, JoinGroupRequest, LeaveGroupRequest,
    SyncGroupRequest,
};

use super::fake::{join_error, join_ok, member, sync_ok};
use super::*;
use crate::{FencedPolicy, MemberState, RebalanceCause};

const JOIN: i16 = 11;
const HEARTBEAT: i16 = 12;
const LEAVE: i16 = 13;
const DESCRIBE: i16 = 15;

#[tokio::test(start_paused = true)]
async fn join_request_lists_every_strategy_in_order_with_a_v3_subscription() {
    let a = DealAssignor::new("range", RebalanceProtocol::Eager);
    let b = DealAssignor::new("cooperative-sticky", RebalanceProtocol::Cooperative);
    let mut s = start_with(config(Some("i-1")), vec![a, b], Recorder::default());
    assert_eq!(
        s.member.state().rebalance_protocol,
        RebalanceProtocol::Eager,
        "cooperative only if all are"
    );
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[2])]));
    s.member.subscribe(["t"]).await.unwrap();
    let snap = wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    assert_eq!(snap.protocol_name.as_deref(), Some("cooperative-sticky"));
    let j = s.fake.requests::<JoinGroupRequest>();
    assert_eq!(j[0].group_instance_id.as_deref(), Some("i-1"));
    assert_eq!(j[0].protocol_type, "consumer");
    assert_eq!(j[0].session_timeout_ms, 6000);
    assert_eq!(j[0].rebalance_timeout_ms, 30000);
    let names: Vec<&str> = j[0].protocols.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["range", "cooperative-sticky"]);
    let (version, sub) = Subscription::decode(&j[0].protocols[1].metadata).unwrap();
    assert_eq!(version, 3);
    assert_eq!(sub.topics, ["t"]);
    assert_eq!(sub.rack_id.as_deref(), Some("rack-a"));
    assert_eq!(sub.user_data.as_deref(), Some(&b"cooperative-sticky"[..]));
    let sync = s.fake.requests::<SyncGroupRequest>();
    assert_eq!(sync[0].group_instance_id.as_deref(), Some("i-1"));
    assert_eq!(sync[0].generation_id, 1);
    assert!(
        sync[0].assignments.is_empty(),
        "a follower sends no assignments"
    );
    // Every phase is an event, in order.
    let ev = drain(&mut s.events);
    let names: Vec<&str> = kinds(&ev)
        .iter()
        .filter_map(|k| match k {
            GroupEventKind::RebalanceStarted {
                cause: RebalanceCause::MemberJoined,
                ..
            } => Some("started"),
            GroupEventKind::Joined {
                generation: 1,
                leader: false,
                ..
            } => Some("joined"),
            GroupEventKind::Synced { generation: 1, .. } => Some("synced"),
            GroupEventKind::PartitionsAssigned { .. } => Some("assigned"),
            GroupEventKind::RebalanceCompleted { generation: 1, .. } => Some("completed"),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        ["started", "joined", "synced", "assigned", "completed"]
    );
}

#[tokio::test(start_paused = true)]
async fn leader_runs_the_assignor_the_coordinator_picked() {
    let a = DealAssignor::new("range", RebalanceProtocol::Eager);
    let b = DealAssignor::new("roundrobin", RebalanceProtocol::Eager);
    let s = start_with(
        config(None),
        vec![a.clone(), b.clone()],
        Recorder::default(),
    );
    let mut resp = join_ok(1, "m1", "m1", "roundrobin");
    resp.members = vec![member("m1", &["t"]), member("m2", &["t"])];
    s.fake.push(resp);
    s.fake.push(sync_ok(&[("t", &[0, 2])]));
    s.member.subscribe(["t"]).await.unwrap();
    let snap = wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    assert!(snap.is_leader());
    assert_eq!(a.calls.load(Ordering::SeqCst), 0);
    assert_eq!(b.calls.load(Ordering::SeqCst), 1);
    let sync = s.fake.requests::<SyncGroupRequest>();
    let mut got = std::collections::BTreeMap::new();
    for x in &sync[0].assignments {
        got.insert(
            x.member_id.clone(),
            Assignment::decode(&x.assignment).unwrap().1.partitions,
        );
    }
    assert_eq!(got["m1"], vec![TopicPartitions::new("t", vec![0, 2])]);
    assert_eq!(got["m2"], vec![TopicPartitions::new("t", vec![1, 3])]);
    // Metadata change: the leader rejoins when partition counts moved.
    s.member.metadata_changed().await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(s.fake.count(JOIN), 1, "unchanged metadata, no rejoin");
    s.fake.set_partitions("t", 6);
    s.member.metadata_changed().await.unwrap();
    wait_until(|| s.fake.count(JOIN) == 2).await;
}

/// The leader's assignor is told each partition's replica racks; with `client.rack` set, the
/// leader rejoins when they change (as Java's leader does), without it only when counts change.
#[tokio::test(start_paused = true)]
async fn leader_gives_the_assignor_replica_racks_and_rejoins_when_they_move() {
    for rack in [Some("rack-a"), None] {
        let a = DealAssignor::new("range", RebalanceProtocol::Eager);
        let mut c = config(None);
        c.client_rack = rack.map(str::to_owned);
        let s = start_with(c, vec![a.clone()], Recorder::default());
        s.fake
            .set_replica_racks("t", &[&["rack-a", "rack-b"], &["rack-b"]]);
        let mut resp = join_ok(1, "m1", "m1", "range");
        resp.members = vec![member("m1", &["t", "absent"])];
        s.fake.push(resp);
        s.fake.push(sync_ok(&[("t", &[0, 1])]));
        s.member.subscribe(["t", "absent"]).await.unwrap();
        wait_state(&s.member, |x| x.state == MemberState::Stable).await;
        let given = a.given.lock().unwrap().clone();
        assert_eq!(given.len(), 1);
        let racks = |p: i32| {
            given[0]
                .replica_racks("t", p)
                .iter()
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(racks(0), ["rack-a", "rack-b"]);
        assert_eq!(racks(1), ["rack-b"]);
        assert_eq!(given[0].count("absent"), None);

        // The same racks: no rejoin.
        s.member.metadata_changed().await.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(s.fake.count(JOIN), 1, "unchanged metadata, no rejoin");
        // Partition 1 moved to rack-c.
        s.fake
            .set_replica_racks("t", &[&["rack-a", "rack-b"], &["rack-c"]]);
        s.member.metadata_changed().await.unwrap();
        if rack.is_some() {
            wait_until(|| s.fake.count(JOIN) == 2).await;
        } else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            assert_eq!(
                s.fake.count(JOIN),
                1,
                "racks do not matter without client.rack"
            );
            s.fake.set_partitions("t", 3);
            s.member.metadata_changed().await.unwrap();
            wait_until(|| s.fake.count(JOIN) == 2).await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn cooperative_revokes_only_moving_partitions_then_joins_again() {
    let mut s = start(config(None), RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0, 1])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| {
        x.generation == 1 && x.state == MemberState::Stable
    })
    .await;
    // Someone joins: gen 2 takes t-0 away and gives t-2; gen 3 (second join) keeps {1, 2}.
    s.fake.push(HeartbeatResponse {
        error_code: E::RebalanceInProgress.code(),
        ..Default::default()
    });
    s.fake.push(join_ok(2, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[1, 2])]));
    s.fake.push(join_ok(3, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[1, 2])]));
    let snap = wait_state(&s.member, |x| {
        x.generation == 3 && x.state == MemberState::Stable
    })
    .await;
    assert_eq!(
        snap.assignment,
        [tp("t", 1), tp("t", 2)].into_iter().collect()
    );
    assert_eq!(
        s.listener.calls(),
        vec![
            ("assigned", vec![tp("t", 0), tp("t", 1)]),
            ("revoked", vec![tp("t", 0)]),
            ("assigned", vec![tp("t", 2)]),
            ("assigned", vec![]),
        ]
    );
    let j = s.fake.requests::<JoinGroupRequest>();
    assert_eq!(j.len(), 3);
    let owned = |i: usize| {
        Subscription::decode(&j[i].protocols[0].metadata)
            .unwrap()
            .1
            .owned_partitions
    };
    assert_eq!(
        owned(1),
        vec![TopicPartitions::new("t", vec![0, 1])],
        "owned partitions kept while joining"
    );
    assert_eq!(owned(2), vec![TopicPartitions::new("t", vec![1, 2])]);
    let causes: Vec<RebalanceCause> = drain(&mut s.events)
        .into_iter()
        .filter_map(|e| match e.kind {
            GroupEventKind::RebalanceStarted { cause, .. } => Some(cause),
            _ => None,
        })
        .collect();
    assert_eq!(
        causes,
        [
            RebalanceCause::MemberJoined,
            RebalanceCause::MemberJoined,
            RebalanceCause::CooperativeFollowUp
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn eager_revokes_everything_before_joining() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0, 1])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| {
        x.generation == 1 && x.state == MemberState::Stable
    })
    .await;
    s.fake.push(HeartbeatResponse {
        error_code: E::RebalanceInProgress.code(),
        ..Default::default()
    });
    s.fake.push(join_ok(2, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[1])]));
    wait_state(&s.member, |x| {
        x.generation == 2 && x.state == MemberState::Stable
    })
    .await;
    assert_eq!(
        s.listener.calls(),
        vec![
            ("assigned", vec![tp("t", 0), tp("t", 1)]),
            ("revoked", vec![tp("t", 0), tp("t", 1)]),
            ("assigned", vec![tp("t", 1)]),
        ]
    );
    let j = s.fake.requests::<JoinGroupRequest>();
    assert!(Subscription::decode(&j[1].protocols[0].metadata)
        .unwrap()
        .1
        .owned_partitions
        .is_empty());
}

#[tokio::test(start_paused = true)]
async fn heartbeats_keep_flowing_while_the_listener_is_slow() {
    let listener = Recorder {
        revoke_delay: Duration::from_secs(20),
        ..Default::default()
    };
    let mut c = config(None);
    c.rebalance_timeout = Duration::from_secs(60);
    let s = start_with(
        c,
        vec![DealAssignor::new("range", RebalanceProtocol::Eager)],
        listener,
    );
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.fake.push(HeartbeatResponse {
        error_code: E::RebalanceInProgress.code(),
        ..Default::default()
    });
    wait_until(|| s.listener.calls().iter().any(|(k, _)| *k == "revoked")).await;
    let before = s.fake.count(HEARTBEAT);
    let revoke_started = tokio::time::Instant::now();
    wait_until(|| s.fake.count(JOIN) == 2).await;
    assert!(revoke_started.elapsed() >= Duration::from_secs(19));
    let during = s.fake.count(HEARTBEAT) - before;
    assert!(during >= 18, "{during} heartbeats during a 20 s revoke");
}

#[tokio::test(start_paused = true)]
async fn a_listener_past_its_timeout_is_abandoned_before_the_rebalance_timeout() {
    let listener = Recorder {
        revoke_delay: Duration::from_secs(3600),
        ..Default::default()
    };
    let bound = config(None).listener_timeout();
    assert!(bound < config(None).rebalance_timeout);
    let mut s = start_with(
        config(None),
        vec![DealAssignor::new("range", RebalanceProtocol::Eager)],
        listener,
    );
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.fake.push(HeartbeatResponse {
        error_code: E::RebalanceInProgress.code(),
        ..Default::default()
    });
    wait_until(|| s.fake.count(JOIN) == 2).await;
    assert!(drain(&mut s.events).iter().any(|e| matches!(e.kind, GroupEventKind::PartitionsRevoked { timed_out: true, duration, .. } if duration >= bound && duration < config(None).rebalance_timeout)));
}

#[tokio::test(start_paused = true)]
async fn static_member_close_sends_no_leave_group_but_leave_does() {
    let s = start(config(Some("i-1")), RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.member.close().await.unwrap();
    assert_eq!(s.fake.count(LEAVE), 0);
    assert_eq!(
        s.listener.calls().last(),
        Some(&("revoked", vec![tp("t", 0)]))
    );

    let s = start(config(Some("i-1")), RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.member.leave().await.unwrap();
    let leave = s.fake.requests::<LeaveGroupRequest>();
    assert_eq!(leave.len(), 1);
    assert_eq!(leave[0].members[0].member_id, "m1");
    assert_eq!(
        leave[0].members[0].group_instance_id.as_deref(),
        Some("i-1")
    );

    // A dynamic member leaves on close; the option overrides either way.
    let mut c = config(Some("i-1"));
    c.leave_group_on_close = Some(true);
    let s = start(c, RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.member.close().await.unwrap();
    assert_eq!(s.fake.count(LEAVE), 1);
}

fn twin(alive: bool) -> DescribeGroupsResponse {
    DescribeGroupsResponse {
        groups: vec![DescribedGroup {
            group_id: "g".into(),
            members: if alive {
                vec![DescribedGroupMember {
                    member_id: "twin".into(),
                    group_instance_id: Some("i-1".into()),
                    ..Default::default()
                }]
            } else {
                vec![]
            },
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[tokio::test(start_paused = true)]
async fn fenced_retry_policy_backs_off_and_never_fights_a_live_twin() {
    let mut c = config(Some("i-1"));
    c.fenced_policy = FencedPolicy::RetryAfter(Duration::from_secs(1));
    let mut s = start(c, RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.fake.push(HeartbeatResponse {
        error_code: E::FencedInstanceId.code(),
        ..Default::default()
    });
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Fenced).await;
    let fenced_at = tokio::time::Instant::now();
    assert!(s.listener.calls().contains(&("lost", vec![tp("t", 0)])));
    // The twin is alive at the first two checks, gone at the third.
    s.fake.push(twin(true));
    s.fake.push(twin(true));
    s.fake.push(twin(false));
    s.fake.push(join_ok(5, "m9", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    wait_state(&s.member, |x| {
        x.state == MemberState::Stable && x.generation == 5
    })
    .await;
    // The twin checks (the DescribeGroups before the first join, the static-rejoin check, is
    // not one of them).
    let checks: Vec<_> = s
        .fake
        .times(DESCRIBE)
        .into_iter()
        .filter(|t| *t >= fenced_at)
        .collect();
    assert_eq!(checks.len(), 3);
    // Waits: session timeout (6 s, above the 1 s base), then doubling.
    assert_eq!(checks[0] - fenced_at, Duration::from_secs(6));
    assert_eq!(checks[1] - checks[0], Duration::from_secs(12));
    assert_eq!(checks[2] - checks[1], Duration::from_secs(24));
    let joins = s.fake.requests::<JoinGroupRequest>();
    assert_eq!(joins.len(), 2, "no JoinGroup while the twin lived");
    assert_eq!(joins[1].member_id, "", "rejoins as a new member id");
    let retry_ins: Vec<Option<Duration>> = drain(&mut s.events)
        .into_iter()
        .filter_map(|e| match e.kind {
            GroupEventKind::Fenced { retry_in, .. } => Some(retry_in),
            _ => None,
        })
        .collect();
    assert_eq!(
        retry_ins,
        [
            Some(Duration::from_secs(6)),
            Some(Duration::from_secs(12)),
            Some(Duration::from_secs(24))
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn subscription_change_rejoins_with_the_new_topics() {
    let mut s = start(config(None), RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.fake.push(join_error(E::RebalanceInProgress.code(), "m1"));
    s.member.subscribe(["t", "u"]).await.unwrap();
    wait_until(|| s.fake.count(JOIN) == 3).await;
    let j = s.fake.requests::<JoinGroupRequest>();
    assert_eq!(
        Subscription::decode(&j[2].protocols[0].metadata)
            .unwrap()
            .1
            .topics,
        ["t", "u"]
    );
    assert!(drain(&mut s.events).iter().any(|e| matches!(
        e.kind,
        GroupEventKind::RebalanceStarted {
            cause: RebalanceCause::SubscriptionChange,
            ..
        }
    )));
}

#[tokio::test(start_paused = true)]
async fn a_full_event_channel_never_blocks_the_member() {
    let mut c = config(None);
    c.event_capacity = 2;
    let s = start(c, RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(1, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(s.member.dropped_events() > 0);
    assert!(s.fake.count(HEARTBEAT) >= 9);
}

/// DescribeGroups before a static member's first join: Stable, the instance listed, `protocol`.
fn stable_with_instance(instance: &str, protocol: &str) -> DescribeGroupsResponse {
    DescribeGroupsResponse {
        groups: vec![DescribedGroup {
            group_id: "g".into(),
            group_state: "Stable".into(),
            protocol_type: "consumer".into(),
            protocol_data: protocol.into(),
            members: vec![DescribedGroupMember {
                member_id: "previous-process".into(),
                group_instance_id: Some(instance.into()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn rebalance_names(ev: &[GroupEvent]) -> Vec<&'static str> {
    kinds(ev)
        .iter()
        .filter_map(|k| match k {
            GroupEventKind::RebalanceStarted { .. } => Some("started"),
            GroupEventKind::Joined { .. } => Some("joined"),
            GroupEventKind::Synced { .. } => Some("synced"),
            GroupEventKind::PartitionsAssigned { .. } => Some("assigned"),
            GroupEventKind::RebalanceCompleted { .. } => Some("completed"),
            GroupEventKind::StaticRejoin { generation: 7, .. } => Some("static-rejoin"),
            GroupEventKind::RebalanceFailed { .. } => Some("failed"),
            _ => None,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_static_member_back_in_a_stable_group_reports_no_rebalance() {
    // KIP-345: the group is Stable and still lists the instance: the coordinator hands the
    // assignment back in the same generation, and the member reports it as a static rejoin.
    let mut s = start(config(Some("i-1")), RebalanceProtocol::Cooperative);
    s.fake
        .push(stable_with_instance("i-1", "cooperative-sticky"));
    s.fake
        .push(join_ok(7, "m-new", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0, 1])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    let ev = drain(&mut s.events);
    assert_eq!(
        rebalance_names(&ev),
        ["joined", "synced", "assigned", "static-rejoin"]
    );

    // Another state, another instance or a protocol we do not offer: an ordinary join.
    for describe in [
        DescribeGroupsResponse::default(),
        stable_with_instance("i-2", "cooperative-sticky"),
        stable_with_instance("i-1", "something-else"),
    ] {
        let mut s = start(config(Some("i-1")), RebalanceProtocol::Cooperative);
        s.fake.push(describe);
        s.fake
            .push(join_ok(7, "m-new", "other", "cooperative-sticky"));
        s.fake.push(sync_ok(&[("t", &[0, 1])]));
        s.member.subscribe(["t"]).await.unwrap();
        wait_state(&s.member, |x| x.state == MemberState::Stable).await;
        let ev = drain(&mut s.events);
        assert_eq!(
            rebalance_names(&ev),
            ["started", "joined", "synced", "assigned", "completed"]
        );
    }
}

#[tokio::test(start_paused = true)]
async fn join_and_sync_go_on_the_group_connection_timed_by_the_rebalance() {
    use mooring_client::conn::ConnectionKind;
    use mooring_client::CoordinatorCall;
    const SYNC: i16 = 14;
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    wait_until(|| s.fake.count(HEARTBEAT) >= 1).await;
    // config(): rebalance timeout 30 s; the fake's request.timeout.ms is 5 s.
    assert_eq!(
        s.fake.calls(JOIN),
        [CoordinatorCall::group(Duration::from_secs(35))],
        "JoinGroup: the rebalance timeout plus the request timeout"
    );
    assert_eq!(
        s.fake.calls(SYNC),
        [CoordinatorCall::group(Duration::from_secs(30))],
        "SyncGroup: the rebalance timeout"
    );
    let heartbeat = s.fake.calls(HEARTBEAT)[0];
    assert_eq!(heartbeat.connection, ConnectionKind::General);
    assert_eq!(heartbeat.timeout, None, "request.timeout.ms");
}

#[tokio::test(start_paused = true)]
async fn a_commit_overtaken_by_the_join_phase_is_resent_in_the_new_generation() {
    use mooring_wire::messages::offset_commit::{
        OffsetCommitResponsePartition, OffsetCommitResponseTopic,
    };
    use mooring_wire::messages::{OffsetCommitRequest, OffsetCommitResponse};
    let answer = |code: E| OffsetCommitResponse {
        topics: vec![OffsetCommitResponseTopic {
            topic_id: super::fake::topic_id("t"),
            partitions: vec![OffsetCommitResponsePartition {
                partition_index: 0,
                error_code: code.code(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let s = start(config(None), RebalanceProtocol::Cooperative);
    s.fake.push(join_ok(5, "m1", "other", "cooperative-sticky"));
    s.fake.push(sync_ok(&[("t", &[0, 1])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| {
        x.state == MemberState::Stable && x.generation == 5
    })
    .await;
    // The member rejoins and the coordinator holds its JoinGroup; a commit sent meanwhile reaches
    // the coordinator after the join phase ended, in generation 6.
    let gate = std::sync::Arc::new(tokio::sync::Notify::new());
    s.fake.push(HeartbeatResponse {
        error_code: E::RebalanceInProgress.code(),
        ..Default::default()
    });
    s.fake.push_held(
        join_ok(6, "m1", "other", "cooperative-sticky"),
        gate.clone(),
    );
    s.fake.push(sync_ok(&[("t", &[0, 1])]));
    wait_until(|| s.fake.count(JOIN) == 2).await;
    s.fake.push(answer(E::IllegalGeneration));
    s.fake.push(answer(E::None));
    let commit = tokio::spawn({
        let member = s.member.clone();
        async move {
            member
                .commit(std::collections::BTreeMap::from([(
                    tp("t", 0),
                    crate::OffsetAndMetadata::new(7),
                )]))
                .await
        }
    });
    wait_until(|| s.fake.requests::<OffsetCommitRequest>().len() == 1).await;
    gate.notify_one();
    commit.await.unwrap().unwrap();
    let generations: Vec<i32> = s
        .fake
        .requests::<OffsetCommitRequest>()
        .iter()
        .map(|r| r.generation_id_or_member_epoch)
        .collect();
    assert_eq!(generations, [5, 6]);
    assert!(
        !s.listener.calls().iter().any(|(k, _)| *k == "lost"),
        "not fenced: {:?}",
        s.listener.calls()
    );
}

/// A commit right after one that failed UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION or
/// FENCED_INSTANCE_ID in the member's generation is not sent with the identity just found
/// invalid, though the member task may not have reset it yet (commits run in the caller's task,
/// and a consumer's next commit waits only for the one before): it fails at once as the first
/// did, and the member rejoins (or is fenced) once.
#[tokio::test(start_paused = true)]
async fn a_commit_after_one_that_invalidated_the_generation_is_not_sent_with_it() {
    use mooring_wire::messages::offset_commit::{
        OffsetCommitResponsePartition, OffsetCommitResponseTopic,
    };
    use mooring_wire::messages::{OffsetCommitRequest, OffsetCommitResponse};
    let answer = |code: E| OffsetCommitResponse {
        topics: vec![OffsetCommitResponseTopic {
            topic_id: super::fake::topic_id("t"),
            partitions: vec![OffsetCommitResponsePartition {
                partition_index: 0,
                error_code: code.code(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let commit = |offset: i64| {
        std::collections::BTreeMap::from([(tp("t", 0), crate::OffsetAndMetadata::new(offset))])
    };
    for code in [
        E::UnknownMemberId,
        E::IllegalGeneration,
        E::FencedInstanceId,
    ] {
        let s = start(config(Some("i-1")), RebalanceProtocol::Cooperative);
        s.fake.push(join_ok(5, "m1", "other", "cooperative-sticky"));
        s.fake.push(sync_ok(&[("t", &[0, 1])]));
        s.member.subscribe(["t"]).await.unwrap();
        wait_state(&s.member, |x| {
            x.state == MemberState::Stable && x.generation == 5
        })
        .await;
        s.fake.push(answer(code));
        s.fake.push(answer(E::None));
        let first = s.member.commit(commit(7)).await.unwrap_err();
        let second = s.member.commit(commit(8)).await.unwrap_err();
        let sent = s.fake.requests::<OffsetCommitRequest>();
        assert_eq!(
            sent.len(),
            1,
            "{code}: the second commit was sent, generation {} member {:?}",
            sent.last().map_or(-1, |r| r.generation_id_or_member_epoch),
            sent.last().map(|r| r.member_id.clone())
        );
        assert_eq!(second.code(), first.code(), "{code}: {second:?}");
        assert_eq!(
            matches!(second, mooring_client::Error::FencedInstanceId { .. }),
            code == E::FencedInstanceId,
            "{code}: {second:?}"
        );
        if code == E::FencedInstanceId {
            wait_state(&s.member, |x| x.state == MemberState::Fenced).await;
        } else {
            wait_until(|| s.fake.count(JOIN) == 2).await;
        }
        let lost = s
            .listener
            .calls()
            .iter()
            .filter(|(k, _)| *k == "lost")
            .count();
        assert_eq!(lost, 1, "{code}: {:?}", s.listener.calls());
    }
}
