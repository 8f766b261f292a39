//! IncrementalAlterConfigs: `IncrementalAlterConfigsRequest` and `IncrementalAlterConfigsResponse` (API key 44), generated from Kafka 4.4.0's `IncrementalAlterConfigsRequest.json` and `IncrementalAlterConfigsResponse.json`.
//!
//! Request versions 0-1, flexible 1; response versions 0-1, flexible 1.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_string,
    read_string, share, write_array, write_nullable_string, write_tagged_fields, Message, Request,
    Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "IncrementalAlterConfigsRequest";
const NAME_RESPONSE: &str = "IncrementalAlterConfigsResponse";

/// IncrementalAlterConfigsRequest (API key 44): versions 0-1, flexible 1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IncrementalAlterConfigsRequest {
    /// The incremental updates for each resource (versions 0+).
    pub resources: Vec<AlterConfigsResource>,
    /// True if we should validate the request, but not change the configurations (versions 0+).
    pub validate_only: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl IncrementalAlterConfigsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        let (input, resources) = read_array(
            input,
            flexible,
            AlterConfigsResource::min_encoded_size(version),
            |i| AlterConfigsResource::decode_from(i, root, version),
        )?;
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
                resources,
                validate_only,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        write_array(buf, &self.resources, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
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

impl Message for IncrementalAlterConfigsRequest {
    const NAME: &'static str = "IncrementalAlterConfigsRequest";
    const API_KEY: i16 = 44;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(1);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for IncrementalAlterConfigsRequest {
    type Response = IncrementalAlterConfigsResponse;
}

/// Part of IncrementalAlterConfigsRequest (present in versions 0-1).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AlterConfigsResource {
    /// The resource type (versions 0+).
    pub resource_type: i8,
    /// The resource name (versions 0+).
    pub resource_name: String,
    /// The configurations (versions 0+).
    pub configs: Vec<AlterableConfig>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl AlterConfigsResource {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 1;
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        let (input, resource_type) = primitives::int8(input)?;
        let (input, resource_name) = read_string(input, flexible)?;
        let (input, configs) = read_array(
            input,
            flexible,
            AlterableConfig::min_encoded_size(version),
            |i| AlterableConfig::decode_from(i, root, version),
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
                resource_type,
                resource_name,
                configs,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        buf.put_i8(self.resource_type);
        primitives::put_str(buf, Some(self.resource_name.as_str()), flexible)?;
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
                "AlterConfigsResource.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of IncrementalAlterConfigsRequest (present in versions 0-1).
#[derive(Debug, Clone, PartialEq)]
pub struct AlterableConfig {
    /// The configuration key name (versions 0+).
    pub name: String,
    /// The type (Set, Delete, Append, Subtract) of operation (versions 0+).
    pub config_operation: i8,
    /// The value to set for the configuration key (versions 0+, nullable 0+).
    pub value: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for AlterableConfig {
    fn default() -> Self {
        Self {
            name: String::new(),
            config_operation: 0,
            value: Some(String::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl AlterableConfig {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += 1;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, config_operation) = primitives::int8(input)?;
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
                config_operation,
                value,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        buf.put_i8(self.config_operation);
        write_nullable_string(
            buf,
            self.value.as_deref(),
            flexible,
            true,
            at(NAME_REQUEST, version, "AlterableConfig.value"),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "AlterableConfig.unknown_tagged_fields",
            ),
        )
    }
}

/// IncrementalAlterConfigsResponse (API key 44): versions 0-1, flexible 1.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct IncrementalAlterConfigsResponse {
    /// Duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 0+).
    pub throttle_time_ms: i32,
    /// The responses for each resource (versions 0+).
    pub responses: Vec<AlterConfigsResourceResponse>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl IncrementalAlterConfigsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = IncrementalAlterConfigsResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, responses) = read_array(
            input,
            flexible,
            AlterConfigsResourceResponse::min_encoded_size(version),
            |i| AlterConfigsResourceResponse::decode_from(i, root, version),
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
        let flexible = IncrementalAlterConfigsResponse::is_flexible(version);
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

impl Message for IncrementalAlterConfigsResponse {
    const NAME: &'static str = "IncrementalAlterConfigsResponse";
    const API_KEY: i16 = 44;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(1);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for IncrementalAlterConfigsResponse {
    type Request = IncrementalAlterConfigsRequest;
}

/// Part of IncrementalAlterConfigsResponse (present in versions 0-1).
#[derive(Debug, Clone, PartialEq)]
pub struct AlterConfigsResourceResponse {
    /// The resource error code (versions 0+).
    pub error_code: i16,
    /// The resource error message, or null if there was no error (versions 0+, nullable 0+).
    pub error_message: Option<String>,
    /// The resource type (versions 0+).
    pub resource_type: i8,
    /// The resource name (versions 0+).
    pub resource_name: String,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for AlterConfigsResourceResponse {
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: Some(String::new()),
            resource_type: 0,
            resource_name: String::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl AlterConfigsResourceResponse {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = IncrementalAlterConfigsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 2;
        size += if flexible { 1 } else { 2 };
        size += 1;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = IncrementalAlterConfigsResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
        let (input, resource_type) = primitives::int8(input)?;
        let (input, resource_name) = read_string(input, flexible)?;
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
                resource_type,
                resource_name,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = IncrementalAlterConfigsResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "AlterConfigsResourceResponse.error_message",
            ),
        )?;
        buf.put_i8(self.resource_type);
        primitives::put_str(buf, Some(self.resource_name.as_str()), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "AlterConfigsResourceResponse.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_incremental_alter_configs_request(
        g: &mut Gen,
        version: i16,
    ) -> IncrementalAlterConfigsRequest {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        IncrementalAlterConfigsRequest {
            resources: g.vec(|g| arb_alter_configs_resource(g, version)),
            validate_only: g.bool(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_alter_configs_resource(g: &mut Gen, version: i16) -> AlterConfigsResource {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        AlterConfigsResource {
            resource_type: g.i8(),
            resource_name: g.string(),
            configs: g.vec(|g| arb_alterable_config(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_alterable_config(g: &mut Gen, version: i16) -> AlterableConfig {
        let flexible = IncrementalAlterConfigsRequest::is_flexible(version);
        AlterableConfig {
            name: g.string(),
            config_operation: g.i8(),
            value: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_incremental_alter_configs_response(
        g: &mut Gen,
        version: i16,
    ) -> IncrementalAlterConfigsResponse {
        let flexible = IncrementalAlterConfigsResponse::is_flexible(version);
        IncrementalAlterConfigsResponse {
            throttle_time_ms: g.i32(),
            responses: g.vec(|g| arb_alter_configs_resource_response(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_alter_configs_resource_response(
        g: &mut Gen,
        version: i16,
    ) -> AlterConfigsResourceResponse {
        let flexible = IncrementalAlterConfigsResponse::is_flexible(version);
        AlterConfigsResourceResponse {
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            resource_type: g.i8(),
            resource_name: g.string(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn incremental_alter_configs_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_incremental_alter_configs_request)?;
        }

        #[test]
        fn incremental_alter_configs_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_incremental_alter_configs_request)?;
        }

        #[test]
        fn incremental_alter_configs_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_incremental_alter_configs_response)?;
        }

        #[test]
        fn incremental_alter_configs_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_incremental_alter_configs_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            AlterConfigsResource::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                AlterConfigsResource::min_encoded_size(version),
                "AlterConfigsResource v{version}"
            );
        }
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            AlterableConfig::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                AlterableConfig::min_encoded_size(version),
                "AlterableConfig v{version}"
            );
        }
        for version in 0..=1 {
            let mut buf = BytesMut::new();
            AlterConfigsResourceResponse::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                AlterConfigsResourceResponse::min_encoded_size(version),
                "AlterConfigsResourceResponse v{version}"
            );
        }
    }
}
