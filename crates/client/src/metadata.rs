//! Cluster metadata (the Metadata API): brokers, topics with their ids (KIP-516, Metadata v10+),
//! partitions with leaders and leader epochs (KIP-320). A [`Metadata`] is an immutable snapshot;
//! the client swaps in a new one on every refresh (on errors, when asked, and once older than
//! `metadata.max.age.ms`).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::metadata::MetadataResponse;
use mooring_wire::primitives::Uuid;

use crate::topic::PartitionsPerTopic;

/// The Metadata request of `topics` (`None`: every topic) at a version (built with the client's
/// other requests).
pub use crate::requests::metadata as metadata_request;

/// One broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerInfo {
    /// The broker's node id.
    pub node_id: i32,
    /// Host it advertises for the listener we use.
    pub host: String,
    /// Port.
    pub port: i32,
    /// `broker.rack`.
    pub rack: Option<String>,
}

impl BrokerInfo {
    /// `host:port`, with IPv6 hosts bracketed.
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionInfo {
    /// Partition index.
    pub partition: i32,
    /// Leader's node id, -1 when there is none.
    pub leader: i32,
    /// Leader epoch (-1 if the broker did not say).
    pub leader_epoch: i32,
    /// Replica node ids.
    pub replicas: Vec<i32>,
    /// In-sync replica node ids.
    pub isr: Vec<i32>,
    /// The partition's error (e.g. LEADER_NOT_AVAILABLE), `None` when fine.
    pub error: ErrorCode,
}

/// One topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    /// Name.
    pub name: String,
    /// Topic id (nil before Metadata v10).
    pub id: Uuid,
    /// Whether it is an internal topic (`__consumer_offsets`, ...).
    pub is_internal: bool,
    /// Partitions by index.
    pub partitions: BTreeMap<i32, PartitionInfo>,
    /// The topic's error (e.g. LEADER_NOT_AVAILABLE while being created), `None` when fine.
    pub error: ErrorCode,
}

/// A snapshot of cluster metadata.
#[derive(Debug, Clone)]
pub struct Metadata {
    /// Cluster id.
    pub cluster_id: Option<String>,
    /// The controller's node id as the broker reports it (-1 if unknown).
    pub controller_id: i32,
    /// Brokers by node id.
    pub brokers: BTreeMap<i32, BrokerInfo>,
    /// Topics by name (those that exist; unknown topics are absent).
    pub topics: BTreeMap<String, TopicInfo>,
    /// When this snapshot was fetched (`None`: never fetched).
    pub fetched_at: Option<Instant>,
}

impl Default for Metadata {
    fn default() -> Self {
        Metadata {
            cluster_id: None,
            controller_id: -1,
            brokers: BTreeMap::new(),
            topics: BTreeMap::new(),
            fetched_at: None,
        }
    }
}

impl Metadata {
    /// Leader node id and leader epoch of a partition, if it has a leader.
    pub fn leader_for(&self, topic: &str, partition: i32) -> Option<(i32, i32)> {
        let p = self.topics.get(topic)?.partitions.get(&partition)?;
        (p.leader >= 0).then_some((p.leader, p.leader_epoch))
    }

    /// Names of the non-internal topics whose whole name matches `pattern` (as Java's
    /// `Pattern.matcher(topic).matches()`, for pattern subscriptions), sorted.
    pub fn topics_matching(&self, pattern: &regex::Regex) -> Vec<String> {
        let anchored = regex::Regex::new(&format!("^(?:{})$", pattern.as_str()));
        self.topics
            .values()
            .filter(|t| !t.is_internal)
            .filter(|t| match &anchored {
                Ok(re) => re.is_match(&t.name),
                Err(_) => pattern
                    .find(&t.name)
                    .is_some_and(|m| m.len() == t.name.len()),
            })
            .map(|t| t.name.clone())
            .collect()
    }

