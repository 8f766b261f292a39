//! ListOffsets: `ListOffsetsRequest` and `ListOffsetsResponse` (API key 2), generated from Kafka 4.4.0's `ListOffsetsRequest.json` and `ListOffsetsResponse.json`.
//!
//! Request versions 1-11, flexible 6-11; response versions 1-11, flexible 6-11.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_string, share,
    write_array, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "ListOffsetsRequest";
const NAME_RESPONSE: &str = "ListOffsetsResponse";

/// ListOffsetsRequest (API key 2): versions 1-11, flexible 6-11.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListOffsetsRequest {
    /// The broker ID of the requester, or -1 if this request is being made by a normal consumer (versions 0+).
    pub replica_id: i32,
    /// This setting controls the visibility of transactional records. Using READ_UNCOMMITTED (isolation_level = 0) makes all records visible. With READ_COMMITTED (isolation_level = 1), non-transactional and COMMITTED transactional records are visible. To be more concrete, READ_COMMITTED returns all data from offsets smaller than the current LSO (last stable offset), and enables the inclusion of the list of aborted transactions in the result, which allows consumers to discard ABORTED transactional records (versions 2+).
    pub isolation_level: i8,
    /// Each topic in the request (versions 0+).
    pub topics: Vec<ListOffsetsTopic>,
    /// The timeout to await a response in milliseconds for requests that require reading from remote storage for topics enabled with tiered storage (versions 10+).
    pub timeout_ms: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ListOffsetsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListOffsetsRequest::is_flexible(version);
        let (input, replica_id) = primitives::int32(input)?;
        let (input, isolation_level) = if version >= 2 {
            primitives::int8(input)?
        } else {
            (input, 0)
        };
        let (input, topics) = read_array(
            input,
            flexible,
            ListOffsetsTopic::min_encoded_size(version),
            |i| ListOffsetsTopic::decode_from(i, root, version),
        )?;
        let (input, timeout_ms) = if version >= 10 {
            primitives::int32(input)?
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
                replica_id,
                isolation_level,
                topics,
                timeout_ms,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ListOffsetsRequest::is_flexible(version);
        buf.put_i32(self.replica_id);
        if version >= 2 {
            buf.put_i8(self.isolation_level);
        } else if self.isolation_level != 0 {
            return Err(at(NAME_REQUEST, version, "isolation_level").not_at_version());
        }
        write_array(buf, &self.topics, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 10 {
            buf.put_i32(self.timeout_ms);
        } else if self.timeout_ms != 0 {
            return Err(at(NAME_REQUEST, version, "timeout_ms").not_at_version());
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

impl Message for ListOffsetsRequest {
    const NAME: &'static str = "ListOffsetsRequest";
    const API_KEY: i16 = 2;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 11;
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

impl Request for ListOffsetsRequest {
    type Response = ListOffsetsResponse;
}

/// Part of ListOffsetsRequest (present in versions 1-11).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListOffsetsTopic {
    /// The topic name (versions 0+).
    pub name: String,
    /// Each partition in the request (versions 0+).
    pub partitions: Vec<ListOffsetsPartition>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ListOffsetsTopic {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ListOffsetsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListOffsetsRequest::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, partitions) = read_array(
            input,
            flexible,
            ListOffsetsPartition::min_encoded_size(version),
            |i| ListOffsetsPartition::decode_from(i, root, version),
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
        let flexible = ListOffsetsRequest::is_flexible(version);
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
                NAME_REQUEST,
                version,
                "ListOffsetsTopic.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ListOffsetsRequest (present in versions 1-11).
#[derive(Debug, Clone, PartialEq)]
pub struct ListOffsetsPartition {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The current leader epoch (versions 4+, default -1).
    pub current_leader_epoch: i32,
    /// The current timestamp (versions 0+).
    pub timestamp: i64,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for ListOffsetsPartition {
    fn default() -> Self {
        Self {
            partition_index: 0,
            current_leader_epoch: -1,
            timestamp: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ListOffsetsPartition {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ListOffsetsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        if version >= 4 {
            size += 4;
        }
        size += 8;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListOffsetsRequest::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, current_leader_epoch) = if version >= 4 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, timestamp) = primitives::int64(input)?;
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
                current_leader_epoch,
                timestamp,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ListOffsetsRequest::is_flexible(version);
        buf.put_i32(self.partition_index);
        if version >= 4 {
            buf.put_i32(self.current_leader_epoch);
        } else if self.current_leader_epoch != -1 {
            return Err(at(
                NAME_REQUEST,
                version,
                "ListOffsetsPartition.current_leader_epoch",
            )
            .not_at_version());
        }
        buf.put_i64(self.timestamp);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "ListOffsetsPartition.unknown_tagged_fields",
            ),
        )
    }
}

/// ListOffsetsResponse (API key 2): versions 1-11, flexible 6-11.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListOffsetsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 2+).
    pub throttle_time_ms: i32,
    /// Each topic in the response (versions 0+).
    pub topics: Vec<ListOffsetsTopicResponse>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ListOffsetsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListOffsetsResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 2 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, topics) = read_array(
            input,
            flexible,
            ListOffsetsTopicResponse::min_encoded_size(version),
            |i| ListOffsetsTopicResponse::decode_from(i, root, version),
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
        let flexible = ListOffsetsResponse::is_flexible(version);
        if version >= 2 {
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

impl Message for ListOffsetsResponse {
    const NAME: &'static str = "ListOffsetsResponse";
    const API_KEY: i16 = 2;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 11;
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

impl Response for ListOffsetsResponse {
    type Request = ListOffsetsRequest;
}

/// Part of ListOffsetsResponse (present in versions 1-11).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListOffsetsTopicResponse {
    /// The topic name (versions 0+).
    pub name: String,
    /// Each partition in the response (versions 0+).
    pub partitions: Vec<ListOffsetsPartitionResponse>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ListOffsetsTopicResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ListOffsetsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListOffsetsResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, partitions) = read_array(
            input,
            flexible,
            ListOffsetsPartitionResponse::min_encoded_size(version),
            |i| ListOffsetsPartitionResponse::decode_from(i, root, version),
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
        let flexible = ListOffsetsResponse::is_flexible(version);
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
                "ListOffsetsTopicResponse.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ListOffsetsResponse (present in versions 1-11).
#[derive(Debug, Clone, PartialEq)]
pub struct ListOffsetsPartitionResponse {
    /// The partition index (versions 0+).
    pub partition_index: i32,
    /// The partition error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The timestamp associated with the returned offset (versions 1+, default -1).
    pub timestamp: i64,
    /// The returned offset (versions 1+, default -1).
    pub offset: i64,
    /// The leader epoch associated with the returned offset (versions 4+, default -1).
    pub leader_epoch: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for ListOffsetsPartitionResponse {
    fn default() -> Self {
        Self {
            partition_index: 0,
            error_code: 0,
            timestamp: -1,
            offset: -1,
            leader_epoch: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ListOffsetsPartitionResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ListOffsetsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 4;
        size += 2;
        size += 8;
        size += 8;
        if version >= 4 {
            size += 4;
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListOffsetsResponse::is_flexible(version);
        let (input, partition_index) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, timestamp) = primitives::int64(input)?;
        let (input, offset) = primitives::int64(input)?;
        let (input, leader_epoch) = if version >= 4 {
            primitives::int32(input)?
        } else {
            (input, -1)
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
                partition_index,
                error_code,
                timestamp,
                offset,
                leader_epoch,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ListOffsetsResponse::is_flexible(version);
        buf.put_i32(self.partition_index);
        buf.put_i16(self.error_code);
        buf.put_i64(self.timestamp);
        buf.put_i64(self.offset);
        if version >= 4 {
            buf.put_i32(self.leader_epoch);
        } else if self.leader_epoch != -1 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "ListOffsetsPartitionResponse.leader_epoch",
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
                "ListOffsetsPartitionResponse.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_list_offsets_request(g: &mut Gen, version: i16) -> ListOffsetsRequest {
        let flexible = ListOffsetsRequest::is_flexible(version);
        ListOffsetsRequest {
            replica_id: g.i32(),
            isolation_level: if version >= 2 { g.i8() } else { 0 },
            topics: g.vec(|g| arb_list_offsets_topic(g, version)),
            timeout_ms: if version >= 10 { g.i32() } else { 0 },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_list_offsets_topic(g: &mut Gen, version: i16) -> ListOffsetsTopic {
        let flexible = ListOffsetsRequest::is_flexible(version);
        ListOffsetsTopic {
            name: g.string(),
            partitions: g.vec(|g| arb_list_offsets_partition(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_list_offsets_partition(g: &mut Gen, version: i16) -> ListOffsetsPartition {
        let flexible = ListOffsetsRequest::is_flexible(version);
        ListOffsetsPartition {
            partition_index: g.i32(),
            current_leader_epoch: if version >= 4 { g.i32() } else { -1 },
            timestamp: g.i64(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_list_offsets_response(g: &mut Gen, version: i16) -> ListOffsetsResponse {
        let flexible = ListOffsetsResponse::is_flexible(version);
        ListOffsetsResponse {
            throttle_time_ms: if version >= 2 { g.i32() } else { 0 },
            topics: g.vec(|g| arb_list_offsets_topic_response(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_list_offsets_topic_response(
        g: &mut Gen,
        version: i16,
    ) -> ListOffsetsTopicResponse {
        let flexible = ListOffsetsResponse::is_flexible(version);
        ListOffsetsTopicResponse {
            name: g.string(),
            partitions: g.vec(|g| arb_list_offsets_partition_response(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_list_offsets_partition_response(
        g: &mut Gen,
        version: i16,
    ) -> ListOffsetsPartitionResponse {
        let flexible = ListOffsetsResponse::is_flexible(version);
        ListOffsetsPartitionResponse {
            partition_index: g.i32(),
            error_code: g.i16(),
            timestamp: g.i64(),
            offset: g.i64(),
            leader_epoch: if version >= 4 { g.i32() } else { -1 },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn list_offsets_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_list_offsets_request)?;
        }

        #[test]
        fn list_offsets_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_list_offsets_request)?;
        }

        #[test]
        fn list_offsets_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_list_offsets_response)?;
        }

        #[test]
        fn list_offsets_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_list_offsets_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 1..=11 {
            let mut buf = BytesMut::new();
            ListOffsetsTopic::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ListOffsetsTopic::min_encoded_size(version),
                "ListOffsetsTopic v{version}"
            );
        }
        for version in 1..=11 {
            let mut buf = BytesMut::new();
            ListOffsetsPartition::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ListOffsetsPartition::min_encoded_size(version),
                "ListOffsetsPartition v{version}"
            );
        }
        for version in 1..=11 {
            let mut buf = BytesMut::new();
            ListOffsetsTopicResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ListOffsetsTopicResponse::min_encoded_size(version),
                "ListOffsetsTopicResponse v{version}"
            );
        }
        for version in 1..=11 {
            let mut buf = BytesMut::new();
            ListOffsetsPartitionResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ListOffsetsPartitionResponse::min_encoded_size(version),
                "ListOffsetsPartitionResponse v{version}"
            );
        }
    }
}
