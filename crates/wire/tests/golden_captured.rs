//! Golden frames captured on loopback between a real Apache Kafka 4.4.0 broker and real consumers
//! (the Java client 4.4.0 and librdkafka), by `scripts/capture-golden` (tshark, then TCP
//! reassembly, size-prefixed frames, requests paired with responses by correlation id).
//!
//! Each file under `tests/golden/captured/<client>/<scenario>/` is one frame without its 4-byte
//! size prefix, header included, under a `#` comment header naming the API, version, direction,
//! correlation id, group and topic. For every file this test parses the header with
//! [`mooring_wire::frame`], decodes the body at the captured version, checks values the capture
//! script knows (group id, topic names, the records the producer wrote as listed in
//! `produced.tsv`, the consumer-protocol Subscription/Assignment inside JoinGroup/SyncGroup, the
//! KIP-848 heartbeats and describe of the `consumer-protocol` scenario, the SaslHandshake and
//! SaslAuthenticate of PLAIN and SCRAM-SHA-512 logins in the `sasl` scenario, the ListGroups and
//! DescribeGroups of ConsumerGroupCommand in the `group-listing` scenario, the KIP-932 share group
//! APIs of the `share-group` scenario: heartbeats, share sessions, acquired records and their
//! acknowledgements, the group described), and re-encodes header and body to the very same bytes.
//!
//! The files are committed; this test needs no broker and no network.

#[path = "golden_captured/consumer_group.rs"]
mod consumer_group;
#[path = "golden_captured/fetched.rs"]
mod fetched;
#[path = "golden_captured/group_listing.rs"]
mod group_listing;
#[path = "golden_captured/sasl.rs"]
mod sasl;
#[path = "golden_captured/share_group.rs"]
mod share_group;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use bytes::{Bytes, BytesMut};
use mooring_wire::consumer_protocol::{self, Assignment, Subscription};
use mooring_wire::frame::{
    request_header_version, response_header_version, ApiKey, RequestHeader, ResponseHeader,
};
use mooring_wire::messages::*;
use mooring_wire::primitives::Uuid;
use mooring_wire::records::Compression;

use fetched::{check_fetched_records, end_offset, produced, ProducedLog};

/// Where the broker listened during the captures whose files have no `# broker:` line.
const BROKER_HOST: &str = "127.0.0.1";
const BROKER_PORT: i32 = 59192;
/// Each golden topic has this many partitions (scripts/capture-golden: PARTITIONS).
const PARTITIONS: i32 = 2;
/// Kafka error codes the captures hold.
const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
const COORDINATOR_NOT_AVAILABLE: i16 = 15;
const NOT_COORDINATOR: i16 = 16;
const GROUP_ID_NOT_FOUND: i16 = 69;
const MEMBER_ID_REQUIRED: i16 = 79;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/captured")
}

/// One captured frame and its comment header.
#[derive(Debug)]
struct Captured {
    /// Path relative to `tests/golden/captured`, for messages.
    name: String,
    /// `client/scenario`, e.g. `java-4.4.0/range`.
    client: String,
    scenario: String,
    meta: BTreeMap<String, String>,
    frame: Bytes,
}

impl Captured {
    fn meta(&self, key: &str) -> &str {
        self.meta
            .get(key)
            .unwrap_or_else(|| panic!("{}: no '# {key}:' line", self.name))
    }

    fn meta_i64(&self, key: &str) -> i64 {
        self.meta(key)
            .parse()
            .unwrap_or_else(|e| panic!("{}: '# {key}:' is not a number: {e}", self.name))
    }

    fn api_key(&self) -> ApiKey {
        let key = self.meta_i64("api_key");
        i16::try_from(key)
            .ok()
            .and_then(ApiKey::from_i16)
            .unwrap_or_else(|| panic!("{}: api key {key} is not implemented", self.name))
    }

    fn version(&self) -> i16 {
        let v = self.meta_i64("api_version");
        i16::try_from(v).unwrap_or_else(|_| panic!("{}: version {v} out of range", self.name))
    }

