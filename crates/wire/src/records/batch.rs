//! RecordBatch v2 (magic 2, KIP-98): the batch header, reading batches out of a Fetch partition's
//! `records` bytes, and writing them.
//!
//! See <https://kafka.apache.org/documentation/#recordbatch>. Layout (61 header bytes):
//!
//! ```text
//! baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 (2)
//! | crc uint32 (CRC-32C of everything from attributes to the end of the batch)
//! | attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64
//! | producerId int64 | producerEpoch int16 | baseSequence int32 | recordsCount int32 | records
//! ```
//!
//! `batchLength` counts the bytes after itself. Attributes: bits 0–2 compression, bit 3 timestamp
//! type (1 = log-append time), bit 4 transactional, bit 5 control, bit 6 delete horizon (KIP-534,
//! `baseTimestamp` then holds the horizon).
//!
//! Reading is two-step so a consumer can skip batches cheaply: [`BatchReader`] yields
//! [`RawBatch`]es whose header is decoded and CRC checked but whose records are not (so control
//! batches and aborted transactions under `read_committed` are dropped without decompressing);
//! [`RawBatch::decode`] then gives the [`RecordBatch`] with its records. A batch cut short by the
//! fetch size limit at the end of the buffer is the normal [`BatchItem::Incomplete`] outcome.

use std::sync::Arc;

use bytes::{BufMut, Bytes};

use super::compression::{compress, decompress_into, Compression};
use super::control::{ControlRecord, ControlRecordType, EndTxnMarker};
use super::error::{BatchLocation, RecordsError, RecordsErrorKind};
use super::record::{parse_record, write_record, Record};
use crate::error::{DecodeError, EncodeError};

/// The magic byte of RecordBatch v2.
pub const MAGIC_V2: i8 = 2;
/// baseOffset + batchLength: the bytes before what `batchLength` counts.
pub const LOG_OVERHEAD: usize = 12;
/// The size of the batch header, up to the first record.
pub const RECORD_BATCH_OVERHEAD: usize = 61;
/// Where the magic byte sits; the same place in legacy message sets, which is how they are told apart.
const MAGIC_OFFSET: usize = 16;
const CRC_OFFSET: usize = 17;
const ATTRIBUTES_OFFSET: usize = 21;
/// The smallest valid `batchLength`.
const MIN_BATCH_LENGTH: usize = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD;

/// `producerId`, `producerEpoch` and `baseSequence` of a batch from a non-idempotent producer.
pub const NO_PRODUCER_ID: i64 = -1;
/// See [`NO_PRODUCER_ID`].
pub const NO_PRODUCER_EPOCH: i16 = -1;
/// See [`NO_PRODUCER_ID`].
pub const NO_SEQUENCE: i32 = -1;
/// A timestamp that is not set.
pub const NO_TIMESTAMP: i64 = -1;
/// A partition leader epoch that is not set.
pub const NO_PARTITION_LEADER_EPOCH: i32 = -1;

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
    /// Always [`MAGIC_V2`].
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

/// Where compressed batches are decompressed to: a consumer reuses the buffers and counts them in
/// its memory budget.
pub trait BufferPool {
    /// A buffer to decompress into (emptied by the decompression; its capacity is used).
    fn take(&self) -> Vec<u8>;
    /// The filled buffer as the [`Bytes`] the records share (also given a buffer whose
    /// decompression failed, which then is dropped at once).
    fn adopt(&self, buf: Vec<u8>) -> Bytes;
}

/// A fresh buffer for every batch, trimmed to its content.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unpooled;

impl BufferPool for Unpooled {
    fn take(&self) -> Vec<u8> {
        Vec::new()
    }

    fn adopt(&self, mut buf: Vec<u8>) -> Bytes {
        buf.shrink_to_fit();
        Bytes::from(buf)
    }
}

/// Options for reading batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeOptions {
    /// The largest decompressed records section accepted from one batch (default 64 MiB); guards
    /// against decompression bombs.
    pub max_decompressed_bytes: usize,
    /// Whether to verify each batch's CRC-32C (Kafka's `check.crcs`, default true).
    pub check_crcs: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            max_decompressed_bytes: 64 << 20,
            check_crcs: true,
        }
    }
}

/// What [`BatchReader`] yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchItem {
    /// A complete batch, header decoded and CRC checked.
    Batch(RawBatch),
    /// The buffer ends with the start of a batch cut off by the fetch size limit. This is normal
    /// (the broker sends whole batches up to the limit, then part of the next one); the consumer
    /// fetches again from the next offset. Always the last item.
    Incomplete {
        /// How many bytes were left over.
        remaining: usize,
    },
}

/// Reads the batches of a Fetch partition's `records` field, one after another.
///
/// Yields `Ok(BatchItem::Batch)` per complete batch, then possibly one `Ok(BatchItem::Incomplete)`;
/// after an error it yields nothing more.
#[derive(Debug, Clone)]
pub struct BatchReader {
    buf: Bytes,
    pos: usize,
    topic: Option<Arc<str>>,
    partition: Option<i32>,
    options: DecodeOptions,
    done: bool,
}