    /// Those of `topics` this snapshot answers TOPIC_AUTHORIZATION_FAILED for: the principal may
    /// not even describe them. Sorted.
    pub fn unauthorized_topics<'a>(
        &self,
        topics: impl IntoIterator<Item = &'a String>,
    ) -> Vec<String> {
        let mut denied: Vec<String> = topics
            .into_iter()
            .filter(|t| {
                self.topics
                    .get(*t)
                    .is_some_and(|info| info.error == ErrorCode::TopicAuthorizationFailed)
            })
            .cloned()
            .collect();
        denied.sort();
        denied.dedup();
        denied
    }

    /// Number of partitions of a topic.
    pub fn partition_count(&self, topic: &str) -> Option<i32> {
        let t = self.topics.get(topic)?;
        i32::try_from(t.partitions.len()).ok()
    }

    /// What the group leader's assignor is told about `topics` (see [`PartitionsPerTopic`]):
    /// each of them that exists with partitions, and for each partition, in partition order, the
    /// `broker.rack` of the brokers holding its replicas. Replicas on a broker this snapshot does
    /// not list, or that has no rack, add none (Java's metadata gives such a replica a node
    /// without a rack).
    pub fn partitions_per_topic(&self, topics: &[String]) -> PartitionsPerTopic {
        let mut out = PartitionsPerTopic::new();
        for topic in topics {
            let Some(info) = self.topics.get(topic) else {
                continue;
            };
            if info.partitions.is_empty() {
                continue;
            }
            let racks = info
                .partitions
                .values()
                .map(|p| {
                    p.replicas
                        .iter()
                        .filter_map(|id| self.brokers.get(id)?.rack.clone())
                        .collect::<BTreeSet<String>>()
                })
                .collect();
            out.insert(topic.clone(), racks);
        }
        out
    }

    /// Builds a snapshot from a response. Topics the broker does not know
    /// (UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION) are left out.
    pub fn from_response(response: &MetadataResponse) -> Metadata {
        let brokers = response
            .brokers
            .iter()
            .map(|b| {
                (
                    b.node_id,
                    BrokerInfo {
                        node_id: b.node_id,
                        host: b.host.clone(),
                        port: b.port,
                        rack: b.rack.clone(),
                    },
                )
            })
            .collect();
        let mut metadata = Metadata {
            cluster_id: response.cluster_id.clone(),
            controller_id: response.controller_id,
            brokers,
            topics: BTreeMap::new(),
            fetched_at: Some(Instant::now()),
        };
        metadata.merge_topics(response);
        metadata
    }

    /// Replaces the topics named in `response` (and removes those it says do not exist).
    pub fn merge_topics(&mut self, response: &MetadataResponse) {
        for topic in &response.topics {
            let Some(name) = topic.name.clone() else {
                continue;
            };
            let error = ErrorCode::from(topic.error_code);
            if matches!(
                error,
                ErrorCode::UnknownTopicOrPartition | ErrorCode::InvalidTopicException
            ) {
                self.topics.remove(&name);
                continue;
            }
            let partitions = topic
                .partitions
                .iter()
                .map(|p| {
                    (
                        p.partition_index,
                        PartitionInfo {
                            partition: p.partition_index,
                            leader: p.leader_id,
                            leader_epoch: p.leader_epoch,
                            replicas: p.replica_nodes.clone(),
                            isr: p.isr_nodes.clone(),
                            error: ErrorCode::from(p.error_code),
                        },
                    )
                })
                .collect();
            self.topics.insert(
                name.clone(),
                TopicInfo {
                    name,
                    id: topic.topic_id,
                    is_internal: topic.is_internal,
                    partitions,
                    error,
                },
            );
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use mooring_wire::messages::metadata::{
        MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
    };

    fn response() -> MetadataResponse {
        let topic = |name: &str, internal: bool, error: i16| MetadataResponseTopic {
            name: Some(name.into()),
            is_internal: internal,
            error_code: error,
            partitions: vec![
                MetadataResponsePartition {
                    partition_index: 0,
                    leader_id: 1,
                    leader_epoch: 4,
                    ..Default::default()
                },
                MetadataResponsePartition {
                    partition_index: 1,
                    leader_id: -1,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        MetadataResponse {
            brokers: vec![MetadataResponseBroker {
                node_id: 1,
                host: "h".into(),
                port: 9092,
                ..Default::default()
            }],
            topics: vec![
                topic("orders", false, 0),
                topic("orders-eu", false, 0),
                topic("__consumer_offsets", true, 0),
                topic("gone", false, ErrorCode::UnknownTopicOrPartition.code()),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn leaders_and_patterns() {
        let m = Metadata::from_response(&response());
        assert_eq!(m.brokers[&1].address(), "h:9092");
        assert_eq!(m.leader_for("orders", 0), Some((1, 4)));
        assert_eq!(m.leader_for("orders", 1), None);
        assert_eq!(m.leader_for("gone", 0), None);
        assert_eq!(m.partition_count("orders"), Some(2));
        let re = regex::Regex::new("orders.*").unwrap();
        assert_eq!(m.topics_matching(&re), vec!["orders", "orders-eu"]);
        // Whole-name match, as Java: "orders" alone does not match "orders-eu".
        let re = regex::Regex::new("orders").unwrap();
        assert_eq!(m.topics_matching(&re), vec!["orders"]);
        let re = regex::Regex::new("__.*|orders").unwrap();
        assert_eq!(m.topics_matching(&re), vec!["orders"]);
    }

    #[test]
    fn partitions_per_topic_carries_the_replicas_racks() {
        let partition = |index: i32, replicas: &[i32]| MetadataResponsePartition {
            partition_index: index,
            leader_id: replicas[0],
            replica_nodes: replicas.to_vec(),
            ..Default::default()
        };
        let broker = |id: i32, rack: Option<&str>| MetadataResponseBroker {
            node_id: id,
            host: "h".into(),
            port: 9092,
            rack: rack.map(str::to_owned),
            ..Default::default()
        };
        let response = MetadataResponse {
            brokers: vec![broker(1, Some("a")), broker(2, Some("b")), broker(3, None)],
            topics: vec![
                MetadataResponseTopic {
                    name: Some("t".into()),
                    // Listed out of order: partitions come in partition order.
                    partitions: vec![
                        partition(1, &[2, 3]),
                        partition(0, &[1, 2]),
                        // Broker 9 is not in the metadata (offline): no rack.
                        partition(2, &[9, 1, 1]),
                    ],
                    ..Default::default()
                },
                MetadataResponseTopic {
                    name: Some("empty".into()),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let m = Metadata::from_response(&response);
        let p = m.partitions_per_topic(&["t".into(), "empty".into(), "absent".into()]);
        let racks = |list: &[&str]| {
            list.iter()
                .map(|r| (*r).to_owned())
                .collect::<BTreeSet<_>>()
        };
        let mut expected = PartitionsPerTopic::new();
        expected.insert("t", vec![racks(&["a", "b"]), racks(&["b"]), racks(&["a"])]);
        assert_eq!(p, expected);
    }

    #[test]
    fn requests_never_auto_create_when_they_can_say_so() {
        assert!(metadata_request(0, None).topics.is_some());
        assert!(metadata_request(12, None).topics.is_none());
        assert!(!metadata_request(12, None).allow_auto_topic_creation);
        assert!(metadata_request(3, Some(&["a".into()])).allow_auto_topic_creation);
    }
}
