//! Every request a group member sends, built by the same functions the member calls with the
//! values it really sets (static members, rack ids, reasons, topic ids, leader epochs), encoded as
//! a whole frame at every version from the 4.x floor to the highest this crate knows: any version
//! a broker (3.x or 4.x) may negotiate.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mooring_testkit::encode::encode_failures as every_version;
use mooring_wire::frame::encode_request;
use mooring_wire::messages::sync_group::SyncGroupRequestAssignment;
use mooring_wire::primitives::Uuid;

use super::*;
use crate::classic::protocol::Strategies;
use crate::{GroupConfig, RebalanceCause, TopicPartition};

/// A static member's group config with a rack, as a Kubernetes pod would set it.
fn static_config() -> GroupConfig {
    let mut config = GroupConfig::new("orders");
    config.group_instance_id = Some("orders-demo-1".into());
    config.session_timeout = Duration::from_secs(10);
    config.rebalance_timeout = Duration::from_secs(300);
    config.client_rack = Some("eu-west-1a".into());
    config
}

fn dynamic_config() -> GroupConfig {
    GroupConfig::new("orders")
}

const MEMBER: &str = "mooring-1-3f0c9a1e-6a57-4a5e-9d3f-2b7f1e0c5a11";

fn topic_ids() -> BTreeMap<String, Uuid> {
    BTreeMap::from([
        ("orders".to_string(), Uuid([7; 16])),
        ("payments".to_string(), Uuid([9; 16])),
    ])
}

fn group_requests() -> Vec<String> {
    let mut failed = Vec::new();
    for (case, config) in [("static", static_config()), ("dynamic", dynamic_config())] {
        let strategies = match Strategies::by_names(&config.assignment_strategies) {
            Ok(s) => s,
            Err(e) => return vec![format!("strategies: {e}")],
        };
        let subscribed = BTreeSet::from(["orders".to_string(), "payments".to_string()]);
        let owned = BTreeSet::from([TopicPartition::new("orders", 0)]);
        let protocols = match strategies.join_protocols(
            &subscribed,
            &owned,
            4,
            config.client_rack.as_deref(),
        ) {
            Ok(p) => p,
            Err(e) => return vec![format!("join protocols: {e}")],
        };
        for member_id in ["", MEMBER] {
            failed.extend(every_version(case, |v| {
                join_group(
                    v,
                    &config,
                    member_id.to_owned(),
                    protocols.clone(),
                    format!("{:?}", RebalanceCause::MemberJoined),
                )
            }));
        }
        let assignments = vec![SyncGroupRequestAssignment {
            member_id: MEMBER.into(),
            assignment: Bytes::from_static(&[0, 3, 0, 0, 0, 0, 255, 255, 255, 255]),
            ..Default::default()
        }];
        for assignments in [assignments, Vec::new()] {
            failed.extend(every_version(case, |v| {
                sync_group(
                    v,
                    &config,
                    5,
                    MEMBER.into(),
                    "cooperative-sticky".into(),
                    assignments.clone(),
                )
            }));
        }
        failed.extend(every_version(case, |v| {
            heartbeat(v, &config, 5, MEMBER.into())
        }));
        failed.extend(every_version(case, |v| {
            leave_group(v, &config, MEMBER.into())
        }));
    }
    failed.extend(consumer_group_requests());
    failed
}

/// ConsumerGroupHeartbeat as a static member with a rack and a server assignor says it: a join
/// (everything), an acknowledgement, a steady heartbeat, the two leaves. A regex exists from v1
/// only (`what_a_version_cannot_say_is_an_encoding_error`).
fn consumer_group_requests() -> Vec<String> {
    let join = HeartbeatFields {
        member_id: "qBc0YAH9Tg2cd7T0hXxXvw".into(),
        member_epoch: 0,
        instance_id: Some("orders-demo-1".into()),
        rack_id: Some("eu-west-1a".into()),
        rebalance_timeout_ms: 300_000,
        subscribed_topic_names: Some(vec!["orders".into(), "payments".into()]),
        subscribed_topic_regex: None,
        server_assignor: Some("range".into()),
        topic_partitions: Some(Vec::new()),
    };
    let ack = HeartbeatFields {
        member_epoch: 7,
        rack_id: None,
        rebalance_timeout_ms: -1,
        subscribed_topic_names: None,
        server_assignor: None,
        topic_partitions: Some(vec![(Uuid([7; 16]), vec![0, 2]), (Uuid([9; 16]), vec![1])]),
        ..join.clone()
    };
    let steady = HeartbeatFields {
        topic_partitions: None,
        ..ack.clone()
    };
    let mut failed = Vec::new();
    for (case, fields) in [
        ("join", join),
        ("acknowledgement", ack),
        ("steady", steady.clone()),
        (
            "leave",
            HeartbeatFields {
                member_epoch: -1,
                ..steady.clone()
            },
        ),
        (
            "static leave",
            HeartbeatFields {
                member_epoch: -2,
                ..steady
            },
        ),
    ] {
        failed.extend(every_version(case, |v| {
            consumer_group_heartbeat(v, "orders", &fields)
        }));
    }
    let regex = HeartbeatFields {
        subscribed_topic_names: Some(Vec::new()),
        subscribed_topic_regex: Some("orders-.*".into()),
        ..HeartbeatFields::default()
    };
    failed.extend(
        every_version("regex", |v| consumer_group_heartbeat(v, "orders", &regex))
            .into_iter()
            .filter(|line| !line.contains(" v0 ")),
    );
    failed
}

