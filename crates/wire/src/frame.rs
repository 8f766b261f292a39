//! Size-prefixed frames and the request/response headers around every message body.
//!
//! On the wire each request and response is `int32 size` followed by `size` bytes: the header,
//! then the body (<https://kafka.apache.org/protocol#protocol_common>). Frame first, then parse:
//! [`frame_body`] / [`split_frame`] wait for a whole frame, and only then are the header and body
//! decoded with complete parsers. A size read off the wire is checked against a caller-given maximum
//! before anything is reserved for it.
//!
//! Header versions follow the body's flexibility (KIP-482): request header v2 and response header
//! v1 (each with a tagged-field section) for flexible versions, v1 and v0 otherwise. The
//! ApiVersions response is the exception: its header is always v0, so that a client can read the
//! broker's answer even when the broker does not support the version it asked for (KIP-511). The
//! request header's client id stays a classic (non-compact) nullable string even in v2.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::{DecodeError, EncodeError};
use crate::messages::{Request, Response};
use crate::primitives::{self, PResult};

pub use crate::messages::ApiKey;

/// Kafka's default `socket.request.max.bytes` (100 MiB), a sane ceiling for one frame.
pub const DEFAULT_MAX_FRAME_SIZE: usize = 100 * 1024 * 1024;

/// Why a size prefix was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The size prefix is negative.
    #[error("negative frame size {0}")]
    NegativeSize(i32),
    /// The size prefix is larger than the caller allows.
    #[error("frame of {size} bytes exceeds the {max} byte limit")]
    TooLarge { size: usize, max: usize },
}

/// Reads the size prefix at the start of `buf`: `Ok(None)` while fewer than 4 bytes are there,
/// the body length otherwise (whether or not the body has fully arrived).
pub fn peek_frame_size(buf: &[u8], max_frame_size: usize) -> Result<Option<usize>, FrameError> {
    let Some(prefix) = buf.first_chunk::<4>() else {
        return Ok(None);
    };
    let size = i32::from_be_bytes(*prefix);
    let size = usize::try_from(size).map_err(|_| FrameError::NegativeSize(size))?;
    if size > max_frame_size {
        return Err(FrameError::TooLarge {
            size,
            max: max_frame_size,
        });
    }
    Ok(Some(size))
}

/// The body of the complete frame at the start of `buf`, or `Ok(None)` if it has not fully
/// arrived. The frame occupies `4 + body.len()` bytes of `buf`.
pub fn frame_body(buf: &[u8], max_frame_size: usize) -> Result<Option<&[u8]>, FrameError> {
    let Some(size) = peek_frame_size(buf, max_frame_size)? else {
        return Ok(None);
    };
    Ok(buf.get(4..4 + size))
}

/// Removes the complete frame at the start of `buf` and returns its body, or `Ok(None)` (leaving
/// `buf` untouched) if it has not fully arrived. Meant for a connection's read buffer.
pub fn split_frame(buf: &mut BytesMut, max_frame_size: usize) -> Result<Option<Bytes>, FrameError> {
    let Some(size) = peek_frame_size(buf, max_frame_size)? else {
        return Ok(None);
    };
    if buf.len() - 4 < size {
        return Ok(None);
    }
    let mut frame = buf.split_to(4 + size);
    Ok(Some(frame.split_off(4).freeze()))
}

/// The request header version for a request of `api_key` at `api_version`: 2 when flexible, else 1.
pub fn request_header_version(api_key: ApiKey, api_version: i16) -> i16 {
    if api_key.is_flexible(api_version) {
        2
    } else {
        1
    }
}

/// The response header version for a response of `api_key` at `api_version`: 1 when flexible,
/// else 0; always 0 for ApiVersions.
pub fn response_header_version(api_key: ApiKey, api_version: i16) -> i16 {
    if api_key != ApiKey::ApiVersions && api_key.is_flexible(api_version) {
        1
    } else {
        0
    }
}

