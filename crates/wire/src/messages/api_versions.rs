//! ApiVersions: `ApiVersionsRequest` and `ApiVersionsResponse` (API key 18), generated from Kafka 4.4.0's `ApiVersionsRequest.json` and `ApiVersionsResponse.json`.
//!
//! Request versions 0-5, flexible 3-5; response versions 0-5, flexible 3-5.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_string,
    read_string, read_tagged, share, write_array, write_nullable_string, write_tagged_fields,
    Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "ApiVersionsRequest";
const NAME_RESPONSE: &str = "ApiVersionsResponse";

/// ApiVersionsRequest (API key 18): versions 0-5, flexible 3-5.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiVersionsRequest {
    /// The name of the client (versions 3+).
    pub client_software_name: String,
    /// The version of the client (versions 3+).
    pub client_software_version: String,
    /// The cluster ID the client intends to connect to. Provide both ClusterId and NodeId, if known (versions 5+, nullable 5+, default null).
    pub cluster_id: Option<String>,
    /// The node ID the client intends to connect to. Provide both ClusterId and NodeId, if known (versions 5+, default -1).
    pub node_id: i32,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for ApiVersionsRequest {
    fn default() -> Self {
        Self {
            client_software_name: String::new(),
            client_software_version: String::new(),
            cluster_id: None,
            node_id: -1,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ApiVersionsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ApiVersionsRequest::is_flexible(version);
        let (input, client_software_name) = if version >= 3 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, client_software_version) = if version >= 3 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, cluster_id) = if version >= 5 {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, None)
        };
        let (input, node_id) = if version >= 5 {
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
                client_software_name,
                client_software_version,
                cluster_id,
                node_id,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ApiVersionsRequest::is_flexible(version);
        if version >= 3 {
            primitives::put_str(buf, Some(self.client_software_name.as_str()), flexible)?;
        } else if !self.client_software_name.is_empty() {
            return Err(at(NAME_REQUEST, version, "client_software_name").not_at_version());
        }
        if version >= 3 {
            primitives::put_str(buf, Some(self.client_software_version.as_str()), flexible)?;
        } else if !self.client_software_version.is_empty() {
            return Err(at(NAME_REQUEST, version, "client_software_version").not_at_version());
        }
        if version >= 5 {
            write_nullable_string(
                buf,
                self.cluster_id.as_deref(),
                flexible,
                true,
                at(NAME_REQUEST, version, "cluster_id"),
            )?;
        } else if self.cluster_id.is_some() {
            return Err(at(NAME_REQUEST, version, "cluster_id").not_at_version());
        }
        if version >= 5 {
            buf.put_i32(self.node_id);
        } else if self.node_id != -1 {
            return Err(at(NAME_REQUEST, version, "node_id").not_at_version());
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

impl Message for ApiVersionsRequest {
    const NAME: &'static str = "ApiVersionsRequest";
    const API_KEY: i16 = 18;
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

impl Request for ApiVersionsRequest {
    type Response = ApiVersionsResponse;
}

/// ApiVersionsResponse (API key 18): versions 0-5, flexible 3-5.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiVersionsResponse {
    /// The top-level error code (versions 0+).
    pub error_code: i16,
    /// The APIs supported by the broker (versions 0+).
    pub api_keys: Vec<ApiVersion>,
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// Features supported by the broker. Note: in v0-v3, features with MinSupportedVersion = 0 are omitted (versions 3+, tagged 3+ (tag 0)).
    pub supported_features: Vec<SupportedFeatureKey>,
    /// The monotonically increasing epoch for the finalized features information. Valid values are >= 0. A value of -1 is special and represents unknown epoch (versions 3+, tagged 3+ (tag 1), default -1).
    pub finalized_features_epoch: i64,
    /// List of cluster-wide finalized features. The information is valid only if FinalizedFeaturesEpoch >= 0 (versions 3+, tagged 3+ (tag 2)).
    pub finalized_features: Vec<FinalizedFeatureKey>,
    /// Set by a KRaft controller if the required configurations for ZK migration are present (versions 3+, tagged 3+ (tag 3), default false).
    pub zk_migration_ready: bool,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for ApiVersionsResponse {
    fn default() -> Self {
        Self {
            error_code: 0,
            api_keys: Vec::new(),
            throttle_time_ms: 0,
            supported_features: Vec::new(),
            finalized_features_epoch: -1,
            finalized_features: Vec::new(),
            zk_migration_ready: false,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl ApiVersionsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, api_keys) = read_array(
            input,
            flexible,
            ApiVersion::min_encoded_size(version),
            |i| ApiVersion::decode_from(i, root, version),
        )?;
        let (input, throttle_time_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let mut supported_features = Vec::new();
        let mut finalized_features_epoch = -1;
        let mut finalized_features = Vec::new();
        let mut zk_migration_ready = false;
        let mut unknown_tagged_fields = Vec::new();
        let (input, raw_tagged) = if flexible {
            primitives::tagged_fields(input)?
        } else {
            (input, Vec::new())
        };
        for (tag, value) in raw_tagged {
            match tag {
                0 if version >= 3 => {
                    supported_features = read_tagged(value, "supported_features", |i| {
                        read_array(
                            i,
                            flexible,
                            SupportedFeatureKey::min_encoded_size(version),
                            |i| SupportedFeatureKey::decode_from(i, root, version),
                        )
                    })?
                }
                1 if version >= 3 => {
                    finalized_features_epoch =
                        read_tagged(value, "finalized_features_epoch", |i| primitives::int64(i))?
                }
                2 if version >= 3 => {
                    finalized_features = read_tagged(value, "finalized_features", |i| {
                        read_array(
                            i,
                            flexible,
                            FinalizedFeatureKey::min_encoded_size(version),
                            |i| FinalizedFeatureKey::decode_from(i, root, version),
                        )
                    })?
                }
                3 if version >= 3 => {
                    zk_migration_ready =
                        read_tagged(value, "zk_migration_ready", |i| primitives::boolean(i))?
                }
                _ => unknown_tagged_fields.push((tag, share(root, value))),
            }
        }
        Ok((
            input,
            Self {
                error_code,
                api_keys,
                throttle_time_ms,
                supported_features,
                finalized_features_epoch,
                finalized_features,
                zk_migration_ready,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        write_array(buf, &self.api_keys, flexible, |buf, e| {
            e.encode_into(buf, version)?;
            Ok(())
        })?;
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        let mut known = Vec::new();
        if version >= 3 {
            if !self.supported_features.is_empty() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    write_array(buf, &self.supported_features, flexible, |buf, e| {
                        e.encode_into(buf, version)?;
                        Ok(())
                    })?;
                }
                known.push((0, value));
            }
        } else if !self.supported_features.is_empty() {
            return Err(at(NAME_RESPONSE, version, "supported_features").not_at_version());
        }
        if version >= 3 {
            if self.finalized_features_epoch != -1 {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    buf.put_i64(self.finalized_features_epoch);
                }
                known.push((1, value));
            }
        } else if self.finalized_features_epoch != -1 {
            return Err(at(NAME_RESPONSE, version, "finalized_features_epoch").not_at_version());
        }
        if version >= 3 {
            if !self.finalized_features.is_empty() {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    write_array(buf, &self.finalized_features, flexible, |buf, e| {
                        e.encode_into(buf, version)?;
                        Ok(())
                    })?;
                }
                known.push((2, value));
            }
        } else if !self.finalized_features.is_empty() {
            return Err(at(NAME_RESPONSE, version, "finalized_features").not_at_version());
        }
        if version >= 3 {
            if self.zk_migration_ready {
                let mut value = BytesMut::new();
                {
                    let buf = &mut value;
                    buf.put_i8(i8::from(self.zk_migration_ready));
                }
                known.push((3, value));
            }
        } else if self.zk_migration_ready {
            return Err(at(NAME_RESPONSE, version, "zk_migration_ready").not_at_version());
        }
        write_tagged_fields(
            buf,
            flexible,
            known,
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for ApiVersionsResponse {
    const NAME: &'static str = "ApiVersionsResponse";
    const API_KEY: i16 = 18;
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

impl Response for ApiVersionsResponse {
    type Request = ApiVersionsRequest;
}

/// Part of ApiVersionsResponse (present in versions 0-5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ApiVersion {
    /// The API index (versions 0+).
    pub api_key: i16,
    /// The minimum supported version, inclusive (versions 0+).
    pub min_version: i16,
    /// The maximum supported version, inclusive (versions 0+).
    pub max_version: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ApiVersion {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ApiVersionsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += 2;
        size += 2;
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        let (input, api_key) = primitives::int16(input)?;
        let (input, min_version) = primitives::int16(input)?;
        let (input, max_version) = primitives::int16(input)?;
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
                api_key,
                min_version,
                max_version,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        buf.put_i16(self.api_key);
        buf.put_i16(self.min_version);
        buf.put_i16(self.max_version);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "ApiVersion.unknown_tagged_fields"),
        )
    }
}

/// Part of ApiVersionsResponse (present in versions 3-5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SupportedFeatureKey {
    /// The name of the feature (versions 3+).
    pub name: String,
    /// The minimum supported version for the feature (versions 3+).
    pub min_version: i16,
    /// The maximum supported version for the feature (versions 3+).
    pub max_version: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl SupportedFeatureKey {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ApiVersionsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += 2;
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, min_version) = primitives::int16(input)?;
        let (input, max_version) = primitives::int16(input)?;
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
                min_version,
                max_version,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        buf.put_i16(self.min_version);
        buf.put_i16(self.max_version);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "SupportedFeatureKey.unknown_tagged_fields",
            ),
        )
    }
}

