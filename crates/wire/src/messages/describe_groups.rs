//! DescribeGroups: `DescribeGroupsRequest` and `DescribeGroupsResponse` (API key 15), generated from Kafka 4.4.0's `DescribeGroupsRequest.json` and `DescribeGroupsResponse.json`.
//!
//! Request versions 0-6, flexible 5-6; response versions 0-6, flexible 5-6.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_bytes,
    read_nullable_string, read_string, share, write_array, write_nullable_string,
    write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "DescribeGroupsRequest";
const NAME_RESPONSE: &str = "DescribeGroupsResponse";

/// DescribeGroupsRequest (API key 15): versions 0-6, flexible 5-6.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeGroupsRequest {
    /// The names of the groups to describe (versions 0+).
    pub groups: Vec<String>,
    /// Whether to include authorized operations (versions 3+).
    pub include_authorized_operations: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeGroupsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeGroupsRequest::is_flexible(version);
        let (input, groups) = read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
            read_string(i, flexible)
        })?;
        let (input, include_authorized_operations) = if version >= 3 {
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
                groups,
                include_authorized_operations,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeGroupsRequest::is_flexible(version);
        write_array(buf, &self.groups, flexible, |buf, e| {
            primitives::put_str(buf, Some(e.as_str()), flexible)?;
            Ok(())
        })?;
        if version >= 3 {
            buf.put_i8(i8::from(self.include_authorized_operations));
        } else if self.include_authorized_operations {
            return Err(at(NAME_REQUEST, version, "include_authorized_operations").not_at_version());
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

impl Message for DescribeGroupsRequest {
    const NAME: &'static str = "DescribeGroupsRequest";
    const API_KEY: i16 = 15;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
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

impl Request for DescribeGroupsRequest {
    type Response = DescribeGroupsResponse;
}

/// DescribeGroupsResponse (API key 15): versions 0-6, flexible 5-6.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeGroupsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// Each described group (versions 0+).
    pub groups: Vec<DescribedGroup>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeGroupsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, groups) = read_array(
            input,
            flexible,
            DescribedGroup::min_encoded_size(version),
            |i| DescribedGroup::decode_from(i, root, version),
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
                groups,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        write_array(buf, &self.groups, flexible, |buf, e| {
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

impl Message for DescribeGroupsResponse {
    const NAME: &'static str = "DescribeGroupsResponse";
    const API_KEY: i16 = 15;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
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

impl Response for DescribeGroupsResponse {
    type Request = DescribeGroupsRequest;
}

/// Part of DescribeGroupsResponse (present in versions 0-6).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedGroup {
    /// The describe error, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The describe error message, or null if there was no error (versions 6+, nullable 6+, default null).
    pub error_message: Option<String>,
    /// The group ID string (versions 0+).
    pub group_id: String,
    /// The group state string, or the empty string (versions 0+).
    pub group_state: String,
    /// The group protocol type, or the empty string (versions 0+).
    pub protocol_type: String,
    /// The group protocol data, or the empty string (versions 0+).
    pub protocol_data: String,
    /// The group members (versions 0+).
    pub members: Vec<DescribedGroupMember>,
    /// 32-bit bitfield to represent authorized operations for this group (versions 3+, default -2147483648).
    pub authorized_operations: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribedGroup {
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: None,
            group_id: String::new(),
            group_state: String::new(),
            protocol_type: String::new(),
            protocol_data: String::new(),
            members: Vec::new(),
            authorized_operations: i32::MIN,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribedGroup {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 2;
        if version >= 6 {
            size += if flexible { 1 } else { 2 };
        }
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        if version >= 3 {
            size += 4;
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = if version >= 6 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, group_id) = read_string(input, flexible)?;
        let (input, group_state) = read_string(input, flexible)?;
        let (input, protocol_type) = read_string(input, flexible)?;
        let (input, protocol_data) = read_string(input, flexible)?;
        let (input, members) = read_array(
            input,
            flexible,
            DescribedGroupMember::min_encoded_size(version),
            |i| DescribedGroupMember::decode_from(i, root, version),
        )?;
        let (input, authorized_operations) = if version >= 3 {
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
                error_message,
                group_id,
                group_state,
                protocol_type,
                protocol_data,
                members,
                authorized_operations,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        if version >= 6 {
            write_nullable_string(
                buf,
                self.error_message.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "DescribedGroup.error_message"),
            )?;
        } else if self.error_message.is_some() {
            return Err(at(NAME_RESPONSE, version, "DescribedGroup.error_message").not_at_version());
        }
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        primitives::put_str(buf, Some(self.group_state.as_str()), flexible)?;
        primitives::put_str(buf, Some(self.protocol_type.as_str()), flexible)?;
        primitives::put_str(buf, Some(self.protocol_data.as_str()), flexible)?;
        write_array(buf, &self.members, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 3 {
            buf.put_i32(self.authorized_operations);
        } else if self.authorized_operations != i32::MIN {
            return Err(at(
                NAME_RESPONSE,
                version,
                "DescribedGroup.authorized_operations",
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
                "DescribedGroup.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of DescribeGroupsResponse (present in versions 0-6).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribedGroupMember {
    /// The member id (versions 0+).
    pub member_id: String,
    /// The unique identifier of the consumer instance provided by end user (versions 4+, nullable 4+, default null).
    pub group_instance_id: Option<String>,
    /// The client ID used in the member's latest join group request (versions 0+).
    pub client_id: String,
    /// The client host (versions 0+).
    pub client_host: String,
    /// The metadata corresponding to the current group protocol in use (versions 0+).
    pub member_metadata: Bytes,
    /// The current assignment provided by the group leader (versions 0+).
    pub member_assignment: Bytes,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribedGroupMember {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        if version >= 4 {
            size += if flexible { 1 } else { 2 };
        }
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        let (input, member_id) = read_string(input, flexible)?;
        let (input, group_instance_id) = if version >= 4 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, client_id) = read_string(input, flexible)?;
        let (input, client_host) = read_string(input, flexible)?;
        let (input, member_metadata) = read_bytes(input, root, flexible)?;
        let (input, member_assignment) = read_bytes(input, root, flexible)?;
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
                client_id,
                client_host,
                member_metadata,
                member_assignment,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.member_id.as_str()), flexible)?;
        if version >= 4 {
            write_nullable_string(
                buf,
                self.group_instance_id.as_deref(),
                flexible,
                true,
                at(
                    NAME_RESPONSE,
                    version,
                    "DescribedGroupMember.group_instance_id",
                ),
            )?;
        } else if self.group_instance_id.is_some() {
            return Err(at(
                NAME_RESPONSE,
                version,
                "DescribedGroupMember.group_instance_id",
            )
            .not_at_version());
        }
        primitives::put_str(buf, Some(self.client_id.as_str()), flexible)?;
        primitives::put_str(buf, Some(self.client_host.as_str()), flexible)?;
        primitives::put_bytes(buf, Some(&self.member_metadata[..]), flexible)?;
        primitives::put_bytes(buf, Some(&self.member_assignment[..]), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "DescribedGroupMember.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_describe_groups_request(g: &mut Gen, version: i16) -> DescribeGroupsRequest {
        let flexible = DescribeGroupsRequest::is_flexible(version);
        DescribeGroupsRequest {
            groups: g.vec(|g| g.string()),
            include_authorized_operations: if version >= 3 { g.bool() } else { false },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_groups_response(
        g: &mut Gen,
        version: i16,
    ) -> DescribeGroupsResponse {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        DescribeGroupsResponse {
            throttle_time_ms: if version >= 1 { g.i32() } else { 0 },
            groups: g.vec(|g| arb_described_group(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_described_group(g: &mut Gen, version: i16) -> DescribedGroup {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        DescribedGroup {
            error_code: g.i16(),
            error_message: if version >= 6 {
                g.option(|g| g.string())
            } else {
                None
            },
            group_id: g.string(),
            group_state: g.string(),
            protocol_type: g.string(),
            protocol_data: g.string(),
            members: g.vec(|g| arb_described_group_member(g, version)),
            authorized_operations: if version >= 3 { g.i32() } else { i32::MIN },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_described_group_member(g: &mut Gen, version: i16) -> DescribedGroupMember {
        let flexible = DescribeGroupsResponse::is_flexible(version);
        DescribedGroupMember {
            member_id: g.string(),
            group_instance_id: if version >= 4 {
                g.option(|g| g.string())
            } else {
                None
            },
            client_id: g.string(),
            client_host: g.string(),
            member_metadata: g.bytes(),
            member_assignment: g.bytes(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn describe_groups_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_describe_groups_request)?;
        }

        #[test]
        fn describe_groups_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_describe_groups_request)?;
        }

        #[test]
        fn describe_groups_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_describe_groups_response)?;
        }

        #[test]
        fn describe_groups_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_describe_groups_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=6 {
            let mut buf = BytesMut::new();
            DescribedGroup::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribedGroup::min_encoded_size(version),
                "DescribedGroup v{version}"
            );
        }
        for version in 0..=6 {
            let mut buf = BytesMut::new();
            DescribedGroupMember::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribedGroupMember::min_encoded_size(version),
                "DescribedGroupMember v{version}"
            );
        }
    }
}