    fn is_request(&self) -> bool {
        match self.meta("direction") {
            "request" => true,
            "response" => false,
            other => panic!("{}: direction {other:?}", self.name),
        }
    }

    fn group(&self) -> &str {
        self.meta("group")
    }

    fn topic(&self) -> &str {
        self.meta("topic")
    }

    /// The broker's address during the capture: the `# broker:` line, or the first captures'.
    fn broker(&self) -> (String, i32) {
        let Some(addr) = self.meta.get("broker") else {
            return (BROKER_HOST.to_string(), BROKER_PORT);
        };
        let (host, port) = addr
            .rsplit_once(':')
            .unwrap_or_else(|| panic!("{}: broker {addr:?}", self.name));
        let port = port
            .parse()
            .unwrap_or_else(|e| panic!("{}: broker port {port:?}: {e}", self.name));
        (host.to_string(), port)
    }

    fn is_java(&self) -> bool {
        self.client.starts_with("java-")
    }

    /// The suffix after `-request`/`-response` in the file name: a JoinGroup error or a codec.
    fn variant(&self) -> Option<&str> {
        let stem = self.name.rsplit('/').next().unwrap_or(&self.name);
        let stem = stem.strip_suffix(".hex").unwrap_or(stem);
        ["-request-", "-response-"]
            .iter()
            .find_map(|d| stem.split_once(d).map(|(_, v)| v))
    }
}

fn load(path: &Path) -> Captured {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let mut meta = BTreeMap::new();
    let mut hex = String::new();
    for line in text.lines() {
        if let Some(comment) = line.strip_prefix('#') {
            if let Some((k, v)) = comment.trim().split_once(':') {
                meta.entry(k.trim().to_string())
                    .or_insert_with(|| v.trim().to_string());
            }
        } else {
            hex.extend(line.chars().filter(|c| !c.is_whitespace()));
        }
    }
    assert!(hex.len() % 2 == 0, "{name}: odd number of hex digits");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(&hex[i..i + 2], 16)
                .unwrap_or_else(|e| panic!("{name}: bad hex at {i}: {e}"))
        })
        .collect();
    let mut parts = name.split('/');
    let client = parts.next().unwrap_or_default().to_string();
    let scenario = parts.next().unwrap_or_default().to_string();
    Captured {
        name,
        client,
        scenario,
        meta,
        frame: Bytes::from(bytes),
    }
}

/// Every captured file of one client (`java-…` or `librdkafka-…`), sorted by path.
fn captured(client_prefix: &str) -> Vec<Captured> {
    let mut files = Vec::new();
    let mut dirs = vec![root()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "hex") {
                files.push(path);
            }
        }
    }
    files.sort();
    let all: Vec<Captured> = files.iter().map(|p| load(p)).collect();
    let mine: Vec<Captured> = all
        .into_iter()
        .filter(|c| c.client.starts_with(client_prefix))
        .collect();
    assert!(
        !mine.is_empty(),
        "no captured files for {client_prefix} under {}: run scripts/capture-golden",
        root().display()
    );
    mine
}

