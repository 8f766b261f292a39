//! Metadata: `MetadataRequest` and `MetadataResponse` (API key 3), generated from Kafka 4.4.0's `MetadataRequest.json` and `MetadataResponse.json`.
//!
//! Request versions 0-13, flexible 9-13; response versions 0-13, flexible 9-13.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_array,
    read_nullable_string, read_string, share, write_array, write_nullable_array,
    write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "MetadataRequest";
const NAME_RESPONSE: &str = "MetadataResponse";

/// MetadataRequest (API key 3): versions 0-13, flexible 9-13.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRequest {
    /// The topics to fetch metadata for (versions 0+, nullable 1+).
    pub topics: Option<Vec<MetadataRequestTopic>>,
    /// If this is true, the broker may auto-create topics that we requested which do not already exist, if it is configured to do so (versions 4+, default true).
    pub allow_auto_topic_creation: bool,
    /// Whether to include cluster authorized operations (versions 8-10).
    pub include_cluster_authorized_operations: bool,
    /// Whether to include topic authorized operations (versions 8+).
    pub include_topic_authorized_operations: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for MetadataRequest {
    fn default() -> Self {
        Self {
            topics: Some(Vec::new()),
            allow_auto_topic_creation: true,
            include_cluster_authorized_operations: false,
            include_topic_authorized_operations: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = MetadataRequest::is_flexible(version);
        let (input, topics) = read_nullable_array(
            input,
            flexible,
            version >= 1,
            MetadataRequestTopic::min_encoded_size(version),
            |i| MetadataRequestTopic::decode_from(i, root, version),
        )?;
        let (input, allow_auto_topic_creation) = if version >= 4 {
            primitives::boolean(input)?
        } else {
            (input, true)
        };
        let (input, include_cluster_authorized_operations) = if (8..=10).contains(&version) {
            primitives::boolean(input)?
        } else {
            (input, false)
        };
        let (input, include_topic_authorized_operations) = if version >= 8 {
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
                topics,
                allow_auto_topic_creation,
                include_cluster_authorized_operations,
                include_topic_authorized_operations,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = MetadataRequest::is_flexible(version);
        write_nullable_array(
            buf,
            self.topics.as_deref(),
            flexible,
            version >= 1,
            at(NAME_REQUEST, version, "topics"),
            |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            },
        )?;
        if version >= 4 {
            buf.put_i8(i8::from(self.allow_auto_topic_creation));
        } else if !self.allow_auto_topic_creation {
            return Err(at(NAME_REQUEST, version, "allow_auto_topic_creation").not_at_version());
        }
        if (8..=10).contains(&version) {
            buf.put_i8(i8::from(self.include_cluster_authorized_operations));
        } else if self.include_cluster_authorized_operations {
            return Err(at(
                NAME_REQUEST,
                version,
                "include_cluster_authorized_operations",
            )
            .not_at_version());
        }
        if version >= 8 {
            buf.put_i8(i8::from(self.include_topic_authorized_operations));
        } else if self.include_topic_authorized_operations {
            return Err(
                at(NAME_REQUEST, version, "include_topic_authorized_operations").not_at_version(),
            );
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

impl Message for MetadataRequest {
    const NAME: &'static str = "MetadataRequest";
    const API_KEY: i16 = 3;
    const MIN_VERSION: i16 = 0;
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

impl Request for MetadataRequest {
    type Response = MetadataResponse;
}

/// Part of MetadataRequest (present in versions 0-13).
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRequestTopic {
    /// The topic id (versions 10+).
    pub topic_id: Uuid,
    /// The topic name (versions 0+, nullable 10+).
    pub name: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for MetadataRequestTopic {
    fn default() -> Self {
        Self {
            topic_id: Uuid::NIL,
            name: Some(String::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataRequestTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = MetadataRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        if version >= 10 {
            size += 16;
        }
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = MetadataRequest::is_flexible(version);
        let (input, topic_id) = if version >= 10 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, name) = read_nullable_string(input, flexible, version >= 10)?;
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
                name,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = MetadataRequest::is_flexible(version);
        if version >= 10 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(at(NAME_REQUEST, version, "MetadataRequestTopic.topic_id").not_at_version());
        }
        write_nullable_string(
            buf,
            self.name.as_deref(),
            flexible,
            version >= 10,
            at(NAME_REQUEST, version, "MetadataRequestTopic.name"),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "MetadataRequestTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// MetadataResponse (API key 3): versions 0-13, flexible 9-13.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 3+).
    pub throttle_time_ms: i32,
    /// A list of brokers present in the cluster (versions 0+).
    pub brokers: Vec<MetadataResponseBroker>,
    /// The cluster ID that responding broker belongs to (versions 2+, nullable 2+, default null).
    pub cluster_id: Option<String>,
    /// The ID of the controller broker (versions 1+, default -1).
    pub controller_id: i32,
    /// Each topic in the response (versions 0+).
    pub topics: Vec<MetadataResponseTopic>,
    /// 32-bit bitfield to represent authorized operations for this cluster (versions 8-10, default -2147483648).
    pub cluster_authorized_operations: i32,
    /// The top-level error code, or 0 if there was no error (versions 13+).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for MetadataResponse {
    fn default() -> Self {
        Self {
            throttle_time_ms: 0,
            brokers: Vec::new(),
            cluster_id: None,
            controller_id: -1,
            topics: Vec::new(),
            cluster_authorized_operations: i32::MIN,
            error_code: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = MetadataResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 3 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, brokers) = read_array(
            input,
            flexible,
            MetadataResponseBroker::min_encoded_size(version),
            |i| MetadataResponseBroker::decode_from(i, root, version),
        )?;
        let (input, cluster_id) = if version >= 2 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, controller_id) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, topics) = read_array(
            input,
            flexible,
            MetadataResponseTopic::min_encoded_size(version),
            |i| MetadataResponseTopic::decode_from(i, root, version),
        )?;
        let (input, cluster_authorized_operations) = if (8..=10).contains(&version) {
            primitives::int32(input)?
        } else {
            (input, i32::MIN)
        };
        let (input, error_code) = if version >= 13 {
            primitives::int16(input)?
        } else {
            (input, 0)
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
                brokers,
                cluster_id,
                controller_id,
                topics,
                cluster_authorized_operations,
                error_code,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = MetadataResponse::is_flexible(version);
        if version >= 3 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        write_array(buf, &self.brokers, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 2 {
            write_nullable_string(
                buf,
                self.cluster_id.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "cluster_id"),
            )?;
        } else if self.cluster_id.is_some() {
            return Err(at(NAME_RESPONSE, version, "cluster_id").not_at_version());
        }
        if version >= 1 {
            buf.put_i32(self.controller_id);
        } else if self.controller_id != -1 {
            return Err(at(NAME_RESPONSE, version, "controller_id").not_at_version());
        }
        write_array(buf, &self.topics, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if (8..=10).contains(&version) {
            buf.put_i32(self.cluster_authorized_operations);
        } else if self.cluster_authorized_operations != i32::MIN {
            return Err(
                at(NAME_RESPONSE, version, "cluster_authorized_operations").not_at_version()
            );
        }
        if version >= 13 {
            buf.put_i16(self.error_code);
        } else if self.error_code != 0 {
            return Err(at(NAME_RESPONSE, version, "error_code").not_at_version());
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

impl Message for MetadataResponse {
    const NAME: &'static str = "MetadataResponse";
    const API_KEY: i16 = 3;
    const MIN_VERSION: i16 = 0;
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

impl Response for MetadataResponse {
    type Request = MetadataRequest;
}

/// Part of MetadataResponse (present in versions 0-13).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MetadataResponseBroker {
    /// The broker ID (versions 0+).
    pub node_id: i32,
    /// The broker hostname (versions 0+).
    pub host: String,
    /// The broker port (versions 0+).
    pub port: i32,
    /// The rack of the broker, or null if it has not been assigned to a rack (versions 1+, nullable 1+, default null).
    pub rack: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl MetadataResponseBroker {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = MetadataResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += 4;
        if version >= 1 {
            size += if flexible { 1 } else { 2 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = MetadataResponse::is_flexible(version);
        let (input, node_id) = primitives::int32(input)?;
        let (input, host) = read_string(input, flexible)?;
        let (input, port) = primitives::int32(input)?;
        let (input, rack) = if version >= 1 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
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
                node_id,
                host,
                port,
                rack,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = MetadataResponse::is_flexible(version);
        buf.put_i32(self.node_id);
        primitives::put_str(buf, Some(self.host.as_str()), flexible)?;
        buf.put_i32(self.port);
        if version >= 1 {
            write_nullable_string(
                buf,
                self.rack.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "MetadataResponseBroker.rack"),
            )?;
        } else if self.rack.is_some() {
            return Err(at(NAME_RESPONSE, version, "MetadataResponseBroker.rack").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "MetadataResponseBroker.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of MetadataResponse (present in versions 0-13).
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataResponseTopic {
    /// The topic error, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The topic name. Null for non-existing topics queried by ID. This is never null when ErrorCode is zero. One of Name and TopicId is always populated (versions 0+, nullable 12+).
    pub name: Option<String>,
    /// The topic id. Zero for non-existing topics queried by name. This is never zero when ErrorCode is zero. One of Name and TopicId is always populated (versions 10+).
    pub topic_id: Uuid,
    /// True if the topic is internal (versions 1+, default false).
    pub is_internal: bool,
    /// Each partition in the topic (versions 0+).
    pub partitions: Vec<MetadataResponsePartition>,
    /// 32-bit bitfield to represent authorized operations for this topic (versions 8+, default -2147483648).
    pub topic_authorized_operations: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for MetadataResponseTopic {
    fn default() -> Self {
        Self {
            error_code: 0,
            name: Some(String::new()),
            topic_id: Uuid::NIL,
            is_internal: false,
            partitions: Vec::new(),
            topic_authorized_operations: i32::MIN,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataResponseTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = MetadataResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 2;
        size += if flexible { 1 } else { 2 };
        if version >= 10 {
            size += 16;
        }
        if version >= 1 {
            size += 1;
        }
        size += if flexible { 1 } else { 4 };
        if version >= 8 {
            size += 4;
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = MetadataResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, name) = read_nullable_string(input, flexible, version >= 12)?;
        let (input, topic_id) = if version >= 10 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, is_internal) = if version >= 1 {
            primitives::boolean(input)?
        } else {
            (input, false)
        };
        let (input, partitions) = read_array(
            input,
            flexible,
            MetadataResponsePartition::min_encoded_size(version),
            |i| MetadataResponsePartition::decode_from(i, root, version),
        )?;
        let (input, topic_authorized_operations) = if version >= 8 {
            primitives::int32(input)?
        } else {
            (input, i32::MIN)
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
                error_code,
                name,
                topic_id,
                is_internal,
                partitions,
                topic_authorized_operations,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = MetadataResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.name.as_deref(),
            flexible,
            version >= 12,
            at(NAME_RESPONSE, version, "MetadataResponseTopic.name"),
        )?;
        if version >= 10 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_RESPONSE, version, "MetadataResponseTopic.topic_id").not_at_version()
            );
        }
        if version >= 1 {
            buf.put_i8(i8::from(self.is_internal));
        } else if self.is_internal {
            return Err(
                at(NAME_RESPONSE, version, "MetadataResponseTopic.is_internal").not_at_version(),
            );
        }
        write_array(buf, &self.partitions, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 8 {
            buf.put_i32(self.topic_authorized_operations);
        } else if self.topic_authorized_operations != i32::MIN {
            return Err(at(
                NAME_RESPONSE,
                version,
                "MetadataResponseTopic.topic_authorized_operations",
            )
            .not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "MetadataResponseTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of MetadataResponse (present in versions 0-13).
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataResponsePartition {
    /// The partition error, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The ID of the leader broker (versions 0+).
    pub leader_id: i32,
    /// The leader epoch of this partition (versions 7+, default -1).
    pub leader_epoch: i32,
    /// The set of all nodes that host this partition (versions 0+).
    pub replica_nodes: Vec<i32>,
    /// The set of nodes that are in sync with the leader for this partition (versions 0+).
    pub isr_nodes: Vec<i32>,
    /// The set of offline replicas of this partition (versions 5+).
    pub offline_replicas: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for MetadataResponsePartition {
    fn default() -> Self {
        Self {
            error_code: 0,
            partition_index: 0,
            leader_id: 0,
            leader_epoch: -1,
            replica_nodes: Vec::new(),
            isr_nodes: Vec::new(),
            offline_replicas: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MetadataResponsePartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = MetadataResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 2;
        size += 4;
        size += 4;
        if version >= 7 {
            size += 4;
        }
        size += if flexible { 1 } else { 4 };
        size += if flexible { 1 } else { 4 };
        if version >= 5 {
            size += if flexible { 1 } else { 4 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = MetadataResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, partition_index) = primitives::int32(input)?;
        let (input, leader_id) = primitives::int32(input)?;
        let (input, leader_epoch) = if version >= 7 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, replica_nodes) = read_array(input, flexible, 4, primitives::int32)?;
        let (input, isr_nodes) = read_array(input, flexible, 4, primitives::int32)?;
        let (input, offline_replicas) = if version >= 5 {
            read_array(input, flexible, 4, primitives::int32)?
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
                error_code,
                partition_index,
                leader_id,
                leader_epoch,
                replica_nodes,
                isr_nodes,
                offline_replicas,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = MetadataResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        buf.put_i32(self.partition_index);
        buf.put_i32(self.leader_id);
        if version >= 7 {
            buf.put_i32(self.leader_epoch);
        } else if self.leader_epoch != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "MetadataResponsePartition.leader_epoch",
            )
            .not_at_version());
        }
        write_array(buf, &self.replica_nodes, flexible, |buf, e| {
            buf.put_i32(*e);
            Ok(())
        })?;
        write_array(buf, &self.isr_nodes, flexible, |buf, e| {
            buf.put_i32(*e);
            Ok(())
        })?;
        if version >= 5 {
            write_array(buf, &self.offline_replicas, flexible, |buf, e| {
                buf.put_i32(*e);
                Ok(())
            })?;
        } else if !self.offline_replicas.is_empty() {
            return Err(at(
                NAME_RESPONSE,
                version,
                "MetadataResponsePartition.offline_replicas",
            )
            .not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "MetadataResponsePartition.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_metadata_request(g: &mut Gen, version: i16) -> MetadataRequest {
        let flexible = MetadataRequest::is_flexible(version);
        MetadataRequest {
            topics: if version >= 1 {
                g.option(|g| g.vec(|g| arb_metadata_request_topic(g, version)))
            } else {
                Some(g.vec(|g| arb_metadata_request_topic(g, version)))
            },
            allow_auto_topic_creation: if version >= 4 { g.bool() } else { true },
            include_cluster_authorized_operations: if (8..=10).contains(&version) {
                g.bool()
            } else {
                false
            },
            include_topic_authorized_operations: if version >= 8 { g.bool() } else { false },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_metadata_request_topic(g: &mut Gen, version: i16) -> MetadataRequestTopic {
        let flexible = MetadataRequest::is_flexible(version);
        MetadataRequestTopic {
            topic_id: if version >= 10 { g.uuid() } else { Uuid::NIL },
            name: if version >= 10 {
                g.option(|g| g.string())
            } else {
                Some(g.string())
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_metadata_response(g: &mut Gen, version: i16) -> MetadataResponse {
        let flexible = MetadataResponse::is_flexible(version);
        MetadataResponse {
            throttle_time_ms: if version >= 3 { g.i32() } else { 0 },
            brokers: g.vec(|g| arb_metadata_response_broker(g, version)),
            cluster_id: if version >= 2 {
                g.option(|g| g.string())
            } else {
                None
            },
            controller_id: if version >= 1 { g.i32() } else { -1 },
            topics: g.vec(|g| arb_metadata_response_topic(g, version)),
            cluster_authorized_operations: if (8..=10).contains(&version) {
                g.i32()
            } else {
                i32::MIN
            },
            error_code: if version >= 13 { g.i16() } else { 0 },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_metadata_response_broker(
        g: &mut Gen,
        version: i16,
    ) -> MetadataResponseBroker {
        let flexible = MetadataResponse::is_flexible(version);
        MetadataResponseBroker {
            node_id: g.i32(),
            host: g.string(),
            port: g.i32(),
            rack: if version >= 1 {
                g.option(|g| g.string())
            } else {
                None
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_metadata_response_topic(g: &mut Gen, version: i16) -> MetadataResponseTopic {
        let flexible = MetadataResponse::is_flexible(version);
        MetadataResponseTopic {
            error_code: g.i16(),
            name: if version >= 12 {
                g.option(|g| g.string())
            } else {
                Some(g.string())
            },
            topic_id: if version >= 10 { g.uuid() } else { Uuid::NIL },
            is_internal: if version >= 1 { g.bool() } else { false },
            partitions: g.vec(|g| arb_metadata_response_partition(g, version)),
            topic_authorized_operations: if version >= 8 { g.i32() } else { i32::MIN },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_metadata_response_partition(
        g: &mut Gen,
        version: i16,
    ) -> MetadataResponsePartition {
        let flexible = MetadataResponse::is_flexible(version);
        MetadataResponsePartition {
            error_code: g.i16(),
            partition_index: g.i32(),
            leader_id: g.i32(),
            leader_epoch: if version >= 7 { g.i32() } else { -1 },
            replica_nodes: g.vec(|g| g.i32()),
            isr_nodes: g.vec(|g| g.i32()),
            offline_replicas: if version >= 5 {
                g.vec(|g| g.i32())
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn metadata_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_metadata_request)?;
        }

        #[test]
        fn metadata_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_metadata_request)?;
        }

        #[test]
        fn metadata_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_metadata_response)?;
        }

        #[test]
        fn metadata_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_metadata_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=13 {
            let mut buf = BytesMut::new();
            MetadataRequestTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                MetadataRequestTopic::min_encoded_size(version),
                "MetadataRequestTopic v{version}"
            );
        }
        for version in 0..=13 {
            let mut buf = BytesMut::new();
            MetadataResponseBroker::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                MetadataResponseBroker::min_encoded_size(version),
                "MetadataResponseBroker v{version}"
            );
        }
        for version in 0..=13 {
            let mut buf = BytesMut::new();
            MetadataResponseTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                MetadataResponseTopic::min_encoded_size(version),
                "MetadataResponseTopic v{version}"
            );
        }
        for version in 0..=13 {
            let mut buf = BytesMut::new();
            MetadataResponsePartition::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                MetadataResponsePartition::min_encoded_size(version),
                "MetadataResponsePartition v{version}"
            );
        }
    }
}
