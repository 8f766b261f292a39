//! From a Fetch partition's `records` bytes to the records a handler sees, as Java's
//! `CompletedFetch` does it:
//!
//! - batches wholly before the position are skipped, and so are records before the position
//!   inside the first batch (the broker sends whole batches, which may start before the fetch
//!   offset, e.g. compressed batches);
//! - control batches (transaction markers) are never shown; the position moves past them;
//! - under `read_committed`, records of aborted transactions are dropped: the response lists each
//!   aborted transaction as (producer id, first offset); a transactional batch whose producer has
//!   an aborted transaction starting at or before the batch's last offset is skipped, until that
//!   producer's ABORT marker (KIP-98);
//! - a partial batch at the end is normal (the size limit cut it): the next fetch starts there;
//! - what a record takes from its batch's header (timestamp type, log-append time, leader epoch)
//!   is kept once per batch, next to the records, for the engine to copy into each record.
//!
//! Decompression stays within the memory budget ([`Inflation`]): a compressed batch the budget
//! has no room for ends the extraction as a batch cut off at the end does, and is fetched again
//! once there is room.
//!
//! A batch that cannot be read (bad CRC, unknown compression) ends the extraction: the records
//! before it are returned and the position stops at it; if it is the first, the error is returned
//! (the fetcher fetches it again, and gives up only when it fails again and again: see its error
//! table).
//!
//! So does a batch whose offsets cannot be right. The CRC-32C covers a batch from its attributes
//! on, not its base offset, so a byte flipped there passes the check and moves every record of
//! the batch; handing those out would move the position (skipping records, or past the log's end
//! into an offset reset) and a commit could carry it. A broker answers a fetch with the batch
//! holding the fetch offset first (its last offset is at or past it), then batches in offset
//! order, all below the high watermark (the last stable offset under `read_committed`); a batch
//! that breaks any of these is treated as corrupt.

use std::collections::{BTreeSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use mooring_client::conn::{FrameMemory, MAP_GRAIN};
use mooring_wire::messages::fetch::AbortedTransaction;
use mooring_wire::records::{
    BatchHeader, BatchItem, BatchReader, BufferPool, Compression, ControlRecordType, RawBatch,
    RecordsError, RecordsErrorKind,
};

use crate::processing::{FetchedBatch, FetchedRecords};

/// What one partition's bytes yield.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Extracted {
    /// The records to hand to the engine with their batches, in offset order, all at or after
    /// the position (what [`ProcessingEngine::submit_fetched`](crate::processing::ProcessingEngine::submit_fetched) takes).
    pub fetched: FetchedRecords,
    /// The position after consuming all of them (past skipped control and aborted batches).
    pub next_offset: i64,
    /// The leader epoch of the last batch consumed (KIP-320), when the broker stamped one.
    pub leader_epoch: Option<i32>,
    /// Bytes the compressed batches decompressed to.
    pub decompressed: usize,
    /// A compressed batch was left for a later fetch: the budget had no room for it.
    pub deferred: bool,
}

/// What decompressing one Fetch answer may add to the memory budget. A compressed batch is
/// decompressed while the budget has room; the answer's first one also when what is held
/// besides the answer itself leaves room, so a batch larger than the budget is consumed and an
/// answer never waits for room it takes itself. The answer's partitions may be extracted side by
/// side (`extracting.rs`), each worker admitting its next batch while the budget has room: so
/// the consumer holds at most the budget plus one batch per extraction worker (each capped at
/// 64 MiB decompressed), however many batches of a few KiB, each inflating to that, one answer
/// brings.
#[derive(Debug)]
pub(crate) struct Inflation {
    memory: Arc<FrameMemory>,
    /// The answer's record bytes: its frame, which the budget counts while it is read, in map
    /// grains, is at most a grain more (and its headers).
    answer: usize,
    /// No batch of the answer was decompressed yet.
    first: AtomicBool,
}

impl Inflation {
    /// For an answer holding `answer` bytes of records.
    pub(crate) fn new(memory: &Arc<FrameMemory>, answer: usize) -> Self {
        Inflation {
            memory: Arc::clone(memory),
            answer,
            first: AtomicBool::new(true),
        }
    }

