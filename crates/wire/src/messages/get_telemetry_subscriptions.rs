//! GetTelemetrySubscriptions: `GetTelemetrySubscriptionsRequest` and `GetTelemetrySubscriptionsResponse` (API key 71), generated from Kafka 4.4.0's `GetTelemetrySubscriptionsRequest.json` and `GetTelemetrySubscriptionsResponse.json`.
//!
//! Request versions 0, flexible 0; response versions 0, flexible 0.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_string, share,
    write_array, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult, Uuid};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "GetTelemetrySubscriptionsRequest";
const NAME_RESPONSE: &str = "GetTelemetrySubscriptionsResponse";

/// GetTelemetrySubscriptionsRequest (API key 71): versions 0, flexible 0.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GetTelemetrySubscriptionsRequest {
    /// Unique id for this client instance, must be set to 0 on the first request (versions 0+).
    pub client_instance_id: Uuid,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl GetTelemetrySubscriptionsRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = GetTelemetrySubscriptionsRequest::is_flexible(version);
        let (input, client_instance_id) = primitives::uuid(input)?;
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
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = GetTelemetrySubscriptionsRequest::is_flexible(version);
        buf.put_slice(&self.client_instance_id.0);
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for GetTelemetrySubscriptionsRequest {
    const NAME: &'static str = "GetTelemetrySubscriptionsRequest";
    const API_KEY: i16 = 71;
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

impl Request for GetTelemetrySubscriptionsRequest {
    type Response = GetTelemetrySubscriptionsResponse;
}

/// GetTelemetrySubscriptionsResponse (API key 71): versions 0, flexible 0.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GetTelemetrySubscriptionsResponse {
    /// The duration in milliseconds for which the request was throttled due to a quota violation, or zero if the request did not violate any quota (versions 0+).
    pub throttle_time_ms: i32,
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// Assigned client instance id if ClientInstanceId was 0 in the request, else 0 (versions 0+).
    pub client_instance_id: Uuid,
    /// Unique identifier for the current subscription set for this client instance (versions 0+).
    pub subscription_id: i32,
    /// Compression types that broker accepts for the PushTelemetryRequest (versions 0+).
    pub accepted_compression_types: Vec<i8>,
    /// Configured push interval, which is the lowest configured interval in the current subscription set (versions 0+).
    pub push_interval_ms: i32,
    /// The maximum bytes of binary data the broker accepts in PushTelemetryRequest (versions 0+).
    pub telemetry_max_bytes: i32,
    /// Flag to indicate monotonic/counter metrics are to be emitted as deltas or cumulative values (versions 0+).
    pub delta_temporality: bool,
    /// Requested metrics prefix string match. Empty array: No metrics subscribed, Array[0] empty string: All metrics subscribed (versions 0+).
    pub requested_metrics: Vec<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl GetTelemetrySubscriptionsResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = GetTelemetrySubscriptionsResponse::is_flexible(version);
        let (input, throttle_time_ms) = primitives::int32(input)?;
        let (input, error_code) = primitives::int16(input)?;
        let (input, client_instance_id) = primitives::uuid(input)?;
        let (input, subscription_id) = primitives::int32(input)?;
        let (input, accepted_compression_types) = read_array(input, flexible, 1, primitives::int8)?;
        let (input, push_interval_ms) = primitives::int32(input)?;
        let (input, telemetry_max_bytes) = primitives::int32(input)?;
        let (input, delta_temporality) = primitives::boolean(input)?;
        let (input, requested_metrics) =
            read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
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
                throttle_time_ms,
                error_code,
                client_instance_id,
                subscription_id,
                accepted_compression_types,
                push_interval_ms,
                telemetry_max_bytes,
                delta_temporality,
                requested_metrics,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = GetTelemetrySubscriptionsResponse::is_flexible(version);
        buf.put_i32(self.throttle_time_ms);
        buf.put_i16(self.error_code);
        buf.put_slice(&self.client_instance_id.0);
        buf.put_i32(self.subscription_id);
        write_array(buf, &self.accepted_compression_types, flexible, |buf, e| {
            buf.put_i8(*e);
            Ok(())
        })?;
        buf.put_i32(self.push_interval_ms);
        buf.put_i32(self.telemetry_max_bytes);
        buf.put_i8(i8::from(self.delta_temporality));
        write_array(buf, &self.requested_metrics, flexible, |buf, e| {
            primitives::put_str(buf, Some(e.as_str()), flexible)?;
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

impl Message for GetTelemetrySubscriptionsResponse {
    const NAME: &'static str = "GetTelemetrySubscriptionsResponse";
    const API_KEY: i16 = 71;
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

impl Response for GetTelemetrySubscriptionsResponse {
    type Request = GetTelemetrySubscriptionsRequest;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_get_telemetry_subscriptions_request(
        g: &mut Gen,
        version: i16,
    ) -> GetTelemetrySubscriptionsRequest {
        let flexible = GetTelemetrySubscriptionsRequest::is_flexible(version);
        GetTelemetrySubscriptionsRequest {
            client_instance_id: g.uuid(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_get_telemetry_subscriptions_response(
        g: &mut Gen,
        version: i16,
    ) -> GetTelemetrySubscriptionsResponse {
        let flexible = GetTelemetrySubscriptionsResponse::is_flexible(version);
        GetTelemetrySubscriptionsResponse {
            throttle_time_ms: g.i32(),
            error_code: g.i16(),
            client_instance_id: g.uuid(),
            subscription_id: g.i32(),
            accepted_compression_types: g.vec(|g| g.i8()),
            push_interval_ms: g.i32(),
            telemetry_max_bytes: g.i32(),
            delta_temporality: g.bool(),
            requested_metrics: g.vec(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn get_telemetry_subscriptions_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_get_telemetry_subscriptions_request)?;
        }

        #[test]
        fn get_telemetry_subscriptions_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_get_telemetry_subscriptions_request)?;
        }

        #[test]
        fn get_telemetry_subscriptions_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_get_telemetry_subscriptions_response)?;
        }

        #[test]
        fn get_telemetry_subscriptions_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_get_telemetry_subscriptions_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {}
}