/// A request header, v1 (`api_key`, `api_version`, `correlation_id`, nullable `client_id`) or v2
/// (the same plus tagged fields).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestHeader {
    /// The API key of the request (kept raw: a header may name an API this crate lacks).
    pub api_key: i16,
    /// The version of the body that follows.
    pub api_version: i16,
    /// Echoed by the broker in the response header.
    pub correlation_id: i32,
    /// The client id, or null.
    pub client_id: Option<String>,
    /// Tagged fields (v2+); none are defined by Kafka 4.4, kept as (tag, raw value).
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl RequestHeader {
    /// Appends the header at `header_version` (1 or 2) to `buf`.
    pub fn encode(&self, buf: &mut BytesMut, header_version: i16) -> Result<(), EncodeError> {
        if !(1..=2).contains(&header_version) {
            return Err(EncodeError::UnsupportedVersion {
                api: "RequestHeader",
                version: header_version,
            });
        }
        check_header_tags(
            header_version == 2,
            &self.unknown_tagged_fields,
            "RequestHeader",
            header_version,
        )?;
        buf.put_i16(self.api_key);
        buf.put_i16(self.api_version);
        buf.put_i32(self.correlation_id);
        // ClientId is never compact: its flexibleVersions is "none" in RequestHeader.json.
        primitives::put_str(buf, self.client_id.as_deref(), false)?;
        put_header_tags(
            buf,
            header_version == 2,
            &self.unknown_tagged_fields,
            "RequestHeader",
            header_version,
        )
    }

    /// Decodes a header at `header_version` (1 or 2) from the start of a frame body, returning the
    /// rest of the body.
    pub fn decode(
        input: &Bytes,
        header_version: i16,
    ) -> Result<(RequestHeader, Bytes), DecodeError> {
        if !(1..=2).contains(&header_version) {
            return Err(DecodeError::UnsupportedVersion {
                api: "RequestHeader",
                version: header_version,
            });
        }
        let parse = |i| -> PResult<'_, RequestHeader> {
            let (i, api_key) = primitives::int16(i)?;
            let (i, api_version) = primitives::int16(i)?;
            let (i, correlation_id) = primitives::int32(i)?;
            let (i, client_id) = primitives::nullable_str(false)(i)?;
            let (i, unknown_tagged_fields) = header_tags(i, input, header_version == 2)?;
            let header = RequestHeader {
                api_key,
                api_version,
                correlation_id,
                client_id: client_id.map(str::to_owned),
                unknown_tagged_fields,
            };
            Ok((i, header))
        };
        let (rest, header) = parse(&input[..])?;
        Ok((header, input.slice_ref(rest)))
    }
}

/// A response header, v0 (`correlation_id`) or v1 (the same plus tagged fields).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResponseHeader {
    /// The correlation id of the request this answers.
    pub correlation_id: i32,
    /// Tagged fields (v1+); none are defined by Kafka 4.4, kept as (tag, raw value).
    pub unknown_tagged_fields: Vec<(u32, Bytes)>,
}

impl ResponseHeader {
    /// Appends the header at `header_version` (0 or 1) to `buf`.
    pub fn encode(&self, buf: &mut BytesMut, header_version: i16) -> Result<(), EncodeError> {
        if !(0..=1).contains(&header_version) {
            return Err(EncodeError::UnsupportedVersion {
                api: "ResponseHeader",
                version: header_version,
            });
        }
        check_header_tags(
            header_version == 1,
            &self.unknown_tagged_fields,
            "ResponseHeader",
            header_version,
        )?;
        buf.put_i32(self.correlation_id);
        put_header_tags(
            buf,
            header_version == 1,
            &self.unknown_tagged_fields,
            "ResponseHeader",
            header_version,
        )
    }

