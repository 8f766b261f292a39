//! The error table as code: one function per API maps a response's error code to the member's
//! reaction. The tables in the module docs of [`classic`](super::classic) and
//! [`consumer`](super::consumer) are the same mappings in words (the `consumer` protocol's
//! functions are in [`consumer::reaction`](super::consumer::reaction)); the unit tests drive
//! every row through the member with scripted responses.

use mooring_client::Error;
use mooring_wire::error_code::ErrorCode;

/// What the member does about a response's error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    /// No error: go on.
    Proceed,
    /// KIP-394 MEMBER_ID_REQUIRED: take the member id from the response and send JoinGroup again
    /// at once.
    RejoinWithGivenMemberId,
    /// UNKNOWN_MEMBER_ID: the coordinator forgot us. Partitions are lost, member id and generation
    /// reset, JoinGroup again at once.
    ResetMemberAndRejoin,
    /// ILLEGAL_GENERATION: our generation is fenced. Partitions are lost, generation reset (the
    /// member id is kept), JoinGroup again at once.
    ResetGenerationAndRejoin,
    /// REBALANCE_IN_PROGRESS (heartbeat, SyncGroup): the group moved on; rejoin keeping member id
    /// and generation (cooperative members keep their partitions).
    Rejoin,
    /// Transient: send the same request again after `retry.backoff.ms`.
    RetryAfterBackoff,
    /// The coordinator moved or is down: forget it (rediscover with FindCoordinator) and retry after
    /// `retry.backoff.ms`, keeping the membership.
    Rediscover,
    /// KIP-345 FENCED_INSTANCE_ID: another process holds our `group.instance.id`. Partitions lost;
    /// the fenced policy decides what follows.
    Fenced,
    /// Commit only: the group is completing a rebalance; wait for it to finish and retry with the
    /// new generation the partitions still owned.
    RetryAfterRebalance,
    /// Leave only: we are not (or no longer) in the group, which is what leaving wanted.
    AlreadyGone,
    /// The request fails for good (configuration, authorization, protocol mismatch): the member
    /// stops (`MemberState::Failed`) or the commit/fetch returns the error.
    Fatal,
    /// `consumer` protocol heartbeat (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID): the coordinator
    /// fenced this member's epoch. Partitions lost; the member rejoins at epoch 0 with the same
    /// member id.
    RejoinAtEpochZero,
    /// `consumer` protocol heartbeat (UNRELEASED_INSTANCE_ID): the member this static member
    /// replaces still holds its `group.instance.id`. Join again after a growing back-off, for at
    /// most `mooring.unreleased.instance.timeout.ms`.
    AwaitInstanceRelease,
    /// `consumer` protocol commit or offset fetch (UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH): the
    /// member id or epoch it carried is no longer the group's. The request fails; the member's own
    /// heartbeat learns the same and reacts, so the member task is not told.
    FailMemberGone,
}

/// JoinGroup.
pub fn join_group(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        E::MemberIdRequired => Reaction::RejoinWithGivenMemberId,
        E::UnknownMemberId => Reaction::ResetMemberAndRejoin,
        E::IllegalGeneration => Reaction::ResetGenerationAndRejoin,
        // A previous LeaveGroup or session is still being processed: wait and retry.
        E::CoordinatorLoadInProgress | E::RebalanceInProgress | E::RequestTimedOut => {
            Reaction::RetryAfterBackoff
        }
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        E::FencedInstanceId => Reaction::Fenced,
        _ => Reaction::Fatal,
    }
}

/// SyncGroup.
pub fn sync_group(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        E::RebalanceInProgress => Reaction::Rejoin,
        E::UnknownMemberId => Reaction::ResetMemberAndRejoin,
        E::IllegalGeneration => Reaction::ResetGenerationAndRejoin,
        E::CoordinatorLoadInProgress | E::RequestTimedOut => Reaction::RetryAfterBackoff,
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        E::FencedInstanceId => Reaction::Fenced,
        _ => Reaction::Fatal,
    }
}

/// Heartbeat.
pub fn heartbeat(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        E::RebalanceInProgress => Reaction::Rejoin,
        E::UnknownMemberId => Reaction::ResetMemberAndRejoin,
        E::IllegalGeneration => Reaction::ResetGenerationAndRejoin,
        // A code no Kafka release defines (a damaged answer) is retried, as Java's client
        // retries a heartbeat's unexpected error.
        E::CoordinatorLoadInProgress | E::RequestTimedOut | E::Unknown(_) => {
            Reaction::RetryAfterBackoff
        }
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        E::FencedInstanceId => Reaction::Fenced,
        _ => Reaction::Fatal,
    }
}

/// LeaveGroup (the whole response and each member's entry, v3+).
pub fn leave_group(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        E::UnknownMemberId | E::FencedInstanceId => Reaction::AlreadyGone,
        E::CoordinatorLoadInProgress | E::RequestTimedOut => Reaction::RetryAfterBackoff,
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        _ => Reaction::Fatal,
    }
}

/// OffsetCommit (per partition).
pub fn offset_commit(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        E::RebalanceInProgress => Reaction::RetryAfterRebalance,
        E::UnknownMemberId => Reaction::ResetMemberAndRejoin,
        E::IllegalGeneration => Reaction::ResetGenerationAndRejoin,
        E::FencedInstanceId => Reaction::Fenced,
        E::CoordinatorLoadInProgress
        | E::RequestTimedOut
        | E::UnknownTopicOrPartition
        | E::UnknownTopicId
        | E::UnstableOffsetCommit => Reaction::RetryAfterBackoff,
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        _ => Reaction::Fatal,
    }
}

/// OffsetFetch (group level and per partition).
pub fn offset_fetch(code: ErrorCode) -> Reaction {
    use ErrorCode as E;
    match code {
        E::None => Reaction::Proceed,
        // require_stable (KIP-447): a transactional commit is pending.
        // UNKNOWN_TOPIC_ID (v10+ names topics by id): retried with the topic ids fetched afresh.
        E::UnstableOffsetCommit
        | E::UnknownTopicId
        | E::CoordinatorLoadInProgress
        | E::RequestTimedOut => Reaction::RetryAfterBackoff,
        E::CoordinatorNotAvailable | E::NotCoordinator | E::NetworkException => {
            Reaction::Rediscover
        }
        _ => Reaction::Fatal,
    }
}

/// The code a member stopped by `error` is `Failed` with: the broker's when the error has one
/// (SASL, authorization), SASL_AUTHENTICATION_FAILED for a TLS handshake refused (Kafka has no
/// code for it; Java raises both as an `AuthenticationException`), UNSUPPORTED_VERSION for a
/// request this client cannot encode.
pub(crate) fn failed_code(error: &Error) -> ErrorCode {
    match error {
        Error::Tls { .. } => ErrorCode::SaslAuthenticationFailed,
        other => other.code().unwrap_or(ErrorCode::UnsupportedVersion),
    }
}
