//! The consumer's errors: configuration, the subscription, the network and the group, offsets
//! that cannot be found, and a handler failure that stopped processing. Each names what it is
//! about (the key, the partitions), so an application can match on it and say it clearly.

use mooring_wire::error_code::ErrorCode;
use mooring_wire::records::RecordsError;

use crate::processing::{EngineError, HandlerFailure};
use crate::subscription::SubscriptionError;
use crate::TopicPartition;

/// A failure of the consumer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum ConsumerError {
    /// A configuration key is unknown, or its value is invalid.
    #[error("config {key}: {message}")]
    Config {
        /// The key.
        key: String,
        /// What is wrong (for an unknown key: the nearest valid key).
        message: String,
    },
    /// The subscription state refused an operation (mode conflict, not assigned, ...).
    #[error(transparent)]
    Subscription(#[from] SubscriptionError),
    /// `auto.offset.reset=none` and these partitions have no committed offset (Java's
    /// `NoOffsetForPartitionException`).
    #[error(
        "no committed offset and auto.offset.reset=none for: {}",
        list(partitions)
    )]
    NoOffsetForPartition {
        /// Every such partition, sorted.
        partitions: Vec<TopicPartition>,
    },
    /// The fetch position is out of the log's range and `auto.offset.reset=none` (Java's
    /// `OffsetOutOfRangeException`).
    #[error(
        "fetch position out of range and auto.offset.reset=none for: {}",
        list(partitions)
    )]
    OffsetOutOfRange {
        /// The partitions.
        partitions: Vec<TopicPartition>,
    },
    /// The network client or the group member failed. Among them the security failures, fatal:
    /// [`Error::Authentication`](mooring_client::Error::Authentication) (SASL refused),
    /// [`Error::Tls`](mooring_client::Error::Tls) (a certificate refused) and
    /// [`Error::Authorization`](mooring_client::Error::Authorization) for a group or the
    /// cluster (topics are [`ConsumerError::TopicAuthorizationFailed`]).
    #[error(transparent)]
    Client(mooring_client::Error),
    /// The processing engine could not be built.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// A handler failed and the failure policy stopped processing; nothing past the record was
    /// committed.
    #[error(
        "handler failed on {}@{} after {} attempt(s): {}",
        .0.partition, .0.offset, .0.attempts, .0.error
    )]
    HandlerFailed(Box<HandlerFailure>),
    /// Records of a partition cannot be read (CRC mismatch, unknown compression, ...) at the same
    /// offset in `fetches` fresh fetches in a row: not a byte flipped in flight. Nothing at or
    /// past the offset was handed out.
    #[error(
        "corrupt records in {partition} at offset {offset} ({fetches} fetches in a row): {source}"
    )]
    CorruptRecords {
        /// The partition.
        partition: TopicPartition,
        /// The fetch offset whose batch cannot be read.
        offset: i64,
        /// How many fetches in a row failed there.
        fetches: u32,
        /// The decoder's error.
        #[source]
        source: Box<RecordsError>,
    },
    /// The broker refuses to serve these topics (TOPIC_AUTHORIZATION_FAILED in Fetch,
    /// Metadata, ListOffsets, OffsetFetch or OffsetCommit; Java's
    /// `TopicAuthorizationException`): the principal may not read them.
    #[error(
        "{principal} is not authorized to read topic(s) {} (TOPIC_AUTHORIZATION_FAILED)",
        .topics.join(", ")
    )]
    TopicAuthorizationFailed {
        /// The topics, sorted.
        topics: Vec<String>,
        /// Who was refused ([`ClientConfig::principal`](mooring_client::ClientConfig::principal)).
        principal: String,
    },
    /// Fetches of a partition answered, three fresh ones in a row at one offset, with an error
    /// that retrying cannot cure (Java raises an "unexpected error code" from `poll`).
    #[error("Fetch of {partition} failed: {code}, not retriable")]
    FetchFailed {
        /// The partition.
        partition: TopicPartition,
        /// The broker's error.
        code: ErrorCode,
    },
    /// The operation needs a `group.id`.
    #[error("{0} needs a group.id")]
    NoGroup(&'static str),
    /// `run` was called with nothing subscribed or assigned.
    #[error("nothing to consume: call subscribe, subscribe_pattern or assign before run")]
    NotSubscribed,
    /// `run` is already running on this consumer, or the consumer is not running.
    #[error("{0}")]
    Running(&'static str),
    /// The consumer was shut down.
    #[error("the consumer is shut down")]
    Closed,
}

impl ConsumerError {
    /// Whether the consumer must stop on this error instead of retrying: `auto.offset.reset=none`
    /// with no committed offset, topics the principal may not read, or a failure of the client
    /// that no retry can mend (authentication or TLS refused, an authorization refused, a request
    /// it cannot encode at the version the broker negotiated: carrying on would leave the
    /// partitions it serves unconsumed, silently).
    pub fn is_fatal(&self) -> bool {
        match self {
            ConsumerError::NoOffsetForPartition { .. }
            | ConsumerError::TopicAuthorizationFailed { .. } => true,
            ConsumerError::Client(e) => e.is_fatal(),
            _ => false,
        }
    }

    /// A short name of what kind of error this is, from a closed set (for a metric label and
    /// the telemetry's `fatal_error` event): `authentication`, `tls`, `group_authorization`,
    /// `topic_authorization`, `cluster_authorization`, `fenced`, `handler_failed`,
    /// `no_offset`, `offset_out_of_range`, `corrupt_records`, `fetch_failed`, `unencodable`,
    /// `config`, `other`.
    pub fn kind(&self) -> &'static str {
        use mooring_client::error::Resource;
        use mooring_client::Error as E;
        match self {
            ConsumerError::Config { .. } => "config",
            ConsumerError::NoOffsetForPartition { .. } => "no_offset",
            ConsumerError::OffsetOutOfRange { .. } => "offset_out_of_range",
            ConsumerError::HandlerFailed(_) => "handler_failed",
            ConsumerError::CorruptRecords { .. } => "corrupt_records",
            ConsumerError::TopicAuthorizationFailed { .. } => "topic_authorization",
            ConsumerError::FetchFailed { .. } => "fetch_failed",
            ConsumerError::Client(e) => match e {
                E::Authentication { .. } => "authentication",
                E::Tls { .. } => "tls",
                E::Authorization { resource, .. } => match resource {
                    Resource::Group(_) => "group_authorization",
                    Resource::Topics(_) => "topic_authorization",
                    _ => "cluster_authorization",
                },
                // Another process holds the instance id (the consumer protocol's refusal too).
                E::FencedInstanceId { .. } | E::InstanceIdUnreleased { .. } => "fenced",
                E::Encode { .. } => "unencodable",
                // group.protocol=consumer, or a share group, on a broker without it: the fix is
                // in the config (or the broker's).
                E::Config { .. }
                | E::ConsumerProtocolUnsupported { .. }
                | E::ShareGroupsUnsupported { .. } => "config",
                _ => "other",
            },
            _ => "other",
        }
    }
}

