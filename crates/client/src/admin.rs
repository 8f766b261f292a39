//! Admin look-ups for the sidecar, which watches a group from the broker even when the consumer
//! process is stuck: DescribeGroups (members and their decoded ConsumerProtocol assignments) for
//! classic groups, ConsumerGroupDescribe for `consumer`-protocol (KIP-848) groups
//! ([`consumer_group`]), ShareGroupDescribe, DescribeShareGroupOffsets and the group's
//! DescribeConfigs for share groups (KIP-932, [`share_group`]),
//! ListGroups (asked of every broker, each listing the groups it coordinates), OffsetFetch
//! (committed offsets, `require_stable` from v7 per KIP-447; topic ids from v10 per KIP-848) and
//! ListOffsets (earliest / latest / by time, KIP-79; sent to each partition's leader).
//!
//! Coordinator moves (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS)
//! and leader moves (NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION
//! while metadata catches up) are retried with back-off until `default.api.timeout.ms`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use mooring_wire::consumer_protocol::{Assignment, Subscription};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::offset_fetch::OffsetFetchResponse;
use mooring_wire::messages::ListOffsetsResponse;
use mooring_wire::primitives::Uuid;

use crate::client::Client;
use crate::error::{Error, Result};
use crate::metadata::Metadata;
use crate::offsets::{OffsetAndMetadata, OffsetAndTimestamp, OffsetSpec};
use crate::requests;
use crate::topic::TopicPartition;

pub mod consumer_group;
pub mod share_group;

pub use consumer_group::{ConsumerGroupDescription, ConsumerMemberDescription, MemberType};
pub use share_group::{ShareGroupDescription, ShareMemberDescription, SharePartitionOffsets};

/// One member of a described group.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberDescription {
    /// The member id the coordinator gave.
    pub member_id: String,
    /// `group.instance.id` of a static member (KIP-345).
    pub group_instance_id: Option<String>,
    /// The member's `client.id`.
    pub client_id: String,
    /// The member's host as the broker saw it.
    pub client_host: String,
    /// The subscription, decoded when the group's protocol type is `consumer`.
    pub subscription: Option<Subscription>,
    /// The assignment, decoded when the group's protocol type is `consumer` and the member has one.
    pub assignment: Option<Assignment>,
    /// The raw assignment bytes.
    pub raw_assignment: Bytes,
}

/// What DescribeGroups says of a group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupDescription {
    /// The group id.
    pub group_id: String,
    /// `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty` or `Dead` (a group that does
    /// not exist is described as `Dead` with no members).
    pub state: String,
    /// `consumer` for consumer groups.
    pub protocol_type: String,
    /// The chosen protocol (the assignor's name for consumer groups).
    pub protocol: String,
    /// The members.
    pub members: Vec<MemberDescription>,
}

/// A group as ListGroups lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GroupListing {
    /// The group id.
    pub group_id: String,
    /// `consumer`, or empty.
    pub protocol_type: String,
    /// The state (ListGroups v4+), empty before.
    pub state: String,
    /// The group type, `classic` or `consumer` (v5+), empty before.
    pub group_type: String,
}

fn epoch(value: i32) -> Option<i32> {
    (value >= 0).then_some(value)
}

fn is_coordinator_move(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::NotCoordinator
            | ErrorCode::CoordinatorNotAvailable
            | ErrorCode::CoordinatorLoadInProgress
    )
}

fn broker_error(api: &'static str, code: ErrorCode, message: Option<String>) -> Error {
    Error::Broker {
        api,
        code,
        message: message.filter(|m| !m.is_empty()),
    }
}

fn member(
    protocol_type: &str,
    m: mooring_wire::messages::describe_groups::DescribedGroupMember,
) -> MemberDescription {
    let consumer = protocol_type == "consumer";
    let subscription = (consumer && !m.member_metadata.is_empty())
        .then(|| {
            Subscription::decode(&m.member_metadata)
                .ok()
                .map(|(_, s)| s)
        })
        .flatten();
    let assignment = (consumer && !m.member_assignment.is_empty())
        .then(|| {
            Assignment::decode(&m.member_assignment)
                .ok()
                .map(|(_, a)| a)
        })
        .flatten();
    MemberDescription {
        member_id: m.member_id,
        group_instance_id: m.group_instance_id,
        client_id: m.client_id,
        client_host: m.client_host,
        subscription,
        assignment,
        raw_assignment: m.member_assignment,
    }
}

