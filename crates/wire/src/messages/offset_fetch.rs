//! OffsetFetch: `OffsetFetchRequest` and `OffsetFetchResponse` (API key 9), generated from Kafka 4.4.0's `OffsetFetchRequest.json` and `OffsetFetchResponse.json`.
//!
//! Request versions 1-10, flexible 6-10; response versions 1-10, flexible 6-10.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_array,
    read_nullable_string, read_string, share, write_array, write_nullable_array,
    write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "OffsetFetchRequest";
const NAME_RESPONSE: &str = "OffsetFetchResponse";

/// OffsetFetchRequest (API key 9): versions 1-10, flexible 6-10.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetchRequest {
    /// The group to fetch offsets for (versions 0-7).
    pub group_id: String,
    /// Each topic we would like to fetch offsets for, or null to fetch offsets for all topics (versions 0-7, nullable 2-7).
    pub topics: Option<Vec<OffsetFetchRequestTopic>>,
    /// Each group we would like to fetch offsets for (versions 8+).
    pub groups: Vec<OffsetFetchRequestGroup>,
    /// Whether broker should hold on returning unstable offsets but set a retriable error code for the partitions (versions 7+, default false).
    pub require_stable: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for OffsetFetchRequest {
    fn default() -> Self {
        Self {
            group_id: String::new(),
            topics: Some(Vec::new()),
            groups: Vec::new(),
            require_stable: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl OffsetFetchRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchRequest::is_flexible(version);
        let (input, group_id) = if version <= 7 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topics) = if version <= 7 {
            read_nullable_array(
                input,
                flexible,
                version >= 2,
                OffsetFetchRequestTopic::min_encoded_size(version),
                |i| OffsetFetchRequestTopic::decode_from(i, root, version),
            )?
        } else {
            (input, Some(Vec::new()))
        };
        let (input, groups) = if version >= 8 {
            read_array(
                input,
                flexible,
                OffsetFetchRequestGroup::min_encoded_size(version),
                |i| OffsetFetchRequestGroup::decode_from(i, root, version),
            )?
        } else {
            (input, Vec::new())
        };
        let (input, require_stable) = if version >= 7 {
            primitives::boolean(input)?
        } else {
            (input, false)
        };
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
                groups,
                require_stable,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchRequest::is_flexible(version);
        if version <= 7 {
            primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        } else if !self.group_id.is_empty() {
            return Err(at(NAME_REQUEST, version, "group_id").not_at_version());
        }
        if version <= 7 {
            write_nullable_array(
                buf,
                self.topics.as_deref(),
                flexible,
                version >= 2,
                at(NAME_REQUEST, version, "topics"),
                |buf, e| {
                    e.encode_into(buf, version)?;
                    Ok(())
                },
            )?;
        } else if !matches!(&self.topics, Some(x) if x.is_empty()) {
            return Err(at(NAME_REQUEST, version, "topics").not_at_version());
        }
        if version >= 8 {
            write_array(buf, &self.groups, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.groups.is_empty() {
            return Err(at(NAME_REQUEST, version, "groups").not_at_version());
        }
        if version >= 7 {
            buf.put_i8(i8::from(self.require_stable));
        } else if self.require_stable {
            return Err(at(NAME_REQUEST, version, "require_stable").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for OffsetFetchRequest {
    const NAME: &'static str = "OffsetFetchRequest";
    const API_KEY: i16 = 9;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(6);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for OffsetFetchRequest {
    type Response = OffsetFetchResponse;
}

/// Part of OffsetFetchRequest (present in versions 1-7).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchRequestTopic {
    /// The topic name (versions 0-7).
    pub name: String,
    /// The partition indexes we would like to fetch offsets for (versions 0-7).
    pub partition_indexes: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetFetchRequestTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchRequest::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, partition_indexes) = read_array(input, flexible, 4, primitives::int32)?;
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
                partition_indexes,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        write_array(buf, &self.partition_indexes, flexible, |buf, e| {
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
                "OffsetFetchRequestTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetFetchRequest (present in versions 8-10).
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetchRequestGroup {
    /// The group ID (versions 8+).
    pub group_id: String,
    /// The member id (versions 9+, nullable 9+, default null).
    pub member_id: Option<String>,
    /// The member epoch if using the new consumer protocol (KIP-848) (versions 9+, default -1).
    pub member_epoch: i32,
    /// Each topic we would like to fetch offsets for, or null to fetch offsets for all topics (versions 8+, nullable 8+).
    pub topics: Option<Vec<OffsetFetchRequestTopics>>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for OffsetFetchRequestGroup {
    fn default() -> Self {
        Self {
            group_id: String::new(),
            member_id: None,
            member_epoch: -1,
            topics: Some(Vec::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl OffsetFetchRequestGroup {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        if version >= 9 {
            size += if flexible { 1 } else { 2 };
        }
        if version >= 9 {
            size += 4;
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchRequest::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, member_id) = if version >= 9 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, member_epoch) = if version >= 9 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, topics) = read_nullable_array(
            input,
            flexible,
            true,
            OffsetFetchRequestTopics::min_encoded_size(version),
            |i| OffsetFetchRequestTopics::decode_from(i, root, version),
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
                member_id,
                member_epoch,
                topics,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        if version >= 9 {
            write_nullable_string(
                buf,
                self.member_id.as_deref(),
                flexible,
                true,
                at(NAME_REQUEST, version, "OffsetFetchRequestGroup.member_id"),
            )?;
        } else if self.member_id.is_some() {
            return Err(
                at(NAME_REQUEST, version, "OffsetFetchRequestGroup.member_id").not_at_version(),
            );
        }
        if version >= 9 {
            buf.put_i32(self.member_epoch);
        } else if self.member_epoch != -1 {
            return Err(at(
                NAME_REQUEST,
                version,
                "OffsetFetchRequestGroup.member_epoch",
            )
            .not_at_version());
        }
        write_nullable_array(
            buf,
            self.topics.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "OffsetFetchRequestGroup.topics"),
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
                "OffsetFetchRequestGroup.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetFetchRequest (present in versions 8-10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchRequestTopics {
    /// The topic name (versions 8-9).
    pub name: String,
    /// The topic ID (versions 10+).
    pub topic_id: Uuid,
    /// The partition indexes we would like to fetch offsets for (versions 8+).
    pub partition_indexes: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetFetchRequestTopics {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchRequest::is_flexible(version);
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
        let flexible = OffsetFetchRequest::is_flexible(version);
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
        let (input, partition_indexes) = read_array(input, flexible, 4, primitives::int32)?;
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
                partition_indexes,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchRequest::is_flexible(version);
        if version <= 9 {
            primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        } else if !self.name.is_empty() {
            return Err(at(NAME_REQUEST, version, "OffsetFetchRequestTopics.name").not_at_version());
        }
        if version >= 10 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_REQUEST, version, "OffsetFetchRequestTopics.topic_id").not_at_version(),
            );
        }
        write_array(buf, &self.partition_indexes, flexible, |buf, e| {
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
                "OffsetFetchRequestTopics.unknown_tagged_fields",
            ),
        )
    }
}

/// OffsetFetchResponse (API key 9): versions 1-10, flexible 6-10.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 3+).
    pub throttle_time_ms: i32,
    /// The responses per topic (versions 0-7).
    pub topics: Vec<OffsetFetchResponseTopic>,
    /// The top-level error code, or 0 if there was no error (versions 2-7, default 0).
    pub error_code: i16,
    /// The responses per group id (versions 8+).
    pub groups: Vec<OffsetFetchResponseGroup>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetFetchResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 3 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, topics) = if version <= 7 {
            read_array(
                input,
                flexible,
                OffsetFetchResponseTopic::min_encoded_size(version),
                |i| OffsetFetchResponseTopic::decode_from(i, root, version),
            )?
        } else {
            (input, Vec::new())
        };
        let (input, error_code) = if (2..=7).contains(&version) {
            primitives::int16(input)?
        } else {
            (input, 0)
        };
        let (input, groups) = if version >= 8 {
            read_array(
                input,
                flexible,
                OffsetFetchResponseGroup::min_encoded_size(version),
                |i| OffsetFetchResponseGroup::decode_from(i, root, version),
            )?
        } else {
            (input, Vec::new())
        };
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
                error_code,
                groups,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        if version >= 3 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        if version <= 7 {
            write_array(buf, &self.topics, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.topics.is_empty() {
            return Err(at(NAME_RESPONSE, version, "topics").not_at_version());
        }
        if (2..=7).contains(&version) {
            buf.put_i16(self.error_code);
        } else if self.error_code != 0 {
            return Err(at(NAME_RESPONSE, version, "error_code").not_at_version());
        }
        if version >= 8 {
            write_array(buf, &self.groups, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.groups.is_empty() {
            return Err(at(NAME_RESPONSE, version, "groups").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for OffsetFetchResponse {
    const NAME: &'static str = "OffsetFetchResponse";
    const API_KEY: i16 = 9;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 10;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(6);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for OffsetFetchResponse {
    type Request = OffsetFetchRequest;
}

/// Part of OffsetFetchResponse (present in versions 1-7).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponseTopic {
    /// The topic name (versions 0-7).
    pub name: String,
    /// The responses per partition (versions 0-7).
    pub partitions: Vec<OffsetFetchResponsePartition>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetFetchResponseTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, partitions) = read_array(
            input,
            flexible,
            OffsetFetchResponsePartition::min_encoded_size(version),
            |i| OffsetFetchResponsePartition::decode_from(i, root, version),
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
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
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
                "OffsetFetchResponseTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetFetchResponse (present in versions 1-7).
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetchResponsePartition {
    /// The partition index (versions 0-7).
    pub partition_index: i32,
    /// The committed message offset (versions 0-7).
    pub committed_offset: i64,
    /// The leader epoch (versions 5-7, default -1).
    pub committed_leader_epoch: i32,
    /// The partition metadata (versions 0-7, nullable 0-7).
    pub metadata: Option<String>,
    /// The error code, or 0 if there was no error (versions 0-7).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for OffsetFetchResponsePartition {
    fn default() -> Self {
        Self {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            metadata: Some(String::new()),
            error_code: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl OffsetFetchResponsePartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 8;
        if version >= 5 {
            size += 4;
        }
        size += if flexible { 1 } else { 2 };
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, committed_offset) = primitives::int64(input)?;
        let (input, committed_leader_epoch) = if version >= 5 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, metadata) = read_nullable_string(input, flexible, true)?;
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
                committed_offset,
                committed_leader_epoch,
                metadata,
                error_code,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i64(self.committed_offset);
        if version >= 5 {
            buf.put_i32(self.committed_leader_epoch);
        } else if self.committed_leader_epoch != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "OffsetFetchResponsePartition.committed_leader_epoch",
            )
            .not_at_version());
        }
        write_nullable_string(
            buf,
            self.metadata.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "OffsetFetchResponsePartition.metadata",
            ),
        )?;
        buf.put_i16(self.error_code);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "OffsetFetchResponsePartition.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetFetchResponse (present in versions 8-10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponseGroup {
    /// The group ID (versions 8+).
    pub group_id: String,
    /// The responses per topic (versions 8+).
    pub topics: Vec<OffsetFetchResponseTopics>,
    /// The group-level error code, or 0 if there was no error (versions 8+, default 0).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetFetchResponseGroup {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, topics) = read_array(
            input,
            flexible,
            OffsetFetchResponseTopics::min_encoded_size(version),
            |i| OffsetFetchResponseTopics::decode_from(i, root, version),
        )?;
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
                group_id,
                topics,
                error_code,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        write_array(buf, &self.topics, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        buf.put_i16(self.error_code);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "OffsetFetchResponseGroup.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetFetchResponse (present in versions 8-10).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponseTopics {
    /// The topic name (versions 8-9).
    pub name: String,
    /// The topic ID (versions 10+).
    pub topic_id: Uuid,
    /// The responses per partition (versions 8+).
    pub partitions: Vec<OffsetFetchResponsePartitions>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl OffsetFetchResponseTopics {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchResponse::is_flexible(version);
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
        let flexible = OffsetFetchResponse::is_flexible(version);
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
            OffsetFetchResponsePartitions::min_encoded_size(version),
            |i| OffsetFetchResponsePartitions::decode_from(i, root, version),
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
        let flexible = OffsetFetchResponse::is_flexible(version);
        if version <= 9 {
            primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        } else if !self.name.is_empty() {
            return Err(
                at(NAME_RESPONSE, version, "OffsetFetchResponseTopics.name").not_at_version()
            );
        }
        if version >= 10 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_RESPONSE, version, "OffsetFetchResponseTopics.topic_id").not_at_version(),
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
                "OffsetFetchResponseTopics.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of OffsetFetchResponse (present in versions 8-10).
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetchResponsePartitions {
    /// The partition index (versions 8+).
    pub partition_index: i32,
    /// The committed message offset (versions 8+).
    pub committed_offset: i64,
    /// The leader epoch (versions 8+, default -1).
    pub committed_leader_epoch: i32,
    /// The partition metadata (versions 8+, nullable 8+).
    pub metadata: Option<String>,
    /// The partition-level error code, or 0 if there was no error (versions 8+).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for OffsetFetchResponsePartitions {
    fn default() -> Self {
        Self {
            partition_index: 0,
            committed_offset: 0,
            committed_leader_epoch: -1,
            metadata: Some(String::new()),
            error_code: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl OffsetFetchResponsePartitions {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 8;
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, committed_offset) = primitives::int64(input)?;
        let (input, committed_leader_epoch) = primitives::int32(input)?;
        let (input, metadata) = read_nullable_string(input, flexible, true)?;
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
                committed_offset,
                committed_leader_epoch,
                metadata,
                error_code,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = OffsetFetchResponse::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i64(self.committed_offset);
        buf.put_i32(self.committed_leader_epoch);
        write_nullable_string(
            buf,
            self.metadata.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "OffsetFetchResponsePartitions.metadata",
            ),
        )?;
        buf.put_i16(self.error_code);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "OffsetFetchResponsePartitions.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_offset_fetch_request(g: &mut Gen, version: i16) -> OffsetFetchRequest {
        let flexible = OffsetFetchRequest::is_flexible(version);
        OffsetFetchRequest {
            group_id: if version <= 7 {
                g.string()
            } else {
                String::new()
            },
            topics: if version <= 7 {
                if version >= 2 {
                    g.option(|g| g.vec(|g| arb_offset_fetch_request_topic(g, version)))
                } else {
                    Some(g.vec(|g| arb_offset_fetch_request_topic(g, version)))
                }
            } else {
                Some(Vec::new())
            },
            groups: if version >= 8 {
                g.vec(|g| arb_offset_fetch_request_group(g, version))
            } else {
                Vec::new()
            },
            require_stable: if version >= 7 { g.bool() } else { false },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_request_topic(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchRequestTopic {
        let flexible = OffsetFetchRequest::is_flexible(version);
        OffsetFetchRequestTopic {
            name: g.string(),
            partition_indexes: g.vec(|g| g.i32()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_request_group(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchRequestGroup {
        let flexible = OffsetFetchRequest::is_flexible(version);
        OffsetFetchRequestGroup {
            group_id: g.string(),
            member_id: if version >= 9 {
                g.option(|g| g.string())
            } else {
                None
            },
            member_epoch: if version >= 9 { g.i32() } else { -1 },
            topics: g.option(|g| g.vec(|g| arb_offset_fetch_request_topics(g, version))),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_request_topics(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchRequestTopics {
        let flexible = OffsetFetchRequest::is_flexible(version);
        OffsetFetchRequestTopics {
            name: if version <= 9 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 10 { g.uuid() } else { Uuid::NIL },
            partition_indexes: g.vec(|g| g.i32()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_response(g: &mut Gen, version: i16) -> OffsetFetchResponse {
        let flexible = OffsetFetchResponse::is_flexible(version);
        OffsetFetchResponse {
            throttle_time_ms: if version >= 3 { g.i32() } else { 0 },
            topics: if version <= 7 {
                g.vec(|g| arb_offset_fetch_response_topic(g, version))
            } else {
                Vec::new()
            },
            error_code: if (2..=7).contains(&version) {
                g.i16()
            } else {
                0
            },
            groups: if version >= 8 {
                g.vec(|g| arb_offset_fetch_response_group(g, version))
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_response_topic(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchResponseTopic {
        let flexible = OffsetFetchResponse::is_flexible(version);
        OffsetFetchResponseTopic {
            name: g.string(),
            partitions: g.vec(|g| arb_offset_fetch_response_partition(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_response_partition(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchResponsePartition {
        let flexible = OffsetFetchResponse::is_flexible(version);
        OffsetFetchResponsePartition {
            partition_index: g.i32(),
            committed_offset: g.i64(),
            committed_leader_epoch: if version >= 5 { g.i32() } else { -1 },
            metadata: g.option(|g| g.string()),
            error_code: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_response_group(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchResponseGroup {
        let flexible = OffsetFetchResponse::is_flexible(version);
        OffsetFetchResponseGroup {
            group_id: g.string(),
            topics: g.vec(|g| arb_offset_fetch_response_topics(g, version)),
            error_code: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_response_topics(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchResponseTopics {
        let flexible = OffsetFetchResponse::is_flexible(version);
        OffsetFetchResponseTopics {
            name: if version <= 9 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 10 { g.uuid() } else { Uuid::NIL },
            partitions: g.vec(|g| arb_offset_fetch_response_partitions(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_offset_fetch_response_partitions(
        g: &mut Gen,
        version: i16,
    ) -> OffsetFetchResponsePartitions {
        let flexible = OffsetFetchResponse::is_flexible(version);
        OffsetFetchResponsePartitions {
            partition_index: g.i32(),
            committed_offset: g.i64(),
            committed_leader_epoch: g.i32(),
            metadata: g.option(|g| g.string()),
            error_code: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn offset_fetch_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_offset_fetch_request)?;
        }

        #[test]
        fn offset_fetch_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_offset_fetch_request)?;
        }

        #[test]
        fn offset_fetch_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_offset_fetch_response)?;
        }

        #[test]
        fn offset_fetch_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_offset_fetch_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 1..=7 {
            let mut buf = BytesMut::new();
            OffsetFetchRequestTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchRequestTopic::min_encoded_size(version),
                "OffsetFetchRequestTopic v{version}"
            );
        }
        for version in 8..=10 {
            let mut buf = BytesMut::new();
            OffsetFetchRequestGroup::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchRequestGroup::min_encoded_size(version),
                "OffsetFetchRequestGroup v{version}"
            );
        }
        for version in 8..=10 {
            let mut buf = BytesMut::new();
            OffsetFetchRequestTopics::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchRequestTopics::min_encoded_size(version),
                "OffsetFetchRequestTopics v{version}"
            );
        }
        for version in 1..=7 {
            let mut buf = BytesMut::new();
            OffsetFetchResponseTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchResponseTopic::min_encoded_size(version),
                "OffsetFetchResponseTopic v{version}"
            );
        }
        for version in 1..=7 {
            let mut buf = BytesMut::new();
            OffsetFetchResponsePartition::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchResponsePartition::min_encoded_size(version),
                "OffsetFetchResponsePartition v{version}"
            );
        }
        for version in 8..=10 {
            let mut buf = BytesMut::new();
            OffsetFetchResponseGroup::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchResponseGroup::min_encoded_size(version),
                "OffsetFetchResponseGroup v{version}"
            );
        }
        for version in 8..=10 {
            let mut buf = BytesMut::new();
            OffsetFetchResponseTopics::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchResponseTopics::min_encoded_size(version),
                "OffsetFetchResponseTopics v{version}"
            );
        }
        for version in 8..=10 {
            let mut buf = BytesMut::new();
            OffsetFetchResponsePartitions::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                OffsetFetchResponsePartitions::min_encoded_size(version),
                "OffsetFetchResponsePartitions v{version}"
            );
        }
    }
}
