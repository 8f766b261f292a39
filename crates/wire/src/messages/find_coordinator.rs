//! FindCoordinator: `FindCoordinatorRequest` and `FindCoordinatorResponse` (API key 10), generated from Kafka 4.4.0's `FindCoordinatorRequest.json` and `FindCoordinatorResponse.json`.
//!
//! Request versions 0-6, flexible 3-6; response versions 0-6, flexible 3-6.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_nullable_string,
    read_string, share, write_array, write_nullable_string, write_tagged_fields, Message, Request,
    Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "FindCoordinatorRequest";
const NAME_RESPONSE: &str = "FindCoordinatorResponse";

/// FindCoordinatorRequest (API key 10): versions 0-6, flexible 3-6.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FindCoordinatorRequest {
    /// The coordinator key (versions 0-3).
    pub key: String,
    /// The coordinator key type. (group, transaction, share) (versions 1+, default 0).
    pub key_type: i8,
    /// The coordinator keys (versions 4+).
    pub coordinator_keys: Vec<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl FindCoordinatorRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FindCoordinatorRequest::is_flexible(version);
        let (input, key) = if version <= 3 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, key_type) = if version >= 1 {
            primitives::int8(input)?
        } else {
            (input, 0)
        };
        let (input, coordinator_keys) = if version >= 4 {
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
                key,
                key_type,
                coordinator_keys,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FindCoordinatorRequest::is_flexible(version);
        if version <= 3 {
            primitives::put_str(buf, Some(self.key.as_str()), flexible)?;
        } else if !self.key.is_empty() {
            return Err(at(NAME_REQUEST, version, "key").not_at_version());
        }
        if version >= 1 {
            buf.put_i8(self.key_type);
        } else if self.key_type != 0 {
            return Err(at(NAME_REQUEST, version, "key_type").not_at_version());
        }
        if version >= 4 {
            write_array(buf, &self.coordinator_keys, flexible, |buf, e| {
                primitives::put_str(buf, Some(e.as_str()), flexible)?;
                Ok(())
            })?;
        } else if !self.coordinator_keys.is_empty() {
            return Err(at(NAME_REQUEST, version, "coordinator_keys").not_at_version());
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

impl Message for FindCoordinatorRequest {
    const NAME: &'static str = "FindCoordinatorRequest";
    const API_KEY: i16 = 10;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
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

impl Request for FindCoordinatorRequest {
    type Response = FindCoordinatorResponse;
}

/// FindCoordinatorResponse (API key 10): versions 0-6, flexible 3-6.
#[derive(Debug, Clone, PartialEq)]
pub struct FindCoordinatorResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 1+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0-3).
    pub error_code: i16,
    /// The error message, or null if there was no error (versions 1-3, nullable 1-3).
    pub error_message: Option<String>,
    /// The node id (versions 0-3).
    pub node_id: i32,
    /// The host name (versions 0-3).
    pub host: String,
    /// The port (versions 0-3).
    pub port: i32,
    /// Each coordinator result in the response (versions 4+).
    pub coordinators: Vec<Coordinator>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for FindCoordinatorResponse {
    fn default() -> Self {
        Self {
            throttle_time_ms: 0,
            error_code: 0,
            error_message: Some(String::new()),
            node_id: 0,
            host: String::new(),
            port: 0,
            coordinators: Vec::new(),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl FindCoordinatorResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FindCoordinatorResponse::is_flexible(version);
        let (input, throttle_time_ms) = if version >= 1 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, error_code) = if version <= 3 {
            primitives::int16(input)?
        } else {
            (input, 0)
        };
        let (input, error_message) = if (1..=3).contains(&version) {
            read_nullable_string(input, flexible, true)?
        } else {
            (input, Some(String::new()))
        };
        let (input, node_id) = if version <= 3 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, host) = if version <= 3 {
            read_string(input, flexible)?
        } else {
            (input, String::new())
        };
        let (input, port) = if version <= 3 {
            primitives::int32(input)?
        } else {
            (input, 0)
        };
        let (input, coordinators) = if version >= 4 {
            read_array(
                input,
                flexible,
                Coordinator::min_encoded_size(version),
                |i| Coordinator::decode_from(i, root, version),
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
                error_message,
                node_id,
                host,
                port,
                coordinators,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FindCoordinatorResponse::is_flexible(version);
        if version >= 1 {
            buf.put_i32(self.throttle_time_ms);
        } else if self.throttle_time_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "throttle_time_ms").not_at_version());
        }
        if version <= 3 {
            buf.put_i16(self.error_code);
        } else if self.error_code != 0 {
            return Err(at(NAME_RESPONSE, version, "error_code").not_at_version());
        }
        if (1..=3).contains(&version) {
            write_nullable_string(
                buf,
                self.error_message.as_deref(),
                flexible,
                true,
                at(NAME_RESPONSE, version, "error_message"),
            )?;
        } else if !matches!(&self.error_message, Some(x) if x.is_empty()) {
            return Err(at(NAME_RESPONSE, version, "error_message").not_at_version());
        }
        if version <= 3 {
            buf.put_i32(self.node_id);
        } else if self.node_id != 0 {
            return Err(at(NAME_RESPONSE, version, "node_id").not_at_version());
        }
        if version <= 3 {
            primitives::put_str(buf, Some(self.host.as_str()), flexible)?;
        } else if !self.host.is_empty() {
            return Err(at(NAME_RESPONSE, version, "host").not_at_version());
        }
        if version <= 3 {
            buf.put_i32(self.port);
        } else if self.port != 0 {
            return Err(at(NAME_RESPONSE, version, "port").not_at_version());
        }
        if version >= 4 {
            write_array(buf, &self.coordinators, flexible, |buf, e| {
                e.encode_into(buf, version)?;
                Ok(())
            })?;
        } else if !self.coordinators.is_empty() {
            return Err(at(NAME_RESPONSE, version, "coordinators").not_at_version());
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

impl Message for FindCoordinatorResponse {
    const NAME: &'static str = "FindCoordinatorResponse";
    const API_KEY: i16 = 10;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 6;
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

impl Response for FindCoordinatorResponse {
    type Request = FindCoordinatorRequest;
}

/// Part of FindCoordinatorResponse (present in versions 4-6).
#[derive(Debug, Clone, PartialEq)]
pub struct Coordinator {
    /// The coordinator key (versions 4+).
    pub key: String,
    /// The node id (versions 4+).
    pub node_id: i32,
    /// The host name (versions 4+).
    pub host: String,
    /// The port (versions 4+).
    pub port: i32,
    /// The error code, or 0 if there was no error (versions 4+).
    pub error_code: i16,
    /// The error message, or null if there was no error (versions 4+, nullable 4+).
    pub error_message: Option<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for Coordinator {
    fn default() -> Self {
        Self {
            key: String::new(),
            node_id: 0,
            host: String::new(),
            port: 0,
            error_code: 0,
            error_message: Some(String::new()),
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl Coordinator {
    /// The fewest bytes this struct takes on the wire at `version`.
    pub(crate) fn min_encoded_size(version: i16) -> usize {
        let flexible = FindCoordinatorResponse::is_flexible(version);
        let mut size = usize::from(flexible);
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += if flexible { 1 } else { 2 };
        size += 4;
        size += 2;
        size += if flexible { 1 } else { 2 };
        size
    }

    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = FindCoordinatorResponse::is_flexible(version);
        let (input, key) = read_string(input, flexible)?;
        let (input, node_id) = primitives::int32(input)?;
        let (input, host) = read_string(input, flexible)?;
        let (input, port) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
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
                key,
                node_id,
                host,
                port,
                error_code,
                error_message,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = FindCoordinatorResponse::is_flexible(version);
        primitives::put_str(buf, Some(self.key.as_str()), flexible)?;
        buf.put_i32(self.node_id);
        primitives::put_str(buf, Some(self.host.as_str()), flexible)?;
        buf.put_i32(self.port);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "Coordinator.error_message"),
        )?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_RESPONSE, version, "Coordinator.unknown_tagged_fields"),
        )
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_find_coordinator_request(
        g: &mut Gen,
        version: i16,
    ) -> FindCoordinatorRequest {
        let flexible = FindCoordinatorRequest::is_flexible(version);
        FindCoordinatorRequest {
            key: if version <= 3 {
                g.string()
            } else {
                String::new()
            },
            key_type: if version >= 1 { g.i8() } else { 0 },
            coordinator_keys: if version >= 4 {
                g.vec(|g| g.string())
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_find_coordinator_response(
        g: &mut Gen,
        version: i16,
    ) -> FindCoordinatorResponse {
        let flexible = FindCoordinatorResponse::is_flexible(version);
        FindCoordinatorResponse {
            throttle_time_ms: if version >= 1 { g.i32() } else { 0 },
            error_code: if version <= 3 { g.i16() } else { 0 },
            error_message: if (1..=3).contains(&version) {
                g.option(|g| g.string())
            } else {
                Some(String::new())
            },
            node_id: if version <= 3 { g.i32() } else { 0 },
            host: if version <= 3 {
                g.string()
            } else {
                String::new()
            },
            port: if version <= 3 { g.i32() } else { 0 },
            coordinators: if version >= 4 {
                g.vec(|g| arb_coordinator(g, version))
            } else {
                Vec::new()
            },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_coordinator(g: &mut Gen, version: i16) -> Coordinator {
        let flexible = FindCoordinatorResponse::is_flexible(version);
        Coordinator {
            key: g.string(),
            node_id: g.i32(),
            host: g.string(),
            port: g.i32(),
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn find_coordinator_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_find_coordinator_request)?;
        }

        #[test]
        fn find_coordinator_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_find_coordinator_request)?;
        }

        #[test]
        fn find_coordinator_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_find_coordinator_response)?;
        }

        #[test]
        fn find_coordinator_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_find_coordinator_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {
        for version in 4..=6 {
            let mut buf = BytesMut::new();
            Coordinator::default()
                .encode_into(&mut buf, version)
                .expect("a default encodes");
            assert_eq!(
                buf.len(),
                Coordinator::min_encoded_size(version),
                "Coordinator v{version}"
            );
        }
    }
}