impl Client {
    /// TOPIC_AUTHORIZATION_FAILED in `metadata` for one of `topics`: the typed refusal.
    fn readable(&self, topics: &[String], metadata: &Metadata) -> Result<()> {
        let denied = metadata.unauthorized_topics(topics);
        if denied.is_empty() {
            return Ok(());
        }
        Err(Error::Authorization {
            api: "Metadata",
            resource: crate::error::Resource::Topics(denied),
            principal: self.config().principal(),
            code: ErrorCode::TopicAuthorizationFailed,
        })
    }

    /// Runs `attempt` until it succeeds, fails for good, or `default.api.timeout.ms` passes;
    /// retriable errors wait a back-off in between.
    async fn with_retries<T, Fut>(&self, what: &str, mut attempt: impl FnMut() -> Fut) -> Result<T>
    where
        Fut: std::future::Future<Output = Result<T>>,
    {
        let deadline = Instant::now() + self.config().default_api_timeout;
        let retry = self.retry_backoff();
        let mut failures = 0;
        loop {
            match attempt().await {
                Err(e) if e.is_retriable() && Instant::now() < deadline => {
                    failures += 1;
                    let delay = retry.delay(failures);
                    tracing::debug!(what, error = %e, ?delay, "retrying");
                    tokio::time::sleep(delay).await;
                }
                other => return other,
            }
        }
    }

    /// Describes a classic group (DescribeGroups to its coordinator). A group that does not exist
    /// is `Dead` with no members; so is a `consumer`-protocol group, which Kafka does not describe
    /// here (GROUP_ID_NOT_FOUND, "… is not a classic group."): see
    /// [`Client::describe_consumer_group`].
    pub async fn describe_group(&self, group: &str) -> Result<GroupDescription> {
        self.with_retries("DescribeGroups", || async {
            let response = self
                .call_coordinator(group, |version| {
                    requests::describe_groups(version, vec![group.to_string()])
                })
                .await?;
            let Some(described) = response.groups.into_iter().find(|g| g.group_id == group) else {
                return Err(broker_error(
                    "DescribeGroups",
                    ErrorCode::UnknownServerError,
                    Some(format!("no answer for group {group}")),
                ));
            };
            match ErrorCode::from(described.error_code) {
                ErrorCode::None => {}
                ErrorCode::GroupIdNotFound => {
                    return Ok(GroupDescription {
                        group_id: described.group_id,
                        state: "Dead".into(),
                        protocol_type: String::new(),
                        protocol: String::new(),
                        members: Vec::new(),
                    })
                }
                code => {
                    if is_coordinator_move(code) {
                        self.forget_coordinator(group);
                    }
                    return Err(Error::from_code(
                        "DescribeGroups",
                        code,
                        described.error_message,
                        group,
                        Vec::new,
                        || self.config().principal(),
                    ));
                }
            }
            let protocol_type = described.protocol_type;
            let members = described
                .members
                .into_iter()
                .map(|m| member(&protocol_type, m))
                .collect();
            Ok(GroupDescription {
                group_id: described.group_id,
                state: described.group_state,
                protocol: described.protocol_data,
                protocol_type,
                members,
            })
        })
        .await
    }

    /// Every group of the cluster: ListGroups asked of each broker (each lists the groups it
    /// coordinates), merged and sorted.
    pub async fn list_groups(&self) -> Result<Vec<GroupListing>> {
        let metadata = self.refresh_metadata().await?;
        let mut groups = BTreeMap::new();
        for node in metadata.brokers.keys() {
            let response = self
                .with_retries("ListGroups", || async {
                    let response = self.send_to(*node, requests::list_groups).await?;
                    match ErrorCode::from(response.error_code) {
                        ErrorCode::None => Ok(response),
                        code => Err(broker_error("ListGroups", code, None)),
                    }
                })
                .await?;
            for g in response.groups {
                groups.insert(
                    g.group_id.clone(),
                    GroupListing {
                        group_id: g.group_id,
                        protocol_type: g.protocol_type,
                        state: g.group_state,
                        group_type: g.group_type,
                    },
                );
            }
        }
        Ok(groups.into_values().collect())
    }