    /// Decodes a header at `header_version` (0 or 1) from the start of a frame body, returning the
    /// rest of the body (shared, not copied).
    pub fn decode(
        input: &Bytes,
        header_version: i16,
    ) -> Result<(ResponseHeader, Bytes), DecodeError> {
        if !(0..=1).contains(&header_version) {
            return Err(DecodeError::UnsupportedVersion {
                api: "ResponseHeader",
                version: header_version,
            });
        }
        let (rest, correlation_id) = primitives::int32(&input[..])?;
        let (rest, unknown_tagged_fields) = header_tags(rest, input, header_version == 1)?;
        let header = ResponseHeader {
            correlation_id,
            unknown_tagged_fields,
        };
        Ok((header, input.slice_ref(rest)))
    }
}

/// Outside flexible header versions there is nowhere to put tagged fields: refuse before writing.
fn check_header_tags(
    flexible: bool,
    tags: &[(u32, Bytes)],
    api: &'static str,
    version: i16,
) -> Result<(), EncodeError> {
    if flexible || tags.is_empty() {
        Ok(())
    } else {
        Err(EncodeError::FieldNotAtVersion {
            api,
            version,
            field: "unknown_tagged_fields",
        })
    }
}

fn put_header_tags(
    buf: &mut BytesMut,
    flexible: bool,
    tags: &[(u32, Bytes)],
    api: &'static str,
    version: i16,
) -> Result<(), EncodeError> {
    check_header_tags(flexible, tags, api, version)?;
    if flexible {
        let mut sorted: Vec<(u32, &[u8])> = tags.iter().map(|(t, v)| (*t, &v[..])).collect();
        sorted.sort_by_key(|(t, _)| *t);
        primitives::put_tagged_fields(buf, sorted.into_iter())?;
    }
    Ok(())
}

fn header_tags<'a>(
    input: &'a [u8],
    root: &Bytes,
    flexible: bool,
) -> PResult<'a, Vec<(u32, Bytes)>> {
    if !flexible {
        return Ok((input, Vec::new()));
    }
    let (rest, raw) = primitives::tagged_fields(input)?;
    Ok((
        rest,
        raw.into_iter()
            .map(|(t, v)| (t, root.slice_ref(v)))
            .collect(),
    ))
}

/// The correlation id at the start of a response frame body, before knowing which request it
/// answers (every response header version starts with it).
pub fn peek_correlation_id(body: &[u8]) -> Result<i32, DecodeError> {
    let (_, id) = primitives::int32(body)?;
    Ok(id)
}

/// Appends a whole request frame to `buf`: size, header (the version that `R` at `version` needs)
/// and body. On error `buf` is left as it was, so no half-written frame can be sent.
pub fn encode_request<R: Request>(
    buf: &mut BytesMut,
    request: &R,
    version: i16,
    correlation_id: i32,
    client_id: Option<&str>,
) -> Result<(), EncodeError> {
    let api_key = ApiKey::from_i16(R::API_KEY).ok_or(EncodeError::UnsupportedVersion {
        api: R::NAME,
        version,
    })?;
    let header = RequestHeader {
        api_key: R::API_KEY,
        api_version: version,
        correlation_id,
        client_id: client_id.map(str::to_owned),
        unknown_tagged_fields: Vec::new(),
    };
    let start = buf.len();
    buf.put_i32(0);
    let result = header
        .encode(buf, request_header_version(api_key, version))
        .and_then(|()| request.encode(buf, version));
    let size = buf.len() - start - 4;
    let result = result.and_then(|()| {
        i32::try_from(size).map_err(|_| EncodeError::TooLong {
            what: "frame",
            len: size,
        })
    });
    match result {
        Ok(size) => {
            buf[start..start + 4].copy_from_slice(&size.to_be_bytes());
            Ok(())
        }
        Err(e) => {
            buf.truncate(start);
            Err(e)
        }
    }
}

/// Decodes the header of a response frame body for a request of `api_key` at `api_version`,
/// returning it and the body that follows.
pub fn decode_response_header(
    frame_body: &Bytes,
    api_key: ApiKey,
    api_version: i16,
) -> Result<(ResponseHeader, Bytes), DecodeError> {
    ResponseHeader::decode(frame_body, response_header_version(api_key, api_version))
}

