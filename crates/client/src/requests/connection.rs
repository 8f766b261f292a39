//! Requests of a connection and of the cluster: ApiVersions, SASL, Metadata, FindCoordinator.

use bytes::Bytes;
use mooring_wire::messages::find_coordinator::FindCoordinatorRequest;
use mooring_wire::messages::metadata::MetadataRequestTopic;
use mooring_wire::messages::{
    ApiVersionsRequest, MetadataRequest, SaslAuthenticateRequest, SaslHandshakeRequest,
};

/// FindCoordinator key type of a consumer group.
const KEY_TYPE_GROUP: i8 = 0;

/// ApiVersions: the client's software name and version from v3 (KIP-511; the broker checks them
/// against `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`).
pub(crate) fn api_versions(version: i16) -> ApiVersionsRequest {
    let mut request = ApiVersionsRequest::default();
    if version >= 3 {
        request.client_software_name = "mooring".into();
        request.client_software_version = env!("CARGO_PKG_VERSION").into();
    }
    request
}

/// SaslHandshake naming `mechanism` (the same at v0 and v1; v1 frames the tokens as
/// SaslAuthenticate requests).
pub(crate) fn sasl_handshake(_version: i16, mechanism: &str) -> SaslHandshakeRequest {
    SaslHandshakeRequest {
        mechanism: mechanism.to_owned(),
        ..Default::default()
    }
}

/// SaslAuthenticate carrying one message of the mechanism (the same at every version).
pub(crate) fn sasl_authenticate(_version: i16, auth_bytes: Bytes) -> SaslAuthenticateRequest {
    SaslAuthenticateRequest {
        auth_bytes,
        ..Default::default()
    }
}

/// A Metadata request for `topics` (`None`: every topic), never creating topics
/// (`allow_auto_topic_creation` exists from v4; before, the broker's setting decides).
pub fn metadata(version: i16, topics: Option<&[String]>) -> MetadataRequest {
    let topics = match topics {
        Some(names) => Some(
            names
                .iter()
                .map(|name| MetadataRequestTopic {
                    name: Some(name.clone()),
                    ..Default::default()
                })
                .collect(),
        ),
        // v0 has no null: an empty list means "all topics" there.
        None if version == 0 => Some(Vec::new()),
        None => None,
    };
    MetadataRequest {
        topics,
        allow_auto_topic_creation: version < 4,
        ..Default::default()
    }
}

/// FindCoordinator of `group`: batched `coordinator_keys` from v4 (KIP-699), a single `key`
/// before.
pub(crate) fn find_coordinator(version: i16, group: &str) -> FindCoordinatorRequest {
    if version >= 4 {
        FindCoordinatorRequest {
            key_type: KEY_TYPE_GROUP,
            coordinator_keys: vec![group.to_string()],
            ..Default::default()
        }
    } else {
        FindCoordinatorRequest {
            key: group.to_string(),
            key_type: KEY_TYPE_GROUP,
            ..Default::default()
        }
    }
}
