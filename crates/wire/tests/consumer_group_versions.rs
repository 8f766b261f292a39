//! The KIP-848 messages (ConsumerGroupHeartbeat, ConsumerGroupDescribe) at every version this
//! crate implements: what a version cannot say is an encoding error naming the field (never
//! dropped), everything else round-trips, and the nullable assignment has Java's null indicator.

use bytes::{Bytes, BytesMut};
use mooring_wire::frame::{
    request_header_version, response_header_version, ApiKey, RequestHeader, ResponseHeader,
};
use mooring_wire::messages::consumer_group_describe::{
    Assignment as DescribedAssignment, DescribedGroup, Member,
    TopicPartitions as DescribedPartitions,
};
use mooring_wire::messages::consumer_group_heartbeat::{Assignment, TopicPartitions};
use mooring_wire::messages::*;
use mooring_wire::primitives::Uuid;
use mooring_wire::{DecodeError, EncodeError};

const TOPIC: Uuid = Uuid([7; 16]);

fn encode<M: Message>(m: &M, version: i16) -> Result<Bytes, EncodeError> {
    let mut buf = BytesMut::new();
    m.encode(&mut buf, version)?;
    Ok(buf.freeze())
}

/// Encodes at `version`, decodes, and asserts the value came back whole.
fn round_trip<M: Message>(m: &M, version: i16) {
    let bytes = encode(m, version).unwrap_or_else(|e| panic!("{} v{version}: {e}", M::NAME));
    let back = M::decode(&bytes, version).unwrap_or_else(|e| panic!("{} v{version}: {e}", M::NAME));
    assert_eq!(&back, m, "{} v{version}", M::NAME);
}

fn join(regex: Option<&str>) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: "orders".into(),
        member_id: "Zm9vYmFyYmF6cXV1eDEyMw".into(),
        member_epoch: 0,
        instance_id: Some("orders-demo-1".into()),
        rack_id: Some("rack-a".into()),
        rebalance_timeout_ms: 300_000,
        subscribed_topic_names: Some(vec!["orders".into()]),
        subscribed_topic_regex: regex.map(str::to_owned),
        server_assignor: Some("uniform".into()),
        topic_partitions: Some(vec![TopicPartitions {
            topic_id: TOPIC,
            partitions: vec![0, 1],
            ..Default::default()
        }]),
        ..Default::default()
    }
}

fn heartbeat_response(assignment: Option<Assignment>) -> ConsumerGroupHeartbeatResponse {
    ConsumerGroupHeartbeatResponse {
        member_id: Some("Zm9vYmFyYmF6cXV1eDEyMw".into()),
        member_epoch: 3,
        heartbeat_interval_ms: 5000,
        assignment,
        ..Default::default()
    }
}

