//! Kafka's broker error codes as a `Copy` enum.
//!
//! Every code that Apache Kafka 4.4.0 defines (`org.apache.kafka.common.protocol.Errors`), from
//! `-1` (`UNKNOWN_SERVER_ERROR`) to `136` (`CONTROLLER_ID_NOT_REGISTERED`), with `0` as
//! [`ErrorCode::None`]. A code this crate does not know (a newer broker) is kept as
//! [`ErrorCode::Unknown`] rather than lost, so it can be logged and passed on.
//!
//! [`ErrorCode::is_retriable`] is true exactly for the codes whose Java exception extends
//! `RetriableException`: the condition is expected to pass, and the same request may be sent again
//! (possibly after refreshing metadata or rediscovering the coordinator). It says nothing about
//! the group-membership reactions (`REBALANCE_IN_PROGRESS`, `ILLEGAL_GENERATION`, ...), which the
//! coordinator handles one by one.
//!
//! The codes' numbers, names and retriable flags are one table, in `table.rs`; this module holds
//! the enum and the lookups over that table.

use std::fmt;

mod table;

use table::{FIRST, TABLE};

/// A Kafka protocol error code (the `ErrorCode` int16 fields of responses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ErrorCode {
    /// `UNKNOWN_SERVER_ERROR` (-1): The server experienced an unexpected error when processing the request.
    UnknownServerError,
    /// `NONE` (0): no error.
    #[default]
    None,
    /// `OFFSET_OUT_OF_RANGE` (1): The requested offset is not within the range of offsets maintained by the server.
    OffsetOutOfRange,
    /// `CORRUPT_MESSAGE` (2): This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.
    CorruptMessage,
    /// `UNKNOWN_TOPIC_OR_PARTITION` (3): This server does not host this topic-partition.
    UnknownTopicOrPartition,
    /// `INVALID_FETCH_SIZE` (4): The requested fetch size is invalid.
    InvalidFetchSize,
    /// `LEADER_NOT_AVAILABLE` (5): There is no leader for this topic-partition as we are in the middle of a leadership election.
    LeaderNotAvailable,
    /// `NOT_LEADER_OR_FOLLOWER` (6): For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.
    NotLeaderOrFollower,
    /// `REQUEST_TIMED_OUT` (7): The request timed out.
    RequestTimedOut,
    /// `BROKER_NOT_AVAILABLE` (8): The broker is not available.
    BrokerNotAvailable,
    /// `REPLICA_NOT_AVAILABLE` (9): The replica is not available for the requested topic-partition. Produce/Fetch requests and other requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a replica of the topic-partition.
    ReplicaNotAvailable,
    /// `MESSAGE_TOO_LARGE` (10): The request included a message larger than the max message size the server will accept.
    MessageTooLarge,
    /// `STALE_CONTROLLER_EPOCH` (11): The controller moved to another broker.
    StaleControllerEpoch,
    /// `OFFSET_METADATA_TOO_LARGE` (12): The metadata field of the offset request was too large.
    OffsetMetadataTooLarge,
    /// `NETWORK_EXCEPTION` (13): The server disconnected before a response was received.
    NetworkException,
    /// `COORDINATOR_LOAD_IN_PROGRESS` (14): The coordinator is loading and hence can't process requests.
    CoordinatorLoadInProgress,
    /// `COORDINATOR_NOT_AVAILABLE` (15): The coordinator is not available.
    CoordinatorNotAvailable,
    /// `NOT_COORDINATOR` (16): This is not the correct coordinator.
    NotCoordinator,
    /// `INVALID_TOPIC_EXCEPTION` (17): The request attempted to perform an operation on an invalid topic.
    InvalidTopicException,
    /// `RECORD_LIST_TOO_LARGE` (18): The request included message batch larger than the configured segment size on the server.
    RecordListTooLarge,
    /// `NOT_ENOUGH_REPLICAS` (19): Messages are rejected since there are fewer in-sync replicas than required.
    NotEnoughReplicas,
    /// `NOT_ENOUGH_REPLICAS_AFTER_APPEND` (20): Messages are written to the log, but to fewer in-sync replicas than required.
    NotEnoughReplicasAfterAppend,
    /// `INVALID_REQUIRED_ACKS` (21): Produce request specified an invalid value for required acks.
    InvalidRequiredAcks,
    /// `ILLEGAL_GENERATION` (22): Specified group generation id is not valid.
    IllegalGeneration,
    /// `INCONSISTENT_GROUP_PROTOCOL` (23): The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.
    InconsistentGroupProtocol,
    /// `INVALID_GROUP_ID` (24): The group id is invalid.
    InvalidGroupId,
    /// `UNKNOWN_MEMBER_ID` (25): The coordinator is not aware of this member.
    UnknownMemberId,
    /// `INVALID_SESSION_TIMEOUT` (26): The session timeout is not within the range allowed by the broker (as configured by group.min.session.timeout.ms and group.max.session.timeout.ms).
    InvalidSessionTimeout,
    /// `REBALANCE_IN_PROGRESS` (27): The group is rebalancing, so a rejoin is needed.
    RebalanceInProgress,
    /// `INVALID_COMMIT_OFFSET_SIZE` (28): The committing offset data size is not valid.
    InvalidCommitOffsetSize,
    /// `TOPIC_AUTHORIZATION_FAILED` (29): Topic authorization failed.
    TopicAuthorizationFailed,
    /// `GROUP_AUTHORIZATION_FAILED` (30): Group authorization failed.
    GroupAuthorizationFailed,
    /// `CLUSTER_AUTHORIZATION_FAILED` (31): Cluster authorization failed.
    ClusterAuthorizationFailed,
    /// `INVALID_TIMESTAMP` (32): The timestamp of the message is out of acceptable range.
    InvalidTimestamp,
    /// `UNSUPPORTED_SASL_MECHANISM` (33): The broker does not support the requested SASL mechanism.
    UnsupportedSaslMechanism,
    /// `ILLEGAL_SASL_STATE` (34): Request is not valid given the current SASL state.
    IllegalSaslState,
    /// `UNSUPPORTED_VERSION` (35): The version of API is not supported.
    UnsupportedVersion,
    /// `TOPIC_ALREADY_EXISTS` (36): Topic with this name already exists.
    TopicAlreadyExists,
    /// `INVALID_PARTITIONS` (37): Number of partitions is below 1.
    InvalidPartitions,
    /// `INVALID_REPLICATION_FACTOR` (38): Replication factor is below 1 or larger than the number of available brokers.
    InvalidReplicationFactor,
    /// `INVALID_REPLICA_ASSIGNMENT` (39): Replica assignment is invalid.
    InvalidReplicaAssignment,
    /// `INVALID_CONFIG` (40): Configuration is invalid.
    InvalidConfig,
    /// `NOT_CONTROLLER` (41): This is not the correct controller for this cluster.
    NotController,
    /// `INVALID_REQUEST` (42): This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.
    InvalidRequest,
    /// `UNSUPPORTED_FOR_MESSAGE_FORMAT` (43): The message format version on the broker does not support the request.
    UnsupportedForMessageFormat,
    /// `POLICY_VIOLATION` (44): Request parameters do not satisfy the configured policy.
    PolicyViolation,
    /// `OUT_OF_ORDER_SEQUENCE_NUMBER` (45): The broker received an out of order sequence number.
    OutOfOrderSequenceNumber,
    /// `DUPLICATE_SEQUENCE_NUMBER` (46): The broker received a duplicate sequence number.
    DuplicateSequenceNumber,
    /// `INVALID_PRODUCER_EPOCH` (47): Producer attempted to produce with an old epoch.
    InvalidProducerEpoch,
    /// `INVALID_TXN_STATE` (48): The producer attempted a transactional operation in an invalid state.
    InvalidTxnState,
    /// `INVALID_PRODUCER_ID_MAPPING` (49): The producer attempted to use a producer id which is not currently assigned to its transactional id.
    InvalidProducerIdMapping,
    /// `INVALID_TRANSACTION_TIMEOUT` (50): The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms).
    InvalidTransactionTimeout,
    /// `CONCURRENT_TRANSACTIONS` (51): The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing.
    ConcurrentTransactions,
    /// `TRANSACTION_COORDINATOR_FENCED` (52): Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer.
    TransactionCoordinatorFenced,
    /// `TRANSACTIONAL_ID_AUTHORIZATION_FAILED` (53): Transactional Id authorization failed.
    TransactionalIdAuthorizationFailed,
    /// `SECURITY_DISABLED` (54): Security features are disabled.
    SecurityDisabled,
    /// `OPERATION_NOT_ATTEMPTED` (55): The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest.
    OperationNotAttempted,
    /// `KAFKA_STORAGE_ERROR` (56): Disk error when trying to access log file on the disk.
    KafkaStorageError,
    /// `LOG_DIR_NOT_FOUND` (57): The user-specified log directory is not found in the broker config.
    LogDirNotFound,
    /// `SASL_AUTHENTICATION_FAILED` (58): SASL Authentication failed.
    SaslAuthenticationFailed,
    /// `UNKNOWN_PRODUCER_ID` (59): This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question. This could happen if, for instance, the producer's records were deleted because their retention time had elapsed. Once the last records of the producerId are removed, the producer's metadata is removed from the broker, and future appends by the producer will return this exception.
    UnknownProducerId,
    /// `REASSIGNMENT_IN_PROGRESS` (60): A partition reassignment is in progress.
    ReassignmentInProgress,
    /// `DELEGATION_TOKEN_AUTH_DISABLED` (61): Delegation Token feature is not enabled.
    DelegationTokenAuthDisabled,
    /// `DELEGATION_TOKEN_NOT_FOUND` (62): Delegation Token is not found on server.
    DelegationTokenNotFound,
    /// `DELEGATION_TOKEN_OWNER_MISMATCH` (63): Specified Principal is not valid Owner/Renewer.
    DelegationTokenOwnerMismatch,
    /// `DELEGATION_TOKEN_REQUEST_NOT_ALLOWED` (64): Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.
    DelegationTokenRequestNotAllowed,
    /// `DELEGATION_TOKEN_AUTHORIZATION_FAILED` (65): Delegation Token authorization failed.
    DelegationTokenAuthorizationFailed,
    /// `DELEGATION_TOKEN_EXPIRED` (66): Delegation Token is expired.
    DelegationTokenExpired,
    /// `INVALID_PRINCIPAL_TYPE` (67): Supplied principalType is not supported.
    InvalidPrincipalType,
    /// `NON_EMPTY_GROUP` (68): The group is not empty.
    NonEmptyGroup,
    /// `GROUP_ID_NOT_FOUND` (69): The group id does not exist.
    GroupIdNotFound,
    /// `FETCH_SESSION_ID_NOT_FOUND` (70): The fetch session ID was not found.
    FetchSessionIdNotFound,
    /// `INVALID_FETCH_SESSION_EPOCH` (71): The fetch session epoch is invalid.
    InvalidFetchSessionEpoch,
    /// `LISTENER_NOT_FOUND` (72): There is no listener on the leader broker that matches the listener on which metadata request was processed.
    ListenerNotFound,
    /// `TOPIC_DELETION_DISABLED` (73): Topic deletion is disabled.
    TopicDeletionDisabled,
    /// `FENCED_LEADER_EPOCH` (74): The leader epoch in the request is older than the epoch on the broker.
    FencedLeaderEpoch,
    /// `UNKNOWN_LEADER_EPOCH` (75): The leader epoch in the request is newer than the epoch on the broker.
    UnknownLeaderEpoch,
    /// `UNSUPPORTED_COMPRESSION_TYPE` (76): The requesting client does not support the compression type of given partition.
    UnsupportedCompressionType,
    /// `STALE_BROKER_EPOCH` (77): Broker epoch has changed.
    StaleBrokerEpoch,
    /// `OFFSET_NOT_AVAILABLE` (78): The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing.
    OffsetNotAvailable,
    /// `MEMBER_ID_REQUIRED` (79): The group member needs to have a valid member id before actually entering a consumer group.
    MemberIdRequired,
    /// `PREFERRED_LEADER_NOT_AVAILABLE` (80): The preferred leader was not available.
    PreferredLeaderNotAvailable,
    /// `GROUP_MAX_SIZE_REACHED` (81): The group has reached its maximum size.
    GroupMaxSizeReached,
    /// `FENCED_INSTANCE_ID` (82): The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.
    FencedInstanceId,
    /// `ELIGIBLE_LEADERS_NOT_AVAILABLE` (83): Eligible topic partition leaders are not available.
    EligibleLeadersNotAvailable,
    /// `ELECTION_NOT_NEEDED` (84): Leader election not needed for topic partition.
    ElectionNotNeeded,
    /// `NO_REASSIGNMENT_IN_PROGRESS` (85): No partition reassignment is in progress.
    NoReassignmentInProgress,
    /// `GROUP_SUBSCRIBED_TO_TOPIC` (86): Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.
    GroupSubscribedToTopic,
    /// `INVALID_RECORD` (87): This record has failed the validation on broker and hence will be rejected.
    InvalidRecord,
    /// `UNSTABLE_OFFSET_COMMIT` (88): There are unstable offsets that need to be cleared.
    UnstableOffsetCommit,
    /// `THROTTLING_QUOTA_EXCEEDED` (89): The throttling quota has been exceeded.
    ThrottlingQuotaExceeded,
    /// `PRODUCER_FENCED` (90): There is a newer producer with the same transactionalId which fences the current one.
    ProducerFenced,
    /// `RESOURCE_NOT_FOUND` (91): A request illegally referred to a resource that does not exist.
    ResourceNotFound,
    /// `DUPLICATE_RESOURCE` (92): A request illegally referred to the same resource twice.
    DuplicateResource,
    /// `UNACCEPTABLE_CREDENTIAL` (93): Requested credential would not meet criteria for acceptability.
    UnacceptableCredential,
    /// `INCONSISTENT_VOTER_SET` (94): Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters.
    InconsistentVoterSet,
    /// `INVALID_UPDATE_VERSION` (95): The given update version was invalid.
    InvalidUpdateVersion,
    /// `FEATURE_UPDATE_FAILED` (96): Unable to update finalized features due to an unexpected server error.
    FeatureUpdateFailed,
    /// `PRINCIPAL_DESERIALIZATION_FAILURE` (97): Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup.
    PrincipalDeserializationFailure,
    /// `SNAPSHOT_NOT_FOUND` (98): Requested snapshot was not found.
    SnapshotNotFound,
    /// `POSITION_OUT_OF_RANGE` (99): Requested position is not greater than or equal to zero, and less than the size of the snapshot.
    PositionOutOfRange,
    /// `UNKNOWN_TOPIC_ID` (100): This server does not host this topic ID.
    UnknownTopicId,
    /// `DUPLICATE_BROKER_REGISTRATION` (101): This broker ID is already in use.
    DuplicateBrokerRegistration,
    /// `BROKER_ID_NOT_REGISTERED` (102): The given broker ID was not registered.
    BrokerIdNotRegistered,
    /// `INCONSISTENT_TOPIC_ID` (103): The log's topic ID did not match the topic ID in the request.
    InconsistentTopicId,
    /// `INCONSISTENT_CLUSTER_ID` (104): The clusterId in the request does not match that found on the server.
    InconsistentClusterId,
    /// `TRANSACTIONAL_ID_NOT_FOUND` (105): The transactionalId could not be found.
    TransactionalIdNotFound,
    /// `FETCH_SESSION_TOPIC_ID_ERROR` (106): The fetch session encountered inconsistent topic ID usage.
    FetchSessionTopicIdError,
    /// `INELIGIBLE_REPLICA` (107): The new ISR contains at least one ineligible replica.
    IneligibleReplica,
    /// `NEW_LEADER_ELECTED` (108): The AlterPartition request successfully updated the partition state but the leader has changed.
    NewLeaderElected,
    /// `OFFSET_MOVED_TO_TIERED_STORAGE` (109): The requested offset is moved to tiered storage.
    OffsetMovedToTieredStorage,
    /// `FENCED_MEMBER_EPOCH` (110): The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin.
    FencedMemberEpoch,
    /// `UNRELEASED_INSTANCE_ID` (111): The instance ID is still used by another member in the consumer group. That member must leave first.
    UnreleasedInstanceId,
    /// `UNSUPPORTED_ASSIGNOR` (112): The assignor or its version range is not supported by the consumer group.
    UnsupportedAssignor,
    /// `STALE_MEMBER_EPOCH` (113): The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API.
    StaleMemberEpoch,
    /// `MISMATCHED_ENDPOINT_TYPE` (114): The request was sent to an endpoint of the wrong type.
    MismatchedEndpointType,
    /// `UNSUPPORTED_ENDPOINT_TYPE` (115): This endpoint type is not supported yet.
    UnsupportedEndpointType,
    /// `UNKNOWN_CONTROLLER_ID` (116): This controller ID is not known.
    UnknownControllerId,
    /// `UNKNOWN_SUBSCRIPTION_ID` (117): Client sent a push telemetry request with an invalid or outdated subscription ID.
    UnknownSubscriptionId,
    /// `TELEMETRY_TOO_LARGE` (118): Client sent a push telemetry request larger than the maximum size the broker will accept.
    TelemetryTooLarge,
    /// `INVALID_REGISTRATION` (119): The controller has considered the broker registration to be invalid.
    InvalidRegistration,
    /// `TRANSACTION_ABORTABLE` (120): The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID.
    TransactionAbortable,
    /// `INVALID_RECORD_STATE` (121): The record state is invalid. The acknowledgement of delivery could not be completed.
    InvalidRecordState,
    /// `SHARE_SESSION_NOT_FOUND` (122): The share session was not found.
    ShareSessionNotFound,
    /// `INVALID_SHARE_SESSION_EPOCH` (123): The share session epoch is invalid.
    InvalidShareSessionEpoch,
    /// `FENCED_STATE_EPOCH` (124): The coordinator rejected the request because the state epoch did not match.
    FencedStateEpoch,
    /// `INVALID_VOTER_KEY` (125): The voter key doesn't match the receiving replica's key.
    InvalidVoterKey,
    /// `DUPLICATE_VOTER` (126): The voter is already part of the set of voters.
    DuplicateVoter,
    /// `VOTER_NOT_FOUND` (127): The voter is not part of the set of voters.
    VoterNotFound,
    /// `INVALID_REGULAR_EXPRESSION` (128): The regular expression is not valid.
    InvalidRegularExpression,
    /// `REBOOTSTRAP_REQUIRED` (129): Client metadata is stale. The client should rebootstrap to obtain new metadata.
    RebootstrapRequired,
    /// `STREAMS_INVALID_TOPOLOGY` (130): The supplied topology is invalid.
    StreamsInvalidTopology,
    /// `STREAMS_INVALID_TOPOLOGY_EPOCH` (131): The supplied topology epoch is invalid.
    StreamsInvalidTopologyEpoch,
    /// `STREAMS_TOPOLOGY_FENCED` (132): The supplied topology epoch is outdated.
    StreamsTopologyFenced,
    /// `SHARE_SESSION_LIMIT_REACHED` (133): The limit of share sessions has been reached.
    ShareSessionLimitReached,
    /// `GROUP_DELETION_FAILED` (134): DeleteGroups could not complete; see the error message on the per-group result for details.
    GroupDeletionFailed,
    /// `STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED` (135): The broker could not process the topology description update; see the error message for details.
    StreamsTopologyDescriptionUpdateFailed,
    /// `CONTROLLER_ID_NOT_REGISTERED` (136): The given controller ID was not registered.
    ControllerIdNotRegistered,
    /// A code this version of the crate does not know.
    Unknown(i16),
}

