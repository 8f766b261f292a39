//! Replays the committed fuzz corpus (`crates/wire/fuzz/corpus/<target>/*`) through the same
//! decoders the cargo-fuzz targets drive, on stable Rust and in every test run: an input that once
//! found a bug stays a regression test even where no nightly toolchain is installed.

#[path = "../fuzz/decoders.rs"]
mod decoders;

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("corpus entry").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        run(&data);
        count += 1;
    }
    count
}

#[test]
fn corpus_replays_without_panics() {
    for (target, run) in [
        ("response_frame", decoders::response_frame as fn(&[u8])),
        ("record_batch", decoders::record_batch),
        ("subscription", decoders::subscription),
        ("assignment", decoders::assignment),
    ] {
        assert!(replay(target, run) > 0, "the {target} corpus is empty");
    }
}

/// Every request and response with golden bytes (`tests/golden/messages/<api>_<request|response>*`,
/// what `fuzz/seed-corpus.py` seeds from) has a corpus input that decodes as it, so fuzzing it
/// starts from a real message and what grew from it, not only from bytes that other APIs' inputs
/// happen to land on (the target picks the API by `data[0]` modulo the implemented APIs).
#[test]
fn the_response_frame_corpus_holds_real_messages_of_every_api_with_golden_bytes() {
    use bytes::Bytes;
    use mooring_wire::messages::{self, ApiKey, Message};

    fn decodes<M: Message>(body: &Bytes, version: i16) -> bool {
        M::decode(body, version).is_ok()
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/response_frame");
    let mut found = vec![(false, false); ApiKey::ALL.len()];
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("corpus entry").path();
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let [key, version, body @ ..] = &data[..] else {
            continue;
        };
        let index = usize::from(*key) % ApiKey::ALL.len();
        let api = ApiKey::ALL[index];
        let span = (api.max_version() - api.min_version() + 1) as u8;
        let version = api.min_version() + i16::from(*version % span);
        let body = Bytes::copy_from_slice(body);
        macro_rules! check {
            ($($api:ident => $req:ty, $resp:ty;)*) => {
                match api {
                    $(ApiKey::$api => (decodes::<$req>(&body, version), decodes::<$resp>(&body, version)),)*
                }
            };
        }
        let (request, response) = check! {
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
        };
        found[index].0 |= request;
        found[index].1 |= response;
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/messages");
    let seeded: Vec<String> = std::fs::read_dir(&golden)
        .unwrap_or_else(|e| panic!("{}: {e}", golden.display()))
        .map(|e| {
            e.expect("golden entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let has_golden = |api: ApiKey, direction: &str| {
        let stem = snake(api.name());
        seeded
            .iter()
            .any(|f| f.starts_with(&format!("{stem}_{direction}")))
    };
    let mut missing = Vec::new();
    for (api, (request, response)) in ApiKey::ALL.iter().zip(&found) {
        for (direction, decoded) in [("request", request), ("response", response)] {
            if has_golden(*api, direction) && !decoded {
                missing.push(format!("{} {direction}", api.name()));
            }
        }
    }
    assert!(
        ApiKey::ALL.iter().any(|api| has_golden(*api, "response")),
        "no golden bytes under {}",
        golden.display()
    );
    assert!(
        missing.is_empty(),
        "no decodable corpus input for {missing:?}"
    );
}

/// `ConsumerGroupHeartbeat` → `consumer_group_heartbeat`, as the golden files are named.
fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