fn describe_response(member_type: i8) -> ConsumerGroupDescribeResponse {
    let assignment = DescribedAssignment {
        topic_partitions: vec![DescribedPartitions {
            topic_id: TOPIC,
            topic_name: "orders".into(),
            partitions: vec![0, 1, 2],
            ..Default::default()
        }],
        ..Default::default()
    };
    ConsumerGroupDescribeResponse {
        groups: vec![DescribedGroup {
            group_id: "orders".into(),
            group_state: "Stable".into(),
            group_epoch: 4,
            assignment_epoch: 4,
            assignor_name: "uniform".into(),
            members: vec![Member {
                member_id: "m".into(),
                member_epoch: 4,
                client_id: "c".into(),
                client_host: "/127.0.0.1".into(),
                subscribed_topic_names: vec!["orders".into()],
                subscribed_topic_regex: Some("ord.*".into()),
                assignment: assignment.clone(),
                target_assignment: assignment,
                member_type,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[test]
fn a_regex_subscription_cannot_be_said_at_heartbeat_v0() {
    assert_eq!(
        (
            ConsumerGroupHeartbeatRequest::MIN_VERSION,
            ConsumerGroupHeartbeatRequest::MAX_VERSION
        ),
        (0, 1)
    );
    for version in 0..=1 {
        round_trip(&join(None), version);
        let with_regex = join(Some("orders-.*"));
        if version >= 1 {
            round_trip(&with_regex, version);
        } else {
            assert_eq!(
                encode(&with_regex, version),
                Err(EncodeError::FieldNotAtVersion {
                    api: "ConsumerGroupHeartbeatRequest",
                    version,
                    field: "subscribed_topic_regex",
                })
            );
        }
    }
}

#[test]
fn member_type_cannot_be_said_at_describe_v0() {
    assert_eq!(
        (
            ConsumerGroupDescribeResponse::MIN_VERSION,
            ConsumerGroupDescribeResponse::MAX_VERSION
        ),
        (0, 1)
    );
    for version in 0..=1 {
        round_trip(&describe_response(-1), version);
        let consumer_member = describe_response(1);
        if version >= 1 {
            round_trip(&consumer_member, version);
        } else {
            assert_eq!(
                encode(&consumer_member, version),
                Err(EncodeError::FieldNotAtVersion {
                    api: "ConsumerGroupDescribeResponse",
                    version,
                    field: "Member.member_type",
                })
            );
        }
        let request = ConsumerGroupDescribeRequest {
            group_ids: vec!["orders".into(), "payments".into()],
            include_authorized_operations: true,
            ..Default::default()
        };
        round_trip(&request, version);
    }
    // Decoding v0 gives the schema's default, -1 (unknown member type).
    let v0 = encode(&describe_response(-1), 0).expect("v0");
    let back = ConsumerGroupDescribeResponse::decode(&v0, 0).expect("v0 decodes");
    assert_eq!(back.groups[0].members[0].member_type, -1);
}

#[test]
fn versions_beyond_kafka_4_4_are_refused_both_ways() {
    for version in [-1, 2] {
        assert_eq!(
            encode(&join(None), version),
            Err(EncodeError::UnsupportedVersion {
                api: "ConsumerGroupHeartbeatRequest",
                version
            })
        );
        assert_eq!(
            ConsumerGroupDescribeResponse::decode(&Bytes::new(), version),
            Err(DecodeError::UnsupportedVersion {
                api: "ConsumerGroupDescribeResponse",
                version
            })
        );
    }
}

#[test]
fn a_null_assignment_is_one_byte_as_java_writes_it() {
    let assignment = Assignment {
        topic_partitions: vec![TopicPartitions {
            topic_id: TOPIC,
            partitions: vec![2],
            ..Default::default()
        }],
        ..Default::default()
    };
    for version in 0..=1 {
        let null = encode(&heartbeat_response(None), version).expect("null");
        let some = encode(&heartbeat_response(Some(assignment.clone())), version).expect("some");
        // The indicator sits just before the (empty) tagged-field section: -1 null, 1 present.
        assert_eq!(null[null.len() - 2..], [0xff, 0x00], "v{version}");
        let indicator = null.len() - 2;
        assert_eq!(some[indicator], 0x01, "v{version}");
        // Then the struct: its topic count, one topic (id, partition count, one partition,
        // tagged fields) and its own tagged fields.
        assert_eq!(
            some.len(),
            null.len() + 1 + (16 + 1 + 4 + 1) + 1,
            "v{version}"
        );
        round_trip(&heartbeat_response(None), version);
        round_trip(&heartbeat_response(Some(assignment.clone())), version);
        round_trip(&heartbeat_response(Some(Assignment::default())), version);
        // Java reads any negative indicator as null and anything else as a struct.
        let mut other = some.to_vec();
        other[indicator] = 0x00;
        let read = ConsumerGroupHeartbeatResponse::decode(&Bytes::from(other), version);
        assert_eq!(
            read.expect("0 means present").assignment,
            Some(assignment.clone())
        );
        let mut negative = null.to_vec();
        negative[indicator] = 0x80;
        let read = ConsumerGroupHeartbeatResponse::decode(&Bytes::from(negative), version);
        assert_eq!(read.expect("negative means null").assignment, None);
        // Cut inside the assignment: an error, not a shorter value.
        let cut = some.slice(..some.len() - 3);
        assert!(ConsumerGroupHeartbeatResponse::decode(&cut, version).is_err());
    }
}

#[test]
fn headers_are_the_flexible_ones_at_every_version() {
    for api in [
        ApiKey::ConsumerGroupHeartbeat,
        ApiKey::ConsumerGroupDescribe,
    ] {
        assert_eq!(ApiKey::from_i16(api.code()), Some(api));
        assert_eq!(
            (api.min_version(), api.max_version()),
            (0, 1),
            "{}",
            api.name()
        );
        for version in 0..=1 {
            assert_eq!(request_header_version(api, version), 2, "{}", api.name());
            assert_eq!(response_header_version(api, version), 1, "{}", api.name());
        }
    }
    assert_eq!(ApiKey::ConsumerGroupHeartbeat.code(), 68);
    assert_eq!(ApiKey::ConsumerGroupDescribe.code(), 69);
    assert_eq!(
        ApiKey::ConsumerGroupDescribe.name(),
        "ConsumerGroupDescribe"
    );
    // A whole request frame: header v2 then the body, as the broker reads it.
    let mut frame = BytesMut::new();
    RequestHeader {
        api_key: 68,
        api_version: 1,
        correlation_id: 9,
        client_id: Some("mooring".into()),
        ..Default::default()
    }
    .encode(&mut frame, 2)
    .expect("header");
    join(Some("orders-.*")).encode(&mut frame, 1).expect("body");
    let frame = frame.freeze();
    let (header, body) = RequestHeader::decode(&frame, 2).expect("header decodes");
    assert_eq!(
        (header.api_key, header.api_version, header.correlation_id),
        (68, 1, 9)
    );
    let request = ConsumerGroupHeartbeatRequest::decode(&body, 1).expect("body decodes");
    assert_eq!(request, join(Some("orders-.*")));
    let mut frame = BytesMut::new();
    ResponseHeader {
        correlation_id: 9,
        ..Default::default()
    }
    .encode(&mut frame, 1)
    .expect("response header");
    assert_eq!(
        frame[..],
        [0, 0, 0, 9, 0],
        "correlation id and no tagged fields"
    );
}