impl ErrorCode {
    /// The code for `code`; codes unknown to this crate become [`ErrorCode::Unknown`].
    pub fn from_i16(code: i16) -> ErrorCode {
        code.checked_sub(FIRST)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| TABLE.get(i))
            .map_or(ErrorCode::Unknown(code), |entry| entry.1)
    }

    fn entry(self) -> Option<&'static (i16, ErrorCode, &'static str, bool)> {
        match self {
            ErrorCode::Unknown(_) => None,
            known => TABLE.iter().find(|entry| entry.1 == known),
        }
    }

    /// The wire value.
    pub fn code(self) -> i16 {
        match self {
            ErrorCode::Unknown(code) => code,
            known => known.entry().map_or(i16::MIN, |entry| entry.0),
        }
    }

    /// Kafka's name for the code (`NOT_COORDINATOR`), or `UNKNOWN` for a code this crate does not know.
    pub fn name(self) -> &'static str {
        self.entry().map_or("UNKNOWN", |entry| entry.2)
    }

    /// Whether Kafka classifies the error as retriable (its exception extends `RetriableException`).
    /// Unknown codes are not retriable.
    pub fn is_retriable(self) -> bool {
        self.entry().is_some_and(|entry| entry.3)
    }

    /// Whether this is [`ErrorCode::None`].
    pub fn is_ok(self) -> bool {
        self == ErrorCode::None
    }

    /// `Ok(())` for [`ErrorCode::None`], the code itself otherwise.
    pub fn into_result(self) -> Result<(), ErrorCode> {
        if self.is_ok() {
            Ok(())
        } else {
            Err(self)
        }
    }

    /// Every code this crate knows, in code order.
    pub fn all() -> impl Iterator<Item = ErrorCode> {
        TABLE.iter().map(|entry| entry.1)
    }
}

