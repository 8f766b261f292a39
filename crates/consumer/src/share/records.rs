//! From a ShareFetch partition's answer to the records this member acquired, as Java's
//! `ShareCompletedFetch` reads it: the `AcquiredRecords` ranges say which offsets are this
//! member's and with what delivery count; the `Records` bytes hold whole batches, which may
//! begin before and end after them. A record in a range is handed out; an offset of a range with
//! no record (a transaction marker, a record compacted away) is a gap, given back at once; records
//! outside every range are someone else's and ignored. Control batches are never shown.
//!
//! The ranges are checked before anything is read: in offset order, none overlapping, none
//! empty, delivery counts positive, and at most [`MAX_ACQUIRED`] offsets in all (a broker holds
//! at most `group.share.max.partition.max.record.locks` records in flight per share-partition, a
//! few thousand): an answer breaking these is corrupt, and its records are left to their locks.
//! A batch that cannot be read (bad CRC, unknown compression) ends the reading: the acquired
//! offsets not reached are released, so the records come again, from this leader or the next,
//! until the group's delivery limit archives them.

use std::sync::Arc;

use bytes::Bytes;
use mooring_client::conn::FrameMemory;
use mooring_wire::messages::share_fetch::AcquiredRecords;
use mooring_wire::records::{BatchItem, BatchReader, Record};

use crate::processing::BatchInfo;

/// The most offsets one answer may say a share-partition acquired.
pub(crate) const MAX_ACQUIRED: i64 = 100_000;

/// One record handed to this member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AcquiredRecord {
    pub record: Record,
    pub batch: BatchInfo,
    pub delivery_count: i16,
}

/// What one share-partition's answer yields.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Acquired {
    /// The records to hand out, in offset order.
    pub records: Vec<AcquiredRecord>,
    /// Acquired offsets without a record, `(first, last, delivery count)`: acknowledged as gaps.
    pub gaps: Vec<(i64, i64, i16)>,
    /// Acquired offsets past a batch that could not be read, `(first, last, delivery count)`:
    /// released.
    pub unreadable: Vec<(i64, i64, i16)>,
    /// The read error that left offsets unreadable.
    pub error: Option<String>,
    /// Bytes compressed batches decompressed to.
    pub decompressed: usize,
}

/// Why a share-partition's acquired ranges cannot be right.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("implausible acquired records: {0}")]
pub(crate) struct ImplausibleRanges(pub String);

/// Checks the ranges (see the module docs).
pub(crate) fn check_ranges(ranges: &[AcquiredRecords]) -> Result<(), ImplausibleRanges> {
    let mut total: i64 = 0;
    let mut previous: Option<i64> = None;
    for r in ranges {
        let bad = |why: &str| {
            Err(ImplausibleRanges(format!(
                "{}..={} (delivery count {}): {why}",
                r.first_offset, r.last_offset, r.delivery_count
            )))
        };
        if r.first_offset < 0 || r.last_offset < r.first_offset {
            return bad("empty or negative");
        }
        if previous.is_some_and(|p| r.first_offset <= p) {
            return bad("not after the range before it");
        }
        if r.delivery_count < 1 {
            return bad("a delivery count below 1");
        }
        let span = r
            .last_offset
            .saturating_sub(r.first_offset)
            .saturating_add(1);
        total = total.saturating_add(span);
        if total > MAX_ACQUIRED {
            return bad("more offsets than a share-partition can have in flight");
        }
        previous = Some(r.last_offset);
    }
    Ok(())
}

/// The acquired records of one share-partition's answer (`ranges` already checked).
pub(crate) fn acquired(
    bytes: Option<Bytes>,
    ranges: &[AcquiredRecords],
    topic: &str,
    partition: i32,
    memory: &Arc<FrameMemory>,
) -> Acquired {
    let mut out = Acquired::default();
    let mut cursor = Cursor::new(ranges);
    let pool = memory.decompression();
    let mut decoded: Vec<Record> = Vec::new();
    let items = BatchReader::new(bytes.unwrap_or_default()).with_context(topic, partition);
    for item in items {
        if cursor.done() {
            break;
        }
        let batch = match item {
            Ok(BatchItem::Batch(batch)) => batch,
            Ok(BatchItem::Incomplete { .. }) => break,
            Err(e) => {
                out.error = Some(e.to_string());
                break;
            }
        };
        let header = *batch.header();
        if header.last_offset() < cursor.next_offset() || header.is_control() {
            continue;
        }
        decoded.clear();
        if let Err(e) = batch.records_into(&mut decoded, &pool) {
            out.error = Some(e.to_string());
            break;
        }
        let info = BatchInfo::from(&header);
        for record in decoded.drain(..) {
            if let Some(delivery_count) = cursor.take(record.offset, &mut out.gaps) {
                out.records.push(AcquiredRecord {
                    record,
                    batch: info,
                    delivery_count,
                });
            }
        }
    }
    let rest = if out.error.is_some() {
        &mut out.unreadable
    } else {
        &mut out.gaps
    };
    cursor.finish(rest);
    out.decompressed = pool.decompressed();
    out
}

/// Walks the acquired ranges alongside the records, in offset order.
struct Cursor<'a> {
    ranges: &'a [AcquiredRecords],
    /// The range under way.
    index: usize,
    /// Its next offset not yet met.
    next: i64,
}