impl BatchReader {
    /// A reader over `records` with default options and no topic/partition for error messages.
    pub fn new(records: Bytes) -> Self {
        BatchReader {
            buf: records,
            pos: 0,
            topic: None,
            partition: None,
            options: DecodeOptions::default(),
            done: false,
        }
    }

    /// Names the topic and partition the records come from, for error messages.
    pub fn with_context(mut self, topic: impl Into<Arc<str>>, partition: i32) -> Self {
        self.topic = Some(topic.into());
        self.partition = Some(partition);
        self
    }

    /// Sets the decode options.
    pub fn with_options(mut self, options: DecodeOptions) -> Self {
        self.options = options;
        self
    }

    fn location(&self, base_offset: Option<i64>) -> BatchLocation {
        BatchLocation {
            topic: self.topic.clone(),
            partition: self.partition,
            base_offset,
            position: self.pos,
        }
    }

    fn fail(
        &mut self,
        base_offset: Option<i64>,
        kind: RecordsErrorKind,
    ) -> Option<Result<BatchItem, RecordsError>> {
        self.done = true;
        Some(Err(RecordsError {
            location: self.location(base_offset),
            kind,
        }))
    }

    fn next_item(&mut self) -> Option<Result<BatchItem, RecordsError>> {
        let rest = &self.buf[self.pos..];
        if rest.is_empty() {
            self.done = true;
            return None;
        }
        let incomplete = BatchItem::Incomplete {
            remaining: rest.len(),
        };
        let (Some(base_offset), Some(batch_length)) = (be_i64(rest, 0), be_i32(rest, 8)) else {
            self.done = true;
            return Some(Ok(incomplete));
        };
        // The magic byte is at the same place in every message format, so a legacy message set
        // is recognised (and refused by name) even when cut short.
        if let Some(&magic) = rest.get(MAGIC_OFFSET) {
            if magic as i8 != MAGIC_V2 {
                return self.fail(
                    Some(base_offset),
                    RecordsErrorKind::UnsupportedMagic(magic as i8),
                );
            }
        }
        if batch_length < 0 || (batch_length as usize) < MIN_BATCH_LENGTH {
            return self.fail(
                Some(base_offset),
                RecordsErrorKind::InvalidBatchLength(batch_length),
            );
        }
        let size = LOG_OVERHEAD + batch_length as usize;
        if rest.len() < size {
            self.done = true;
            return Some(Ok(incomplete));
        }
        let raw = self.buf.slice(self.pos..self.pos + size);
        let header = read_header(&raw);
        if self.options.check_crcs {
            let computed = crc32c::crc32c(&raw[ATTRIBUTES_OFFSET..]);
            if computed != header.crc {
                return self.fail(
                    Some(base_offset),
                    RecordsErrorKind::CrcMismatch {
                        stored: header.crc,
                        computed,
                    },
                );
            }
        }
        let location = self.location(Some(base_offset));
        self.pos += size;
        Some(Ok(BatchItem::Batch(RawBatch {
            header,
            raw,
            location,
            options: self.options,
        })))
    }
}

impl Iterator for BatchReader {
    type Item = Result<BatchItem, RecordsError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        self.next_item()
    }
}

impl std::iter::FusedIterator for BatchReader {}

