//! Per-partition fetch error state, so that one partition's error stays that partition's and the
//! rest of its broker's partitions keep being fetched:
//!
//! - **Back-off**: a partition whose answer carried a retriable error, whose leader is unknown, or
//!   whose batch could not be read is left out of requests for `retry.backoff.ms`, doubling with
//!   each failure in a row up to `retry.backoff.max.ms` (Java's exponential retry back-off,
//!   KIP-580, per partition); an answer read without error ends it.
//! - **Corrupt answers**: a batch that fails its CRC (or cannot be decoded), or a code Fetch cannot
//!   retry, at the same offset in [`CORRUPT_FETCHES`] fresh fetches in a row is fatal; fewer is
//!   taken for a byte flipped in flight, and the partition is fetched again from the same offset.
//! - **Unavailable topics**: a topic a fetch said unknown (UNKNOWN_TOPIC_ID,
//!   UNKNOWN_TOPIC_OR_PARTITION) is a suspect until the next metadata refresh. A refresh that does
//!   not list an assigned topic makes it unavailable: reported once, not fetched, looked up
//!   again at the metadata refresh interval, available again once a refresh lists it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use tokio::time::Instant;

use crate::TopicPartition;

/// Fresh fetches in a row without a readable answer at one offset before it is fatal.
pub(crate) const CORRUPT_FETCHES: u32 = 3;

#[derive(Debug, Clone, Copy)]
struct Backoff {
    until: Instant,
    /// The back-off after the next failure in a row.
    next: Duration,
}

#[derive(Debug, Clone, Copy)]
struct CorruptStreak {
    offset: i64,
    fetches: u32,
}

/// What a metadata refresh changed for the assigned topics.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Refreshed {
    /// Newly unavailable, with what the broker said of them.
    pub gone: Vec<(String, ErrorCode)>,
    /// Unavailable before, listed again.
    pub back: Vec<String>,
}

/// The fetcher's per-partition error state (see the module docs).
#[derive(Debug)]
pub(crate) struct PartitionErrors {
    first: Duration,
    max: Duration,
    backoff: HashMap<TopicPartition, Backoff>,
    corrupt: HashMap<TopicPartition, CorruptStreak>,
    /// Topics a fetch said unknown, with the code; the next refresh decides.
    suspect: BTreeMap<String, ErrorCode>,
    /// Topics gone from fresh metadata, with when to look them up again.
    unavailable: BTreeMap<String, Instant>,
}

impl PartitionErrors {
    /// Back-offs from `first` (`retry.backoff.ms`), doubling up to `max` (`retry.backoff.max.ms`).
    pub(crate) fn new(first: Duration, max: Duration) -> Self {
        PartitionErrors {
            first,
            max: max.max(first),
            backoff: HashMap::new(),
            corrupt: HashMap::new(),
            suspect: BTreeMap::new(),
            unavailable: BTreeMap::new(),
        }
    }

    /// The partition failed: it is not fetched for the returned time.
    pub(crate) fn back_off(&mut self, tp: &TopicPartition, now: Instant) -> Duration {
        let wait = self.backoff.get(tp).map_or(self.first, |b| b.next);
        self.backoff.insert(
            tp.clone(),
            Backoff {
                until: now + wait,
                next: wait.saturating_mul(2).min(self.max),
            },
        );
        wait
    }

    /// Whether the partition waits out a back-off at `now`.
    pub(crate) fn is_backed_off(&self, tp: &TopicPartition, now: Instant) -> bool {
        self.backoff.get(tp).is_some_and(|b| now < b.until)
    }

    /// When the first running back-off ends.
    pub(crate) fn next_expiry(&self, now: Instant) -> Option<Instant> {
        self.backoff
            .values()
            .map(|b| b.until)
            .filter(|until| *until > now)
            .min()
    }

    /// The partition's answer was read without error: its back-off and corrupt streak end.
    pub(crate) fn succeeded(&mut self, tp: &TopicPartition) {
        self.backoff.remove(tp);
        self.corrupt.remove(tp);
    }

    /// No readable answer at `offset` (a corrupt batch, a code that cannot be retried); returns
    /// how many fresh fetches in a row failed there (a failure at another offset starts a new
    /// streak).
    pub(crate) fn corrupt(&mut self, tp: &TopicPartition, offset: i64) -> u32 {
        let streak = self
            .corrupt
            .entry(tp.clone())
            .or_insert(CorruptStreak { offset, fetches: 0 });
        if streak.offset != offset {
            *streak = CorruptStreak { offset, fetches: 0 };
        }
        streak.fetches += 1;
        streak.fetches
    }

    /// A fetch said the topic is unknown (`code`): the next refresh decides whether it is gone.
    pub(crate) fn topic_unknown(&mut self, topic: &str, code: ErrorCode) {
        self.suspect.entry(topic.to_owned()).or_insert(code);
    }

    /// Whether the topic is gone from fresh metadata (its partitions are not fetched).
    pub(crate) fn is_unavailable(&self, topic: &str) -> bool {
        self.unavailable.contains_key(topic)
    }

    /// Whether an unavailable topic is due to be looked up again.
    pub(crate) fn recheck_due(&self, now: Instant) -> bool {
        self.unavailable.values().any(|at| now >= *at)
    }

    /// When the first unavailable topic is due to be looked up again.
    pub(crate) fn next_recheck(&self) -> Option<Instant> {
        self.unavailable.values().min().copied()
    }

