//! DescribeShareGroupOffsets: `DescribeShareGroupOffsetsRequest` and `DescribeShareGroupOffsetsResponse` (API key 90), generated from Kafka 4.4.0's `DescribeShareGroupOffsetsRequest.json` and `DescribeShareGroupOffsetsResponse.json`.
//!
//! Request versions 0-1, flexible 0-1; response versions 0-1, flexible 0-1.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_array,
    read_nullable_string, read_string, share, write_array, write_nullable_array,
    write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "DescribeShareGroupOffsetsRequest";
const NAME_RESPONSE: &str = "DescribeShareGroupOffsetsResponse";

/// DescribeShareGroupOffsetsRequest (API key 90): versions 0-1, flexible 0-1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeShareGroupOffsetsRequest {
    /// The groups to describe offsets for (versions 0+).
    pub groups: Vec<DescribeShareGroupOffsetsRequestGroup>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeShareGroupOffsetsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        let (input, groups) = read_array(
            input,
            flexible,
            DescribeShareGroupOffsetsRequestGroup::min_encoded_size(version),
            |i| DescribeShareGroupOffsetsRequestGroup::decode_from(i, root, version),
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
                groups,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        write_array(buf, &self.groups, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for DescribeShareGroupOffsetsRequest {
    const NAME: &'static str = "DescribeShareGroupOffsetsRequest";
    const API_KEY: i16 = 90;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(0);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for DescribeShareGroupOffsetsRequest {
    type Response = DescribeShareGroupOffsetsResponse;
}

/// Part of DescribeShareGroupOffsetsRequest (present in versions 0-1).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeShareGroupOffsetsRequestGroup {
    /// The group identifier (versions 0+).
    pub group_id: String,
    /// The topics to describe offsets for, or null for all topic-partitions (versions 0+, nullable 0+).
    pub topics: Option<Vec<DescribeShareGroupOffsetsRequestTopic>>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribeShareGroupOffsetsRequestGroup {
    fn default() -> Self {
        Self {
            group_id: String::new(),
            topics: Some(Vec::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribeShareGroupOffsetsRequestGroup {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, topics) = read_nullable_array(
            input,
            flexible,
            true,
            DescribeShareGroupOffsetsRequestTopic::min_encoded_size(version),
            |i| DescribeShareGroupOffsetsRequestTopic::decode_from(i, root, version),
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
                group_id,
                topics,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        write_nullable_array(
            buf,
            self.topics.as_deref(),
            flexible,
            true,
            at(
                NAME_REQUEST,
                version,
                "DescribeShareGroupOffsetsRequestGroup.topics",
            ),
            |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            },
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "DescribeShareGroupOffsetsRequestGroup.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of DescribeShareGroupOffsetsRequest (present in versions 0-1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeShareGroupOffsetsRequestTopic {
    /// The topic name (versions 0+).
    pub topic_name: String,
    /// The partitions (versions 0+).
    pub partitions: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeShareGroupOffsetsRequestTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
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
                topic_name,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
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
                NAME_REQUEST,
                version,
                "DescribeShareGroupOffsetsRequestTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// DescribeShareGroupOffsetsResponse (API key 90): versions 0-1, flexible 0-1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeShareGroupOffsetsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 0+).
    pub throttle_time_ms: i32,
    /// The results for each group (versions 0+).
    pub groups: Vec<DescribeShareGroupOffsetsResponseGroup>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeShareGroupOffsetsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, groups) = read_array(
            input,
            flexible,
            DescribeShareGroupOffsetsResponseGroup::min_encoded_size(version),
            |i| DescribeShareGroupOffsetsResponseGroup::decode_from(i, root, version),
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
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
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

impl Message for DescribeShareGroupOffsetsResponse {
    const NAME: &'static str = "DescribeShareGroupOffsetsResponse";
    const API_KEY: i16 = 90;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(0);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for DescribeShareGroupOffsetsResponse {
    type Request = DescribeShareGroupOffsetsRequest;
}

/// Part of DescribeShareGroupOffsetsResponse (present in versions 0-1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeShareGroupOffsetsResponseGroup {
    /// The group identifier (versions 0+).
    pub group_id: String,
    /// The results for each topic (versions 0+).
    pub topics: Vec<DescribeShareGroupOffsetsResponseTopic>,
    /// The group-level error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The group-level error message, or null if there was no error (versions 0+, nullable 0+, default null).
    pub error_message: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeShareGroupOffsetsResponseGroup {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size += 2;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, topics) = read_array(
            input,
            flexible,
            DescribeShareGroupOffsetsResponseTopic::min_encoded_size(version),
            |i| DescribeShareGroupOffsetsResponseTopic::decode_from(i, root, version),
        )?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
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
                group_id,
                topics,
                error_code,
                error_message,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        write_array(buf, &self.topics, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "DescribeShareGroupOffsetsResponseGroup.error_message",
            ),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "DescribeShareGroupOffsetsResponseGroup.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of DescribeShareGroupOffsetsResponse (present in versions 0-1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeShareGroupOffsetsResponseTopic {
    /// The topic name (versions 0+).
    pub topic_name: String,
    /// The unique topic ID (versions 0+).
    pub topic_id: Uuid,
    /// Partitions (versions 0+).
    pub partitions: Vec<DescribeShareGroupOffsetsResponsePartition>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeShareGroupOffsetsResponseTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += 16;
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        let (input, topic_name) = read_string(input, flexible)?;
        let (input, topic_id) = primitives::uuid(input)?;
        let (input, partitions) = read_array(
            input,
            flexible,
            DescribeShareGroupOffsetsResponsePartition::min_encoded_size(version),
            |i| DescribeShareGroupOffsetsResponsePartition::decode_from(i, root, version),
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
                topic_name,
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.topic_name.as_str()), flexible)?;
        buf.put_slice(&self.topic_id.0);
        write_array(buf, &self.partitions, flexible, |buf, e| {
            e.encode_into(buf, version)?;
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
                "DescribeShareGroupOffsetsResponseTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of DescribeShareGroupOffsetsResponse (present in versions 0-1).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeShareGroupOffsetsResponsePartition {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The share-partition start offset (versions 0+).
    pub start_offset: i64,
    /// The leader epoch of the partition (versions 0+).
    pub leader_epoch: i32,
    /// The share-partition lag (versions 1+, default -1).
    pub lag: i64,
    /// The partition-level error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The partition-level error message, or null if there was no error (versions 0+, nullable 0+, default null).
    pub error_message: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribeShareGroupOffsetsResponsePartition {
    fn default() -> Self {
        Self {
            partition_index: 0,
            start_offset: 0,
            leader_epoch: 0,
            lag: -1,
            error_code: 0,
            error_message: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribeShareGroupOffsetsResponsePartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 8;
        size += 4;
        if version >= 1 {
            size += 8;
        }
        size += 2;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, start_offset) = primitives::int64(input)?;
        let (input, leader_epoch) = primitives::int32(input)?;
        let (input, lag) = if version >= 1 {
            primitives::int64(input)?
        } else {
            (input, -1)
        };
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
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
                partition_index,
                start_offset,
                leader_epoch,
                lag,
                error_code,
                error_message,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i64(self.start_offset);
        buf.put_i32(self.leader_epoch);
        if version >= 1 {
            buf.put_i64(self.lag);
        } else if self.lag != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "DescribeShareGroupOffsetsResponsePartition.lag",
            )
            .not_at_version());
        }
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "DescribeShareGroupOffsetsResponsePartition.error_message",
            ),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "DescribeShareGroupOffsetsResponsePartition.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_describe_share_group_offsets_request(
        g: &mut Gen,
        version: i16,
    ) -> DescribeShareGroupOffsetsRequest {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        DescribeShareGroupOffsetsRequest {
            groups: g.vec(|g| arb_describe_share_group_offsets_request_group(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_share_group_offsets_request_group(
        g: &mut Gen,
        version: i16,
    ) -> DescribeShareGroupOffsetsRequestGroup {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        DescribeShareGroupOffsetsRequestGroup {
            group_id: g.string(),
            topics: g
                .option(|g| g.vec(|g| arb_describe_share_group_offsets_request_topic(g, version))),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_share_group_offsets_request_topic(
        g: &mut Gen,
        version: i16,
    ) -> DescribeShareGroupOffsetsRequestTopic {
        let flexible = DescribeShareGroupOffsetsRequest::is_flexible(version);
        DescribeShareGroupOffsetsRequestTopic {
            topic_name: g.string(),
            partitions: g.vec(|g| g.i32()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_share_group_offsets_response(
        g: &mut Gen,
        version: i16,
    ) -> DescribeShareGroupOffsetsResponse {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        DescribeShareGroupOffsetsResponse {
            throttle_time_ms: g.i32(),
            groups: g.vec(|g| arb_describe_share_group_offsets_response_group(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_share_group_offsets_response_group(
        g: &mut Gen,
        version: i16,
    ) -> DescribeShareGroupOffsetsResponseGroup {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        DescribeShareGroupOffsetsResponseGroup {
            group_id: g.string(),
            topics: g.vec(|g| arb_describe_share_group_offsets_response_topic(g, version)),
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_share_group_offsets_response_topic(
        g: &mut Gen,
        version: i16,
    ) -> DescribeShareGroupOffsetsResponseTopic {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        DescribeShareGroupOffsetsResponseTopic {
            topic_name: g.string(),
            topic_id: g.uuid(),
            partitions: g.vec(|g| arb_describe_share_group_offsets_response_partition(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_share_group_offsets_response_partition(
        g: &mut Gen,
        version: i16,
    ) -> DescribeShareGroupOffsetsResponsePartition {
        let flexible = DescribeShareGroupOffsetsResponse::is_flexible(version);
        DescribeShareGroupOffsetsResponsePartition {
            partition_index: g.i32(),
            start_offset: g.i64(),
            leader_epoch: g.i32(),
            lag: if version >= 1 { g.i64() } else { -1 },
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn describe_share_group_offsets_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_describe_share_group_offsets_request)?;
        }

        #[test]
        fn describe_share_group_offsets_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_describe_share_group_offsets_request)?;
        }

        #[test]
        fn describe_share_group_offsets_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_describe_share_group_offsets_response)?;
        }

        #[test]
        fn describe_share_group_offsets_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_describe_share_group_offsets_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            DescribeShareGroupOffsetsRequestGroup::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeShareGroupOffsetsRequestGroup::min_encoded_size(version),
                "DescribeShareGroupOffsetsRequestGroup v{version}"
            );
        }
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            DescribeShareGroupOffsetsRequestTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeShareGroupOffsetsRequestTopic::min_encoded_size(version),
                "DescribeShareGroupOffsetsRequestTopic v{version}"
            );
        }
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            DescribeShareGroupOffsetsResponseGroup::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeShareGroupOffsetsResponseGroup::min_encoded_size(version),
                "DescribeShareGroupOffsetsResponseGroup v{version}"
            );
        }
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            DescribeShareGroupOffsetsResponseTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeShareGroupOffsetsResponseTopic::min_encoded_size(version),
                "DescribeShareGroupOffsetsResponseTopic v{version}"
            );
        }
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            DescribeShareGroupOffsetsResponsePartition::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeShareGroupOffsetsResponsePartition::min_encoded_size(version),
                "DescribeShareGroupOffsetsResponsePartition v{version}"
            );
        }
    }
}
