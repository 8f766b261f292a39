//! The records this member holds: acquired from a share-partition and not yet given a final
//! verdict, each with its delivery count and the time its acquisition lock runs out. From it the
//! fetcher learns which locks to renew (a record still held when half its lock has passed, as
//! long as it has been held less than `max.poll.interval.ms`), whether a verdict comes too late
//! (its lock passed: the broker has given the record to another member, and the verdict is not
//! sent, since one stale offset would make the broker refuse its partition's whole batch), and how
//! many records it holds (what bounds fetching).
//!
//! Lock times are taken from when the request that acquired (or renewed) a record was sent,
//! before the broker started the lock: so a record this ledger calls locked is locked at the
//! broker too.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use tokio::time::Instant;

use crate::TopicPartition;

/// One held record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Held {
    pub delivery_count: i16,
    /// When the request that acquired it was sent.
    pub acquired_at: Instant,
    /// When its lock runs out.
    pub locked_until: Instant,
}

/// Renewals of one lock duration fall due at half of it.
fn renew_at(sent: Instant, lock: Duration) -> Instant {
    sent + lock / 2
}

/// What a final verdict finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Finished {
    /// Still locked: the verdict is sent.
    InTime(Held),
    /// Its lock ran out first: the record went back to the broker, the verdict is dropped.
    LockExpired(Held),
    /// Held, but acquired again since the delivery the verdict is for (that delivery's lock ran
    /// out and the broker handed the record to this member once more): the verdict is dropped,
    /// the newer delivery's stays to come.
    Superseded,
    /// Not held (a verdict twice, or the record was dropped with its membership).
    Unknown,
}

/// Consecutive offsets, `first..=last`.
type Range = (i64, i64);

/// Offsets in ascending order as ranges of consecutive ones (a fetch acquires whole runs, so a
/// batch of records is one range, not one entry per record).
fn ranges(offsets: impl IntoIterator<Item = i64>) -> Vec<Range> {
    let mut out: Vec<Range> = Vec::new();
    for offset in offsets {
        match out.last_mut() {
            Some(range) if range.1.checked_add(1) == Some(offset) => range.1 = offset,
            _ => out.push((offset, offset)),
        }
    }
    out
}

/// Every record held, by share-partition, and when their renewals fall due.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    held: HashMap<TopicPartition, BTreeMap<i64, Held>>,
    /// Renewals by the time they fall due, as the ranges of offsets acquired or renewed together
    /// (a record finished meanwhile is skipped when they fall due); the sequence number keeps
    /// equal times apart.
    due: BTreeMap<(Instant, u64), (TopicPartition, Vec<Range>)>,
    seq: u64,
    count: usize,
}

impl Ledger {
    /// Records held.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// `offsets` of `tp` acquired by a request sent at `sent`, locked for `lock`. Returns the
    /// records this member still held from an earlier delivery (its lock ran out while a handler
    /// had it, and the broker handed the record out again, to this member), with that delivery's
    /// count: its verdict, when it comes, is dropped.
    #[must_use]
    pub(crate) fn acquire(
        &mut self,
        tp: &TopicPartition,
        offsets: impl IntoIterator<Item = (i64, i16)>,
        sent: Instant,
        lock: Duration,
    ) -> Vec<(i64, i16)> {
        let partition = self.held.entry(tp.clone()).or_default();
        let mut taken = Vec::new();
        let mut superseded = Vec::new();
        for (offset, delivery_count) in offsets {
            let held = Held {
                delivery_count,
                acquired_at: sent,
                locked_until: sent + lock,
            };
            match partition.insert(offset, held) {
                None => self.count += 1,
                Some(earlier) => superseded.push((offset, earlier.delivery_count)),
            }
            taken.push(offset);
        }
        self.schedule(tp, taken, renew_at(sent, lock));
        superseded
    }

