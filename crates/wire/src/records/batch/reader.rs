//! Reading batches out of a Fetch partition's `records` bytes: [`BatchReader`] checks each
//! batch's magic, length and CRC and hands it out as a [`RawBatch`] without touching its records,
//! so skipping a batch costs no decompression.

use std::sync::Arc;

use bytes::Bytes;

use super::header::{be_i32, be_i64, read_header};
use super::{
    RawBatch, RecordBatch, ATTRIBUTES_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET, MAGIC_V2,
    MIN_BATCH_LENGTH,
};
use crate::records::error::{BatchLocation, RecordsError, RecordsErrorKind};

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
