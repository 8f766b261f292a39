//! The codec against a real Kafka broker (the shared cluster of `scripts/kafka`): ApiVersions at
//! every version we implement, Metadata, CreateTopics, Produce then Fetch for every compression
//! codec, batches written by the Java producer with each `compression.type` decoded to exactly
//! the records it sent, and a KIP-848 member's heartbeats and describe (`consumer_group`).
//!
//! The crate is sans-I/O; this test carries its own few lines of blocking socket code (std only)
//! so the bytes it sends and reads are exactly what the codec makes of them.

#[path = "real_broker/consumer_group.rs"]
mod consumer_group;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mooring_testkit::{unique, Cluster};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::frame::{decode_response, encode_request, ApiKey};
use mooring_wire::messages::api_versions::ApiVersionsRequest;
use mooring_wire::messages::create_topics::{CreatableTopic, CreateTopicsRequest};
use mooring_wire::messages::fetch::{FetchPartition, FetchRequest, FetchTopic};
use mooring_wire::messages::metadata::{MetadataRequest, MetadataRequestTopic};
use mooring_wire::messages::produce::{PartitionProduceData, ProduceRequest, TopicProduceData};
use mooring_wire::messages::{Message, Request};
use mooring_wire::primitives::Uuid;
use mooring_wire::records::{BatchItem, BatchReader, Compression, RawBatch, Record, RecordBatch};

/// One blocking connection: one request in flight at a time.
struct Conn {
    stream: TcpStream,
    correlation_id: i32,
    /// api key → (broker min, broker max), from ApiVersions.
    broker_versions: BTreeMap<i16, (i16, i16)>,
}

impl Conn {
    fn connect(cluster: &Cluster) -> Conn {
        let addr = cluster.node_address(1);
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("read timeout");
        let mut conn = Conn {
            stream,
            correlation_id: 0,
            broker_versions: BTreeMap::new(),
        };
        let versions = conn.call(&api_versions_request(3), 3);
        assert_eq!(versions.error_code, 0);
        conn.broker_versions = versions
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect();
        conn
    }

    /// The highest version both the broker and this crate implement.
    fn version<R: Request>(&self) -> i16 {
        let (min, max) = self.broker_versions[&R::API_KEY];
        let v = max.min(R::MAX_VERSION);
        assert!(
            v >= min.max(R::MIN_VERSION),
            "{} has no common version",
            R::NAME
        );
        v
    }

    fn call<R: Request>(&mut self, request: &R, version: i16) -> R::Response {
        self.call_answered_at(request, version, version)
    }

    /// Sends `request` at `version` and decodes the answer at `answered_at` (ApiVersions at a
    /// version the broker lacks is answered at v0, KIP-511).
    fn call_answered_at<R: Request>(
        &mut self,
        request: &R,
        version: i16,
        answered_at: i16,
    ) -> R::Response {
        self.correlation_id += 1;
        let mut buf = BytesMut::new();
        encode_request(
            &mut buf,
            request,
            version,
            self.correlation_id,
            Some("mooring-wire-test"),
        )
        .unwrap_or_else(|e| panic!("encode {} v{version}: {e}", R::NAME));
        self.stream.write_all(&buf).expect("send request");
        let mut size = [0u8; 4];
        self.stream.read_exact(&mut size).expect("read frame size");
        let mut body = vec![0u8; i32::from_be_bytes(size) as usize];
        self.stream.read_exact(&mut body).expect("read frame body");
        let (header, response) = decode_response::<R::Response>(&Bytes::from(body), answered_at)
            .unwrap_or_else(|e| panic!("decode {} v{version} (as v{answered_at}): {e}", R::NAME));
        assert_eq!(header.correlation_id, self.correlation_id);
        response
    }
}

fn api_versions_request(version: i16) -> ApiVersionsRequest {
    let mut request = ApiVersionsRequest::default();
    if version >= 3 {
        request.client_software_name = "mooring-wire-test".into();
        request.client_software_version = env!("CARGO_PKG_VERSION").into();
    }
    request
}

