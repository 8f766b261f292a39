//! The fixed 61-byte header of a batch: its attributes bits, its fields as read off the wire, and
//! the reading of those fields from a batch's first bytes.

use super::{ATTRIBUTES_OFFSET, CRC_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET};
use crate::records::compression::Compression;

/// How a batch's timestamps were set (attributes bit 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// Set by the producer.
    #[default]
    CreateTime,
    /// Set by the broker when it appended the batch; every record's timestamp is the batch's
    /// `maxTimestamp`.
    LogAppendTime,
}

/// The batch attributes, kept as the raw int16 so that unknown bits survive a re-encode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct BatchAttributes(pub i16);

impl BatchAttributes {
    const COMPRESSION_MASK: i16 = 0x07;
    const TIMESTAMP_TYPE: i16 = 0x08;
    const TRANSACTIONAL: i16 = 0x10;
    const CONTROL: i16 = 0x20;
    const DELETE_HORIZON: i16 = 0x40;

    fn flag(self, bit: i16) -> bool {
        self.0 & bit != 0
    }

    fn with(self, bit: i16, on: bool) -> Self {
        BatchAttributes(if on { self.0 | bit } else { self.0 & !bit })
    }

    /// The compression codec id (bits 0–2); see [`Compression::from_id`].
    pub fn compression_id(self) -> u8 {
        (self.0 & Self::COMPRESSION_MASK) as u8
    }

    /// The compression codec, or `None` for an unassigned id (5–7).
    pub fn compression(self) -> Option<Compression> {
        Compression::from_id(self.compression_id())
    }

    /// The timestamp type (bit 3).
    pub fn timestamp_type(self) -> TimestampType {
        if self.flag(Self::TIMESTAMP_TYPE) {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }

    /// Whether the batch belongs to a transaction (bit 4).
    pub fn is_transactional(self) -> bool {
        self.flag(Self::TRANSACTIONAL)
    }

    /// Whether the batch holds a control record (bit 5), e.g. a transaction marker.
    pub fn is_control(self) -> bool {
        self.flag(Self::CONTROL)
    }

    /// Whether `baseTimestamp` holds the delete horizon (bit 6, KIP-534).
    pub fn has_delete_horizon(self) -> bool {
        self.flag(Self::DELETE_HORIZON)
    }

    /// With this compression codec.
    pub fn with_compression(self, c: Compression) -> Self {
        BatchAttributes((self.0 & !Self::COMPRESSION_MASK) | i16::from(c.id()))
    }

    /// With this timestamp type.
    pub fn with_timestamp_type(self, t: TimestampType) -> Self {
        self.with(Self::TIMESTAMP_TYPE, t == TimestampType::LogAppendTime)
    }

    /// With or without the transactional flag.
    pub fn with_transactional(self, on: bool) -> Self {
        self.with(Self::TRANSACTIONAL, on)
    }

    /// With or without the control flag.
    pub fn with_control(self, on: bool) -> Self {
        self.with(Self::CONTROL, on)
    }

    /// With or without the delete-horizon flag.
    pub fn with_delete_horizon(self, on: bool) -> Self {
        self.with(Self::DELETE_HORIZON, on)
    }
}

/// The 61-byte header of a batch as read off the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BatchHeader {
    /// The offset of the first record of the batch (as originally written: after compaction the
    /// first record present may have a higher offset).
    pub base_offset: i64,
    /// The bytes after this field up to the end of the batch.
    pub batch_length: i32,
    /// The leader epoch of the leader that appended the batch (KIP-101), -1 if unknown.
    pub partition_leader_epoch: i32,
    /// Always [`MAGIC_V2`](super::MAGIC_V2).
    pub magic: i8,
    /// The CRC-32C as stored in the batch.
    pub crc: u32,
    /// The attributes.
    pub attributes: BatchAttributes,
    /// The offset delta of the last record as originally written (kept by compaction).
    pub last_offset_delta: i32,
    /// The timestamp of the first record, or the delete horizon (see
    /// [`BatchAttributes::has_delete_horizon`]).
    pub base_timestamp: i64,
    /// The largest record timestamp, or the log-append time.
    pub max_timestamp: i64,
    /// The producer id (KIP-98), -1 without idempotence.
    pub producer_id: i64,
    /// The producer epoch, -1 without idempotence.
    pub producer_epoch: i16,
    /// The sequence number of the first record, -1 without idempotence.
    pub base_sequence: i32,
    /// How many records the batch holds.
    pub records_count: i32,
}

impl BatchHeader {
    /// The offset of the last record as originally written.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }

    /// The offset after this batch: where a consumer's position goes once the batch is consumed
    /// (or skipped, for control and aborted batches).
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }

    /// Whether this is a control batch (transaction marker and the like), never shown to users.
    pub fn is_control(&self) -> bool {
        self.attributes.is_control()
    }

    /// Whether this batch belongs to a transaction.
    pub fn is_transactional(&self) -> bool {
        self.attributes.is_transactional()
    }

    /// The delete horizon (KIP-534), when the batch carries one.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.attributes
            .has_delete_horizon()
            .then_some(self.base_timestamp)
    }

    /// The total size of the batch in bytes, header included.
    pub fn size_in_bytes(&self) -> usize {
        LOG_OVERHEAD + self.batch_length.max(0) as usize
    }
}

pub(super) fn be_i64(b: &[u8], at: usize) -> Option<i64> {
    let s = b.get(at..at + 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(i64::from_be_bytes(a))
}

pub(super) fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    let s = b.get(at..at + 4)?;
    let mut a = [0u8; 4];
    a.copy_from_slice(s);
    Some(i32::from_be_bytes(a))
}

fn be_i16(b: &[u8], at: usize) -> Option<i16> {
    let s = b.get(at..at + 2)?;
    Some(i16::from_be_bytes([s[0], s[1]]))
}

/// Reads the fixed header of a batch known to hold at least [`RECORD_BATCH_OVERHEAD`] bytes.
pub(super) fn read_header(raw: &[u8]) -> BatchHeader {
    let i64_at = |at| be_i64(raw, at).unwrap_or_default();
    let i32_at = |at| be_i32(raw, at).unwrap_or_default();
    let i16_at = |at| be_i16(raw, at).unwrap_or_default();
    BatchHeader {
        base_offset: i64_at(0),
        batch_length: i32_at(8),
        partition_leader_epoch: i32_at(12),
        magic: raw.get(MAGIC_OFFSET).map_or(0, |&m| m as i8),
        crc: i32_at(CRC_OFFSET) as u32,
        attributes: BatchAttributes(i16_at(ATTRIBUTES_OFFSET)),
        last_offset_delta: i32_at(23),
        base_timestamp: i64_at(27),
        max_timestamp: i64_at(35),
        producer_id: i64_at(43),
        producer_epoch: i16_at(51),
        base_sequence: i32_at(53),
        records_count: i32_at(57),
    }
}