    /// A metadata refresh of `topics` answered; `listed` says whether it lists a topic. Topics it
    /// does not list become unavailable (looked up again after `recheck`); unavailable ones it
    /// lists are back.
    pub(crate) fn refreshed<'a>(
        &mut self,
        topics: impl IntoIterator<Item = &'a String>,
        listed: impl Fn(&str) -> bool,
        now: Instant,
        recheck: Duration,
    ) -> Refreshed {
        let mut out = Refreshed::default();
        for topic in topics {
            if listed(topic) {
                self.suspect.remove(topic);
                if self.unavailable.remove(topic).is_some() {
                    out.back.push(topic.clone());
                }
            } else if let Some(at) = self.unavailable.get_mut(topic) {
                *at = now + recheck;
            } else {
                let code = self
                    .suspect
                    .remove(topic)
                    .unwrap_or(ErrorCode::UnknownTopicOrPartition);
                self.unavailable.insert(topic.clone(), now + recheck);
                out.gone.push((topic.clone(), code));
            }
        }
        out
    }

    /// Whether there is no state at all (nothing to prune).
    pub(crate) fn is_empty(&self) -> bool {
        self.backoff.is_empty()
            && self.corrupt.is_empty()
            && self.suspect.is_empty()
            && self.unavailable.is_empty()
    }

    /// Forgets partitions no longer assigned, and topics none of whose partitions are.
    pub(crate) fn retain(&mut self, assigned: &BTreeSet<TopicPartition>) {
        let topics: BTreeSet<&str> = assigned.iter().map(|tp| tp.topic.as_str()).collect();
        self.backoff.retain(|tp, _| assigned.contains(tp));
        self.corrupt.retain(|tp, _| assigned.contains(tp));
        self.suspect.retain(|t, _| topics.contains(t.as_str()));
        self.unavailable.retain(|t, _| topics.contains(t.as_str()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    #[test]
    fn back_off_doubles_to_the_max_per_partition_and_a_success_resets_it() {
        let mut e = PartitionErrors::new(100 * MS, 1000 * MS);
        let now = Instant::now();
        let waits: Vec<Duration> = (0..6).map(|_| e.back_off(&tp(0), now)).collect();
        assert_eq!(
            waits,
            [100, 200, 400, 800, 1000, 1000].map(|ms| ms * MS),
            "doubling up to retry.backoff.max.ms"
        );
        assert!(e.is_backed_off(&tp(0), now + 999 * MS));
        assert!(!e.is_backed_off(&tp(0), now + 1000 * MS));
        assert!(!e.is_backed_off(&tp(1), now), "another partition is not");
        assert_eq!(e.next_expiry(now), Some(now + 1000 * MS));

        e.succeeded(&tp(0));
        assert!(!e.is_backed_off(&tp(0), now));
        assert_eq!(e.back_off(&tp(0), now), 100 * MS, "from the start again");
    }

    #[test]
    fn corrupt_streaks_count_fresh_failures_at_one_offset() {
        let mut e = PartitionErrors::new(100 * MS, 1000 * MS);
        assert_eq!(e.corrupt(&tp(0), 5), 1);
        assert_eq!(e.corrupt(&tp(0), 5), 2);
        assert_eq!(e.corrupt(&tp(1), 5), 1, "per partition");
        assert_eq!(e.corrupt(&tp(0), 9), 1, "another offset starts over");
        assert_eq!(e.corrupt(&tp(0), 9), 2);
        e.succeeded(&tp(0));
        assert_eq!(
            e.corrupt(&tp(0), 9),
            1,
            "a good read in between starts over"
        );
    }

    #[test]
    fn a_topic_missing_from_fresh_metadata_is_unavailable_once_until_listed_again() {
        let mut e = PartitionErrors::new(100 * MS, 1000 * MS);
        let now = Instant::now();
        let recheck = Duration::from_secs(300);
        let (gone, kept) = ("gone".to_string(), "kept".to_string());
        e.topic_unknown(&gone, ErrorCode::UnknownTopicId);
        // Metadata still lists it (the broker has not caught up): only a suspect.
        let r = e.refreshed([&gone, &kept], |_| true, now, recheck);
        assert_eq!(r, Refreshed::default());
        assert!(!e.is_unavailable(&gone));

        e.topic_unknown(&gone, ErrorCode::UnknownTopicId);
        let listed = |t: &str| t == "kept";
        let r = e.refreshed([&gone, &kept], listed, now, recheck);
        assert_eq!(r.gone, [(gone.clone(), ErrorCode::UnknownTopicId)]);
        assert!(e.is_unavailable(&gone) && !e.is_unavailable(&kept));
        assert!(!e.recheck_due(now + recheck - MS));
        assert!(e.recheck_due(now + recheck));

        let later = now + recheck;
        let r = e.refreshed([&gone, &kept], listed, later, recheck);
        assert_eq!(r, Refreshed::default(), "said once");
        assert!(!e.recheck_due(later + recheck - MS), "next look-up");

        let r = e.refreshed([&gone, &kept], |_| true, later, recheck);
        assert_eq!(r.back, vec![gone.clone()]);
        assert!(!e.is_unavailable(&gone));

        // Gone from metadata without a fetch error first: the metadata's own code.
        let r = e.refreshed([&gone], |_| false, later, recheck);
        assert_eq!(r.gone, [(gone, ErrorCode::UnknownTopicOrPartition)]);
    }

    #[test]
    fn state_of_partitions_no_longer_assigned_is_dropped() {
        let mut e = PartitionErrors::new(100 * MS, 1000 * MS);
        let now = Instant::now();
        e.back_off(&tp(0), now);
        e.back_off(&tp(1), now);
        e.corrupt(&tp(1), 3);
        e.refreshed([&"t".to_string()], |_| false, now, Duration::from_secs(1));
        e.retain(&BTreeSet::from([tp(0)]));
        assert!(e.is_backed_off(&tp(0), now) && !e.is_backed_off(&tp(1), now));
        assert!(e.is_unavailable("t"));
        e.retain(&BTreeSet::new());
        assert!(e.is_empty());
    }
}