impl From<i16> for ErrorCode {
    fn from(code: i16) -> Self {
        ErrorCode::from_i16(code)
    }
}

impl From<ErrorCode> for i16 {
    fn from(code: ErrorCode) -> Self {
        code.code()
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.code())
    }
}

impl std::error::Error for ErrorCode {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_contiguous_from_minus_one() {
        for (i, entry) in TABLE.iter().enumerate() {
            assert_eq!(
                i64::from(entry.0),
                i as i64 + i64::from(FIRST),
                "{}",
                entry.2
            );
        }
        assert_eq!(TABLE.len(), 138);
        assert_eq!(TABLE[TABLE.len() - 1].2, "CONTROLLER_ID_NOT_REGISTERED");
    }

    #[test]
    fn every_code_round_trips() {
        for code in -1i16..=136 {
            let e = ErrorCode::from_i16(code);
            assert!(!matches!(e, ErrorCode::Unknown(_)), "{code}");
            assert_eq!(e.code(), code);
            assert_eq!(ErrorCode::from_i16(e.code()), e);
            assert_eq!(i16::from(e), code);
        }
        for code in [i16::MIN, -2, 137, 1000, i16::MAX] {
            let e = ErrorCode::from(code);
            assert_eq!(e, ErrorCode::Unknown(code));
            assert_eq!(e.code(), code);
            assert_eq!(e.name(), "UNKNOWN");
            assert!(!e.is_retriable());
        }
    }

