//! DescribeConfigs: `DescribeConfigsRequest` and `DescribeConfigsResponse` (API key 32), generated from Kafka 4.4.0's `DescribeConfigsRequest.json` and `DescribeConfigsResponse.json`.
//!
//! Request versions 1-4, flexible 4; response versions 1-4, flexible 4.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_array,
    read_nullable_string, read_string, share, write_array, write_nullable_array,
    write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "DescribeConfigsRequest";
const NAME_RESPONSE: &str = "DescribeConfigsResponse";

/// DescribeConfigsRequest (API key 32): versions 1-4, flexible 4.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeConfigsRequest {
    /// The resources whose configurations we want to describe (versions 0+).
    pub resources: Vec<DescribeConfigsResource>,
    /// True if we should include all synonyms (versions 1+, default false).
    pub include_synonyms: bool,
    /// True if we should include configuration documentation (versions 3+, default false).
    pub include_documentation: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeConfigsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeConfigsRequest::is_flexible(version);
        let (input, resources) = read_array(
            input,
            flexible,
            DescribeConfigsResource::min_encoded_size(version),
            |i| DescribeConfigsResource::decode_from(i, root, version),
        )?;
        let (input, include_synonyms) = primitives::boolean(input)?;
        let (input, include_documentation) = if version >= 3 {
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
                resources,
                include_synonyms,
                include_documentation,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeConfigsRequest::is_flexible(version);
        write_array(buf, &self.resources, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        buf.put_i8(i8::from(self.include_synonyms));
        if version >= 3 {
            buf.put_i8(i8::from(self.include_documentation));
        } else if self.include_documentation {
            return Err(at(NAME_REQUEST, version, "include_documentation").not_at_version());
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

impl Message for DescribeConfigsRequest {
    const NAME: &'static str = "DescribeConfigsRequest";
    const API_KEY: i16 = 32;
    const MIN_VERSION: i16 = 1;
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

impl Request for DescribeConfigsRequest {
    type Response = DescribeConfigsResponse;
}

/// Part of DescribeConfigsRequest (present in versions 1-4).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeConfigsResource {
    /// The resource type (versions 0+).
    pub resource_type: i8,
    /// The resource name (versions 0+).
    pub resource_name: String,
    /// The configuration keys to list, or null to list all configuration keys (versions 0+, nullable 0+).
    pub configuration_keys: Option<Vec<String>>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribeConfigsResource {
    fn default() -> Self {
        Self {
            resource_type: 0,
            resource_name: String::new(),
            configuration_keys: Some(Vec::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribeConfigsResource {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeConfigsRequest::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 1;
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeConfigsRequest::is_flexible(version);
        let (input, resource_type) = primitives::int8(input)?;
        let (input, resource_name) = read_string(input, flexible)?;
        let (input, configuration_keys) =
            read_nullable_array(input, flexible, true, if flexible { 1 } else { 2 }, |i| {
                read_string(i, flexible)
            })?;
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
                configuration_keys,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeConfigsRequest::is_flexible(version);
        buf.put_i8(self.resource_type);
        primitives::put_str(buf, Some(self.resource_name.as_str()), flexible)?;
        write_nullable_array(
            buf,
            self.configuration_keys.as_deref(),
            flexible,
            true,
            at(
                NAME_REQUEST,
                version,
                "DescribeConfigsResource.configuration_keys",
            ),
            |buf, e| {
                primitives::put_str(buf, Some(e.as_str()), flexible)?;
                Ok(())
            },
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_REQUEST,
                version,
                "DescribeConfigsResource.unknown_tagged_fields",
            ),
        )
    }
}

/// DescribeConfigsResponse (API key 32): versions 1-4, flexible 4.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeConfigsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 0+).
    pub throttle_time_ms: i32,
    /// The results for each resource (versions 0+).
    pub results: Vec<DescribeConfigsResult>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl DescribeConfigsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, results) = read_array(
            input,
            flexible,
            DescribeConfigsResult::min_encoded_size(version),
            |i| DescribeConfigsResult::decode_from(i, root, version),
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
                results,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
        write_array(buf, &self.results, flexible, |buf, e| {
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

impl Message for DescribeConfigsResponse {
    const NAME: &'static str = "DescribeConfigsResponse";
    const API_KEY: i16 = 32;
    const MIN_VERSION: i16 = 1;
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

impl Response for DescribeConfigsResponse {
    type Request = DescribeConfigsRequest;
}

/// Part of DescribeConfigsResponse (present in versions 1-4).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeConfigsResult {
    /// The error code, or 0 if we were able to successfully describe the configurations (versions 0+).
    pub error_code: i16,
    /// The error message, or null if we were able to successfully describe the configurations (versions 0+, nullable 0+).
    pub error_message: Option<String>,
    /// The resource type (versions 0+).
    pub resource_type: i8,
    /// The resource name (versions 0+).
    pub resource_name: String,
    /// Each listed configuration (versions 0+).
    pub configs: Vec<DescribeConfigsResourceResult>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribeConfigsResult {
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: Some(String::new()),
            resource_type: 0,
            resource_name: String::new(),
            configs: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribeConfigsResult {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 2;
        size += if flexible { 1 } else { 2 };
        size += 1;
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 4 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
        let (input, resource_type) = primitives::int8(input)?;
        let (input, resource_name) = read_string(input, flexible)?;
        let (input, configs) = read_array(
            input,
            flexible,
            DescribeConfigsResourceResult::min_encoded_size(version),
            |i| DescribeConfigsResourceResult::decode_from(i, root, version),
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
                error_code,
                error_message,
                resource_type,
                resource_name,
                configs,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "DescribeConfigsResult.error_message",
            ),
        )?;
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
                NAME_RESPONSE,
                version,
                "DescribeConfigsResult.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of DescribeConfigsResponse (present in versions 1-4).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeConfigsResourceResult {
    /// The configuration name (versions 0+).
    pub name: String,
    /// The configuration value (versions 0+, nullable 0+).
    pub value: Option<String>,
    /// True if the configuration is read-only (versions 0+).
    pub read_only: bool,
    /// The configuration source (versions 1+, default -1).
    pub config_source: i8,
    /// True if this configuration is sensitive (versions 0+).
    pub is_sensitive: bool,
    /// The synonyms for this configuration key (versions 1+).
    pub synonyms: Vec<DescribeConfigsSynonym>,
    /// The configuration data type. Type can be one of the following values - BOOLEAN, STRING, INT, SHORT, LONG, DOUBLE, LIST, CLASS, PASSWORD (versions 3+, default 0).
    pub config_type: i8,
    /// The configuration documentation (versions 3+, nullable 3+).
    pub documentation: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribeConfigsResourceResult {
    fn default() -> Self {
        Self {
            name: String::new(),
            value: Some(String::new()),
            read_only: false,
            config_source: -1,
            is_sensitive: false,
            synonyms: Vec::new(),
            config_type: 0,
            documentation: Some(String::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribeConfigsResourceResult {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += 1;
        size += 1;
        size += 1;
        size += if flexible { 1 } else { 4 };
        if version >= 3 {
            size += 1;
        }
        if version >= 3 {
            size += if flexible { 1 } else { 2 };
        }
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, value) = read_nullable_string(input, flexible, true)?;
        let (input, read_only) = primitives::boolean(input)?;
        let (input, config_source) = primitives::int8(input)?;
        let (input, is_sensitive) = primitives::boolean(input)?;
        let (input, synonyms) = read_array(
            input,
            flexible,
            DescribeConfigsSynonym::min_encoded_size(version),
            |i| DescribeConfigsSynonym::decode_from(i, root, version),
        )?;
        let (input, config_type) = if version >= 3 {
            primitives::int8(input)?
        } else {
            (input, 0)
        };
        let (input, documentation) = if version >= 3 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, Some(String::new()))
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
                value,
                read_only,
                config_source,
                is_sensitive,
                synonyms,
                config_type,
                documentation,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        write_nullable_string(
            buf,
            self.value.as_deref(),
            flexible,
            true,
            at(
                NAME_RESPONSE,
                version,
                "DescribeConfigsResourceResult.value",
            ),
        )?;
        buf.put_i8(i8::from(self.read_only));
        buf.put_i8(self.config_source);
        buf.put_i8(i8::from(self.is_sensitive));
        write_array(buf, &self.synonyms, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 3 {
            buf.put_i8(self.config_type);
        } else if self.config_type != 0 {
            return Err(at(
                NAME_RESPONSE,
                version,
                "DescribeConfigsResourceResult.config_type",
            )
            .not_at_version());
        }
        if version >= 3 {
            write_nullable_string(
                buf,
                self.documentation.as_deref(),
                flexible,
                true,
                at(
                    NAME_RESPONSE,
                    version,
                    "DescribeConfigsResourceResult.documentation",
                ),
            )?;
        } else if !matches!(&self.documentation, Some(x) if x.is_empty()) {
            return Err(at(
                NAME_RESPONSE,
                version,
                "DescribeConfigsResourceResult.documentation",
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
                "DescribeConfigsResourceResult.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of DescribeConfigsResponse (present in versions 1-4).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeConfigsSynonym {
    /// The synonym name (versions 1+).
    pub name: String,
    /// The synonym value (versions 1+, nullable 1+).
    pub value: Option<String>,
    /// The synonym source (versions 1+).
    pub source: i8,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for DescribeConfigsSynonym {
    fn default() -> Self {
        Self {
            name: String::new(),
            value: Some(String::new()),
            source: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl DescribeConfigsSynonym {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += if flexible { 1 } else { 2 };
        size += 1;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, value) = read_nullable_string(input, flexible, true)?;
        let (input, source) = primitives::int8(input)?;
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
                source,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        write_nullable_string(
            buf,
            self.value.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "DescribeConfigsSynonym.value"),
        )?;
        buf.put_i8(self.source);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "DescribeConfigsSynonym.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_describe_configs_request(
        g: &mut Gen,
        version: i16,
    ) -> DescribeConfigsRequest {
        let flexible = DescribeConfigsRequest::is_flexible(version);
        DescribeConfigsRequest {
            resources: g.vec(|g| arb_describe_configs_resource(g, version)),
            include_synonyms: g.bool(),
            include_documentation: if version >= 3 { g.bool() } else { false },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_configs_resource(
        g: &mut Gen,
        version: i16,
    ) -> DescribeConfigsResource {
        let flexible = DescribeConfigsRequest::is_flexible(version);
        DescribeConfigsResource {
            resource_type: g.i8(),
            resource_name: g.string(),
            configuration_keys: g.option(|g| g.vec(|g| g.string())),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_configs_response(
        g: &mut Gen,
        version: i16,
    ) -> DescribeConfigsResponse {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        DescribeConfigsResponse {
            throttle_time_ms: g.i32(),
            results: g.vec(|g| arb_describe_configs_result(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_configs_result(g: &mut Gen, version: i16) -> DescribeConfigsResult {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        DescribeConfigsResult {
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            resource_type: g.i8(),
            resource_name: g.string(),
            configs: g.vec(|g| arb_describe_configs_resource_result(g, version)),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_configs_resource_result(
        g: &mut Gen,
        version: i16,
    ) -> DescribeConfigsResourceResult {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        DescribeConfigsResourceResult {
            name: g.string(),
            value: g.option(|g| g.string()),
            read_only: g.bool(),
            config_source: g.i8(),
            is_sensitive: g.bool(),
            synonyms: g.vec(|g| arb_describe_configs_synonym(g, version)),
            config_type: if version >= 3 { g.i8() } else { 0 },
            documentation: if version >= 3 {
                g.option(|g| g.string())
            } else {
                Some(String::new())
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_describe_configs_synonym(
        g: &mut Gen,
        version: i16,
    ) -> DescribeConfigsSynonym {
        let flexible = DescribeConfigsResponse::is_flexible(version);
        DescribeConfigsSynonym {
            name: g.string(),
            value: g.option(|g| g.string()),
            source: g.i8(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn describe_configs_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_describe_configs_request)?;
        }

        #[test]
        fn describe_configs_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_describe_configs_request)?;
        }

        #[test]
        fn describe_configs_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_describe_configs_response)?;
        }

        #[test]
        fn describe_configs_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_describe_configs_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 1..=4 {
            let mut buf = BytesMut::new();
            DescribeConfigsResource::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeConfigsResource::min_encoded_size(version),
                "DescribeConfigsResource v{version}"
            );
        }
        for version in 1..=4 {
            let mut buf = BytesMut::new();
            DescribeConfigsResult::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeConfigsResult::min_encoded_size(version),
                "DescribeConfigsResult v{version}"
            );
        }
        for version in 1..=4 {
            let mut buf = BytesMut::new();
            DescribeConfigsResourceResult::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeConfigsResourceResult::min_encoded_size(version),
                "DescribeConfigsResourceResult v{version}"
            );
        }
        for version in 1..=4 {
            let mut buf = BytesMut::new();
            DescribeConfigsSynonym::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                DescribeConfigsSynonym::min_encoded_size(version),
                "DescribeConfigsSynonym v{version}"
            );
        }
    }
}
