//! `ErrorCode` against Kafka's own error table: `tests/golden/errors.tsv` is what kafka-clients
//! 4.4.0 prints of `org.apache.kafka.common.protocol.Errors` (every code, its name, and whether
//! its exception extends `RetriableException`), so a code, a name or a retriable flag that drifts
//! from Kafka fails here. The file is committed; this test needs no Java.

use std::collections::BTreeMap;
use std::path::Path;

use mooring_wire::error_code::ErrorCode;

/// code → (name, retriable), as Kafka has them.
fn kafka_errors() -> BTreeMap<i16, (String, bool)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/errors.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut table = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        let [code, name, retriable] = fields[..] else {
            panic!("errors.tsv line {}: {line:?}", n + 1);
        };
        let code: i16 = code
            .parse()
            .unwrap_or_else(|e| panic!("errors.tsv line {}: {e}", n + 1));
        let retriable = match retriable {
            "true" => true,
            "false" => false,
            other => panic!("errors.tsv line {}: retriable {other:?}", n + 1),
        };
        assert!(
            table.insert(code, (name.to_string(), retriable)).is_none(),
            "errors.tsv: code {code} twice"
        );
    }
    table
}

#[test]
fn every_code_matches_kafkas_errors_table() {
    let kafka = kafka_errors();
    assert_eq!(kafka.len(), 138, "Kafka 4.4.0 defines codes -1..=136");
    for (&code, (name, retriable)) in &kafka {
        let ours = ErrorCode::from_i16(code);
        assert!(!matches!(ours, ErrorCode::Unknown(_)), "{code} {name}");
        assert_eq!(ours.code(), code, "{name}");
        assert_eq!(ours.name(), name, "code {code}");
        assert_eq!(ours.is_retriable(), *retriable, "{name} ({code}) retriable");
    }
    let ours: Vec<i16> = ErrorCode::all().map(ErrorCode::code).collect();
    let theirs: Vec<i16> = kafka.keys().copied().collect();
    assert_eq!(ours, theirs, "codes this crate knows beyond Kafka's");
}

/// The codes the KIP-848 APIs (ConsumerGroupHeartbeat, ConsumerGroupDescribe) list as supported
/// errors, spelt out: none of the group-membership ones is retriable in Kafka's sense (each has
/// its own reaction in the member), the coordinator ones are.
#[test]
fn the_consumer_group_protocol_codes() {
    let expect = [
        (
            ErrorCode::GroupMaxSizeReached,
            81,
            "GROUP_MAX_SIZE_REACHED",
            false,
        ),
        (
            ErrorCode::FencedMemberEpoch,
            110,
            "FENCED_MEMBER_EPOCH",
            false,
        ),
        (
            ErrorCode::UnreleasedInstanceId,
            111,
            "UNRELEASED_INSTANCE_ID",
            false,
        ),
        (
            ErrorCode::UnsupportedAssignor,
            112,
            "UNSUPPORTED_ASSIGNOR",
            false,
        ),
        (
            ErrorCode::StaleMemberEpoch,
            113,
            "STALE_MEMBER_EPOCH",
            false,
        ),
        (
            ErrorCode::InvalidRegularExpression,
            128,
            "INVALID_REGULAR_EXPRESSION",
            false,
        ),
        (ErrorCode::GroupIdNotFound, 69, "GROUP_ID_NOT_FOUND", false),
        (ErrorCode::UnknownMemberId, 25, "UNKNOWN_MEMBER_ID", false),
        (ErrorCode::InvalidRequest, 42, "INVALID_REQUEST", false),
        (ErrorCode::InvalidGroupId, 24, "INVALID_GROUP_ID", false),
        (
            ErrorCode::GroupAuthorizationFailed,
            30,
            "GROUP_AUTHORIZATION_FAILED",
            false,
        ),
        (
            ErrorCode::TopicAuthorizationFailed,
            29,
            "TOPIC_AUTHORIZATION_FAILED",
            false,
        ),
        (ErrorCode::NotCoordinator, 16, "NOT_COORDINATOR", true),
        (
            ErrorCode::CoordinatorNotAvailable,
            15,
            "COORDINATOR_NOT_AVAILABLE",
            true,
        ),
        (
            ErrorCode::CoordinatorLoadInProgress,
            14,
            "COORDINATOR_LOAD_IN_PROGRESS",
            true,
        ),
    ];
    for (e, code, name, retriable) in expect {
        assert_eq!(
            (e.code(), e.name(), e.is_retriable()),
            (code, name, retriable)
        );
        assert_eq!(ErrorCode::from_i16(code), e);
    }
}

