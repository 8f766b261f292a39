//! The client's errors: what failed, on which broker, for which request or group.
//! Every variant is plain data and `Clone`, so one failure can be handed to every waiter of a
//! connection that died.
//!
//! Security failures have variants of their own, each naming the principal this client presents
//! ([`ClientConfig::principal`](crate::ClientConfig::principal)) and never a secret:
//! [`Error::Authentication`] (SASL), [`Error::Tls`] (a certificate the handshake refused) and
//! [`Error::Authorization`] (the broker's ACLs refused a group, topics or the cluster). They are
//! fatal ([`Error::is_fatal`]): retrying with the same credentials cannot succeed, so nothing
//! retries them.

use std::sync::Arc;
use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::{DecodeError, EncodeError};

/// A failure of the coordinator client.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration key is unknown or its value is invalid.
    #[error("config {key}: {message}")]
    Config { key: String, message: String },
    /// The socket failed (connect, read or write).
    #[error("I/O error talking to {broker}: {source}")]
    Io {
        broker: String,
        #[source]
        source: Arc<std::io::Error>,
    },
    /// The connection closed while a request was in flight.
    #[error("connection to {broker} closed")]
    Disconnected { broker: String },
    /// No response within the request timeout.
    #[error("{api} to {broker} timed out after {after:?}")]
    Timeout {
        api: &'static str,
        broker: String,
        after: Duration,
    },
    /// The TLS handshake failed for a reason of TLS itself: the broker's certificate did not
    /// verify (unknown issuer, a name it does not hold, expired), the broker refused this
    /// client's certificate, no protocol in common. Fatal: the same configuration fails the same
    /// way. A handshake cut by the network is an [`Error::Io`] and retried.
    #[error("TLS handshake with {broker} failed for {principal}: {message}")]
    Tls {
        broker: String,
        /// Who this client is to the broker (see [`ClientConfig::principal`](crate::ClientConfig::principal)).
        principal: String,
        message: String,
    },
    /// SASL authentication failed: SASL_AUTHENTICATION_FAILED (a wrong password, with the
    /// broker's message), UNSUPPORTED_SASL_MECHANISM (naming the mechanisms the broker offers),
    /// ILLEGAL_SASL_STATE, or a SCRAM exchange this client refused. Fatal: retrying with the same
    /// credentials cannot help, so no reconnect storm follows.
    #[error("SASL {mechanism} authentication of {principal} to {broker} failed: {message}")]
    Authentication {
        broker: String,
        mechanism: String,
        /// `User:<sasl.username>`.
        principal: String,
        /// The broker's error code, SASL_AUTHENTICATION_FAILED for a failure found by this client.
        code: ErrorCode,
        message: String,
    },
    /// The broker's authorizer refused this principal an operation on a resource
    /// (GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, CLUSTER_AUTHORIZATION_FAILED).
    /// Fatal: the ACLs change only by an operator's hand.
    #[error("{api}: {principal} is not authorized for {resource} ({code})")]
    Authorization {
        api: &'static str,
        /// What was refused.
        resource: Resource,
        /// Who was refused (see [`ClientConfig::principal`](crate::ClientConfig::principal)).
        principal: String,
        code: ErrorCode,
    },
    /// The broker and this client share no version of an API.
    #[error("{api}: no version in common with {broker}")]
    UnsupportedVersion { api: &'static str, broker: String },
    /// A request could not be encoded at the version negotiated with the broker: a defect of this
    /// client (a field set that the version lacks), never of the network or the broker. Fatal:
    /// the same request would fail the same way on every retry.
    #[error("encoding {api}: {source}")]
    Encode {
        api: &'static str,
        #[source]
        source: EncodeError,
    },
    /// A response could not be decoded: the broker sent bytes we cannot read.
    #[error("decoding {api} from {broker}: {source}")]
    Decode {
        api: &'static str,
        broker: String,
        #[source]
        source: DecodeError,
    },
    /// The broker answered with an error code.
    #[error("{api} failed: {code}{}", message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default())]
    Broker {
        api: &'static str,
        code: ErrorCode,
        message: Option<String>,
    },
    /// Another process joined with this member's `group.instance.id` (KIP-345): this member is
    /// fenced and must not fight for the id.
    #[error("group {group}: instance id {instance_id} was taken over by another member (FENCED_INSTANCE_ID)")]
    FencedInstanceId { group: String, instance_id: String },
    /// `group.protocol=consumer` (KIP-848) cannot run against this broker: it does not offer
    /// ConsumerGroupHeartbeat (a Kafka 3.x broker without the protocol enabled, or older), it
    /// refuses it (UNSUPPORTED_VERSION), or it negotiates an OffsetCommit older than v9, which
    /// the broker refuses from a consumer-protocol member. Fatal: only `group.protocol=classic`
    /// (or an upgraded broker) helps.
    #[error("group {group}: the broker does not support group.protocol=consumer; use classic ({reason})")]
    ConsumerProtocolUnsupported { group: String, reason: String },
    /// A share group (KIP-932) cannot run against this broker: it does not offer
    /// ShareGroupHeartbeat v1 or ShareFetch v1 (Kafka 3.x, 4.0's early-access versions, or a
    /// 4.x cluster whose `share.version` feature is off), or it refuses the join
    /// (UNSUPPORTED_VERSION). Fatal: nothing retries it; only a broker with share groups helps.
    #[error("group {group}: the broker does not support share groups ({reason})")]
    ShareGroupsUnsupported { group: String, reason: String },
    /// A static member of a `consumer`-protocol group (KIP-848) kept being refused its
    /// `group.instance.id` (UNRELEASED_INSTANCE_ID: the member it replaces still holds it, most
    /// likely a previous process still running) for longer than
    /// `mooring.unreleased.instance.timeout.ms`. Fatal for this member.
    #[error(
        "group {group}: group.instance.id {instance_id} still held by another member after {after:?} \
         (UNRELEASED_INSTANCE_ID); is the process it replaces still running?"
    )]
    InstanceIdUnreleased {
        group: String,
        instance_id: String,
        after: Duration,
    },
    /// An operation of the group member ran out of the time its caller gave it (a commit bounded
    /// by a revoke or a shutdown, a close): given up, not retried. `last` is the error of the
    /// last attempt, if one failed before the time ran out.
    #[error(
        "{api} for group {group} did not complete within {after:?}{}",
        last.as_ref().map(|e| format!(" (last attempt: {e})")).unwrap_or_default()
    )]
    DeadlineExceeded {
        api: &'static str,
        group: String,
        after: Duration,
        last: Option<Box<Error>>,
    },
    /// The client or member was closed.
    #[error("closed")]
    Closed,
}