    fn schedule(&mut self, tp: &TopicPartition, offsets: Vec<i64>, at: Instant) {
        if offsets.is_empty() {
            return;
        }
        self.seq += 1;
        self.due
            .insert((at, self.seq), (tp.clone(), ranges(offsets)));
    }

    /// A final verdict for the `delivery_count`-th delivery of `offset` of `tp`: the record is
    /// no longer held.
    pub(crate) fn finish(
        &mut self,
        tp: &TopicPartition,
        offset: i64,
        delivery_count: i16,
        now: Instant,
    ) -> Finished {
        let Some(partition) = self.held.get_mut(tp) else {
            return Finished::Unknown;
        };
        match partition.get(&offset) {
            None => return Finished::Unknown,
            Some(held) if held.delivery_count != delivery_count => return Finished::Superseded,
            Some(_) => {}
        }
        let Some(held) = partition.remove(&offset) else {
            return Finished::Unknown;
        };
        self.count -= 1;
        if partition.is_empty() {
            self.held.remove(tp);
        }
        if now >= held.locked_until {
            Finished::LockExpired(held)
        } else {
            Finished::InTime(held)
        }
    }

    /// Everything held of `tp`, given up (its records are released by the caller, or were lost
    /// with the membership).
    pub(crate) fn take_partition(&mut self, tp: &TopicPartition) -> BTreeMap<i64, Held> {
        let taken = self.held.remove(tp).unwrap_or_default();
        self.count -= taken.len();
        taken
    }

    /// The share-partitions holding records.
    pub(crate) fn partitions(&self) -> impl Iterator<Item = &TopicPartition> {
        self.held.keys()
    }

    /// When the next renewal falls due.
    pub(crate) fn next_renewal(&self) -> Option<Instant> {
        self.due.keys().next().map(|(at, _)| *at)
    }

