//! The consumer protocol: the opaque bytes a consumer puts in JoinGroup's protocol metadata
//! (`Subscription`) and the leader puts in SyncGroup's assignments (`Assignment`), byte-compatible
//! with the Java client's `ConsumerProtocol` so our members and Java members can share a group.
//!
//! Schemas: Kafka's `ConsumerProtocolSubscription.json` and `ConsumerProtocolAssignment.json`,
//! versions 0–3, classic (non-flexible) encoding, each prefixed by an int16 version.
//! Subscription v1 added owned partitions (KIP-429, cooperative rebalancing), v2 the generation
//! id (KIP-792), v3 the rack id (KIP-881); Assignment's versions only follow Subscription's.
//! A decoder meeting a version above 3 reads the fields it knows and ignores the rest, as Java
//! does (the schemas promise never to remove or reorder fields).
//!
//! Also the assignors' own user data: the eager `sticky` assignor's `StickyAssignorUserData`
//! (v0: previous assignment; v1: plus generation, no version prefix, told apart by trying v1 then
//! v0 as Java does), and `cooperative-sticky`'s user data, the generation as one int32.

use bytes::{BufMut, Bytes};

use crate::error::{DecodeError, EncodeError};
use crate::primitives::{
    array, int16, int32, nullable_bytes, nullable_str, put_array_len, put_bytes, put_str, str,
};

/// The lowest consumer-protocol version.
pub const LOWEST_VERSION: i16 = 0;
/// The highest consumer-protocol version this crate writes.
pub const HIGHEST_VERSION: i16 = 3;
/// The protocol type of a consumer group in JoinGroup.
pub const PROTOCOL_TYPE: &str = "consumer";
/// The generation id meaning "none" (`DEFAULT_GENERATION` in the Java assignors).
pub const NO_GENERATION: i32 = -1;

/// A topic and some of its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct TopicPartitions {
    /// The topic name.
    pub topic: String,
    /// The partitions, in wire order.
    pub partitions: Vec<i32>,
}

impl TopicPartitions {
    /// A topic with partitions.
    pub fn new(topic: impl Into<String>, partitions: impl Into<Vec<i32>>) -> Self {
        TopicPartitions {
            topic: topic.into(),
            partitions: partitions.into(),
        }
    }
}

/// What a member sends in JoinGroup: the topics it wants and what it owns.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Subscription {
    /// The subscribed topics. Java writes them sorted; we write them in the order given.
    pub topics: Vec<String>,
    /// The assignor's user data; `None` is null.
    pub user_data: Option<Bytes>,
    /// The partitions the member owns (v1+; cooperative rebalancing). Java writes them grouped
    /// by topic, topics and partitions sorted.
    pub owned_partitions: Vec<TopicPartitions>,
    /// The generation in which the member owned them (v2+), [`NO_GENERATION`] if none.
    pub generation_id: i32,
    /// The member's rack (v3+, `client.rack`). Kept as on the wire: Java reads an empty string
    /// as no rack.
    pub rack_id: Option<String>,
}

impl Default for Subscription {
    fn default() -> Self {
        Subscription {
            topics: Vec::new(),
            user_data: None,
            owned_partitions: Vec::new(),
            generation_id: NO_GENERATION,
            rack_id: None,
        }
    }
}

/// What the leader sends each member in SyncGroup: its partitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Assignment {
    /// The assigned partitions, grouped by topic.
    pub partitions: Vec<TopicPartitions>,
    /// The assignor's user data; `None` is null.
    pub user_data: Option<Bytes>,
}

/// Reads the version prefix and returns the version to parse with (capped at
/// [`HIGHEST_VERSION`]).
fn read_version<'a>(
    input: &'a [u8],
    api: &'static str,
) -> Result<(&'a [u8], i16, i16), DecodeError> {
    let (rest, version) = int16(input)?;
    if version < LOWEST_VERSION {
        return Err(DecodeError::UnsupportedVersion { api, version });
    }
    Ok((rest, version, version.min(HIGHEST_VERSION)))
}

fn check_version(api: &'static str, version: i16) -> Result<(), EncodeError> {
    if !(LOWEST_VERSION..=HIGHEST_VERSION).contains(&version) {
        return Err(EncodeError::UnsupportedVersion { api, version });
    }
    Ok(())
}

/// The smallest encoding of a topic's partitions: an empty topic name (2) and an empty array (4).
const TOPIC_PARTITIONS_MIN: usize = 6;

