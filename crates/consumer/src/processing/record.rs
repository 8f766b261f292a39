//! The record a handler receives: a `mooring_wire` record plus the topic and partition it came
//! from. The topic name is shared (`Arc<str>`), so handing out a record allocates nothing.

use std::sync::Arc;

use bytes::Bytes;
use mooring_wire::records::Record;

use crate::TopicPartition;

/// One record of one partition, as handed to a [`Handler`](super::Handler).
///
/// ```
/// use mooring_consumer::processing::ConsumerRecord;
/// use mooring_wire::records::Record;
///
/// let rec = ConsumerRecord::new("orders".into(), 2, Record::new(41, 0, None, Some("v".into())));
/// assert_eq!((rec.topic(), rec.partition(), rec.offset()), ("orders", 2, 41));
/// assert_eq!(rec.value().map(|v| &v[..]), Some(&b"v"[..]));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRecord {
    topic: Arc<str>,
    partition: i32,
    record: Record,
}

impl ConsumerRecord {
    /// A record of `topic`/`partition`.
    pub fn new(topic: Arc<str>, partition: i32, record: Record) -> Self {
        ConsumerRecord {
            topic,
            partition,
            record,
        }
    }

    /// The topic name.
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// The partition index.
    pub fn partition(&self) -> i32 {
        self.partition
    }

    /// The topic and partition (allocates the topic name).
    pub fn topic_partition(&self) -> TopicPartition {
        TopicPartition::new(&*self.topic, self.partition)
    }

    /// The record's offset.
    pub fn offset(&self) -> i64 {
        self.record.offset
    }

    /// The record's key.
    pub fn key(&self) -> Option<&Bytes> {
        self.record.key.as_ref()
    }

    /// The record's value.
    pub fn value(&self) -> Option<&Bytes> {
        self.record.value.as_ref()
    }

    /// The whole wire record (timestamp, headers, ...).
    pub fn record(&self) -> &Record {
        &self.record
    }

    /// The wire record, by value.
    pub fn into_record(self) -> Record {
        self.record
    }
}

/// The bytes a record holds in a buffer: key, value, header keys and values.
pub(crate) fn record_size(record: &Record) -> usize {
    let opt = |b: &Option<Bytes>| b.as_ref().map_or(0, Bytes::len);
    let headers: usize = record
        .headers
        .iter()
        .map(|h| h.key.len() + opt(&h.value))
        .sum();
    opt(&record.key) + opt(&record.value) + headers
}
