//! Topics and partitions, as every Mooring crate names them: one partition of one topic
//! ([`TopicPartition`]), and each topic's partitions with their replicas' racks
//! ([`PartitionsPerTopic`], what metadata says and a group leader's assignor is given).

use std::fmt;

mod partitions;

pub use partitions::PartitionsPerTopic;

/// One partition of one topic, the one partition type of every Mooring crate (the consumer
/// re-exports it as `mooring_consumer::TopicPartition`).
///
/// ```
/// use mooring_client::TopicPartition;
///
/// let tp = TopicPartition::new("orders", 3);
/// assert_eq!(tp.to_string(), "orders-3");
/// assert!(TopicPartition::new("orders", 2) < tp);
/// ```
/// It serializes as `{"topic": ..., "partition": ...}` (the telemetry schema's form).
#[derive(
    Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
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