/// The codes the KIP-932 APIs (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
/// ShareAcknowledge, DescribeShareGroupOffsets) list as supported errors, plus the two of share
/// sessions and share state their schemas do not list (SHARE_SESSION_LIMIT_REACHED, which a broker
/// with no room for another session answers to a ShareFetch opening one; FENCED_STATE_EPOCH, from
/// the share coordinator), spelt out with Kafka's names and retriable flags (errors.tsv): a share
/// session the broker no longer knows or whose epoch it did not expect is retriable (the consumer
/// opens a new one), a record whose state an acknowledgement cannot change is not.
#[test]
fn the_share_group_codes() {
    let expect = [
        (
            ErrorCode::InvalidRecordState,
            121,
            "INVALID_RECORD_STATE",
            false,
        ),
        (
            ErrorCode::ShareSessionNotFound,
            122,
            "SHARE_SESSION_NOT_FOUND",
            true,
        ),
        (
            ErrorCode::InvalidShareSessionEpoch,
            123,
            "INVALID_SHARE_SESSION_EPOCH",
            true,
        ),
        (
            ErrorCode::FencedStateEpoch,
            124,
            "FENCED_STATE_EPOCH",
            false,
        ),
        (
            ErrorCode::ShareSessionLimitReached,
            133,
            "SHARE_SESSION_LIMIT_REACHED",
            true,
        ),
        (ErrorCode::UnknownTopicId, 100, "UNKNOWN_TOPIC_ID", true),
        (
            ErrorCode::UnknownTopicOrPartition,
            3,
            "UNKNOWN_TOPIC_OR_PARTITION",
            true,
        ),
        (
            ErrorCode::NotLeaderOrFollower,
            6,
            "NOT_LEADER_OR_FOLLOWER",
            true,
        ),
        (
            ErrorCode::KafkaStorageError,
            56,
            "KAFKA_STORAGE_ERROR",
            true,
        ),
        (ErrorCode::CorruptMessage, 2, "CORRUPT_MESSAGE", true),
        (
            ErrorCode::UnknownServerError,
            -1,
            "UNKNOWN_SERVER_ERROR",
            false,
        ),
        (
            ErrorCode::GroupMaxSizeReached,
            81,
            "GROUP_MAX_SIZE_REACHED",
            false,
        ),
        (ErrorCode::GroupIdNotFound, 69, "GROUP_ID_NOT_FOUND", false),
        (ErrorCode::UnknownMemberId, 25, "UNKNOWN_MEMBER_ID", false),
        (ErrorCode::InvalidGroupId, 24, "INVALID_GROUP_ID", false),
        (ErrorCode::InvalidRequest, 42, "INVALID_REQUEST", false),
        (
            ErrorCode::GroupAuthorizationFailed,
            30,
            "GROUP_AUTHORIZATION_FAILED",
            false,
        ),
        (
            ErrorCode::TopicAuthorizationFailed,
            29,
            "TOPIC_AUTHORIZATION_FAILED",
            false,
        ),
        (ErrorCode::NotCoordinator, 16, "NOT_COORDINATOR", true),
        (
            ErrorCode::CoordinatorNotAvailable,
            15,
            "COORDINATOR_NOT_AVAILABLE",
            true,
        ),
        (
            ErrorCode::CoordinatorLoadInProgress,
            14,
            "COORDINATOR_LOAD_IN_PROGRESS",
            true,
        ),
    ];
    let kafka = kafka_errors();
    for (e, code, name, retriable) in expect {
        assert_eq!(
            (e.code(), e.name(), e.is_retriable()),
            (code, name, retriable)
        );
        assert_eq!(ErrorCode::from_i16(code), e);
        assert_eq!(
            kafka.get(&code),
            Some(&(name.to_string(), retriable)),
            "{name} as kafka-clients 4.4.0 has it"
        );
    }
}
