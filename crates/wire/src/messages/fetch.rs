//! Fetch: `FetchRequest` and `FetchResponse` (API key 1), generated from Kafka 4.4.0's `FetchRequest.json` and `FetchResponse.json`.
//!
//! Request versions 4-18, flexible 12-18; response versions 4-18, flexible 12-18.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_array,
    read_nullable_records, read_nullable_string, read_string, read_tagged, share, write_array,
    write_nullable_array, write_nullable_bytes, write_nullable_string, write_tagged_fields,
    Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "FetchRequest";
const NAME_RESPONSE: &str = "FetchResponse";

/// FetchRequest (API key 1): versions 4-18, flexible 12-18.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchRequest {
    /// The clusterId if known. This is used to validate metadata fetches prior to broker registration (versions 12+, nullable 12+, tagged 12+ (tag 0), default null).
    pub cluster_id: Option<String>,
    /// The broker ID of the follower, of -1 if this request is from a consumer (versions 0-14, default -1).
    pub replica_id: i32,
    /// The state of the replica in the follower (versions 15+, tagged 15+ (tag 1)).
    pub replica_state: ReplicaState,
    /// The maximum time in milliseconds to wait for the response (versions 0+).
    pub max_wait_ms: i32,
    /// The minimum bytes to accumulate in the response (versions 0+).
    pub min_bytes: i32,
    /// The maximum bytes to fetch.  See KIP-74 for cases where this limit may not be honored (versions 3+, default 0x7fffffff).
    pub max_bytes: i32,
    /// This setting controls the visibility of transactional records. Using READ_UNCOMMITTED (isolation_level = 0) makes all records visible. With READ_COMMITTED (isolation_level = 1), non-transactional and COMMITTED transactional records are visible. To be more concrete, READ_COMMITTED returns all data from offsets smaller than the current LSO (last stable offset), and enables the inclusion of the list of aborted transactions in the result, which allows consumers to discard ABORTED transactional records (versions 4+, default 0).
    pub isolation_level: i8,
    /// The fetch session ID (versions 7+, default 0).
    pub session_id: i32,
    /// The fetch session epoch, which is used for ordering requests in a session (versions 7+, default -1).
    pub session_epoch: i32,
    /// The topics to fetch (versions 0+).
    pub topics: Vec<FetchTopic>,
    /// In an incremental fetch request, the partitions to remove (versions 7+).
    pub forgotten_topics_data: Vec<ForgottenTopic>,
    /// Rack ID of the consumer making this request (versions 11+, default ).
    pub rack_id: String,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for FetchRequest {
    fn default() -> Self {
        Self {
            cluster_id: None,
            replica_id: -1,
            replica_state: ReplicaState::default(),
            max_wait_ms: 0,
            min_bytes: 0,
            max_bytes: i32::MAX,
            isolation_level: 0,
            session_id: 0,
            session_epoch: -1,
            topics: Vec::new(),
            forgotten_topics_data: Vec::new(),
            rack_id: String::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchRequest::is_flexible(version);
        let mut cluster_id = None;
        let (input, replica_id) = if version <= 14 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let mut replica_state = ReplicaState::default();
        let (input, max_wait_ms) = primitives::int32(input)?;
        let (input, min_bytes) = primitives::int32(input)?;
        let (input, max_bytes) = primitives::int32(input)?;
        let (input, isolation_level) = primitives::int8(input)?;
        let (input, session_id) = if version >= 7 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, session_epoch) = if version >= 7 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, topics) = read_array(
            input,
            flexible,
            FetchTopic::min_encoded_size(version),
            |i| FetchTopic::decode_from(i, root, version),
        )?;
        let (input, forgotten_topics_data) = if version >= 7 {
            read_array(
                input,
                flexible,
                ForgottenTopic::min_encoded_size(version),
                |i| ForgottenTopic::decode_from(i, root, version),
            )?
        } else {
            (input, Vec::new())
        };
        let (input, rack_id) = if version >= 11 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 12 => {
                    cluster_id = read_tagged(value, "cluster_id", |i| {
                        read_nullable_string(i, flexible, true)
                    })?
                }
                1 if version >= 15 => {
                    replica_state = read_tagged(value, "replica_state", |i| {
                        ReplicaState::decode_from(i, root, version)
                    })?
                }
                _ => unknown_tagged_fields.push((tag, share(root, value))),
            }
        }
        Ok((
            input,
            Self {
                cluster_id,
                replica_id,
                replica_state,
                max_wait_ms,
                min_bytes,
                max_bytes,
                isolation_level,
                session_id,
                session_epoch,
                topics,
                forgotten_topics_data,
                rack_id,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchRequest::is_flexible(version);
        if version <= 14 {
            buf.put_i32(self.replica_id);
        } else if self.replica_id != -1 {
            return Err(at(NAME_REQUEST, version, "replica_id").not_at_version());
        }
        buf.put_i32(self.max_wait_ms);
        buf.put_i32(self.min_bytes);
        buf.put_i32(self.max_bytes);
        buf.put_i8(self.isolation_level);
        if version >= 7 {
            buf.put_i32(self.session_id);
        } else if self.session_id != 0 {
            return Err(at(NAME_REQUEST, version, "session_id").not_at_version());
        }
        if version >= 7 {
            buf.put_i32(self.session_epoch);
        } else if self.session_epoch != -1 {
            return Err(at(NAME_REQUEST, version, "session_epoch").not_at_version());
        }
        write_array(buf, &self.topics, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 7 {
            write_array(buf, &self.forgotten_topics_data, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.forgotten_topics_data.is_empty() {
            return Err(at(NAME_REQUEST, version, "forgotten_topics_data").not_at_version());
        }
        if version >= 11 {
            primitives::put_str(buf, Some(self.rack_id.as_str()), flexible)?;
        } else if !self.rack_id.is_empty() {
            return Err(at(NAME_REQUEST, version, "rack_id").not_at_version());
        }
        let mut known = Vec::new();
        if version >= 12 {
            if self.cluster_id.is_some() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    write_nullable_string(
                        buf,
                        self.cluster_id.as_deref(),
                        flexible,
                        true,
                        at(NAME_REQUEST, version, "cluster_id"),
                    )?;
                }
                known.push((0, value));
            }
        } else if self.cluster_id.is_some() {
            return Err(at(NAME_REQUEST, version, "cluster_id").not_at_version());
        }
        if version >= 15 {
            if self.replica_state != ReplicaState::default() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    self.replica_state.encode_into(buf, version)?;
                }
                known.push((1, value));
            }
        } else if self.replica_state != ReplicaState::default() {
            return Err(at(NAME_REQUEST, version, "replica_state").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            known,
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for FetchRequest {
    const NAME: &'static str = "FetchRequest";
    const API_KEY: i16 = 1;
    const MIN_VERSION: i16 = 4;
    const MAX_VERSION: i16 = 18;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(12);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for FetchRequest {
    type Response = FetchResponse;
}

/// Part of FetchRequest (present in versions 15-18).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicaState {
    /// The replica ID of the follower, or -1 if this request is from a consumer (versions 15+, default -1).
    pub replica_id: i32,
    /// The epoch of this follower, or -1 if not available (versions 15+, default -1).
    pub replica_epoch: i64,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for ReplicaState {
    fn default() -> Self {
        Self {
            replica_id: -1,
            replica_epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ReplicaState {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchRequest::is_flexible(version);
        let (input, replica_id) = primitives::int32(input)?;
        let (input, replica_epoch) = primitives::int64(input)?;
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
                replica_id,
                replica_epoch,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchRequest::is_flexible(version);
        buf.put_i32(self.replica_id);
        buf.put_i64(self.replica_epoch);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "ReplicaState.unknown_tagged_fields"),
        )
    }
}

/// Part of FetchRequest (present in versions 4-18).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchTopic {
    /// The name of the topic to fetch (versions 0-12).
    pub topic: String,
    /// The unique topic ID (versions 13+).
    pub topic_id: Uuid,
    /// The partitions to fetch (versions 0+).
    pub partitions: Vec<FetchPartition>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl FetchTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FetchRequest::is_flexible(version);
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
        let flexible = FetchRequest::is_flexible(version);
        let (input, topic) = if version <= 12 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topic_id) = if version >= 13 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
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
                topic,
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchRequest::is_flexible(version);
        if version <= 12 {
            primitives::put_str(buf, Some(self.topic.as_str()), flexible)?;
        } else if !self.topic.is_empty() {
            return Err(at(NAME_REQUEST, version, "FetchTopic.topic").not_at_version());
        }
        if version >= 13 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(at(NAME_REQUEST, version, "FetchTopic.topic_id").not_at_version());
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
            at(NAME_REQUEST, version, "FetchTopic.unknown_tagged_fields"),
        )
    }
}

/// Part of FetchRequest (present in versions 4-18).
#[derive(Debug, Clone, PartialEq)]
pub struct FetchPartition {
    /// The partition index (versions 0+).
    pub partition: i32,
    /// The current leader epoch of the partition (versions 9+, default -1).
    pub current_leader_epoch: i32,
    /// The message offset (versions 0+).
    pub fetch_offset: i64,
    /// The epoch of the last fetched record or -1 if there is none (versions 12+, default -1).
    pub last_fetched_epoch: i32,
    /// The earliest available offset of the follower replica.  The field is only used when the request is sent by the follower (versions 5+, default -1).
    pub log_start_offset: i64,
    /// The maximum bytes to fetch from this partition.  See KIP-74 for cases where this limit may not be honored (versions 0+).
    pub partition_max_bytes: i32,
    /// The directory id of the follower fetching (versions 17+, tagged 17+ (tag 0)).
    pub replica_directory_id: Uuid,
    /// The high-watermark known by the replica. -1 if the high-watermark is not known and 9223372036854775807 if the feature is not supported (versions 18+, tagged 18+ (tag 1), default 9223372036854775807).
    pub high_watermark: i64,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for FetchPartition {
    fn default() -> Self {
        Self {
            partition: 0,
            current_leader_epoch: -1,
            fetch_offset: 0,
            last_fetched_epoch: -1,
            log_start_offset: -1,
            partition_max_bytes: 0,
            replica_directory_id: Uuid::NIL,
            high_watermark: i64::MAX,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FetchPartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FetchRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        if version >= 9 {
            size += 4;
        }
        size += 8;
        if version >= 12 {
            size += 4;
        }
        if version >= 5 {
            size += 8;
        }
        size += 4;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchRequest::is_flexible(version);
        let (input, partition) = primitives::int32(input)?;
        let (input, current_leader_epoch) = if version >= 9 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, fetch_offset) = primitives::int64(input)?;
        let (input, last_fetched_epoch) = if version >= 12 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, log_start_offset) = if version >= 5 {
            primitives::int64(input)?
        } else {
            (input, -1)
        };
        let (input, partition_max_bytes) = primitives::int32(input)?;
        let mut replica_directory_id = Uuid::NIL;
        let mut high_watermark = i64::MAX;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 17 => {
                    replica_directory_id =
                        read_tagged(value, "FetchPartition.replica_directory_id", |i| {
                            primitives::uuid(i)
                        })?
                }
                1 if version >= 18 => {
                    high_watermark = read_tagged(value, "FetchPartition.high_watermark", |i| {
                        primitives::int64(i)
                    })?
                }
                _ => unknown_tagged_fields.push((tag, share(root, value))),
            }
        }
        Ok((
            input,
            Self {
                partition,
                current_leader_epoch,
                fetch_offset,
                last_fetched_epoch,
                log_start_offset,
                partition_max_bytes,
                replica_directory_id,
                high_watermark,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchRequest::is_flexible(version);
        buf.put_i32(self.partition);
        if version >= 9 {
            buf.put_i32(self.current_leader_epoch);
        } else if self.current_leader_epoch != -1 {
            return Err(
                at(NAME_REQUEST, version, "FetchPartition.current_leader_epoch").not_at_version(),
            );
        }
        buf.put_i64(self.fetch_offset);
        if version >= 12 {
            buf.put_i32(self.last_fetched_epoch);
        } else if self.last_fetched_epoch != -1 {
            return Err(
                at(NAME_REQUEST, version, "FetchPartition.last_fetched_epoch").not_at_version(),
            );
        }
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        } else if self.log_start_offset != -1 {
            return Err(
                at(NAME_REQUEST, version, "FetchPartition.log_start_offset").not_at_version()
            );
        }
        buf.put_i32(self.partition_max_bytes);
        let mut known = Vec::new();
        if version >= 17 {
            if !self.replica_directory_id.is_nil() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    buf.put_slice(&self.replica_directory_id.0);
                }
                known.push((0, value));
            }
        } else if !self.replica_directory_id.is_nil() {
            return Err(
                at(NAME_REQUEST, version, "FetchPartition.replica_directory_id").not_at_version(),
            );
        }
        if version >= 18 {
            if self.high_watermark != i64::MAX {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    buf.put_i64(self.high_watermark);
                }
                known.push((1, value));
            }
        } else if self.high_watermark != i64::MAX {
            return Err(at(NAME_REQUEST, version, "FetchPartition.high_watermark").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            known,
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "FetchPartition.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of FetchRequest (present in versions 7-18).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ForgottenTopic {
    /// The topic name (versions 7-12).
    pub topic: String,
    /// The unique topic ID (versions 13+).
    pub topic_id: Uuid,
    /// The partitions indexes to forget (versions 7+).
    pub partitions: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ForgottenTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FetchRequest::is_flexible(version);
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
        let flexible = FetchRequest::is_flexible(version);
        let (input, topic) = if version <= 12 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topic_id) = if version >= 13 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
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
                topic,
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchRequest::is_flexible(version);
        if version <= 12 {
            primitives::put_str(buf, Some(self.topic.as_str()), flexible)?;
        } else if !self.topic.is_empty() {
            return Err(at(NAME_REQUEST, version, "ForgottenTopic.topic").not_at_version());
        }
        if version >= 13 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(at(NAME_REQUEST, version, "ForgottenTopic.topic_id").not_at_version());
        }
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