    /// The committed offsets of `group` for `partitions`, or for every partition with a commit
    /// when `None` (OffsetFetch to the coordinator, `require_stable` where the version has it).
    /// Partitions without a commit are absent.
    pub async fn committed_offsets(
        &self,
        group: &str,
        partitions: Option<&[TopicPartition]>,
    ) -> Result<BTreeMap<TopicPartition, OffsetAndMetadata>> {
        let by_topic = partitions.map(partitions_by_topic);
        // OffsetFetch v10 names topics by id (KIP-848): know the ids of the topics asked for.
        let mut metadata = match &by_topic {
            Some(topics) => {
                let names: Vec<String> = topics.keys().cloned().collect();
                self.refresh_topics(&names).await?
            }
            None => self.metadata().await?,
        };
        let ids: BTreeMap<String, Uuid> = metadata
            .topics
            .values()
            .map(|t| (t.name.clone(), t.id))
            .collect();
        let response = self.offset_fetch(group, by_topic.as_ref(), &ids).await?;
        let mut out = BTreeMap::new();
        for row in offset_fetch_rows(response, group) {
            let Some(row) = self.with_topic_name(&mut metadata, row).await? else {
                continue; // deleted since the commit
            };
            if let Some((tp, committed)) = self.committed_offset(group, row)? {
                out.insert(tp, committed);
            }
        }
        Ok(out)
    }

    /// OffsetFetch to `group`'s coordinator, retried as [`Client::with_retries`] says; a
    /// coordinator that moved is forgotten, so the next attempt finds the new one.
    async fn offset_fetch(
        &self,
        group: &str,
        by_topic: Option<&BTreeMap<String, Vec<i32>>>,
        ids: &BTreeMap<String, Uuid>,
    ) -> Result<OffsetFetchResponse> {
        self.with_retries("OffsetFetch", || async {
            let response = self
                .call_coordinator(group, |version| {
                    requests::offset_fetch(version, group, by_topic, ids)
                })
                .await?;
            match ErrorCode::from(offset_fetch_error(&response, group)) {
                ErrorCode::None => Ok(response),
                code => {
                    if is_coordinator_move(code) {
                        self.forget_coordinator(group);
                    }
                    Err(Error::from_code(
                        "OffsetFetch",
                        code,
                        None,
                        group,
                        Vec::new,
                        || self.config().principal(),
                    ))
                }
            }
        })
        .await
    }

    /// `row` with its topic's name. A v10+ row names its topic by id only: the name comes from
    /// `metadata`, refreshed once when the id is not in it; `None` when the topic is still unknown
    /// (deleted since the commit).
    async fn with_topic_name(
        &self,
        metadata: &mut Arc<Metadata>,
        row: OffsetRow,
    ) -> Result<Option<OffsetRow>> {
        if !row.name.is_empty() || row.id.is_nil() {
            return Ok(Some(row));
        }
        if topic_name(metadata, row.id).is_none() {
            *metadata = self.refresh_metadata().await?;
        }
        Ok(topic_name(metadata, row.id).map(|name| OffsetRow { name, ..row }))
    }

    /// What `row` says is committed: `None` for a partition without a commit or one the
    /// coordinator does not know (UNKNOWN_TOPIC_OR_PARTITION); another code fails the look-up.
    fn committed_offset(
        &self,
        group: &str,
        row: OffsetRow,
    ) -> Result<Option<(TopicPartition, OffsetAndMetadata)>> {
        match ErrorCode::from(row.code) {
            ErrorCode::None => {}
            ErrorCode::UnknownTopicOrPartition => return Ok(None),
            code => {
                return Err(Error::from_code(
                    "OffsetFetch",
                    code,
                    None,
                    group,
                    || vec![row.name],
                    || self.config().principal(),
                ))
            }
        }
        if row.offset < 0 {
            return Ok(None); // no commit for this partition
        }
        Ok(Some((
            TopicPartition::new(row.name, row.partition),
            OffsetAndMetadata {
                offset: row.offset,
                leader_epoch: epoch(row.leader_epoch),
                metadata: row.metadata.unwrap_or_default(),
            },
        )))
    }