/// Parses the header, checks it against the comment header, decodes the body as `M`, re-encodes
/// both and asserts the bytes are the captured bytes. Returns the body for value checks.
fn round_trip<M: Message>(c: &Captured) -> M {
    let name = &c.name;
    let api = c.api_key();
    let version = c.version();
    assert_eq!(api.code(), M::API_KEY, "{name}: decoding as {}", M::NAME);
    let mut buf = BytesMut::new();
    let (body, header_version) = if c.is_request() {
        let hv = request_header_version(api, version);
        let (header, body) = RequestHeader::decode(&c.frame, hv)
            .unwrap_or_else(|e| panic!("{name}: request header v{hv}: {e}"));
        assert_eq!(header.api_key, api.code(), "{name}: api key");
        assert_eq!(header.api_version, version, "{name}: api version");
        assert_eq!(
            i64::from(header.correlation_id),
            c.meta_i64("correlation_id"),
            "{name}: correlation id"
        );
        let client_id = header.client_id.as_deref().unwrap_or_default();
        if c.is_java() {
            assert_eq!(client_id, "mooring-golden-java", "{name}: client id");
        } else {
            assert_eq!(client_id, "mooring-golden-librdkafka", "{name}: client id");
        }
        header
            .encode(&mut buf, hv)
            .unwrap_or_else(|e| panic!("{name}: re-encoding the request header: {e}"));
        (body, hv)
    } else {
        let hv = response_header_version(api, version);
        let (header, body) = ResponseHeader::decode(&c.frame, hv)
            .unwrap_or_else(|e| panic!("{name}: response header v{hv}: {e}"));
        assert_eq!(
            i64::from(header.correlation_id),
            c.meta_i64("correlation_id"),
            "{name}: correlation id"
        );
        header
            .encode(&mut buf, hv)
            .unwrap_or_else(|e| panic!("{name}: re-encoding the response header: {e}"));
        (body, hv)
    };
    assert_eq!(
        i64::from(header_version),
        c.meta_i64("header_version"),
        "{name}: the capture script and frame.rs disagree on the header version"
    );
    let message = M::decode(&body, version)
        .unwrap_or_else(|e| panic!("{name}: decoding {} v{version}: {e}", M::NAME));
    message
        .encode(&mut buf, version)
        .unwrap_or_else(|e| panic!("{name}: re-encoding {} v{version}: {e}", M::NAME));
    if buf[..] != c.frame[..] {
        let at = buf
            .iter()
            .zip(c.frame.iter())
            .position(|(a, b)| a != b)
            .unwrap_or(buf.len().min(c.frame.len()));
        panic!(
            "{name}: re-encoded {} bytes differ from the {} captured bytes, first at byte {at}\n\
             captured:   {}\nre-encoded: {}",
            buf.len(),
            c.frame.len(),
            hex(&c.frame[at.saturating_sub(8)..c.frame.len().min(at + 24)]),
            hex(&buf[at.saturating_sub(8)..buf.len().min(at + 24)]),
        );
    }
    message
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The protocol (assignor) name each scenario's members must offer.
fn expected_protocol(c: &Captured) -> &'static str {
    match c.scenario.as_str() {
        "cooperative-sticky" => "cooperative-sticky",
        "range" | "static" => "range",
        other => panic!("{}: unknown scenario {other}", c.name),
    }
}

fn check_subscription(c: &Captured, protocol: &str, metadata: &Bytes) {
    let name = &c.name;
    let (wire_version, sub) = Subscription::decode(metadata)
        .unwrap_or_else(|e| panic!("{name}: protocol {protocol}: Subscription: {e}"));
    assert!(wire_version >= 0, "{name}: subscription version");
    assert_eq!(
        sub.topics,
        vec![c.topic().to_string()],
        "{name}: protocol {protocol}: subscribed topics"
    );
    if protocol == "cooperative-sticky" {
        assert!(
            wire_version >= 1,
            "{name}: cooperative-sticky needs Subscription v1+ (owned partitions), got v{wire_version}"
        );
        // The first join owns nothing and has no generation. From Subscription v2 the generation
        // has its own field; the user data may still carry it (Java) or be empty (librdkafka
        // writes a zero-length, non-null user data), which Java's assignor reads as no generation.
        assert!(sub.owned_partitions.is_empty(), "{name}: owned partitions");
        if wire_version >= 2 {
            assert_eq!(
                sub.generation_id,
                consumer_protocol::NO_GENERATION,
                "{name}"
            );
        }
        if let Some(data) = sub.user_data.as_ref().filter(|d| !d.is_empty()) {
            let generation = consumer_protocol::decode_cooperative_sticky_generation(data)
                .unwrap_or_else(|e| panic!("{name}: cooperative-sticky user data: {e}"));
            assert_eq!(generation, consumer_protocol::NO_GENERATION, "{name}");
        }
    }
}

