//! Rewriting the broker addresses a client learns, so that every connection it makes goes through
//! the proxy: the brokers of a Metadata response, the coordinator of a FindCoordinator response
//! (v0-3: one; v4+: one per key of a batched look-up, KIP-699), and the node endpoints of a Fetch
//! response (v16+, KIP-951: a new leader's address, sent with NOT_LEADER_OR_FOLLOWER).
//!
//! The response is decoded with `mooring-wire` at the version of the request it answers, the
//! addresses replaced, and header and body encoded again at the same versions: the header keeps
//! its tagged fields when the response is flexible (response header v1), and the body every field
//! and unknown tagged field it had. Every other response is relayed byte for byte.

use bytes::{BufMut, Bytes, BytesMut};
use mooring_wire::frame::{
    decode_response_header, response_header_version, ApiKey, ResponseHeader,
};
use mooring_wire::messages::{FetchResponse, FindCoordinatorResponse, Message, MetadataResponse};
use mooring_wire::primitives::Uuid;
use mooring_wire::{DecodeError, EncodeError};

/// Where the proxy listens for each broker.
pub(crate) trait AddressMap {
    /// The `(host, port)` to advertise in place of broker `node_id`'s `host:port`.
    fn listener_for(
        &mut self,
        node_id: i32,
        host: &str,
        port: i32,
    ) -> Result<(String, i32), String>;

    /// A topic's id and name, as a Metadata response gives them.
    fn topic(&mut self, _id: Uuid, _name: &str) {}
}

/// Why a response that names brokers could not be rewritten. The proxy then closes the
/// connection rather than let the client learn a broker's real address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RewriteError {
    /// The response did not decode at the version of its request.
    #[error("decoding {api} v{version} response: {source}")]
    Decode {
        api: &'static str,
        version: i16,
        #[source]
        source: DecodeError,
    },
    /// The rewritten response did not encode.
    #[error("encoding {api} v{version} response: {source}")]
    Encode {
        api: &'static str,
        version: i16,
        #[source]
        source: EncodeError,
    },
    /// No listener could be opened for a broker.
    #[error("no proxy listener for node {node_id} ({address}): {message}")]
    Listener {
        node_id: i32,
        address: String,
        message: String,
    },
}

/// The rewritten frame (size prefix included) for the response to a request of `api_key` at
/// `version`, or `None` when it names no broker and goes through unchanged.
pub(crate) fn rewrite_response(
    frame: &Bytes,
    api_key: i16,
    version: i16,
    map: &mut dyn AddressMap,
) -> Result<Option<Bytes>, RewriteError> {
    match ApiKey::from_i16(api_key) {
        Some(ApiKey::Metadata) => rewrite::<MetadataResponse>(frame, version, |m| metadata(m, map)),
        Some(ApiKey::FindCoordinator) => {
            rewrite::<FindCoordinatorResponse>(frame, version, |m| coordinators(m, map))
        }
        Some(ApiKey::Fetch) if version >= 16 => {
            rewrite::<FetchResponse>(frame, version, |m| fetch_endpoints(m, map))
        }
        _ => Ok(None),
    }
}

/// Decodes, lets `edit` change the body (it answers whether it changed anything), encodes.
fn rewrite<M: Message>(
    frame: &Bytes,
    version: i16,
    edit: impl FnOnce(&mut M) -> Result<bool, RewriteError>,
) -> Result<Option<Bytes>, RewriteError> {
    let decode_error = |source| RewriteError::Decode {
        api: M::NAME,
        version,
        source,
    };
    let api_key = ApiKey::from_i16(M::API_KEY).ok_or(RewriteError::Decode {
        api: M::NAME,
        version,
        source: DecodeError::UnsupportedVersion {
            api: M::NAME,
            version,
        },
    })?;
    let body = frame.slice(4.min(frame.len())..);
    let (header, rest) = decode_response_header(&body, api_key, version).map_err(decode_error)?;
    let mut message = M::decode(&rest, version).map_err(decode_error)?;
    if !edit(&mut message)? {
        return Ok(None);
    }
    encode_frame(
        &header,
        response_header_version(api_key, version),
        &message,
        version,
    )
    .map(Some)
    .map_err(|source| RewriteError::Encode {
        api: M::NAME,
        version,
        source,
    })
}

/// A whole response frame: size, header at `header_version`, body at `version`.
pub(crate) fn encode_frame<M: Message>(
    header: &ResponseHeader,
    header_version: i16,
    body: &M,
    version: i16,
) -> Result<Bytes, EncodeError> {
    let mut buf = BytesMut::new();
    buf.put_i32(0);
    header.encode(&mut buf, header_version)?;
    body.encode(&mut buf, version)?;
    let size = buf.len() - 4;
    let size = i32::try_from(size).map_err(|_| EncodeError::TooLong {
        what: "frame",
        len: size,
    })?;
    buf[..4].copy_from_slice(&size.to_be_bytes());
    Ok(buf.freeze())
}

