//! Golden bytes written by Kafka's own Java classes (kafka-clients 4.4.0's generated `*Data`
//! message classes, see `tests/golden/java/GenMessages.java`): every file decodes, re-encodes to
//! the same bytes, and the values the Java program set are the values we read.
//!
//! The files are committed; this test needs no Java.

use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use mooring_wire::messages::*;
use mooring_wire::primitives::Uuid;

const TOPIC_A: Uuid = Uuid([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
const TOPIC_B: Uuid = Uuid([
    0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
]);

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/messages")
}

struct Golden {
    message: String,
    version: i16,
    bytes: Bytes,
}

fn read(path: &Path) -> Golden {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut message = None;
    let mut version = None;
    let mut length = None;
    let mut hex = String::new();
    for line in text.lines() {
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim();
            if let Some(m) = comment.strip_prefix("message:") {
                message = Some(m.trim().to_string());
            } else if let Some(v) = comment.strip_prefix("version:") {
                version = v.trim().parse().ok();
            } else if let Some(l) = comment.strip_prefix("length:") {
                length = l.trim().parse::<usize>().ok();
            }
        } else {
            hex.extend(line.chars().filter(|c| !c.is_whitespace()));
        }
    }
    assert!(
        hex.len() % 2 == 0,
        "{}: odd number of hex digits",
        path.display()
    );
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
        .collect();
    assert_eq!(
        Some(bytes.len()),
        length,
        "{}: length header",
        path.display()
    );
    Golden {
        message: message.expect("a '# message:' line"),
        version: version.expect("a '# version:' line"),
        bytes: Bytes::from(bytes),
    }
}

/// Decodes, re-encodes and compares; returns the decoded value for field checks.
fn round_trip<M: Message>(g: &Golden) -> M {
    assert_eq!(g.message, M::NAME);
    let decoded = M::decode(&g.bytes, g.version)
        .unwrap_or_else(|e| panic!("{} v{}: decode failed: {e}", g.message, g.version));
    let mut buf = BytesMut::new();
    decoded
        .encode(&mut buf, g.version)
        .unwrap_or_else(|e| panic!("{} v{}: encode failed: {e}", g.message, g.version));
    assert_eq!(
        &buf[..],
        &g.bytes[..],
        "{} v{}: re-encoded bytes differ from Java's",
        g.message,
        g.version
    );
    decoded
}

fn load<M: Message>(file: &str) -> (M, i16) {
    let g = read(&dir().join(format!("{file}.hex")));
    (round_trip::<M>(&g), g.version)
}

#[test]
fn every_golden_file_round_trips() {
    let mut seen = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir())
        .expect("golden dir")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "hex"))
        .collect();
    entries.sort();
    for path in entries {
        let g = read(&path);
        macro_rules! by_name {
            ($($ty:ty),* $(,)?) => {
                match g.message.as_str() {
                    $(name if name == <$ty>::NAME => {
                        round_trip::<$ty>(&g);
                    })*
                    other => panic!("{}: unexpected message {other}", path.display()),
                }
            };
        }
        by_name!(
            ApiVersionsRequest,
            ApiVersionsResponse,
            MetadataRequest,
            MetadataResponse,
            FindCoordinatorRequest,
            FindCoordinatorResponse,
            JoinGroupRequest,
            JoinGroupResponse,
            SyncGroupRequest,
            SyncGroupResponse,
            HeartbeatRequest,
            HeartbeatResponse,
            LeaveGroupRequest,
            LeaveGroupResponse,
            OffsetCommitRequest,
            OffsetCommitResponse,
            OffsetFetchRequest,
            OffsetFetchResponse,
            ListOffsetsRequest,
            ListOffsetsResponse,
            FetchRequest,
            FetchResponse,
            DescribeGroupsRequest,
            DescribeGroupsResponse,
            ListGroupsRequest,
            ListGroupsResponse,
            SaslHandshakeRequest,
            SaslHandshakeResponse,
            SaslAuthenticateRequest,
            SaslAuthenticateResponse,
            ProduceRequest,
            ProduceResponse,
            CreateTopicsRequest,
            CreateTopicsResponse,
            DeleteTopicsRequest,
            DeleteTopicsResponse,
            ConsumerGroupHeartbeatRequest,
            ConsumerGroupHeartbeatResponse,
            ConsumerGroupDescribeRequest,
            ConsumerGroupDescribeResponse,
        );
        seen += 1;
    }
    assert!(seen >= 84, "only {seen} golden files");
}

