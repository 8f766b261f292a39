//! The JSON event lines on stdout, in the shapes and field order of Java's tool (kafkatest reads
//! them by name): one object a line, `timestamp` and `name` first.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use mooring_consumer::TopicPartition;
use serde::Serialize;

/// Wall-clock milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

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
pub struct Simple {
    pub timestamp: u64,
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
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
pub struct RecordData {
    pub timestamp: u64,
    pub name: &'static str,
    pub key: Option<String>,
    pub value: Option<String>,
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
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

/// One JSON line on stdout; a closed stdout is ignored (the tool goes on and shuts down as asked).
pub fn print_json(event: &impl Serialize) {
    let Ok(line) = serde_json::to_string(event) else {
        return;
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

pub fn print_partitions(name: &'static str, partitions: &[TopicPartition]) {
    print_json(&Partitions {
        timestamp: now_millis(),
        name,
        partitions: partitions.iter().map(Partition::from).collect(),
    });
}

pub fn text(bytes: Option<&bytes::Bytes>) -> Option<String> {
    bytes.map(|b| String::from_utf8_lossy(b).into_owned())
}