impl<'a> Cursor<'a> {
    fn new(ranges: &'a [AcquiredRecords]) -> Self {
        Cursor {
            ranges,
            index: 0,
            next: ranges.first().map_or(0, |r| r.first_offset),
        }
    }

    fn done(&self) -> bool {
        self.index >= self.ranges.len()
    }

    fn next_offset(&self) -> i64 {
        self.next
    }

    /// The delivery count of `offset` if it is acquired; the acquired offsets it passes are gaps.
    fn take(&mut self, offset: i64, gaps: &mut Vec<(i64, i64, i16)>) -> Option<i16> {
        while let Some(range) = self.ranges.get(self.index) {
            if offset < self.next {
                return None;
            }
            if offset > range.last_offset {
                gaps.push((self.next, range.last_offset, range.delivery_count));
                self.advance();
                continue;
            }
            if offset > self.next {
                gaps.push((self.next, offset - 1, range.delivery_count));
            }
            self.next = offset + 1;
            if self.next > range.last_offset {
                self.advance();
            }
            return Some(range.delivery_count);
        }
        None
    }

    fn advance(&mut self) {
        self.index += 1;
        if let Some(range) = self.ranges.get(self.index) {
            self.next = range.first_offset;
        }
    }

    /// Every acquired offset not met, as ranges.
    fn finish(mut self, rest: &mut Vec<(i64, i64, i16)>) {
        while let Some(range) = self.ranges.get(self.index) {
            rest.push((self.next, range.last_offset, range.delivery_count));
            self.advance();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use bytes::BytesMut;
    use mooring_wire::records::RecordBatch;

    use super::*;

    fn range(first: i64, last: i64, delivery_count: i16) -> AcquiredRecords {
        AcquiredRecords {
            first_offset: first,
            last_offset: last,
            delivery_count,
            ..Default::default()
        }
    }

    fn batch(base: i64, n: i64) -> RecordBatch {
        let mut b = RecordBatch::builder(base);
        for i in 0..n {
            b = b.record(1_000 + i, None, Some(Bytes::from(vec![b'x'; 8])), vec![]);
        }
        b.build()
    }

    fn encode(batches: &[RecordBatch]) -> Bytes {
        let mut buf = BytesMut::new();
        for b in batches {
            b.encode(&mut buf).unwrap();
        }
        buf.freeze()
    }

    fn memory() -> Arc<FrameMemory> {
        FrameMemory::new(1 << 20)
    }

    fn offsets(a: &Acquired) -> Vec<(i64, i16)> {
        a.records
            .iter()
            .map(|r| (r.record.offset, r.delivery_count))
            .collect()
    }

    #[test]
    fn only_acquired_records_are_handed_out_with_their_delivery_counts() {
        // Batches 0..10 and 10..20; this member acquired 3..=5 (first delivery) and 12..=13
        // (third).
        let bytes = encode(&[batch(0, 10), batch(10, 10)]);
        let ranges = [range(3, 5, 1), range(12, 13, 3)];
        check_ranges(&ranges).unwrap();
        let got = acquired(Some(bytes), &ranges, "t", 0, &memory());
        assert_eq!(offsets(&got), [(3, 1), (4, 1), (5, 1), (12, 3), (13, 3)]);
        assert!(got.gaps.is_empty() && got.unreadable.is_empty() && got.error.is_none());
    }

    #[test]
    fn acquired_offsets_without_a_record_are_gaps_and_control_batches_are_never_shown() {
        let marker = RecordBatch::end_txn_marker(3, 0, 0, 7, 0, true, 0);
        // Records 0..3, a marker at 3, records 4..6; 6..=8 acquired but never written back.
        let bytes = encode(&[batch(0, 3), marker, batch(4, 2)]);
        let ranges = [range(1, 8, 2)];
        let got = acquired(Some(bytes), &ranges, "t", 0, &memory());
        assert_eq!(offsets(&got), [(1, 2), (2, 2), (4, 2), (5, 2)]);
        assert_eq!(got.gaps, [(3, 3, 2), (6, 8, 2)]);
        // No records at all: everything acquired is a gap.
        let got = acquired(None, &ranges, "t", 0, &memory());
        assert_eq!(got.gaps, [(1, 8, 2)]);
    }

    #[test]
    fn an_unreadable_batch_releases_what_it_and_the_rest_hold() {
        let mut bytes = BytesMut::from(&encode(&[batch(0, 4), batch(4, 4)])[..]);
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff; // the second batch's CRC fails
        let got = acquired(Some(bytes.freeze()), &[range(2, 7, 1)], "t", 0, &memory());
        assert_eq!(offsets(&got), [(2, 1), (3, 1)]);
        assert_eq!(got.unreadable, [(4, 7, 1)]);
        assert!(got.error.is_some());
        assert!(got.gaps.is_empty());
    }

    #[test]
    fn ranges_out_of_order_overlapping_empty_or_too_many_are_implausible() {
        for bad in [
            vec![range(5, 6, 1), range(1, 2, 1)],
            vec![range(1, 5, 1), range(5, 6, 1)],
            vec![range(3, 2, 1)],
            vec![range(1, 2, 0)],
            vec![range(0, MAX_ACQUIRED, 1)],
            vec![range(0, i64::MAX, 1)],
        ] {
            assert!(check_ranges(&bad).is_err(), "{bad:?}");
        }
        assert!(check_ranges(&[range(0, MAX_ACQUIRED - 1, 1)]).is_ok());
    }
}
