//! LeaveGroup: `LeaveGroupRequest` and `LeaveGroupResponse` (API key 13), generated from Kafka 4.4.0's `LeaveGroupRequest.json` and `LeaveGroupResponse.json`.
//!
//! Request versions 0-5, flexible 4-5; response versions 0-5, flexible 4-5.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_string,
    read_string, share, write_array, write_nullable_string, write_tagged_fields, Message, Request,
    Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "LeaveGroupRequest";
const NAME_RESPONSE: &str = "LeaveGroupResponse";

/// LeaveGroupRequest (API key 13): versions 0-5, flexible 4-5.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LeaveGroupRequest {
    /// The ID of the group to leave (versions 0+).
    pub group_id: String,
    /// The member ID to remove from the group (versions 0-2).
    pub member_id: String,
    /// List of leaving member identities (versions 3+).
    pub members: Vec<MemberIdentity>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl LeaveGroupRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = LeaveGroupRequest::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, member_id) = if version <= 2 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, members) = if version >= 3 {
            read_array(
                input,
                flexible,
                MemberIdentity::min_encoded_size(version),
                |i| MemberIdentity::decode_from(i, root, version),
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
                group_id,
                member_id,
                members,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = LeaveGroupRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        if version <= 2 {
            primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        } else if !self.member_id.is_empty() {
            return Err(at(NAME_REQUEST, version, "member_id").not_at_version());
        }
        if version >= 3 {
            write_array(buf, &self.members, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.members.is_empty() {
            return Err(at(NAME_REQUEST, version, "members").not_at_version());
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

impl Message for LeaveGroupRequest {
    const NAME: &'static str = "LeaveGroupRequest";
    const API_KEY: i16 = 13;
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

impl Request for LeaveGroupRequest {
    type Response = LeaveGroupResponse;
}

/// Part of LeaveGroupRequest (present in versions 3-5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemberIdentity {
    /// The member ID to remove from the group (versions 3+).
    pub member_id: String,
    /// The group instance ID to remove from the group (versions 3+, nullable 3+, default null).
    pub group_instance_id: Option<String>,
    /// The reason why the member left the group (versions 5+, nullable 5+, default null).
    pub reason: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl MemberIdentity {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = LeaveGroupRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        if version >= 5 {
            size += if flexible { 1 } else { 2 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = LeaveGroupRequest::is_flexible(version);
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = read_nullable_string(input, flexible, true)?;
        let (input, reason) = if version >= 5 {
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
                member_id,
                group_instance_id,
                reason,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = LeaveGroupRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        write_nullable_string(
            buf,
            self.group_instance_id.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "MemberIdentity.group_instance_id"),
        )?;
        if version >= 5 {
            write_nullable_string(
                buf,
                self.reason.as_deref(),
                flexible,
                true,
                at(NAME_REQUEST, version, "MemberIdentity.reason"),
            )?;
        } else if self.reason.is_some() {
            return Err(at(NAME_REQUEST, version, "MemberIdentity.reason").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "MemberIdentity.unknown_tagged_fields",
            ),
        )
    }
}

/// LeaveGroupResponse (API key 13): versions 0-5, flexible 4-5.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LeaveGroupResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// List of leaving member responses (versions 3+).
    pub members: Vec<MemberResponse>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl LeaveGroupResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = LeaveGroupResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, error_code) = primitives::int16(input)?;
        let (input, members) = if version >= 3 {
            read_array(
                input,
                flexible,
                MemberResponse::min_encoded_size(version),
                |i| MemberResponse::decode_from(i, root, version),
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
                error_code,
                members,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = LeaveGroupResponse::is_flexible(version);
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        buf.put_i16(self.error_code);
        if version >= 3 {
            write_array(buf, &self.members, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.members.is_empty() {
            return Err(at(NAME_RESPONSE, version, "members").not_at_version());
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

impl Message for LeaveGroupResponse {
    const NAME: &'static str = "LeaveGroupResponse";
    const API_KEY: i16 = 13;
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

impl Response for LeaveGroupResponse {
    type Request = LeaveGroupRequest;
}

/// Part of LeaveGroupResponse (present in versions 3-5).
#[derive(Debug, Clone, PartialEq)]
pub struct MemberResponse {
    /// The member ID to remove from the group (versions 3+).
    pub member_id: String,
    /// The group instance ID to remove from the group (versions 3+, nullable 3+).
    pub group_instance_id: Option<String>,
    /// The error code, or 0 if there was no error (versions 3+).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for MemberResponse {
    fn default() -> Self {
        Self {
            member_id: String::new(),
            group_instance_id: Some(String::new()),
            error_code: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl MemberResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = LeaveGroupResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = LeaveGroupResponse::is_flexible(version);
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = read_nullable_string(input, flexible, true)?;
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
                member_id,
                group_instance_id,
                error_code,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = LeaveGroupResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        write_nullable_string(
            buf,
            self.group_instance_id.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "MemberResponse.group_instance_id"),
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
                "MemberResponse.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_leave_group_request(g: &mut Gen, version: i16) -> LeaveGroupRequest {
        let flexible = LeaveGroupRequest::is_flexible(version);
        LeaveGroupRequest {
            group_id: g.string(),
            member_id: if version <= 2 {
                g.string()
            } else {
                String::new()
            },
            members: if version >= 3 {
                g.vec(|g| arb_member_identity(g, version))
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_member_identity(g: &mut Gen, version: i16) -> MemberIdentity {
        let flexible = LeaveGroupRequest::is_flexible(version);
        MemberIdentity {
            member_id: g.string(),
            group_instance_id: g.option(|g| g.string()),
            reason: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_leave_group_response(g: &mut Gen, version: i16) -> LeaveGroupResponse {
        let flexible = LeaveGroupResponse::is_flexible(version);
        LeaveGroupResponse {
            throttle_time_ms: if version >= 1 { g.i32() } else { 0 },
            error_code: g.i16(),
            members: if version >= 3 {
                g.vec(|g| arb_member_response(g, version))
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_member_response(g: &mut Gen, version: i16) -> MemberResponse {
        let flexible = LeaveGroupResponse::is_flexible(version);
        MemberResponse {
            member_id: g.string(),
            group_instance_id: g.option(|g| g.string()),
            error_code: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn leave_group_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_leave_group_request)?;
        }

        #[test]
        fn leave_group_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_leave_group_request)?;
        }

        #[test]
        fn leave_group_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_leave_group_response)?;
        }

        #[test]
        fn leave_group_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_leave_group_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 3..=5 {
            let mut buf = BytesMut::new();
            MemberIdentity::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                MemberIdentity::min_encoded_size(version),
                "MemberIdentity v{version}"
            );
        }
        for version in 3..=5 {
            let mut buf = BytesMut::new();
            MemberResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                MemberResponse::min_encoded_size(version),
                "MemberResponse v{version}"
            );
        }
    }
}
