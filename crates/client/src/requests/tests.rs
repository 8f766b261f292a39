//! Every request the client sends, built by the same functions the runtime calls with the values
//! it really sets (topic ids, rack-free metadata, the request timeout), encoded as a whole frame
//! at every version from the 4.x floor to the highest this crate knows: any version a broker (3.x
//! or 4.x) may negotiate.

use std::collections::BTreeMap;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mooring_testkit::encode::encode_failures as every_version;
use mooring_wire::frame::encode_request;
use mooring_wire::primitives::Uuid;

use super::*;
use crate::config::ClientConfig;

fn topic_ids() -> BTreeMap<String, Uuid> {
    BTreeMap::from([
        ("orders".to_string(), Uuid([7; 16])),
        ("payments".to_string(), Uuid([9; 16])),
    ])
}

fn connection_requests() -> Vec<String> {
    let mut failed = every_version("every API", api_versions);
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"] {
        failed.extend(every_version(mechanism, |v| sasl_handshake(v, mechanism)));
    }
    failed.extend(every_version("client-first", |v| {
        sasl_authenticate(v, Bytes::from_static(b"n,,n=alice,r=nonce"))
    }));
    let topics = ["orders".to_string(), "payments".to_string()];
    failed.extend(every_version("all topics", |v| metadata(v, None)));
    failed.extend(every_version("two topics", |v| metadata(v, Some(&topics))));
    failed.extend(every_version("group", |v| find_coordinator(v, "orders")));
    failed
}

fn telemetry_requests() -> Vec<String> {
    let mut failed = every_version("no instance id yet", |v| {
        get_telemetry_subscriptions(v, Uuid::NIL)
    });
    failed.extend(every_version("instance id", |v| {
        get_telemetry_subscriptions(v, Uuid([3; 16]))
    }));
    let push = TelemetryPush {
        instance_id: Uuid([3; 16]),
        subscription_id: 17,
        terminating: true,
        compression: mooring_wire::records::Compression::Zstd,
        metrics: Bytes::from_static(b"otlp"),
    };
    failed.extend(every_version("terminating zstd", |v| {
        push_telemetry(v, &push)
    }));
    failed
}

fn group_look_ups() -> Vec<String> {
    let mut failed = every_version("one group", |v| describe_groups(v, vec!["orders".into()]));
    failed.extend(every_version("all", list_groups));
    failed
}

fn offset_requests() -> Vec<String> {
    let mut failed = Vec::new();
    let ids = topic_ids();
    let partitions = BTreeMap::from([
        ("orders".to_string(), vec![0, 1]),
        ("payments".to_string(), vec![2]),
    ]);
    failed.extend(every_version("some partitions", |v| {
        offset_fetch(v, "orders", Some(&partitions), &ids)
    }));
    // Every partition with a commit (the sidecar): null topics exist from v2.
    failed.extend(
        every_version("all partitions", |v| offset_fetch(v, "orders", None, &ids))
            .into_iter()
            .filter(|line| !line.contains(" v1 ")),
    );
    let timeout = ClientConfig::default().request_timeout;
    for timestamp in [-2, -1, 1_767_225_600_000] {
        failed.extend(every_version("read_uncommitted", |v| {
            list_offsets(v, &partitions, timestamp, false, timeout)
        }));
        // read_committed exists from v2 (v1 cannot say it, and refuses to encode).
        failed.extend(
            every_version("read_committed", |v| {
                list_offsets(v, &partitions, timestamp, true, timeout)
            })
            .into_iter()
            .filter(|line| !line.contains(" v1 ")),
        );
    }
    failed
}

#[test]
fn every_request_encodes_at_every_version_with_the_values_the_runtime_sets() {
    let mut failed = connection_requests();
    failed.extend(group_look_ups());
    failed.extend(offset_requests());
    failed.extend(telemetry_requests());
    assert!(
        failed.is_empty(),
        "requests that cannot be encoded at a version a broker may negotiate:\n{}",
        failed.join("\n")
    );
}

#[test]
fn what_a_version_cannot_say_is_an_encoding_error() {
    // Read-committed offsets from a broker that only speaks ListOffsets v1 cannot be asked for:
    // the encoder refuses rather than silently asking for uncommitted ones.
    let partitions = BTreeMap::from([("orders".to_string(), vec![0])]);
    let request = list_offsets(1, &partitions, -1, true, Duration::from_secs(30));
    let mut buf = BytesMut::new();
    assert!(encode_request(&mut buf, &request, 1, 1, None).is_err());
    // Likewise "every committed partition" (null topics) at OffsetFetch v1.
    let request = offset_fetch(1, "orders", None, &topic_ids());
    let mut buf = BytesMut::new();
    assert!(encode_request(&mut buf, &request, 1, 1, None).is_err());
}

#[test]
fn version_dependent_fields_follow_the_version() {
    let timeout = Duration::from_secs(30);
    let partitions = BTreeMap::from([("orders".to_string(), vec![0])]);
    assert_eq!(
        list_offsets(9, &partitions, -1, false, timeout).timeout_ms,
        0
    );
    assert_eq!(
        list_offsets(10, &partitions, -1, false, timeout).timeout_ms,
        30_000
    );
    let find = find_coordinator(3, "g");
    assert_eq!((find.key.as_str(), find.coordinator_keys.len()), ("g", 0));
    let find = find_coordinator(4, "g");
    assert_eq!(
        (find.key.as_str(), find.coordinator_keys),
        ("", vec!["g".into()])
    );
}

#[test]
fn offset_fetch_names_topics_by_id_from_v10() {
    let ids = topic_ids();
    let partitions = BTreeMap::from([("orders".to_string(), vec![0, 1])]);
    let v10 = offset_fetch(10, "g", Some(&partitions), &ids);
    let topic = &v10.groups[0].topics.as_ref().map(|t| t[0].clone());
    assert_eq!(topic.as_ref().map(|t| t.topic_id), Some(Uuid([7; 16])));
    assert!(v10.require_stable);
    let v9 = offset_fetch(9, "g", Some(&partitions), &ids);
    let topic = &v9.groups[0].topics.as_ref().map(|t| t[0].clone());
    assert_eq!(topic.as_ref().map(|t| t.name.as_str()), Some("orders"));
    assert!(!offset_fetch(6, "g", Some(&partitions), &ids).require_stable);
}
