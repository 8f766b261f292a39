//! Heartbeat: `HeartbeatRequest` and `HeartbeatResponse` (API key 12), generated from Kafka 4.4.0's `HeartbeatRequest.json` and `HeartbeatResponse.json`.
//!
//! Request versions 0-4, flexible 4; response versions 0-4, flexible 4.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_nullable_string, read_string,
    share, write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "HeartbeatRequest";
const NAME_RESPONSE: &str = "HeartbeatResponse";

/// HeartbeatRequest (API key 12): versions 0-4, flexible 4.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeartbeatRequest {
    /// The group id (versions 0+).
    pub group_id: String,
    /// The generation of the group (versions 0+).
    pub generation_id: i32,
    /// The member ID (versions 0+).
    pub member_id: String,
    /// The unique identifier of the consumer instance provided by end user (versions 3+, nullable 3+, default null).
    pub group_instance_id: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl HeartbeatRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = HeartbeatRequest::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, generation_id) = primitives::int32(input)?;
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = if version >= 3 {
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
                group_id,
                generation_id,
                member_id,
                group_instance_id,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = HeartbeatRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        buf.put_i32(self.generation_id);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        if version >= 3 {
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
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for HeartbeatRequest {
    const NAME: &'static str = "HeartbeatRequest";
    const API_KEY: i16 = 12;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
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

impl Request for HeartbeatRequest {
    type Response = HeartbeatResponse;
}

/// HeartbeatResponse (API key 12): versions 0-4, flexible 4.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct HeartbeatResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl HeartbeatResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = HeartbeatResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
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
                throttle_time_ms,
                error_code,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = HeartbeatResponse::is_flexible(version);
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        buf.put_i16(self.error_code);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for HeartbeatResponse {
    const NAME: &'static str = "HeartbeatResponse";
    const API_KEY: i16 = 12;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 4;
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

impl Response for HeartbeatResponse {
    type Request = HeartbeatRequest;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_heartbeat_request(g: &mut Gen, version: i16) -> HeartbeatRequest {
        let flexible = HeartbeatRequest::is_flexible(version);
        HeartbeatRequest {
            group_id: g.string(),
            generation_id: g.i32(),
            member_id: g.string(),
            group_instance_id: if version >= 3 {
                g.option(|g| g.string())
            } else {
                None
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_heartbeat_response(g: &mut Gen, version: i16) -> HeartbeatResponse {
        let flexible = HeartbeatResponse::is_flexible(version);
        HeartbeatResponse {
            throttle_time_ms: if version >= 1 { g.i32() } else { 0 },
            error_code: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn heartbeat_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_heartbeat_request)?;
        }

        #[test]
        fn heartbeat_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_heartbeat_request)?;
        }

        #[test]
        fn heartbeat_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_heartbeat_response)?;
        }

        #[test]
        fn heartbeat_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_heartbeat_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {}
}
