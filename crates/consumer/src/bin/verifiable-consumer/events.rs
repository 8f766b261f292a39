//! The JSON event lines on stdout, in the shapes and field order of Java's tool (kafkatest reads
//! them by name): one object a line, `timestamp` and `name` first.

use mooring_consumer::TopicPartition;
use serde::Serialize;

use crate::lines::{now_millis, print_json};

#[derive(Serialize)]
struct Partition {
    topic: String,
    partition: i32,
}

impl From<&TopicPartition> for Partition {
    fn from(tp: &TopicPartition) -> Self {
        Partition {
            topic: tp.topic.to_string(),
            partition: tp.partition,
        }
    }
}

#[derive(Serialize)]
struct Partitions {
    timestamp: u64,
    name: &'static str,
    partitions: Vec<Partition>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub topic: String,
    pub partition: i32,
    pub count: u64,
    pub min_offset: i64,
    pub max_offset: i64,
}

#[derive(Serialize)]
pub struct RecordsConsumed {
    pub timestamp: u64,
    pub name: &'static str,
    pub count: u64,
    pub partitions: Vec<Summary>,
}

#[derive(Serialize)]
pub struct CommitData {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
}

#[derive(Serialize)]
pub struct OffsetsCommitted {
    pub timestamp: u64,
    pub name: &'static str,
    pub offsets: Vec<CommitData>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub success: bool,
}

pub fn print_partitions(name: &'static str, partitions: &[TopicPartition]) {
    print_json(&Partitions {
        timestamp: now_millis(),
        name,
        partitions: partitions.iter().map(Partition::from).collect(),
    });
}
