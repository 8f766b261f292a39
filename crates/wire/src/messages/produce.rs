//! Produce: `ProduceRequest` and `ProduceResponse` (API key 0), generated from Kafka 4.4.0's `ProduceRequest.json` and `ProduceResponse.json`.
//!
//! Request versions 3-13, flexible 9-13; response versions 3-13, flexible 9-13.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_records,
    read_nullable_string, read_string, read_tagged, share, write_array, write_nullable_bytes,
    write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "ProduceRequest";
const NAME_RESPONSE: &str = "ProduceResponse";

/// ProduceRequest (API key 0): versions 3-13, flexible 9-13.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceRequest {
    /// The transactional ID, or null if the producer is not transactional (versions 3+, nullable 3+, default null).
    pub transactional_id: Option<String>,
    /// The number of acknowledgments the producer requires the leader to have received before considering a request complete. Allowed values: 0 for no acknowledgments, 1 for only the leader and -1 for the full ISR (versions 0+).
    pub acks: i16,
    /// The timeout to await a response in milliseconds (versions 0+).
    pub timeout_ms: i32,
    /// Each topic to produce to (versions 0+).
    pub topic_data: Vec<TopicProduceData>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ProduceRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceRequest::is_flexible(version);
        let (input, transactional_id) = read_nullable_string(input, flexible, true)?;
        let (input, acks) = primitives::int16(input)?;
        let (input, timeout_ms) = primitives::int32(input)?;
        let (input, topic_data) = read_array(
            input,
            flexible,
            TopicProduceData::min_encoded_size(version),
            |i| TopicProduceData::decode_from(i, root, version),
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
                transactional_id,
                acks,
                timeout_ms,
                topic_data,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ProduceRequest::is_flexible(version);
        write_nullable_string(
            buf,
            self.transactional_id.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "transactional_id"),
        )?;
        buf.put_i16(self.acks);
        buf.put_i32(self.timeout_ms);
        write_array(buf, &self.topic_data, flexible, |buf, e| {
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

impl Message for ProduceRequest {
    const NAME: &'static str = "ProduceRequest";
    const API_KEY: i16 = 0;
    const MIN_VERSION: i16 = 3;
    const MAX_VERSION: i16 = 13;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(9);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for ProduceRequest {
    type Response = ProduceResponse;
}

/// Part of ProduceRequest (present in versions 3-13).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopicProduceData {
    /// The topic name (versions 0-12).
    pub name: String,
    /// The unique topic ID (versions 13+).
    pub topic_id: Uuid,
    /// Each partition to produce to (versions 0+).
    pub partition_data: Vec<PartitionProduceData>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl TopicProduceData {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ProduceRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        if version <= 12 {
            size += if flexible { 1 } else { 2 };
        }
        if version >= 13 {
            size += 16;
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceRequest::is_flexible(version);
        let (input, name) = if version <= 12 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topic_id) = if version >= 13 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, partition_data) = read_array(
            input,
            flexible,
            PartitionProduceData::min_encoded_size(version),
            |i| PartitionProduceData::decode_from(i, root, version),
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
                partition_data,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ProduceRequest::is_flexible(version);
        if version <= 12 {
            primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        } else if !self.name.is_empty() {
            return Err(at(NAME_REQUEST, version, "TopicProduceData.name").not_at_version());
        }
        if version >= 13 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(at(NAME_REQUEST, version, "TopicProduceData.topic_id").not_at_version());
        }
        write_array(buf, &self.partition_data, flexible, |buf, e| {
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
                "TopicProduceData.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ProduceRequest (present in versions 3-13).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartitionProduceData {
    /// The partition index (versions 0+).
    pub index: i32,
    /// The record data to be produced (versions 0+, nullable 0+).
    pub records: Option<Bytes>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl PartitionProduceData {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ProduceRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceRequest::is_flexible(version);
        let (input, index) = primitives::int32(input)?;
        let (input, records) = read_nullable_records(input, root, flexible, true)?;
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
                index,
                records,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ProduceRequest::is_flexible(version);
        buf.put_i32(self.index);
        write_nullable_bytes(
            buf,
            self.records.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "PartitionProduceData.records"),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "PartitionProduceData.unknown_tagged_fields",
            ),
        )
    }
}

/// ProduceResponse (API key 0): versions 3-13, flexible 9-13.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ProduceResponse {
    /// Each produce response (versions 0+).
    pub responses: Vec<TopicProduceResponse>,
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+, default 0).
    pub throttle_time_ms: i32,
    /// Endpoints for all current-leaders enumerated in PartitionProduceResponses, with errors NOT_LEADER_OR_FOLLOWER (versions 10+, tagged 10+ (tag 0)).
    pub node_endpoints: Vec<NodeEndpoint>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ProduceResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceResponse::is_flexible(version);
        let (input, responses) = read_array(
            input,
            flexible,
            TopicProduceResponse::min_encoded_size(version),
            |i| TopicProduceResponse::decode_from(i, root, version),
        )?;
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let mut node_endpoints = Vec::new();
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 10 => {
                    node_endpoints = read_tagged(value, "node_endpoints", |i| {
                        read_array(i, flexible, NodeEndpoint::min_encoded_size(version), |i| {
                            NodeEndpoint::decode_from(i, root, version)
                        })
                    })?
                }
                _ => unknown_tagged_fields.push((tag, share(root, value))),
            }
        }
        Ok((
            input,
            Self {
                responses,
                throttle_time_ms,
                node_endpoints,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ProduceResponse::is_flexible(version);
        write_array(buf, &self.responses, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        buf.put_i32(self.throttle_time_ms);
        let mut known = Vec::new();
        if version >= 10 {
            if !self.node_endpoints.is_empty() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    write_array(buf, &self.node_endpoints, flexible, |buf, e| {
                        e.encode_into(buf, version)?;
                        Ok(())
                    })?;
                }
                known.push((0, value));
            }
        } else if !self.node_endpoints.is_empty() {
            return Err(at(NAME_RESPONSE, version, "node_endpoints").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            known,
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for ProduceResponse {
    const NAME: &'static str = "ProduceResponse";
    const API_KEY: i16 = 0;
    const MIN_VERSION: i16 = 3;
    const MAX_VERSION: i16 = 13;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(9);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for ProduceResponse {
    type Request = ProduceRequest;
}

/// Part of ProduceResponse (present in versions 3-13).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TopicProduceResponse {
    /// The topic name (versions 0-12).
    pub name: String,
    /// The unique topic ID (versions 13+).
    pub topic_id: Uuid,
    /// Each partition that we produced to within the topic (versions 0+).
    pub partition_responses: Vec<PartitionProduceResponse>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl TopicProduceResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ProduceResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        if version <= 12 {
            size += if flexible { 1 } else { 2 };
        }
        if version >= 13 {
            size += 16;
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceResponse::is_flexible(version);
        let (input, name) = if version <= 12 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topic_id) = if version >= 13 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, partition_responses) = read_array(
            input,
            flexible,
            PartitionProduceResponse::min_encoded_size(version),
            |i| PartitionProduceResponse::decode_from(i, root, version),
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
                partition_responses,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ProduceResponse::is_flexible(version);
        if version <= 12 {
            primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        } else if !self.name.is_empty() {
            return Err(at(NAME_RESPONSE, version, "TopicProduceResponse.name").not_at_version());
        }
        if version >= 13 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_RESPONSE, version, "TopicProduceResponse.topic_id").not_at_version()
            );
        }
        write_array(buf, &self.partition_responses, flexible, |buf, e| {
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
                "TopicProduceResponse.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ProduceResponse (present in versions 3-13).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionProduceResponse {
    /// The partition index (versions 0+).
    pub index: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The base offset (versions 0+).
    pub base_offset: i64,
    /// The timestamp returned by broker after appending the messages. If CreateTime is used for the topic, the timestamp will be -1.  If LogAppendTime is used for the topic, the timestamp will be the broker local time when the messages are appended (versions 2+, default -1).
    pub log_append_time_ms: i64,
    /// The log start offset (versions 5+, default -1).
    pub log_start_offset: i64,
    /// The batch indices of records that caused the batch to be dropped (versions 8+).
    pub record_errors: Vec<BatchIndexAndErrorMessage>,
    /// The global error message summarizing the common root cause of the records that caused the batch to be dropped (versions 8+, nullable 8+, default null).
    pub error_message: Option<String>,
    /// The leader broker that the producer should use for future requests (versions 10+, tagged 10+ (tag 0)).
    pub current_leader: LeaderIdAndEpoch,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for PartitionProduceResponse {
    fn default() -> Self {
        Self {
            index: 0,
            error_code: 0,
            base_offset: 0,
            log_append_time_ms: -1,
            log_start_offset: -1,
            record_errors: Vec::new(),
            error_message: None,
            current_leader: LeaderIdAndEpoch::default(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl PartitionProduceResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ProduceResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 2;
        size += 8;
        size += 8;
        if version >= 5 {
            size += 8;
        }
        if version >= 8 {
            size += if flexible { 1 } else { 4 };
        }
        if version >= 8 {
            size += if flexible { 1 } else { 2 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceResponse::is_flexible(version);
        let (input, index) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, base_offset) = primitives::int64(input)?;
        let (input, log_append_time_ms) = primitives::int64(input)?;
        let (input, log_start_offset) = if version >= 5 {
            primitives::int64(input)?
        } else {
            (input, -1)
        };
        let (input, record_errors) = if version >= 8 {
            read_array(
                input,
                flexible,
                BatchIndexAndErrorMessage::min_encoded_size(version),
                |i| BatchIndexAndErrorMessage::decode_from(i, root, version),
            )?
        } else {
            (input, Vec::new())
        };
        let (input, error_message) = if version >= 8 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let mut current_leader = LeaderIdAndEpoch::default();
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 10 => {
                    current_leader =
                        read_tagged(value, "PartitionProduceResponse.current_leader", |i| {
                            LeaderIdAndEpoch::decode_from(i, root, version)
                        })?
                }
                _ => unknown_tagged_fields.push((tag, share(root, value))),
            }
        }
        Ok((
            input,
            Self {
                index,
                error_code,
                base_offset,
                log_append_time_ms,
                log_start_offset,
                record_errors,
                error_message,
                current_leader,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ProduceResponse::is_flexible(version);
        buf.put_i32(self.index);
        buf.put_i16(self.error_code);
        buf.put_i64(self.base_offset);
        buf.put_i64(self.log_append_time_ms);
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        } else if self.log_start_offset != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "PartitionProduceResponse.log_start_offset",
            )
            .not_at_version());
        }
        if version >= 8 {
            write_array(buf, &self.record_errors, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.record_errors.is_empty() {
            return Err(at(
                NAME_RESPONSE,
                version,
                "PartitionProduceResponse.record_errors",
            )
            .not_at_version());
        }
        if version >= 8 {
            write_nullable_string(
                buf,
                self.error_message.as_deref(),
                flexible,
                true,
                at(
                    NAME_RESPONSE,
                    version,
                    "PartitionProduceResponse.error_message",
                ),
            )?;
        } else if self.error_message.is_some() {
            return Err(at(
                NAME_RESPONSE,
                version,
                "PartitionProduceResponse.error_message",
            )
            .not_at_version());
        }
        let mut known = Vec::new();
        if version >= 10 {
            if self.current_leader != LeaderIdAndEpoch::default() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    self.current_leader.encode_into(buf, version)?;
                }
                known.push((0, value));
            }
        } else if self.current_leader != LeaderIdAndEpoch::default() {
            return Err(at(
                NAME_RESPONSE,
                version,
                "PartitionProduceResponse.current_leader",
            )
            .not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            known,
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "PartitionProduceResponse.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ProduceResponse (present in versions 8-13).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BatchIndexAndErrorMessage {
    /// The batch index of the record that caused the batch to be dropped (versions 8+).
    pub batch_index: i32,
    /// The error message of the record that caused the batch to be dropped (versions 8+, nullable 8+, default null).
    pub batch_index_error_message: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl BatchIndexAndErrorMessage {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ProduceResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceResponse::is_flexible(version);
        let (input, batch_index) = primitives::int32(input)?;
        let (input, batch_index_error_message) = read_nullable_string(input, flexible, true)?;
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
                batch_index,
                batch_index_error_message,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ProduceResponse::is_flexible(version);
        buf.put_i32(self.batch_index);
        write_nullable_string(
            buf,
            self.batch_index_error_message.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "BatchIndexAndErrorMessage.batch_index_error_message",
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
                "BatchIndexAndErrorMessage.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ProduceResponse (present in versions 10-13).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderIdAndEpoch {
    /// The ID of the current leader or -1 if the leader is unknown (versions 10+, default -1).
    pub leader_id: i32,
    /// The latest known leader epoch (versions 10+, default -1).
    pub leader_epoch: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for LeaderIdAndEpoch {
    fn default() -> Self {
        Self {
            leader_id: -1,
            leader_epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl LeaderIdAndEpoch {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceResponse::is_flexible(version);
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
        let flexible = ProduceResponse::is_flexible(version);
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

/// Part of ProduceResponse (present in versions 10-13).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeEndpoint {
    /// The ID of the associated node (versions 10+).
    pub node_id: i32,
    /// The node's hostname (versions 10+).
    pub host: String,
    /// The node's port (versions 10+).
    pub port: i32,
    /// The rack of the node, or null if it has not been assigned to a rack (versions 10+, nullable 10+, default null).
    pub rack: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl NodeEndpoint {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ProduceResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ProduceResponse::is_flexible(version);
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
        let flexible = ProduceResponse::is_flexible(version);
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

    pub(super) fn arb_produce_request(g: &mut Gen, version: i16) -> ProduceRequest {
        let flexible = ProduceRequest::is_flexible(version);
        ProduceRequest {
            transactional_id: g.option(|g| g.string()),
            acks: g.i16(),
            timeout_ms: g.i32(),
            topic_data: g.vec(|g| arb_topic_produce_data(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_topic_produce_data(g: &mut Gen, version: i16) -> TopicProduceData {
        let flexible = ProduceRequest::is_flexible(version);
        TopicProduceData {
            name: if version <= 12 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 13 { g.uuid() } else { Uuid::NIL },
            partition_data: g.vec(|g| arb_partition_produce_data(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_partition_produce_data(g: &mut Gen, version: i16) -> PartitionProduceData {
        let flexible = ProduceRequest::is_flexible(version);
        PartitionProduceData {
            index: g.i32(),
            records: g.option(|g| g.bytes()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_produce_response(g: &mut Gen, version: i16) -> ProduceResponse {
        let flexible = ProduceResponse::is_flexible(version);
        ProduceResponse {
            responses: g.vec(|g| arb_topic_produce_response(g, version)),
            throttle_time_ms: g.i32(),
            node_endpoints: if version >= 10 {
                g.vec(|g| arb_node_endpoint(g, version))
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0]),
        }
    }

    pub(super) fn arb_topic_produce_response(g: &mut Gen, version: i16) -> TopicProduceResponse {
        let flexible = ProduceResponse::is_flexible(version);
        TopicProduceResponse {
            name: if version <= 12 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 13 { g.uuid() } else { Uuid::NIL },
            partition_responses: g.vec(|g| arb_partition_produce_response(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_partition_produce_response(
        g: &mut Gen,
        version: i16,
    ) -> PartitionProduceResponse {
        let flexible = ProduceResponse::is_flexible(version);
        PartitionProduceResponse {
            index: g.i32(),
            error_code: g.i16(),
            base_offset: g.i64(),
            log_append_time_ms: g.i64(),
            log_start_offset: if version >= 5 { g.i64() } else { -1 },
            record_errors: if version >= 8 {
                g.vec(|g| arb_batch_index_and_error_message(g, version))
            } else {
                Vec::new()
            },
            error_message: if version >= 8 {
                g.option(|g| g.string())
            } else {
                None
            },
            current_leader: if version >= 10 {
                arb_leader_id_and_epoch(g, version)
            } else {
                LeaderIdAndEpoch::default()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0]),
        }
    }

    pub(super) fn arb_batch_index_and_error_message(
        g: &mut Gen,
        version: i16,
    ) -> BatchIndexAndErrorMessage {
        let flexible = ProduceResponse::is_flexible(version);
        BatchIndexAndErrorMessage {
            batch_index: g.i32(),
            batch_index_error_message: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_leader_id_and_epoch(g: &mut Gen, version: i16) -> LeaderIdAndEpoch {
        let flexible = ProduceResponse::is_flexible(version);
        LeaderIdAndEpoch {
            leader_id: g.i32(),
            leader_epoch: g.i32(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_node_endpoint(g: &mut Gen, version: i16) -> NodeEndpoint {
        let flexible = ProduceResponse::is_flexible(version);
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
        fn produce_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_produce_request)?;
        }

        #[test]
        fn produce_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_produce_request)?;
        }

        #[test]
        fn produce_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_produce_response)?;
        }

        #[test]
        fn produce_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_produce_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 3..=13 {
            let mut buf = BytesMut::new();
            TopicProduceData::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                TopicProduceData::min_encoded_size(version),
                "TopicProduceData v{version}"
            );
        }
        for version in 3..=13 {
            let mut buf = BytesMut::new();
            PartitionProduceData::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                PartitionProduceData::min_encoded_size(version),
                "PartitionProduceData v{version}"
            );
        }
        for version in 3..=13 {
            let mut buf = BytesMut::new();
            TopicProduceResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                TopicProduceResponse::min_encoded_size(version),
                "TopicProduceResponse v{version}"
            );
        }
        for version in 3..=13 {
            let mut buf = BytesMut::new();
            PartitionProduceResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                PartitionProduceResponse::min_encoded_size(version),
                "PartitionProduceResponse v{version}"
            );
        }
        for version in 8..=13 {
            let mut buf = BytesMut::new();
            BatchIndexAndErrorMessage::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                BatchIndexAndErrorMessage::min_encoded_size(version),
                "BatchIndexAndErrorMessage v{version}"
            );
        }
        for version in 10..=13 {
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
