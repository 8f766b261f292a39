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
//!
//! The parts: `header` (the attributes and the fixed header), `reader` (the batches of a
//! `records` field), `raw` (a checked batch's records, decompressed and parsed), `record_batch`
//! (a batch with its records, and its encoder) and `builder`.

mod builder;
mod header;
mod raw;
mod reader;
mod record_batch;

pub use builder::RecordBatchBuilder;
pub use header::{BatchAttributes, BatchHeader, TimestampType};
pub use raw::{BufferPool, RawBatch, Unpooled};
pub use reader::{decode_all, BatchItem, BatchReader, DecodeOptions};
pub use record_batch::RecordBatch;

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
