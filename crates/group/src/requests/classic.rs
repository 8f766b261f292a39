//! Requests of the classic group protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup (the
//! DescribeGroups a member and the sidecar send is the client's: `mooring_client::requests`).
//!
//! `group.instance.id` (KIP-345) exists in JoinGroup from v5, SyncGroup and Heartbeat from v3 and
//! LeaveGroup from v3 (as a member identity); reasons (KIP-800) in JoinGroup from v8 and
//! LeaveGroup from v5; SyncGroup's protocol type and name (KIP-559) from v5.

use mooring_wire::consumer_protocol;
use mooring_wire::messages::join_group::JoinGroupRequestProtocol;
use mooring_wire::messages::leave_group::MemberIdentity;
use mooring_wire::messages::sync_group::SyncGroupRequestAssignment;
use mooring_wire::messages::{
    HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest,
};

use mooring_client::requests::millis;

use crate::GroupConfig;

/// JoinGroup of this member: timeouts from `session.timeout.ms` and `max.poll.interval.ms` (the
/// rebalance timeout from v1; at v0 the broker uses the session timeout for both), one protocol
/// per assignor, `reason` saying why it (re)joins.
pub(crate) fn join_group(
    version: i16,
    config: &GroupConfig,
    member_id: String,
    protocols: Vec<JoinGroupRequestProtocol>,
    reason: String,
) -> JoinGroupRequest {
    JoinGroupRequest {
        group_id: config.group_id.clone(),
        session_timeout_ms: millis(config.session_timeout),
        rebalance_timeout_ms: if version >= 1 {
            millis(config.rebalance_timeout)
        } else {
            -1
        },
        member_id,
        group_instance_id: if version >= 5 {
            config.group_instance_id.clone()
        } else {
            None
        },
        protocol_type: consumer_protocol::PROTOCOL_TYPE.to_owned(),
        protocols,
        reason: (version >= 8).then_some(reason),
        ..Default::default()
    }
}

/// SyncGroup of this member in `generation` (the leader's carries every member's assignment).
pub(crate) fn sync_group(
    version: i16,
    config: &GroupConfig,
    generation: i32,
    member_id: String,
    protocol_name: String,
    assignments: Vec<SyncGroupRequestAssignment>,
) -> SyncGroupRequest {
    let named = version >= 5;
    SyncGroupRequest {
        group_id: config.group_id.clone(),
        generation_id: generation,
        member_id,
        group_instance_id: if version >= 3 {
            config.group_instance_id.clone()
        } else {
            None
        },
        protocol_type: named.then(|| consumer_protocol::PROTOCOL_TYPE.to_owned()),
        protocol_name: named.then_some(protocol_name),
        assignments,
        ..Default::default()
    }
}

/// Heartbeat of this member in `generation`.
pub(crate) fn heartbeat(
    version: i16,
    config: &GroupConfig,
    generation: i32,
    member_id: String,
) -> HeartbeatRequest {
    HeartbeatRequest {
        group_id: config.group_id.clone(),
        generation_id: generation,
        member_id,
        group_instance_id: if version >= 3 {
            config.group_instance_id.clone()
        } else {
            None
        },
        ..Default::default()
    }
}

/// Why a member leaves, as LeaveGroup v5+ tells the broker (KIP-800).
const LEAVE_REASON: &str = "the consumer is closing";

/// LeaveGroup of this member: a batch of one member identity from v3 (with the reason from v5),
/// the bare member id before.
pub(crate) fn leave_group(
    version: i16,
    config: &GroupConfig,
    member_id: String,
) -> LeaveGroupRequest {
    if version >= 3 {
        LeaveGroupRequest {
            group_id: config.group_id.clone(),
            members: vec![MemberIdentity {
                member_id,
                group_instance_id: config.group_instance_id.clone(),
                reason: (version >= 5).then(|| LEAVE_REASON.to_owned()),
                ..Default::default()
            }],
            ..Default::default()
        }
    } else {
        LeaveGroupRequest {
            group_id: config.group_id.clone(),
            member_id,
            ..Default::default()
        }
    }
}
