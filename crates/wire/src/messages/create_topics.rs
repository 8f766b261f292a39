//! CreateTopics: `CreateTopicsRequest` and `CreateTopicsResponse` (API key 19), generated from Kafka 4.4.0's `CreateTopicsRequest.json` and `CreateTopicsResponse.json`.
//!
//! Request versions 2-7, flexible 5-7; response versions 2-7, flexible 5-7.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_array,
    read_nullable_string, read_string, read_tagged, share, write_array, write_nullable_array,
    write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "CreateTopicsRequest";
const NAME_RESPONSE: &str = "CreateTopicsResponse";

/// CreateTopicsRequest (API key 19): versions 2-7, flexible 5-7.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTopicsRequest {
    /// The topics to create (versions 0+).
    pub topics: Vec<CreatableTopic>,
    /// How long to wait in milliseconds before timing out the request (versions 0+, default 60000).
    pub timeout_ms: i32,
    /// If true, check that the topics can be created as specified, but don't create anything (versions 1+, default false).
    pub validate_only: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for CreateTopicsRequest {
    fn default() -> Self {
        Self {
            topics: Vec::new(),
            timeout_ms: 60000,
            validate_only: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl CreateTopicsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        let (input, topics) = read_array(
            input,
            flexible,
            CreatableTopic::min_encoded_size(version),
            |i| CreatableTopic::decode_from(i, root, version),
        )?;
        let (input, timeout_ms) = primitives::int32(input)?;
        let (input, validate_only) = primitives::boolean(input)?;
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
                timeout_ms,
                validate_only,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        write_array(buf, &self.topics, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        buf.put_i32(self.timeout_ms);
        buf.put_i8(i8::from(self.validate_only));
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for CreateTopicsRequest {
    const NAME: &'static str = "CreateTopicsRequest";
    const API_KEY: i16 = 19;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 7;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(5);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for CreateTopicsRequest {
    type Response = CreateTopicsResponse;
}

/// Part of CreateTopicsRequest (present in versions 2-7).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreatableTopic {
    /// The topic name (versions 0+).
    pub name: String,
    /// The number of partitions to create in the topic, or -1 if we are either specifying a manual partition assignment or using the default partitions (versions 0+).
    pub num_partitions: i32,
    /// The number of replicas to create for each partition in the topic, or -1 if we are either specifying a manual partition assignment or using the default replication factor (versions 0+).
    pub replication_factor: i16,
    /// The manual partition assignment, or the empty array if we are using automatic assignment (versions 0+).
    pub assignments: Vec<CreatableReplicaAssignment>,
    /// The custom topic configurations to set (versions 0+).
    pub configs: Vec<CreatableTopicConfig>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl CreatableTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = CreateTopicsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += 2;
        size += if flexible { 1 } else { 4 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, num_partitions) = primitives::int32(input)?;
        let (input, replication_factor) = primitives::int16(input)?;
        let (input, assignments) = read_array(
            input,
            flexible,
            CreatableReplicaAssignment::min_encoded_size(version),
            |i| CreatableReplicaAssignment::decode_from(i, root, version),
        )?;
        let (input, configs) = read_array(
            input,
            flexible,
            CreatableTopicConfig::min_encoded_size(version),
            |i| CreatableTopicConfig::decode_from(i, root, version),
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
                num_partitions,
                replication_factor,
                assignments,
                configs,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        buf.put_i32(self.num_partitions);
        buf.put_i16(self.replication_factor);
        write_array(buf, &self.assignments, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        write_array(buf, &self.configs, flexible, |buf, e| {
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
                "CreatableTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of CreateTopicsRequest (present in versions 2-7).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreatableReplicaAssignment {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The brokers to place the partition on (versions 0+).
    pub broker_ids: Vec<i32>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl CreatableReplicaAssignment {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = CreateTopicsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, broker_ids) = read_array(input, flexible, 4, primitives::int32)?;
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
                broker_ids,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        buf.put_i32(self.partition_index);
        write_array(buf, &self.broker_ids, flexible, |buf, e| {
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
                "CreatableReplicaAssignment.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of CreateTopicsRequest (present in versions 2-7).
#[derive(Debug, Clone, PartialEq)]
pub struct CreatableTopicConfig {
    /// The configuration name (versions 0+).
    pub name: String,
    /// The configuration value (versions 0+, nullable 0+).
    pub value: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for CreatableTopicConfig {
    fn default() -> Self {
        Self {
            name: String::new(),
            value: Some(String::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl CreatableTopicConfig {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = CreateTopicsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, value) = read_nullable_string(input, flexible, true)?;
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
                value,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = CreateTopicsRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        write_nullable_string(
            buf,
            self.value.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "CreatableTopicConfig.value"),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "CreatableTopicConfig.unknown_tagged_fields",
            ),
        )
    }
}

/// CreateTopicsResponse (API key 19): versions 2-7, flexible 5-7.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CreateTopicsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 2+).
    pub throttle_time_ms: i32,
    /// Results for each topic we tried to create (versions 0+).
    pub topics: Vec<CreatableTopicResult>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl CreateTopicsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = CreateTopicsResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, topics) = read_array(
            input,
            flexible,
            CreatableTopicResult::min_encoded_size(version),
            |i| CreatableTopicResult::decode_from(i, root, version),
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
        let flexible = CreateTopicsResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
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

impl Message for CreateTopicsResponse {
    const NAME: &'static str = "CreateTopicsResponse";
    const API_KEY: i16 = 19;
    const MIN_VERSION: i16 = 2;
    const MAX_VERSION: i16 = 7;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(5);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for CreateTopicsResponse {
    type Request = CreateTopicsRequest;
}

/// Part of CreateTopicsResponse (present in versions 2-7).
#[derive(Debug, Clone, PartialEq)]
pub struct CreatableTopicResult {
    /// The topic name (versions 0+).
    pub name: String,
    /// The unique topic ID (versions 7+).
    pub topic_id: Uuid,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The error message, or null if there was no error (versions 1+, nullable 1+).
    pub error_message: Option<String>,
    /// Optional topic config error returned if configs are not returned in the response (versions 5+, tagged 5+ (tag 0)).
    pub topic_config_error_code: i16,
    /// Number of partitions of the topic (versions 5+, default -1).
    pub num_partitions: i32,
    /// Replication factor of the topic (versions 5+, default -1).
    pub replication_factor: i16,
    /// Configuration of the topic (versions 5+, nullable 5+).
    pub configs: Option<Vec<CreatableTopicConfigs>>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for CreatableTopicResult {
    fn default() -> Self {
        Self {
            name: String::new(),
            topic_id: Uuid::NIL,
            error_code: 0,
            error_message: Some(String::new()),
            topic_config_error_code: 0,
            num_partitions: -1,
            replication_factor: -1,
            configs: Some(Vec::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl CreatableTopicResult {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = CreateTopicsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        if version >= 7 {
            size += 16;
        }
        size += 2;
        size += if flexible { 1 } else { 2 };
        if version >= 5 {
            size += 4;
        }
        if version >= 5 {
            size += 2;
        }
        if version >= 5 {
            size += if flexible { 1 } else { 4 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = CreateTopicsResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, topic_id) = if version >= 7 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
        let mut topic_config_error_code = 0;
        let (input, num_partitions) = if version >= 5 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, replication_factor) = if version >= 5 {
            primitives::int16(input)?
        } else {
            (input, -1)
        };
        let (input, configs) = if version >= 5 {
            read_nullable_array(
                input,
                flexible,
                true,
                CreatableTopicConfigs::min_encoded_size(version),
                |i| CreatableTopicConfigs::decode_from(i, root, version),
            )?
        } else {
            (input, Some(Vec::new()))
        };
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 5 => {
                    topic_config_error_code =
                        read_tagged(value, "CreatableTopicResult.topic_config_error_code", |i| {
                            primitives::int16(i)
                        })?
                }
                _ => unknown_tagged_fields.push((tag, share(root, value))),
            }
        }
        Ok((
            input,
            Self {
                name,
                topic_id,
                error_code,
                error_message,
                topic_config_error_code,
                num_partitions,
                replication_factor,
                configs,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = CreateTopicsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        if version >= 7 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_RESPONSE, version, "CreatableTopicResult.topic_id").not_at_version()
            );
        }
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "CreatableTopicResult.error_message"),
        )?;
        if version >= 5 {
            buf.put_i32(self.num_partitions);
        } else if self.num_partitions != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "CreatableTopicResult.num_partitions",
            )
            .not_at_version());
        }
        if version >= 5 {
            buf.put_i16(self.replication_factor);
        } else if self.replication_factor != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "CreatableTopicResult.replication_factor",
            )
            .not_at_version());
        }
        if version >= 5 {
            write_nullable_array(
                buf,
                self.configs.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "CreatableTopicResult.configs"),
                |buf, e| {
                    e.encode_into(buf, version)?;
                    Ok(())
                },
            )?;
        } else if !matches!(&self.configs, Some(x) if x.is_empty()) {
            return Err(at(NAME_RESPONSE, version, "CreatableTopicResult.configs").not_at_version());
        }
        let mut known = Vec::new();
        if version >= 5 {
            if self.topic_config_error_code != 0 {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    buf.put_i16(self.topic_config_error_code);
                }
                known.push((0, value));
            }
        } else if self.topic_config_error_code != 0 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "CreatableTopicResult.topic_config_error_code",
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
                "CreatableTopicResult.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of CreateTopicsResponse (present in versions 5-7).
#[derive(Debug, Clone, PartialEq)]
pub struct CreatableTopicConfigs {
    /// The configuration name (versions 5+).
    pub name: String,
    /// The configuration value (versions 5+, nullable 5+).
    pub value: Option<String>,
    /// True if the configuration is read-only (versions 5+).
    pub read_only: bool,
    /// The configuration source (versions 5+, default -1).
    pub config_source: i8,
    /// True if this configuration is sensitive (versions 5+).
    pub is_sensitive: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for CreatableTopicConfigs {
    fn default() -> Self {
        Self {
            name: String::new(),
            value: Some(String::new()),
            read_only: false,
            config_source: -1,
            is_sensitive: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl CreatableTopicConfigs {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = CreateTopicsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += 1;
        size += 1;
        size += 1;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = CreateTopicsResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, value) = read_nullable_string(input, flexible, true)?;
        let (input, read_only) = primitives::boolean(input)?;
        let (input, config_source) = primitives::int8(input)?;
        let (input, is_sensitive) = primitives::boolean(input)?;
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
                value,
                read_only,
                config_source,
                is_sensitive,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = CreateTopicsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        write_nullable_string(
            buf,
            self.value.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "CreatableTopicConfigs.value"),
        )?;
        buf.put_i8(i8::from(self.read_only));
        buf.put_i8(self.config_source);
        buf.put_i8(i8::from(self.is_sensitive));
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "CreatableTopicConfigs.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_create_topics_request(g: &mut Gen, version: i16) -> CreateTopicsRequest {
        let flexible = CreateTopicsRequest::is_flexible(version);
        CreateTopicsRequest {
            topics: g.vec(|g| arb_creatable_topic(g, version)),
            timeout_ms: g.i32(),
            validate_only: g.bool(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_creatable_topic(g: &mut Gen, version: i16) -> CreatableTopic {
        let flexible = CreateTopicsRequest::is_flexible(version);
        CreatableTopic {
            name: g.string(),
            num_partitions: g.i32(),
            replication_factor: g.i16(),
            assignments: g.vec(|g| arb_creatable_replica_assignment(g, version)),
            configs: g.vec(|g| arb_creatable_topic_config(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_creatable_replica_assignment(
        g: &mut Gen,
        version: i16,
    ) -> CreatableReplicaAssignment {
        let flexible = CreateTopicsRequest::is_flexible(version);
        CreatableReplicaAssignment {
            partition_index: g.i32(),
            broker_ids: g.vec(|g| g.i32()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_creatable_topic_config(g: &mut Gen, version: i16) -> CreatableTopicConfig {
        let flexible = CreateTopicsRequest::is_flexible(version);
        CreatableTopicConfig {
            name: g.string(),
            value: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_create_topics_response(g: &mut Gen, version: i16) -> CreateTopicsResponse {
        let flexible = CreateTopicsResponse::is_flexible(version);
        CreateTopicsResponse {
            throttle_time_ms: g.i32(),
            topics: g.vec(|g| arb_creatable_topic_result(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_creatable_topic_result(g: &mut Gen, version: i16) -> CreatableTopicResult {
        let flexible = CreateTopicsResponse::is_flexible(version);
        CreatableTopicResult {
            name: g.string(),
            topic_id: if version >= 7 { g.uuid() } else { Uuid::NIL },
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            topic_config_error_code: if version >= 5 { g.i16() } else { 0 },
            num_partitions: if version >= 5 { g.i32() } else { -1 },
            replication_factor: if version >= 5 { g.i16() } else { -1 },
            configs: if version >= 5 {
                g.option(|g| g.vec(|g| arb_creatable_topic_configs(g, version)))
            } else {
                Some(Vec::new())
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0]),
        }
    }

    pub(super) fn arb_creatable_topic_configs(g: &mut Gen, version: i16) -> CreatableTopicConfigs {
        let flexible = CreateTopicsResponse::is_flexible(version);
        CreatableTopicConfigs {
            name: g.string(),
            value: g.option(|g| g.string()),
            read_only: g.bool(),
            config_source: g.i8(),
            is_sensitive: g.bool(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn create_topics_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_create_topics_request)?;
        }

        #[test]
        fn create_topics_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_create_topics_request)?;
        }

        #[test]
        fn create_topics_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_create_topics_response)?;
        }

        #[test]
        fn create_topics_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_create_topics_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 2..=7 {
            let mut buf = BytesMut::new();
            CreatableTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                CreatableTopic::min_encoded_size(version),
                "CreatableTopic v{version}"
            );
        }
        for version in 2..=7 {
            let mut buf = BytesMut::new();
            CreatableReplicaAssignment::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                CreatableReplicaAssignment::min_encoded_size(version),
                "CreatableReplicaAssignment v{version}"
            );
        }
        for version in 2..=7 {
            let mut buf = BytesMut::new();
            CreatableTopicConfig::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                CreatableTopicConfig::min_encoded_size(version),
                "CreatableTopicConfig v{version}"
            );
        }
        for version in 2..=7 {
            let mut buf = BytesMut::new();
            CreatableTopicResult::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                CreatableTopicResult::min_encoded_size(version),
                "CreatableTopicResult v{version}"
            );
        }
        for version in 5..=7 {
            let mut buf = BytesMut::new();
            CreatableTopicConfigs::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                CreatableTopicConfigs::min_encoded_size(version),
                "CreatableTopicConfigs v{version}"
            );
        }
    }
}
