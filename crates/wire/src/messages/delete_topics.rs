//! DeleteTopics: `DeleteTopicsRequest` and `DeleteTopicsResponse` (API key 20), generated from Kafka 4.4.0's `DeleteTopicsRequest.json` and `DeleteTopicsResponse.json`.
//!
//! Request versions 1-6, flexible 4-6; response versions 1-6, flexible 4-6.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_string,
    read_string, share, write_array, write_nullable_string, write_tagged_fields, Message, Request,
    Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "DeleteTopicsRequest";
const NAME_RESPONSE: &str = "DeleteTopicsResponse";

/// DeleteTopicsRequest (API key 20): versions 1-6, flexible 4-6.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeleteTopicsRequest {
    /// The name or topic ID of the topic (versions 6+).
    pub topics: Vec<DeleteTopicState>,
    /// The names of the topics to delete (versions 0-5).
    pub topic_names: Vec<String>,
    /// The length of time in milliseconds to wait for the deletions to complete (versions 0+).
    pub timeout_ms: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DeleteTopicsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DeleteTopicsRequest::is_flexible(version);
        let (input, topics) = if version >= 6 {
            read_array(
                input,
                flexible,
                DeleteTopicState::min_encoded_size(version),
                |i| DeleteTopicState::decode_from(i, root, version),
            )?
        } else {
            (input, Vec::new())
        };
        let (input, topic_names) = if version <= 5 {
            read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
                read_string(i, flexible)
            })?
        } else {
            (input, Vec::new())
        };
        let (input, timeout_ms) = primitives::int32(input)?;
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
                topic_names,
                timeout_ms,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DeleteTopicsRequest::is_flexible(version);
        if version >= 6 {
            write_array(buf, &self.topics, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.topics.is_empty() {
            return Err(at(NAME_REQUEST, version, "topics").not_at_version());
        }
        if version <= 5 {
            write_array(buf, &self.topic_names, flexible, |buf, e| {
                primitives::put_str(buf, Some(e.as_str()), flexible)?;
                Ok(())
            })?;
        } else if !self.topic_names.is_empty() {
            return Err(at(NAME_REQUEST, version, "topic_names").not_at_version());
        }
        buf.put_i32(self.timeout_ms);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for DeleteTopicsRequest {
    const NAME: &'static str = "DeleteTopicsRequest";
    const API_KEY: i16 = 20;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(4);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for DeleteTopicsRequest {
    type Response = DeleteTopicsResponse;
}

/// Part of DeleteTopicsRequest (present in versions 6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeleteTopicState {
    /// The topic name (versions 6+, nullable 6+, default null).
    pub name: Option<String>,
    /// The unique topic ID (versions 6+).
    pub topic_id: Uuid,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DeleteTopicState {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DeleteTopicsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += 16;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DeleteTopicsRequest::is_flexible(version);
        let (input, name) = read_nullable_string(input, flexible, true)?;
        let (input, topic_id) = primitives::uuid(input)?;
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
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DeleteTopicsRequest::is_flexible(version);
        write_nullable_string(
            buf,
            self.name.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "DeleteTopicState.name"),
        )?;
        buf.put_slice(&self.topic_id.0);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "DeleteTopicState.unknown_tagged_fields",
            ),
        )
    }
}

