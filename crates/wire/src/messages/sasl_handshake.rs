//! SaslHandshake: `SaslHandshakeRequest` and `SaslHandshakeResponse` (API key 17), generated from Kafka 4.4.0's `SaslHandshakeRequest.json` and `SaslHandshakeResponse.json`.
//!
//! Request versions 0-1, flexible none; response versions 0-1, flexible none.
//! Do not edit: regenerate with `mooring-wire-codegen` (see that crate's documentation).

use bytes::{BufMut, Bytes, BytesMut};

use super::{
    at, check_decode_version, check_encode_version, finish, read_array, read_string, share,
    write_array, write_tagged_fields, Message, Request, Response,
};
use crate::primitives::{self, PResult};
use crate::{DecodeError, EncodeError};

const NAME_REQUEST: &str = "SaslHandshakeRequest";
const NAME_RESPONSE: &str = "SaslHandshakeResponse";

/// SaslHandshakeRequest (API key 17): versions 0-1, flexible none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslHandshakeRequest {
    /// The SASL mechanism chosen by the client (versions 0+).
    pub mechanism: String,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl SaslHandshakeRequest {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = SaslHandshakeRequest::is_flexible(version);
        let (input, mechanism) = read_string(input, flexible)?;
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
                mechanism,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = SaslHandshakeRequest::is_flexible(version);
        primitives::put_str(buf, Some(self.mechanism.as_str()), flexible)?;
        write_tagged_fields(
            buf,
            flexible,
            Vec::new(),
            &self.unknown_tagged_fields,
            at(NAME_REQUEST, version, "unknown_tagged_fields"),
        )
    }
}

impl Message for SaslHandshakeRequest {
    const NAME: &'static str = "SaslHandshakeRequest";
    const API_KEY: i16 = 17;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = None;

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Request for SaslHandshakeRequest {
    type Response = SaslHandshakeResponse;
}

/// SaslHandshakeResponse (API key 17): versions 0-1, flexible none.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslHandshakeResponse {
    /// The error code, or 0 if there was no error (versions 0+).
    pub error_code: i16,
    /// The mechanisms enabled in the server (versions 0+).
    pub mechanisms: Vec<String>,
    /// Tagged fields this crate does not know, as (tag, raw value); written back unchanged.
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl SaslHandshakeResponse {
    fn decode_from<'a>(input: &'a [u8], root: &Bytes, version: i16) -> PResult<'a, Self> {
        let flexible = SaslHandshakeResponse::is_flexible(version);
        let (input, error_code) = primitives::int16(input)?;
        let (input, mechanisms) = read_array(input, flexible, if flexible { 1 } else { 2 }, |i| {
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
                error_code,
                mechanisms,
                unknown_tagged_fields,
            },
        ))
    }

    fn encode_into(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        let flexible = SaslHandshakeResponse::is_flexible(version);
        buf.put_i16(self.error_code);
        write_array(buf, &self.mechanisms, flexible, |buf, e| {
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

impl Message for SaslHandshakeResponse {
    const NAME: &'static str = "SaslHandshakeResponse";
    const API_KEY: i16 = 17;
    const MIN_VERSION: i16 = 0;
    const MAX_VERSION: i16 = 1;
    const FLEXIBLE_MIN_VERSION: Option<i16> = None;

    fn encode(&self, buf: &mut BytesMut, version: i16) -> Result<(), EncodeError> {
        check_encode_version::<Self>(version)?;
        self.encode_into(buf, version)
    }

    fn decode(input: &Bytes, version: i16) -> Result<Self, DecodeError> {
        check_decode_version::<Self>(version)?;
        finish(Self::decode_from(&input[..], input, version))
    }
}

impl Response for SaslHandshakeResponse {
    type Request = SaslHandshakeRequest;
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::messages::testing::{garbage, round_trip, Gen};
    use proptest::prelude::*;

    pub(super) fn arb_sasl_handshake_request(g: &mut Gen, version: i16) -> SaslHandshakeRequest {
        let flexible = SaslHandshakeRequest::is_flexible(version);
        SaslHandshakeRequest {
            mechanism: g.string(),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    pub(super) fn arb_sasl_handshake_response(g: &mut Gen, version: i16) -> SaslHandshakeResponse {
        let flexible = SaslHandshakeResponse::is_flexible(version);
        SaslHandshakeResponse {
            error_code: g.i16(),
            mechanisms: g.vec(|g| g.string()),
            unknown_tagged_fields: g.unknown_tagged_fields(flexible, &[]),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::messages::testing::CASES))]

        #[test]
        fn sasl_handshake_request_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_sasl_handshake_request)?;
        }

        #[test]
        fn sasl_handshake_request_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_sasl_handshake_request)?;
        }

        #[test]
        fn sasl_handshake_response_round_trips(seed in any::<u64>()) {
            round_trip(seed, arb_sasl_handshake_response)?;
        }

        #[test]
        fn sasl_handshake_response_survives_bad_input(seed in any::<u64>(), noise in proptest::collection::vec(any::<u8>(), 0..96)) {
            garbage(seed, &noise, arb_sasl_handshake_response)?;
        }

    }

    #[test]
    fn minimum_sizes_are_those_of_the_defaults() {}
}
