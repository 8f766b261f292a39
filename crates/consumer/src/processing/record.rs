//! The record a handler receives: a `mooring_wire` record plus the topic and partition it came
//! from and what it takes from its batch's header (timestamp type, log-append time, leader
//! epoch). The topic name is shared (`Arc<str>`) and the batch facts are copied (16 bytes), so
//! handing out a record allocates nothing.

use std::sync::Arc;

use bytes::Bytes;
use mooring_wire::records::batch::{NO_PARTITION_LEADER_EPOCH, NO_TIMESTAMP};
use mooring_wire::records::{BatchHeader, Header, Headers, Record, TimestampType};

use crate::TopicPartition;

/// What a record takes from the header of the batch it was written in: Kafka keeps these per
/// batch (RecordBatch v2), not per record.
///
/// ```
/// use mooring_consumer::processing::{BatchInfo, TimestampType};
///
/// let info = BatchInfo::default();
/// assert_eq!(info.timestamp_type, TimestampType::CreateTime);
/// assert_eq!(info.partition_leader_epoch, -1, "unknown");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchInfo {
    /// How the batch's timestamps were set (attributes bit 3).
    pub timestamp_type: TimestampType,
    /// The batch's `maxTimestamp`: every record's timestamp under
    /// [`TimestampType::LogAppendTime`].
    pub max_timestamp: i64,
    /// The epoch of the leader that appended the batch (KIP-101), -1 if unknown.
    pub partition_leader_epoch: i32,
}

impl Default for BatchInfo {
    /// Create time, no log-append time, no leader epoch.
    fn default() -> Self {
        BatchInfo {
            timestamp_type: TimestampType::CreateTime,
            max_timestamp: NO_TIMESTAMP,
            partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
        }
    }
}

impl From<&BatchHeader> for BatchInfo {
    fn from(h: &BatchHeader) -> Self {
        BatchInfo {
            timestamp_type: h.attributes.timestamp_type(),
            max_timestamp: h.max_timestamp,
            partition_leader_epoch: h.partition_leader_epoch,
        }
    }
}

/// Records of one partition as fetched, with the batches they came from: one value from the
/// fetcher to the partition's lane, where each record is joined with its batch's facts.
///
/// ```
/// use mooring_consumer::processing::{BatchInfo, FetchedBatch, FetchedRecords};
/// use mooring_wire::records::Record;
///
/// let fetched = FetchedRecords {
///     records: vec![Record::new(0, 1_000, None, None), Record::new(1, 1_001, None, None)],
///     batches: vec![FetchedBatch { last_offset: 1, info: BatchInfo::default() }],
/// };
/// assert_eq!(fetched.records.len(), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FetchedRecords {
    /// The records, in offset order.
    pub records: Vec<Record>,
    /// Each batch that gave records, in offset order: a record takes the facts of the first one
    /// whose last offset is at or above its own ([`BatchInfo::default`] past the last).
    pub batches: Vec<FetchedBatch>,
}

impl From<Vec<Record>> for FetchedRecords {
    /// Records without their batches' facts (every one [`BatchInfo::default`]).
    fn from(records: Vec<Record>) -> Self {
        FetchedRecords {
            records,
            batches: Vec::new(),
        }
    }
}

/// One fetched batch's facts and the last offset it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchedBatch {
    pub last_offset: i64,
    pub info: BatchInfo,
}

impl From<&BatchHeader> for FetchedBatch {
    fn from(h: &BatchHeader) -> Self {
        FetchedBatch {
            last_offset: h.last_offset(),
            info: BatchInfo::from(h),
        }
    }
}

