//! ShareFetch: `ShareFetchRequest` and `ShareFetchResponse` (API key 78), generated from Kafka 4.4.0's `ShareFetchRequest.json` and `ShareFetchResponse.json`.
//!
//! Request versions 1-2, flexible 1-2; response versions 1-2, flexible 1-2.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_records,
    read_nullable_string, read_string, share, write_array, write_nullable_bytes,
    write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "ShareFetchRequest";
const NAME_RESPONSE: &str = "ShareFetchResponse";

/// ShareFetchRequest (API key 78): versions 1-2, flexible 1-2.
#[derive(Debug, Clone, PartialEq)]
pub struct ShareFetchRequest {
    /// The group identifier (versions 0+, nullable 0+, default null).
    pub group_id: Option<String>,
    /// The member ID (versions 0+, nullable 0+).
    pub member_id: Option<String>,
    /// The current share session epoch: 0 to open a share session; -1 to close it; otherwise increments for consecutive requests (versions 0+).
    pub share_session_epoch: i32,
    /// The maximum time in milliseconds to wait for the response (versions 0+).
    pub max_wait_ms: i32,
    /// The minimum bytes to accumulate in the response (versions 0+).
    pub min_bytes: i32,
    /// The maximum bytes to fetch. See KIP-74 for cases where this limit may not be honored (versions 0+, default 0x7fffffff).
    pub max_bytes: i32,
    /// The maximum number of records to fetch. This limit can be exceeded for alignment of batch boundaries (versions 1+).
    pub max_records: i32,
    /// The optimal number of records for batches of acquired records and acknowledgements (versions 1+).
    pub batch_size: i32,
    /// The acquire mode to control the fetch behavior - 0:batch-optimized,1:record-limit (versions 2+, default 0).
    pub share_acquire_mode: i8,
    /// Whether Renew type acknowledgements present in AcknowledgementBatches (versions 2+, default false).
    pub is_renew_ack: bool,
    /// The topics to fetch (versions 0+).
    pub topics: Vec<FetchTopic>,
    /// The partitions to remove from this share session (versions 0+).
    pub forgotten_topics_data: Vec<ForgottenTopic>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for ShareFetchRequest {
    fn default() -> Self {
        Self {
            group_id: None,
            member_id: Some(String::new()),
            share_session_epoch: 0,
            max_wait_ms: 0,
            min_bytes: 0,
            max_bytes: i32::MAX,
            max_records: 0,
            batch_size: 0,
            share_acquire_mode: 0,
            is_renew_ack: false,
            topics: Vec::new(),
            forgotten_topics_data: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ShareFetchRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchRequest::is_flexible(version);
        let (input, group_id) = read_nullable_string(input, flexible, true)?;
        let (input, member_id) = read_nullable_string(input, flexible, true)?;
        let (input, share_session_epoch) = primitives::int32(input)?;
        let (input, max_wait_ms) = primitives::int32(input)?;
        let (input, min_bytes) = primitives::int32(input)?;
        let (input, max_bytes) = primitives::int32(input)?;
        let (input, max_records) = primitives::int32(input)?;
        let (input, batch_size) = primitives::int32(input)?;
        let (input, share_acquire_mode) = if version >= 2 {
            primitives::int8(input)?
        } else {
            (input, 0)
        };
        let (input, is_renew_ack) = if version >= 2 {
            primitives::boolean(input)?
        } else {
            (input, false)
        };
        let (input, topics) = read_array(
            input,
            flexible,
            FetchTopic::min_encoded_size(version),
            |i| FetchTopic::decode_from(i, root, version),
        )?;
        let (input, forgotten_topics_data) = read_array(
            input,
            flexible,
            ForgottenTopic::min_encoded_size(version),
            |i| ForgottenTopic::decode_from(i, root, version),
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
                share_session_epoch,
                max_wait_ms,
                min_bytes,
                max_bytes,
                max_records,
                batch_size,
                share_acquire_mode,
                is_renew_ack,
                topics,
                forgotten_topics_data,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchRequest::is_flexible(version);
        write_nullable_string(
            buf,
            self.group_id.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "group_id"),
        )?;
        write_nullable_string(
            buf,
            self.member_id.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "member_id"),
        )?;
        buf.put_i32(self.share_session_epoch);
        buf.put_i32(self.max_wait_ms);
        buf.put_i32(self.min_bytes);
        buf.put_i32(self.max_bytes);
        buf.put_i32(self.max_records);
        buf.put_i32(self.batch_size);
        if version >= 2 {
            buf.put_i8(self.share_acquire_mode);
        } else if self.share_acquire_mode != 0 {
            return Err(at(NAME_REQUEST, version, "share_acquire_mode").not_at_version());
        }
        if version >= 2 {
            buf.put_i8(i8::from(self.is_renew_ack));
        } else if self.is_renew_ack {
            return Err(at(NAME_REQUEST, version, "is_renew_ack").not_at_version());
        }
        write_array(buf, &self.topics, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        write_array(buf, &self.forgotten_topics_data, flexible, |buf, e| {
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

impl Message for ShareFetchRequest {
    const NAME: &'static str = "ShareFetchRequest";
    const API_KEY: i16 = 78;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 2;
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

impl Request for ShareFetchRequest {
    type Response = ShareFetchResponse;
}

/// Part of ShareFetchRequest (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchTopic {
    /// The unique topic ID (versions 0+).
    pub topic_id: Uuid,
    /// The partitions to fetch (versions 0+).
    pub partitions: Vec<FetchPartition>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl FetchTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 16;
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchRequest::is_flexible(version);
        let (input, topic_id) = primitives::uuid(input)?;
        let (input, partitions) = read_array(
            input,
            flexible,
            FetchPartition::min_encoded_size(version),
            |i| FetchPartition::decode_from(i, root, version),
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
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchRequest::is_flexible(version);
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
            at(NAME_REQUEST, version, "FetchTopic.unknown_tagged_fields"),
        )
    }
}

/// Part of ShareFetchRequest (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchPartition {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The maximum bytes to fetch from this partition. 0 when only acknowledgement with no fetching is required. See KIP-74 for cases where this limit may not be honored (versions 0).
    pub partition_max_bytes: i32,
    /// Record batches to acknowledge (versions 0+).
    pub acknowledgement_batches: Vec<AcknowledgementBatch>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl FetchPartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        if false {
            size += 4;
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchRequest::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, partition_max_bytes) = if false {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, acknowledgement_batches) = read_array(
            input,
            flexible,
            AcknowledgementBatch::min_encoded_size(version),
            |i| AcknowledgementBatch::decode_from(i, root, version),
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
                partition_index,
                partition_max_bytes,
                acknowledgement_batches,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchRequest::is_flexible(version);
        buf.put_i32(self.partition_index);
        if false {
            buf.put_i32(self.partition_max_bytes);
        } else if self.partition_max_bytes != 0 {
            return Err(
                at(NAME_REQUEST, version, "FetchPartition.partition_max_bytes").not_at_version(),
            );
        }
        write_array(buf, &self.acknowledgement_batches, flexible, |buf, e| {
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
                "FetchPartition.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareFetchRequest (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AcknowledgementBatch {
    /// First offset of batch of records to acknowledge (versions 0+).
    pub first_offset: i64,
    /// Last offset (inclusive) of batch of records to acknowledge (versions 0+).
    pub last_offset: i64,
    /// Array of acknowledge types - 0:Gap,1:Accept,2:Release,3:Reject,4:Renew (versions 0+).
    pub acknowledge_types: Vec<i8>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl AcknowledgementBatch {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 8;
        size += 8;
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchRequest::is_flexible(version);
        let (input, first_offset) = primitives::int64(input)?;
        let (input, last_offset) = primitives::int64(input)?;
        let (input, acknowledge_types) = read_array(input, flexible, 1, primitives::int8)?;
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
                first_offset,
                last_offset,
                acknowledge_types,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchRequest::is_flexible(version);
        buf.put_i64(self.first_offset);
        buf.put_i64(self.last_offset);
        write_array(buf, &self.acknowledge_types, flexible, |buf, e| {
            buf.put_i8(*e);
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
                "AcknowledgementBatch.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareFetchRequest (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ForgottenTopic {
    /// The unique topic ID (versions 0+).
    pub topic_id: Uuid,
    /// The partitions indexes to forget (versions 0+).
    pub partitions: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ForgottenTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 16;
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchRequest::is_flexible(version);
        let (input, topic_id) = primitives::uuid(input)?;
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
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchRequest::is_flexible(version);
        buf.put_slice(&self.topic_id.0);
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
                "ForgottenTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// ShareFetchResponse (API key 78): versions 1-2, flexible 1-2.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShareFetchResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 0+).
    pub throttle_time_ms: i32,
    /// The top-level response error code (versions 0+).
    pub error_code: i16,
    /// The top-level error message, or null if there was no error (versions 0+, nullable 0+, default null).
    pub error_message: Option<String>,
    /// The time in milliseconds for which the acquired records are locked (versions 1+).
    pub acquisition_lock_timeout_ms: i32,
    /// The response topics (versions 0+).
    pub responses: Vec<ShareFetchableTopicResponse>,
    /// Endpoints for all current leaders enumerated in PartitionData with error NOT_LEADER_OR_FOLLOWER (versions 0+).
    pub node_endpoints: Vec<NodeEndpoint>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ShareFetchResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
        let (input, acquisition_lock_timeout_ms) = primitives::int32(input)?;
        let (input, responses) = read_array(
            input,
            flexible,
            ShareFetchableTopicResponse::min_encoded_size(version),
            |i| ShareFetchableTopicResponse::decode_from(i, root, version),
        )?;
        let (input, node_endpoints) = read_array(
            input,
            flexible,
            NodeEndpoint::min_encoded_size(version),
            |i| NodeEndpoint::decode_from(i, root, version),
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
                error_code,
                error_message,
                acquisition_lock_timeout_ms,
                responses,
                node_endpoints,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "error_message"),
        )?;
        buf.put_i32(self.acquisition_lock_timeout_ms);
        write_array(buf, &self.responses, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        write_array(buf, &self.node_endpoints, flexible, |buf, e| {
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

impl Message for ShareFetchResponse {
    const NAME: &'static str = "ShareFetchResponse";
    const API_KEY: i16 = 78;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 2;
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

impl Response for ShareFetchResponse {
    type Request = ShareFetchRequest;
}

/// Part of ShareFetchResponse (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShareFetchableTopicResponse {
    /// The unique topic ID (versions 0+).
    pub topic_id: Uuid,
    /// The topic partitions (versions 0+).
    pub partitions: Vec<PartitionData>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ShareFetchableTopicResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 16;
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchResponse::is_flexible(version);
        let (input, topic_id) = primitives::uuid(input)?;
        let (input, partitions) = read_array(
            input,
            flexible,
            PartitionData::min_encoded_size(version),
            |i| PartitionData::decode_from(i, root, version),
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
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchResponse::is_flexible(version);
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
                "ShareFetchableTopicResponse.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareFetchResponse (present in versions 1-2).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionData {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The fetch error code, or 0 if there was no fetch error (versions 0+).
    pub error_code: i16,
    /// The fetch error message, or null if there was no fetch error (versions 0+, nullable 0+, default null).
    pub error_message: Option<String>,
    /// The acknowledge error code, or 0 if there was no acknowledge error (versions 0+).
    pub acknowledge_error_code: i16,
    /// The acknowledge error message, or null if there was no acknowledge error (versions 0+, nullable 0+, default null).
    pub acknowledge_error_message: Option<String>,
    /// The current leader of the partition (versions 0+).
    pub current_leader: LeaderIdAndEpoch,
    /// The record data (versions 0+, nullable 0).
    pub records: Option<Bytes>,
    /// The acquired records (versions 0+).
    pub acquired_records: Vec<AcquiredRecords>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for PartitionData {
    fn default() -> Self {
        Self {
            partition_index: 0,
            error_code: 0,
            error_message: None,
            acknowledge_error_code: 0,
            acknowledge_error_message: None,
            current_leader: LeaderIdAndEpoch::default(),
            records: Some(Bytes::new()),
            acquired_records: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl PartitionData {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 2;
        size += if flexible { 1 } else { 2 };
        size += 2;
        size += if flexible { 1 } else { 2 };
        size += LeaderIdAndEpoch::min_encoded_size(version);
        size += if flexible { 1 } else { 4 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchResponse::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
        let (input, acknowledge_error_code) = primitives::int16(input)?;
        let (input, acknowledge_error_message) = read_nullable_string(input, flexible, true)?;
        let (input, current_leader) = LeaderIdAndEpoch::decode_from(input, root, version)?;
        let (input, records) = read_nullable_records(input, root, flexible, false)?;
        let (input, acquired_records) = read_array(
            input,
            flexible,
            AcquiredRecords::min_encoded_size(version),
            |i| AcquiredRecords::decode_from(i, root, version),
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
                partition_index,
                error_code,
                error_message,
                acknowledge_error_code,
                acknowledge_error_message,
                current_leader,
                records,
                acquired_records,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchResponse::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "PartitionData.error_message"),
        )?;
        buf.put_i16(self.acknowledge_error_code);
        write_nullable_string(
            buf,
            self.acknowledge_error_message.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "PartitionData.acknowledge_error_message",
            ),
        )?;
        self.current_leader.encode_into(buf, version)?;
        write_nullable_bytes(
            buf,
            self.records.as_deref(),
            flexible,
            false,
            at(NAME_RESPONSE, version, "PartitionData.records"),
        )?;
        write_array(buf, &self.acquired_records, flexible, |buf, e| {
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
                "PartitionData.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareFetchResponse (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LeaderIdAndEpoch {
    /// The ID of the current leader or -1 if the leader is unknown (versions 0+).
    pub leader_id: i32,
    /// The latest known leader epoch (versions 0+).
    pub leader_epoch: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl LeaderIdAndEpoch {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 4;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchResponse::is_flexible(version);
        let (input, leader_id) = primitives::int32(input)?;
        let (input, leader_epoch) = primitives::int32(input)?;
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
                leader_id,
                leader_epoch,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchResponse::is_flexible(version);
        buf.put_i32(self.leader_id);
        buf.put_i32(self.leader_epoch);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "LeaderIdAndEpoch.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareFetchResponse (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AcquiredRecords {
    /// The earliest offset in this batch of acquired records (versions 0+).
    pub first_offset: i64,
    /// The last offset of this batch of acquired records (versions 0+).
    pub last_offset: i64,
    /// The delivery count of this batch of acquired records (versions 0+).
    pub delivery_count: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl AcquiredRecords {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 8;
        size += 8;
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchResponse::is_flexible(version);
        let (input, first_offset) = primitives::int64(input)?;
        let (input, last_offset) = primitives::int64(input)?;
        let (input, delivery_count) = primitives::int16(input)?;
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
                first_offset,
                last_offset,
                delivery_count,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchResponse::is_flexible(version);
        buf.put_i64(self.first_offset);
        buf.put_i64(self.last_offset);
        buf.put_i16(self.delivery_count);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "AcquiredRecords.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ShareFetchResponse (present in versions 1-2).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeEndpoint {
    /// The ID of the associated node (versions 0+).
    pub node_id: i32,
    /// The node's hostname (versions 0+).
    pub host: String,
    /// The node's port (versions 0+).
    pub port: i32,
    /// The rack of the node, or null if it has not been assigned to a rack (versions 0+, nullable 0+, default null).
    pub rack: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl NodeEndpoint {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ShareFetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ShareFetchResponse::is_flexible(version);
        let (input, node_id) = primitives::int32(input)?;
        let (input, host) = read_string(input, flexible)?;
        let (input, port) = primitives::int32(input)?;
        let (input, rack) = read_nullable_string(input, flexible, true)?;
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
                node_id,
                host,
                port,
                rack,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ShareFetchResponse::is_flexible(version);
        buf.put_i32(self.node_id);
        primitives::put_str(buf, Some(self.host.as_str()), flexible)?;
        buf.put_i32(self.port);
        write_nullable_string(
            buf,
            self.rack.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "NodeEndpoint.rack"),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "NodeEndpoint.unknown_tagged_fields"),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_share_fetch_request(g: &mut Gen, version: i16) -> ShareFetchRequest {
        let flexible = ShareFetchRequest::is_flexible(version);
        ShareFetchRequest {
            group_id: g.option(|g| g.string()),
            member_id: g.option(|g| g.string()),
            share_session_epoch: g.i32(),
            max_wait_ms: g.i32(),
            min_bytes: g.i32(),
            max_bytes: g.i32(),
            max_records: g.i32(),
            batch_size: g.i32(),
            share_acquire_mode: if version >= 2 { g.i8() } else { 0 },
            is_renew_ack: if version >= 2 { g.bool() } else { false },
            topics: g.vec(|g| arb_fetch_topic(g, version)),
            forgotten_topics_data: g.vec(|g| arb_forgotten_topic(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_fetch_topic(g: &mut Gen, version: i16) -> FetchTopic {
        let flexible = ShareFetchRequest::is_flexible(version);
        FetchTopic {
            topic_id: g.uuid(),
            partitions: g.vec(|g| arb_fetch_partition(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_fetch_partition(g: &mut Gen, version: i16) -> FetchPartition {
        let flexible = ShareFetchRequest::is_flexible(version);
        FetchPartition {
            partition_index: g.i32(),
            partition_max_bytes: if false { g.i32() } else { 0 },
            acknowledgement_batches: g.vec(|g| arb_acknowledgement_batch(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_acknowledgement_batch(g: &mut Gen, version: i16) -> AcknowledgementBatch {
        let flexible = ShareFetchRequest::is_flexible(version);
        AcknowledgementBatch {
            first_offset: g.i64(),
            last_offset: g.i64(),
            acknowledge_types: g.vec(|g| g.i8()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_forgotten_topic(g: &mut Gen, version: i16) -> ForgottenTopic {
        let flexible = ShareFetchRequest::is_flexible(version);
        ForgottenTopic {
            topic_id: g.uuid(),
            partitions: g.vec(|g| g.i32()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_share_fetch_response(g: &mut Gen, version: i16) -> ShareFetchResponse {
        let flexible = ShareFetchResponse::is_flexible(version);
        ShareFetchResponse {
            throttle_time_ms: g.i32(),
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            acquisition_lock_timeout_ms: g.i32(),
            responses: g.vec(|g| arb_share_fetchable_topic_response(g, version)),
            node_endpoints: g.vec(|g| arb_node_endpoint(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_share_fetchable_topic_response(
        g: &mut Gen,
        version: i16,
    ) -> ShareFetchableTopicResponse {
        let flexible = ShareFetchResponse::is_flexible(version);
        ShareFetchableTopicResponse {
            topic_id: g.uuid(),
            partitions: g.vec(|g| arb_partition_data(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_partition_data(g: &mut Gen, version: i16) -> PartitionData {
        let flexible = ShareFetchResponse::is_flexible(version);
        PartitionData {
            partition_index: g.i32(),
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            acknowledge_error_code: g.i16(),
            acknowledge_error_message: g.option(|g| g.string()),
            current_leader: arb_leader_id_and_epoch(g, version),
            records: Some(g.bytes()),
            acquired_records: g.vec(|g| arb_acquired_records(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_leader_id_and_epoch(g: &mut Gen, version: i16) -> LeaderIdAndEpoch {
        let flexible = ShareFetchResponse::is_flexible(version);
        LeaderIdAndEpoch {
            leader_id: g.i32(),
            leader_epoch: g.i32(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_acquired_records(g: &mut Gen, version: i16) -> AcquiredRecords {
        let flexible = ShareFetchResponse::is_flexible(version);
        AcquiredRecords {
            first_offset: g.i64(),
            last_offset: g.i64(),
            delivery_count: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_node_endpoint(g: &mut Gen, version: i16) -> NodeEndpoint {
        let flexible = ShareFetchResponse::is_flexible(version);
        NodeEndpoint {
            node_id: g.i32(),
            host: g.string(),
            port: g.i32(),
            rack: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn share_fetch_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_share_fetch_request)?;
        }

        #[test]
        fn share_fetch_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_share_fetch_request)?;
        }

        #[test]
        fn share_fetch_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_share_fetch_response)?;
        }

        #[test]
        fn share_fetch_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_share_fetch_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            FetchTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                FetchTopic::min_encoded_size(version),
                "FetchTopic v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            FetchPartition::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                FetchPartition::min_encoded_size(version),
                "FetchPartition v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            AcknowledgementBatch::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                AcknowledgementBatch::min_encoded_size(version),
                "AcknowledgementBatch v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            ForgottenTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ForgottenTopic::min_encoded_size(version),
                "ForgottenTopic v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            ShareFetchableTopicResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ShareFetchableTopicResponse::min_encoded_size(version),
                "ShareFetchableTopicResponse v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            PartitionData::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                PartitionData::min_encoded_size(version),
                "PartitionData v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            LeaderIdAndEpoch::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                LeaderIdAndEpoch::min_encoded_size(version),
                "LeaderIdAndEpoch v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            AcquiredRecords::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                AcquiredRecords::min_encoded_size(version),
                "AcquiredRecords v{version}"
            );
        }
        for version in 1..=2 {
            let mut buf = BytesMut::new();
            NodeEndpoint::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                NodeEndpoint::min_encoded_size(version),
                "NodeEndpoint v{version}"
            );
        }
    }
}