#[test]
fn api_versions_at_every_version_we_implement() {
    let cluster = Cluster::shared();
    let mut conn = Conn::connect(&cluster);
    let (broker_min, broker_max) = conn.broker_versions[&ApiKey::ApiVersions.code()];
    for version in ApiVersionsRequest::MIN_VERSION..=ApiVersionsRequest::MAX_VERSION {
        let known = (broker_min..=broker_max).contains(&version);
        let answered_at = if known { version } else { 0 };
        let response = conn.call_answered_at(&api_versions_request(version), version, answered_at);
        if known {
            assert_eq!(response.error_code, 0, "ApiVersions v{version}");
            assert!(response
                .api_keys
                .iter()
                .any(|k| k.api_key == ApiKey::JoinGroup.code()));
        } else {
            // A version the broker lacks is answered at v0 with UNSUPPORTED_VERSION (KIP-511).
            assert_eq!(
                ErrorCode::from(response.error_code),
                ErrorCode::UnsupportedVersion
            );
        }
    }
    // Every API this crate implements has a version in common with the broker (4.x, or 3.x),
    // but for the KIP-848 ones, which Kafka before 4.0 offers as a preview if at all (3.7 has no
    // ConsumerGroupDescribe), and the KIP-932 ones, which a broker offers only with share groups
    // on (never before 4.x here), and the KIP-714 ones, which a broker offers only with a client
    // telemetry receiver (the shared cluster has none; crates/consumer/tests/metrics_push.rs
    // starts one that has): those must have a common version where the broker offers them.
    let kafka_4 = cluster.var("MOORING_KAFKA_VERSION").starts_with("4.");
    let share_groups = cluster.has_share_groups();
    for api in ApiKey::ALL {
        let optional = match api {
            ApiKey::ConsumerGroupHeartbeat | ApiKey::ConsumerGroupDescribe => !kafka_4,
            ApiKey::ShareGroupHeartbeat
            | ApiKey::ShareGroupDescribe
            | ApiKey::ShareFetch
            | ApiKey::ShareAcknowledge
            | ApiKey::DescribeShareGroupOffsets => !share_groups,
            ApiKey::GetTelemetrySubscriptions | ApiKey::PushTelemetry => true,
            _ => false,
        };
        let Some(&(min, max)) = conn.broker_versions.get(&api.code()) else {
            assert!(optional, "the broker does not offer {}", api.name());
            continue;
        };
        assert!(
            min.max(api.min_version()) <= max.min(api.max_version()),
            "{} broker v{min}-{max}, ours v{}-{}",
            api.name(),
            api.min_version(),
            api.max_version()
        );
    }
}

/// Creates a topic with CreateTopics at the highest common version; returns its id.
fn create_topic(conn: &mut Conn, name: &str, partitions: i32) -> Uuid {
    let request = CreateTopicsRequest {
        topics: vec![CreatableTopic {
            name: name.into(),
            num_partitions: partitions,
            replication_factor: 1,
            ..Default::default()
        }],
        timeout_ms: 30_000,
        ..Default::default()
    };
    let version = conn.version::<CreateTopicsRequest>();
    let response = conn.call(&request, version);
    let topic = &response.topics[0];
    assert_eq!(topic.name, name);
    assert_eq!(
        topic.error_code, 0,
        "CreateTopics: {:?}",
        topic.error_message
    );
    assert_eq!(topic.num_partitions, partitions);
    assert!(!topic.topic_id.is_nil());
    let topic_id = topic.topic_id;
    wait_until_served(conn, name, topic_id, partitions);
    topic_id
}

