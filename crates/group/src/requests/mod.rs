//! The requests only a group member sends, each built by one named function of the version
//! negotiated with the coordinator (see `mooring_client::requests` for the rules every builder
//! follows: a field is filled only at the versions that have it).

mod classic;
mod consumer_group;
mod offsets;

#[cfg(test)]
mod tests;

pub(crate) use classic::{heartbeat, join_group, leave_group, sync_group};
pub(crate) use consumer_group::{consumer_group_heartbeat, HeartbeatFields};
pub(crate) use mooring_client::requests::{describe_groups, millis};
pub(crate) use offsets::{offset_commit, offset_fetch_as_member, CommitTarget, PartitionOffset};
