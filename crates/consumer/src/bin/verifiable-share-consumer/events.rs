//! The JSON event lines on stdout, in the shapes and field order of Java's tool (kafkatest reads
//! them by name): one object a line, `timestamp` and `name` first.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffsetResetStrategySet {
    pub timestamp: u64,
    pub name: &'static str,
    pub offset_reset_strategy: &'static str,
}

/// One share-partition's records: `records_consumed`'s and `offsets_acknowledged`'s entries.
#[derive(Serialize)]
pub struct PartitionOffsets {
    pub topic: String,
    pub partition: i32,
    pub count: u64,
    pub offsets: Vec<i64>,
}

#[derive(Serialize)]
pub struct RecordsConsumed {
    pub timestamp: u64,
    pub name: &'static str,
    pub count: u64,
    pub partitions: Vec<PartitionOffsets>,
}

/// The broker's answer to acknowledgements of one share-partition.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OffsetsAcknowledged {
    pub timestamp: u64,
    pub name: &'static str,
    pub count: u64,
    pub partitions: Vec<PartitionOffsets>,
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `--ack-pattern`, on success: how many of each type (`ACCEPT`, `RELEASE`, `REJECT`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_type_counts: Option<BTreeMap<&'static str, u64>>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    /// The field order of Java's lines, as VerifiableShareConsumer 4.4 prints them.
    #[test]
    fn lines_keep_javas_field_order() {
        let line = serde_json::to_string(&OffsetsAcknowledged {
            timestamp: 1,
            name: "offsets_acknowledged",
            count: 2,
            partitions: vec![PartitionOffsets {
                topic: "t".into(),
                partition: 0,
                count: 2,
                offsets: vec![3, 4],
            }],
            success: true,
            error: None,
            ack_type_counts: Some(BTreeMap::from([("ACCEPT", 1), ("RELEASE", 1)])),
        })
        .unwrap();
        assert_eq!(
            line,
            r#"{"timestamp":1,"name":"offsets_acknowledged","count":2,"partitions":[{"topic":"t","partition":0,"count":2,"offsets":[3,4]}],"success":true,"ackTypeCounts":{"ACCEPT":1,"RELEASE":1}}"#
        );
        let line = serde_json::to_string(&OffsetResetStrategySet {
            timestamp: 1,
            name: "offset_reset_strategy_set",
            offset_reset_strategy: "earliest",
        })
        .unwrap();
        assert_eq!(
            line,
            r#"{"timestamp":1,"name":"offset_reset_strategy_set","offsetResetStrategy":"earliest"}"#
        );
    }
}
