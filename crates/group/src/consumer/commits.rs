//! What the shared commit path ([`offsets`](crate::offsets)) does differently for a
//! `consumer`-protocol member: who may commit, with which identity, at which version.
//!
//! - A commit goes at once whenever the member holds an epoch (reconciling and acknowledging
//!   included): the runtime commits what finished from inside `revoked`, while the member task
//!   awaits it, and the coordinator accepts the current epoch until the revocation is
//!   acknowledged. There is no "completing a rebalance" to wait out as with the classic protocol.
//! - OffsetCommit must be v9 or later (the broker refuses older ones from consumer-protocol
//!   members): checked before sending.
//! - OffsetFetch says the member id and epoch (v9+) while the member is in the group, so the
//!   coordinator answers for this member's epoch.

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::OffsetCommitRequest;

use crate::state::{ConsumerMemberState, MemberSnapshot, MemberState};
use crate::transport::GroupTransport;
use mooring_client::error::{Error, Result};

/// The first OffsetCommit version the broker takes from a consumer-protocol member.
pub(crate) const MIN_OFFSET_COMMIT_VERSION: i16 = 9;

/// Whether `snap` holds an epoch the coordinator counts (commits and member fetches work).
pub(crate) fn holds_epoch(snap: &MemberSnapshot) -> bool {
    use ConsumerMemberState as S;
    snap.generation > 0
        && snap.state != MemberState::Closed
        && matches!(
            snap.consumer_state,
            Some(S::Reconciling | S::Acknowledging | S::Stable | S::Leaving)
        )
}

/// Why a consumer-protocol member in `snap` cannot commit now, if it cannot.
pub(crate) fn cannot_commit(snap: &MemberSnapshot) -> Option<Error> {
    if snap.state == MemberState::Closed {
        return Some(Error::Closed);
    }
    (!holds_epoch(snap)).then(|| Error::Broker {
        api: "OffsetCommit",
        code: ErrorCode::UnknownMemberId,
        message: Some(format!(
            "the member is not part of an active group ({}: not joined yet, fenced, stale or failed)",
            snap.consumer_state
                .map_or("unknown", consumer_state_name)
        )),
    })
}

fn consumer_state_name(state: ConsumerMemberState) -> &'static str {
    use ConsumerMemberState as S;
    match state {
        S::Unsubscribed => "unsubscribed",
        S::Joining => "joining",
        S::Reconciling => "reconciling",
        S::Acknowledging => "acknowledging",
        S::Stable => "stable",
        S::Fenced => "fenced",
        S::Stale => "stale",
        S::Leaving => "leaving",
        S::InstanceIdUnreleased => "instance_id_unreleased",
        S::Fatal => "fatal",
    }
}

/// The member identity an OffsetFetch carries: the member's id and epoch while it holds one.
pub(crate) fn fetch_identity(snap: &MemberSnapshot) -> Option<(String, i32)> {
    holds_epoch(snap).then(|| (snap.member_id.clone(), snap.generation))
}

/// Fails unless OffsetCommit with the coordinator of `group` is v9 or later.
pub(crate) async fn check_commit_version<T: GroupTransport>(
    transport: &T,
    group: &str,
) -> Result<()> {
    let version = transport
        .coordinator_version::<OffsetCommitRequest>(group)
        .await?;
    if version < MIN_OFFSET_COMMIT_VERSION {
        return Err(Error::ConsumerProtocolUnsupported {
            group: group.to_owned(),
            reason: format!(
                "OffsetCommit v{version} negotiated; a consumer-protocol member needs v{MIN_OFFSET_COMMIT_VERSION} or later"
            ),
        });
    }
    Ok(())
}

/// The error of a commit or fetch refused because the member id or epoch it carried is gone.
pub(crate) fn member_gone(api: &'static str, code: ErrorCode, snap: &MemberSnapshot) -> Error {
    Error::Broker {
        api,
        code,
        message: Some(format!(
            "member {} at epoch {} is no longer in the group; the member rejoins",
            snap.member_id, snap.generation
        )),
    }
}
