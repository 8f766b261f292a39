//! The `consumer` protocol's error table as code: what a member does about each error code of
//! ConsumerGroupHeartbeat (joining, staying, acknowledging), of its leave heartbeat, and of the
//! OffsetCommit and OffsetFetch it sends with its member epoch. The table in the
//! [module docs](super) says the same in words; the unit tests drive each row through the member.

use mooring_wire::error_code::ErrorCode;

use crate::reaction::{self as shared, Reaction};

/// ConsumerGroupHeartbeat (join, heartbeat, acknowledgement).
pub fn heartbeat(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        // GROUP_ID_NOT_FOUND answers a heartbeat at an epoch above 0 whose group no longer exists
        // (the member's session expired, the group emptied and the coordinator deleted it): the
        // membership is gone as with UNKNOWN_MEMBER_ID, and a join at epoch 0 recreates the group.
        E::FencedMemberEpoch | E::UnknownMemberId | E::GroupIdNotFound => {
            Reaction::RejoinAtEpochZero
        }
        E::UnreleasedInstanceId => Reaction::AwaitInstanceRelease,
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        E::CoordinatorLoadInProgress | E::RequestTimedOut => Reaction::RetryAfterBackoff,
        // GROUP_AUTHORIZATION_FAILED, UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION,
        // GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, UNSUPPORTED_VERSION, FENCED_INSTANCE_ID, ...
        _ => Reaction::Fatal,
    }
}

/// The leave heartbeat (epoch -1 or -2).
pub fn leave(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        E::UnknownMemberId | E::FencedMemberEpoch | E::FencedInstanceId | E::GroupIdNotFound => {
            Reaction::AlreadyGone
        }
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        E::CoordinatorLoadInProgress | E::RequestTimedOut => Reaction::RetryAfterBackoff,
        _ => Reaction::Fatal,
    }
}

/// OffsetCommit of a `consumer`-protocol member (per partition).
pub fn offset_commit(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        // The coordinator moved the member to a newer epoch the member has not heard of yet.
        E::StaleMemberEpoch => Reaction::RetryAfterRebalance,
        E::UnknownMemberId | E::FencedMemberEpoch | E::FencedInstanceId | E::IllegalGeneration => {
            Reaction::FailMemberGone
        }
        other => shared::offset_commit(other),
    }
}

/// OffsetFetch of a `consumer`-protocol member (group level and per partition).
pub fn offset_fetch(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::StaleMemberEpoch => Reaction::RetryAfterRebalance,
        E::UnknownMemberId | E::FencedMemberEpoch => Reaction::FailMemberGone,
        other => shared::offset_fetch(other),
    }
}
