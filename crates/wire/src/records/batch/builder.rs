//! [`RecordBatchBuilder`]: a batch made from records, its header filled from them as the Java
//! client fills it.

use bytes::Bytes;

use super::{
    BatchAttributes, RecordBatch, TimestampType, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP,
};
use crate::records::compression::Compression;
use crate::records::record::{Header, Record};

/// Builds a [`RecordBatch`], filling the header from the records the way the Java client's
/// `MemoryRecordsBuilder` does: `baseTimestamp` is the first record's timestamp, `maxTimestamp`
/// the largest (or the log-append time), `lastOffsetDelta` the last record's delta.
#[derive(Debug, Clone)]
pub struct RecordBatchBuilder {
    batch: RecordBatch,
    log_append_time: Option<i64>,
    next_offset: i64,
}

impl RecordBatchBuilder {
    pub(super) fn new(base_offset: i64) -> Self {
        RecordBatchBuilder {
            batch: RecordBatch {
                base_offset,
                partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
                attributes: BatchAttributes::default(),
                last_offset_delta: 0,
                base_timestamp: NO_TIMESTAMP,
                max_timestamp: NO_TIMESTAMP,
                producer_id: NO_PRODUCER_ID,
                producer_epoch: NO_PRODUCER_EPOCH,
                base_sequence: NO_SEQUENCE,
                records: Vec::new(),
            },
            log_append_time: None,
            next_offset: base_offset,
        }
    }

    /// Compresses the records with `codec`.
    pub fn compression(mut self, codec: Compression) -> Self {
        self.batch.attributes = self.batch.attributes.with_compression(codec);
        self
    }

    /// Marks the batch as stamped by the broker at `time` (log-append time).
    pub fn log_append_time(mut self, time: i64) -> Self {
        self.batch.attributes = self
            .batch
            .attributes
            .with_timestamp_type(TimestampType::LogAppendTime);
        self.log_append_time = Some(time);
        self
    }

    /// Sets the partition leader epoch.
    pub fn partition_leader_epoch(mut self, epoch: i32) -> Self {
        self.batch.partition_leader_epoch = epoch;
        self
    }

    /// An idempotent producer's batch.
    pub fn idempotent(mut self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        self.batch.producer_id = producer_id;
        self.batch.producer_epoch = producer_epoch;
        self.batch.base_sequence = base_sequence;
        self
    }

    /// A transactional producer's batch.
    pub fn transactional(self, producer_id: i64, producer_epoch: i16, base_sequence: i32) -> Self {
        let mut b = self.idempotent(producer_id, producer_epoch, base_sequence);
        b.batch.attributes = b.batch.attributes.with_transactional(true);
        b
    }

    /// A control batch.
    pub fn control(mut self) -> Self {
        self.batch.attributes = self.batch.attributes.with_control(true);
        self
    }

    /// Appends a record at the next offset.
    pub fn record(
        self,
        timestamp: i64,
        key: Option<Bytes>,
        value: Option<Bytes>,
        headers: Vec<Header>,
    ) -> Self {
        let offset = self.next_offset;
        let mut r = Record::new(offset, timestamp, key, value);
        r.headers = headers.into();
        self.push(r)
    }

    /// Appends a record with its own offset (which must not go below the previous one).
    pub fn push(mut self, record: Record) -> Self {
        self.next_offset = record.offset.wrapping_add(1);
        self.batch.records.push(record);
        self
    }

    /// The batch.
    pub fn build(mut self) -> RecordBatch {
        let b = &mut self.batch;
        if let Some(first) = b.records.first() {
            b.base_timestamp = first.timestamp;
        }
        if let Some(last) = b.records.last() {
            b.last_offset_delta = last.offset.wrapping_sub(b.base_offset) as i32;
        }
        b.max_timestamp = match self.log_append_time {
            Some(t) => t,
            None => b
                .records
                .iter()
                .map(|r| r.timestamp)
                .max()
                .unwrap_or(NO_TIMESTAMP),
        };
        self.batch
    }
}