#[test]
fn api_versions() {
    let (r, _) = load::<ApiVersionsRequest>("api_versions_request_v0");
    assert_eq!(r, ApiVersionsRequest::default());
    for file in ["api_versions_request_v3", "api_versions_request_v4"] {
        let (r, _) = load::<ApiVersionsRequest>(file);
        assert_eq!(r.client_software_name, "mooring");
        assert_eq!(r.client_software_version, "0.1.0");
    }
    let (r, _) = load::<ApiVersionsResponse>("api_versions_response_v0");
    assert_eq!(r.api_keys.len(), 2);
    assert_eq!(
        (
            r.api_keys[0].api_key,
            r.api_keys[0].min_version,
            r.api_keys[0].max_version
        ),
        (1, 4, 18)
    );
    assert_eq!(r.throttle_time_ms, 0);
    let (r, _) = load::<ApiVersionsResponse>("api_versions_response_v3");
    assert_eq!(r.throttle_time_ms, 5);
    assert_eq!((r.api_keys[1].api_key, r.api_keys[1].max_version), (11, 9));
    // Known tagged fields 0, 1 and 2, an unknown one (7) kept and written back in tag order.
    assert_eq!(r.supported_features.len(), 1);
    assert_eq!(r.supported_features[0].name, "metadata.version");
    assert_eq!(
        (
            r.supported_features[0].min_version,
            r.supported_features[0].max_version
        ),
        (7, 27)
    );
    assert_eq!(r.finalized_features_epoch, 42);
    assert_eq!(r.finalized_features[0].min_version_level, 27);
    assert!(!r.zk_migration_ready);
    assert_eq!(
        r.unknown_tagged_fields,
        vec![(7, Bytes::from_static(&[0xca, 0xfe]))]
    );
}

#[test]
fn metadata() {
    let (r, _) = load::<MetadataRequest>("metadata_request_v1");
    let names: Vec<_> = r
        .topics
        .as_ref()
        .expect("topics")
        .iter()
        .map(|t| t.name.clone())
        .collect();
    assert_eq!(
        names,
        [Some("orders".to_string()), Some("payments".to_string())]
    );
    assert!(
        r.allow_auto_topic_creation,
        "v1 has no such field: the default (true) stays"
    );
    let (r, _) = load::<MetadataRequest>("metadata_request_v4");
    assert!(!r.allow_auto_topic_creation);
    let (r, _) = load::<MetadataRequest>("metadata_request_v12");
    let topics = r.topics.expect("topics");
    assert_eq!(topics[1].topic_id, TOPIC_B);
    assert_eq!(topics[1].name, None);
    assert!(r.include_topic_authorized_operations);
    let (r, _) = load::<MetadataRequest>("metadata_request_all_topics_v9");
    assert_eq!(r.topics, None);

    let (r, _) = load::<MetadataResponse>("metadata_response_v7");
    assert_eq!(r.brokers[0].rack.as_deref(), Some("rack-a"));
    assert_eq!(r.brokers[1].rack, None);
    assert_eq!(
        (r.brokers[1].host.as_str(), r.brokers[1].port),
        ("broker-2", 9093)
    );
    assert_eq!(r.cluster_id.as_deref(), Some("cluster-xyz"));
    assert_eq!(r.controller_id, 1);
    let p0 = &r.topics[0].partitions[0];
    assert_eq!((p0.leader_id, p0.leader_epoch), (1, 5));
    assert_eq!(
        (p0.replica_nodes.as_slice(), p0.isr_nodes.as_slice()),
        (&[1, 2][..], &[1][..])
    );
    assert_eq!(p0.offline_replicas, [2]);
    assert_eq!(r.topics[0].partitions[1].error_code, 5);
    assert_eq!(
        (r.topics[1].error_code, r.topics[1].name.as_deref()),
        (3, Some("missing"))
    );
    let (r, _) = load::<MetadataResponse>("metadata_response_v12");
    assert_eq!(r.topics[0].topic_id, TOPIC_A);
    assert_eq!(r.topics[0].topic_authorized_operations, 0x0fe8);
    assert_eq!(
        r.topics[1].topic_authorized_operations,
        i32::MIN,
        "schema default"
    );
    let (r, _) = load::<MetadataResponse>("metadata_response_v1");
    assert_eq!(r.cluster_id, None);
    assert_eq!(r.topics[0].partitions[0].leader_epoch, -1);
}