/// A resource of the broker's authorizer (its ACLs), as an [`Error::Authorization`] names it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Resource {
    /// A consumer group.
    Group(String),
    /// Topics, sorted.
    Topics(Vec<String>),
    /// The cluster.
    Cluster,
}

impl std::fmt::Display for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Resource::Group(group) => write!(f, "group {group}"),
            Resource::Topics(topics) if topics.len() == 1 => write!(f, "topic {}", topics[0]),
            Resource::Topics(topics) => write!(f, "topics {}", topics.join(", ")),
            Resource::Cluster => f.write_str("the cluster"),
        }
    }
}

/// Whether `code` is one of the authorizer's refusals.
pub fn is_authorization_code(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::GroupAuthorizationFailed
            | ErrorCode::TopicAuthorizationFailed
            | ErrorCode::ClusterAuthorizationFailed
            | ErrorCode::TransactionalIdAuthorizationFailed
            | ErrorCode::DelegationTokenAuthorizationFailed
    )
}

impl Error {
    /// Whether retrying the same operation (possibly after rediscovery or reconnect) can succeed.
    pub fn is_retriable(&self) -> bool {
        match self {
            Error::Io { .. } | Error::Disconnected { .. } | Error::Timeout { .. } => true,
            Error::Broker { code, .. } => code.is_retriable(),
            _ => false,
        }
    }

    /// Whether the error must end the consumer rather than be retried or logged: retrying can
    /// never succeed and carrying on would silently stop part of the work. A request that cannot
    /// be encoded (the partitions it serves would never be consumed, or the member never join),
    /// a broker that cannot run `group.protocol=consumer`, a static member whose instance id was
    /// never released, and every security failure: authentication, a TLS certificate refused, an
    /// authorization refused (typed, or as a broker's code).
    pub fn is_fatal(&self) -> bool {
        match self {
            Error::Encode { .. }
            | Error::ConsumerProtocolUnsupported { .. }
            | Error::ShareGroupsUnsupported { .. }
            | Error::InstanceIdUnreleased { .. }
            | Error::Authentication { .. }
            | Error::Tls { .. }
            | Error::Authorization { .. } => true,
            Error::Broker { code, .. } => {
                is_authorization_code(*code)
                    || matches!(
                        code,
                        ErrorCode::SaslAuthenticationFailed
                            | ErrorCode::UnsupportedSaslMechanism
                            | ErrorCode::IllegalSaslState
                    )
            }
            Error::DeadlineExceeded {
                last: Some(last), ..
            } => last.is_fatal(),
            _ => false,
        }
    }

