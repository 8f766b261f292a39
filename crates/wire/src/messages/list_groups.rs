//! ListGroups: `ListGroupsRequest` and `ListGroupsResponse` (API key 16), generated from Kafka 4.4.0's `ListGroupsRequest.json` and `ListGroupsResponse.json`.
//!
//! Request versions 0-5, flexible 3-5; response versions 0-5, flexible 3-5.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_string, share,
    write_array, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "ListGroupsRequest";
const NAME_RESPONSE: &str = "ListGroupsResponse";

/// ListGroupsRequest (API key 16): versions 0-5, flexible 3-5.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListGroupsRequest {
    /// The states of the groups we want to list. If empty, all groups are returned with their state (versions 4+).
    pub states_filter: Vec<String>,
    /// The types of the groups we want to list. If empty, all groups are returned with their type (versions 5+).
    pub types_filter: Vec<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ListGroupsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListGroupsRequest::is_flexible(version);
        let (input, states_filter) = if version >= 4 {
            read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
                read_string(i, flexible)
            })?
        } else {
            (input, Vec::new())
        };
        let (input, types_filter) = if version >= 5 {
            read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
                read_string(i, flexible)
            })?
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
                states_filter,
                types_filter,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ListGroupsRequest::is_flexible(version);
        if version >= 4 {
            write_array(buf, &self.states_filter, flexible, |buf, e| {
                primitives::put_str(buf, Some(e.as_str()), flexible)?;
                Ok(())
            })?;
        } else if !self.states_filter.is_empty() {
            return Err(at(NAME_REQUEST, version, "states_filter").not_at_version());
        }
        if version >= 5 {
            write_array(buf, &self.types_filter, flexible, |buf, e| {
                primitives::put_str(buf, Some(e.as_str()), flexible)?;
                Ok(())
            })?;
        } else if !self.types_filter.is_empty() {
            return Err(at(NAME_REQUEST, version, "types_filter").not_at_version());
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

impl Message for ListGroupsRequest {
    const NAME: &'static str = "ListGroupsRequest";
    const API_KEY: i16 = 16;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(3);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for ListGroupsRequest {
    type Response = ListGroupsResponse;
}

/// ListGroupsResponse (API key 16): versions 0-5, flexible 3-5.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListGroupsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// Each group in the response (versions 0+).
    pub groups: Vec<ListedGroup>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ListGroupsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListGroupsResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, error_code) = primitives::int16(input)?;
        let (input, groups) = read_array(
            input,
            flexible,
            ListedGroup::min_encoded_size(version),
            |i| ListedGroup::decode_from(i, root, version),
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
                groups,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ListGroupsResponse::is_flexible(version);
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        buf.put_i16(self.error_code);
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

impl Message for ListGroupsResponse {
    const NAME: &'static str = "ListGroupsResponse";
    const API_KEY: i16 = 16;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 5;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(3);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for ListGroupsResponse {
    type Request = ListGroupsRequest;
}

/// Part of ListGroupsResponse (present in versions 0-5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListedGroup {
    /// The group ID (versions 0+).
    pub group_id: String,
    /// The group protocol type (versions 0+).
    pub protocol_type: String,
    /// The group state name (versions 4+).
    pub group_state: String,
    /// The group type name (versions 5+).
    pub group_type: String,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ListedGroup {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ListGroupsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        if version >= 4 {
            size += if flexible { 1 } else { 2 };
        }
        if version >= 5 {
            size += if flexible { 1 } else { 2 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ListGroupsResponse::is_flexible(version);
        let (input, group_id) = read_string(input, flexible)?;
        let (input, protocol_type) = read_string(input, flexible)?;
        let (input, group_state) = if version >= 4 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, group_type) = if version >= 5 {
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
            unknown_tagged_fields.push((tag, share(root, value)));
        }
        Ok((
            input,
            Self {
                group_id,
                protocol_type,
                group_state,
                group_type,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ListGroupsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.group_id.as_str()), flexible)?;
        primitives::put_str(buf, Some(self.protocol_type.as_str()), flexible)?;
        if version >= 4 {
            primitives::put_str(buf, Some(self.group_state.as_str()), flexible)?;
        } else if !self.group_state.is_empty() {
            return Err(at(NAME_RESPONSE, version, "ListedGroup.group_state").not_at_version());
        }
        if version >= 5 {
            primitives::put_str(buf, Some(self.group_type.as_str()), flexible)?;
        } else if !self.group_type.is_empty() {
            return Err(at(NAME_RESPONSE, version, "ListedGroup.group_type").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "ListedGroup.unknown_tagged_fields"),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_list_groups_request(g: &mut Gen, version: i16) -> ListGroupsRequest {
        let flexible = ListGroupsRequest::is_flexible(version);
        ListGroupsRequest {
            states_filter: if version >= 4 {
                g.vec(|g| g.string())
            } else {
                Vec::new()
            },
            types_filter: if version >= 5 {
                g.vec(|g| g.string())
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_list_groups_response(g: &mut Gen, version: i16) -> ListGroupsResponse {
        let flexible = ListGroupsResponse::is_flexible(version);
        ListGroupsResponse {
            throttle_time_ms: if version >= 1 { g.i32() } else { 0 },
            error_code: g.i16(),
            groups: g.vec(|g| arb_listed_group(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_listed_group(g: &mut Gen, version: i16) -> ListedGroup {
        let flexible = ListGroupsResponse::is_flexible(version);
        ListedGroup {
            group_id: g.string(),
            protocol_type: g.string(),
            group_state: if version >= 4 {
                g.string()
            } else {
                String::new()
            },
            group_type: if version >= 5 {
                g.string()
            } else {
                String::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn list_groups_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_list_groups_request)?;
        }

        #[test]
        fn list_groups_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_list_groups_request)?;
        }

        #[test]
        fn list_groups_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_list_groups_response)?;
        }

        #[test]
        fn list_groups_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_list_groups_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=5 {
            let mut buf = BytesMut::new();
            ListedGroup::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ListedGroup::min_encoded_size(version),
                "ListedGroup v{version}"
            );
        }
    }
}
