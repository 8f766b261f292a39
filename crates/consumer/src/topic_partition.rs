//! The partition type the consumer runtime works with.
//!
//! Structurally the same as `mooring_coordinator::group::TopicPartition` (topic name plus
//! partition index, ordered by topic then index); the wiring to the group member converts between
//! the two with [`TopicPartition::new`], so this crate can be built and tested without the network.

use std::fmt;

/// One partition of one topic.
///
/// ```
/// use mooring_consumer::TopicPartition;
///
/// let tp = TopicPartition::new("orders", 3);
/// assert_eq!(tp.to_string(), "orders-3");
/// assert!(TopicPartition::new("orders", 2) < tp);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicPartition {
    /// The topic name.
    pub topic: String,
    /// The partition index.
    pub partition: i32,
}

impl TopicPartition {
    /// A topic and partition.
    pub fn new(topic: impl Into<String>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

impl fmt::Display for TopicPartition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.topic, self.partition)
    }
}

impl From<mooring_coordinator::group::TopicPartition> for TopicPartition {
    fn from(tp: mooring_coordinator::group::TopicPartition) -> Self {
        TopicPartition {
            topic: tp.topic,
            partition: tp.partition,
        }
    }
}

impl From<TopicPartition> for mooring_coordinator::group::TopicPartition {
    fn from(tp: TopicPartition) -> Self {
        mooring_coordinator::group::TopicPartition::new(tp.topic, tp.partition)
    }
}