    /// The broker's error code this error stands for, if any: a broker's answer, an
    /// authorization refused, a SASL failure, UNSUPPORTED_VERSION for a broker without the
    /// `consumer` protocol, UNRELEASED_INSTANCE_ID for an instance id never released.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::Broker { code, .. }
            | Error::Authentication { code, .. }
            | Error::Authorization { code, .. } => Some(*code),
            Error::ConsumerProtocolUnsupported { .. } | Error::ShareGroupsUnsupported { .. } => {
                Some(ErrorCode::UnsupportedVersion)
            }
            Error::InstanceIdUnreleased { .. } => Some(ErrorCode::UnreleasedInstanceId),
            _ => None,
        }
    }

    /// The typed [`Error::Authorization`] for a broker's `code` when it is an authorizer's
    /// refusal (the resource from the code: the group, these topics, the cluster), else the plain
    /// [`Error::Broker`] with `message`.
    pub fn from_code(
        api: &'static str,
        code: ErrorCode,
        message: Option<String>,
        group: &str,
        topics: impl FnOnce() -> Vec<String>,
        principal: impl FnOnce() -> String,
    ) -> Error {
        let resource = match code {
            ErrorCode::GroupAuthorizationFailed => Resource::Group(group.to_string()),
            ErrorCode::TopicAuthorizationFailed => {
                let mut topics = topics();
                topics.sort();
                topics.dedup();
                Resource::Topics(topics)
            }
            ErrorCode::ClusterAuthorizationFailed => Resource::Cluster,
            _ => {
                return Error::Broker {
                    api,
                    code,
                    message: message.filter(|m| !m.is_empty()),
                }
            }
        };
        Error::Authorization {
            api,
            resource,
            principal: principal(),
            code,
        }
    }
}

/// Result with the crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use mooring_wire::EncodeError;

    #[test]
    fn an_encoding_failure_is_fatal_and_never_retried() {
        let encode = Error::Encode {
            api: "ListOffsetsRequest",
            source: EncodeError::FieldNotAtVersion {
                api: "ListOffsetsRequest",
                version: 9,
                field: "timeout_ms",
            },
        };
        assert!(encode.is_fatal());
        assert!(!encode.is_retriable());
        let io = Error::Disconnected {
            broker: "node 1".into(),
        };
        assert!(io.is_retriable() && !io.is_fatal());
        let broker = Error::Broker {
            api: "ListOffsets",
            code: ErrorCode::UnsupportedVersion,
            message: None,
        };
        assert!(!broker.is_fatal());
    }

    #[test]
    fn security_failures_are_fatal_and_name_the_principal() {
        let denied = Error::from_code(
            "JoinGroup",
            ErrorCode::GroupAuthorizationFailed,
            None,
            "orders",
            Vec::new,
            || "User:alice".into(),
        );
        assert!(denied.is_fatal() && !denied.is_retriable());
        assert_eq!(
            denied.to_string(),
            "JoinGroup: User:alice is not authorized for group orders (GROUP_AUTHORIZATION_FAILED (30))"
        );
        let topics = Error::from_code(
            "Metadata",
            ErrorCode::TopicAuthorizationFailed,
            None,
            "",
            || vec!["b".into(), "a".into(), "b".into()],
            || "User:alice".into(),
        );
        assert!(
            topics
                .to_string()
                .contains("not authorized for topics a, b"),
            "{topics}"
        );
        let other = Error::from_code(
            "OffsetFetch",
            ErrorCode::NotCoordinator,
            Some(String::new()),
            "g",
            Vec::new,
            String::new,
        );
        assert!(
            matches!(other, Error::Broker { message: None, .. }),
            "{other:?}"
        );
        assert!(!other.is_fatal());
        let sasl = Error::Authentication {
            broker: "bootstrap 127.0.0.1:19193".into(),
            mechanism: "PLAIN".into(),
            principal: "User:alice".into(),
            code: ErrorCode::SaslAuthenticationFailed,
            message: "Invalid username or password".into(),
        };
        assert!(sasl.is_fatal() && !sasl.is_retriable());
        assert_eq!(sasl.code(), Some(ErrorCode::SaslAuthenticationFailed));
        let deadline = Error::DeadlineExceeded {
            api: "OffsetCommit",
            group: "g".into(),
            after: Duration::from_secs(1),
            last: Some(Box::new(denied)),
        };
        assert!(deadline.is_fatal());
    }
}
