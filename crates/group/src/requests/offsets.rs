//! The offset requests only a group member sends: OffsetCommit, and OffsetFetch asked as a
//! `consumer`-protocol member (the anonymous OffsetFetch is the client's:
//! `mooring_client::requests::offset_fetch`).

use std::collections::BTreeMap;

use mooring_client::requests::offset_fetch;
use mooring_wire::messages::offset_commit::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use mooring_wire::messages::{OffsetCommitRequest, OffsetFetchRequest};
use mooring_wire::primitives::Uuid;

/// One partition's offset as the commit builder needs it: index, offset, epoch, metadata.
pub(crate) type PartitionOffset = (i32, i64, Option<i32>, String);

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
                            committed_metadata: Some(metadata.clone()),
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
