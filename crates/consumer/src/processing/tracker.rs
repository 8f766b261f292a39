//! Per-partition commit tracking: which offsets are accepted and not finished, and the offset a
//! commit may carry. A commit never passes a record whose handler has not finished, even when
//! later records finished first.
//!
//! Offsets arrive in increasing order (with gaps: compaction, control records), so the pending
//! offsets form a sorted ring: completion finds its slot by binary search (O(log n)) and the
//! finished prefix is popped (amortized O(1)). The committable offset is the lowest unfinished
//! offset, or the highest tracked + 1 when none is unfinished.
//!
//! An offset can also be *abandoned*: its record was handed out and given up without being
//! processed (a stream delivery dropped unacknowledged). It is neither running nor done: it stays
//! unfinished for good, so the committable offset never passes it while later offsets may still
//! finish; the record is processed again only by whoever next fetches the partition from its
//! committed offset (a restart, or the partition's next owner).

use std::collections::VecDeque;

/// The most slots an empty window keeps allocated.
const KEPT_CAPACITY: usize = 64;

/// Offsets accepted for processing and which of them finished.
///
/// ```
/// use mooring_consumer::processing::OffsetTracker;
///
/// let mut t = OffsetTracker::new();
/// for offset in [10, 11, 13] {
///     t.track(offset).expect("increasing");
/// }
/// assert_eq!(t.committable(), Some(10));
/// t.complete(11);
/// t.complete(13);
/// assert_eq!(t.committable(), Some(10), "10 still runs: the commit cannot pass it");
/// t.complete(10);
/// assert_eq!(t.committable(), Some(14));
///
/// t.track(14).expect("increasing");
/// t.track(15).expect("increasing");
/// t.abandon(14);
/// t.complete(15);
/// assert_eq!(t.committable(), Some(14), "abandoned: never passed");
/// assert!(!t.complete(14), "an abandoned offset does not finish later");
/// ```
#[derive(Debug, Clone, Default)]
pub struct OffsetTracker {
    /// From the lowest unfinished offset up to the newest tracked, finished or not.
    window: VecDeque<Slot>,
    /// The highest offset ever tracked.
    last: Option<i64>,
    /// Unfinished offsets in `window` (abandoned ones included).
    unfinished: usize,
    /// Abandoned offsets in `window`.
    abandoned: usize,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    offset: i64,
    state: SlotState,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// Accepted, not finished (buffered or running).
    Pending,
    Done,
    /// Given up without being processed: unfinished for good.
    Abandoned,
}

/// [`OffsetTracker::track`] was given an offset not above the last one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("offset {offset} is not above the last tracked offset {last}")]
pub struct NotIncreasing {
    /// The offset given.
    pub offset: i64,
    /// The last tracked offset.
    pub last: i64,
}

