//! OffsetCommit: `OffsetCommitRequest` and `OffsetCommitResponse` (API key 8), generated from Kafka 4.4.0's `OffsetCommitRequest.json` and `OffsetCommitResponse.json`.
//!
//! Request versions 2-10, flexible 8-10; response versions 2-10, flexible 8-10.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_string,
    read_string, share, write_array, write_nullable_string, write_tagged_fields, Message, Request,
    Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "OffsetCommitRequest";
const NAME_RESPONSE: &str = "OffsetCommitResponse";

/// OffsetCommitRequest (API key 8): versions 2-10, flexible 8-10.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetCommitRequest {
    /// The unique group identifier (versions 0+).
    pub group_id: String,
    /// The generation of the group if using the classic group protocol or the member epoch if using the consumer protocol (versions 1+, default -1).
    pub generation_id_or_member_epoch: i32,
    /// The member ID assigned by the group coordinator (versions 1+).
    pub member_id: String,
    /// The unique identifier of the consumer instance provided by end user (versions 7+, nullable 7+, default null).
    pub group_instance_id: Option<String>,
    /// The time period in ms to retain the offset (versions 2-4, default -1).
    pub retention_time_ms: i64,
    /// The topics to commit offsets for (versions 0+).
    pub topics: Vec<OffsetCommitRequestTopic>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for OffsetCommitRequest {
    fn default() -> Self {
        Self {
            group_id: String::new(),
            generation_id_or_member_epoch: -1,
            member_id: String::new(),
            group_instance_id: None,
            retention_time_ms: -1,
            topics: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl OffsetCommitRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetCommitRequest::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, generation_id_or_member_epoch) = primitives::int32(input)?;
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = if version >= 7 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, retention_time_ms) = if version <= 4 {
            primitives::int64(input)?
        } else {
            (input, -1)
        };
        let (input, topics) = read_array(
            input,
            flexible,
            OffsetCommitRequestTopic::min_encoded_size(version),
            |i| OffsetCommitRequestTopic::decode_from(i, root, version),
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
                generation_id_or_member_epoch,
                member_id,
                group_instance_id,
                retention_time_ms,
                topics,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetCommitRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        buf.put_i32(self.generation_id_or_member_epoch);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        if version >= 7 {
            write_nullable_string(
                buf,
                self.group_instance_id.as_deref(),
                flexible,
                true,
                at(NAME_REQUEST, version, "group_instance_id"),
            )?;
        } else if self.group_instance_id.is_some() {
            return Err(at(NAME_REQUEST, version, "group_instance_id").not_at_version());
        }
        if version <= 4 {
            buf.put_i64(self.retention_time_ms);
        } else if self.retention_time_ms != -1 {
            return Err(at(NAME_REQUEST, version, "retention_time_ms").not_at_version());
        }
        write_array(buf, &self.topics, flexible, |buf, e| {
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

impl Message for OffsetCommitRequest {
    const NAME: &'static str = "OffsetCommitRequest";
    const API_KEY: i16 = 8;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(8);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for OffsetCommitRequest {
    type Response = OffsetCommitResponse;
}

/// Part of OffsetCommitRequest (present in versions 2-10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetCommitRequestTopic {
    /// The topic name (versions 0-9).
    pub name: String,
    /// The topic ID (versions 10+).
    pub topic_id: Uuid,
    /// Each partition to commit offsets for (versions 0+).
    pub partitions: Vec<OffsetCommitRequestPartition>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetCommitRequestTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetCommitRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        if version <= 9 {
            size += if flexible { 1 } else { 2 };
        }
        if version >= 10 {
            size += 16;
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetCommitRequest::is_flexible(version);
        let (input, name) = if version <= 9 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topic_id) = if version >= 10 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, partitions) = read_array(
            input,
            flexible,
            OffsetCommitRequestPartition::min_encoded_size(version),
            |i| OffsetCommitRequestPartition::decode_from(i, root, version),
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
                name,
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetCommitRequest::is_flexible(version);
        if version <= 9 {
            primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        } else if !self.name.is_empty() {
            return Err(at(NAME_REQUEST, version, "OffsetCommitRequestTopic.name").not_at_version());
        }
        if version >= 10 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_REQUEST, version, "OffsetCommitRequestTopic.topic_id").not_at_version(),
            );
        }
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
                NAME_REQUEST,
                version,
                "OffsetCommitRequestTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetCommitRequest (present in versions 2-10).
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetCommitRequestPartition {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The message offset to be committed (versions 0+).
    pub committed_offset: i64,
    /// The leader epoch of this partition (versions 6+, default -1).
    pub committed_leader_epoch: i32,
    /// Any associated metadata the client wants to keep (versions 0+, nullable 0+).
    pub committed_metadata: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for OffsetCommitRequestPartition {
    fn default() -> Self {
        Self {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            committed_metadata: Some(String::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl OffsetCommitRequestPartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetCommitRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 8;
        if version >= 6 {
            size += 4;
        }
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetCommitRequest::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, committed_offset) = primitives::int64(input)?;
        let (input, committed_leader_epoch) = if version >= 6 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, committed_metadata) = read_nullable_string(input, flexible, true)?;
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
                committed_offset,
                committed_leader_epoch,
                committed_metadata,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetCommitRequest::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i64(self.committed_offset);
        if version >= 6 {
            buf.put_i32(self.committed_leader_epoch);
        } else if self.committed_leader_epoch != -1 {
            return Err(at(
                NAME_REQUEST,
                version,
                "OffsetCommitRequestPartition.committed_leader_epoch",
            )
            .not_at_version());
        }
        write_nullable_string(
            buf,
            self.committed_metadata.as_deref(),
            flexible,
            true,
            at(
                NAME_REQUEST,
                version,
                "OffsetCommitRequestPartition.committed_metadata",
            ),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "OffsetCommitRequestPartition.unknown_tagged_fields",
            ),
        )
    }
}

/// OffsetCommitResponse (API key 8): versions 2-10, flexible 8-10.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetCommitResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 3+).
    pub throttle_time_ms: i32,
    /// The responses for each topic (versions 0+).
    pub topics: Vec<OffsetCommitResponseTopic>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetCommitResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetCommitResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 3 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, topics) = read_array(
            input,
            flexible,
            OffsetCommitResponseTopic::min_encoded_size(version),
            |i| OffsetCommitResponseTopic::decode_from(i, root, version),
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
                topics,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetCommitResponse::is_flexible(version);
        if version >= 3 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        write_array(buf, &self.topics, flexible, |buf, e| {
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

impl Message for OffsetCommitResponse {
    const NAME: &'static str = "OffsetCommitResponse";
    const API_KEY: i16 = 8;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(8);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for OffsetCommitResponse {
    type Request = OffsetCommitRequest;
}

/// Part of OffsetCommitResponse (present in versions 2-10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetCommitResponseTopic {
    /// The topic name (versions 0-9).
    pub name: String,
    /// The topic ID (versions 10+).
    pub topic_id: Uuid,
    /// The responses for each partition in the topic (versions 0+).
    pub partitions: Vec<OffsetCommitResponsePartition>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetCommitResponseTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetCommitResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        if version <= 9 {
            size += if flexible { 1 } else { 2 };
        }
        if version >= 10 {
            size += 16;
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetCommitResponse::is_flexible(version);
        let (input, name) = if version <= 9 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topic_id) = if version >= 10 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, partitions) = read_array(
            input,
            flexible,
            OffsetCommitResponsePartition::min_encoded_size(version),
            |i| OffsetCommitResponsePartition::decode_from(i, root, version),
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
                name,
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetCommitResponse::is_flexible(version);
        if version <= 9 {
            primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        } else if !self.name.is_empty() {
            return Err(
                at(NAME_RESPONSE, version, "OffsetCommitResponseTopic.name").not_at_version()
            );
        }
        if version >= 10 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_RESPONSE, version, "OffsetCommitResponseTopic.topic_id").not_at_version(),
            );
        }
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
                "OffsetCommitResponseTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetCommitResponse (present in versions 2-10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetCommitResponsePartition {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetCommitResponsePartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetCommitResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetCommitResponse::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
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
                error_code,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetCommitResponse::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i16(self.error_code);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "OffsetCommitResponsePartition.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_offset_commit_request(g: &mut Gen, version: i16) -> OffsetCommitRequest {
        let flexible = OffsetCommitRequest::is_flexible(version);
        OffsetCommitRequest {
            group_id: g.string(),
            generation_id_or_member_epoch: g.i32(),
            member_id: g.string(),
            group_instance_id: if version >= 7 {
                g.option(|g| g.string())
            } else {
                None
            },
            retention_time_ms: if version <= 4 { g.i64() } else { -1 },
            topics: g.vec(|g| arb_offset_commit_request_topic(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_commit_request_topic(
        g: &mut Gen,
        version: i16,
    ) -> OffsetCommitRequestTopic {
        let flexible = OffsetCommitRequest::is_flexible(version);
        OffsetCommitRequestTopic {
            name: if version <= 9 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 10 { g.uuid() } else { Uuid::NIL },
            partitions: g.vec(|g| arb_offset_commit_request_partition(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_commit_request_partition(
        g: &mut Gen,
        version: i16,
    ) -> OffsetCommitRequestPartition {
        let flexible = OffsetCommitRequest::is_flexible(version);
        OffsetCommitRequestPartition {
            partition_index: g.i32(),
            committed_offset: g.i64(),
            committed_leader_epoch: if version >= 6 { g.i32() } else { -1 },
            committed_metadata: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_commit_response(g: &mut Gen, version: i16) -> OffsetCommitResponse {
        let flexible = OffsetCommitResponse::is_flexible(version);
        OffsetCommitResponse {
            throttle_time_ms: if version >= 3 { g.i32() } else { 0 },
            topics: g.vec(|g| arb_offset_commit_response_topic(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_commit_response_topic(
        g: &mut Gen,
        version: i16,
    ) -> OffsetCommitResponseTopic {
        let flexible = OffsetCommitResponse::is_flexible(version);
        OffsetCommitResponseTopic {
            name: if version <= 9 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 10 { g.uuid() } else { Uuid::NIL },
            partitions: g.vec(|g| arb_offset_commit_response_partition(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_commit_response_partition(
        g: &mut Gen,
        version: i16,
    ) -> OffsetCommitResponsePartition {
        let flexible = OffsetCommitResponse::is_flexible(version);
        OffsetCommitResponsePartition {
            partition_index: g.i32(),
            error_code: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn offset_commit_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_offset_commit_request)?;
        }

        #[test]
        fn offset_commit_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_offset_commit_request)?;
        }

        #[test]
        fn offset_commit_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_offset_commit_response)?;
        }

        #[test]
        fn offset_commit_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_offset_commit_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 2..=10 {
            let mut buf = BytesMut::new();
            OffsetCommitRequestTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetCommitRequestTopic::min_encoded_size(version),
                "OffsetCommitRequestTopic v{version}"
            );
        }
        for version in 2..=10 {
            let mut buf = BytesMut::new();
            OffsetCommitRequestPartition::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetCommitRequestPartition::min_encoded_size(version),
                "OffsetCommitRequestPartition v{version}"
            );
        }
        for version in 2..=10 {
            let mut buf = BytesMut::new();
            OffsetCommitResponseTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetCommitResponseTopic::min_encoded_size(version),
                "OffsetCommitResponseTopic v{version}"
            );
        }
        for version in 2..=10 {
            let mut buf = BytesMut::new();
            OffsetCommitResponsePartition::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetCommitResponsePartition::min_encoded_size(version),
                "OffsetCommitResponsePartition v{version}"
            );
        }
    }
}