#[test]
fn find_coordinator() {
    let (r, _) = load::<FindCoordinatorRequest>("find_coordinator_request_v0");
    assert_eq!(r.key, "group-1");
    let (r, _) = load::<FindCoordinatorRequest>("find_coordinator_request_v6");
    assert_eq!(r.key, "");
    assert_eq!(r.coordinator_keys, ["group-1", "group-2"]);
    let (r, _) = load::<FindCoordinatorResponse>("find_coordinator_response_v2");
    assert_eq!(
        (r.node_id, r.host.as_str(), r.port, r.error_message.clone()),
        (3, "broker-3", 9094, None)
    );
    assert_eq!(r.throttle_time_ms, 1);
    let (r, _) = load::<FindCoordinatorResponse>("find_coordinator_response_v4");
    assert_eq!(r.coordinators.len(), 2);
    assert_eq!(
        (r.coordinators[0].key.as_str(), r.coordinators[0].node_id),
        ("group-1", 3)
    );
    assert_eq!(r.coordinators[1].error_code, 15);
    assert_eq!(
        r.coordinators[1].error_message.as_deref(),
        Some("The coordinator is not available.")
    );
}

#[test]
fn join_group() {
    for (file, static_member, reason) in [
        ("join_group_request_v2", false, false),
        ("join_group_request_v5", true, false),
        ("join_group_request_v9", true, true),
    ] {
        let (r, v) = load::<JoinGroupRequest>(file);
        assert_eq!(r.group_id, "group-1");
        assert_eq!(
            (r.session_timeout_ms, r.rebalance_timeout_ms),
            (45000, 300000)
        );
        assert_eq!(r.member_id, "");
        assert_eq!(r.protocol_type, "consumer");
        assert_eq!(
            r.group_instance_id.as_deref(),
            static_member.then_some("instance-1"),
            "v{v}"
        );
        assert_eq!(
            r.reason.as_deref(),
            reason.then_some("rebalance after metadata change")
        );
        assert_eq!(r.protocols[0].name, "cooperative-sticky");
        assert_eq!(&r.protocols[0].metadata[..2], &[0, 3]);
        assert_eq!(
            (r.protocols[1].name.as_str(), r.protocols[1].metadata.len()),
            ("range", 0)
        );
    }
    for file in [
        "join_group_response_v2",
        "join_group_response_v5",
        "join_group_response_v9",
    ] {
        let (r, v) = load::<JoinGroupResponse>(file);
        assert_eq!(
            (r.generation_id, r.leader.as_str(), r.member_id.as_str()),
            (7, "member-a", "member-a")
        );
        assert_eq!(r.protocol_name.as_deref(), Some("range"));
        assert_eq!(r.protocol_type.as_deref(), (v >= 7).then_some("consumer"));
        assert_eq!(
            r.members[0].group_instance_id.as_deref(),
            (v >= 5).then_some("instance-1")
        );
        assert_eq!(&r.members[0].metadata[..], &[0, 1, 2]);
        assert_eq!(r.members[1].member_id, "member-b");
    }
    let (r, _) = load::<JoinGroupResponse>("join_group_response_member_id_required_v9");
    assert_eq!(r.error_code, 79);
    assert_eq!(
        mooring_wire::error_code::ErrorCode::from(r.error_code).name(),
        "MEMBER_ID_REQUIRED"
    );
    assert_eq!(
        (r.protocol_type.clone(), r.protocol_name.clone()),
        (None, None)
    );
    assert_eq!(r.member_id, "consumer-1-abc");
}

