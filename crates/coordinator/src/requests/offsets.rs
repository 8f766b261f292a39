//! Offset requests: OffsetCommit and OffsetFetch to a group's coordinator, ListOffsets to a
//! partition's leader, and the ListGroups the sidecar asks of every broker.

use std::collections::BTreeMap;
use std::time::Duration;

use mooring_wire::messages::list_offsets::{ListOffsetsPartition, ListOffsetsTopic};
use mooring_wire::messages::offset_commit::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use mooring_wire::messages::offset_fetch::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use mooring_wire::messages::{
    ListGroupsRequest, ListOffsetsRequest, OffsetCommitRequest, OffsetFetchRequest,
};
use mooring_wire::primitives::Uuid;

use super::millis;

/// One partition's offset as the commit builder needs it: index, offset, epoch, metadata.
pub(crate) type PartitionOffset = (i32, i64, Option<i32>, Option<String>);

/// Who commits: the fields of an OffsetCommit besides its offsets.
#[derive(Debug, Clone)]
pub(crate) struct CommitTarget {
    pub(crate) group: String,
    pub(crate) generation: i32,
    pub(crate) member_id: String,
    pub(crate) instance: Option<String>,
}

/// An OffsetCommit at `version`: topics by name up to v9, by id from v10 (KIP-848; a topic whose id
/// is not known goes as the nil id and the broker answers UNKNOWN_TOPIC_ID), `group.instance.id`
/// from v7, leader epochs from v6.
pub(crate) fn offset_commit(
    version: i16,
    target: &CommitTarget,
    topics: &BTreeMap<String, Vec<PartitionOffset>>,
    ids: &BTreeMap<String, Uuid>,
) -> OffsetCommitRequest {
    let by_id = version >= 10;
    OffsetCommitRequest {
        group_id: target.group.clone(),
        generation_id_or_member_epoch: target.generation,
        member_id: target.member_id.clone(),
        group_instance_id: if version >= 7 {
            target.instance.clone()
        } else {
            None
        },
        topics: topics
            .iter()
            .map(|(name, ps)| OffsetCommitRequestTopic {
                name: if by_id { String::new() } else { name.clone() },
                topic_id: if by_id {
                    ids.get(name).copied().unwrap_or(Uuid::NIL)
                } else {
                    Uuid::NIL
                },
                partitions: ps
                    .iter()
                    .map(
                        |(p, offset, epoch, metadata)| OffsetCommitRequestPartition {
                            partition_index: *p,
                            committed_offset: *offset,
                            committed_leader_epoch: if version >= 6 {
                                epoch.unwrap_or(-1)
                            } else {
                                -1
                            },
                            committed_metadata: Some(metadata.clone().unwrap_or_default()),
                            ..Default::default()
                        },
                    )
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// An OffsetFetch request for `group` at `version`: batched groups from v8, topic ids from v10,
/// null topics for "all", `require_stable` from v7.
pub(crate) fn offset_fetch(
    version: i16,
    group: &str,
    topics: Option<&BTreeMap<String, Vec<i32>>>,
    ids: &BTreeMap<String, Uuid>,
) -> OffsetFetchRequest {
    let require_stable = version >= 7;
    if version >= 8 {
        let topics = topics.map(|t| {
            t.iter()
                .map(|(name, parts)| OffsetFetchRequestTopics {
                    name: if version < 10 {
                        name.clone()
                    } else {
                        String::new()
                    },
                    topic_id: if version >= 10 {
                        ids.get(name).copied().unwrap_or(Uuid::NIL)
                    } else {
                        Uuid::NIL
                    },
                    partition_indexes: parts.clone(),
                    ..Default::default()
                })
                .collect()
        });
        OffsetFetchRequest {
            groups: vec![OffsetFetchRequestGroup {
                group_id: group.to_string(),
                member_id: None,
                member_epoch: -1,
                topics,
                ..Default::default()
            }],
            require_stable,
            ..Default::default()
        }
    } else {
        OffsetFetchRequest {
            group_id: group.to_string(),
            topics: topics.map(|t| {
                t.iter()
                    .map(|(name, parts)| OffsetFetchRequestTopic {
                        name: name.clone(),
                        partition_indexes: parts.clone(),
                        ..Default::default()
                    })
                    .collect()
            }),
            require_stable,
            ..Default::default()
        }
    }
}

/// As [`offset_fetch`], asked as the `consumer`-protocol member `member` (member id and epoch,
/// v9+, KIP-848): the coordinator then answers STALE_MEMBER_EPOCH or UNKNOWN_MEMBER_ID when the
/// member is not the one it knows, rather than offsets the member may no longer own. Before v9
/// (and with `member` absent) the request is anonymous.
pub(crate) fn offset_fetch_as_member(
    version: i16,
    group: &str,
    topics: Option<&BTreeMap<String, Vec<i32>>>,
    ids: &BTreeMap<String, Uuid>,
    member: Option<(&str, i32)>,
) -> OffsetFetchRequest {
    let mut request = offset_fetch(version, group, topics, ids);
    if let (true, Some((member_id, epoch)), Some(entry)) =
        (version >= 9, member, request.groups.first_mut())
    {
        entry.member_id = Some(member_id.to_owned());
        entry.member_epoch = epoch;
    }
    request
}

/// ListOffsets of `partitions` (topic → partition indexes) at `timestamp` (-2 earliest, -1 latest,
/// else ms since the epoch), as a consumer (`replica_id` -1, no current leader epoch), at the
/// isolation level of `read_committed` (v2+). `timeout` is `request.timeout.ms`, the broker's bound
/// for offsets it must read from tiered storage (KIP-1075, v10+; 3.x brokers stop at v9).
pub(crate) fn list_offsets(
    version: i16,
    partitions: &BTreeMap<String, Vec<i32>>,
    timestamp: i64,
    read_committed: bool,
    timeout: Duration,
) -> ListOffsetsRequest {
    ListOffsetsRequest {
        replica_id: -1,
        isolation_level: i8::from(read_committed),
        timeout_ms: if version >= 10 { millis(timeout) } else { 0 },
        topics: partitions
            .iter()
            .map(|(name, parts)| ListOffsetsTopic {
                name: name.clone(),
                partitions: parts
                    .iter()
                    .map(|p| ListOffsetsPartition {
                        partition_index: *p,
                        current_leader_epoch: -1,
                        timestamp,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// ListGroups of every group the broker coordinates (no state or type filter).
pub(crate) fn list_groups(_version: i16) -> ListGroupsRequest {
    ListGroupsRequest::default()
}