fn topic_partitions(input: &[u8]) -> crate::primitives::PResult<'_, TopicPartitions> {
    let (rest, topic) = str(false)(input)?;
    let (rest, partitions) = array(false, 4, int32)(rest)?;
    Ok((
        rest,
        TopicPartitions {
            topic: topic.to_owned(),
            partitions,
        },
    ))
}

fn put_topic_partitions(
    buf: &mut impl BufMut,
    list: &[TopicPartitions],
) -> Result<(), EncodeError> {
    put_array_len(buf, Some(list.len()), false)?;
    for tp in list {
        put_str(buf, Some(&tp.topic), false)?;
        put_array_len(buf, Some(tp.partitions.len()), false)?;
        for &p in &tp.partitions {
            buf.put_i32(p);
        }
    }
    Ok(())
}

/// Slices `sub` (a part of `whole`'s bytes) out of `whole` without copying.
fn zero_copy(whole: &Bytes, sub: Option<&[u8]>) -> Option<Bytes> {
    sub.map(|s| {
        if s.is_empty() {
            Bytes::new()
        } else {
            whole.slice_ref(s)
        }
    })
}

impl Subscription {
    const API: &'static str = "ConsumerProtocolSubscription";

    /// Decodes version-prefixed subscription bytes; returns the version found on the wire and the
    /// subscription. Bytes after the known fields are ignored (a newer version's fields).
    pub fn decode(bytes: &Bytes) -> Result<(i16, Subscription), DecodeError> {
        let (input, wire_version, version) = read_version(bytes, Self::API)?;
        let (input, topics) = array(false, 2, str(false))(input)?;
        let (mut input, user_data) = nullable_bytes(false)(input)?;
        let mut sub = Subscription {
            topics: topics.into_iter().map(str::to_owned).collect(),
            user_data: zero_copy(bytes, user_data),
            ..Subscription::default()
        };
        if version >= 1 {
            let (rest, owned) = array(false, TOPIC_PARTITIONS_MIN, topic_partitions)(input)?;
            sub.owned_partitions = owned;
            input = rest;
        }
        if version >= 2 {
            let (rest, generation) = int32(input)?;
            sub.generation_id = generation;
            input = rest;
        }
        if version >= 3 {
            let (_, rack) = nullable_str(false)(input)?;
            sub.rack_id = rack.map(str::to_owned);
        }
        Ok((wire_version, sub))
    }

    /// Encodes at `version` (0–3) with the version prefix. A field that does not exist at that
    /// version but holds a non-default value is an error; see [`Subscription::for_version`].
    pub fn encode(&self, version: i16, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        check_version(Self::API, version)?;
        let absent = |field| EncodeError::FieldNotAtVersion {
            api: Self::API,
            version,
            field,
        };
        if version < 1 && !self.owned_partitions.is_empty() {
            return Err(absent("owned_partitions"));
        }
        if version < 2 && self.generation_id != NO_GENERATION {
            return Err(absent("generation_id"));
        }
        if version < 3 && self.rack_id.is_some() {
            return Err(absent("rack_id"));
        }
        buf.put_i16(version);
        put_array_len(buf, Some(self.topics.len()), false)?;
        for t in &self.topics {
            put_str(buf, Some(t), false)?;
        }
        put_bytes(buf, self.user_data.as_deref(), false)?;
        if version >= 1 {
            put_topic_partitions(buf, &self.owned_partitions)?;
        }
        if version >= 2 {
            buf.put_i32(self.generation_id);
        }
        if version >= 3 {
            put_str(buf, self.rack_id.as_deref(), false)?;
        }
        Ok(())
    }

    /// This subscription without the fields `version` lacks: what Java's `serializeSubscription`
    /// silently does (the fields are "ignorable"), made explicit.
    pub fn for_version(mut self, version: i16) -> Self {
        if version < 1 {
            self.owned_partitions.clear();
        }
        if version < 2 {
            self.generation_id = NO_GENERATION;
        }
        if version < 3 {
            self.rack_id = None;
        }
        self
    }

    /// The generation, if any (v2+).
    pub fn generation(&self) -> Option<i32> {
        (self.generation_id >= 0).then_some(self.generation_id)
    }
}

impl Assignment {
    const API: &'static str = "ConsumerProtocolAssignment";

