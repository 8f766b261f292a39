//! PushTelemetry: `PushTelemetryRequest` and `PushTelemetryResponse` (API key 72), generated from Kafka 4.4.0's `PushTelemetryRequest.json` and `PushTelemetryResponse.json`.
//!
//! Request versions 0, flexible 0; response versions 0, flexible 0.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_bytes, share, write_tagged_fields,
    Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "PushTelemetryRequest";
const NAME_RESPONSE: &str = "PushTelemetryResponse";

/// PushTelemetryRequest (API key 72): versions 0, flexible 0.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PushTelemetryRequest {
    /// Unique id for this client instance (versions 0+).
    pub client_instance_id: Uuid,
    /// Unique identifier for the current subscription (versions 0+).
    pub subscription_id: i32,
    /// Client is terminating the connection (versions 0+).
    pub terminating: bool,
    /// Compression codec used to compress the metrics (versions 0+).
    pub compression_type: i8,
    /// Metrics encoded in OpenTelemetry MetricsData v1 protobuf format (versions 0+).
    pub metrics: Bytes,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl PushTelemetryRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = PushTelemetryRequest::is_flexible(version);
        let (input, client_instance_id) = primitives::uuid(input)?;
        let (input, subscription_id) = primitives::int32(input)?;
        let (input, terminating) = primitives::boolean(input)?;
        let (input, compression_type) = primitives::int8(input)?;
        let (input, metrics) = read_bytes(input, root, flexible)?;
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
                client_instance_id,
                subscription_id,
                terminating,
                compression_type,
                metrics,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = PushTelemetryRequest::is_flexible(version);
        buf.put_slice(&self.client_instance_id.0);
        buf.put_i32(self.subscription_id);
        buf.put_i8(i8::from(self.terminating));
        buf.put_i8(self.compression_type);
        primitives::put_bytes(buf, Some(&self.metrics[..]), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for PushTelemetryRequest {
    const NAME: &'static str = "PushTelemetryRequest";
    const API_KEY: i16 = 72;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(0);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for PushTelemetryRequest {
    type Response = PushTelemetryResponse;
}

/// PushTelemetryResponse (API key 72): versions 0, flexible 0.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PushTelemetryResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 0+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl PushTelemetryResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = PushTelemetryResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
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
        let flexible = PushTelemetryResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
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

impl Message for PushTelemetryResponse {
    const NAME: &'static str = "PushTelemetryResponse";
    const API_KEY: i16 = 72;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 0;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(0);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for PushTelemetryResponse {
    type Request = PushTelemetryRequest;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_push_telemetry_request(g: &mut Gen, version: i16) -> PushTelemetryRequest {
        let flexible = PushTelemetryRequest::is_flexible(version);
        PushTelemetryRequest {
            client_instance_id: g.uuid(),
            subscription_id: g.i32(),
            terminating: g.bool(),
            compression_type: g.i8(),
            metrics: g.bytes(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_push_telemetry_response(g: &mut Gen, version: i16) -> PushTelemetryResponse {
        let flexible = PushTelemetryResponse::is_flexible(version);
        PushTelemetryResponse {
            throttle_time_ms: g.i32(),
            error_code: g.i16(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn push_telemetry_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_push_telemetry_request)?;
        }

        #[test]
        fn push_telemetry_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_push_telemetry_request)?;
        }

        #[test]
        fn push_telemetry_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_push_telemetry_response)?;
        }

        #[test]
        fn push_telemetry_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_push_telemetry_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {}
}