#[test]
fn sync_group_and_heartbeat() {
    let (r, _) = load::<SyncGroupRequest>("sync_group_request_v5");
    assert_eq!(r.group_instance_id.as_deref(), Some("instance-1"));
    assert_eq!(
        (r.protocol_type.as_deref(), r.protocol_name.as_deref()),
        (Some("consumer"), Some("range"))
    );
    assert_eq!(r.assignments[0].member_id, "member-a");
    assert_eq!(&r.assignments[0].assignment[..], &[0, 3, 0, 0, 0, 0]);
    let (r, _) = load::<SyncGroupRequest>("sync_group_request_v1");
    assert_eq!(r.group_instance_id, None);
    let (r, _) = load::<SyncGroupResponse>("sync_group_response_v5");
    assert_eq!(r.throttle_time_ms, 2);
    assert_eq!(
        (r.protocol_type.as_deref(), r.protocol_name.as_deref()),
        (Some("consumer"), None)
    );
    assert_eq!(r.assignment.len(), 26);
    let (r, _) = load::<SyncGroupResponse>("sync_group_response_v0");
    assert_eq!(r.throttle_time_ms, 0);

    let (r, _) = load::<HeartbeatRequest>("heartbeat_request_v3");
    assert_eq!(
        (r.group_id.as_str(), r.generation_id, r.member_id.as_str()),
        ("group-1", 7, "member-a")
    );
    assert_eq!(r.group_instance_id.as_deref(), Some("instance-1"));
    let (r, _) = load::<HeartbeatRequest>("heartbeat_request_v4");
    assert_eq!(r.group_instance_id, None);
    let (r, _) = load::<HeartbeatResponse>("heartbeat_response_v4");
    assert_eq!((r.throttle_time_ms, r.error_code), (100, 27));
    assert_eq!(
        mooring_wire::error_code::ErrorCode::from(r.error_code).name(),
        "REBALANCE_IN_PROGRESS"
    );
}

#[test]
fn leave_group() {
    let (r, _) = load::<LeaveGroupRequest>("leave_group_request_v2");
    assert_eq!(r.member_id, "member-a");
    assert!(r.members.is_empty());
    let (r, _) = load::<LeaveGroupRequest>("leave_group_request_v5");
    assert_eq!(r.member_id, "");
    assert_eq!(r.members.len(), 2);
    assert_eq!(
        r.members[0].reason.as_deref(),
        Some("the consumer is being closed")
    );
    assert_eq!(
        r.members[1].group_instance_id.as_deref(),
        Some("instance-2")
    );
    let (r, _) = load::<LeaveGroupRequest>("leave_group_request_v3");
    assert_eq!(r.members[0].reason, None);
    let (r, _) = load::<LeaveGroupResponse>("leave_group_response_v5");
    assert_eq!(r.members[1].group_instance_id, None);
    assert_eq!(r.members[1].error_code, 25);
}

#[test]
fn offset_commit() {
    for file in [
        "offset_commit_request_v2",
        "offset_commit_request_v7",
        "offset_commit_request_v9",
        "offset_commit_request_v10",
    ] {
        let (r, v) = load::<OffsetCommitRequest>(file);
        assert_eq!(
            (r.generation_id_or_member_epoch, r.member_id.as_str()),
            (7, "member-a")
        );
        assert_eq!(
            r.group_instance_id.as_deref(),
            (v >= 7).then_some("instance-1")
        );
        assert_eq!(r.retention_time_ms, -1);
        let t = &r.topics[0];
        if v >= 10 {
            assert_eq!((t.topic_id, t.name.as_str()), (TOPIC_A, ""));
        } else {
            assert_eq!(t.name, "orders");
        }
        assert_eq!(
            (
                t.partitions[0].committed_offset,
                t.partitions[0].committed_metadata.clone()
            ),
            (1234, None)
        );
        assert_eq!(
            t.partitions[0].committed_leader_epoch,
            if v >= 6 { 4 } else { -1 }
        );
        assert_eq!(t.partitions[1].committed_metadata.as_deref(), Some("meta"));
    }
    let (r, _) = load::<OffsetCommitResponse>("offset_commit_response_v8");
    assert_eq!(r.topics[0].partitions[1].error_code, 22);
    let (r, _) = load::<OffsetCommitResponse>("offset_commit_response_v10");
    assert_eq!(r.topics[0].topic_id, TOPIC_A);
}