/// Part of ApiVersionsResponse (present in versions 3-5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FinalizedFeatureKey {
    /// The name of the feature (versions 3+).
    pub name: String,
    /// The cluster-wide finalized max version level for the feature (versions 3+).
    pub max_version_level: i16,
    /// The cluster-wide finalized min version level for the feature (versions 3+).
    pub min_version_level: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl FinalizedFeatureKey {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = ApiVersionsResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += 2;
        size += 2;
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        let (input, name) = read_string(input, flexible)?;
        let (input, max_version_level) = primitives::int16(input)?;
        let (input, min_version_level) = primitives::int16(input)?;
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
                max_version_level,
                min_version_level,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = ApiVersionsResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.name.as_str()), flexible)?;
        buf.put_i16(self.max_version_level);
        buf.put_i16(self.min_version_level);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(
                NAME_RESPONSE,
                version,
                "FinalizedFeatureKey.unknown_tagged_fields",
            ),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_api_versions_request(g: &mut Gen, version: i16) -> ApiVersionsRequest {
        let flexible = ApiVersionsRequest::is_flexible(version);
        ApiVersionsRequest {
            client_software_name: if version >= 3 {
                g.string()
            } else {
                String::new()
            },
            client_software_version: if version >= 3 {
                g.string()
            } else {
                String::new()
            },
            cluster_id: if version >= 5 {
                g.option(|g| g.string())
            } else {
                None
            },
            node_id: if version >= 5 { g.i32() } else { -1 },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_api_versions_response(g: &mut Gen, version: i16) -> ApiVersionsResponse {
        let flexible = ApiVersionsResponse::is_flexible(version);
        ApiVersionsResponse {
            error_code: g.i16(),
            api_keys: g.vec(|g| arb_api_version(g, version)),
            throttle_time_ms: if version >= 1 { g.i32() } else { 0 },
            supported_features: if version >= 3 {
                g.vec(|g| arb_supported_feature_key(g, version))
            } else {
                Vec::new()
            },
            finalized_features_epoch: if version >= 3 { g.i64() } else { -1 },
            finalized_features: if version >= 3 {
                g.vec(|g| arb_finalized_feature_key(g, version))
            } else {
                Vec::new()
            },
            zk_migration_ready: if version >= 3 { g.bool() } else { false },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[0, 1, 2, 3]),
        }
    }

    pub(super) fn arb_api_version(g: &mut Gen, version: i16) -> ApiVersion {
        let flexible = ApiVersionsResponse::is_flexible(version);
        ApiVersion {
            api_key: g.i16(),
            min_version: g.i16(),
            max_version: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_supported_feature_key(g: &mut Gen, version: i16) -> SupportedFeatureKey {
        let flexible = ApiVersionsResponse::is_flexible(version);
        SupportedFeatureKey {
            name: g.string(),
            min_version: g.i16(),
            max_version: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_finalized_feature_key(g: &mut Gen, version: i16) -> FinalizedFeatureKey {
        let flexible = ApiVersionsResponse::is_flexible(version);
        FinalizedFeatureKey {
            name: g.string(),
            max_version_level: g.i16(),
            min_version_level: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn api_versions_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_api_versions_request)?;
        }

        #[test]
        fn api_versions_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_api_versions_request)?;
        }

        #[test]
        fn api_versions_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_api_versions_response)?;
        }

        #[test]
        fn api_versions_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_api_versions_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 0..=5 {
            let mut buf = BytesMut::new();
            ApiVersion::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                ApiVersion::min_encoded_size(version),
                "ApiVersion v{version}"
            );
        }
        for version in 3..=5 {
            let mut buf = BytesMut::new();
            SupportedFeatureKey::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                SupportedFeatureKey::min_encoded_size(version),
                "SupportedFeatureKey v{version}"
            );
        }
        for version in 3..=5 {
            let mut buf = BytesMut::new();
            FinalizedFeatureKey::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                FinalizedFeatureKey::min_encoded_size(version),
                "FinalizedFeatureKey v{version}"
            );
        }
    }
}