    #[test]
    fn names_and_retriability_match_kafka() {
        assert_eq!(ErrorCode::None.name(), "NONE");
        assert!(ErrorCode::None.is_ok());
        assert_eq!(ErrorCode::from_i16(16), ErrorCode::NotCoordinator);
        assert_eq!(
            ErrorCode::NotCoordinator.to_string(),
            "NOT_COORDINATOR (16)"
        );
        assert_eq!(ErrorCode::from_i16(82).name(), "FENCED_INSTANCE_ID");
        assert_eq!(ErrorCode::from_i16(79).name(), "MEMBER_ID_REQUIRED");
        // Group membership errors are not retriable in Kafka's sense: each has its own reaction.
        for e in [
            ErrorCode::RebalanceInProgress,
            ErrorCode::IllegalGeneration,
            ErrorCode::UnknownMemberId,
            ErrorCode::FencedInstanceId,
            ErrorCode::OffsetOutOfRange,
        ] {
            assert!(!e.is_retriable(), "{e}");
        }
        for e in [
            ErrorCode::NotCoordinator,
            ErrorCode::CoordinatorNotAvailable,
            ErrorCode::CoordinatorLoadInProgress,
            ErrorCode::NotLeaderOrFollower,
            ErrorCode::UnknownTopicOrPartition,
            ErrorCode::UnstableOffsetCommit,
            ErrorCode::FetchSessionIdNotFound,
        ] {
            assert!(e.is_retriable(), "{e}");
        }
        let retriable: Vec<i16> = ErrorCode::all()
            .filter(|e| e.is_retriable())
            .map(ErrorCode::code)
            .collect();
        assert_eq!(
            retriable,
            [
                2, 3, 5, 6, 7, 9, 13, 14, 15, 16, 19, 20, 41, 51, 56, 70, 71, 72, 74, 75, 78, 80,
                83, 84, 88, 89, 100, 103, 106, 122, 123, 133
            ]
        );
    }
}
