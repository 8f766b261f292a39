//! Walking the batches of a Fetch partition's `records` bytes by their headers alone: where each
//! batch starts and ends, its record count, the offset after it and its codec. Nothing is
//! checked beyond what the walk needs (the magic byte and a sane length): no CRC, no record
//! decoding, no decompression.
//!
//! RecordBatch v2 header fields used (byte offsets from the batch's start): baseOffset int64 at
//! 0, batchLength int32 at 8 (the bytes after it), magic int8 at 16, attributes int16 at 21
//! (bits 0-2 codec, bit 5 control), lastOffsetDelta int32 at 23, recordsCount int32 at 57.

use std::ops::Range;

use mooring_wire::records::{BatchAttributes, Compression, MAGIC_V2};

/// The header's size: the first record starts here.
pub const HEADER_LEN: usize = 61;
/// baseOffset + batchLength: the bytes `batchLength` does not count.
const LOG_OVERHEAD: usize = 12;
/// Where the CRC-32C's covered bytes begin (attributes to the end of the batch).
pub const CRC_COVERED_FROM: usize = 21;
const MAGIC_AT: usize = 16;

/// One whole batch as its header describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchSpan {
    /// Its bytes within the walked buffer.
    pub range: Range<usize>,
    /// Records it holds (0 for a control batch, whose records are never shown to users).
    pub records: u64,
    /// The offset after its last record: where fetching goes on.
    pub next_offset: i64,
    /// Its codec (`None` for an id Kafka does not assign).
    pub compression: Option<Compression>,
}

/// Why the bytes cannot be walked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkError {
    /// A batch of another format than RecordBatch v2 (magic 0 or 1, before Kafka 0.11).
    Magic { at: usize, magic: i8 },
    /// A `batchLength` smaller than the header it must cover.
    Length { at: usize, length: i32 },
}

impl std::fmt::Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WalkError::Magic { at, magic } => {
                write!(f, "batch at byte {at} has magic {magic}, not {MAGIC_V2}")
            }
            WalkError::Length { at, length } => {
                write!(f, "batch at byte {at} has a batchLength of {length}")
            }
        }
    }
}

impl std::error::Error for WalkError {}

/// The whole batches of `records`, in order; a batch cut short at the end (the broker's fetch
/// size limit) ends the walk without an error, as it ends a consumer's.
pub fn batches(records: &[u8]) -> Batches<'_> {
    Batches { records, at: 0 }
}

/// See [`batches`].
#[derive(Debug)]
pub struct Batches<'a> {
    records: &'a [u8],
    at: usize,
}

impl Iterator for Batches<'_> {
    type Item = Result<BatchSpan, WalkError>;

    fn next(&mut self) -> Option<Self::Item> {
        let at = self.at;
        let header = self.records.get(at..at.checked_add(HEADER_LEN)?)?;
        let magic = header[MAGIC_AT] as i8;
        if magic != MAGIC_V2 {
            self.at = self.records.len();
            return Some(Err(WalkError::Magic { at, magic }));
        }
        let length = i32_at(header, 8);
        let Some(size) = usize::try_from(length)
            .ok()
            .filter(|&l| l >= HEADER_LEN - LOG_OVERHEAD)
            .map(|l| l + LOG_OVERHEAD)
        else {
            self.at = self.records.len();
            return Some(Err(WalkError::Length { at, length }));
        };
        let end = at.checked_add(size)?;
        if end > self.records.len() {
            return None;
        }
        self.at = end;
        let attributes = BatchAttributes(i16::from_be_bytes([header[21], header[22]]));
        let base_offset = i64::from_be_bytes(header[0..8].try_into().unwrap_or_default());
        let records = if attributes.is_control() {
            0
        } else {
            u64::try_from(i32_at(header, 57)).unwrap_or(0)
        };
        Some(Ok(BatchSpan {
            range: at..end,
            records,
            next_offset: base_offset
                .wrapping_add(i64::from(i32_at(header, 23)))
                .wrapping_add(1),
            compression: attributes.compression(),
        }))
    }
}

/// The big-endian int32 at `at` of a slice known to hold it.
fn i32_at(bytes: &[u8], at: usize) -> i32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    i32::from_be_bytes(b)
}

#[cfg(test)]
mod tests {
    use bytes::{Bytes, BytesMut};
    use mooring_wire::records::RecordBatch;

    use super::*;

    fn batch(base: i64, n: usize, codec: Compression) -> BytesMut {
        let mut b = RecordBatch::builder(base).compression(codec);
        for i in 0..n {
            b = b.record(
                1_700_000_000_000,
                None,
                Some(Bytes::from(vec![i as u8; 100])),
                vec![],
            );
        }
        let mut buf = BytesMut::new();
        b.build().encode(&mut buf).expect("encode");
        buf
    }

    #[test]
    fn counts_whole_batches_and_stops_at_a_cut_one() {
        let mut buf = batch(10, 3, Compression::None);
        let first = buf.len();
        buf.extend_from_slice(&batch(13, 5, Compression::Lz4));
        let second = buf.len();
        buf.extend_from_slice(&batch(18, 2, Compression::Zstd)[..40]);
        let spans: Vec<BatchSpan> = batches(&buf).collect::<Result<_, _>>().expect("walk");
        assert_eq!(
            spans,
            vec![
                BatchSpan {
                    range: 0..first,
                    records: 3,
                    next_offset: 13,
                    compression: Some(Compression::None)
                },
                BatchSpan {
                    range: first..second,
                    records: 5,
                    next_offset: 18,
                    compression: Some(Compression::Lz4)
                },
            ]
        );
    }

    #[test]
    fn a_control_batch_moves_the_offset_but_counts_no_record() {
        let marker = RecordBatch::end_txn_marker(7, 1_700_000_000_000, 0, 1, 0, true, 0);
        let mut buf = BytesMut::new();
        marker.encode(&mut buf).expect("encode");
        let spans: Vec<BatchSpan> = batches(&buf).collect::<Result<_, _>>().expect("walk");
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].records, 0);
        assert_eq!(spans[0].next_offset, 8);
    }

    #[test]
    fn another_magic_or_a_short_length_is_an_error() {
        let mut buf = batch(0, 1, Compression::None);
        buf[MAGIC_AT] = 1;
        assert_eq!(
            batches(&buf).next(),
            Some(Err(WalkError::Magic { at: 0, magic: 1 }))
        );
        let mut buf = batch(0, 1, Compression::None);
        buf[8..12].copy_from_slice(&10i32.to_be_bytes());
        assert_eq!(
            batches(&buf).next(),
            Some(Err(WalkError::Length { at: 0, length: 10 }))
        );
        assert_eq!(batches(&buf[..HEADER_LEN - 1]).next(), None);
    }
}