    /// Decodes version-prefixed assignment bytes; returns the version found on the wire and the
    /// assignment. Bytes after the known fields are ignored.
    pub fn decode(bytes: &Bytes) -> Result<(i16, Assignment), DecodeError> {
        let (input, wire_version, _) = read_version(bytes, Self::API)?;
        let (input, partitions) = array(false, TOPIC_PARTITIONS_MIN, topic_partitions)(input)?;
        let (_, user_data) = nullable_bytes(false)(input)?;
        Ok((
            wire_version,
            Assignment {
                partitions,
                user_data: zero_copy(bytes, user_data),
            },
        ))
    }

    /// Encodes at `version` (0–3; all have the same fields) with the version prefix.
    pub fn encode(&self, version: i16, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        check_version(Self::API, version)?;
        buf.put_i16(version);
        put_topic_partitions(buf, &self.partitions)?;
        put_bytes(buf, self.user_data.as_deref(), false)
    }
}

/// The user data of the eager `sticky` assignor (Java's `StickyAssignor`): the member's previous
/// assignment and, from v1, the generation it belongs to. There is no version prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct StickyAssignorUserData {
    /// The partitions the member owned, grouped by topic (Java's order is that of a `HashMap`).
    pub previous_assignment: Vec<TopicPartitions>,
    /// The generation of that assignment (v1); `None` for v0 data.
    pub generation: Option<i32>,
}

impl StickyAssignorUserData {
    /// Decodes v1 (assignment then generation) or, failing that, v0 (assignment only), as Java
    /// does. Java treats data that is neither as "no previous assignment, generation -1"; we
    /// return the error and leave that choice to the assignor.
    pub fn decode(data: &[u8]) -> Result<Self, DecodeError> {
        let (rest, previous_assignment) =
            array(false, TOPIC_PARTITIONS_MIN, topic_partitions)(data)?;
        let generation = int32(rest).ok().map(|(_, g)| g);
        Ok(StickyAssignorUserData {
            previous_assignment,
            generation,
        })
    }

    /// Encodes as v1 when a generation is set, as v0 otherwise.
    pub fn encode(&self, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        put_topic_partitions(buf, &self.previous_assignment)?;
        if let Some(g) = self.generation {
            buf.put_i32(g);
        }
        Ok(())
    }
}

/// Decodes `cooperative-sticky` user data: the generation as an int32. (Java reads the
/// generation from the v2+ subscription field first and only falls back to this; it treats
/// unreadable data as generation -1.)
pub fn decode_cooperative_sticky_generation(data: &[u8]) -> Result<i32, DecodeError> {
    Ok(int32(data)?.1)
}

