//! Requests of the `consumer` group protocol (KIP-848): ConsumerGroupHeartbeat, the one request a
//! member sends to join, stay, acknowledge its assignment and leave.
//!
//! Which fields a heartbeat carries (a full one when joining or after a failed heartbeat, else
//! only what changed since the last one sent) is the member's choice
//! ([`HeartbeatFields`], chosen by `consumer::heartbeat`); this builder only lays them out
//! for the version negotiated. `SubscribedTopicRegex` exists from v1: at v0 a regex is left in
//! the request so the encoder refuses it (a fatal [`Error::Encode`](mooring_client::Error::Encode)) rather
//! than sending a heartbeat that silently subscribes to nothing.

use mooring_wire::messages::consumer_group_heartbeat::TopicPartitions;
use mooring_wire::messages::ConsumerGroupHeartbeatRequest;
use mooring_wire::primitives::Uuid;

/// The fields of one ConsumerGroupHeartbeat besides the group; `None` (or -1 for the rebalance
/// timeout) is "unchanged since the last heartbeat" on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct HeartbeatFields {
    pub(crate) member_id: String,
    /// 0 to join, -1 to leave, -2 for a static member leaving for now.
    pub(crate) member_epoch: i32,
    pub(crate) instance_id: Option<String>,
    pub(crate) rack_id: Option<String>,
    /// -1: unchanged.
    pub(crate) rebalance_timeout_ms: i32,
    pub(crate) subscribed_topic_names: Option<Vec<String>>,
    /// An empty string removes a regex subscription.
    pub(crate) subscribed_topic_regex: Option<String>,
    pub(crate) server_assignor: Option<String>,
    /// The partitions owned, by topic id.
    pub(crate) topic_partitions: Option<Vec<(Uuid, Vec<i32>)>>,
}

/// ConsumerGroupHeartbeat of `group` with `fields` at `version` (see the module docs for v0).
pub(crate) fn consumer_group_heartbeat(
    _version: i16,
    group: &str,
    fields: &HeartbeatFields,
) -> ConsumerGroupHeartbeatRequest {
    ConsumerGroupHeartbeatRequest {
        group_id: group.to_owned(),
        member_id: fields.member_id.clone(),
        member_epoch: fields.member_epoch,
        instance_id: fields.instance_id.clone(),
        rack_id: fields.rack_id.clone(),
        rebalance_timeout_ms: fields.rebalance_timeout_ms,
        subscribed_topic_names: fields.subscribed_topic_names.clone(),
        subscribed_topic_regex: fields.subscribed_topic_regex.clone(),
        server_assignor: fields.server_assignor.clone(),
        topic_partitions: fields.topic_partitions.as_ref().map(|topics| {
            topics
                .iter()
                .map(|(topic_id, partitions)| TopicPartitions {
                    topic_id: *topic_id,
                    partitions: partitions.clone(),
                    ..Default::default()
                })
                .collect()
        }),
        ..Default::default()
    }
}