/// The whole topic, as a consumer alone in its group is assigned it.
fn check_assignment(c: &Captured, bytes: &Bytes) {
    let name = &c.name;
    let (_, assignment): (i16, Assignment) =
        Assignment::decode(bytes).unwrap_or_else(|e| panic!("{name}: Assignment: {e}"));
    assert_eq!(assignment.partitions.len(), 1, "{name}: {assignment:?}");
    assert_eq!(assignment.partitions[0].topic, c.topic(), "{name}");
    let mut partitions = assignment.partitions[0].partitions.clone();
    partitions.sort_unstable();
    assert_eq!(
        partitions,
        (0..PARTITIONS).collect::<Vec<_>>(),
        "{name}: assigned partitions"
    );
}

/// The error a response file's name promises: `error<code>` (alone, or after a heartbeat's
/// kind: `join-error14`) or none.
fn expected_error(c: &Captured) -> i16 {
    let words: Vec<&str> = c.variant().map_or(Vec::new(), |v| v.split('-').collect());
    let mut error = 0;
    for word in words {
        match word {
            "error14" => error = COORDINATOR_LOAD_IN_PROGRESS,
            "error15" => error = COORDINATOR_NOT_AVAILABLE,
            "error16" => error = NOT_COORDINATOR,
            "error69" => error = GROUP_ID_NOT_FOUND,
            "error79" => error = MEMBER_ID_REQUIRED,
            "join" | "ack" | "leave" => {}
            other => panic!("{}: unknown variant {other}", c.name),
        }
    }
    error
}

/// A topic of OffsetCommit/OffsetFetch: by name, or by id from v10.
fn check_topic(c: &Captured, name: &str, id: Uuid) {
    if c.version() >= 10 {
        assert_eq!(
            (name, id),
            ("", consumer_group::topic_id(c)),
            "{}: topic",
            c.name
        );
    } else {
        assert_eq!((name, id), (c.topic(), Uuid::NIL), "{}: topic", c.name);
    }
}

fn check_static_instance(c: &Captured, instance: Option<&str>) {
    let expected = c.meta.get("group_instance_id").map(String::as_str);
    assert_eq!(instance, expected, "{}: group instance id", c.name);
}