/// FetchResponse (API key 1): versions 4-18, flexible 12-18.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// The top level response error code (versions 7+).
    pub error_code: i16,
    /// The fetch session ID, or 0 if this is not part of a fetch session (versions 7+, default 0).
    pub session_id: i32,
    /// The response topics (versions 0+).
    pub responses: Vec<FetchableTopicResponse>,
    /// Endpoints for all current-leaders enumerated in PartitionData, with errors NOT_LEADER_OR_FOLLOWER & FENCED_LEADER_EPOCH (versions 16+, tagged 16+ (tag 0)).
    pub node_endpoints: Vec<NodeEndpoint>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl FetchResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, error_code) = if version >= 7 {
            primitives::int16(input)?
        } else {
            (input, 0)
        };
        let (input, session_id) = if version >= 7 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, responses) = read_array(
            input,
            flexible,
            FetchableTopicResponse::min_encoded_size(version),
            |i| FetchableTopicResponse::decode_from(i, root, version),
        )?;
        let mut node_endpoints = Vec::new();
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 16 => {
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
                throttle_time_ms,
                error_code,
                session_id,
                responses,
                node_endpoints,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
        if version >= 7 {
            buf.put_i16(self.error_code);
        } else if self.error_code != 0 {
            return Err(at(NAME_RESPONSE, version, "error_code").not_at_version());
        }
        if version >= 7 {
            buf.put_i32(self.session_id);
        } else if self.session_id != 0 {
            return Err(at(NAME_RESPONSE, version, "session_id").not_at_version());
        }
        write_array(buf, &self.responses, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        let mut known = Vec::new();
        if version >= 16 {
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

impl Message for FetchResponse {
    const NAME: &'static str = "FetchResponse";
    const API_KEY: i16 = 1;
    const MIN_VERSION: i16 = 4;
    const MAX_VERSION: i16 = 18;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(12);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for FetchResponse {
    type Request = FetchRequest;
}

/// Part of FetchResponse (present in versions 4-18).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FetchableTopicResponse {
    /// The topic name (versions 0-12).
    pub topic: String,
    /// The unique topic ID (versions 13+).
    pub topic_id: Uuid,
    /// The topic partitions (versions 0+).
    pub partitions: Vec<PartitionData>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl FetchableTopicResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FetchResponse::is_flexible(version);
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
        let flexible = FetchResponse::is_flexible(version);
        let (input, topic) = if version <= 12 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, topic_id) = if version >= 13 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
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
                topic,
                topic_id,
                partitions,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchResponse::is_flexible(version);
        if version <= 12 {
            primitives::put_str(buf, Some(self.topic.as_str()), flexible)?;
        } else if !self.topic.is_empty() {
            return Err(at(NAME_RESPONSE, version, "FetchableTopicResponse.topic").not_at_version());
        }
        if version >= 13 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_RESPONSE, version, "FetchableTopicResponse.topic_id").not_at_version(),
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
                "FetchableTopicResponse.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of FetchResponse (present in versions 4-18).
#[derive(Debug, Clone, PartialEq)]
pub struct PartitionData {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The error code, or 0 if there was no fetch error (versions 0+).
    pub error_code: i16,
    /// The current high water mark (versions 0+).
    pub high_watermark: i64,
    /// The last stable offset (or LSO) of the partition. This is the last offset such that the state of all transactional records prior to this offset have been decided (ABORTED or COMMITTED) (versions 4+, default -1).
    pub last_stable_offset: i64,
    /// The current log start offset (versions 5+, default -1).
    pub log_start_offset: i64,
    /// In case divergence is detected based on the `LastFetchedEpoch` and `FetchOffset` in the request, this field indicates the largest epoch and its end offset such that subsequent records are known to diverge (versions 12+, tagged 12+ (tag 0)).
    pub diverging_epoch: EpochEndOffset,
    /// The current leader of the partition (versions 12+, tagged 12+ (tag 1)).
    pub current_leader: LeaderIdAndEpoch,
    /// In the case of fetching an offset less than the LogStartOffset, this is the end offset and epoch that should be used in the FetchSnapshot request (versions 12+, tagged 12+ (tag 2)).
    pub snapshot_id: SnapshotId,
    /// The aborted transactions (versions 4+, nullable 4+).
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
    /// The preferred read replica for the consumer to use on its next fetch request (versions 11+, default -1).
    pub preferred_read_replica: i32,
    /// The record data (versions 0+, nullable 0+).
    pub records: Option<Bytes>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for PartitionData {
    fn default() -> Self {
        Self {
            partition_index: 0,
            error_code: 0,
            high_watermark: 0,
            last_stable_offset: -1,
            log_start_offset: -1,
            diverging_epoch: EpochEndOffset::default(),
            current_leader: LeaderIdAndEpoch::default(),
            snapshot_id: SnapshotId::default(),
            aborted_transactions: Some(Vec::new()),
            preferred_read_replica: -1,
            records: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl PartitionData {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 2;
        size += 8;
        size += 8;
        if version >= 5 {
            size += 8;
        }
        size += if flexible { 1 } else { 4 };
        if version >= 11 {
            size += 4;
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchResponse::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, high_watermark) = primitives::int64(input)?;
        let (input, last_stable_offset) = primitives::int64(input)?;
        let (input, log_start_offset) = if version >= 5 {
            primitives::int64(input)?
        } else {
            (input, -1)
        };
        let mut diverging_epoch = EpochEndOffset::default();
        let mut current_leader = LeaderIdAndEpoch::default();
        let mut snapshot_id = SnapshotId::default();
        let (input, aborted_transactions) = read_nullable_array(
            input,
            flexible,
            true,
            AbortedTransaction::min_encoded_size(version),
            |i| AbortedTransaction::decode_from(i, root, version),
        )?;
        let (input, preferred_read_replica) = if version >= 11 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, records) = read_nullable_records(input, root, flexible, true)?;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 12 => {
                    diverging_epoch = read_tagged(value, "PartitionData.diverging_epoch", |i| {
                        EpochEndOffset::decode_from(i, root, version)
                    })?
                }
                1 if version >= 12 => {
                    current_leader = read_tagged(value, "PartitionData.current_leader", |i| {
                        LeaderIdAndEpoch::decode_from(i, root, version)
                    })?
                }
                2 if version >= 12 => {
                    snapshot_id = read_tagged(value, "PartitionData.snapshot_id", |i| {
                        SnapshotId::decode_from(i, root, version)
                    })?
                }
                _ => unknown_tagged_fields.push((tag, share(root, value))),
            }
        }
        Ok((
            input,
            Self {
                partition_index,
                error_code,
                high_watermark,
                last_stable_offset,
                log_start_offset,
                diverging_epoch,
                current_leader,
                snapshot_id,
                aborted_transactions,
                preferred_read_replica,
                records,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchResponse::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i16(self.error_code);
        buf.put_i64(self.high_watermark);
        buf.put_i64(self.last_stable_offset);
        if version >= 5 {
            buf.put_i64(self.log_start_offset);
        } else if self.log_start_offset != -1 {
            return Err(
                at(NAME_RESPONSE, version, "PartitionData.log_start_offset").not_at_version()
            );
        }
        write_nullable_array(
            buf,
            self.aborted_transactions.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "PartitionData.aborted_transactions"),
            |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            },
        )?;
        if version >= 11 {
            buf.put_i32(self.preferred_read_replica);
        } else if self.preferred_read_replica != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "PartitionData.preferred_read_replica",
            )
            .not_at_version());
        }
        write_nullable_bytes(
            buf,
            self.records.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "PartitionData.records"),
        )?;
        let mut known = Vec::new();
        if version >= 12 {
            if self.diverging_epoch != EpochEndOffset::default() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    self.diverging_epoch.encode_into(buf, version)?;
                }
                known.push((0, value));
            }
        } else if self.diverging_epoch != EpochEndOffset::default() {
            return Err(
                at(NAME_RESPONSE, version, "PartitionData.diverging_epoch").not_at_version()
            );
        }
        if version >= 12 {
            if self.current_leader != LeaderIdAndEpoch::default() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    self.current_leader.encode_into(buf, version)?;
                }
                known.push((1, value));
            }
        } else if self.current_leader != LeaderIdAndEpoch::default() {
            return Err(at(NAME_RESPONSE, version, "PartitionData.current_leader").not_at_version());
        }
        if version >= 12 {
            if self.snapshot_id != SnapshotId::default() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    self.snapshot_id.encode_into(buf, version)?;
                }
                known.push((2, value));
            }
        } else if self.snapshot_id != SnapshotId::default() {
            return Err(at(NAME_RESPONSE, version, "PartitionData.snapshot_id").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            known,
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "PartitionData.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of FetchResponse (present in versions 12-18).
#[derive(Debug, Clone, PartialEq)]
pub struct EpochEndOffset {
    /// The largest epoch (versions 12+, default -1).
    pub epoch: i32,
    /// The end offset of the epoch (versions 12+, default -1).
    pub end_offset: i64,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for EpochEndOffset {
    fn default() -> Self {
        Self {
            epoch: -1,
            end_offset: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl EpochEndOffset {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchResponse::is_flexible(version);
        let (input, epoch) = primitives::int32(input)?;
        let (input, end_offset) = primitives::int64(input)?;
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
                epoch,
                end_offset,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchResponse::is_flexible(version);
        buf.put_i32(self.epoch);
        buf.put_i64(self.end_offset);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "EpochEndOffset.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of FetchResponse (present in versions 12-18).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaderIdAndEpoch {
    /// The ID of the current leader or -1 if the leader is unknown (versions 12+, default -1).
    pub leader_id: i32,
    /// The latest known leader epoch (versions 12+, default -1).
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
        let flexible = FetchResponse::is_flexible(version);
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
        let flexible = FetchResponse::is_flexible(version);
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

/// Part of FetchResponse (present in versions 12-18).
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotId {
    /// The end offset of the epoch (versions 0+, default -1).
    pub end_offset: i64,
    /// The largest epoch (versions 0+, default -1).
    pub epoch: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for SnapshotId {
    fn default() -> Self {
        Self {
            end_offset: -1,
            epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl SnapshotId {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchResponse::is_flexible(version);
        let (input, end_offset) = primitives::int64(input)?;
        let (input, epoch) = primitives::int32(input)?;
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
                end_offset,
                epoch,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchResponse::is_flexible(version);
        buf.put_i64(self.end_offset);
        buf.put_i32(self.epoch);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "SnapshotId.unknown_tagged_fields"),
        )
    }
}

/// Part of FetchResponse (present in versions 4-18).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AbortedTransaction {
    /// The producer id associated with the aborted transaction (versions 4+).
    pub producer_id: i64,
    /// The first offset in the aborted transaction (versions 4+).
    pub first_offset: i64,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl AbortedTransaction {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 8;
        size += 8;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchResponse::is_flexible(version);
        let (input, producer_id) = primitives::int64(input)?;
        let (input, first_offset) = primitives::int64(input)?;
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
                producer_id,
                first_offset,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FetchResponse::is_flexible(version);
        buf.put_i64(self.producer_id);
        buf.put_i64(self.first_offset);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "AbortedTransaction.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of FetchResponse (present in versions 16-18).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeEndpoint {
    /// The ID of the associated node (versions 16+).
    pub node_id: i32,
    /// The node's hostname (versions 16+).
    pub host: String,
    /// The node's port (versions 16+).
    pub port: i32,
    /// The rack of the node, or null if it has not been assigned to a rack (versions 16+, nullable 16+, default null).
    pub rack: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl NodeEndpoint {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FetchResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FetchResponse::is_flexible(version);
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
        let flexible = FetchResponse::is_flexible(version);
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

    pub(super) fn arb_fetch_request(g: &mut Gen, version: i16) -> FetchRequest {
        let flexible = FetchRequest::is_flexible(version);
        FetchRequest {
            cluster_id: if version >= 12 {
                g.option(|g| g.string())
            } else {
                None
            },
            replica_id: if version <= 14 { g.i32() } else { -1 },
            replica_state: if version >= 15 {
                arb_replica_state(g, version)
            } else {
                ReplicaState::default()
            },
            max_wait_ms: g.i32(),
            min_bytes: g.i32(),
            max_bytes: g.i32(),
            isolation_level: g.i8(),
            session_id: if version >= 7 { g.i32() } else { 0 },
            session_epoch: if version >= 7 { g.i32() } else { -1 },
            topics: g.vec(|g| arb_fetch_topic(g, version)),
            forgotten_topics_data: if version >= 7 {
                g.vec(|g| arb_forgotten_topic(g, version))
            } else {
                Vec::new()
            },
            rack_id: if version >= 11 {
                g.string()
            } else {
                String::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0, 1]),
        }
    }

    pub(super) fn arb_replica_state(g: &mut Gen, version: i16) -> ReplicaState {
        let flexible = FetchRequest::is_flexible(version);
        ReplicaState {
            replica_id: g.i32(),
            replica_epoch: g.i64(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_fetch_topic(g: &mut Gen, version: i16) -> FetchTopic {
        let flexible = FetchRequest::is_flexible(version);
        FetchTopic {
            topic: if version <= 12 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 13 { g.uuid() } else { Uuid::NIL },
            partitions: g.vec(|g| arb_fetch_partition(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_fetch_partition(g: &mut Gen, version: i16) -> FetchPartition {
        let flexible = FetchRequest::is_flexible(version);
        FetchPartition {
            partition: g.i32(),
            current_leader_epoch: if version >= 9 { g.i32() } else { -1 },
            fetch_offset: g.i64(),
            last_fetched_epoch: if version >= 12 { g.i32() } else { -1 },
            log_start_offset: if version >= 5 { g.i64() } else { -1 },
            partition_max_bytes: g.i32(),
            replica_directory_id: if version >= 17 { g.uuid() } else { Uuid::NIL },
            high_watermark: if version >= 18 { g.i64() } else { i64::MAX },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0, 1]),
        }
    }

    pub(super) fn arb_forgotten_topic(g: &mut Gen, version: i16) -> ForgottenTopic {
        let flexible = FetchRequest::is_flexible(version);
        ForgottenTopic {
            topic: if version <= 12 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 13 { g.uuid() } else { Uuid::NIL },
            partitions: g.vec(|g| g.i32()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_fetch_response(g: &mut Gen, version: i16) -> FetchResponse {
        let flexible = FetchResponse::is_flexible(version);
        FetchResponse {
            throttle_time_ms: g.i32(),
            error_code: if version >= 7 { g.i16() } else { 0 },
            session_id: if version >= 7 { g.i32() } else { 0 },
            responses: g.vec(|g| arb_fetchable_topic_response(g, version)),
            node_endpoints: if version >= 16 {
                g.vec(|g| arb_node_endpoint(g, version))
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0]),
        }
    }

    pub(super) fn arb_fetchable_topic_response(
        g: &mut Gen,
        version: i16,
    ) -> FetchableTopicResponse {
        let flexible = FetchResponse::is_flexible(version);
        FetchableTopicResponse {
            topic: if version <= 12 {
                g.string()
            } else {
                String::new()
            },
            topic_id: if version >= 13 { g.uuid() } else { Uuid::NIL },
            partitions: g.vec(|g| arb_partition_data(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_partition_data(g: &mut Gen, version: i16) -> PartitionData {
        let flexible = FetchResponse::is_flexible(version);
        PartitionData {
            partition_index: g.i32(),
            error_code: g.i16(),
            high_watermark: g.i64(),
            last_stable_offset: g.i64(),
            log_start_offset: if version >= 5 { g.i64() } else { -1 },
            diverging_epoch: if version >= 12 {
                arb_epoch_end_offset(g, version)
            } else {
                EpochEndOffset::default()
            },
            current_leader: if version >= 12 {
                arb_leader_id_and_epoch(g, version)
            } else {
                LeaderIdAndEpoch::default()
            },
            snapshot_id: if version >= 12 {
                arb_snapshot_id(g, version)
            } else {
                SnapshotId::default()
            },
            aborted_transactions: g.option(|g| g.vec(|g| arb_aborted_transaction(g, version))),
            preferred_read_replica: if version >= 11 { g.i32() } else { -1 },
            records: g.option(|g| g.bytes()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0, 1, 2]),
        }
    }

    pub(super) fn arb_epoch_end_offset(g: &mut Gen, version: i16) -> EpochEndOffset {
        let flexible = FetchResponse::is_flexible(version);
        EpochEndOffset {
            epoch: g.i32(),
            end_offset: g.i64(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_leader_id_and_epoch(g: &mut Gen, version: i16) -> LeaderIdAndEpoch {
        let flexible = FetchResponse::is_flexible(version);
        LeaderIdAndEpoch {
            leader_id: g.i32(),
            leader_epoch: g.i32(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_snapshot_id(g: &mut Gen, version: i16) -> SnapshotId {
        let flexible = FetchResponse::is_flexible(version);
        SnapshotId {
            end_offset: g.i64(),
            epoch: g.i32(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_aborted_transaction(g: &mut Gen, version: i16) -> AbortedTransaction {
        let flexible = FetchResponse::is_flexible(version);
        AbortedTransaction {
            producer_id: g.i64(),
            first_offset: g.i64(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_node_endpoint(g: &mut Gen, version: i16) -> NodeEndpoint {
        let flexible = FetchResponse::is_flexible(version);
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
        fn fetch_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_fetch_request)?;
        }

        #[test]
        fn fetch_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_fetch_request)?;
        }

        #[test]
        fn fetch_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_fetch_response)?;
        }

        #[test]
        fn fetch_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_fetch_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 4..=18 {
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
        for version in 4..=18 {
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
        for version in 7..=18 {
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
        for version in 4..=18 {
            let mut buf = BytesMut::new();
            FetchableTopicResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                FetchableTopicResponse::min_encoded_size(version),
                "FetchableTopicResponse v{version}"
            );
        }
        for version in 4..=18 {
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
        for version in 4..=18 {
            let mut buf = BytesMut::new();
            AbortedTransaction::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                AbortedTransaction::min_encoded_size(version),
                "AbortedTransaction v{version}"
            );
        }
        for version in 16..=18 {
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
