//! ShareGroupDescribe: `ShareGroupDescribeRequest` and `ShareGroupDescribeResponse` (API key 77), generated from Kafka 4.4.0's `ShareGroupDescribeRequest.json` and `ShareGroupDescribeResponse.json`.
//!
//! Request versions 1, flexible 1; response versions 1, flexible 1.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_string,
    read_string, share, write_array, write_nullable_string, write_tagged_fields, Message, Request,
    Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "ShareGroupDescribeRequest";
const NAME_RESPONSE: &str = "ShareGroupDescribeResponse";

/// ShareGroupDescribeRequest (API key 77): versions 1, flexible 1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShareGroupDescribeRequest {
    /// The ids of the groups to describe (versions 0+).
    pub group_ids: Vec<String>,
    /// Whether to include authorized operations (versions 0+).
    pub include_authorized_operations: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ShareGroupDescribeRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareGroupDescribeRequest::is_flexible(version);
        let (input, group_ids) = read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
            read_string(i, flexible)
        })?;
        let (input, include_authorized_operations) = primitives::boolean(input)?;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            unknown_tagged_fields.push((tag, share(root, value)));
        }
        Ok((
            input,
            Self {
                group_ids,
                include_authorized_operations,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareGroupDescribeRequest::is_flexible(version);
        write_array(buf, &self.group_ids, flexible, |buf, e| {
            primitives::put_str(buf, Some(e.as_str()), flexible)?;
            Ok(())
        })?;
        buf.put_i8(i8::from(self.include_authorized_operations));
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for ShareGroupDescribeRequest {
    const NAME: &'static str = "ShareGroupDescribeRequest";
    const API_KEY: i16 = 77;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(1);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for ShareGroupDescribeRequest {
    type Response = ShareGroupDescribeResponse;
}

/// ShareGroupDescribeResponse (API key 77): versions 1, flexible 1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShareGroupDescribeResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 0+).
    pub throttle_time_ms: i32,
    /// Each described group (versions 0+).
    pub groups: Vec<DescribedGroup>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ShareGroupDescribeResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, groups) = read_array(
            input,
            flexible,
            DescribedGroup::min_encoded_size(version),
            |i| DescribedGroup::decode_from(i, root, version),
        )?;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            unknown_tagged_fields.push((tag, share(root, value)));
        }
        Ok((
            input,
            Self {
                throttle_time_ms,
                groups,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
        write_array(buf, &self.groups, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for ShareGroupDescribeResponse {
    const NAME: &'static str = "ShareGroupDescribeResponse";
    const API_KEY: i16 = 77;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(1);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for ShareGroupDescribeResponse {
    type Request = ShareGroupDescribeRequest;
}

/// Part of ShareGroupDescribeResponse (present in versions 1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopicPartitions {
    /// The topic ID (versions 0+).
    pub topic_id: Uuid,
    /// The topic name (versions 0+).
    pub topic_name: String,
    /// The partitions (versions 0+).
    pub partitions: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl TopicPartitions {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 16;
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let (input, topic_id) = primitives::uuid(input)?;
        let (input, topic_name) = read_string(input, flexible)?;
        let (input, partitions) = read_array(input, flexible, 4, primitives::int32)?;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            unknown_tagged_fields.push((tag, share(root, value)));
        }
        Ok((
            input,
            Self {
                topic_id,
                topic_name,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        buf.put_slice(&self.topic_id.0);
        primitives::put_str(buf, Some(self.topic_name.as_str()), flexible)?;
        write_array(buf, &self.partitions, flexible, |buf, e| {
            buf.put_i32(*e);
            Ok(())
        })?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "TopicPartitions.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareGroupDescribeResponse (present in versions 1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Assignment {
    /// The assigned topic-partitions to the member (versions 0+).
    pub topic_partitions: Vec<TopicPartitions>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Assignment {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let (input, topic_partitions) = read_array(
            input,
            flexible,
            TopicPartitions::min_encoded_size(version),
            |i| TopicPartitions::decode_from(i, root, version),
        )?;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            unknown_tagged_fields.push((tag, share(root, value)));
        }
        Ok((
            input,
            Self {
                topic_partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        write_array(buf, &self.topic_partitions, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "Assignment.unknown_tagged_fields"),
        )
    }
}

/// Part of ShareGroupDescribeResponse (present in versions 1).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedGroup {
    /// The describe error, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The top-level error message, or null if there was no error (versions 0+, nullable 0+, default null).
    pub error_message: Option<String>,
    /// The group ID string (versions 0+).
    pub group_id: String,
    /// The group state string, or the empty string (versions 0+).
    pub group_state: String,
    /// The group epoch (versions 0+).
    pub group_epoch: i32,
    /// The assignment epoch (versions 0+).
    pub assignment_epoch: i32,
    /// The selected assignor (versions 0+).
    pub assignor_name: String,
    /// The members (versions 0+).
    pub members: Vec<Member>,
    /// 32-bit bitfield to represent authorized operations for this group (versions 0+, default -2147483648).
    pub authorized_operations: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribedGroup {
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: None,
            group_id: String::new(),
            group_state: String::new(),
            group_epoch: 0,
            assignment_epoch: 0,
            assignor_name: String::new(),
            members: Vec::new(),
            authorized_operations: i32::MIN,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribedGroup {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 2;
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size += 4;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
        let (input, group_id) = read_string(input, flexible)?;
        let (input, group_state) = read_string(input, flexible)?;
        let (input, group_epoch) = primitives::int32(input)?;
        let (input, assignment_epoch) = primitives::int32(input)?;
        let (input, assignor_name) = read_string(input, flexible)?;
        let (input, members) =
            read_array(input, flexible, Member::min_encoded_size(version), |i| {
                Member::decode_from(i, root, version)
            })?;
        let (input, authorized_operations) = primitives::int32(input)?;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            unknown_tagged_fields.push((tag, share(root, value)));
        }
        Ok((
            input,
            Self {
                error_code,
                error_message,
                group_id,
                group_state,
                group_epoch,
                assignment_epoch,
                assignor_name,
                members,
                authorized_operations,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "DescribedGroup.error_message"),
        )?;
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        primitives::put_str(buf, Some(self.group_state.as_str()), flexible)?;
        buf.put_i32(self.group_epoch);
        buf.put_i32(self.assignment_epoch);
        primitives::put_str(buf, Some(self.assignor_name.as_str()), flexible)?;
        write_array(buf, &self.members, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        buf.put_i32(self.authorized_operations);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "DescribedGroup.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareGroupDescribeResponse (present in versions 1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Member {
    /// The member ID (versions 0+).
    pub member_id: String,
    /// The member rack ID (versions 0+, nullable 0+, default null).
    pub rack_id: Option<String>,
    /// The current member epoch (versions 0+).
    pub member_epoch: i32,
    /// The client ID (versions 0+).
    pub client_id: String,
    /// The client host (versions 0+).
    pub client_host: String,
    /// The subscribed topic names (versions 0+).
    pub subscribed_topic_names: Vec<String>,
    /// The current assignment (versions 0+).
    pub assignment: Assignment,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Member {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size += Assignment::min_encoded_size(version);
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        let (input, member_id) = read_string(input, flexible)?;
        let (input, rack_id) = read_nullable_string(input, flexible, true)?;
        let (input, member_epoch) = primitives::int32(input)?;
        let (input, client_id) = read_string(input, flexible)?;
        let (input, client_host) = read_string(input, flexible)?;
        let (input, subscribed_topic_names) =
            read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
                read_string(i, flexible)
            })?;
        let (input, assignment) = Assignment::decode_from(input, root, version)?;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            unknown_tagged_fields.push((tag, share(root, value)));
        }
        Ok((
            input,
            Self {
                member_id,
                rack_id,
                member_epoch,
                client_id,
                client_host,
                subscribed_topic_names,
                assignment,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        write_nullable_string(
            buf,
            self.rack_id.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "Member.rack_id"),
        )?;
        buf.put_i32(self.member_epoch);
        primitives::put_str(buf, Some(self.client_id.as_str()), flexible)?;
        primitives::put_str(buf, Some(self.client_host.as_str()), flexible)?;
        write_array(buf, &self.subscribed_topic_names, flexible, |buf, e| {
            primitives::put_str(buf, Some(e.as_str()), flexible)?;
            Ok(())
        })?;
        self.assignment.encode_into(buf, version)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "Member.unknown_tagged_fields"),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_share_group_describe_request(
        g: &mut Gen,
        version: i16,
    ) -> ShareGroupDescribeRequest {
        let flexible = ShareGroupDescribeRequest::is_flexible(version);
        ShareGroupDescribeRequest {
            group_ids: g.vec(|g| g.string()),
            include_authorized_operations: g.bool(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_share_group_describe_response(
        g: &mut Gen,
        version: i16,
    ) -> ShareGroupDescribeResponse {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        ShareGroupDescribeResponse {
            throttle_time_ms: g.i32(),
            groups: g.vec(|g| arb_described_group(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_topic_partitions(g: &mut Gen, version: i16) -> TopicPartitions {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        TopicPartitions {
            topic_id: g.uuid(),
            topic_name: g.string(),
            partitions: g.vec(|g| g.i32()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_assignment(g: &mut Gen, version: i16) -> Assignment {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        Assignment {
            topic_partitions: g.vec(|g| arb_topic_partitions(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_described_group(g: &mut Gen, version: i16) -> DescribedGroup {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        DescribedGroup {
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            group_id: g.string(),
            group_state: g.string(),
            group_epoch: g.i32(),
            assignment_epoch: g.i32(),
            assignor_name: g.string(),
            members: g.vec(|g| arb_member(g, version)),
            authorized_operations: g.i32(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_member(g: &mut Gen, version: i16) -> Member {
        let flexible = ShareGroupDescribeResponse::is_flexible(version);
        Member {
            member_id: g.string(),
            rack_id: g.option(|g| g.string()),
            member_epoch: g.i32(),
            client_id: g.string(),
            client_host: g.string(),
            subscribed_topic_names: g.vec(|g| g.string()),
            assignment: arb_assignment(g, version),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn share_group_describe_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_share_group_describe_request)?;
        }

        #[test]
        fn share_group_describe_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_share_group_describe_request)?;
        }

        #[test]
        fn share_group_describe_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_share_group_describe_response)?;
        }

        #[test]
        fn share_group_describe_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_share_group_describe_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 1..=1 {
            let mut buf = BytesMut::new();
            TopicPartitions::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                TopicPartitions::min_encoded_size(version),
                "TopicPartitions v{version}"
            );
        }
        for version in 1..=1 {
            let mut buf = BytesMut::new();
            Assignment::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                Assignment::min_encoded_size(version),
                "Assignment v{version}"
            );
        }
        for version in 1..=1 {
            let mut buf = BytesMut::new();
            DescribedGroup::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribedGroup::min_encoded_size(version),
                "DescribedGroup v{version}"
            );
        }
        for version in 1..=1 {
            let mut buf = BytesMut::new();
            Member::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                Member::min_encoded_size(version),
                "Member v{version}"
            );
        }
    }
}