/// CreateTopics answers once the controller has the topic; the broker's own metadata cache (which
/// Produce and Fetch consult) follows a moment later. Wait until the broker's Metadata names the
/// topic by id with a leader for every partition, as a client does before producing.
fn wait_until_served(conn: &mut Conn, name: &str, topic_id: Uuid, partitions: i32) {
    let version = conn.version::<MetadataRequest>();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let request = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                name: Some(name.into()),
                ..Default::default()
            }]),
            allow_auto_topic_creation: false,
            ..Default::default()
        };
        let response = conn.call(&request, version);
        let served = response.topics.iter().any(|t| {
            t.error_code == 0
                && t.topic_id == topic_id
                && t.partitions.len() == partitions as usize
                && t.partitions.iter().all(|p| p.leader_id >= 0)
        });
        if served {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{name} not served by the broker 30 s after CreateTopics"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn create_topics_then_metadata_at_every_version() {
    let cluster = Cluster::shared();
    let mut conn = Conn::connect(&cluster);
    let name = unique("wire-meta");
    let topic_id = create_topic(&mut conn, &name, 3);
    let (broker_min, broker_max) = conn.broker_versions[&ApiKey::Metadata.code()];
    let from = broker_min.max(MetadataRequest::MIN_VERSION);
    let to = broker_max.min(MetadataRequest::MAX_VERSION);
    for version in from..=to {
        let request = MetadataRequest {
            topics: Some(vec![MetadataRequestTopic {
                name: Some(name.clone()),
                ..Default::default()
            }]),
            // Absent before v4 (where the broker may auto-create); the encoder refuses to drop it.
            allow_auto_topic_creation: version < 4,
            ..Default::default()
        };
        let response = conn.call(&request, version);
        assert_eq!(response.brokers.len(), 1, "Metadata v{version}");
        assert_eq!(response.brokers[0].host, "127.0.0.1");
        let topic = &response.topics[0];
        assert_eq!(topic.error_code, 0, "Metadata v{version}");
        assert_eq!(topic.name.as_deref(), Some(name.as_str()));
        assert_eq!(topic.partitions.len(), 3, "Metadata v{version}");
        assert!(topic.partitions.iter().all(|p| p.leader_id == 1));
        if version >= 10 {
            assert_eq!(
                topic.topic_id, topic_id,
                "topic ids arrived in Metadata v10"
            );
        }
    }
}

fn records(n: usize) -> Vec<(Option<Bytes>, Option<Bytes>)> {
    (0..n)
        .map(|i| {
            let key = (i % 3 != 0).then(|| Bytes::from(format!("key-{i}")));
            let value =
                (i % 7 != 6).then(|| Bytes::from(format!("value-{i}-{}", "x".repeat(i % 50))));
            (key, value)
        })
        .collect()
}

