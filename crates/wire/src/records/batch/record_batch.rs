//! A batch with its records, as decoding gives it and as the encoder writes it: the header
//! fields a batch keeps, its encoder (which computes `batchLength`, the record count and the CRC),
//! and the transaction marker batch.

use bytes::BufMut;

use super::{
    BatchAttributes, RecordBatchBuilder, TimestampType, ATTRIBUTES_OFFSET, CRC_OFFSET, MAGIC_V2,
    MIN_BATCH_LENGTH, NO_SEQUENCE, RECORD_BATCH_OVERHEAD,
};
use crate::error::EncodeError;
use crate::records::compression::{compress, Compression};
use crate::records::control::{ControlRecord, ControlRecordType, EndTxnMarker};
use crate::records::record::{write_record, Record};

/// A batch with its records: what [`RawBatch::decode`](super::RawBatch::decode) returns and what
/// the encoder writes.
///
/// The header fields are kept as read (compaction can leave `last_offset_delta` and the
/// timestamps describing records that are gone); `batchLength`, the CRC and the record count are
/// computed when encoding. Use [`RecordBatch::builder`] to fill the header from records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordBatch {
    /// See [`BatchHeader::base_offset`](super::BatchHeader::base_offset).
    pub base_offset: i64,
    /// See [`BatchHeader::partition_leader_epoch`](super::BatchHeader::partition_leader_epoch).
    pub partition_leader_epoch: i32,
    /// See [`BatchHeader::attributes`](super::BatchHeader::attributes); the compression bits
    /// choose the codec when encoding.
    pub attributes: BatchAttributes,
    /// See [`BatchHeader::last_offset_delta`](super::BatchHeader::last_offset_delta).
    pub last_offset_delta: i32,
    /// See [`BatchHeader::base_timestamp`](super::BatchHeader::base_timestamp).
    pub base_timestamp: i64,
    /// See [`BatchHeader::max_timestamp`](super::BatchHeader::max_timestamp).
    pub max_timestamp: i64,
    /// See [`BatchHeader::producer_id`](super::BatchHeader::producer_id).
    pub producer_id: i64,
    /// See [`BatchHeader::producer_epoch`](super::BatchHeader::producer_epoch).
    pub producer_epoch: i16,
    /// See [`BatchHeader::base_sequence`](super::BatchHeader::base_sequence).
    pub base_sequence: i32,
    /// The records.
    pub records: Vec<Record>,
}

impl RecordBatch {
    /// A builder for a batch starting at `base_offset`.
    pub fn builder(base_offset: i64) -> RecordBatchBuilder {
        RecordBatchBuilder::new(base_offset)
    }

    /// The timestamp a consumer shows for `record`: the batch's `max_timestamp` under log-append
    /// time, the record's own timestamp otherwise.
    pub fn record_timestamp(&self, record: &Record) -> i64 {
        match self.attributes.timestamp_type() {
            TimestampType::LogAppendTime => self.max_timestamp,
            TimestampType::CreateTime => record.timestamp,
        }
    }

    /// The offset after this batch.
    pub fn next_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
            .wrapping_add(1)
    }

    /// Writes the batch with the codec in its attributes at Kafka's default level.
    pub fn encode(&self, buf: &mut impl BufMut) -> Result<(), EncodeError> {
        self.encode_with_level(buf, None)
    }

    /// Writes the batch with the codec in its attributes at the given level (see
    /// [`compress`]), computing `batchLength`, the record count and the CRC-32C.
    pub fn encode_with_level(
        &self,
        buf: &mut impl BufMut,
        level: Option<i32>,
    ) -> Result<(), EncodeError> {
        let codec = self
            .attributes
            .compression()
            .ok_or_else(|| EncodeError::InvalidValue {
                field: "batch attributes",
                detail: format!(
                    "unknown compression id {}",
                    self.attributes.compression_id()
                ),
            })?;
        let mut plain = Vec::new();
        for r in &self.records {
            write_record(&mut plain, r, self.base_offset, self.base_timestamp)?;
        }
        let payload = match codec {
            Compression::None => plain,
            codec => compress(codec, &plain, level).map_err(|e| EncodeError::InvalidValue {
                field: "records",
                detail: e.to_string(),
            })?,
        };
        let too_long = |len| EncodeError::TooLong {
            what: "record batch",
            len,
        };
        let batch_length = i32::try_from(payload.len() + MIN_BATCH_LENGTH)
            .map_err(|_| too_long(payload.len() + MIN_BATCH_LENGTH))?;
        let count = i32::try_from(self.records.len()).map_err(|_| too_long(self.records.len()))?;

        let mut header = [0u8; RECORD_BATCH_OVERHEAD];
        let mut h = &mut header[..];
        h.put_i64(self.base_offset);
        h.put_i32(batch_length);
        h.put_i32(self.partition_leader_epoch);
        h.put_i8(MAGIC_V2);
        h.put_u32(0); // the CRC, patched below
        h.put_i16(self.attributes.0);
        h.put_i32(self.last_offset_delta);
        h.put_i64(self.base_timestamp);
        h.put_i64(self.max_timestamp);
        h.put_i64(self.producer_id);
        h.put_i16(self.producer_epoch);
        h.put_i32(self.base_sequence);
        h.put_i32(count);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&header[ATTRIBUTES_OFFSET..]), &payload);
        header[CRC_OFFSET..ATTRIBUTES_OFFSET].copy_from_slice(&crc.to_be_bytes());
        buf.put_slice(&header);
        buf.put_slice(&payload);
        Ok(())
    }

    /// A transaction marker batch (what the transaction coordinator writes to end a
    /// transaction): one control record with key (version 0, COMMIT or ABORT) and value
    /// (version 0, coordinator epoch).
    pub fn end_txn_marker(
        offset: i64,
        timestamp: i64,
        partition_leader_epoch: i32,
        producer_id: i64,
        producer_epoch: i16,
        commit: bool,
        coordinator_epoch: i32,
    ) -> RecordBatch {
        let kind = if commit {
            ControlRecordType::Commit
        } else {
            ControlRecordType::Abort
        };
        let key = ControlRecord { version: 0, kind }.to_bytes();
        let value = EndTxnMarker {
            version: 0,
            coordinator_epoch,
        }
        .to_bytes();
        RecordBatch::builder(offset)
            .partition_leader_epoch(partition_leader_epoch)
            .transactional(producer_id, producer_epoch, NO_SEQUENCE)
            .control()
            .push(Record::new(offset, timestamp, Some(key), Some(value)))
            .build()
    }
}