#[test]
fn offset_fetch() {
    let (r, _) = load::<OffsetFetchRequest>("offset_fetch_request_v7");
    assert!(r.require_stable);
    assert_eq!(
        r.topics.as_ref().expect("topics")[0].partition_indexes,
        [0, 1, 2]
    );
    let (r, _) = load::<OffsetFetchRequest>("offset_fetch_request_all_topics_v7");
    assert_eq!(r.topics, None);
    for file in [
        "offset_fetch_request_v8",
        "offset_fetch_request_v9",
        "offset_fetch_request_v10",
    ] {
        let (r, v) = load::<OffsetFetchRequest>(file);
        assert!(r.require_stable);
        assert_eq!(r.groups.len(), 2);
        let g = &r.groups[0];
        assert_eq!(g.member_id.as_deref(), (v >= 9).then_some("member-a"));
        assert_eq!(g.member_epoch, if v >= 9 { 3 } else { -1 });
        let t = &g.topics.as_ref().expect("topics")[0];
        assert_eq!(t.partition_indexes, [0, 1]);
        if v >= 10 {
            assert_eq!(t.topic_id, TOPIC_A);
        } else {
            assert_eq!(t.name, "orders");
        }
        assert_eq!(r.groups[1].topics, None, "all topics of group-2");
    }
    let (r, _) = load::<OffsetFetchResponse>("offset_fetch_response_v7");
    let p = &r.topics[0].partitions;
    assert_eq!(
        (
            p[0].committed_offset,
            p[0].committed_leader_epoch,
            p[0].metadata.as_deref()
        ),
        (1234, 4, Some(""))
    );
    assert_eq!((p[1].committed_offset, p[1].metadata.clone()), (-1, None));
    let (r, _) = load::<OffsetFetchResponse>("offset_fetch_response_v1");
    assert_eq!(r.topics[0].partitions[0].committed_leader_epoch, -1);
    let (r, _) = load::<OffsetFetchResponse>("offset_fetch_response_v10");
    assert_eq!(r.groups[0].topics[0].topic_id, TOPIC_A);
    assert_eq!(r.groups[0].topics[0].partitions[0].committed_offset, 1234);
    assert_eq!(r.groups[1].error_code, 16);
}

#[test]
fn list_offsets() {
    let (r, _) = load::<ListOffsetsRequest>("list_offsets_request_v10");
    assert_eq!(
        (r.replica_id, r.isolation_level, r.timeout_ms),
        (-1, 1, 30000)
    );
    let p = &r.topics[0].partitions;
    assert_eq!((p[0].timestamp, p[0].current_leader_epoch), (-1, 5));
    assert_eq!((p[1].timestamp, p[1].current_leader_epoch), (-2, -1));
    let (r, _) = load::<ListOffsetsRequest>("list_offsets_request_v1");
    assert_eq!(r.isolation_level, 0);
    let (r, _) = load::<ListOffsetsResponse>("list_offsets_response_v5");
    let p = &r.topics[0].partitions;
    assert_eq!((p[0].offset, p[0].leader_epoch), (4242, 5));
    assert_eq!((p[1].error_code, p[1].offset, p[1].timestamp), (6, -1, -1));
}