/// Decodes, round-trips and checks one captured frame. Returns how many records it carried (Fetch
/// responses), 0 otherwise.
fn check(c: &Captured, log: &ProducedLog) -> usize {
    let name = &c.name;
    let request = c.is_request();
    let version = c.version();
    match (c.api_key(), request) {
        (ApiKey::ApiVersions, true) => {
            let m: ApiVersionsRequest = round_trip(c);
            if version >= 3 {
                if c.is_java() {
                    assert_eq!(m.client_software_name, "apache-kafka-java", "{name}");
                    assert_eq!(m.client_software_version, "4.4.0", "{name}");
                } else {
                    assert!(
                        m.client_software_name.starts_with("confluent-kafka"),
                        "{name}: client software {:?}",
                        m.client_software_name
                    );
                }
            }
        }
        (ApiKey::ApiVersions, false) => {
            let m: ApiVersionsResponse = round_trip(c);
            assert_eq!(m.error_code, 0, "{name}");
            let max = |key: ApiKey| {
                m.api_keys
                    .iter()
                    .find(|k| k.api_key == key.code())
                    .map(|k| k.max_version)
                    .unwrap_or_else(|| panic!("{name}: the broker does not list {}", key.name()))
            };
            // Kafka 4.4 offers at least what mooring-wire implements for a consumer.
            for key in [
                ApiKey::Fetch,
                ApiKey::JoinGroup,
                ApiKey::SyncGroup,
                ApiKey::Heartbeat,
                ApiKey::OffsetCommit,
                ApiKey::OffsetFetch,
            ] {
                assert!(max(key) >= key.max_version(), "{name}: {}", key.name());
            }
        }
        (ApiKey::Metadata, true) => {
            let m: MetadataRequest = round_trip(c);
            if let Some(topics) = &m.topics {
                assert!(
                    topics.iter().all(|t| t.name.as_deref() == Some(c.topic())),
                    "{name}: {topics:?}"
                );
            }
        }
        (ApiKey::Metadata, false) => {
            let m: MetadataResponse = round_trip(c);
            let (host, port) = c.broker();
            assert!(
                m.brokers.iter().any(|b| b.host == host && b.port == port),
                "{name}: brokers {:?}",
                m.brokers
            );
            if let Some(t) = m
                .topics
                .iter()
                .find(|t| t.name.as_deref() == Some(c.topic()))
            {
                assert_eq!(t.error_code, 0, "{name}");
                assert_ne!(t.topic_id, Uuid::NIL, "{name}: topic id");
                assert_eq!(t.partitions.len(), PARTITIONS as usize, "{name}");
            }
        }
        (ApiKey::FindCoordinator, true) => {
            let m: FindCoordinatorRequest = round_trip(c);
            let keys: Vec<&str> = if version >= 4 {
                m.coordinator_keys.iter().map(String::as_str).collect()
            } else {
                vec![m.key.as_str()]
            };
            assert_eq!(keys, vec![c.group()], "{name}: coordinator keys");
        }
        (ApiKey::FindCoordinator, false) => {
            let m: FindCoordinatorResponse = round_trip(c);
            let (error, host, port) = if version >= 4 {
                let coordinator = m
                    .coordinators
                    .first()
                    .unwrap_or_else(|| panic!("{name}: no coordinator"));
                assert_eq!(coordinator.key, c.group(), "{name}");
                (coordinator.error_code, &coordinator.host, coordinator.port)
            } else {
                (m.error_code, &m.host, m.port)
            };
            assert_eq!(error, expected_error(c), "{name}");
            if error == 0 {
                assert_eq!((host.clone(), port), c.broker(), "{name}");
            }
        }
        (ApiKey::JoinGroup, true) => {
            let m: JoinGroupRequest = round_trip(c);
            assert_eq!(m.group_id, c.group(), "{name}");
            assert_eq!(m.protocol_type, consumer_protocol::PROTOCOL_TYPE, "{name}");
            check_static_instance(c, m.group_instance_id.as_deref());
            let wanted = expected_protocol(c);
            assert!(
                m.protocols.iter().any(|p| p.name == wanted),
                "{name}: protocols {:?}",
                m.protocols.iter().map(|p| &p.name).collect::<Vec<_>>()
            );
            for p in &m.protocols {
                check_subscription(c, &p.name, &p.metadata);
            }
        }
        (ApiKey::JoinGroup, false) => {
            let m: JoinGroupResponse = round_trip(c);
            let expected_error = expected_error(c);
            assert_eq!(m.error_code, expected_error, "{name}");
            if expected_error == MEMBER_ID_REQUIRED {
                assert!(!m.member_id.is_empty(), "{name}: the broker names the id");
            }
            if expected_error == 0 {
                assert!(m.generation_id >= 1, "{name}: generation");
                assert_eq!(
                    m.protocol_name.as_deref(),
                    Some(expected_protocol(c)),
                    "{name}"
                );
                assert_eq!(m.leader, m.member_id, "{name}: a lone member leads");
                assert_eq!(m.members.len(), 1, "{name}: members");
                let member = &m.members[0];
                assert_eq!(member.member_id, m.member_id, "{name}");
                check_static_instance(c, member.group_instance_id.as_deref());
                check_subscription(c, expected_protocol(c), &member.metadata);
            }
        }
        (ApiKey::SyncGroup, true) => {
            let m: SyncGroupRequest = round_trip(c);
            assert_eq!(m.group_id, c.group(), "{name}");
            check_static_instance(c, m.group_instance_id.as_deref());
            assert_eq!(m.assignments.len(), 1, "{name}: the leader assigns itself");
            assert_eq!(m.assignments[0].member_id, m.member_id, "{name}");
            check_assignment(c, &m.assignments[0].assignment);
        }
        (ApiKey::SyncGroup, false) => {
            let m: SyncGroupResponse = round_trip(c);
            assert_eq!(m.error_code, 0, "{name}");
            check_assignment(c, &m.assignment);
        }
        (ApiKey::Heartbeat, true) => {
            let m: HeartbeatRequest = round_trip(c);
            assert_eq!(m.group_id, c.group(), "{name}");
            assert!(m.generation_id >= 1, "{name}");
            check_static_instance(c, m.group_instance_id.as_deref());
        }
        (ApiKey::Heartbeat, false) => {
            let m: HeartbeatResponse = round_trip(c);
            assert_eq!(m.error_code, 0, "{name}");
        }
        (ApiKey::OffsetCommit, true) => {
            let m: OffsetCommitRequest = round_trip(c);
            assert_eq!(m.group_id, c.group(), "{name}");
            check_static_instance(c, m.group_instance_id.as_deref());
            if c.scenario == "consumer-protocol" {
                consumer_group::check_commit_member(c, &m);
            }
            assert_eq!(m.topics.len(), 1, "{name}");
            check_topic(c, &m.topics[0].name, m.topics[0].topic_id);
            for p in &m.topics[0].partitions {
                assert_eq!(
                    p.committed_offset,
                    end_offset(log, c.topic(), p.partition_index),
                    "{name}: partition {} commits past everything produced",
                    p.partition_index
                );
            }
        }
        (ApiKey::OffsetCommit, false) => {
            let m: OffsetCommitResponse = round_trip(c);
            for t in &m.topics {
                check_topic(c, &t.name, t.topic_id);
                assert!(t.partitions.iter().all(|p| p.error_code == 0), "{name}");
            }
        }
        (ApiKey::OffsetFetch, true) => {
            let m: OffsetFetchRequest = round_trip(c);
            let (group, topics) = if version >= 8 {
                assert_eq!(m.groups.len(), 1, "{name}");
                let g = &m.groups[0];
                for t in g.topics.iter().flatten() {
                    check_topic(c, &t.name, t.topic_id);
                }
                let topics = g.topics.as_ref().map(|ts| {
                    ts.iter()
                        .map(|t| (c.topic().to_string(), t.partition_indexes.clone()))
                        .collect::<Vec<_>>()
                });
                (g.group_id.as_str(), topics)
            } else {
                let topics = m.topics.as_ref().map(|ts| {
                    ts.iter()
                        .map(|t| (t.name.clone(), t.partition_indexes.clone()))
                        .collect::<Vec<_>>()
                });
                (m.group_id.as_str(), topics)
            };
            assert_eq!(group, c.group(), "{name}");
            let topics = topics.unwrap_or_else(|| panic!("{name}: all topics asked"));
            assert!(
                topics.iter().all(|(t, _)| t == c.topic()),
                "{name}: {topics:?}"
            );
        }
        (ApiKey::OffsetFetch, false) => {
            let m: OffsetFetchResponse = round_trip(c);
            if version >= 8 {
                assert_eq!(m.groups.len(), 1, "{name}");
                assert_eq!(m.groups[0].group_id, c.group(), "{name}");
                assert_eq!(m.groups[0].error_code, 0, "{name}");
                for t in &m.groups[0].topics {
                    for p in &t.partitions {
                        assert_eq!(p.error_code, 0, "{name}");
                    }
                }
            } else {
                assert_eq!(m.error_code, 0, "{name}");
            }
        }
        (ApiKey::LeaveGroup, true) => {
            let m: LeaveGroupRequest = round_trip(c);
            assert_eq!(m.group_id, c.group(), "{name}");
            let member = if version >= 3 {
                assert_eq!(m.members.len(), 1, "{name}");
                m.members[0].member_id.clone()
            } else {
                m.member_id.clone()
            };
            assert!(!member.is_empty(), "{name}: member id");
        }
        (ApiKey::LeaveGroup, false) => {
            let m: LeaveGroupResponse = round_trip(c);
            assert_eq!(m.error_code, 0, "{name}");
            assert!(m.members.iter().all(|mr| mr.error_code == 0), "{name}");
        }
        (ApiKey::ListOffsets, true) => {
            let m: ListOffsetsRequest = round_trip(c);
            assert_eq!(m.topics.len(), 1, "{name}");
            assert_eq!(m.topics[0].name, c.topic(), "{name}");
            // auto.offset.reset=earliest asks for the earliest offset (-2).
            assert!(
                m.topics[0].partitions.iter().all(|p| p.timestamp == -2),
                "{name}: {:?}",
                m.topics[0].partitions
            );
        }
        (ApiKey::ListOffsets, false) => {
            let m: ListOffsetsResponse = round_trip(c);
            assert_eq!(m.topics.len(), 1, "{name}");
            assert_eq!(m.topics[0].name, c.topic(), "{name}");
            for p in &m.topics[0].partitions {
                assert_eq!((p.error_code, p.offset), (0, 0), "{name}");
            }
        }
        (ApiKey::Fetch, true) => {
            let m: FetchRequest = round_trip(c);
            // A consumer, not a follower: replica id -1 (in ReplicaState from v15, KIP-903).
            let replica = if version >= 15 {
                m.replica_state.replica_id
            } else {
                m.replica_id
            };
            assert_eq!(replica, -1, "{name}: replica id");
            assert_eq!(m.topics.len(), 1, "{name}");
            let t = &m.topics[0];
            if version >= 13 {
                assert_ne!(t.topic_id, Uuid::NIL, "{name}: topic id");
            } else {
                assert_eq!(t.topic, c.topic(), "{name}");
            }
        }
        (ApiKey::ConsumerGroupHeartbeat, true) => consumer_group::heartbeat_request(c),
        (ApiKey::ConsumerGroupHeartbeat, false) => consumer_group::heartbeat_response(c),
        (ApiKey::ConsumerGroupDescribe, true) if c.scenario == "group-listing" => {
            group_listing::consumer_group_describe_request(c)
        }
        (ApiKey::ConsumerGroupDescribe, false) if c.scenario == "group-listing" => {
            group_listing::consumer_group_describe_response(c)
        }
        (ApiKey::ConsumerGroupDescribe, true) => consumer_group::describe_request(c),
        (ApiKey::ConsumerGroupDescribe, false) => consumer_group::describe_response(c),
        (ApiKey::ListGroups, true) if c.scenario == "share-group" => share_group::list_request(c),
        (ApiKey::ListGroups, false) if c.scenario == "share-group" => share_group::list_response(c),
        (ApiKey::ListGroups, true) => group_listing::list_request(c),
        (ApiKey::ListGroups, false) => group_listing::list_response(c),
        (ApiKey::DescribeGroups, true) => group_listing::describe_request(c),
        (ApiKey::DescribeGroups, false) => group_listing::describe_response(c),
        (ApiKey::SaslHandshake, true) => sasl::handshake_request(c),
        (ApiKey::SaslHandshake, false) => sasl::handshake_response(c),
        (ApiKey::SaslAuthenticate, true) => sasl::authenticate_request(c),
        (ApiKey::SaslAuthenticate, false) => sasl::authenticate_response(c),
        (ApiKey::ShareGroupHeartbeat, true) => share_group::heartbeat_request(c),
        (ApiKey::ShareGroupHeartbeat, false) => share_group::heartbeat_response(c),
        (ApiKey::ShareGroupDescribe, true) => share_group::describe_request(c),
        (ApiKey::ShareGroupDescribe, false) => share_group::describe_response(c),
        (ApiKey::ShareFetch, true) => share_group::fetch_request(c, log),
        (ApiKey::ShareFetch, false) => share_group::fetch_response(c, log),
        (ApiKey::ShareAcknowledge, true) => share_group::acknowledge_request(c, log),
        (ApiKey::ShareAcknowledge, false) => share_group::acknowledge_response(c),
        (ApiKey::DescribeShareGroupOffsets, true) => share_group::offsets_request(c),
        (ApiKey::DescribeShareGroupOffsets, false) => share_group::offsets_response(c),
        (ApiKey::IncrementalAlterConfigs, true) => share_group::alter_configs_request(c),
        (ApiKey::IncrementalAlterConfigs, false) => share_group::alter_configs_response(c),
        (ApiKey::Fetch, false) => {
            let m: FetchResponse = round_trip(c);
            return check_fetched_records(c, &m, log);
        }
        (api, _) => panic!("{name}: no checks written for {}", api.name()),
    }
    0
}