    /// Whether the next compressed batch may be decompressed now.
    fn admits(&self) -> bool {
        let (held, limit) = (self.memory.in_use(), self.memory.limit());
        if held < limit {
            self.first.store(false, Ordering::Relaxed);
            return true;
        }
        let others = held.saturating_sub(self.answer + MAP_GRAIN);
        // One worker alone takes the answer's first batch on the room beside the answer.
        others < limit
            && self
                .first
                .compare_exchange(true, false, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}

/// Where a partition's answer may hold batches: from the fetch position up to `end`, the high
/// watermark (the last stable offset under `read_committed`) the response reported, exclusive,
/// when it reported one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OffsetWindow {
    pub position: i64,
    pub end: Option<i64>,
}

/// Why `batch`, read after a batch ending at `previous_last` (if any), cannot be where it is.
fn implausible(
    batch: &RawBatch,
    window: OffsetWindow,
    previous_last: Option<i64>,
) -> Option<RecordsError> {
    let header = batch.header();
    let reason = if header.last_offset() < window.position {
        "wholly before the fetch position"
    } else if previous_last.is_some_and(|last| header.base_offset <= last) {
        "not after the batch before it"
    } else if window.end.is_some_and(|end| header.last_offset() >= end) {
        "at or past the high watermark"
    } else if header.last_offset() < header.base_offset {
        "its last offset is before its base offset"
    } else {
        return None;
    };
    Some(RecordsError {
        location: batch.location().clone(),
        kind: RecordsErrorKind::ImplausibleOffsets {
            base_offset: header.base_offset,
            last_offset: header.last_offset(),
            reason,
        },
    })
}

/// Extracts the records at or after `window.position`. `aborted` is `Some` under `read_committed`
/// (the response's aborted transactions, possibly empty) and `None` under `read_uncommitted`.
pub(crate) fn extract(
    bytes: Bytes,
    topic: &str,
    partition: i32,
    window: OffsetWindow,
    aborted: Option<&[AbortedTransaction]>,
    inflation: &Inflation,
) -> Result<Extracted, RecordsError> {
    let memory = Arc::clone(&inflation.memory);
    let pool = memory.decompression();
    let mut extraction = Extraction {
        window,
        out: Extracted {
            fetched: FetchedRecords::default(),
            next_offset: window.position,
            leader_epoch: None,
            decompressed: 0,
            deferred: false,
        },
        aborts: aborted.map(Aborts::new),
        previous_last: None,
        inflation,
    };
    for item in BatchReader::new(bytes).with_context(topic, partition) {
        let step = match item {
            Ok(BatchItem::Batch(batch)) => extraction.take(&batch, &pool),
            Ok(BatchItem::Incomplete { .. }) => Ok(Step::Stop),
            Err(e) => Err(e),
        };
        match step {
            Ok(Step::Next) => {}
            Ok(Step::Stop) => break,
            // Nothing taken yet: the fetcher sees the error; else the records before it count.
            Err(e) if extraction.nothing_taken() => return Err(e),
            Err(_) => break,
        }
    }
    let mut out = extraction.out;
    out.decompressed = pool.decompressed();
    Ok(out)
}

/// Whether an extraction goes on to the next batch.
enum Step {
    Next,
    /// The batch ends the extraction (cut off at the end, or deferred for the budget).
    Stop,
}

/// One extraction under way: what it took so far and what it tracks from batch to batch.
struct Extraction<'a> {
    window: OffsetWindow,
    out: Extracted,
    /// The aborted transactions, under `read_committed` only.
    aborts: Option<Aborts>,
    /// The last offset of the batch before, which the next must come after.
    previous_last: Option<i64>,
    inflation: &'a Inflation,
}

impl Extraction<'_> {
    /// Nothing was taken yet: the position has not moved and no record was kept.
    fn nothing_taken(&self) -> bool {
        self.out.next_offset == self.window.position && self.out.fetched.records.is_empty()
    }

    /// Takes one batch: its records at or after the position, none of a control batch or an
    /// aborted transaction (whose offsets are passed all the same). An error is a batch that
    /// cannot be read or cannot be where it is.
    fn take(&mut self, batch: &RawBatch, pool: &impl BufferPool) -> Result<Step, RecordsError> {
        if let Some(e) = implausible(batch, self.window, self.previous_last) {
            return Err(e);
        }
        let header = *batch.header();
        self.previous_last = Some(header.last_offset());
        let aborted = self.aborts.as_mut().is_some_and(|a| a.skips(batch));
        if aborted || header.is_control() {
            self.out.pass(&header);
            return Ok(Step::Next);
        }
        let compressed = header
            .attributes
            .compression()
            .is_some_and(|c| c != Compression::None);
        if compressed && !self.inflation.admits() {
            self.out.deferred = true;
            return Ok(Step::Stop);
        }
        let position = self.window.position;
        let records = &mut self.out.fetched.records;
        let before = records.len();
        batch.records_into(records, pool)?;
        // The first batch may start before the position.
        if records[before..].iter().any(|r| r.offset < position) {
            let batch_records = records.split_off(before);
            records.extend(batch_records.into_iter().filter(|r| r.offset >= position));
        }
        if records.len() > before {
            self.out.fetched.batches.push(FetchedBatch::from(&header));
        }
        self.out.pass(&header);
        Ok(Step::Next)
    }
}

