//! Errors of the subscription state: each names what the caller got wrong (the mode in use, the
//! partitions concerned), so the application can match on it and say it clearly.

use super::{SubscriptionMode, TopicPartition};

/// An operation on the subscription state that cannot be done.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubscriptionError {
    /// Topics, pattern and manual assign are mutually exclusive: `unsubscribe()` first.
    #[error(
        "subscription mode conflict: already using {current}, cannot switch to {requested} \
         (call unsubscribe first)"
    )]
    ModeConflict {
        /// The mode in use.
        current: SubscriptionMode,
        /// The mode the call asked for.
        requested: SubscriptionMode,
    },
    /// The subscription pattern does not compile.
    #[error("invalid subscription pattern {pattern:?}: {reason}")]
    InvalidPattern {
        /// The pattern given.
        pattern: String,
        /// The regex compiler's message.
        reason: String,
    },
    /// A group assignment arrived while the consumer is not group-managed (manual assign, or
    /// nothing subscribed).
    #[error("group assignment received while the subscription mode is {current}")]
    NotGroupManaged {
        /// The mode in use.
        current: SubscriptionMode,
    },
    /// The group assigned partitions of topics this consumer is not subscribed to.
    #[error("assigned partitions of unsubscribed topics: {}", list(partitions))]
    NotSubscribed {
        /// The partitions outside the subscription.
        partitions: Vec<TopicPartition>,
    },
    /// The operation needs partitions currently assigned to this consumer.
    #[error("partitions not currently assigned: {}", list(partitions))]
    NotAssigned {
        /// The partitions not assigned.
        partitions: Vec<TopicPartition>,
    },
    /// `auto.offset.reset=none` and these partitions have neither a position nor a committed
    /// offset (Java's `NoOffsetForPartitionException`).
    #[error(
        "no committed offset and auto.offset.reset=none for: {}",
        list(partitions)
    )]
    NoOffsetForPartition {
        /// Every such partition, sorted.
        partitions: Vec<TopicPartition>,
    },
    /// A seek to a negative offset.
    #[error("invalid seek offset {offset} for {partition}")]
    InvalidOffset {
        /// The partition.
        partition: TopicPartition,
        /// The offset given.
        offset: i64,
    },
}

fn list(partitions: &[TopicPartition]) -> String {
    partitions
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
