//! What the producer wrote before the captures (`produced.tsv`) and the Fetch and ShareFetch
//! responses that carried it: every record of every batch, decoded with the records module, is the
//! record the producer wrote at that offset, in the batch's codec.

use std::collections::BTreeMap;

use bytes::Bytes;
use mooring_wire::messages::*;
use mooring_wire::records::{BatchItem, BatchReader, Compression};

use super::{root, Captured};

/// One record the producer wrote (a line of `produced.tsv`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Produced {
    key: String,
    value: String,
    codec: String,
}

/// (topic, partition) → offset → record, from `produced.tsv`.
pub(super) type ProducedLog = BTreeMap<(String, i32), BTreeMap<i64, Produced>>;

pub(super) fn produced() -> ProducedLog {
    let path = root().join("produced.tsv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut log = ProducedLog::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 6, "produced.tsv line {}: {line:?}", n + 1);
        let partition = f[1]
            .parse()
            .unwrap_or_else(|e| panic!("produced.tsv line {}: {e}", n + 1));
        let offset = f[2]
            .parse()
            .unwrap_or_else(|e| panic!("produced.tsv line {}: {e}", n + 1));
        log.entry((f[0].to_string(), partition))
            .or_default()
            .insert(
                offset,
                Produced {
                    key: f[3].to_string(),
                    value: f[4].to_string(),
                    codec: f[5].to_string(),
                },
            );
    }
    log
}

/// The offset after the last record produced to a partition: what a consumer that read
/// everything commits.
pub(super) fn end_offset(log: &ProducedLog, topic: &str, partition: i32) -> i64 {
    log.get(&(topic.to_string(), partition))
        .and_then(|offsets| offsets.keys().next_back())
        .map_or(0, |last| last + 1)
}

/// Decodes every batch of a Fetch response with the records module and compares each record
/// with what the producer wrote at that offset. Returns how many records it held.
pub(super) fn check_fetched_records(c: &Captured, m: &FetchResponse, log: &ProducedLog) -> usize {
    let name = &c.name;
    assert_eq!(m.error_code, 0, "{name}");
    assert_eq!(m.responses.len(), 1, "{name}: topics");
    let topic = &m.responses[0];
    if c.version() < 13 {
        assert_eq!(topic.topic, c.topic(), "{name}");
    }
    let mut total = 0;
    for p in &topic.partitions {
        assert_eq!(p.error_code, 0, "{name}: partition {}", p.partition_index);
        assert!(
            log.contains_key(&(c.topic().to_string(), p.partition_index)),
            "{name}: nothing produced to partition {}",
            p.partition_index
        );
        assert_eq!(
            p.high_watermark,
            end_offset(log, c.topic(), p.partition_index),
            "{name}: high watermark of partition {}",
            p.partition_index
        );
        let Some(records) = p.records.clone() else {
            continue;
        };
        total += check_records(c, p.partition_index, records, log).len();
    }
    assert!(total > 0, "{name}: the Fetch response holds no records");
    total
}

/// Decodes the batches of one partition's `records` (of a Fetch or a ShareFetch response) with
/// the records module: each batch is in the file's codec (`# codec:`), each record is the record
/// the producer wrote at that offset. Returns the offsets of the records, in order.
pub(super) fn check_records(
    c: &Captured,
    partition: i32,
    records: Bytes,
    log: &ProducedLog,
) -> Vec<i64> {
    let name = &c.name;
    let codec = c.meta("codec");
    let compression = Compression::ALL
        .into_iter()
        .find(|k| k.name() == codec)
        .unwrap_or_else(|| panic!("{name}: unknown codec {codec}"));
    let produced = log
        .get(&(c.topic().to_string(), partition))
        .unwrap_or_else(|| panic!("{name}: nothing produced to partition {partition}"));
    let mut offsets = Vec::new();
    let reader = BatchReader::new(records).with_context(c.topic(), partition);
    for item in reader {
        let item = item.unwrap_or_else(|e| panic!("{name}: partition {partition}: {e}"));
        let raw = match item {
            BatchItem::Batch(raw) => raw,
            BatchItem::Incomplete { remaining } => {
                panic!("{name}: a partial batch of {remaining} bytes (max bytes too small?)")
            }
        };
        assert_eq!(
            raw.header().attributes.compression(),
            Some(compression),
            "{name}: batch at {} compression",
            raw.header().base_offset
        );
        let batch = raw
            .decode()
            .unwrap_or_else(|e| panic!("{name}: decoding the {codec} batch: {e}"));
        for r in &batch.records {
            let want = produced
                .get(&r.offset)
                .unwrap_or_else(|| panic!("{name}: offset {} was never produced", r.offset));
            assert_eq!(want.codec, codec, "{name}");
            let text = |b: &Option<Bytes>| {
                b.as_ref()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default()
            };
            assert_eq!(
                (text(&r.key), text(&r.value)),
                (want.key.clone(), want.value.clone()),
                "{name}: partition {partition} offset {}",
                r.offset
            );
            offsets.push(r.offset);
        }
    }
    offsets
}
