//! JoinGroup: `JoinGroupRequest` and `JoinGroupResponse` (API key 11), generated from Kafka 4.4.0's `JoinGroupRequest.json` and `JoinGroupResponse.json`.
//!
//! Request versions 0-9, flexible 6-9; response versions 0-9, flexible 6-9.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_bytes,
    read_nullable_string, read_string, share, write_array, write_nullable_string,
    write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "JoinGroupRequest";
const NAME_RESPONSE: &str = "JoinGroupResponse";

/// JoinGroupRequest (API key 11): versions 0-9, flexible 6-9.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinGroupRequest {
    /// The group identifier (versions 0+).
    pub group_id: String,
    /// The coordinator considers the consumer dead if it receives no heartbeat after this timeout in milliseconds (versions 0+).
    pub session_timeout_ms: i32,
    /// The maximum time in milliseconds that the coordinator will wait for each member to rejoin when rebalancing the group (versions 1+, default -1).
    pub rebalance_timeout_ms: i32,
    /// The member id assigned by the group coordinator (versions 0+).
    pub member_id: String,
    /// The unique identifier of the consumer instance provided by end user (versions 5+, nullable 5+, default null).
    pub group_instance_id: Option<String>,
    /// The unique name the for class of protocols implemented by the group we want to join (versions 0+).
    pub protocol_type: String,
    /// The list of protocols that the member supports (versions 0+).
    pub protocols: Vec<JoinGroupRequestProtocol>,
    /// The reason why the member (re-)joins the group (versions 8+, nullable 8+, default null).
    pub reason: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for JoinGroupRequest {
    fn default() -> Self {
        Self {
            group_id: String::new(),
            session_timeout_ms: 0,
            rebalance_timeout_ms: -1,
            member_id: String::new(),
            group_instance_id: None,
            protocol_type: String::new(),
            protocols: Vec::new(),
            reason: None,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl JoinGroupRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = JoinGroupRequest::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, session_timeout_ms) = primitives::int32(input)?;
        let (input, rebalance_timeout_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, -1)
        };
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = if version >= 5 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, protocol_type) = read_string(input, flexible)?;
        let (input, protocols) = read_array(
            input,
            flexible,
            JoinGroupRequestProtocol::min_encoded_size(version),
            |i| JoinGroupRequestProtocol::decode_from(i, root, version),
        )?;
        let (input, reason) = if version >= 8 {
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
                session_timeout_ms,
                rebalance_timeout_ms,
                member_id,
                group_instance_id,
                protocol_type,
                protocols,
                reason,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = JoinGroupRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        buf.put_i32(self.session_timeout_ms);
        if version >= 1 {
            buf.put_i32(self.rebalance_timeout_ms);
        } else if self.rebalance_timeout_ms != -1 {
            return Err(at(NAME_REQUEST, version, "rebalance_timeout_ms").not_at_version());
        }
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        if version >= 5 {
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
        primitives::put_str(buf, Some(self.protocol_type.as_str()), flexible)?;
        write_array(buf, &self.protocols, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 8 {
            write_nullable_string(
                buf,
                self.reason.as_deref(),
                flexible,
                true,
                at(NAME_REQUEST, version, "reason"),
            )?;
        } else if self.reason.is_some() {
            return Err(at(NAME_REQUEST, version, "reason").not_at_version());
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

impl Message for JoinGroupRequest {
    const NAME: &'static str = "JoinGroupRequest";
    const API_KEY: i16 = 11;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 9;
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

impl Request for JoinGroupRequest {
    type Response = JoinGroupResponse;
}

/// Part of JoinGroupRequest (present in versions 0-9).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JoinGroupRequestProtocol {
    /// The protocol name (versions 0+).
    pub name: String,
    /// The protocol metadata (versions 0+).
    pub metadata: Bytes,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl JoinGroupRequestProtocol {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = JoinGroupRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = JoinGroupRequest::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, metadata) = read_bytes(input, root, flexible)?;
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
                metadata,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = JoinGroupRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        primitives::put_bytes(buf, Some(&self.metadata[..]), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "JoinGroupRequestProtocol.unknown_tagged_fields",
            ),
        )
    }
}

/// JoinGroupResponse (API key 11): versions 0-9, flexible 6-9.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinGroupResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 2+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The generation ID of the group (versions 0+, default -1).
    pub generation_id: i32,
    /// The group protocol name (versions 7+, nullable 7+, default null).
    pub protocol_type: Option<String>,
    /// The group protocol selected by the coordinator (versions 0+, nullable 7+).
    pub protocol_name: Option<String>,
    /// The leader of the group (versions 0+).
    pub leader: String,
    /// True if the leader must skip running the assignment (versions 9+, default false).
    pub skip_assignment: bool,
    /// The member ID assigned by the group coordinator (versions 0+).
    pub member_id: String,
    /// The group members (versions 0+).
    pub members: Vec<JoinGroupResponseMember>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for JoinGroupResponse {
    fn default() -> Self {
        Self {
            throttle_time_ms: 0,
            error_code: 0,
            generation_id: -1,
            protocol_type: None,
            protocol_name: Some(String::new()),
            leader: String::new(),
            skip_assignment: false,
            member_id: String::new(),
            members: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl JoinGroupResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = JoinGroupResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 2 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, error_code) = primitives::int16(input)?;
        let (input, generation_id) = primitives::int32(input)?;
        let (input, protocol_type) = if version >= 7 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, protocol_name) = read_nullable_string(input, flexible, version >= 7)?;
        let (input, leader) = read_string(input, flexible)?;
        let (input, skip_assignment) = if version >= 9 {
            primitives::boolean(input)?
        } else {
            (input, false)
        };
        let (input, member_id) = read_string(input, flexible)?;
        let (input, members) = read_array(
            input,
            flexible,
            JoinGroupResponseMember::min_encoded_size(version),
            |i| JoinGroupResponseMember::decode_from(i, root, version),
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
                generation_id,
                protocol_type,
                protocol_name,
                leader,
                skip_assignment,
                member_id,
                members,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = JoinGroupResponse::is_flexible(version);
        if version >= 2 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        buf.put_i16(self.error_code);
        buf.put_i32(self.generation_id);
        if version >= 7 {
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
        write_nullable_string(
            buf,
            self.protocol_name.as_deref(),
            flexible,
            version >= 7,
            at(NAME_RESPONSE, version, "protocol_name"),
        )?;
        primitives::put_str(buf, Some(self.leader.as_str()), flexible)?;
        if version >= 9 {
            buf.put_i8(i8::from(self.skip_assignment));
        } else if self.skip_assignment {
            return Err(at(NAME_RESPONSE, version, "skip_assignment").not_at_version());
        }
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        write_array(buf, &self.members, flexible, |buf, e| {
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

impl Message for JoinGroupResponse {
    const NAME: &'static str = "JoinGroupResponse";
    const API_KEY: i16 = 11;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 9;
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

impl Response for JoinGroupResponse {
    type Request = JoinGroupRequest;
}

/// Part of JoinGroupResponse (present in versions 0-9).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct JoinGroupResponseMember {
    /// The group member ID (versions 0+).
    pub member_id: String,
    /// The unique identifier of the consumer instance provided by end user (versions 5+, nullable 5+, default null).
    pub group_instance_id: Option<String>,
    /// The group member metadata (versions 0+).
    pub metadata: Bytes,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl JoinGroupResponseMember {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = JoinGroupResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        if version >= 5 {
            size += if flexible { 1 } else { 2 };
        }
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = JoinGroupResponse::is_flexible(version);
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = if version >= 5 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, metadata) = read_bytes(input, root, flexible)?;
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
                metadata,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = JoinGroupResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        if version >= 5 {
            write_nullable_string(
                buf,
                self.group_instance_id.as_deref(),
                flexible,
                true,
                at(
                    NAME_RESPONSE,
                    version,
                    "JoinGroupResponseMember.group_instance_id",
                ),
            )?;
        } else if self.group_instance_id.is_some() {
            return Err(at(
                NAME_RESPONSE,
                version,
                "JoinGroupResponseMember.group_instance_id",
            )
            .not_at_version());
        }
        primitives::put_bytes(buf, Some(&self.metadata[..]), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "JoinGroupResponseMember.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_join_group_request(g: &mut Gen, version: i16) -> JoinGroupRequest {
        let flexible = JoinGroupRequest::is_flexible(version);
        JoinGroupRequest {
            group_id: g.string(),
            session_timeout_ms: g.i32(),
            rebalance_timeout_ms: if version >= 1 { g.i32() } else { -1 },
            member_id: g.string(),
            group_instance_id: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            protocol_type: g.string(),
            protocols: g.vec(|g| arb_join_group_request_protocol(g, version)),
            reason: if version >= 8 {
                g.option(|g| g.string())
            } else {
                None
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_join_group_request_protocol(
        g: &mut Gen,
        version: i16,
    ) -> JoinGroupRequestProtocol {
        let flexible = JoinGroupRequest::is_flexible(version);
        JoinGroupRequestProtocol {
            name: g.string(),
            metadata: g.bytes(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_join_group_response(g: &mut Gen, version: i16) -> JoinGroupResponse {
        let flexible = JoinGroupResponse::is_flexible(version);
        JoinGroupResponse {
            throttle_time_ms: if version >= 2 { g.i32() } else { 0 },
            error_code: g.i16(),
            generation_id: g.i32(),
            protocol_type: if version >= 7 {
                g.option(|g| g.string())
            } else {
                None
            },
            protocol_name: if version >= 7 {
                g.option(|g| g.string())
            } else {
                Some(g.string())
            },
            leader: g.string(),
            skip_assignment: if version >= 9 { g.bool() } else { false },
            member_id: g.string(),
            members: g.vec(|g| arb_join_group_response_member(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_join_group_response_member(
        g: &mut Gen,
        version: i16,
    ) -> JoinGroupResponseMember {
        let flexible = JoinGroupResponse::is_flexible(version);
        JoinGroupResponseMember {
            member_id: g.string(),
            group_instance_id: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            metadata: g.bytes(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn join_group_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_join_group_request)?;
        }

        #[test]
        fn join_group_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_join_group_request)?;
        }

        #[test]
        fn join_group_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_join_group_response)?;
        }

        #[test]
        fn join_group_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_join_group_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=9 {
            let mut buf = BytesMut::new();
            JoinGroupRequestProtocol::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                JoinGroupRequestProtocol::min_encoded_size(version),
                "JoinGroupRequestProtocol v{version}"
            );
        }
        for version in 0..=9 {
            let mut buf = BytesMut::new();
            JoinGroupResponseMember::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                JoinGroupResponseMember::min_encoded_size(version),
                "JoinGroupResponseMember v{version}"
            );
        }
    }
}