/// DeleteTopicsResponse (API key 20): versions 1-6, flexible 4-6.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeleteTopicsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// The results for each topic we tried to delete (versions 0+).
    pub responses: Vec<DeletableTopicResult>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DeleteTopicsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DeleteTopicsResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, responses) = read_array(
            input,
            flexible,
            DeletableTopicResult::min_encoded_size(version),
            |i| DeletableTopicResult::decode_from(i, root, version),
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
                responses,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DeleteTopicsResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
        write_array(buf, &self.responses, flexible, |buf, e| {
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

impl Message for DeleteTopicsResponse {
    const NAME: &'static str = "DeleteTopicsResponse";
    const API_KEY: i16 = 20;
    const MIN_VERSION: i16 = 1;
    const MAX_VERSION: i16 = 6;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(4);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for DeleteTopicsResponse {
    type Request = DeleteTopicsRequest;
}

/// Part of DeleteTopicsResponse (present in versions 1-6).
#[derive(Debug, Clone, PartialEq)]
pub struct DeletableTopicResult {
    /// The topic name (versions 0+, nullable 6+).
    pub name: Option<String>,
    /// The unique topic ID (versions 6+).
    pub topic_id: Uuid,
    /// The deletion error, or 0 if the deletion succeeded (versions 0+).
    pub error_code: i16,
    /// The error message, or null if there was no error (versions 5+, nullable 5+, default null).
    pub error_message: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DeletableTopicResult {
    fn default() -> Self {
        Self {
            name: Some(String::new()),
            topic_id: Uuid::NIL,
            error_code: 0,
            error_message: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DeletableTopicResult {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DeleteTopicsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        if version >= 6 {
            size += 16;
        }
        size += 2;
        if version >= 5 {
            size += if flexible { 1 } else { 2 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DeleteTopicsResponse::is_flexible(version);
        let (input, name) = read_nullable_string(input, flexible, version >= 6)?;
        let (input, topic_id) = if version >= 6 {
            primitives::uuid(input)?
        } else {
            (input, Uuid::NIL)
        };
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = if version >= 5 {
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
                name,
                topic_id,
                error_code,
                error_message,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DeleteTopicsResponse::is_flexible(version);
        write_nullable_string(
            buf,
            self.name.as_deref(),
            flexible,
            version >= 6,
            at(NAME_RESPONSE, version, "DeletableTopicResult.name"),
        )?;
        if version >= 6 {
            buf.put_slice(&self.topic_id.0);
        } else if !self.topic_id.is_nil() {
            return Err(
                at(NAME_RESPONSE, version, "DeletableTopicResult.topic_id").not_at_version()
            );
        }
        buf.put_i16(self.error_code);
        if version >= 5 {
            write_nullable_string(
                buf,
                self.error_message.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "DeletableTopicResult.error_message"),
            )?;
        } else if self.error_message.is_some() {
            return Err(
                at(NAME_RESPONSE, version, "DeletableTopicResult.error_message").not_at_version(),
            );
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "DeletableTopicResult.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_delete_topics_request(g: &mut Gen, version: i16) -> DeleteTopicsRequest {
        let flexible = DeleteTopicsRequest::is_flexible(version);
        DeleteTopicsRequest {
            topics: if version >= 6 {
                g.vec(|g| arb_delete_topic_state(g, version))
            } else {
                Vec::new()
            },
            topic_names: if version <= 5 {
                g.vec(|g| g.string())
            } else {
                Vec::new()
            },
            timeout_ms: g.i32(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_delete_topic_state(g: &mut Gen, version: i16) -> DeleteTopicState {
        let flexible = DeleteTopicsRequest::is_flexible(version);
        DeleteTopicState {
            name: g.option(|g| g.string()),
            topic_id: g.uuid(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_delete_topics_response(g: &mut Gen, version: i16) -> DeleteTopicsResponse {
        let flexible = DeleteTopicsResponse::is_flexible(version);
        DeleteTopicsResponse {
            throttle_time_ms: g.i32(),
            responses: g.vec(|g| arb_deletable_topic_result(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_deletable_topic_result(g: &mut Gen, version: i16) -> DeletableTopicResult {
        let flexible = DeleteTopicsResponse::is_flexible(version);
        DeletableTopicResult {
            name: if version >= 6 {
                g.option(|g| g.string())
            } else {
                Some(g.string())
            },
            topic_id: if version >= 6 { g.uuid() } else { Uuid::NIL },
            error_code: g.i16(),
            error_message: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn delete_topics_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_delete_topics_request)?;
        }

        #[test]
        fn delete_topics_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_delete_topics_request)?;
        }

        #[test]
        fn delete_topics_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_delete_topics_response)?;
        }

        #[test]
        fn delete_topics_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_delete_topics_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 6..=6 {
            let mut buf = BytesMut::new();
            DeleteTopicState::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DeleteTopicState::min_encoded_size(version),
                "DeleteTopicState v{version}"
            );
        }
        for version in 1..=6 {
            let mut buf = BytesMut::new();
            DeletableTopicResult::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DeletableTopicResult::min_encoded_size(version),
                "DeletableTopicResult v{version}"
            );
        }
    }
}
