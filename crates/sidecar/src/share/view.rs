//! What the sidecar keeps of a share consumer: its last snapshot, its group's delivery limit, the
//! archive count the two give, and the alert windows ([`CountWindow`]).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use mooring_telemetry_schema::ShareSnapshot;
use serde::Serialize;

/// The delivery counts the consumer buckets (its last bucket: that count or more).
pub const DELIVERY_COUNT_BUCKETS: usize = 10;

/// The `delivery_count` label values of `mooring_share_records_acquired_by_delivery_total`:
/// `1` … `9`, then `10+`.
pub const DELIVERY_COUNT_LABELS: [&str; DELIVERY_COUNT_BUCKETS] =
    ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10+"];

/// The most increases a [`CountWindow`] keeps; past it the newest entry takes the increase (at
/// one snapshot every 5 s, a 1 h window needs 720).
pub const WINDOW_ENTRIES: usize = 4096;

/// A cumulative counter's increases, by when the sidecar saw them, over a rolling window.
#[derive(Debug, Clone, Default)]
pub struct CountWindow {
    increases: VecDeque<(Instant, u64)>,
    last: Option<u64>,
}

impl CountWindow {
    /// The counter reads `total` now. The first reading is the baseline (what came before the
    /// sidecar saw the consumer is not in its window, as Prometheus' `increase` leaves it out
    /// too); a reading below the last is a new consumer process counting from 0.
    pub fn observe(&mut self, total: u64, now: Instant) {
        let increase = match self.last {
            None => 0,
            Some(last) if total >= last => total - last,
            Some(_) => total,
        };
        self.last = Some(total);
        if increase == 0 {
            return;
        }
        if self.increases.len() >= WINDOW_ENTRIES {
            if let Some(newest) = self.increases.back_mut() {
                newest.1 = newest.1.saturating_add(increase);
            }
            return;
        }
        self.increases.push_back((now, increase));
    }

    /// The increase within `window` of `now` (pruning what is older).
    pub fn count(&mut self, window: Duration, now: Instant) -> u64 {
        while self
            .increases
            .front()
            .is_some_and(|(at, _)| now.saturating_duration_since(*at) > window)
        {
            self.increases.pop_front();
        }
        self.increases
            .iter()
            .fold(0, |sum: u64, (_, n)| sum.saturating_add(*n))
    }
}

/// What the sidecar knows of a share consumer and its group.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ShareView {
    /// The last `share_snapshot`.
    pub snapshot: Option<ShareSnapshot>,
    /// The group's `share.delivery.count.limit`, as the broker watch read it.
    pub delivery_count_limit: Option<i32>,
    /// Records the broker archived after the delivery limit (see the module docs), when known.
    pub archived_total: Option<u64>,
    /// Rejects (poison) in the rejects alert's window.
    #[serde(skip)]
    pub rejected: CountWindow,
    /// Archives in the archives alert's window.
    #[serde(skip)]
    pub archived: CountWindow,
    /// Locks that ran out before a verdict, in the lock-expiry alert's window.
    #[serde(skip)]
    pub lock_expired: CountWindow,
}

/// Releases at a delivery count at or above `limit` (`None` when the buckets cannot tell: a
/// limit above their count, or below 1).
pub fn archived(released_by_delivery: &[u64], limit: i32) -> Option<u64> {
    let limit = usize::try_from(limit).ok().filter(|l| *l >= 1)?;
    let buckets = released_by_delivery.len().min(DELIVERY_COUNT_BUCKETS);
    if buckets == 0 || limit > buckets {
        return None;
    }
    // Element i counts delivery count i + 1 (the last one: that or more); a longer list than
    // this build's buckets folds into the last.
    Some(
        released_by_delivery
            .iter()
            .skip(limit - 1)
            .fold(0, |sum: u64, n| sum.saturating_add(*n)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn archives_are_releases_at_or_past_the_limit_when_the_buckets_can_tell() {
        let released = [5, 4, 3, 2, 1, 0, 0, 0, 0, 7];
        assert_eq!(archived(&released, 5), Some(1 + 7));
        assert_eq!(archived(&released, 3), Some(3 + 2 + 1 + 7));
        assert_eq!(archived(&released, 1), Some(22));
        assert_eq!(
            archived(&released, 10),
            Some(7),
            "the last bucket is 10 or more"
        );
        assert_eq!(archived(&released, 11), None, "10+ mixes 10 and 11");
        assert_eq!(archived(&released, 0), None);
        assert_eq!(archived(&[], 5), None);
        // Figures off the wire never overflow.
        assert_eq!(archived(&[0, u64::MAX, 7], 2), Some(u64::MAX));
    }

    #[test]
    fn a_window_counts_increases_after_the_first_reading_and_a_reset_as_new() {
        let t0 = Instant::now();
        let mut w = CountWindow::default();
        w.observe(40, t0);
        assert_eq!(w.count(Duration::from_secs(60), t0), 0, "the baseline");
        w.observe(43, t0 + Duration::from_secs(5));
        w.observe(43, t0 + Duration::from_secs(10));
        w.observe(2, t0 + Duration::from_secs(15));
        let hour = Duration::from_secs(3600);
        assert_eq!(w.count(hour, t0 + Duration::from_secs(15)), 5);
        assert_eq!(
            w.count(Duration::from_secs(7), t0 + Duration::from_secs(15)),
            2
        );
        assert_eq!(w.count(hour, t0 + Duration::from_secs(3700)), 0, "pruned");
        for i in 0..(WINDOW_ENTRIES as u64 + 10) {
            w.observe(3 + i, t0 + Duration::from_secs(20 + i));
        }
        assert_eq!(w.increases.len(), WINDOW_ENTRIES);
        assert_eq!(
            w.count(hour * 10, t0 + Duration::from_secs(20)),
            WINDOW_ENTRIES as u64 + 10
        );
    }
}
