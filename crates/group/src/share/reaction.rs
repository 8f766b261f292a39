//! The share group's error table as code: what a share member does about each error code of its
//! ShareGroupHeartbeat (joining, staying) and of its leave heartbeat. The table in the
//! [module docs](super) says the same in words; the unit tests drive each row through the member.

use mooring_wire::error_code::ErrorCode;

use crate::reaction::Reaction;

/// ShareGroupHeartbeat (join, heartbeat).
pub fn heartbeat(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        // GROUP_ID_NOT_FOUND answers a heartbeat above epoch 0 whose group the coordinator has
        // deleted meanwhile: the membership is gone as with UNKNOWN_MEMBER_ID, and a join at
        // epoch 0 recreates the group.
        E::FencedMemberEpoch | E::UnknownMemberId | E::GroupIdNotFound => {
            Reaction::RejoinAtEpochZero
        }
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        E::CoordinatorLoadInProgress | E::RequestTimedOut => Reaction::RetryAfterBackoff,
        // UNSUPPORTED_VERSION (share groups off), GROUP_AUTHORIZATION_FAILED,
        // TOPIC_AUTHORIZATION_FAILED, GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, ...
        _ => Reaction::Fatal,
    }
}

/// The leave heartbeat (epoch -1).
pub fn leave(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        E::UnknownMemberId | E::FencedMemberEpoch | E::GroupIdNotFound => Reaction::AlreadyGone,
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        E::CoordinatorLoadInProgress | E::RequestTimedOut => Reaction::RetryAfterBackoff,
        _ => Reaction::Fatal,
    }
}