    /// The records whose renewal is due at `now` (not due again until the renewal is answered);
    /// those held for
    /// `max_hold` or longer are not renewed (their lock runs out and the broker hands them to
    /// another member) and are counted in the second value.
    pub(crate) fn renewals_due(
        &mut self,
        now: Instant,
        max_hold: Duration,
    ) -> (Vec<(TopicPartition, i64)>, usize) {
        let mut out = Vec::new();
        let mut given_up = 0;
        while let Some(entry) = self.due.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (tp, ranges) = entry.remove();
            let Some(partition) = self.held.get(&tp) else {
                continue;
            };
            for (first, last) in ranges {
                for (&offset, held) in partition.range(first..=last) {
                    if now.saturating_duration_since(held.acquired_at) >= max_hold {
                        given_up += 1;
                        continue;
                    }
                    out.push((tp.clone(), offset));
                }
            }
        }
        (out, given_up)
    }

    /// The broker answered the renewal of `offsets` of `tp`, sent at `sent`: renewed for `lock`
    /// (`Some`), or refused (`None`: the locks run out as they were).
    pub(crate) fn renewed(
        &mut self,
        tp: &TopicPartition,
        offsets: &[i64],
        sent: Instant,
        lock: Option<Duration>,
    ) {
        let Some(partition) = self.held.get_mut(tp) else {
            return;
        };
        let mut again = Vec::new();
        for offset in offsets {
            if let Some(held) = partition.get_mut(offset) {
                if let Some(lock) = lock {
                    held.locked_until = sent + lock;
                    again.push(*offset);
                }
            }
        }
        if let Some(lock) = lock {
            self.schedule(tp, again, renew_at(sent, lock));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_renewal_schedule_keeps_runs_of_offsets_as_ranges() {
        assert_eq!(ranges([1, 2, 3, 5, 7, 8]), [(1, 3), (5, 5), (7, 8)]);
        assert_eq!(ranges([i64::MAX - 1, i64::MAX]), [(i64::MAX - 1, i64::MAX)]);
        assert!(ranges([]).is_empty());
        let mut ledger = Ledger::default();
        let t0 = Instant::now();
        let _ = ledger.acquire(
            &tp(),
            (0..10_000).map(|o| (o, 1)),
            t0,
            Duration::from_secs(30),
        );
        let scheduled: usize = ledger.due.values().map(|(_, r)| r.len()).sum();
        assert_eq!(scheduled, 1, "10,000 consecutive records: one range");
    }

    fn tp() -> TopicPartition {
        TopicPartition::new("t", 0)
    }

    #[tokio::test(start_paused = true)]
    async fn held_records_are_renewed_at_half_their_lock_until_held_for_max_hold() {
        let mut ledger = Ledger::default();
        let lock = Duration::from_secs(10);
        let t0 = Instant::now();
        assert!(ledger.acquire(&tp(), [(5, 1), (6, 2)], t0, lock).is_empty());
        assert_eq!(ledger.len(), 2);
        assert_eq!(ledger.next_renewal(), Some(t0 + Duration::from_secs(5)));
        let max_hold = Duration::from_secs(12);
        assert_eq!(ledger.renewals_due(t0, max_hold), (vec![], 0));
        let at = t0 + Duration::from_secs(5);
        let (due, given_up) = ledger.renewals_due(at, max_hold);
        assert_eq!((due, given_up), (vec![(tp(), 5), (tp(), 6)], 0));
        assert_eq!(ledger.next_renewal(), None, "renewing: nothing else due");
        ledger.renewed(&tp(), &[5, 6], at, Some(lock));
        assert_eq!(ledger.next_renewal(), Some(at + Duration::from_secs(5)));
        // Held 10 s by the next renewal: 12 s is passed before the one after.
        let (due, _) = ledger.renewals_due(t0 + Duration::from_secs(10), max_hold);
        assert_eq!(due.len(), 2);
        ledger.renewed(&tp(), &[5, 6], t0 + Duration::from_secs(10), Some(lock));
        let (due, given_up) = ledger.renewals_due(t0 + Duration::from_secs(15), max_hold);
        assert_eq!(
            (due.len(), given_up),
            (0, 2),
            "held past max.poll.interval.ms"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_verdict_after_the_lock_ran_out_is_late_and_one_in_time_is_sent() {
        let mut ledger = Ledger::default();
        let t0 = Instant::now();
        let _ = ledger.acquire(&tp(), [(1, 1), (2, 1), (3, 3)], t0, Duration::from_secs(4));
        assert!(matches!(
            ledger.finish(&tp(), 1, 1, t0 + Duration::from_secs(1)),
            Finished::InTime(h) if h.delivery_count == 1
        ));
        assert!(matches!(
            ledger.finish(&tp(), 2, 1, t0 + Duration::from_secs(4)),
            Finished::LockExpired(_)
        ));
        assert_eq!(ledger.finish(&tp(), 2, 1, t0), Finished::Unknown);
        assert_eq!(ledger.len(), 1);
        // A refused renewal leaves the lock as it was.
        ledger.renewed(&tp(), &[3], t0 + Duration::from_secs(2), None);
        assert!(matches!(
            ledger.finish(&tp(), 3, 3, t0 + Duration::from_secs(5)),
            Finished::LockExpired(h) if h.delivery_count == 3
        ));
        assert_eq!(ledger.len(), 0);
        // Acquired again while a handler of the first delivery still ran: the first one's verdict
        // is superseded, the second one's counts.
        let _ = ledger.acquire(&tp(), [(8, 1)], t0, Duration::from_secs(4));
        let again = ledger.acquire(
            &tp(),
            [(8, 2)],
            t0 + Duration::from_secs(5),
            Duration::from_secs(4),
        );
        assert_eq!(again, [(8, 1)], "the first delivery's lock ran out");
        assert_eq!(ledger.len(), 1);
        let later = t0 + Duration::from_secs(6);
        assert_eq!(ledger.finish(&tp(), 8, 1, later), Finished::Superseded);
        assert!(matches!(
            ledger.finish(&tp(), 8, 2, later),
            Finished::InTime(_)
        ));
        assert_eq!(ledger.partitions().count(), 0);
    }
}
