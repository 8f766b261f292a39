//! Offset requests any client sends: OffsetFetch to a group's coordinator, ListOffsets to a
//! partition's leader, and the ListGroups the sidecar asks of every broker.

use std::collections::BTreeMap;
use std::time::Duration;

use mooring_wire::messages::list_offsets::{ListOffsetsPartition, ListOffsetsTopic};
use mooring_wire::messages::offset_fetch::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use mooring_wire::messages::{
    DescribeGroupsRequest, ListGroupsRequest, ListOffsetsRequest, OffsetFetchRequest,
};
use mooring_wire::primitives::Uuid;

use super::millis;

/// An OffsetFetch request for `group` at `version`: batched groups from v8, topic ids from v10,
/// null topics for "all", `require_stable` from v7.
pub fn offset_fetch(
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

/// DescribeGroups of `groups`, without authorized operations.
pub fn describe_groups(_version: i16, groups: Vec<String>) -> DescribeGroupsRequest {
    DescribeGroupsRequest {
        groups,
        ..Default::default()
    }
}