/// Decodes a whole response frame body (header and body) for a request of type `R::Request` sent
/// at `api_version`.
pub fn decode_response<R: Response>(
    frame_body: &Bytes,
    api_version: i16,
) -> Result<(ResponseHeader, R), DecodeError> {
    let api_key = ApiKey::from_i16(R::API_KEY).ok_or(DecodeError::UnsupportedVersion {
        api: R::NAME,
        version: api_version,
    })?;
    let (header, body) = decode_response_header(frame_body, api_key, api_version)?;
    Ok((header, R::decode(&body, api_version)?))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::messages::Message;
    use crate::messages::{
        ApiVersionsRequest, ApiVersionsResponse, HeartbeatRequest, JoinGroupRequest,
    };
    use proptest::prelude::*;

    #[test]
    fn header_versions_follow_flexibility() {
        assert_eq!(request_header_version(ApiKey::JoinGroup, 5), 1);
        assert_eq!(request_header_version(ApiKey::JoinGroup, 6), 2);
        assert_eq!(response_header_version(ApiKey::JoinGroup, 6), 1);
        assert_eq!(response_header_version(ApiKey::Fetch, 11), 0);
        assert_eq!(response_header_version(ApiKey::Fetch, 12), 1);
        assert_eq!(request_header_version(ApiKey::ApiVersions, 3), 2);
        assert_eq!(response_header_version(ApiKey::ApiVersions, 3), 0);
        assert_eq!(response_header_version(ApiKey::ApiVersions, 4), 0);
        assert_eq!(request_header_version(ApiKey::SaslHandshake, 1), 1);
    }

    #[test]
    fn api_keys_match_the_schemas() {
        for key in ApiKey::ALL {
            assert_eq!(ApiKey::from_i16(key.code()), Some(key));
        }
        assert_eq!(ApiKey::JoinGroup.code(), 11);
        assert_eq!(ApiKey::SaslAuthenticate.code(), 36);
        assert_eq!(ApiKey::Fetch.name(), "Fetch");
        assert_eq!(ApiKey::OffsetFetch.min_version(), 1);
        assert_eq!(ApiKey::from_i16(4), None);
    }

    #[test]
    fn request_frame_bytes() {
        // ApiVersions v3 (flexible body, header v2 with a classic client id).
        let req = ApiVersionsRequest {
            client_software_name: "mooring".into(),
            client_software_version: "0.1".into(),
            ..Default::default()
        };
        let mut buf = BytesMut::new();
        encode_request(&mut buf, &req, 3, 7, Some("c1")).unwrap();
        let expected: &[u8] = &[
            0, 0, 0, 26, // size
            0, 18, 0, 3, 0, 0, 0, 7, // api key, version, correlation id
            0, 2, b'c', b'1', // client id, int16 length
            0,    // header tagged fields
            8, b'm', b'o', b'o', b'r', b'i', b'n', b'g', // compact string
            4, b'0', b'.', b'1', 0, // compact string, tagged fields
        ];
        assert_eq!(&buf[..], expected);
        let body = frame_body(&buf, DEFAULT_MAX_FRAME_SIZE).unwrap().unwrap();
        let (header, rest) = RequestHeader::decode(&Bytes::copy_from_slice(body), 2).unwrap();
        assert_eq!(header.client_id.as_deref(), Some("c1"));
        assert_eq!(header.correlation_id, 7);
        assert_eq!(ApiVersionsRequest::decode(&rest, 3).unwrap(), req);
    }

    #[test]
    fn failed_encoding_leaves_no_partial_frame() {
        let mut buf = BytesMut::from(&b"xy"[..]);
        let req = HeartbeatRequest {
            group_instance_id: Some("static".into()),
            ..Default::default()
        };
        // group_instance_id does not exist before v3.
        assert!(encode_request(&mut buf, &req, 2, 1, None).is_err());
        assert_eq!(&buf[..], b"xy");
        assert!(encode_request(&mut buf, &req, 99, 1, None).is_err());
        assert_eq!(&buf[..], b"xy");
    }

    #[test]
    fn api_versions_response_header_is_always_v0() {
        let resp = ApiVersionsResponse {
            error_code: 35,
            ..Default::default()
        };
        let mut body = BytesMut::new();
        ResponseHeader {
            correlation_id: 9,
            ..Default::default()
        }
        .encode(&mut body, 0)
        .unwrap();
        resp.encode(&mut body, 3).unwrap();
        let body = body.freeze();
        assert_eq!(peek_correlation_id(&body).unwrap(), 9);
        let (header, back) = decode_response::<ApiVersionsResponse>(&body, 3).unwrap();
        assert_eq!(header.correlation_id, 9);
        assert_eq!(back, resp);
    }

    #[test]
    fn frames_wait_for_all_their_bytes_and_refuse_absurd_sizes() {
        let mut buf = BytesMut::new();
        assert_eq!(split_frame(&mut buf, 100), Ok(None));
        buf.extend_from_slice(&[0, 0, 0, 3, 1, 2]);
        assert_eq!(split_frame(&mut buf, 100), Ok(None));
        assert_eq!(buf.len(), 6);
        buf.extend_from_slice(&[3, 0, 0]);
        assert_eq!(
            split_frame(&mut buf, 100),
            Ok(Some(Bytes::from_static(&[1, 2, 3])))
        );
        assert_eq!(&buf[..], &[0, 0]);
        assert_eq!(
            frame_body(&[0x7f, 0xff, 0xff, 0xff], 100),
            Err(FrameError::TooLarge {
                size: 0x7fff_ffff,
                max: 100
            })
        );
        assert_eq!(
            frame_body(&[0xff, 0xff, 0xff, 0xfe, 0], 100),
            Err(FrameError::NegativeSize(-2))
        );
        assert_eq!(frame_body(&[0, 0, 0, 0], 100), Ok(Some(&[][..])));
    }

    #[test]
    fn header_tags_only_in_flexible_versions() {
        let header = ResponseHeader {
            correlation_id: 1,
            unknown_tagged_fields: vec![(3, Bytes::from_static(b"x"))],
        };
        let mut buf = BytesMut::new();
        assert!(header.encode(&mut buf, 0).is_err());
        assert!(buf.is_empty(), "nothing written on error");
        header.encode(&mut buf, 1).unwrap();
        let (back, rest) = ResponseHeader::decode(&buf.freeze(), 1).unwrap();
        assert_eq!(back, header);
        assert!(rest.is_empty());
    }

    proptest! {
        #[test]
        fn framing_never_panics(input in proptest::collection::vec(any::<u8>(), 0..64), max in 0usize..128) {
            let _ = frame_body(&input, max);
            let mut buf = BytesMut::from(&input[..]);
            if let Ok(Some(body)) = split_frame(&mut buf, max) {
                prop_assert_eq!(body.len() + 4 + buf.len(), input.len());
            }
            let bytes = Bytes::from(input);
            let _ = RequestHeader::decode(&bytes, 1);
            let _ = RequestHeader::decode(&bytes, 2);
            let _ = decode_response::<JoinGroupRequestResponse>(&bytes, 7);
        }

        #[test]
        fn request_headers_round_trip(
            api_key in any::<i16>(),
            api_version in any::<i16>(),
            correlation_id in any::<i32>(),
            client_id in proptest::option::of(".{0,12}"),
            version in 1i16..=2,
        ) {
            let header = RequestHeader { api_key, api_version, correlation_id, client_id, unknown_tagged_fields: Vec::new() };
            let mut buf = BytesMut::new();
            header.encode(&mut buf, version).unwrap();
            buf.put_u8(42);
            let (back, rest) = RequestHeader::decode(&buf.freeze(), version).unwrap();
            prop_assert_eq!(back, header);
            prop_assert_eq!(&rest[..], &[42]);
        }
    }

    type JoinGroupRequestResponse = <JoinGroupRequest as Request>::Response;
}