fn offset_requests() -> Vec<String> {
    let mut failed = Vec::new();
    let ids = topic_ids();
    let commit = CommitTarget {
        group: "orders".into(),
        generation: 5,
        member_id: MEMBER.into(),
        instance: Some("orders-demo-1".into()),
    };
    let offsets = BTreeMap::from([
        (
            "orders".to_string(),
            vec![
                (0, 1_000, Some(3), "processed".to_string()),
                (1, 17, None, String::new()),
            ],
        ),
        ("payments".to_string(), vec![(2, 5, Some(0), String::new())]),
    ]);
    failed.extend(every_version("static", |v| {
        offset_commit(v, &commit, &offsets, &ids)
    }));
    let partitions = BTreeMap::from([
        ("orders".to_string(), vec![0, 1]),
        ("payments".to_string(), vec![2]),
    ]);
    failed.extend(every_version("as a consumer-protocol member", |v| {
        offset_fetch_as_member(v, "orders", Some(&partitions), &ids, Some((MEMBER, 4)))
    }));
    failed
}

#[test]
fn every_request_encodes_at_every_version_with_the_values_the_runtime_sets() {
    let mut failed = group_requests();
    failed.extend(offset_requests());
    assert!(
        failed.is_empty(),
        "requests that cannot be encoded at a version a broker may negotiate:\n{}",
        failed.join("\n")
    );
}

#[test]
fn what_a_version_cannot_say_is_an_encoding_error() {
    // A broker-side regex at ConsumerGroupHeartbeat v0 (SubscribedTopicRegex is v1+).
    let regex = HeartbeatFields {
        subscribed_topic_regex: Some("orders-.*".into()),
        ..HeartbeatFields::default()
    };
    let request = consumer_group_heartbeat(0, "orders", &regex);
    let mut buf = BytesMut::new();
    let err = encode_request(&mut buf, &request, 0, 1, None).expect_err("no regex at v0");
    assert!(err.to_string().contains("subscribed_topic_regex"), "{err}");
}

#[test]
fn a_consumer_protocol_members_offset_fetch_names_it_from_v9() {
    let partitions = BTreeMap::from([("orders".to_string(), vec![0])]);
    let ids = topic_ids();
    let v9 = offset_fetch_as_member(9, "g", Some(&partitions), &ids, Some(("m", 4)));
    assert_eq!(v9.groups[0].member_id.as_deref(), Some("m"));
    assert_eq!(v9.groups[0].member_epoch, 4);
    let v8 = offset_fetch_as_member(8, "g", Some(&partitions), &ids, Some(("m", 4)));
    assert_eq!(
        (v8.groups[0].member_id.clone(), v8.groups[0].member_epoch),
        (None, -1)
    );
    let anonymous = offset_fetch_as_member(10, "g", Some(&partitions), &ids, None);
    assert_eq!(anonymous.groups[0].member_epoch, -1);
}

#[test]
fn version_dependent_fields_follow_the_version() {
    let config = static_config();
    let join = |v| {
        join_group(
            v,
            &config,
            String::new(),
            Vec::new(),
            "member_joined".into(),
        )
    };
    assert_eq!(join(4).group_instance_id, None);
    assert_eq!(join(5).group_instance_id.as_deref(), Some("orders-demo-1"));
    assert_eq!(join(7).reason, None);
    assert_eq!(join(8).reason.as_deref(), Some("member_joined"));
    assert_eq!(join(9).session_timeout_ms, 10_000);
    assert_eq!(join(9).rebalance_timeout_ms, 300_000);
    let sync = |v| sync_group(v, &config, 1, MEMBER.into(), "range".into(), Vec::new());
    assert_eq!(sync(2).group_instance_id, None);
    assert_eq!(sync(3).group_instance_id.as_deref(), Some("orders-demo-1"));
    assert_eq!(sync(4).protocol_name, None);
    assert_eq!(sync(5).protocol_name.as_deref(), Some("range"));
    assert_eq!(sync(5).protocol_type.as_deref(), Some("consumer"));
    assert_eq!(
        heartbeat(2, &config, 1, MEMBER.into()).group_instance_id,
        None
    );
    let leave = |v| leave_group(v, &config, MEMBER.into());
    assert_eq!(leave(2).member_id, MEMBER);
    assert!(leave(2).members.is_empty());
    assert_eq!(leave(4).members[0].reason, None);
    assert_eq!(
        leave(5).members[0].group_instance_id.as_deref(),
        Some("orders-demo-1")
    );
    assert!(leave(5).members[0].reason.is_some());
}

#[test]
fn offsets_name_topics_by_id_from_v10() {
    let ids = topic_ids();
    let target = CommitTarget {
        group: "g".into(),
        generation: 3,
        member_id: "m".into(),
        instance: Some("i".into()),
    };
    let topics = BTreeMap::from([(
        "orders".to_string(),
        vec![
            (0, 5, Some(2), "meta".to_string()),
            (1, 6, None, String::new()),
        ],
    )]);
    let v9 = offset_commit(9, &target, &topics, &ids);
    assert_eq!(v9.topics[0].name, "orders");
    assert!(v9.topics[0].topic_id.is_nil());
    assert_eq!(v9.group_instance_id.as_deref(), Some("i"));
    let v10 = offset_commit(10, &target, &topics, &ids);
    assert_eq!(v10.topics[0].name, "");
    assert_eq!(v10.topics[0].topic_id, Uuid([7; 16]));
    assert_eq!(v10.topics[0].partitions[0].committed_leader_epoch, 2);
    assert_eq!(
        v10.topics[0].partitions[0].committed_metadata.as_deref(),
        Some("meta")
    );
    assert_eq!(
        offset_commit(6, &target, &topics, &ids).group_instance_id,
        None
    );
    let unknown = offset_commit(10, &target, &topics, &BTreeMap::new());
    assert!(unknown.topics[0].topic_id.is_nil());
}
