//! Per-partition commit tracking: which offsets are accepted and not finished, and the offset a
//! commit may carry. A commit never passes a record whose handler has not finished, even when
//! later records finished first.
//!
//! Offsets arrive in increasing order (with gaps: compaction, control records), so the pending
//! offsets form a sorted ring: completion finds its slot by binary search (O(log n)) and the
//! finished prefix is popped (amortized O(1)). The committable offset is the lowest unfinished
//! offset, or the highest tracked + 1 when none is unfinished.

use std::collections::VecDeque;

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
/// ```
#[derive(Debug, Clone, Default)]
pub struct OffsetTracker {
    /// From the lowest unfinished offset up to the newest tracked, finished or not.
    window: VecDeque<Slot>,
    /// The highest offset ever tracked.
    last: Option<i64>,
    /// Unfinished offsets in `window`.
    unfinished: usize,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    offset: i64,
    done: bool,
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
            done: false,
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

    /// Marks `offset` finished. Returns `false` if it is not tracked or already finished.
    pub fn complete(&mut self, offset: i64) -> bool {
        let Ok(i) = self.window.binary_search_by_key(&offset, |s| s.offset) else {
            return false;
        };
        let Some(slot) = self.window.get_mut(i) else {
            return false;
        };
        if slot.done {
            return false;
        }
        slot.done = true;
        self.unfinished -= 1;
        while self.window.front().is_some_and(|s| s.done) {
            self.window.pop_front();
        }
        true
    }

    /// The offset to commit: the lowest unfinished offset, or the last tracked + 1 when everything
    /// finished; `None` before anything was tracked.
    pub fn committable(&self) -> Option<i64> {
        match self.window.front() {
            Some(s) => Some(s.offset),
            None => self.last.map(|l| l + 1),
        }
    }

    /// Offsets tracked and not finished.
    pub fn unfinished(&self) -> usize {
        self.unfinished
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
