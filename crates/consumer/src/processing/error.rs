//! Errors of the processing engine's API (handler errors are not here: they travel as
//! [`HandlerError`](super::HandlerError) inside events and [`HandlerFailure`](super::HandlerFailure)).

use crate::TopicPartition;

/// The engine cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A setting is out of range.
    #[error("invalid processing config {field}: {reason}")]
    InvalidConfig {
        /// The field name.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// `ProcessingEngine::new` was called outside a Tokio runtime.
    #[error("the processing engine must be created inside a Tokio runtime")]
    NoRuntime,
}

/// Records could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubmitError {
    /// The partition was never added, or was stopped or dropped (a late fetch after a revoke).
    #[error("partition {0} is not being processed")]
    UnknownPartition(TopicPartition),
    /// The engine is shutting down or shut down.
    #[error("the processing engine is shut down")]
    Closed,
    /// Offsets must increase within a partition; after a seek backwards the runtime drops and
    /// re-adds the partition. Nothing of the batch was accepted.
    #[error("offset {offset} of {partition} is not above the last accepted offset {last}")]
    OffsetNotIncreasing {
        /// The partition.
        partition: TopicPartition,
        /// The offending offset.
        offset: i64,
        /// The highest offset accepted before.
        last: i64,
    },
}
