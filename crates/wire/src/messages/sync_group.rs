//! SyncGroup: `SyncGroupRequest` and `SyncGroupResponse` (API key 14), generated from Kafka 4.4.0's `SyncGroupRequest.json` and `SyncGroupResponse.json`.
//!
//! Request versions 0-5, flexible 4-5; response versions 0-5, flexible 4-5.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_bytes,
    read_nullable_string, read_string, share, write_array, write_nullable_string,
    write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "SyncGroupRequest";
const NAME_RESPONSE: &str = "SyncGroupResponse";

/// SyncGroupRequest (API key 14): versions 0-5, flexible 4-5.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncGroupRequest {
    /// The unique group identifier (versions 0+).
    pub group_id: String,
    /// The generation of the group (versions 0+).
    pub generation_id: i32,
    /// The member ID assigned by the group (versions 0+).
    pub member_id: String,
    /// The unique identifier of the consumer instance provided by end user (versions 3+, nullable 3+, default null).
    pub group_instance_id: Option<String>,
    /// The group protocol type (versions 5+, nullable 5+, default null).
    pub protocol_type: Option<String>,
    /// The group protocol name (versions 5+, nullable 5+, default null).
    pub protocol_name: Option<String>,
    /// Each assignment (versions 0+).
    pub assignments: Vec<SyncGroupRequestAssignment>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl SyncGroupRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = SyncGroupRequest::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, generation_id) = primitives::int32(input)?;
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = if version >= 3 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, protocol_type) = if version >= 5 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, protocol_name) = if version >= 5 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, assignments) = read_array(
            input,
            flexible,
            SyncGroupRequestAssignment::min_encoded_size(version),
            |i| SyncGroupRequestAssignment::decode_from(i, root, version),
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
                generation_id,
                member_id,
                group_instance_id,
                protocol_type,
                protocol_name,
                assignments,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = SyncGroupRequest::is_flexible(version);
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
        if version >= 5 {
            write_nullable_string(
                buf,
                self.protocol_type.as_deref(),
                flexible,
                true,
                at(NAME_REQUEST, version, "protocol_type"),
            )?;
        } else if self.protocol_type.is_some() {
            return Err(at(NAME_REQUEST, version, "protocol_type").not_at_version());
        }
        if version >= 5 {
            write_nullable_string(
                buf,
                self.protocol_name.as_deref(),
                flexible,
                true,
                at(NAME_REQUEST, version, "protocol_name"),
            )?;
        } else if self.protocol_name.is_some() {
            return Err(at(NAME_REQUEST, version, "protocol_name").not_at_version());
        }
        write_array(buf, &self.assignments, flexible, |buf, e| {
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

impl Message for SyncGroupRequest {
    const NAME: &'static str = "SyncGroupRequest";
    const API_KEY: i16 = 14;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
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

impl Request for SyncGroupRequest {
    type Response = SyncGroupResponse;
}

/// Part of SyncGroupRequest (present in versions 0-5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncGroupRequestAssignment {
    /// The ID of the member to assign (versions 0+).
    pub member_id: String,
    /// The member assignment (versions 0+).
    pub assignment: Bytes,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl SyncGroupRequestAssignment {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = SyncGroupRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = SyncGroupRequest::is_flexible(version);
        let (input, member_id) = read_string(input, flexible)?;
        let (input, assignment) = read_bytes(input, root, flexible)?;
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
                member_id,
                assignment,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = SyncGroupRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        primitives::put_bytes(buf, Some(&self.assignment[..]), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "SyncGroupRequestAssignment.unknown_tagged_fields",
            ),
        )
    }
}

/// SyncGroupResponse (API key 14): versions 0-5, flexible 4-5.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SyncGroupResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The group protocol type (versions 5+, nullable 5+, default null).
    pub protocol_type: Option<String>,
    /// The group protocol name (versions 5+, nullable 5+, default null).
    pub protocol_name: Option<String>,
    /// The member assignment (versions 0+).
    pub assignment: Bytes,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl SyncGroupResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = SyncGroupResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, error_code) = primitives::int16(input)?;
        let (input, protocol_type) = if version >= 5 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, protocol_name) = if version >= 5 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, assignment) = read_bytes(input, root, flexible)?;
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
                protocol_type,
                protocol_name,
                assignment,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = SyncGroupResponse::is_flexible(version);
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        buf.put_i16(self.error_code);
        if version >= 5 {
            write_nullable_string(
                buf,
                self.protocol_type.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "protocol_type"),
            )?;
        } else if self.protocol_type.is_some() {
            return Err(at(NAME_RESPONSE, version, "protocol_type").not_at_version());
        }
        if version >= 5 {
            write_nullable_string(
                buf,
                self.protocol_name.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "protocol_name"),
            )?;
        } else if self.protocol_name.is_some() {
            return Err(at(NAME_RESPONSE, version, "protocol_name").not_at_version());
        }
        primitives::put_bytes(buf, Some(&self.assignment[..]), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for SyncGroupResponse {
    const NAME: &'static str = "SyncGroupResponse";
    const API_KEY: i16 = 14;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
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

impl Response for SyncGroupResponse {
    type Request = SyncGroupRequest;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_sync_group_request(g: &mut Gen, version: i16) -> SyncGroupRequest {
        let flexible = SyncGroupRequest::is_flexible(version);
        SyncGroupRequest {
            group_id: g.string(),
            generation_id: g.i32(),
            member_id: g.string(),
            group_instance_id: if version >= 3 {
                g.option(|g| g.string())
            } else {
                None
            },
            protocol_type: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            protocol_name: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            assignments: g.vec(|g| arb_sync_group_request_assignment(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_sync_group_request_assignment(
        g: &mut Gen,
        version: i16,
    ) -> SyncGroupRequestAssignment {
        let flexible = SyncGroupRequest::is_flexible(version);
        SyncGroupRequestAssignment {
            member_id: g.string(),
            assignment: g.bytes(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_sync_group_response(g: &mut Gen, version: i16) -> SyncGroupResponse {
        let flexible = SyncGroupResponse::is_flexible(version);
        SyncGroupResponse {
            throttle_time_ms: if version >= 1 { g.i32() } else { 0 },
            error_code: g.i16(),
            protocol_type: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            protocol_name: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            assignment: g.bytes(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn sync_group_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_sync_group_request)?;
        }

        #[test]
        fn sync_group_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_sync_group_request)?;
        }

        #[test]
        fn sync_group_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_sync_group_response)?;
        }

        #[test]
        fn sync_group_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_sync_group_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=5 {
            let mut buf = BytesMut::new();
            SyncGroupRequestAssignment::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                SyncGroupRequestAssignment::min_encoded_size(version),
                "SyncGroupRequestAssignment v{version}"
            );
        }
    }
}
