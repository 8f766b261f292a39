//! Errors from reading record batches, each naming where it happened: topic and partition when the
//! caller gave them, the batch's base offset when it was read, and the byte position in the
//! records buffer.

use std::fmt;
use std::sync::Arc;

use super::compression::CompressionError;
use crate::error::DecodeError;

/// Where in a Fetch response's records a problem was found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchLocation {
    /// The topic, when the decoder was given one.
    pub topic: Option<Arc<str>>,
    /// The partition, when the decoder was given one.
    pub partition: Option<i32>,
    /// The base offset of the batch, once it could be read.
    pub base_offset: Option<i64>,
    /// The position of the batch's first byte in the records buffer.
    pub position: usize,
}

impl fmt::Display for BatchLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.topic, self.partition) {
            (Some(t), Some(p)) => write!(f, "{t}-{p}: ")?,
            (Some(t), None) => write!(f, "{t}: ")?,
            (None, Some(p)) => write!(f, "partition {p}: ")?,
            (None, None) => {}
        }
        match self.base_offset {
            Some(o) => write!(f, "batch at offset {o} (byte {})", self.position),
            None => write!(f, "batch at byte {}", self.position),
        }
    }
}

/// A record batch that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {kind}")]
pub struct RecordsError {
    /// Where.
    pub location: BatchLocation,
    /// What.
    pub kind: RecordsErrorKind,
}

/// What went wrong reading a record batch.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordsErrorKind {
    /// The CRC-32C stored in the batch does not match the bytes (corruption on disk or in flight).
    #[error("CRC-32C mismatch: the batch says {stored:#010x}, its bytes give {computed:#010x}")]
    CrcMismatch { stored: u32, computed: u32 },
    /// A legacy message set (magic 0 or 1, before Kafka 0.11) or an unknown future format.
    #[error("record format magic {0} is not supported: only RecordBatch v2 (magic 2) is")]
    UnsupportedMagic(i8),
    /// The batch length field is impossible (smaller than the fixed header).
    #[error("batch length {0} is smaller than the RecordBatch v2 header")]
    InvalidBatchLength(i32),
    /// Compression bits 5–7 are not assigned to any codec.
    #[error("unknown compression codec id {0}")]
    UnknownCompression(u8),
    /// Decompression failed or would pass the configured limit.
    #[error(transparent)]
    Compression(#[from] CompressionError),
    /// The declared record count is negative or more than the records present.
    #[error("the batch declares {declared} record(s) but holds {found}")]
    RecordCount { declared: i32, found: usize },
    /// Bytes are left in the records section after the declared number of records.
    #[error("{0} byte(s) left after the declared records")]
    TrailingBytes(usize),
    /// One record could not be parsed.
    #[error("record #{index}: {source}")]
    Record { index: usize, source: DecodeError },
    /// A control batch does not hold a well-formed control record.
    #[error("control record: {0}")]
    Control(DecodeError),
    /// The batch's offsets cannot be where the reader found them (the base offset is outside the
    /// CRC, so a byte flipped there passes it): before the fetch position, not after the batch
    /// before it, or at or past the response's high watermark.
    #[error("batch offsets {base_offset}..={last_offset} cannot be right: {reason}")]
    ImplausibleOffsets {
        base_offset: i64,
        last_offset: i64,
        reason: &'static str,
    },
}
