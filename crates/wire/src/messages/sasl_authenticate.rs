//! SaslAuthenticate: `SaslAuthenticateRequest` and `SaslAuthenticateResponse` (API key 36), generated from Kafka 4.4.0's `SaslAuthenticateRequest.json` and `SaslAuthenticateResponse.json`.
//!
//! Request versions 0-2, flexible 2; response versions 0-2, flexible 2.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_bytes, read_nullable_string,
    share, write_nullable_string, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "SaslAuthenticateRequest";
const NAME_RESPONSE: &str = "SaslAuthenticateResponse";

/// SaslAuthenticateRequest (API key 36): versions 0-2, flexible 2.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslAuthenticateRequest {
    /// The SASL authentication bytes from the client, as defined by the SASL mechanism (versions 0+).
    pub auth_bytes: Bytes,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl SaslAuthenticateRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = SaslAuthenticateRequest::is_flexible(version);
        let (input, auth_bytes) = read_bytes(input, root, flexible)?;
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
                auth_bytes,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = SaslAuthenticateRequest::is_flexible(version);
        primitives::put_bytes(buf, Some(&self.auth_bytes[..]), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for SaslAuthenticateRequest {
    const NAME: &'static str = "SaslAuthenticateRequest";
    const API_KEY: i16 = 36;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(2);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for SaslAuthenticateRequest {
    type Response = SaslAuthenticateResponse;
}

/// SaslAuthenticateResponse (API key 36): versions 0-2, flexible 2.
#[derive(Debug, Clone, PartialEq)]
pub struct SaslAuthenticateResponse {
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The error message, or null if there was no error (versions 0+, nullable 0+).
    pub error_message: Option<String>,
    /// The SASL authentication bytes from the server, as defined by the SASL mechanism (versions 0+).
    pub auth_bytes: Bytes,
    /// Number of milliseconds after which only re-authentication over the existing connection to create a new session can occur (versions 1+, default 0).
    pub session_lifetime_ms: i64,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl Default for SaslAuthenticateResponse {
    fn default() -> Self {
        Self {
            error_code: 0,
            error_message: Some(String::new()),
            auth_bytes: Bytes::new(),
            session_lifetime_ms: 0,
            unknown_tagged_fields: Vec::new(),
        }
    }
}

impl SaslAuthenticateResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = SaslAuthenticateResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, error_message) = read_nullable_string(input, flexible, true)?;
        let (input, auth_bytes) = read_bytes(input, root, flexible)?;
        let (input, session_lifetime_ms) = if version >= 1 {
            primitives::int64(input)?
        } else {
            (input, 0)
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
                auth_bytes,
                session_lifetime_ms,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = SaslAuthenticateResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        write_nullable_string(
            buf,
            self.error_message.as_deref(),
            flexible,
            true,
            at(NAME_RESPONSE, version, "error_message"),
        )?;
        primitives::put_bytes(buf, Some(&self.auth_bytes[..]), flexible)?;
        if version >= 1 {
            buf.put_i64(self.session_lifetime_ms);
        } else if self.session_lifetime_ms != 0 {
            return Err(at(NAME_RESPONSE, version, "session_lifetime_ms").not_at_version());
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

impl Message for SaslAuthenticateResponse {
    const NAME: &'static str = "SaslAuthenticateResponse";
    const API_KEY: i16 = 36;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 2;
    const FLEXIBLE_MIN_VERSION: Option<i16> = Some(2);

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for SaslAuthenticateResponse {
    type Request = SaslAuthenticateRequest;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_sasl_authenticate_request(
        g: &mut Gen,
        version: i16,
    ) -> SaslAuthenticateRequest {
        let flexible = SaslAuthenticateRequest::is_flexible(version);
        SaslAuthenticateRequest {
            auth_bytes: g.bytes(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_sasl_authenticate_response(
        g: &mut Gen,
        version: i16,
    ) -> SaslAuthenticateResponse {
        let flexible = SaslAuthenticateResponse::is_flexible(version);
        SaslAuthenticateResponse {
            error_code: g.i16(),
            error_message: g.option(|g| g.string()),
            auth_bytes: g.bytes(),
            session_lifetime_ms: if version >= 1 { g.i64() } else { 0 },
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn sasl_authenticate_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_sasl_authenticate_request)?;
        }

        #[test]
        fn sasl_authenticate_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_sasl_authenticate_request)?;
        }

        #[test]
        fn sasl_authenticate_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_sasl_authenticate_response)?;
        }

        #[test]
        fn sasl_authenticate_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_sasl_authenticate_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {}
}