/// Encodes `cooperative-sticky` user data for `generation` ([`NO_GENERATION`] before the first).
pub fn encode_cooperative_sticky_generation(generation: i32) -> Bytes {
    Bytes::copy_from_slice(&generation.to_be_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use proptest::prelude::*;

    type TestResult = Result<(), Box<dyn std::error::Error>>;

    fn enc_sub(s: &Subscription, v: i16) -> Result<Bytes, EncodeError> {
        let mut b = BytesMut::new();
        s.encode(v, &mut b)?;
        Ok(b.freeze())
    }

    #[test]
    fn known_bytes_v0() -> TestResult {
        let sub = Subscription {
            topics: vec!["t".into()],
            ..Subscription::default()
        };
        assert_eq!(
            &enc_sub(&sub, 0)?[..],
            [0, 0, 0, 0, 0, 1, 0, 1, b't', 0xff, 0xff, 0xff, 0xff]
        );
        Ok(())
    }

    #[test]
    fn fields_absent_at_a_version_are_refused_or_dropped_explicitly() -> TestResult {
        let sub = Subscription {
            topics: vec!["t".into()],
            owned_partitions: vec![TopicPartitions::new("t", [0])],
            generation_id: 4,
            rack_id: Some("r".into()),
            ..Subscription::default()
        };
        for v in 0..3 {
            assert!(matches!(
                enc_sub(&sub, v),
                Err(EncodeError::FieldNotAtVersion { .. })
            ));
            let lossy = sub.clone().for_version(v);
            let (_, back) = Subscription::decode(&enc_sub(&lossy, v)?)?;
            assert_eq!(back, lossy);
        }
        assert!(matches!(
            enc_sub(&sub, 4),
            Err(EncodeError::UnsupportedVersion { .. })
        ));
        Ok(())
    }

    #[test]
    fn higher_versions_are_read_with_the_fields_we_know() -> TestResult {
        let sub = Subscription {
            topics: vec!["a".into()],
            generation_id: 9,
            rack_id: Some("rack".into()),
            ..Subscription::default()
        };
        let mut bytes = enc_sub(&sub, 3)?.to_vec();
        bytes[1] = 7; // version 7
        bytes.extend_from_slice(b"future fields");
        let (v, back) = Subscription::decode(&Bytes::from(bytes))?;
        assert_eq!((v, back), (7, sub));

        let asg = Assignment {
            partitions: vec![TopicPartitions::new("a", [1, 2])],
            user_data: Some(Bytes::from_static(b"ud")),
        };
        let mut b = BytesMut::new();
        asg.encode(3, &mut b)?;
        let mut bytes = b.to_vec();
        bytes[1] = 5;
        bytes.push(0);
        assert_eq!(Assignment::decode(&Bytes::from(bytes))?, (5, asg));
        assert!(Subscription::decode(&Bytes::from_static(&[0xff, 0xff])).is_err());
        Ok(())
    }

    #[test]
    fn sticky_user_data_v0_and_v1() -> TestResult {
        let v1 = StickyAssignorUserData {
            previous_assignment: vec![TopicPartitions::new("t", [0, 3])],
            generation: Some(5),
        };
        let mut b = BytesMut::new();
        v1.encode(&mut b)?;
        assert_eq!(StickyAssignorUserData::decode(&b)?, v1);
        let v0 = StickyAssignorUserData {
            generation: None,
            ..v1
        };
        let mut b = BytesMut::new();
        v0.encode(&mut b)?;
        assert_eq!(StickyAssignorUserData::decode(&b)?, v0);
        assert_eq!(
            decode_cooperative_sticky_generation(&encode_cooperative_sticky_generation(-1))?,
            -1
        );
        assert!(decode_cooperative_sticky_generation(&[0, 0]).is_err());
        Ok(())
    }

    fn arb_tps() -> impl Strategy<Value = Vec<TopicPartitions>> {
        proptest::collection::vec(
            (
                "[a-z._-]{1,12}",
                proptest::collection::vec(any::<i32>(), 0..5),
            )
                .prop_map(|(topic, partitions)| TopicPartitions { topic, partitions }),
            0..4,
        )
    }

    fn arb_user_data() -> impl Strategy<Value = Option<Bytes>> {
        proptest::option::of(proptest::collection::vec(any::<u8>(), 0..20).prop_map(Bytes::from))
    }

    proptest! {
        #[test]
        fn subscriptions_round_trip_at_every_version(
            topics in proptest::collection::vec("[a-zA-Z0-9._-]{1,20}", 0..5),
            user_data in arb_user_data(),
            owned in arb_tps(),
            generation_id in any::<i32>(),
            rack_id in proptest::option::of("[a-z0-9-]{0,10}"),
            version in 0i16..=3,
        ) {
            let sub = Subscription { topics, user_data, owned_partitions: owned, generation_id, rack_id }
                .for_version(version);
            let bytes = enc_sub(&sub, version);
            prop_assert!(bytes.is_ok());
            let bytes = bytes.unwrap_or_default();
            let decoded = Subscription::decode(&bytes);
            prop_assert_eq!(&decoded, &Ok((version, sub)));
            let again = decoded.ok().map(|(v, s)| enc_sub(&s, v));
            prop_assert_eq!(again, Some(Ok(bytes)));
        }

        #[test]
        fn assignments_round_trip_at_every_version(
            partitions in arb_tps(),
            user_data in arb_user_data(),
            version in 0i16..=3,
        ) {
            let asg = Assignment { partitions, user_data };
            let mut b = BytesMut::new();
            prop_assert!(asg.encode(version, &mut b).is_ok());
            let bytes = b.freeze();
            prop_assert_eq!(Assignment::decode(&bytes), Ok((version, asg)));
        }

        #[test]
        fn random_input_never_panics(input in proptest::collection::vec(any::<u8>(), 0..80)) {
            let bytes = Bytes::from(input);
            let _ = Subscription::decode(&bytes);
            let _ = Assignment::decode(&bytes);
            let _ = StickyAssignorUserData::decode(&bytes);
            let _ = decode_cooperative_sticky_generation(&bytes);
        }
    }
}