impl Extracted {
    /// Moves the position past the batch of `header`, and takes its leader epoch when stamped.
    fn pass(&mut self, header: &BatchHeader) {
        self.next_offset = self.next_offset.max(header.next_offset());
        if header.partition_leader_epoch >= 0 {
            self.leader_epoch = Some(header.partition_leader_epoch);
        }
    }
}

/// The aborted transactions of a `read_committed` answer, met in offset order (KIP-98).
struct Aborts {
    /// (first offset, producer id) of the aborted transactions not reached yet, in offset order.
    pending: VecDeque<(i64, i64)>,
    /// The producers inside an aborted transaction: reached, their ABORT marker not yet.
    producers: BTreeSet<i64>,
}

impl Aborts {
    fn new(aborted: &[AbortedTransaction]) -> Aborts {
        Aborts {
            pending: aborted
                .iter()
                .map(|a| (a.first_offset, a.producer_id))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            producers: BTreeSet::new(),
        }
    }

    /// Whether `batch` belongs to an aborted transaction, to be skipped; follows the
    /// transactions it reaches and the ABORT markers that end them.
    fn skips(&mut self, batch: &RawBatch) -> bool {
        let header = batch.header();
        if header.producer_id < 0 {
            return false;
        }
        while let Some(&(first, pid)) = self.pending.front() {
            if first > header.last_offset() {
                break;
            }
            self.producers.insert(pid);
            self.pending.pop_front();
        }
        if header.is_control() {
            let abort = matches!(
                batch.control_record(),
                Ok(Some(c)) if c.kind == ControlRecordType::Abort
            );
            if abort {
                self.producers.remove(&header.producer_id);
            }
            return false;
        }
        header.is_transactional() && self.producers.contains(&header.producer_id)
    }
}

#[cfg(test)]
mod tests {
    use bytes::BytesMut;
    use mooring_wire::records::{Compression, RecordBatch};

    use super::*;

    fn data_batch(base: i64, n: i64, txn: Option<i64>) -> RecordBatch {
        let mut b = RecordBatch::builder(base).partition_leader_epoch(3);
        if let Some(pid) = txn {
            b = b.transactional(pid, 0, 0);
        }
        for i in 0..n {
            b = b.record(
                1_000 + i,
                None,
                Some(Bytes::from((base + i).to_string())),
                vec![],
            );
        }
        b.build()
    }

    /// [`super::extract`] with a budget nothing reaches.
    fn extract(
        bytes: Bytes,
        topic: &str,
        partition: i32,
        window: OffsetWindow,
        aborted: Option<&[AbortedTransaction]>,
    ) -> Result<Extracted, RecordsError> {
        let inflation = Inflation::new(&FrameMemory::new(usize::MAX), 0);
        super::extract(bytes, topic, partition, window, aborted, &inflation)
    }

    #[test]
    fn decompressed_records_count_in_the_memory_budget_while_alive() {
        let memory = FrameMemory::new(1 << 20);
        let mut b = RecordBatch::builder(0).compression(Compression::Lz4);
        for i in 0..100 {
            b = b.record(i, None, Some(Bytes::from(vec![b'x'; 1000])), vec![]);
        }
        let bytes = encode(&[b.build()]);
        assert!(bytes.len() < 10_000, "compressed: {} bytes", bytes.len());
        let inflation = Inflation::new(&memory, bytes.len());
        let e = super::extract(bytes, "t", 0, at(10), None, &inflation).expect("extract");
        assert_eq!(offsets(&e).first(), Some(&10));
        assert!(memory.in_use() >= 100_000, "counted: {}", memory.in_use());
        assert!(e.decompressed > 100_000, "decompressed {}", e.decompressed);
        let one = e.fetched.records[5].clone();
        drop(e);
        assert!(memory.in_use() >= 100_000, "a record keeps its batch");
        drop(one);
        assert_eq!(memory.in_use(), 0);
    }

    /// `n` lz4 batches of 10 records of 100 KB each (1 MB decompressed, a few KB compressed)
    /// from offset `from`.
    fn inflating(from: i64, n: i64) -> Bytes {
        let batches: Vec<RecordBatch> = (0..n)
            .map(|k| {
                let mut b = RecordBatch::builder(from + k * 10).compression(Compression::Lz4);
                for i in 0..10 {
                    b = b.record(i, None, Some(Bytes::from(vec![b'x'; 100_000])), vec![]);
                }
                b.build()
            })
            .collect();
        encode(&batches)
    }

