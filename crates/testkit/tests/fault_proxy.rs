//! The fault proxy against the real broker (`scripts/kafka start`): at every Metadata and
//! FindCoordinator version the broker offers (and this codec knows), the responses that come
//! through the proxy decode and name only the proxy's listeners, and those listeners lead to the
//! right broker; nothing reaches the broker around the proxy, and a socket that does is found.
//! Run with `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-testkit`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::collections::BTreeMap;

use bytes::BytesMut;
use mooring_testkit::fault_proxy::{ConnectionEnd, Endpoint};
use mooring_testkit::{unique, Cluster, FaultProxy};
use mooring_wire::frame::{decode_response, encode_request};
use mooring_wire::messages::{
    ApiVersionsRequest, FindCoordinatorRequest, FindCoordinatorResponse, Message, MetadataRequest,
    MetadataResponse, Request,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A bare client: one request at a time on one connection.
struct Wire {
    stream: TcpStream,
    next_id: i32,
}

impl Wire {
    async fn connect(address: &str) -> Wire {
        Wire {
            stream: TcpStream::connect(address).await.unwrap(),
            next_id: 1,
        }
    }

    async fn call<R: Request>(&mut self, request: &R, version: i16) -> R::Response {
        let id = self.next_id;
        self.next_id += 1;
        let mut buf = BytesMut::new();
        encode_request(&mut buf, request, version, id, Some("fault-proxy-test")).unwrap();
        self.stream.write_all(&buf).await.unwrap();
        let size = self.stream.read_i32().await.unwrap();
        let mut body = vec![0; usize::try_from(size).unwrap()];
        self.stream.read_exact(&mut body).await.unwrap();
        let (header, response) = decode_response::<R::Response>(&body.into(), version)
            .unwrap_or_else(|e| panic!("{} v{version} through the proxy: {e}", R::Response::NAME));
        assert_eq!(header.correlation_id, id);
        response
    }

    /// The broker's version range per API key, intersected with this codec's.
    async fn versions(&mut self) -> BTreeMap<i16, (i16, i16)> {
        let response = self.call(&ApiVersionsRequest::default(), 0).await;
        assert_eq!(response.error_code, 0);
        response
            .api_keys
            .iter()
            .map(|k| (k.api_key, (k.min_version, k.max_version)))
            .collect()
    }
}

fn range<M: Message>(broker: &BTreeMap<i16, (i16, i16)>) -> std::ops::RangeInclusive<i16> {
    let (min, max) = broker[&M::API_KEY];
    min.max(M::MIN_VERSION)..=max.min(M::MAX_VERSION)
}

fn metadata_request(version: i16) -> MetadataRequest {
    MetadataRequest {
        // v0 has no null: an empty list means every topic there.
        topics: if version == 0 { Some(Vec::new()) } else { None },
        allow_auto_topic_creation: version < 4,
        ..Default::default()
    }
}

fn find_coordinator_request(version: i16, groups: &[String]) -> FindCoordinatorRequest {
    if version < 4 {
        FindCoordinatorRequest {
            key: groups[0].clone(),
            ..Default::default()
        }
    } else {
        FindCoordinatorRequest {
            coordinator_keys: groups.to_vec(),
            ..Default::default()
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_version_names_only_proxy_listeners_that_lead_to_the_broker() {
    let cluster = Cluster::shared();
    let proxy = FaultProxy::start(cluster.bootstrap()).unwrap();
    let mut client = Wire::connect(&proxy.bootstrap()).await;
    let broker = client.versions().await;
    let mut asked = 0;
    let mut nodes = BTreeMap::new();
    let metadata_versions = range::<MetadataResponse>(&broker);
    for version in metadata_versions.clone() {
        let response = client.call(&metadata_request(version), version).await;
        asked += 1;
        assert!(!response.brokers.is_empty(), "v{version}: no brokers");
        for b in &response.brokers {
            let port = u16::try_from(b.port).unwrap();
            assert!(
                proxy.is_listener(&b.host, port),
                "Metadata v{version} names {}:{}, not a proxy listener ({:?})",
                b.host,
                b.port,
                proxy.listeners()
            );
            assert_eq!(
                *nodes.entry(b.node_id).or_insert(port),
                port,
                "one port per node"
            );
        }
    }
    let groups = [unique("proxy-g1"), unique("proxy-g2")];
    let coordinator_versions = range::<FindCoordinatorResponse>(&broker);
    for version in coordinator_versions.clone() {
        let request = find_coordinator_request(version, &groups);
        let response = client.call(&request, version).await;
        asked += 1;
        let found: Vec<(i32, String, i32)> = if version < 4 {
            assert_eq!(response.error_code, 0, "v{version}");
            vec![(response.node_id, response.host.clone(), response.port)]
        } else {
            assert_eq!(response.coordinators.len(), 2, "v{version}: one per key");
            response
                .coordinators
                .iter()
                .map(|c| {
                    assert_eq!(c.error_code, 0, "v{version} {}", c.key);
                    (c.node_id, c.host.clone(), c.port)
                })
                .collect()
        };
        for (node, host, port) in found {
            let port = u16::try_from(port).unwrap();
            assert_eq!(host, "127.0.0.1", "FindCoordinator v{version}");
            assert_eq!(
                nodes.get(&node),
                Some(&port),
                "v{version}: the node's listener"
            );
        }
    }
    println!(
        "Metadata v{metadata_versions:?} and FindCoordinator v{coordinator_versions:?} rewritten; \
         listeners {:?}",
        proxy.listeners()
    );

    // Each node's listener leads to that node: the broker answers there, and again names only
    // proxy listeners.
    for port in nodes.values() {
        let mut direct = Wire::connect(&format!("127.0.0.1:{port}")).await;
        let version = *metadata_versions.end();
        let response = direct.call(&metadata_request(version), version).await;
        assert!(response
            .brokers
            .iter()
            .all(|b| proxy.is_listener(&b.host, u16::try_from(b.port).unwrap())));
    }

    let stats = proxy.stats();
    assert!(
        stats.rewrite_errors.is_empty(),
        "{:?}",
        stats.rewrite_errors
    );
    assert_eq!(stats.rewritten, asked + nodes.len() as u64);
    assert_eq!(stats.accepted[&Endpoint::Bootstrap(0)], 1);
    for node in nodes.keys() {
        assert_eq!(stats.accepted[&Endpoint::Node(*node)], 1);
    }
    assert_eq!(proxy.bypassing_connections().unwrap(), Vec::<String>::new());

    // The check does see a client that dials the broker itself.
    let around = TcpStream::connect(cluster.node_address(1)).await.unwrap();
    let found = proxy.bypassing_connections().unwrap();
    let local = around.local_addr().unwrap().to_string();
    assert!(
        found.iter().any(|c| c.starts_with(&local)),
        "{found:?} lacks {local}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_closes_every_open_connection_and_new_ones_work() {
    let cluster = Cluster::shared();
    let proxy = FaultProxy::start(cluster.bootstrap()).unwrap();
    let mut first = Wire::connect(&proxy.bootstrap()).await;
    first.versions().await;
    proxy.faults().reset_now();
    // The reset connection answers no more: a read sees RST (or EOF).
    let mut buf = [0u8; 1];
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        first.stream.read(&mut buf),
    )
    .await
    .expect("a reset connection does not hang");
    assert!(matches!(read, Err(_) | Ok(0)), "{read:?}");
    let mut second = Wire::connect(&proxy.bootstrap()).await;
    second.versions().await;
    // The proxy records the end just after closing the sockets: poll for it.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(5);
    while proxy.stats().ended_with(&ConnectionEnd::Reset) == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{:?}",
            proxy.stats()
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let stats = proxy.stats();
    assert_eq!(stats.reset_episodes, 1);
    assert_eq!(stats.ended_with(&ConnectionEnd::Reset), 1);
    assert_eq!(stats.accepted_total(), 2);
}
