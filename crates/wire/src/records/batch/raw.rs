//! A batch whose header is checked but whose records are not yet read, and the reading of those
//! records: decompression into a buffer a [`BufferPool`] lends (so a consumer can reuse and count
//! it), then parsing, which never trusts the declared record count for an allocation.

use bytes::Bytes;

use super::{BatchHeader, DecodeOptions, RecordBatch, RECORD_BATCH_OVERHEAD};
use crate::error::DecodeError;
use crate::records::compression::{decompress_into, Compression};
use crate::records::control::ControlRecord;
use crate::records::error::{BatchLocation, RecordsError, RecordsErrorKind};
use crate::records::record::{parse_record, Record};

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

/// A complete batch whose header is decoded and CRC checked, records not yet parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawBatch {
    pub(super) header: BatchHeader,
    pub(super) raw: Bytes,
    pub(super) location: BatchLocation,
    pub(super) options: DecodeOptions,
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
