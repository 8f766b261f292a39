//! Records: RecordBatch v2 (magic 2) as found in Fetch responses and Produce requests.
//!
//! Spec: <https://kafka.apache.org/documentation/#recordbatch> (KIP-98 for the v2 format,
//! producer ids and control batches; KIP-82 for headers; KIP-110 for zstd; KIP-534 for the delete
//! horizon). Legacy message sets (magic 0 and 1, before Kafka 0.11) are refused with
//! [`RecordsErrorKind::UnsupportedMagic`]: Kafka 4 brokers no longer write them.
//!
//! - [`batch`]: the batch header, [`BatchReader`] over a Fetch partition's `records` bytes, the
//!   encoder and [`RecordBatchBuilder`];
//! - [`record`]: one record and its headers;
//! - [`control`]: control records (transaction markers);
//! - [`compression`]: gzip, snappy (xerial framing), lz4 (frame format), zstd, with a bounded
//!   decompressed size.
//!
//! ```
//! use bytes::{Bytes, BytesMut};
//! use mooring_wire::records::{BatchItem, BatchReader, Compression, RecordBatch};
//!
//! let batch = RecordBatch::builder(100)
//!     .compression(Compression::Lz4)
//!     .record(1_700_000_000_000, Some(Bytes::from_static(b"k")), Some(Bytes::from_static(b"v")), vec![])
//!     .build();
//! let mut buf = BytesMut::new();
//! batch.encode(&mut buf)?;
//! for item in BatchReader::new(buf.freeze()).with_context("orders", 3) {
//!     match item? {
//!         BatchItem::Batch(raw) if raw.header().is_control() => {} // skip markers
//!         BatchItem::Batch(raw) => assert_eq!(raw.decode()?, batch),
//!         BatchItem::Incomplete { .. } => {} // fetch again from the next offset
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod batch;
pub mod compression;
pub mod control;
pub mod error;
pub mod record;

pub use batch::{
    decode_all, BatchAttributes, BatchHeader, BatchItem, BatchReader, BufferPool, DecodeOptions,
    RawBatch, RecordBatch, RecordBatchBuilder, TimestampType, Unpooled, MAGIC_V2,
};
pub use compression::{decompress_into, Compression, CompressionError};
pub use control::{ControlRecord, ControlRecordType, EndTxnMarker};
pub use error::{BatchLocation, RecordsError, RecordsErrorKind};
pub use record::{Header, HeaderKey, Headers, HeadersIntoIter, Record};

#[cfg(test)]
mod tests;