#[test]
fn fetch() {
    let (r, _) = load::<FetchRequest>("fetch_request_v4");
    assert_eq!(
        (
            r.replica_id,
            r.max_wait_ms,
            r.min_bytes,
            r.max_bytes,
            r.isolation_level
        ),
        (-1, 500, 1, 52428800, 1)
    );
    assert_eq!(r.topics[0].topic, "orders");
    assert_eq!(r.topics[0].partitions[0].log_start_offset, -1);
    let (r, _) = load::<FetchRequest>("fetch_request_v11");
    assert_eq!(r.rack_id, "rack-a");
    assert_eq!((r.session_id, r.session_epoch), (0, -1));
    assert_eq!(r.forgotten_topics_data[0].topic, "payments");
    assert_eq!(r.forgotten_topics_data[0].partitions, [3, 4]);
    let (r, _) = load::<FetchRequest>("fetch_request_v13");
    assert_eq!((r.session_id, r.session_epoch), (77, 3));
    assert_eq!(r.topics[0].topic_id, TOPIC_A);
    assert_eq!(r.topics[0].topic, "");
    assert_eq!(r.forgotten_topics_data[0].topic_id, TOPIC_B);
    assert_eq!(r.topics[0].partitions[0].last_fetched_epoch, 4);
    assert_eq!(r.cluster_id, None);
    let (r, _) = load::<FetchRequest>("fetch_request_v15");
    assert_eq!(r.replica_state.replica_id, -1);
    let (r, _) = load::<FetchRequest>("fetch_request_v18");
    assert_eq!(
        r.cluster_id.as_deref(),
        Some("cluster-xyz"),
        "tagged field 0"
    );
    let p0 = &r.topics[0].partitions[0];
    assert_eq!((p0.replica_directory_id, p0.high_watermark), (TOPIC_B, 90));
    assert_eq!(
        r.topics[0].partitions[1].high_watermark,
        i64::MAX,
        "tagged default"
    );

    let records = Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 3, 1, 2, 3]);
    for file in [
        "fetch_response_v4",
        "fetch_response_v11",
        "fetch_response_v13",
        "fetch_response_v16",
    ] {
        let (r, v) = load::<FetchResponse>(file);
        assert_eq!(r.session_id, if v >= 7 { 77 } else { 0 });
        let t = &r.responses[0];
        if v >= 13 {
            assert_eq!(t.topic_id, TOPIC_A);
        } else {
            assert_eq!(t.topic, "orders");
        }
        let p0 = &t.partitions[0];
        assert_eq!((p0.high_watermark, p0.last_stable_offset), (200, 150));
        let aborted = p0
            .aborted_transactions
            .as_ref()
            .expect("aborted transactions");
        assert_eq!(
            (aborted[0].producer_id, aborted[0].first_offset),
            (9001, 120)
        );
        assert_eq!(p0.records.as_ref(), Some(&records));
        assert_eq!(p0.preferred_read_replica, -1);
        let p1 = &t.partitions[1];
        assert_eq!(
            (
                p1.error_code,
                p1.records.clone(),
                p1.aborted_transactions.clone()
            ),
            (6, None, None)
        );
        assert_eq!(p1.preferred_read_replica, if v >= 11 { 2 } else { -1 });
        if v >= 12 {
            assert_eq!(
                (p1.current_leader.leader_id, p1.current_leader.leader_epoch),
                (2, 6)
            );
            assert_eq!(
                (p1.diverging_epoch.epoch, p1.diverging_epoch.end_offset),
                (3, 88)
            );
            assert_eq!(p1.snapshot_id.end_offset, -1);
        }
        if v >= 16 {
            let n = &r.node_endpoints[0];
            assert_eq!(
                (n.node_id, n.host.as_str(), n.port, n.rack.clone()),
                (2, "broker-2", 9093, None)
            );
        }
    }
}

#[test]
fn records_are_shared_not_copied() {
    let g = read(&dir().join("fetch_response_v16.hex"));
    let r = FetchResponse::decode(&g.bytes, g.version).expect("decode");
    let records = r.responses[0].partitions[0]
        .records
        .as_ref()
        .expect("records");
    let start = g.bytes.as_ptr() as usize;
    let at = records.as_ptr() as usize;
    assert!(
        at >= start && at + records.len() <= start + g.bytes.len(),
        "records slice the input"
    );
}