/// Runs every check for one client; also asserts the capture covers what a consumer uses.
fn check_client(client_prefix: &str) {
    let log = produced();
    let files = captured(client_prefix);
    let mut seen = BTreeSet::new();
    let mut codecs = BTreeSet::new();
    let mut fetched = 0;
    let mut per_version: BTreeMap<(&str, i16), usize> = BTreeMap::new();
    for c in &files {
        let records = check(c, &log);
        eprintln!("ok {}", c.name);
        seen.insert((c.api_key(), c.is_request()));
        *per_version
            .entry((c.api_key().name(), c.version()))
            .or_default() += 1;
        if c.api_key() == ApiKey::Fetch && !c.is_request() {
            codecs.insert(c.meta("codec").to_string());
            fetched += records;
        }
    }
    let mut wanted = vec![
        ApiKey::ApiVersions,
        ApiKey::Metadata,
        ApiKey::FindCoordinator,
        ApiKey::JoinGroup,
        ApiKey::SyncGroup,
        ApiKey::Heartbeat,
        ApiKey::OffsetCommit,
        ApiKey::OffsetFetch,
        ApiKey::Fetch,
        ApiKey::LeaveGroup,
        ApiKey::ListOffsets,
        ApiKey::SaslHandshake,
        ApiKey::SaslAuthenticate,
    ];
    // The group-listing and share-group scenarios run Java's tools only.
    if client_prefix.starts_with("java-") {
        wanted.extend([
            ApiKey::ListGroups,
            ApiKey::DescribeGroups,
            ApiKey::IncrementalAlterConfigs,
            ApiKey::ShareGroupHeartbeat,
            ApiKey::ShareGroupDescribe,
            ApiKey::ShareFetch,
            ApiKey::ShareAcknowledge,
            ApiKey::DescribeShareGroupOffsets,
        ]);
    }
    for api in wanted {
        for request in [true, false] {
            assert!(
                seen.contains(&(api, request)),
                "{client_prefix}: no captured {} {}",
                api.name(),
                if request { "request" } else { "response" }
            );
        }
    }
    let all: BTreeSet<String> = Compression::ALL
        .iter()
        .map(|k| k.name().to_string())
        .collect();
    assert_eq!(codecs, all, "{client_prefix}: Fetch responses per codec");
    // The capture keeps every Fetch response that brought a partition's records, so each record
    // the producer wrote shows up exactly once per client.
    let total: usize = log.values().map(BTreeMap::len).sum();
    assert_eq!(
        fetched, total,
        "{client_prefix}: records seen in Fetch responses"
    );
    eprintln!(
        "{client_prefix}: {} files, all {total} records fetched",
        files.len()
    );
    for ((api, version), count) in per_version {
        eprintln!("{client_prefix}: {api} v{version}: {count} files");
    }
}

#[test]
fn java_client_frames_decode_and_reencode_byte_for_byte() {
    check_client("java-");
}

#[test]
fn librdkafka_frames_decode_and_reencode_byte_for_byte() {
    check_client("librdkafka-");
}

/// Each side of every captured exchange is there: a request file has its response file.
#[test]
fn every_request_has_its_response() {
    for client in ["java-", "librdkafka-"] {
        let files = captured(client);
        let names: BTreeSet<&str> = files.iter().map(|c| c.name.as_str()).collect();
        for c in &files {
            if c.is_request() {
                let response = c.name.replacen("-request", "-response", 1);
                assert!(
                    names.contains(response.as_str()),
                    "{}: no {response}",
                    c.name
                );
            }
        }
    }
}