fn listener(
    map: &mut dyn AddressMap,
    node_id: i32,
    host: &str,
    port: i32,
) -> Result<(String, i32), RewriteError> {
    map.listener_for(node_id, host, port)
        .map_err(|message| RewriteError::Listener {
            node_id,
            address: format!("{host}:{port}"),
            message,
        })
}

fn metadata(m: &mut MetadataResponse, map: &mut dyn AddressMap) -> Result<bool, RewriteError> {
    for topic in &m.topics {
        if let Some(name) = topic.name.as_deref() {
            if topic.topic_id != Uuid::NIL {
                map.topic(topic.topic_id, name);
            }
        }
    }
    for broker in &mut m.brokers {
        (broker.host, broker.port) = listener(map, broker.node_id, &broker.host, broker.port)?;
    }
    Ok(!m.brokers.is_empty())
}

fn coordinators(
    m: &mut FindCoordinatorResponse,
    map: &mut dyn AddressMap,
) -> Result<bool, RewriteError> {
    let mut changed = false;
    // v0-3: one coordinator at the top level (node -1 with an error code: nothing to rewrite).
    if m.node_id >= 0 && !m.host.is_empty() {
        (m.host, m.port) = listener(map, m.node_id, &m.host, m.port)?;
        changed = true;
    }
    // v4+: one entry per key asked.
    for c in &mut m.coordinators {
        if c.node_id >= 0 && !c.host.is_empty() {
            (c.host, c.port) = listener(map, c.node_id, &c.host, c.port)?;
            changed = true;
        }
    }
    Ok(changed)
}

