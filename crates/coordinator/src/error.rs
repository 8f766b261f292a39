//! The coordinator crate's errors: what failed, on which broker, for which request or group.
//! Every variant is plain data and `Clone`, so one failure can be handed to every waiter of a
//! connection that died.

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
    /// TLS setup or handshake failed.
    #[error("TLS with {broker}: {message}")]
    Tls { broker: String, message: String },
    /// SASL authentication failed. Fatal: retrying with the same credentials cannot help, so no
    /// reconnect storm follows.
    #[error("SASL {mechanism} authentication to {broker} failed: {message}")]
    Authentication {
        broker: String,
        mechanism: String,
        message: String,
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
    /// never succeed and carrying on would silently stop part of the work (a request that cannot
    /// be encoded: the partitions it serves would never be consumed, or the member never join).
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::Encode { .. })
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
}
