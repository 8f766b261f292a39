//! What the share consumer counts, for the application ([`ShareConsumer::stats`]) and its
//! telemetry: records acquired and the verdicts given them, renewals, locks that ran out before a
//! verdict, and delivery counts. Plain counters, cumulative from the start, read without a lock.
//!
//! [`ShareConsumer::stats`]: super::ShareConsumer::stats

use std::sync::atomic::{AtomicU64, Ordering};

use super::ack::Acknowledge;

/// Delivery counts are counted up to this one; higher ones count as this one.
pub const DELIVERY_COUNT_BUCKETS: usize = 10;

/// The counters, as the consumer keeps them.
#[derive(Debug, Default)]
pub(crate) struct ShareCounters {
    acquired: AtomicU64,
    accepted: AtomicU64,
    released: AtomicU64,
    rejected: AtomicU64,
    gaps: AtomicU64,
    renewed: AtomicU64,
    renewals_refused: AtomicU64,
    renewals_given_up: AtomicU64,
    lock_expired: AtomicU64,
    acknowledgements_failed: AtomicU64,
    /// Records acquired at delivery count `i + 1` (the last bucket: that or more).
    acquired_by_delivery: [AtomicU64; DELIVERY_COUNT_BUCKETS],
    /// Records whose release the broker took, at delivery count `i + 1`: with the group's
    /// delivery limit, what the broker archives instead of delivering again.
    released_by_delivery: [AtomicU64; DELIVERY_COUNT_BUCKETS],
}

fn bucket(delivery_count: i16) -> usize {
    usize::try_from(delivery_count.max(1) - 1)
        .unwrap_or(0)
        .min(DELIVERY_COUNT_BUCKETS - 1)
}

impl ShareCounters {
    pub(crate) fn acquired(&self, delivery_count: i16) {
        self.acquired.fetch_add(1, Ordering::Relaxed);
        self.acquired_by_delivery[bucket(delivery_count)].fetch_add(1, Ordering::Relaxed);
    }

    /// `n` verdicts of kind `ack` the broker took.
    pub(crate) fn acknowledged(&self, ack: Acknowledge, n: u64) {
        let counter = match ack {
            Acknowledge::Accept => &self.accepted,
            Acknowledge::Release => &self.released,
            Acknowledge::Reject => &self.rejected,
            Acknowledge::Gap => &self.gaps,
            Acknowledge::Renew => &self.renewed,
        };
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn released_at(&self, delivery_count: i16) {
        self.released_by_delivery[bucket(delivery_count)].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn renewals_refused(&self, n: u64) {
        self.renewals_refused.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn renewals_given_up(&self, n: u64) {
        self.renewals_given_up.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn lock_expired(&self, n: u64) {
        self.lock_expired.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn acknowledgements_failed(&self, n: u64) {
        self.acknowledgements_failed.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> ShareStats {
        let read = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ShareStats {
            acquired: read(&self.acquired),
            accepted: read(&self.accepted),
            released: read(&self.released),
            rejected: read(&self.rejected),
            gaps: read(&self.gaps),
            renewed: read(&self.renewed),
            renewals_refused: read(&self.renewals_refused),
            renewals_given_up: read(&self.renewals_given_up),
            lock_expired: read(&self.lock_expired),
            acknowledgements_failed: read(&self.acknowledgements_failed),
            acquired_by_delivery: self.acquired_by_delivery.each_ref().map(read),
            released_by_delivery: self.released_by_delivery.each_ref().map(read),
        }
    }
}

/// The share consumer's counters, cumulative since it was made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShareStats {
    /// Records this member acquired (handed to it under a lock).
    pub acquired: u64,
    /// Records accepted (processed), as the broker took the verdicts.
    pub accepted: u64,
    /// Records released (to be delivered again), as the broker took the verdicts.
    pub released: u64,
    /// Records rejected (poison: archived), as the broker took the verdicts.
    pub rejected: u64,
    /// Acquired offsets without a record (transaction markers, compacted records) given back.
    pub gaps: u64,
    /// Lock renewals the broker took.
    pub renewed: u64,
    /// Lock renewals the broker refused (the lock had run out, renewals are off for the group,
    /// or the broker predates them).
    pub renewals_refused: u64,
    /// Records whose lock was left to run out because they were held `max.poll.interval.ms`.
    pub renewals_given_up: u64,
    /// Verdicts that came after the record's lock ran out (so the broker has handed the record
    /// to another member), or that the broker refused for it: the record is delivered again.
    pub lock_expired: u64,
    /// Verdicts lost otherwise (the share-partition's leader moved, the session ended under
    /// them): their records are delivered again when their locks run out.
    pub acknowledgements_failed: u64,
    /// Records acquired at delivery count 1, 2, …; the last bucket counts that one or more.
    pub acquired_by_delivery: [u64; DELIVERY_COUNT_BUCKETS],
    /// Releases the broker took, by the delivery count of the record released (1, 2, …; the last
    /// bucket counts that one or more); those at the group's delivery limit were archived.
    pub released_by_delivery: [u64; DELIVERY_COUNT_BUCKETS],
}