fn be_i64(b: &[u8], at: usize) -> Option<i64> {
    let s = b.get(at..at + 8)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(i64::from_be_bytes(a))
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
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
fn read_header(raw: &[u8]) -> BatchHeader {
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

/// A complete batch whose header is decoded and CRC checked, records not yet parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBatch {
    header: BatchHeader,
    raw: Bytes,
    location: BatchLocation,
    options: DecodeOptions,
}

impl RawBatch {
    /// The batch header.
    pub fn header(&self) -> &BatchHeader {
        &self.header
    }

    /// Where the batch was found (for errors the caller raises about it).
    pub fn location(&self) -> &BatchLocation {
        &self.location
    }

    /// The whole batch as it was on the wire.
    pub fn as_bytes(&self) -> &Bytes {
        &self.raw
    }

    /// The records section (compressed, when the batch is).
    pub fn records_section(&self) -> Bytes {
        self.raw.slice(RECORD_BATCH_OVERHEAD..)
    }

    fn error(&self, kind: RecordsErrorKind) -> RecordsError {
        RecordsError {
            location: self.location.clone(),
            kind,
        }
    }

    /// Decompresses (if needed) and parses the records.
    pub fn records(&self) -> Result<Vec<Record>, RecordsError> {
        let mut records = Vec::new();
        self.records_into(&mut records, &Unpooled)?;
        Ok(records)
    }

    /// Decompresses (if needed) and parses the records, appending them to `out` (left as it was
    /// on an error). A compressed records section is decompressed into a buffer of `pool`,
    /// which the records then share.
    pub fn records_into(
        &self,
        out: &mut Vec<Record>,
        pool: &impl BufferPool,
    ) -> Result<(), RecordsError> {
        let h = &self.header;
        let codec = h.attributes.compression().ok_or_else(|| {
            self.error(RecordsErrorKind::UnknownCompression(
                h.attributes.compression_id(),
            ))
        })?;
        let data = match codec {
            Compression::None => self.records_section(),
            codec => {
                let mut buf = pool.take();
                let done = decompress_into(
                    codec,
                    &self.raw[RECORD_BATCH_OVERHEAD..],
                    self.options.max_decompressed_bytes,
                    &mut buf,
                );
                let data = pool.adopt(buf);
                done.map_err(|e| self.error(e.into()))?;
                data
            }
        };
        let declared = h.records_count;
        if declared < 0 {
            return Err(self.error(RecordsErrorKind::RecordCount { declared, found: 0 }));
        }
        let before = out.len();
        let parsed = self.parse_records(&data, declared as usize, out);
        if parsed.is_err() {
            out.truncate(before);
        }
        parsed
    }

    fn parse_records(
        &self,
        data: &Bytes,
        declared: usize,
        records: &mut Vec<Record>,
    ) -> Result<(), RecordsError> {
        let h = &self.header;
        // Every record takes at least 7 bytes: never trust the count for the allocation.
        records.reserve(declared.min(data.len() / 7));
        let mut pos = 0;
        for index in 0..declared {
            if pos == data.len() {
                return Err(self.error(RecordsErrorKind::RecordCount {
                    declared: declared as i32,
                    found: index,
                }));
            }
            pos = parse_record(data, pos, h.base_offset, h.base_timestamp, records)
                .map_err(|source| self.error(RecordsErrorKind::Record { index, source }))?;
        }
        if pos != data.len() {
            return Err(self.error(RecordsErrorKind::TrailingBytes(data.len() - pos)));
        }
        Ok(())
    }

    /// Decompresses (if needed) and parses the whole batch.
    pub fn decode(&self) -> Result<RecordBatch, RecordsError> {
        let h = &self.header;
        Ok(RecordBatch {
            base_offset: h.base_offset,
            partition_leader_epoch: h.partition_leader_epoch,
            attributes: h.attributes,
            last_offset_delta: h.last_offset_delta,
            base_timestamp: h.base_timestamp,
            max_timestamp: h.max_timestamp,
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            base_sequence: h.base_sequence,
            records: self.records()?,
        })
    }

    /// For a control batch, its control record (the first record's key); `None` for a data batch.
    pub fn control_record(&self) -> Result<Option<ControlRecord>, RecordsError> {
        if !self.header.is_control() {
            return Ok(None);
        }
        let records = self.records()?;
        let first = records.first().ok_or_else(|| {
            self.error(RecordsErrorKind::Control(DecodeError::Truncated {
                needed: 1,
            }))
        })?;
        let key = first.key.as_deref().unwrap_or_default();
        ControlRecord::parse(key)
            .map(Some)
            .map_err(|e| self.error(RecordsErrorKind::Control(e)))
    }
}

/// Reads every batch of `records`: the decoded batches, and how many bytes of an incomplete batch
/// were left at the end (0 when none).
pub fn decode_all(
    records: Bytes,
    options: DecodeOptions,
) -> Result<(Vec<RecordBatch>, usize), RecordsError> {
    let mut batches = Vec::new();
    for item in BatchReader::new(records).with_options(options) {
        match item? {
            BatchItem::Batch(raw) => batches.push(raw.decode()?),
            BatchItem::Incomplete { remaining } => return Ok((batches, remaining)),
        }
    }
    Ok((batches, 0))
}

/// A batch with its records: what [`RawBatch::decode`] returns and what the encoder writes.
///
/// The header fields are kept as read (compaction can leave `last_offset_delta` and the
/// timestamps describing records that are gone); `batchLength`, the CRC and the record count are
/// computed when encoding. Use [`RecordBatch::builder`] to fill the header from records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RecordBatch {
    /// See [`BatchHeader::base_offset`].
    pub base_offset: i64,
    /// See [`BatchHeader::partition_leader_epoch`].
    pub partition_leader_epoch: i32,
    /// See [`BatchHeader::attributes`]; the compression bits choose the codec when encoding.
    pub attributes: BatchAttributes,
    /// See [`BatchHeader::last_offset_delta`].
    pub last_offset_delta: i32,
    /// See [`BatchHeader::base_timestamp`].
    pub base_timestamp: i64,
    /// See [`BatchHeader::max_timestamp`].
    pub max_timestamp: i64,
    /// See [`BatchHeader::producer_id`].
    pub producer_id: i64,
    /// See [`BatchHeader::producer_epoch`].
    pub producer_epoch: i16,
    /// See [`BatchHeader::base_sequence`].
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
    fn new(base_offset: i64) -> Self {
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
        headers: Vec<super::Header>,
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
