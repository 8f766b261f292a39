//! Consumer-protocol bytes written by the Java client (kafka-clients 4.4.0
//! `ConsumerProtocol.serializeSubscription/serializeAssignment`, `StickyAssignor`,
//! `CooperativeStickyAssignor`; see `golden/java/GenRecords.java`), decoded field by field and
//! re-encoded byte for byte.

use bytes::{Bytes, BytesMut};
use mooring_wire::consumer_protocol::{
    decode_cooperative_sticky_generation, encode_cooperative_sticky_generation, Assignment,
    StickyAssignorUserData, Subscription, TopicPartitions, NO_GENERATION,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

mod common;
use common::hex;

const SUBSCRIPTIONS: [&str; 4] = [
    include_str!("golden/subscription_v0.hex"),
    include_str!("golden/subscription_v1.hex"),
    include_str!("golden/subscription_v2.hex"),
    include_str!("golden/subscription_v3.hex"),
];

const ASSIGNMENTS: [&str; 4] = [
    include_str!("golden/assignment_v0.hex"),
    include_str!("golden/assignment_v1.hex"),
    include_str!("golden/assignment_v2.hex"),
    include_str!("golden/assignment_v3.hex"),
];

/// The subscription the generator serialized, as Java puts it on the wire (topics sorted,
/// owned partitions grouped by topic and sorted), with the fields of `version` only.
fn expected_subscription(version: i16) -> Subscription {
    Subscription {
        topics: vec!["audit".into(), "orders".into()],
        user_data: Some(Bytes::from_static(b"ud")),
        owned_partitions: vec![
            TopicPartitions::new("audit", [0]),
            TopicPartitions::new("orders", [0, 2]),
        ],
        generation_id: 7,
        rack_id: Some("rack-a".into()),
    }
    .for_version(version)
}

fn encode_sub(s: &Subscription, version: i16) -> Result<Bytes, Box<dyn std::error::Error>> {
    let mut b = BytesMut::new();
    s.encode(version, &mut b)?;
    Ok(b.freeze())
}

fn encode_asg(a: &Assignment, version: i16) -> Result<Bytes, Box<dyn std::error::Error>> {
    let mut b = BytesMut::new();
    a.encode(version, &mut b)?;
    Ok(b.freeze())
}

#[test]
fn java_subscriptions_at_every_version() -> TestResult {
    for (v, text) in (0i16..).zip(SUBSCRIPTIONS) {
        let bytes = hex(text)?;
        let (version, sub) = Subscription::decode(&bytes)?;
        assert_eq!(version, v);
        let expected = expected_subscription(v);
        assert_eq!(sub, expected, "v{v}");
        assert_eq!(sub.generation(), (v >= 2).then_some(7), "v{v}");
        assert_eq!(encode_sub(&sub, v)?, bytes, "v{v}: decode → encode");
        assert_eq!(encode_sub(&expected, v)?, bytes, "v{v}: built from scratch");
    }
    Ok(())
}

#[test]
fn java_subscription_with_nulls() -> TestResult {
    let bytes = hex(include_str!("golden/subscription_v3_nulls.hex"))?;
    let (version, sub) = Subscription::decode(&bytes)?;
    let expected = Subscription {
        topics: vec!["t".into()],
        user_data: None,
        owned_partitions: vec![],
        generation_id: NO_GENERATION,
        rack_id: None,
    };
    assert_eq!((version, &sub), (3, &expected));
    assert_eq!(sub.generation(), None);
    assert_eq!(encode_sub(&expected, 3)?, bytes);
    Ok(())
}

#[test]
fn java_assignments_at_every_version() -> TestResult {
    let expected = Assignment {
        partitions: vec![
            TopicPartitions::new("orders", [1, 3]),
            TopicPartitions::new("audit", [0]),
        ],
        user_data: Some(Bytes::from_static(b"asg")),
    };
    for (v, text) in (0i16..).zip(ASSIGNMENTS) {
        let bytes = hex(text)?;
        let (version, asg) = Assignment::decode(&bytes)?;
        assert_eq!((version, &asg), (v, &expected), "v{v}");
        assert_eq!(encode_asg(&asg, v)?, bytes, "v{v}");
    }
    let bytes = hex(include_str!("golden/assignment_v3_nulls.hex"))?;
    let (version, asg) = Assignment::decode(&bytes)?;
    assert_eq!((version, &asg), (3, &Assignment::default()));
    assert_eq!(encode_asg(&asg, 3)?, bytes);
    Ok(())
}

#[test]
fn java_sticky_assignor_user_data() -> TestResult {
    let bytes = hex(include_str!("golden/sticky_user_data.hex"))?;
    let data = StickyAssignorUserData::decode(&bytes)?;
    assert_eq!(data.generation, Some(9));
    // Java groups by topic through a HashMap: compare as a set, re-encode in the order read.
    let mut topics = data.previous_assignment.clone();
    topics.sort_by(|a, b| a.topic.cmp(&b.topic));
    assert_eq!(
        topics,
        vec![
            TopicPartitions::new("audit", [1]),
            TopicPartitions::new("orders", [0, 4]),
        ]
    );
    let mut again = BytesMut::new();
    data.encode(&mut again)?;
    assert_eq!(again.freeze(), bytes);

    // The same assignment as v0 (no generation), the layout Java falls back to.
    let v0 = StickyAssignorUserData {
        generation: None,
        ..data
    };
    let mut b = BytesMut::new();
    v0.encode(&mut b)?;
    assert_eq!(&b[..], &bytes[..bytes.len() - 4]);
    assert_eq!(StickyAssignorUserData::decode(&b)?, v0);
    Ok(())
}

#[test]
fn java_cooperative_sticky_user_data() -> TestResult {
    for (text, generation) in [
        (include_str!("golden/cooperative_sticky_user_data.hex"), 12),
        (
            include_str!("golden/cooperative_sticky_user_data_initial.hex"),
            NO_GENERATION,
        ),
    ] {
        let bytes = hex(text)?;
        assert_eq!(decode_cooperative_sticky_generation(&bytes)?, generation);
        assert_eq!(encode_cooperative_sticky_generation(generation), bytes);
    }
    Ok(())
}

#[test]
fn java_subscription_user_data_is_zero_copy() -> TestResult {
    let bytes = hex(SUBSCRIPTIONS[3])?;
    let (_, sub) = Subscription::decode(&bytes)?;
    let ud = sub.user_data.ok_or("no user data")?;
    let range = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
    assert!(range.contains(&(ud.as_ptr() as usize)));
    Ok(())
}