    /// Offsets of `partitions` per `spec` (ListOffsets to each partition's leader, read
    /// uncommitted).
    pub async fn list_offsets(
        &self,
        partitions: &[TopicPartition],
        spec: OffsetSpec,
    ) -> Result<BTreeMap<TopicPartition, OffsetAndTimestamp>> {
        self.list_offsets_with(partitions, spec, false).await
    }

    /// As [`Client::list_offsets`], with `read_committed` choosing the isolation level (the last
    /// stable offset instead of the high watermark for `Latest`).
    ///
    /// Rounds of requests, one to each leader, until every partition has its offset: after a
    /// round that left some without one, the last retriable error of the round is waited out
    /// (a back-off, fresh metadata) until `default.api.timeout.ms`, and any other error ends the
    /// look-up.
    pub async fn list_offsets_with(
        &self,
        partitions: &[TopicPartition],
        spec: OffsetSpec,
        read_committed: bool,
    ) -> Result<BTreeMap<TopicPartition, OffsetAndTimestamp>> {
        let mut out = BTreeMap::new();
        let mut todo: BTreeSet<TopicPartition> = partitions.iter().cloned().collect();
        let deadline = Instant::now() + self.config().default_api_timeout;
        let mut failures = 0;
        let topics: Vec<String> = todo
            .iter()
            .map(|tp| tp.topic.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let mut metadata = self.refresh_topics(&topics).await?;
        self.readable(&topics, &metadata)?;
        loop {
            let last_error = self
                .list_offsets_round(&metadata, &todo, spec, read_committed, &mut out)
                .await?;
            todo.retain(|tp| !out.contains_key(tp));
            if todo.is_empty() {
                return Ok(out);
            }
            let error = last_error.unwrap_or_else(|| {
                broker_error(
                    "ListOffsets",
                    ErrorCode::UnknownServerError,
                    Some("partitions missing from the answer".into()),
                )
            });
            if !error.is_retriable() || Instant::now() >= deadline {
                return Err(error);
            }
            failures += 1;
            tokio::time::sleep(self.retry_backoff().delay(failures)).await;
            metadata = self.refresh_topics(&topics).await?;
        }
    }

    /// One round of ListOffsets: a request to the leader of each partition of `todo` that
    /// `metadata` knows one for, the offsets found added to `out`. Returns the round's last
    /// retriable error (a partition without a leader, a leader that could not be asked, a
    /// retriable partition code), for the next round to get past; fails at once on another.
    async fn list_offsets_round(
        &self,
        metadata: &Metadata,
        todo: &BTreeSet<TopicPartition>,
        spec: OffsetSpec,
        read_committed: bool,
        out: &mut BTreeMap<TopicPartition, OffsetAndTimestamp>,
    ) -> Result<Option<Error>> {
        let (by_leader, mut last_error) = partitions_by_leader(metadata, todo);
        for (leader, tps) in by_leader {
            let grouped = partitions_by_topic(&tps);
            let timeout = self.config().request_timeout;
            let result = self
                .send_to(leader, |version| {
                    requests::list_offsets(
                        version,
                        &grouped,
                        spec.timestamp(),
                        read_committed,
                        timeout,
                    )
                })
                .await;
            match result {
                Ok(response) => {
                    if let Some(error) = self.read_list_offsets(response, todo, out)? {
                        last_error = Some(error);
                    }
                }
                Err(e) if e.is_retriable() => last_error = Some(e),
                Err(e) => return Err(e),
            }
        }
        Ok(last_error)
    }

    /// One leader's ListOffsets answer: the offsets of the partitions of `todo` go into `out`.
    /// Returns the answer's last retriable partition error; fails on another code.
    fn read_list_offsets(
        &self,
        response: ListOffsetsResponse,
        todo: &BTreeSet<TopicPartition>,
        out: &mut BTreeMap<TopicPartition, OffsetAndTimestamp>,
    ) -> Result<Option<Error>> {
        let mut retriable = None;
        for t in response.topics {
            for p in t.partitions {
                let tp = TopicPartition::new(t.name.clone(), p.partition_index);
                if !todo.contains(&tp) {
                    continue;
                }
                match ErrorCode::from(p.error_code) {
                    ErrorCode::None => {
                        out.insert(
                            tp,
                            OffsetAndTimestamp {
                                offset: p.offset,
                                timestamp: p.timestamp,
                                leader_epoch: epoch(p.leader_epoch),
                            },
                        );
                    }
                    code if code.is_retriable() => {
                        retriable = Some(broker_error("ListOffsets", code, Some(tp.to_string())));
                    }
                    code => {
                        return Err(Error::from_code(
                            "ListOffsets",
                            code,
                            Some(tp.to_string()),
                            "",
                            || vec![tp.topic.clone()],
                            || self.config().principal(),
                        ))
                    }
                }
            }
        }
        Ok(retriable)
    }
}

/// Partition numbers by topic, in the order given: how OffsetFetch and ListOffsets requests name
/// partitions.
fn partitions_by_topic(partitions: &[TopicPartition]) -> BTreeMap<String, Vec<i32>> {
    let mut map: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for tp in partitions {
        map.entry(tp.topic.clone()).or_default().push(tp.partition);
    }
    map
}

/// The partitions of `todo` by the leader `metadata` names for each, and the error of the last
/// one it names none for: LEADER_NOT_AVAILABLE, or UNKNOWN_TOPIC_OR_PARTITION for a topic it
/// does not know (yet).
fn partitions_by_leader(
    metadata: &Metadata,
    todo: &BTreeSet<TopicPartition>,
) -> (BTreeMap<i32, Vec<TopicPartition>>, Option<Error>) {
    let mut by_leader: BTreeMap<i32, Vec<TopicPartition>> = BTreeMap::new();
    let mut no_leader = None;
    for tp in todo {
        match metadata.leader_for(&tp.topic, tp.partition) {
            Some((leader, _)) => by_leader.entry(leader).or_default().push(tp.clone()),
            None => {
                no_leader = Some(broker_error(
                    "ListOffsets",
                    if metadata.topics.contains_key(&tp.topic) {
                        ErrorCode::LeaderNotAvailable
                    } else {
                        ErrorCode::UnknownTopicOrPartition
                    },
                    Some(format!("{tp}: no leader known")),
                ))
            }
        }
    }
    (by_leader, no_leader)
}

/// The name of the topic with `id` in `metadata`.
fn topic_name(metadata: &Metadata, id: Uuid) -> Option<String> {
    metadata
        .topics
        .values()
        .find(|t| t.id == id)
        .map(|t| t.name.clone())
}

/// One partition of an OffsetFetch answer, whichever version's shape it came in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetRow {
    /// The topic name (empty from v10, which names topics by id).
    pub name: String,
    /// The topic id (v10+; nil before).
    pub id: Uuid,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
    pub code: i16,
}