    #[test]
    fn batches_are_decompressed_while_the_budget_has_room_and_the_rest_deferred() {
        const BATCH: usize = 1_000_000;
        let memory = FrameMemory::new(BATCH * 3 / 2);
        let bytes = inflating(0, 4);
        assert!(bytes.len() < 40_000, "compressed: {} bytes", bytes.len());
        let inflation = Inflation::new(&memory, bytes.len());
        let e = super::extract(bytes.clone(), "t", 0, at(0), None, &inflation).expect("ok");
        assert_eq!(
            e.next_offset, 20,
            "two batches: the second began below the limit"
        );
        assert!(e.deferred);
        let held = memory.in_use();
        assert!(held < BATCH * 3 / 2 + BATCH + 1_000, "{held}");
        // Another answer while these are held: nothing.
        let inflation = Inflation::new(&memory, bytes.len());
        let rest = inflating(20, 2);
        let more = super::extract(rest, "t", 0, at(20), None, &inflation).expect("ok");
        assert!(more.fetched.records.is_empty() && more.deferred);
        assert_eq!(more.next_offset, 20);
        drop((e, more));
        assert_eq!(memory.in_use(), 0);

        // A budget smaller than one batch: one batch an answer.
        let small = FrameMemory::new(BATCH / 10);
        let inflation = Inflation::new(&small, bytes.len());
        let e = super::extract(bytes.clone(), "t", 0, at(0), None, &inflation).expect("ok");
        assert_eq!(
            (e.fetched.records.len(), e.next_offset, e.deferred),
            (10, 10, true)
        );
        drop(e);

        // The answer's own frame fills the budget: its first batch is still decompressed.
        let frame = small.frame(BATCH / 5);
        let inflation = Inflation::new(&small, BATCH / 5);
        let e = super::extract(bytes, "t", 0, at(0), None, &inflation).expect("ok");
        assert_eq!(e.next_offset, 10);
        drop((e, frame));
        assert_eq!(small.in_use(), 0);
    }

    fn encode(batches: &[RecordBatch]) -> Bytes {
        let mut buf = BytesMut::new();
        for b in batches {
            b.encode(&mut buf).expect("encode");
        }
        buf.freeze()
    }

    /// From `position`, with no high watermark reported.
    fn at(position: i64) -> OffsetWindow {
        OffsetWindow {
            position,
            end: None,
        }
    }

    fn offsets(e: &Extracted) -> Vec<i64> {
        e.fetched.records.iter().map(|r| r.offset).collect()
    }