#[test]
fn consumer_group_heartbeat() {
    use consumer_group_heartbeat::TopicPartitions;
    for file in [
        "consumer_group_heartbeat_request_v0",
        "consumer_group_heartbeat_request_v1",
    ] {
        let (r, v) = load::<ConsumerGroupHeartbeatRequest>(file);
        assert_eq!(
            (r.group_id.as_str(), r.member_id.as_str()),
            ("group-1", "member-a")
        );
        assert_eq!(r.member_epoch, 0, "a join");
        assert_eq!(r.instance_id.as_deref(), Some("instance-1"));
        assert_eq!(r.rack_id.as_deref(), Some("rack-a"));
        assert_eq!(r.rebalance_timeout_ms, 300000);
        assert_eq!(
            r.subscribed_topic_names.as_deref(),
            Some(&["orders".to_string(), "payments".to_string()][..])
        );
        let regex = (v >= 1).then(|| "orders-.*".to_string());
        assert_eq!(r.subscribed_topic_regex, regex, "v{v}");
        assert_eq!(r.server_assignor.as_deref(), Some("uniform"));
        assert_eq!(r.topic_partitions, Some(Vec::new()), "empty, not null");
    }
    // Steady state: every "unchanged" field null, the owned partitions by topic id.
    let (r, _) = load::<ConsumerGroupHeartbeatRequest>("consumer_group_heartbeat_request_ack_v1");
    assert_eq!(r.member_epoch, 7);
    assert_eq!((r.instance_id.clone(), r.rack_id.clone()), (None, None));
    assert_eq!(r.rebalance_timeout_ms, -1, "schema default: unchanged");
    assert_eq!(
        (r.subscribed_topic_names.clone(), r.server_assignor.clone()),
        (None, None)
    );
    let owned = r.topic_partitions.expect("owned partitions");
    assert_eq!(
        owned,
        [
            TopicPartitions {
                topic_id: TOPIC_A,
                partitions: vec![0, 2],
                ..Default::default()
            },
            TopicPartitions {
                topic_id: TOPIC_B,
                partitions: vec![],
                ..Default::default()
            },
        ]
    );
    let (r, _) = load::<ConsumerGroupHeartbeatRequest>("consumer_group_heartbeat_request_leave_v1");
    assert_eq!((r.member_epoch, r.topic_partitions), (-1, None));

    for file in [
        "consumer_group_heartbeat_response_v0",
        "consumer_group_heartbeat_response_v1",
    ] {
        let (r, v) = load::<ConsumerGroupHeartbeatResponse>(file);
        assert_eq!((r.error_code, r.error_message.clone()), (0, None));
        assert_eq!(r.member_id.as_deref(), Some("member-a"));
        assert_eq!((r.member_epoch, r.heartbeat_interval_ms), (7, 5000));
        let assignment = r.assignment.expect("an assignment");
        let by_topic: Vec<_> = assignment
            .topic_partitions
            .iter()
            .map(|t| (t.topic_id, t.partitions.clone()))
            .collect();
        assert_eq!(by_topic, [(TOPIC_A, vec![0, 2]), (TOPIC_B, vec![1])]);
        let unknown = if v >= 1 {
            vec![(5, Bytes::from_static(&[0xca, 0xfe]))]
        } else {
            vec![]
        };
        assert_eq!(r.unknown_tagged_fields, unknown, "v{v}");
    }
    let (r, _) =
        load::<ConsumerGroupHeartbeatResponse>("consumer_group_heartbeat_response_fenced_v1");
    assert_eq!((r.throttle_time_ms, r.error_code), (3, 110));
    assert_eq!(
        r.error_message.as_deref(),
        Some("The member epoch is fenced.")
    );
    assert_eq!(
        (r.member_id, r.member_epoch, r.assignment),
        (None, -1, None)
    );
}

#[test]
fn consumer_group_describe() {
    for file in [
        "consumer_group_describe_request_v0",
        "consumer_group_describe_request_v1",
    ] {
        let (r, _) = load::<ConsumerGroupDescribeRequest>(file);
        assert_eq!(r.group_ids, ["group-1", "group-2"]);
        assert!(r.include_authorized_operations);
    }
    for file in [
        "consumer_group_describe_response_v0",
        "consumer_group_describe_response_v1",
    ] {
        let (r, v) = load::<ConsumerGroupDescribeResponse>(file);
        assert_eq!(r.groups.len(), 2);
        let g = &r.groups[0];
        assert_eq!(
            (g.error_code, g.group_id.as_str(), g.group_state.as_str()),
            (0, "group-1", "Reconciling")
        );
        assert_eq!(
            (g.group_epoch, g.assignment_epoch, g.assignor_name.as_str()),
            (8, 8, "uniform")
        );
        assert_eq!(g.authorized_operations, 0x0fe8);
        let m = &g.members[0];
        assert_eq!(
            (
                m.member_id.as_str(),
                m.instance_id.as_deref(),
                m.rack_id.clone()
            ),
            ("member-a", Some("instance-1"), None)
        );
        assert_eq!(
            (m.member_epoch, m.client_id.as_str(), m.client_host.as_str()),
            (7, "client-1", "/127.0.0.1")
        );
        assert_eq!(
            (
                m.subscribed_topic_names.as_slice(),
                m.subscribed_topic_regex.clone()
            ),
            (&["orders".to_string()][..], None)
        );
        let t = &m.assignment.topic_partitions[0];
        assert_eq!(
            (t.topic_id, t.topic_name.as_str(), t.partitions.as_slice()),
            (TOPIC_A, "orders", &[0, 2][..])
        );
        assert_eq!(
            m.target_assignment.topic_partitions[0].partitions,
            [0, 1, 2]
        );
        // MemberType exists from v1 (KIP-1099); v0 reads as the default, -1 (unknown).
        assert_eq!(m.member_type, if v >= 1 { 1 } else { -1 }, "v{v}");
        let missing = &r.groups[1];
        assert_eq!(
            (missing.error_code, missing.error_message.as_deref()),
            (69, Some("Group group-2 not found."))
        );
        assert_eq!(missing.authorized_operations, i32::MIN, "schema default");
    }
}
