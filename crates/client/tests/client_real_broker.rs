//! The network client against the real broker (`scripts/kafka`): metadata, pipelining,
//! cancellation, timeouts, coordinator discovery and failover, admin look-ups on groups made by
//! Kafka's own tools, TLS and SASL. Run with the shared cluster up:
//! `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-client --test client_real_broker`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::time::Duration;

use mooring_client::config::{ClientConfig, SecurityProtocol};
use mooring_client::{Client, Error};
use mooring_testkit::{unique, Cluster};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::describe_groups::DescribeGroupsRequest;
use mooring_wire::messages::fetch::{FetchPartition, FetchRequest, FetchTopic};
use mooring_wire::messages::metadata::MetadataRequestTopic;
use mooring_wire::messages::{ApiVersionsRequest, MetadataRequest};
use mooring_wire::primitives::Uuid;

fn config(cluster: &Cluster) -> ClientConfig {
    let mut config = ClientConfig::new(cluster.bootstrap().split(','));
    config.client_id = "mooring-client-test".into();
    config
}

async fn client(cluster: &Cluster) -> Client {
    Client::connect(config(cluster)).await.unwrap()
}

/// A Fetch that the broker holds for `wait_ms` (an empty partition, min_bytes 1).
fn slow_fetch(version: i16, topic: &str, topic_id: Uuid, wait_ms: i32) -> FetchRequest {
    FetchRequest {
        replica_id: -1,
        max_wait_ms: wait_ms,
        min_bytes: 1,
        max_bytes: 1 << 20,
        session_epoch: -1,
        topics: vec![FetchTopic {
            topic: if version < 13 {
                topic.into()
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
    }
}

fn metadata_for(version: i16, topic: &str) -> MetadataRequest {
    MetadataRequest {
        topics: Some(vec![MetadataRequestTopic {
            name: Some(topic.into()),
            ..Default::default()
        }]),
        allow_auto_topic_creation: version < 4,
        ..Default::default()
    }
}

#[tokio::test]
async fn metadata_of_a_created_topic() {
    let cluster = Cluster::shared();
    let topic = unique("cl-meta");
    cluster.create_topic(&topic, 3);
    let client = client(&cluster).await;
    let metadata = client
        .refresh_topics(std::slice::from_ref(&topic))
        .await
        .unwrap();
    let info = &metadata.topics[&topic];
    assert_eq!(info.partitions.len(), 3);
    assert!(!info.id.is_nil(), "topic id (Metadata v10+)");
    assert_eq!(metadata.brokers.len(), 1);
    assert_eq!(metadata.brokers[&1].host, "127.0.0.1");
    for p in 0..3 {
        let (leader, epoch) = client.leader_for(&topic, p).unwrap();
        assert_eq!(leader, 1);
        assert!(epoch >= 0);
    }
    let all = client.refresh_metadata().await.unwrap();
    assert!(all.topics.contains_key(&topic));
    let pattern = regex::Regex::new(&format!("{}|nothing-else", regex::escape(&topic))).unwrap();
    assert_eq!(client.topics_matching(&pattern), vec![topic.clone()]);
    let counts = client
        .partition_counts(&[topic.clone(), unique("absent")])
        .await
        .unwrap();
    assert_eq!(counts.into_iter().collect::<Vec<_>>(), vec![(topic, 3)]);

    // The versions negotiated with the broker: the highest both sides implement.
    let conn = client.connection(1).await.unwrap();
    let versions: Vec<String> = [
        ("ApiVersions", conn.version::<ApiVersionsRequest>()),
        ("Metadata", conn.version::<MetadataRequest>()),
        (
            "FindCoordinator",
            conn.version::<mooring_wire::messages::FindCoordinatorRequest>(),
        ),
        (
            "JoinGroup",
            conn.version::<mooring_wire::messages::JoinGroupRequest>(),
        ),
        (
            "SyncGroup",
            conn.version::<mooring_wire::messages::SyncGroupRequest>(),
        ),
        (
            "Heartbeat",
            conn.version::<mooring_wire::messages::HeartbeatRequest>(),
        ),
        (
            "OffsetCommit",
            conn.version::<mooring_wire::messages::OffsetCommitRequest>(),
        ),
        (
            "OffsetFetch",
            conn.version::<mooring_wire::messages::OffsetFetchRequest>(),
        ),
        (
            "ListOffsets",
            conn.version::<mooring_wire::messages::ListOffsetsRequest>(),
        ),
        ("DescribeGroups", conn.version::<DescribeGroupsRequest>()),
        ("Fetch", conn.version::<FetchRequest>()),
    ]
    .into_iter()
    .map(|(name, v)| format!("{name} v{}", v.unwrap()))
    .collect();
    eprintln!("negotiated: {}", versions.join(", "));
}

#[tokio::test]
async fn many_pipelined_requests_on_one_connection() {
    let cluster = Cluster::shared();
    let client = client(&cluster).await;
    let conn = client.connection(1).await.unwrap();
    let attempts = client.connection_attempts();
    let version = conn.version::<MetadataRequest>().unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..300 {
        let conn = conn.clone();
        tasks.spawn(async move {
            let name = format!("cl-pipe-absent-{i}");
            let response = conn.send(&metadata_for(version, &name)).await.unwrap();
            (name, response)
        });
    }
    let mut answered = 0;
    while let Some(joined) = tasks.join_next().await {
        let (name, response) = joined.unwrap();
        assert_eq!(response.topics.len(), 1);
        assert_eq!(response.topics[0].name.as_deref(), Some(name.as_str()));
        assert_eq!(
            ErrorCode::from(response.topics[0].error_code),
            ErrorCode::UnknownTopicOrPartition
        );
        answered += 1;
    }
    assert_eq!(answered, 300);
    assert!(conn.is_alive());
    assert_eq!(
        client.connection_attempts(),
        attempts,
        "one connection carried them all"
    );
}

#[tokio::test]
async fn a_dropped_request_does_not_break_the_connection() {
    let cluster = Cluster::shared();
    let topic = unique("cl-drop");
    cluster.create_topic(&topic, 1);
    let client = client(&cluster).await;
    let metadata = client
        .refresh_topics(std::slice::from_ref(&topic))
        .await
        .unwrap();
    let topic_id = metadata.topics[&topic].id;
    let conn = client.connection(1).await.unwrap();
    let attempts = client.connection_attempts();
    let fetch_version = conn.version::<FetchRequest>().unwrap();
    let meta_version = conn.version::<MetadataRequest>().unwrap();
    for _ in 0..5 {
        // The broker holds the Fetch for a second; we give up after 50 ms.
        let fetch = slow_fetch(fetch_version, &topic, topic_id, 1_000);
        let dropped = tokio::time::timeout(Duration::from_millis(50), conn.send(&fetch)).await;
        assert!(dropped.is_err(), "the fetch should still be waiting");
    }
    // Requests sent meanwhile are answered correctly, and so are those after the abandoned
    // responses arrived and were discarded.
    let response = conn
        .send(&metadata_for(meta_version, &topic))
        .await
        .unwrap();
    assert_eq!(response.topics[0].name.as_deref(), Some(topic.as_str()));
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let response = conn
        .send(&metadata_for(meta_version, &topic))
        .await
        .unwrap();
    assert_eq!(response.topics[0].error_code, 0);
    assert!(conn.is_alive());
    assert_eq!(client.connection_attempts(), attempts);
}

#[tokio::test]
async fn request_timeout() {
    let cluster = Cluster::shared();
    let topic = unique("cl-timeout");
    cluster.create_topic(&topic, 1);
    let mut config = config(&cluster);
    config.request_timeout = Duration::from_millis(300);
    let client = Client::connect(config).await.unwrap();
    let metadata = client
        .refresh_topics(std::slice::from_ref(&topic))
        .await
        .unwrap();
    let topic_id = metadata.topics[&topic].id;
    let conn = client.connection(1).await.unwrap();
    let version = conn.version::<FetchRequest>().unwrap();
    let started = std::time::Instant::now();
    let err = conn
        .send(&slow_fetch(version, &topic, topic_id, 2_000))
        .await
        .unwrap_err();
    assert!(
        matches!(err, Error::Timeout { api: "FetchRequest", after, .. } if after == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(1_500));
    assert!(err.is_retriable());
    // As in Java, the timed-out connection is closed (every later request would queue behind the
    // held Fetch), and the next request reconnects.
    assert!(!conn.is_alive());
    let attempts = client.connection_attempts();
    let fresh = client.connection(1).await.unwrap();
    assert_eq!(client.connection_attempts(), attempts + 1);
    let version = fresh.version::<MetadataRequest>().unwrap();
    let response = fresh.send(&metadata_for(version, &topic)).await.unwrap();
    assert_eq!(response.topics[0].error_code, 0);
}

#[tokio::test]
async fn coordinator_discovery_and_group_transport() {
    let cluster = Cluster::shared();
    let client = client(&cluster).await;
    let group = unique("cl-coord");
    let node = client.find_coordinator(&group).await.unwrap();
    assert_eq!(node, 1);
    assert_eq!(client.cached_coordinator(&group), Some(1));
    let response = client
        .call_coordinator(&group, |_version| DescribeGroupsRequest {
            groups: vec![group.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(response.groups.len(), 1);
    assert_eq!(response.groups[0].group_id, group);
    assert_eq!(response.groups[0].group_state, "Dead");
    // Kafka 4 answers GROUP_ID_NOT_FOUND (DescribeGroups v6) for a group that does not exist.
    let code = ErrorCode::from(response.groups[0].error_code);
    assert!(
        matches!(code, ErrorCode::None | ErrorCode::GroupIdNotFound),
        "{code}"
    );
    client.forget_coordinator(&group);
    assert_eq!(client.cached_coordinator(&group), None);
    // The next call rediscovers it.
    let response = client
        .call_coordinator(&group, |_| DescribeGroupsRequest {
            groups: vec![group.clone()],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(response.groups[0].group_id, group);
    assert_eq!(client.cached_coordinator(&group), Some(1));
}

#[tokio::test]
async fn a_dead_broker_is_a_typed_error() {
    // Port 1 on loopback: nothing listens there.
    let mut config = ClientConfig::new(["127.0.0.1:1"]);
    config.reconnect_backoff = Duration::from_millis(10);
    config.reconnect_backoff_max = Duration::from_millis(40);
    let client = Client::new(config).unwrap();
    for _ in 0..3 {
        let err = client.refresh_metadata().await.unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err:?}");
        assert!(err.is_retriable());
    }
    let err = Client::connect(ClientConfig::new(["127.0.0.1:1"]))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");
    // A bad address is a config error, not a panic.
    let err = Client::new(ClientConfig::new(["no-port"])).unwrap_err();
    assert!(matches!(err, Error::Config { .. }), "{err:?}");
    let _ = SecurityProtocol::Plaintext;
}

// ---- TLS ---------------------------------------------------------------------------------------

fn props(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// A name this machine resolves to 127.0.0.1 that the broker's certificate (127.0.0.1, localhost)
/// does not list.
/// A name that reaches the broker but that its certificate does not name: `scripts/kafka` issues
/// the test certificate for IP 127.0.0.1 only.
fn other_loopback_name() -> String {
    "localhost".to_string()
}

#[tokio::test]
async fn tls_with_the_ca_and_with_a_client_certificate() {
    let cluster = Cluster::shared();
    let ssl = cluster.var("MOORING_BOOTSTRAP_SSL");
    let ca = cluster.var("MOORING_SSL_CA");
    let config = ClientConfig::from_properties(props(&[
        ("bootstrap.servers", ssl),
        ("security.protocol", "SSL"),
        ("ssl.ca.location", ca),
    ]))
    .unwrap();
    assert_eq!(config.security_protocol, SecurityProtocol::Ssl);
    let client = Client::connect(config).await.unwrap();
    let metadata = client.refresh_metadata().await.unwrap();
    assert_eq!(
        metadata.brokers[&1].port.to_string(),
        ssl.rsplit(':').next().unwrap()
    );
    assert_eq!(client.find_coordinator(&unique("cl-tls")).await.unwrap(), 1);

    let config = ClientConfig::from_properties(props(&[
        ("bootstrap.servers", ssl),
        ("security.protocol", "SSL"),
        ("ssl.ca.location", ca),
        (
            "ssl.certificate.location",
            cluster.var("MOORING_SSL_CLIENT_CERT"),
        ),
        ("ssl.key.location", cluster.var("MOORING_SSL_CLIENT_KEY")),
    ]))
    .unwrap();
    let client = Client::connect(config).await.unwrap();
    client.refresh_metadata().await.unwrap();
}

#[tokio::test]
async fn tls_with_a_wrong_ca_or_host_name_fails() {
    let cluster = Cluster::shared();
    let ssl = cluster.var("MOORING_BOOTSTRAP_SSL");
    // The client certificate is no CA of the broker's certificate.
    let config = ClientConfig::from_properties(props(&[
        ("bootstrap.servers", ssl),
        ("security.protocol", "SSL"),
        ("ssl.ca.location", cluster.var("MOORING_SSL_CLIENT_CERT")),
    ]))
    .unwrap();
    let client = Client::new(config).unwrap();
    let err = client.refresh_metadata().await.unwrap_err();
    assert!(matches!(err, Error::Tls { .. }), "{err:?}");
    assert!(err.to_string().contains("UnknownIssuer"), "{err}");
    assert!(err.is_fatal() && !err.is_retriable(), "{err:?}");
    assert!(err.to_string().contains("User:ANONYMOUS"), "{err}");
    // Remembered: later calls get it at once, without a handshake again.
    for _ in 0..3 {
        let again = client.find_coordinator("g").await.unwrap_err();
        assert!(matches!(again, Error::Tls { .. }), "{again:?}");
    }
    assert_eq!(client.connection_attempts(), 1);

    // The right CA, but a host name the certificate does not name.
    let port = ssl.rsplit(':').next().unwrap();
    let wrong_name = format!("{}:{port}", other_loopback_name());
    let config = ClientConfig::from_properties(props(&[
        ("bootstrap.servers", &wrong_name),
        ("security.protocol", "SSL"),
        ("ssl.ca.location", cluster.var("MOORING_SSL_CA")),
    ]))
    .unwrap();
    let err = Client::connect(config).await.unwrap_err();
    assert!(matches!(err, Error::Tls { .. }), "{err:?}");
    assert!(err.to_string().contains("not valid for name"), "{err}");

    // With hostname verification off (Java: an empty endpoint identification algorithm), the
    // same name is accepted: the chain is still checked.
    let config = ClientConfig::from_properties(props(&[
        ("bootstrap.servers", &wrong_name),
        ("security.protocol", "SSL"),
        ("ssl.ca.location", cluster.var("MOORING_SSL_CA")),
        ("ssl.endpoint.identification.algorithm", ""),
    ]))
    .unwrap();
    Client::connect(config).await.unwrap();

    // A missing CA file is a config error at construction, naming the key.
    let err = Client::new(
        ClientConfig::from_properties(props(&[
            ("bootstrap.servers", ssl),
            ("security.protocol", "SSL"),
            ("ssl.ca.location", "/nonexistent/ca.pem"),
        ]))
        .unwrap(),
    )
    .unwrap_err();
    assert!(
        matches!(&err, Error::Config { key, .. } if key == "ssl.ca.location"),
        "{err:?}"
    );
}

// ---- SASL --------------------------------------------------------------------------------------

fn sasl_config(cluster: &Cluster, mechanism: &str, password: &str) -> ClientConfig {
    ClientConfig::from_properties(props(&[
        ("bootstrap.servers", cluster.var("MOORING_BOOTSTRAP_SASL")),
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", mechanism),
        ("sasl.username", cluster.var("MOORING_SASL_USER")),
        ("sasl.password", password),
        ("reconnect.backoff.ms", "10"),
        ("reconnect.backoff.max.ms", "20"),
    ]))
    .unwrap()
}

#[tokio::test]
async fn sasl_mechanisms_with_the_right_and_a_wrong_password() {
    let cluster = Cluster::shared();
    let password = cluster.var("MOORING_SASL_PASSWORD");
    for mechanism in ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"] {
        let client = Client::connect(sasl_config(&cluster, mechanism, password))
            .await
            .unwrap_or_else(|e| panic!("{mechanism}: {e}"));
        let group = unique("cl-sasl");
        assert_eq!(
            client.find_coordinator(&group).await.unwrap(),
            1,
            "{mechanism}"
        );

        let config = sasl_config(&cluster, mechanism, "not-the-password");
        assert!(!format!("{config:?}").contains("not-the-password"));
        let client = Client::new(config).unwrap();
        let started = std::time::Instant::now();
        let err = client.refresh_metadata().await.unwrap_err();
        assert!(
            matches!(&err, Error::Authentication { mechanism: m, principal, .. }
                if m == mechanism && principal == "User:alice"),
            "{mechanism}: {err:?}"
        );
        assert!(!err.is_retriable() && err.is_fatal());
        assert!(!err.to_string().contains("not-the-password"));
        assert!(started.elapsed() < Duration::from_secs(5), "fails fast");
        assert_eq!(client.connection_attempts(), 1, "{mechanism}");
        // No reconnect storm: later calls get the same error without connecting again.
        for _ in 0..3 {
            let again = client.refresh_metadata().await.unwrap_err();
            assert!(matches!(again, Error::Authentication { .. }), "{again:?}");
            let again = client.find_coordinator("g").await.unwrap_err();
            assert!(matches!(again, Error::Authentication { .. }), "{again:?}");
        }
        assert_eq!(client.connection_attempts(), 1, "{mechanism}");
    }
}

#[tokio::test]
async fn oauthbearer_not_enabled_is_an_authentication_error() {
    let cluster = Cluster::shared();
    let config = ClientConfig::from_properties(props(&[
        ("bootstrap.servers", cluster.var("MOORING_BOOTSTRAP_SASL")),
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", "OAUTHBEARER"),
    ]));
    // Without a token provider the config is refused.
    assert!(matches!(config, Err(Error::Config { .. })));
    let mut config = sasl_config(&cluster, "PLAIN", "x");
    config.sasl.mechanism = Some(mooring_client::config::SaslMechanism::OAuthBearer);
    let config = config.with_token_provider(|| Ok("header.payload.sig".into()));
    let err = Client::connect(config).await.unwrap_err();
    let Error::Authentication { message, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        message.contains("SCRAM-SHA-512"),
        "lists what the broker offers: {message}"
    );
}

// ---- admin look-ups on a group of Kafka's own tools ----------------------------------------------

/// Kills the child process when dropped, so a failed assertion leaves no Java consumer behind.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn admin_lookups_on_a_java_consumer_group() {
    use mooring_client::OffsetSpec;
    use mooring_client::TopicPartition;
    use std::process::{Command, Stdio};

    let cluster = Cluster::shared();
    let topic = unique("cl-admin");
    let group = unique("cl-admin");
    cluster.create_topic(&topic, 3);
    let produced = cluster.produce_verifiable(&topic, 30, 3, &[]);
    assert_eq!(produced, 30);
    let _consumer = KillOnDrop(
        Command::new(mooring_testkit::kafka_script())
            .args(["--cluster", cluster.name(), "tool", "VerifiableConsumer"])
            .args(["--bootstrap-server", cluster.bootstrap(), "--topic", &topic])
            .args(["--group-id", &group, "--group-instance-id", "static-1"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start VerifiableConsumer"),
    );
    let client = client(&cluster).await;
    let all: Vec<TopicPartition> = (0..3)
        .map(|p| TopicPartition::new(topic.clone(), p))
        .collect();

    // Wait until the Java member is Stable and has committed everything it consumed.
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    let (description, committed) = loop {
        let description = client.describe_group(&group).await.unwrap();
        let committed = client.committed_offsets(&group, None).await.unwrap();
        let total: i64 = committed.values().map(|c| c.offset).sum();
        if description.state == "Stable" && total == 30 {
            break (description, committed);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "group never Stable with 30 committed: {description:?} {committed:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(description.protocol_type, "consumer");
    assert_eq!(description.protocol, "range");
    assert_eq!(description.members.len(), 1);
    let member = &description.members[0];
    assert_eq!(member.group_instance_id.as_deref(), Some("static-1"));
    let assignment = member.assignment.as_ref().expect("decoded assignment");
    assert_eq!(assignment.partitions.len(), 1);
    assert_eq!(assignment.partitions[0].topic, topic);
    let mut assigned = assignment.partitions[0].partitions.clone();
    assigned.sort_unstable();
    assert_eq!(assigned, vec![0, 1, 2]);
    let subscription = member.subscription.as_ref().expect("decoded subscription");
    assert_eq!(subscription.topics, vec![topic.clone()]);
    // The same as Kafka's own ConsumerGroupCommand says.
    let tool = cluster.describe_members(&group);
    assert_eq!(tool.len(), 1);
    assert_eq!(tool[0].consumer_id, member.member_id);
    assert_eq!(tool[0].client_id, member.client_id);
    assert_eq!(tool[0].assignment.get(&topic), Some(&vec![0, 1, 2]));

    let listed = client.list_groups().await.unwrap();
    let ours = listed
        .iter()
        .find(|g| g.group_id == group)
        .expect("group listed");
    assert_eq!(ours.protocol_type, "consumer");

    // Committed offsets equal the log end offsets Kafka reports: the consumer read everything.
    let end = cluster.end_offsets(&topic);
    // (VerifiableConsumer commits only the partitions it read records from.)
    for tp in &all {
        let end = end[&tp.partition];
        assert_eq!(
            committed.get(tp).map(|c| c.offset),
            (end > 0).then_some(end),
            "{tp}"
        );
    }
    let first: Vec<TopicPartition> = committed.keys().take(1).cloned().collect();
    let some = client
        .committed_offsets(&group, Some(&first))
        .await
        .unwrap();
    assert_eq!(some.keys().cloned().collect::<Vec<_>>(), first);

    let latest = client.list_offsets(&all, OffsetSpec::Latest).await.unwrap();
    let earliest = client
        .list_offsets(&all, OffsetSpec::Earliest)
        .await
        .unwrap();
    let by_time = client
        .list_offsets(&all, OffsetSpec::Timestamp(0))
        .await
        .unwrap();
    let future = client
        .list_offsets(&all, OffsetSpec::Timestamp(i64::MAX / 2))
        .await
        .unwrap();
    for tp in &all {
        assert_eq!(latest[tp].offset, end[&tp.partition], "{tp}");
        assert_eq!(earliest[tp].offset, 0, "{tp}");
        let expected = if end[&tp.partition] > 0 { 0 } else { -1 };
        assert_eq!(by_time[tp].offset, expected, "{tp}");
        assert_eq!(future[tp].offset, -1, "{tp}");
    }

    // A group nobody uses is Dead; an absent topic is an error, not a hang.
    let dead = client.describe_group(&unique("cl-nobody")).await.unwrap();
    assert_eq!(dead.state, "Dead");
    assert!(dead.members.is_empty());
    let mut quick = config(&cluster);
    quick.default_api_timeout = Duration::from_millis(500);
    let quick = Client::connect(quick).await.unwrap();
    let err = quick
        .list_offsets(
            &[TopicPartition::new(unique("cl-absent"), 0)],
            OffsetSpec::Latest,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::Broker {
                code: ErrorCode::UnknownTopicOrPartition,
                ..
            }
        ),
        "{err:?}"
    );
}

// ---- coordinator failover (three nodes) ----------------------------------------------------------

#[tokio::test]
async fn coordinator_failover_on_three_nodes() {
    let cluster = Cluster::dedicated("t-coord-failover", 3, 31000);
    let client = client(&cluster).await;
    assert_eq!(client.refresh_metadata().await.unwrap().brokers.len(), 3);
    let group = unique("cl-failover");
    let describe = |group: String| DescribeGroupsRequest {
        groups: vec![group],
        ..Default::default()
    };
    let old = client.find_coordinator(&group).await.unwrap();
    client
        .call_coordinator(&group, |_| describe(group.clone()))
        .await
        .unwrap();
    let attempts = client.connection_attempts();

    cluster.kill(usize::try_from(old).unwrap());

    // The member's loop: call, and on a connection error or a coordinator error forget the
    // coordinator and call again.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let mut errors = Vec::new();
    let new = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no new coordinator; errors: {errors:?}"
        );
        match client
            .call_coordinator(&group, |_| describe(group.clone()))
            .await
        {
            Ok(response) => {
                let code = ErrorCode::from(response.groups[0].error_code);
                match code {
                    ErrorCode::None | ErrorCode::GroupIdNotFound => {
                        break client.cached_coordinator(&group).unwrap();
                    }
                    code => {
                        errors.push(code.to_string());
                        client.forget_coordinator(&group);
                    }
                }
            }
            Err(e) => {
                assert!(e.is_retriable(), "{e:?}");
                errors.push(e.to_string());
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_ne!(new, old, "the coordinator moved off the dead node");
    assert!(
        client.connection_attempts() > attempts,
        "a new connection was made"
    );
    eprintln!("coordinator {old} -> {new}; on the way: {errors:?}");
    // The admin look-up (with its own retries) agrees.
    let description = client.describe_group(&group).await.unwrap();
    assert_eq!(description.group_id, group);
}

#[tokio::test]
async fn periodic_metadata_refresh_sees_new_topics() {
    let cluster = Cluster::shared();
    let mut config = config(&cluster);
    config.metadata_max_age = Duration::from_millis(300);
    let client = Client::connect(config).await.unwrap();
    let mut updates = client.metadata_updates();
    let refresher = client.spawn_metadata_refresher();
    let topic = unique("cl-pattern");
    cluster.create_topic(&topic, 2);
    let pattern = regex::Regex::new("cl-pattern-.*").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        tokio::time::timeout(Duration::from_secs(5), updates.changed())
            .await
            .expect("a refresh within 5 s")
            .unwrap();
        if client.topics_matching(&pattern).contains(&topic) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "topic never seen");
    }
    drop(client);
    tokio::time::timeout(Duration::from_secs(5), refresher)
        .await
        .expect("the refresher ends with the client")
        .unwrap();
}
