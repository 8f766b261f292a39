// The decoders the fuzz targets drive, shared with the stable test that replays the committed
// corpus (crates/wire/tests/fuzz_corpus.rs), so both exercise exactly the same code.
// Each returns normally on any input; a panic or abort is the bug being hunted.
#![allow(dead_code)] // each fuzz target uses one of these functions

use bytes::Bytes;
use mooring_wire::consumer_protocol::{Assignment, Subscription};
use mooring_wire::messages::{self, ApiKey, Message};
use mooring_wire::records::{BatchItem, BatchReader};

/// `data[0]` picks an API (modulo the implemented ones), `data[1]` a version inside its range;
/// the rest is a response body, decoded and, if that succeeds, re-encoded and decoded again.
pub fn response_frame(data: &[u8]) {
    let [key, version, body @ ..] = data else {
        return;
    };
    let api = ApiKey::ALL[usize::from(*key) % ApiKey::ALL.len()];
    let span = (api.max_version() - api.min_version() + 1) as u8;
    let version = api.min_version() + i16::from(*version % span);
    let body = Bytes::copy_from_slice(body);
    macro_rules! both {
        ($($api:ident => $req:ty, $resp:ty;)*) => {
            match api {
                $(ApiKey::$api => {
                    round_trip::<$req>(&body, version);
                    round_trip::<$resp>(&body, version);
                })*
            }
        };
    }
    both! {
        Produce => messages::ProduceRequest, messages::ProduceResponse;
        Fetch => messages::FetchRequest, messages::FetchResponse;
        ListOffsets => messages::ListOffsetsRequest, messages::ListOffsetsResponse;
        Metadata => messages::MetadataRequest, messages::MetadataResponse;
        OffsetCommit => messages::OffsetCommitRequest, messages::OffsetCommitResponse;
        OffsetFetch => messages::OffsetFetchRequest, messages::OffsetFetchResponse;
        FindCoordinator => messages::FindCoordinatorRequest, messages::FindCoordinatorResponse;
        JoinGroup => messages::JoinGroupRequest, messages::JoinGroupResponse;
        Heartbeat => messages::HeartbeatRequest, messages::HeartbeatResponse;
        LeaveGroup => messages::LeaveGroupRequest, messages::LeaveGroupResponse;
        SyncGroup => messages::SyncGroupRequest, messages::SyncGroupResponse;
        DescribeGroups => messages::DescribeGroupsRequest, messages::DescribeGroupsResponse;
        ListGroups => messages::ListGroupsRequest, messages::ListGroupsResponse;
        SaslHandshake => messages::SaslHandshakeRequest, messages::SaslHandshakeResponse;
        ApiVersions => messages::ApiVersionsRequest, messages::ApiVersionsResponse;
        CreateTopics => messages::CreateTopicsRequest, messages::CreateTopicsResponse;
        DeleteTopics => messages::DeleteTopicsRequest, messages::DeleteTopicsResponse;
        DescribeConfigs => messages::DescribeConfigsRequest, messages::DescribeConfigsResponse;
        GetTelemetrySubscriptions => messages::GetTelemetrySubscriptionsRequest, messages::GetTelemetrySubscriptionsResponse;
        PushTelemetry => messages::PushTelemetryRequest, messages::PushTelemetryResponse;
        SaslAuthenticate => messages::SaslAuthenticateRequest, messages::SaslAuthenticateResponse;
        ConsumerGroupHeartbeat => messages::ConsumerGroupHeartbeatRequest, messages::ConsumerGroupHeartbeatResponse;
        ConsumerGroupDescribe => messages::ConsumerGroupDescribeRequest, messages::ConsumerGroupDescribeResponse;
        IncrementalAlterConfigs => messages::IncrementalAlterConfigsRequest, messages::IncrementalAlterConfigsResponse;
        ShareGroupHeartbeat => messages::ShareGroupHeartbeatRequest, messages::ShareGroupHeartbeatResponse;
        ShareGroupDescribe => messages::ShareGroupDescribeRequest, messages::ShareGroupDescribeResponse;
        ShareFetch => messages::ShareFetchRequest, messages::ShareFetchResponse;
        ShareAcknowledge => messages::ShareAcknowledgeRequest, messages::ShareAcknowledgeResponse;
        DescribeShareGroupOffsets => messages::DescribeShareGroupOffsetsRequest, messages::DescribeShareGroupOffsetsResponse;
    }
}

/// Decodes; whatever decodes must encode again and decode to the same value.
fn round_trip<M: Message>(body: &Bytes, version: i16) {
    let Ok(msg) = M::decode(body, version) else {
        return;
    };
    let mut buf = bytes::BytesMut::new();
    msg.encode(&mut buf, version)
        .expect("a decoded message encodes at the same version");
    let again = M::decode(&buf.freeze(), version).expect("re-encoded bytes decode");
    assert_eq!(msg, again, "{} v{version} round trip", M::NAME);
}

/// Reads every batch and every record of a Fetch `records` field.
pub fn record_batch(data: &[u8]) {
    for item in BatchReader::new(Bytes::copy_from_slice(data)) {
        match item {
            Ok(BatchItem::Batch(raw)) => {
                let _ = raw.decode();
                let _ = raw.control_record();
            }
            Ok(BatchItem::Incomplete { .. }) | Err(_) => break,
        }
    }
}

/// Consumer-protocol Subscription bytes (JoinGroup protocol metadata).
pub fn subscription(data: &[u8]) {
    let _ = Subscription::decode(&Bytes::copy_from_slice(data));
}

/// Consumer-protocol Assignment bytes (SyncGroup assignment).
pub fn assignment(data: &[u8]) {
    let _ = Assignment::decode(&Bytes::copy_from_slice(data));
}