/// Fetches partition 0 of a topic from offset 0 at `version` (by name before v13, by topic id
/// from v13) and returns its complete batches.
fn fetch_batches(conn: &mut Conn, name: &str, topic_id: Uuid, version: i16) -> Vec<RawBatch> {
    let request = FetchRequest {
        replica_id: -1,
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 1 << 20,
        session_epoch: -1,
        topics: vec![FetchTopic {
            topic: if version < 13 {
                name.into()
            } else {
                String::new()
            },
            topic_id: if version >= 13 { topic_id } else { Uuid::NIL },
            partitions: vec![FetchPartition {
                partition: 0,
                fetch_offset: 0,
                partition_max_bytes: 1 << 20,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let response = conn.call(&request, version);
    assert_eq!(response.error_code, 0, "Fetch v{version}");
    let partition = &response.responses[0].partitions[0];
    assert_eq!(partition.error_code, 0, "Fetch v{version} partition error");
    let mut out = Vec::new();
    let records = partition.records.clone().unwrap_or_default();
    for item in BatchReader::new(records).with_context(name, 0) {
        match item.expect("batch") {
            BatchItem::Batch(raw) => out.push(raw),
            BatchItem::Incomplete { .. } => break,
        }
    }
    out
}

/// Every record of partition 0, from offset 0.
fn fetch_all(conn: &mut Conn, name: &str, topic_id: Uuid, version: i16) -> Vec<Record> {
    fetch_batches(conn, name, topic_id, version)
        .iter()
        .flat_map(|raw| raw.records().expect("records"))
        .collect()
}

#[test]
fn produce_then_fetch_round_trip_for_each_compression() {
    let cluster = Cluster::shared();
    let mut conn = Conn::connect(&cluster);
    let produce_version = conn.version::<ProduceRequest>();
    let fetch_version = conn.version::<FetchRequest>();
    for codec in [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let name = unique(&format!("wire-{}", codec.name()));
        let topic_id = create_topic(&mut conn, &name, 1);
        let sent = records(200);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        let mut builder = RecordBatch::builder(0).compression(codec);
        for (key, value) in &sent {
            builder = builder.record(now, key.clone(), value.clone(), vec![]);
        }
        let mut batch = BytesMut::new();
        builder.build().encode(&mut batch).expect("encode batch");
        let request = ProduceRequest {
            acks: -1,
            timeout_ms: 30_000,
            topic_data: vec![TopicProduceData {
                name: if produce_version < 13 {
                    name.clone()
                } else {
                    String::new()
                },
                topic_id: if produce_version >= 13 {
                    topic_id
                } else {
                    Uuid::NIL
                },
                partition_data: vec![PartitionProduceData {
                    index: 0,
                    records: Some(batch.freeze()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        };
        // The broker's metadata may name itself leader a moment before its replica manager
        // leads the partition (seen on 3.7): NOT_LEADER_OR_FOLLOWER is retried, as a producer
        // does, within a deadline.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let response = loop {
            let response = conn.call(&request, produce_version);
            let code = response.responses[0].partition_responses[0].error_code;
            if ErrorCode::from(code) != ErrorCode::NotLeaderOrFollower
                || std::time::Instant::now() > deadline
            {
                break response;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let partition = &response.responses[0].partition_responses[0];
        assert_eq!(
            partition.error_code, 0,
            "Produce {codec:?}: {:?}",
            partition.error_message
        );
        assert_eq!(partition.base_offset, 0);

        // Read back at the newest Fetch (topic ids) and at v12 (topic names).
        for version in [fetch_version, 12] {
            let got = fetch_all(&mut conn, &name, topic_id, version);
            assert_eq!(got.len(), sent.len(), "{codec:?} Fetch v{version}");
            for (i, (record, (key, value))) in got.iter().zip(&sent).enumerate() {
                assert_eq!(record.offset, i as i64);
                assert_eq!(&record.key, key, "{codec:?} record {i} key");
                assert_eq!(&record.value, value, "{codec:?} record {i} value");
            }
        }
    }
}

#[test]
fn java_producer_batches_decode_to_the_records_it_sent() {
    let cluster = Cluster::shared();
    let mut conn = Conn::connect(&cluster);
    let fetch_version = conn.version::<FetchRequest>();
    for (codec, expected) in [
        ("none", Compression::None),
        ("gzip", Compression::Gzip),
        ("snappy", Compression::Snappy),
        ("lz4", Compression::Lz4),
        ("zstd", Compression::Zstd),
    ] {
        let name = unique(&format!("java-{codec}"));
        let topic_id = create_topic(&mut conn, &name, 1);
        let acked = cluster.produce_verifiable(
            &name,
            300,
            5,
            &[("compression.type", codec), ("linger.ms", "20")],
        );
        assert_eq!(acked, 300, "VerifiableProducer acks");

        // Batch by batch, so the compression attribute of what Java wrote is checked too.
        let mut values = Vec::new();
        for raw in fetch_batches(&mut conn, &name, topic_id, fetch_version) {
            assert_eq!(
                raw.header().attributes.compression(),
                Some(expected),
                "{codec}"
            );
            for record in raw.records().expect("records") {
                let offset = record.offset;
                let value =
                    String::from_utf8(record.value.expect("value").to_vec()).expect("utf-8");
                // VerifiableProducer sends "0", "1", ... with keys cycling "0".."4".
                assert_eq!(
                    value,
                    offset.to_string(),
                    "{codec}: value at offset {offset}"
                );
                let key = String::from_utf8(record.key.expect("key").to_vec()).expect("utf-8");
                assert_eq!(
                    key,
                    (offset % 5).to_string(),
                    "{codec}: key at offset {offset}"
                );
                values.push(offset);
            }
        }
        assert_eq!(
            values,
            (0..300).collect::<Vec<i64>>(),
            "{codec}: every record, in order"
        );
    }
}