impl From<mooring_client::Error> for ConsumerError {
    /// At the edge of the crates: a config error is the consumer's own, topics refused are
    /// [`ConsumerError::TopicAuthorizationFailed`] wherever the refusal came from.
    fn from(e: mooring_client::Error) -> Self {
        use mooring_client::error::Resource;
        match e {
            mooring_client::Error::Config { key, message } => {
                ConsumerError::Config { key, message }
            }
            mooring_client::Error::Authorization {
                resource: Resource::Topics(topics),
                principal,
                ..
            } => ConsumerError::TopicAuthorizationFailed { topics, principal },
            other => ConsumerError::Client(other),
        }
    }
}

fn list(partitions: &[TopicPartition]) -> String {
    partitions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mooring_wire::EncodeError;

    #[test]
    fn fatal_errors_are_those_no_retry_can_mend() {
        let encode = ConsumerError::from(mooring_client::Error::Encode {
            api: "ListOffsetsRequest",
            source: EncodeError::FieldNotAtVersion {
                api: "ListOffsetsRequest",
                version: 9,
                field: "timeout_ms",
            },
        });
        assert!(encode.is_fatal(), "{encode}");
        let none = ConsumerError::NoOffsetForPartition {
            partitions: vec![TopicPartition::new("t", 0)],
        };
        assert!(none.is_fatal());
        let gone = ConsumerError::from(mooring_client::Error::Disconnected {
            broker: "node 1".into(),
        });
        assert!(!gone.is_fatal(), "{gone}");
    }

    #[test]
    fn the_consumer_protocol_s_fatal_errors_have_their_kind() {
        let unsupported = ConsumerError::from(mooring_client::Error::ConsumerProtocolUnsupported {
            group: "g".into(),
            reason: "ConsumerGroupHeartbeat answered UNSUPPORTED_VERSION".into(),
        });
        // group.protocol asks what the broker cannot give: the fix is in the config.
        assert_eq!(unsupported.kind(), "config");
        let unreleased = ConsumerError::from(mooring_client::Error::InstanceIdUnreleased {
            group: "g".into(),
            instance_id: "pod-0".into(),
            after: std::time::Duration::from_secs(600),
        });
        // Another process holds the instance id, as with FENCED_INSTANCE_ID.
        assert_eq!(unreleased.kind(), "fenced");
    }

    #[test]
    fn security_failures_are_fatal_and_topics_refused_are_one_variant() {
        use mooring_client::error::Resource;
        let topics = ConsumerError::from(mooring_client::Error::Authorization {
            api: "OffsetFetch",
            resource: Resource::Topics(vec!["orders".into()]),
            principal: "User:alice".into(),
            code: ErrorCode::TopicAuthorizationFailed,
        });
        assert!(
            matches!(&topics, ConsumerError::TopicAuthorizationFailed { topics, principal }
                if topics == &["orders"] && principal == "User:alice"),
            "{topics:?}"
        );
        assert!(topics.is_fatal());
        assert_eq!(topics.kind(), "topic_authorization");
        assert_eq!(
            topics.to_string(),
            "User:alice is not authorized to read topic(s) orders (TOPIC_AUTHORIZATION_FAILED)"
        );
        let group = ConsumerError::from(mooring_client::Error::Authorization {
            api: "JoinGroup",
            resource: Resource::Group("g".into()),
            principal: "User:alice".into(),
            code: ErrorCode::GroupAuthorizationFailed,
        });
        assert!(group.is_fatal());
        assert_eq!(group.kind(), "group_authorization");
        let sasl = ConsumerError::from(mooring_client::Error::Authentication {
            broker: "b".into(),
            mechanism: "PLAIN".into(),
            principal: "User:alice".into(),
            code: ErrorCode::SaslAuthenticationFailed,
            message: "Invalid username or password".into(),
        });
        assert!(sasl.is_fatal());
        assert_eq!(sasl.kind(), "authentication");
    }
}

/// Where a consumer keeps the first fatal error: the one it stops on and `run` returns. Later
/// ones (the same failure seen by another task) do not replace it.
#[derive(Debug, Default)]
pub(crate) struct FirstFatal(std::sync::Mutex<Option<ConsumerError>>);

impl FirstFatal {
    /// Keeps `error` if it is the first; `true` then.
    pub(crate) fn keep(&self, error: &ConsumerError) -> bool {
        let mut fatal = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = fatal.is_none();
        if first {
            *fatal = Some(error.clone());
        }
        first
    }

    /// The first fatal error, if one happened.
    pub(crate) fn get(&self) -> Option<ConsumerError> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}