impl OffsetTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        OffsetTracker::default()
    }

    /// Starts tracking `offset`, which must be above every offset tracked before.
    pub fn track(&mut self, offset: i64) -> Result<(), NotIncreasing> {
        self.check(offset)?;
        self.last = Some(offset);
        self.window.push_back(Slot {
            offset,
            state: SlotState::Pending,
        });
        self.unfinished += 1;
        Ok(())
    }

    /// Whether [`Self::track`] would accept `offset`.
    pub fn check(&self, offset: i64) -> Result<(), NotIncreasing> {
        match self.last {
            Some(last) if offset <= last => Err(NotIncreasing { offset, last }),
            _ => Ok(()),
        }
    }

    /// Marks `offset` finished. Returns `false` if it is not tracked, already finished or
    /// abandoned.
    pub fn complete(&mut self, offset: i64) -> bool {
        let Some(slot) = self.pending_slot(offset) else {
            return false;
        };
        slot.state = SlotState::Done;
        self.unfinished -= 1;
        while self
            .window
            .front()
            .is_some_and(|s| s.state == SlotState::Done)
        {
            self.window.pop_front();
        }
        // A drained window gives its memory back: a thousand partitions' windows, each grown to
        // a full buffer once, would otherwise keep 16 KiB apiece.
        if self.window.is_empty() && self.window.capacity() > KEPT_CAPACITY {
            self.window = VecDeque::new();
        }
        true
    }

    /// Marks every tracked, unfinished offset from `first` to `last` (both included) finished: a
    /// batch's records, whose offsets are exactly those tracked in that range. Abandoned offsets
    /// in it stay abandoned. Returns how many it marked.
    ///
    /// ```
    /// use mooring_consumer::processing::OffsetTracker;
    ///
    /// let mut t = OffsetTracker::new();
    /// for offset in [10, 11, 13, 20] {
    ///     t.track(offset).expect("increasing");
    /// }
    /// assert_eq!(t.complete_range(11, 19), 2);
    /// assert_eq!(t.committable(), Some(10), "10 is unfinished: the commit cannot pass it");
    /// assert_eq!(t.complete_range(10, 10), 1);
    /// assert_eq!(t.committable(), Some(20));
    /// ```
    pub fn complete_range(&mut self, first: i64, last: i64) -> usize {
        let start = self.window.partition_point(|s| s.offset < first);
        let mut marked = 0;
        for slot in self.window.range_mut(start..) {
            if slot.offset > last {
                break;
            }
            if slot.state == SlotState::Pending {
                slot.state = SlotState::Done;
                marked += 1;
            }
        }
        self.unfinished -= marked;
        while self
            .window
            .front()
            .is_some_and(|s| s.state == SlotState::Done)
        {
            self.window.pop_front();
        }
        marked
    }

    /// Marks `offset` abandoned: handed out and given up without being processed. It stays
    /// unfinished for good (no commit passes it; [`complete`](Self::complete) refuses it), while
    /// the offsets after it may still finish. Returns `false` if it is not tracked, finished or
    /// already abandoned.
    pub fn abandon(&mut self, offset: i64) -> bool {
        let Some(slot) = self.pending_slot(offset) else {
            return false;
        };
        slot.state = SlotState::Abandoned;
        self.abandoned += 1;
        true
    }

    fn pending_slot(&mut self, offset: i64) -> Option<&mut Slot> {
        // In-order completion (one record of a partition at a time) finds it first.
        let i = if self.window.front().is_some_and(|s| s.offset == offset) {
            0
        } else {
            self.window
                .binary_search_by_key(&offset, |s| s.offset)
                .ok()?
        };
        self.window
            .get_mut(i)
            .filter(|s| s.state == SlotState::Pending)
    }

    /// The offset to commit: the lowest unfinished offset, or the last tracked + 1 when everything
    /// finished; `None` before anything was tracked.
    pub fn committable(&self) -> Option<i64> {
        match self.window.front() {
            Some(s) => Some(s.offset),
            None => self.last.map(|l| l + 1),
        }
    }

    /// Offsets tracked and not finished (abandoned ones included).
    pub fn unfinished(&self) -> usize {
        self.unfinished
    }

    /// Offsets abandoned (see [`abandon`](Self::abandon)).
    pub fn abandoned(&self) -> usize {
        self.abandoned
    }

    /// Records not yet committable: unfinished, or finished above an unfinished one.
    pub fn window_len(&self) -> usize {
        self.window.len()
    }

    /// The highest offset tracked.
    pub fn last_tracked(&self) -> Option<i64> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_drained_window_gives_its_memory_back() {
        let mut t = OffsetTracker::new();
        for offset in 0..1000 {
            t.track(offset).expect("increasing");
        }
        assert!(t.window.capacity() >= 1000);
        for offset in 0..999 {
            assert!(t.complete(offset));
        }
        assert!(t.window.capacity() >= 1000, "not drained yet: kept");
        assert!(t.complete(999));
        assert!(t.window.capacity() <= KEPT_CAPACITY);
        assert_eq!(t.committable(), Some(1000));
        t.track(1000).expect("increasing");
        assert_eq!(t.committable(), Some(1000));
    }

    #[test]
    fn empty_and_errors() {
        let mut t = OffsetTracker::new();
        assert_eq!(t.committable(), None);
        assert!(!t.complete(3));
        t.track(5).expect("first");
        assert_eq!(t.track(5), Err(NotIncreasing { offset: 5, last: 5 }));
        assert_eq!(t.track(4), Err(NotIncreasing { offset: 4, last: 5 }));
        assert!(t.complete(5));
        assert!(!t.complete(5), "twice");
        assert_eq!(t.committable(), Some(6));
        t.track(9).expect("after a gap");
        assert_eq!(t.committable(), Some(9));
    }

    #[test]
    fn an_abandoned_offset_stays_unfinished() {
        let mut t = OffsetTracker::new();
        for o in 0..4 {
            t.track(o).expect("increasing");
        }
        assert!(t.complete(0));
        assert!(t.abandon(1));
        assert!(!t.abandon(1), "twice");
        assert!(!t.abandon(0), "finished");
        assert!(!t.abandon(9), "not tracked");
        assert!(t.complete(2) && t.complete(3));
        assert!(!t.complete(1), "an abandoned offset never finishes");
        assert_eq!(t.committable(), Some(1));
        assert_eq!((t.unfinished(), t.abandoned(), t.window_len()), (1, 1, 3));
        t.track(4).expect("after it");
        assert!(t.complete(4));
        assert_eq!(t.committable(), Some(1));
    }

    /// Increasing offsets with gaps, and a completion order (a permutation of their indexes).
    fn offsets_and_order() -> impl Strategy<Value = (Vec<i64>, Vec<usize>)> {
        (0i64..1_000, prop::collection::vec(1i64..4, 1..200)).prop_flat_map(|(start, gaps)| {
            let offsets: Vec<i64> = gaps
                .iter()
                .scan(start, |o, g| {
                    *o += g;
                    Some(*o)
                })
                .collect();
            let order = Just((0..offsets.len()).collect::<Vec<_>>()).prop_shuffle();
            (Just(offsets), order)
        })
    }

    proptest! {
        #[test]
        fn committable_never_passes_an_unfinished_offset((offsets, order) in offsets_and_order()) {
            let mut t = OffsetTracker::new();
            for &o in &offsets {
                t.track(o).expect("increasing");
            }
            let mut done = vec![false; offsets.len()];
            let mut previous = t.committable();
            for &i in &order {
                prop_assert!(t.complete(offsets[i]));
                done[i] = true;
                let c = t.committable().expect("tracked");
                for (j, &o) in offsets.iter().enumerate() {
                    if !done[j] {
                        prop_assert!(c <= o, "committable {} passes unfinished {}", c, o);
                    }
                }
                // The lowest unfinished offset exactly: no slower than it must be.
                let lowest = offsets.iter().zip(&done).find(|(_, d)| !**d).map(|(o, _)| *o);
                prop_assert_eq!(c, lowest.unwrap_or(offsets[offsets.len() - 1] + 1));
                prop_assert!(previous <= Some(c), "monotonic");
                previous = Some(c);
                prop_assert_eq!(t.unfinished(), done.iter().filter(|d| !**d).count());
            }
            prop_assert_eq!(t.committable(), Some(offsets[offsets.len() - 1] + 1));
            prop_assert_eq!(t.window_len(), 0);
        }

        #[test]
        fn committable_never_passes_an_abandoned_offset(
            (offsets, order) in offsets_and_order(),
            abandon in prop::collection::vec(any::<bool>(), 200),
        ) {
            // Interleave tracking and ending; each offset ends finished or abandoned.
            let mut t = OffsetTracker::new();
            let mut tracked = 0usize;
            let mut ended = vec![false; offsets.len()];
            for &i in &order {
                while tracked <= i {
                    t.track(offsets[tracked]).expect("increasing");
                    tracked += 1;
                }
                if abandon[i] {
                    prop_assert!(t.abandon(offsets[i]));
                    prop_assert!(!t.complete(offsets[i]), "an abandoned offset finished");
                } else {
                    prop_assert!(t.complete(offsets[i]));
                }
                ended[i] = true;
                let c = t.committable().expect("tracked");
                for j in 0..tracked {
                    if !ended[j] || abandon[j] {
                        prop_assert!(c <= offsets[j], "committable {} passes {}", c, offsets[j]);
                    }
                }
            }
            // Everything ended: the commit stops at the first abandoned offset, for good.
            let first = offsets.iter().zip(&abandon).find(|(_, a)| **a).map(|(o, _)| *o);
            let end = offsets[offsets.len() - 1] + 1;
            prop_assert_eq!(t.committable(), Some(first.unwrap_or(end)));
            let abandoned = abandon.iter().take(offsets.len()).filter(|a| **a).count();
            prop_assert_eq!((t.unfinished(), t.abandoned()), (abandoned, abandoned));
            t.track(end).expect("increasing");
            prop_assert!(t.complete(end));
            prop_assert_eq!(t.committable(), Some(first.unwrap_or(end + 1)));
        }

        #[test]
        fn committable_never_passes_an_unfinished_batch(
            (offsets, _) in offsets_and_order(),
            sizes in prop::collection::vec(1usize..9, 200),
            seed in any::<u64>(),
        ) {
            // Consecutive runs of the tracked offsets (a lane's batches), finished in any order.
            let mut batches: Vec<&[i64]> = Vec::new();
            let (mut rest, mut i) = (&offsets[..], 0);
            while !rest.is_empty() {
                let (b, r) = rest.split_at(sizes[i % sizes.len()].min(rest.len()));
                batches.push(b);
                rest = r;
                i += 1;
            }
            let mut order: Vec<usize> = (0..batches.len()).collect();
            let mut x = seed | 1;
            for k in (1..order.len()).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                order.swap(k, (x % (k as u64 + 1)) as usize);
            }
            let mut t = OffsetTracker::new();
            for &o in &offsets {
                t.track(o).expect("increasing");
            }
            let mut done = vec![false; batches.len()];
            for &b in &order {
                let (first, last) = (batches[b][0], batches[b][batches[b].len() - 1]);
                prop_assert_eq!(t.complete_range(first, last), batches[b].len());
                prop_assert_eq!(t.complete_range(first, last), 0, "twice");
                done[b] = true;
                let lowest = batches.iter().zip(&done).find(|(_, d)| !**d).map(|(b, _)| b[0]);
                let end = offsets[offsets.len() - 1] + 1;
                prop_assert_eq!(t.committable(), Some(lowest.unwrap_or(end)));
            }
            prop_assert_eq!((t.unfinished(), t.window_len()), (0, 0));
        }

        #[test]
        fn interleaved_track_and_complete((offsets, order) in offsets_and_order()) {
            // Track in order while completing whatever is already tracked, in the random order.
            let mut t = OffsetTracker::new();
            let mut tracked = 0usize;
            let mut pending: Vec<usize> = Vec::new();
            let mut done = vec![false; offsets.len()];
            for &i in &order {
                while tracked <= i {
                    t.track(offsets[tracked]).expect("increasing");
                    pending.push(tracked);
                    tracked += 1;
                }
                if let Some(pos) = pending.iter().position(|&p| p == i) {
                    pending.swap_remove(pos);
                    prop_assert!(t.complete(offsets[i]));
                    done[i] = true;
                }
                let c = t.committable().expect("tracked");
                for &p in &pending {
                    prop_assert!(c <= offsets[p]);
                }
            }
            prop_assert!(done.iter().all(|d| *d));
            prop_assert_eq!(t.committable(), Some(offsets[offsets.len() - 1] + 1));
        }
    }
}