fn fetch_endpoints(m: &mut FetchResponse, map: &mut dyn AddressMap) -> Result<bool, RewriteError> {
    for e in &mut m.node_endpoints {
        (e.host, e.port) = listener(map, e.node_id, &e.host, e.port)?;
    }
    Ok(!m.node_endpoints.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use std::collections::BTreeMap;

    use mooring_wire::frame::decode_response;
    use mooring_wire::messages::fetch::NodeEndpoint;
    use mooring_wire::messages::find_coordinator::Coordinator;
    use mooring_wire::messages::metadata::{MetadataResponseBroker, MetadataResponseTopic};

    use super::*;

    /// Node n listens at 127.0.0.1:40000+n.
    #[derive(Default)]
    struct Ports {
        topics: BTreeMap<String, Uuid>,
    }

    impl AddressMap for Ports {
        fn listener_for(&mut self, node: i32, _: &str, _: i32) -> Result<(String, i32), String> {
            Ok(("127.0.0.1".into(), 40_000 + node))
        }
        fn topic(&mut self, id: Uuid, name: &str) {
            self.topics.insert(name.into(), id);
        }
    }

    fn frame<M: Message>(message: &M, version: i16, tags: bool) -> Bytes {
        let api_key = ApiKey::from_i16(M::API_KEY).unwrap();
        let header_version = response_header_version(api_key, version);
        let header = ResponseHeader {
            correlation_id: 77,
            unknown_tagged_fields: if tags && header_version == 1 {
                vec![(5, Bytes::from_static(b"hi"))]
            } else {
                Vec::new()
            },
        };
        encode_frame(&header, header_version, message, version).unwrap()
    }

    fn back<M: mooring_wire::messages::Response>(
        frame: &Bytes,
        version: i16,
    ) -> (ResponseHeader, M) {
        let size = i32::from_be_bytes(frame[..4].try_into().unwrap());
        assert_eq!(size as usize, frame.len() - 4, "size prefix");
        decode_response::<M>(&frame.slice(4..), version).unwrap()
    }

    #[test]
    fn metadata_brokers_point_at_the_proxy_at_every_version() {
        for version in MetadataResponse::MIN_VERSION..=MetadataResponse::MAX_VERSION {
            let mut original = MetadataResponse {
                brokers: vec![
                    MetadataResponseBroker {
                        node_id: 1,
                        host: "broker-1.example".into(),
                        port: 9092,
                        rack: (version >= 1).then(|| "r1".into()),
                        ..Default::default()
                    },
                    MetadataResponseBroker {
                        node_id: 2,
                        host: "broker-2.example".into(),
                        port: 9093,
                        ..Default::default()
                    },
                ],
                topics: vec![MetadataResponseTopic {
                    name: Some("orders".into()),
                    topic_id: if version >= 10 {
                        Uuid([7; 16])
                    } else {
                        Uuid::NIL
                    },
                    ..Default::default()
                }],
                ..Default::default()
            };
            if version >= 2 {
                original.cluster_id = Some("c".into());
            }
            let input = frame(&original, version, true);
            let mut ports = Ports::default();
            let out = rewrite_response(&input, 3, version, &mut ports)
                .unwrap()
                .expect("rewritten");
            let (header, rewritten) = back::<MetadataResponse>(&out, version);
            assert_eq!(header.correlation_id, 77);
            let (input_header, _) = back::<MetadataResponse>(&input, version);
            assert_eq!(header, input_header, "v{version}: header and its tags kept");
            let mut expected = original.clone();
            expected.brokers[0].host = "127.0.0.1".into();
            expected.brokers[0].port = 40_001;
            expected.brokers[1].host = "127.0.0.1".into();
            expected.brokers[1].port = 40_002;
            assert_eq!(rewritten, expected, "v{version}");
            assert_eq!(
                ports.topics.contains_key("orders"),
                version >= 10,
                "v{version}: topic ids learnt"
            );
        }
    }

    #[test]
    fn find_coordinator_single_and_batched_point_at_the_proxy() {
        for version in FindCoordinatorResponse::MIN_VERSION..=FindCoordinatorResponse::MAX_VERSION {
            let original = if version < 4 {
                FindCoordinatorResponse {
                    node_id: 3,
                    host: "coord.example".into(),
                    port: 9094,
                    ..Default::default()
                }
            } else {
                let entry = |key: &str, node_id: i32, error_code: i16| Coordinator {
                    key: key.into(),
                    node_id,
                    host: if node_id >= 0 {
                        "coord.example".into()
                    } else {
                        String::new()
                    },
                    port: if node_id >= 0 { 9094 } else { -1 },
                    error_code,
                    error_message: None,
                    ..Default::default()
                };
                FindCoordinatorResponse {
                    coordinators: vec![entry("g1", 3, 0), entry("g2", 4, 0), entry("g3", -1, 15)],
                    ..Default::default()
                }
            };
            let input = frame(&original, version, true);
            let out = rewrite_response(&input, 10, version, &mut Ports::default())
                .unwrap()
                .expect("rewritten");
            let (_, rewritten) = back::<FindCoordinatorResponse>(&out, version);
            let mut expected = original.clone();
            if version < 4 {
                expected.host = "127.0.0.1".into();
                expected.port = 40_003;
            } else {
                for c in expected.coordinators.iter_mut().take(2) {
                    c.host = "127.0.0.1".into();
                    c.port = 40_000 + c.node_id;
                }
            }
            assert_eq!(rewritten, expected, "v{version}");
        }
    }

    #[test]
    fn a_coordinator_error_and_other_responses_pass_unchanged() {
        let not_available = FindCoordinatorResponse {
            error_code: 15,
            node_id: -1,
            host: String::new(),
            port: -1,
            ..Default::default()
        };
        let input = frame(&not_available, 2, false);
        assert_eq!(
            rewrite_response(&input, 10, 2, &mut Ports::default()),
            Ok(None)
        );
        // Fetch before v16 has no endpoints, and is never decoded.
        let garbage = Bytes::from_static(&[0, 0, 0, 2, 1, 2]);
        assert_eq!(
            rewrite_response(&garbage, 1, 15, &mut Ports::default()),
            Ok(None)
        );
        assert_eq!(
            rewrite_response(&garbage, 12, 4, &mut Ports::default()),
            Ok(None)
        );
        // A Metadata response that does not decode is an error, never relayed as it is.
        assert!(matches!(
            rewrite_response(&garbage, 3, 12, &mut Ports::default()),
            Err(RewriteError::Decode {
                api: "MetadataResponse",
                version: 12,
                ..
            })
        ));
    }

    #[test]
    fn fetch_node_endpoints_point_at_the_proxy() {
        for version in 16..=FetchResponse::MAX_VERSION {
            let original = FetchResponse {
                node_endpoints: vec![NodeEndpoint {
                    node_id: 2,
                    host: "leader.example".into(),
                    port: 9095,
                    rack: Some("r2".into()),
                    ..Default::default()
                }],
                ..Default::default()
            };
            let input = frame(&original, version, false);
            let out = rewrite_response(&input, 1, version, &mut Ports::default())
                .unwrap()
                .expect("rewritten");
            let (_, rewritten) = back::<FetchResponse>(&out, version);
            assert_eq!(rewritten.node_endpoints[0].host, "127.0.0.1");
            assert_eq!(rewritten.node_endpoints[0].port, 40_002);
            assert_eq!(rewritten.node_endpoints[0].rack.as_deref(), Some("r2"));
            let empty = frame(&FetchResponse::default(), version, false);
            assert_eq!(
                rewrite_response(&empty, 1, version, &mut Ports::default()),
                Ok(None)
            );
        }
    }
}