    #[test]
    fn records_before_the_position_are_skipped_and_a_partial_batch_ends_it() {
        let mut bytes =
            BytesMut::from(&encode(&[data_batch(0, 5, None), data_batch(5, 5, None)])[..]);
        let tail = encode(&[data_batch(10, 5, None)]);
        bytes.extend_from_slice(&tail[..tail.len() / 2]);
        let e = extract(bytes.freeze(), "t", 0, at(3), None).expect("extract");
        assert_eq!(offsets(&e), [3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(e.next_offset, 10);
        assert_eq!(e.leader_epoch, Some(3));
    }

    #[test]
    fn each_batch_that_gives_records_keeps_its_header_facts() {
        use mooring_wire::records::{BatchAttributes, TimestampType};

        let mut appended = data_batch(5, 5, None);
        appended.attributes =
            BatchAttributes::default().with_timestamp_type(TimestampType::LogAppendTime);
        appended.max_timestamp = 9_000;
        appended.partition_leader_epoch = 4;
        let bytes = encode(&[data_batch(3, 2, None), appended, data_batch(10, 2, None)]);
        // From offset 4: the first batch gives one record, and all three are listed.
        let e = extract(bytes, "t", 0, at(4), None).expect("extract");
        assert_eq!(offsets(&e), [4, 5, 6, 7, 8, 9, 10, 11]);
        let facts: Vec<(i64, TimestampType, i64, i32)> = e
            .fetched
            .batches
            .iter()
            .map(|b| {
                (
                    b.last_offset,
                    b.info.timestamp_type,
                    b.info.max_timestamp,
                    b.info.partition_leader_epoch,
                )
            })
            .collect();
        assert_eq!(
            facts,
            [
                (4, TimestampType::CreateTime, 1_001, 3),
                (9, TimestampType::LogAppendTime, 9_000, 4),
                (11, TimestampType::CreateTime, 1_001, 3),
            ]
        );
    }

    #[test]
    fn control_batches_are_skipped_in_both_isolation_levels() {
        let bytes = encode(&[
            data_batch(0, 2, Some(7)),
            RecordBatch::end_txn_marker(2, 0, 3, 7, 0, true, 0),
            data_batch(3, 1, None),
        ]);
        for aborted in [None, Some(&[][..])] {
            let e = extract(bytes.clone(), "t", 0, at(0), aborted).expect("extract");
            assert_eq!(offsets(&e), [0, 1, 3]);
            assert_eq!(e.next_offset, 4);
        }
        // A marker as the last batch still moves the position past it.
        let bytes = encode(&[RecordBatch::end_txn_marker(9, 0, 3, 7, 0, true, 0)]);
        let e = extract(bytes, "t", 0, at(9), None).expect("extract");
        assert!(e.fetched.records.is_empty());
        assert_eq!(e.next_offset, 10);
    }

    #[test]
    fn read_committed_drops_aborted_transactions_only() {
        // Producer 7 aborts [0, 2); producer 8 commits [2, 4); producer 7 later commits [6, 7).
        let bytes = encode(&[
            data_batch(0, 2, Some(7)),
            data_batch(2, 2, Some(8)),
            RecordBatch::end_txn_marker(4, 0, 3, 7, 0, false, 0),
            RecordBatch::end_txn_marker(5, 0, 3, 8, 0, true, 0),
            data_batch(6, 1, Some(7)),
            RecordBatch::end_txn_marker(7, 0, 3, 7, 0, true, 0),
        ]);
        let aborted = [AbortedTransaction {
            producer_id: 7,
            first_offset: 0,
            ..Default::default()
        }];
        let e = extract(bytes.clone(), "t", 0, at(0), Some(&aborted)).expect("extract");
        assert_eq!(offsets(&e), [2, 3, 6]);
        assert_eq!(e.next_offset, 8);
        // read_uncommitted sees everything but the markers.
        let e = extract(bytes, "t", 0, at(0), None).expect("extract");
        assert_eq!(offsets(&e), [0, 1, 2, 3, 6]);
    }

    #[test]
    fn a_corrupt_first_batch_is_an_error_a_later_one_stops_the_extraction() {
        let good = encode(&[data_batch(0, 2, None)]);
        let mut bad = BytesMut::from(&encode(&[data_batch(2, 2, None)])[..]);
        let last = bad.len() - 1;
        bad[last] ^= 0xff;
        let mut both = BytesMut::from(&good[..]);
        both.extend_from_slice(&bad);
        let e = extract(both.freeze(), "t", 0, at(0), None).expect("first batch is fine");
        assert_eq!(offsets(&e), [0, 1]);
        assert_eq!(e.next_offset, 2);
        assert!(extract(bad.freeze(), "t", 0, at(2), None).is_err());
    }

    /// A batch whose base offset (outside the CRC) was changed in flight, in each way a reader
    /// can tell: the first batch ends before the position, a later one does not follow the one
    /// before it, or a batch reaches the high watermark.
    #[test]
    fn a_batch_whose_offsets_cannot_be_right_is_corrupt() {
        let implausible = |r: Result<Extracted, RecordsError>| match r {
            Err(RecordsError {
                kind: RecordsErrorKind::ImplausibleOffsets { reason, .. },
                ..
            }) => reason,
            other => panic!("not refused as implausible: {other:?}"),
        };
        let moved_back = encode(&[data_batch(0, 5, None), data_batch(5, 5, None)]);
        assert_eq!(
            implausible(extract(moved_back, "t", 0, at(5), None)),
            "wholly before the fetch position"
        );
        let out_of_order = encode(&[data_batch(0, 5, None), data_batch(3, 5, None)]);
        let e = extract(out_of_order, "t", 0, at(0), None).expect("the first batch is fine");
        assert_eq!(
            offsets(&e),
            [0, 1, 2, 3, 4],
            "the position stops at the bad batch"
        );
        assert_eq!(e.next_offset, 5);
        let past_the_end = encode(&[data_batch(1 << 40, 5, None)]);
        let span = OffsetWindow {
            position: 0,
            end: Some(100),
        };
        assert_eq!(
            implausible(extract(past_the_end, "t", 0, span, None)),
            "at or past the high watermark"
        );
        let below_the_end = encode(&[data_batch(95, 5, None)]);
        assert!(extract(
            below_the_end,
            "t",
            0,
            OffsetWindow {
                position: 95,
                end: Some(100)
            },
            None
        )
        .is_ok());
    }
}