/// One record of one partition, as handed to a [`Handler`](super::Handler).
///
/// ```
/// use mooring_consumer::processing::{BatchInfo, ConsumerRecord, Header, TimestampType};
/// use mooring_wire::records::Record;
///
/// let record = Record::new(41, 1_700_000_000_000, None, Some("v".into()))
///     .with_header(Header::new("content-type", "text/plain"));
/// let rec = ConsumerRecord::new("orders".into(), 2, record);
/// assert_eq!((rec.topic(), rec.partition(), rec.offset()), ("orders", 2, 41));
/// assert_eq!(rec.value().map(|v| &v[..]), Some(&b"v"[..]));
/// assert_eq!(rec.timestamp(), 1_700_000_000_000);
/// assert_eq!(rec.timestamp_type(), TimestampType::CreateTime);
/// assert_eq!(rec.header("content-type").and_then(|h| h.value.as_deref()), Some(&b"text/plain"[..]));
/// assert_eq!(rec.headers().len(), 1);
/// assert_eq!(rec.leader_epoch(), None);
///
/// // A batch the broker stamped with its log-append time, appended under leader epoch 7.
/// let rec = rec.with_batch(BatchInfo {
///     timestamp_type: TimestampType::LogAppendTime,
///     max_timestamp: 1_700_000_000_500,
///     partition_leader_epoch: 7,
/// });
/// assert_eq!(rec.timestamp(), 1_700_000_000_500);
/// assert_eq!(rec.leader_epoch(), Some(7));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerRecord {
    topic: Arc<str>,
    partition: i32,
    record: Record,
    batch: BatchInfo,
    /// A share group's delivery count (0: not a share group's record).
    delivery_count: i16,
}

impl ConsumerRecord {
    /// A record of `topic`/`partition`, from a batch with [`BatchInfo::default`] (create time,
    /// no leader epoch); see [`with_batch`](Self::with_batch).
    pub fn new(topic: Arc<str>, partition: i32, record: Record) -> Self {
        ConsumerRecord {
            topic,
            partition,
            record,
            batch: BatchInfo::default(),
            delivery_count: 0,
        }
    }

    /// The same record, delivered by a share group for the `delivery_count`-th time.
    pub fn with_delivery_count(mut self, delivery_count: i16) -> Self {
        self.delivery_count = delivery_count;
        self
    }

    /// How many times a share group has delivered this record, this delivery included (KIP-932;
    /// the group archives it once `share.delivery.count.limit` deliveries have not processed
    /// it); `None` for a consumer group's record.
    pub fn delivery_count(&self) -> Option<u16> {
        u16::try_from(self.delivery_count).ok().filter(|n| *n > 0)
    }

    /// The same record, from a batch with this header.
    pub fn with_batch(mut self, batch: BatchInfo) -> Self {
        self.batch = batch;
        self
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

    /// The topic name as it is shared between the records of a fetch.
    pub(crate) fn shared_topic(&self) -> &Arc<str> {
        &self.topic
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

    /// The record's timestamp, ms since the Unix epoch (-1: none): the producer's (or the
    /// broker's, if the topic says so) per [`timestamp_type`](Self::timestamp_type). Under
    /// log-append time it is the batch's append time, not the one stored in the record.
    pub fn timestamp(&self) -> i64 {
        match self.batch.timestamp_type {
            TimestampType::LogAppendTime => self.batch.max_timestamp,
            TimestampType::CreateTime => self.record.timestamp,
        }
    }

    /// How the timestamp was set: create time (by the producer) or log-append time (by the
    /// broker; the topic's `message.timestamp.type`).
    pub fn timestamp_type(&self) -> TimestampType {
        self.batch.timestamp_type
    }

    /// The record's headers, in the order written (keys may repeat).
    pub fn headers(&self) -> &Headers {
        &self.record.headers
    }

    /// The last header with this key (as Java's `Headers.lastHeader`), if any.
    pub fn header(&self, key: &str) -> Option<&Header> {
        self.record
            .headers
            .iter()
            .rev()
            .find(|h| h.key.as_bytes() == key.as_bytes())
    }

    /// The epoch of the partition leader that appended the record (KIP-101), when the broker
    /// stamped one; `None` for records written before leader epochs were kept.
    pub fn leader_epoch(&self) -> Option<i32> {
        (self.batch.partition_leader_epoch >= 0).then_some(self.batch.partition_leader_epoch)
    }

    /// What the record takes from its batch's header.
    pub fn batch(&self) -> &BatchInfo {
        &self.batch
    }

    /// The whole wire record, as stored (its `timestamp` field is the stored one; see
    /// [`timestamp`](Self::timestamp)).
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