/// The error code of `group` in an OffsetFetch answer: its entry's (v8+), else the top level's.
pub fn offset_fetch_error(response: &OffsetFetchResponse, group: &str) -> i16 {
    match response.groups.iter().find(|g| g.group_id == group) {
        Some(g) => g.error_code,
        None => response.error_code,
    }
}

/// Every partition of an OffsetFetch answer for `group` (v0-v7 at the top level, v8+ in the
/// group's entry).
pub fn offset_fetch_rows(response: OffsetFetchResponse, group: &str) -> Vec<OffsetRow> {
    let mut rows = Vec::new();
    for t in response.topics {
        for p in t.partitions {
            rows.push(OffsetRow {
                name: t.name.clone(),
                id: Uuid::NIL,
                partition: p.partition_index,
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
                metadata: p.metadata,
                code: p.error_code,
            });
        }
    }
    for g in response.groups.into_iter().filter(|g| g.group_id == group) {
        for t in g.topics {
            for p in t.partitions {
                rows.push(OffsetRow {
                    name: t.name.clone(),
                    id: t.topic_id,
                    partition: p.partition_index,
                    offset: p.committed_offset,
                    leader_epoch: p.committed_leader_epoch,
                    metadata: p.metadata,
                    code: p.error_code,
                });
            }
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_specs() {
        assert_eq!(OffsetSpec::Earliest.timestamp(), -2);
        assert_eq!(OffsetSpec::Latest.timestamp(), -1);
        assert_eq!(OffsetSpec::Timestamp(5).timestamp(), 5);
    }
}
