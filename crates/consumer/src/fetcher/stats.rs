//! What the fetcher fetched from each broker, and which partitions a follower serves now
//! (KIP-392): the figures that show whether `client.rack` keeps fetching inside the consumer's
//! own rack, read with [`Consumer::fetch_stats`](crate::Consumer::fetch_stats) and sent in the
//! telemetry snapshots.
//!
//! Counted once per Fetch answer (one short lock, never held across an `.await`): the record
//! data bytes of every partition's answer (whatever became of them: a stale answer's bytes were
//! fetched all the same) and the records read from them at or after the position.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::TopicPartition;

/// Fetch figures since the consumer was created.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct FetchStats {
    /// Each broker fetched from, or serving a partition as a follower now, by node id.
    pub brokers: Vec<BrokerFetchStats>,
    /// The partitions fetched from a follower now (the replica their leader named), with its
    /// node id.
    pub follower_partitions: Vec<(TopicPartition, i32)>,
}

impl FetchStats {
    /// The figures of broker `node_id`, if it was fetched from.
    pub fn broker(&self, node_id: i32) -> Option<&BrokerFetchStats> {
        self.brokers.iter().find(|b| b.node_id == node_id)
    }

    /// Record bytes fetched from every broker.
    pub fn record_bytes(&self) -> u64 {
        self.brokers.iter().map(|b| b.record_bytes).sum()
    }
}

/// What was fetched from one broker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BrokerFetchStats {
    /// The broker's node id.
    pub node_id: i32,
    /// Its `broker.rack`, as metadata last said when it answered.
    pub rack: Option<String>,
    /// Bytes of record data its Fetch answers carried (the `records` of each partition, as on
    /// the wire: compressed batches count at their compressed size).
    pub record_bytes: u64,
    /// Records read from them (at or after each partition's position; control records and
    /// aborted transactions' records left out). Like the bytes, what a full engine buffer
    /// handed back and was fetched again counts each time it was fetched.
    pub records: u64,
    /// Partitions it serves now as a follower.
    pub follower_partitions: usize,
}

/// The fetcher's counters, shared with the consumer's handle.
#[derive(Debug, Default)]
pub(crate) struct FetchCounters {
    inner: Mutex<Counters>,
}

#[derive(Debug, Default)]
struct Counters {
    brokers: BTreeMap<i32, BrokerFetchStats>,
    followers: BTreeMap<TopicPartition, i32>,
}

impl FetchCounters {
    /// One answer of `node` (in `rack`) carried `record_bytes` of record data with `records`
    /// records read from them.
    pub(crate) fn fetched(&self, node: i32, rack: Option<&str>, record_bytes: u64, records: u64) {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let broker = inner
            .brokers
            .entry(node)
            .or_insert_with(|| BrokerFetchStats {
                node_id: node,
                ..BrokerFetchStats::default()
            });
        if let Some(rack) = rack {
            if broker.rack.as_deref() != Some(rack) {
                broker.rack = Some(rack.to_owned());
            }
        }
        broker.record_bytes += record_bytes;
        broker.records += records;
    }

    /// The partitions fetched from a follower now, with its node id.
    pub(crate) fn set_followers(&self, followers: BTreeMap<TopicPartition, i32>) {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .followers = followers;
    }

    /// The figures now.
    pub(crate) fn snapshot(&self) -> FetchStats {
        let inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut brokers = inner.brokers.clone();
        for node in inner.followers.values() {
            brokers
                .entry(*node)
                .or_insert_with(|| BrokerFetchStats {
                    node_id: *node,
                    ..BrokerFetchStats::default()
                })
                .follower_partitions += 1;
        }
        FetchStats {
            brokers: brokers.into_values().collect(),
            follower_partitions: inner
                .followers
                .iter()
                .map(|(tp, node)| (tp.clone(), *node))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_broker_with_its_rack_and_followers_serving_now() {
        let c = FetchCounters::default();
        c.fetched(1, Some("r1"), 100, 2);
        c.fetched(2, Some("r2"), 50, 1);
        c.fetched(1, Some("r1"), 10, 1);
        c.fetched(2, None, 5, 1);
        c.set_followers(BTreeMap::from([
            (TopicPartition::new("t", 0), 2),
            (TopicPartition::new("t", 1), 3),
        ]));
        let s = c.snapshot();
        assert_eq!(s.record_bytes(), 165);
        let one = s.broker(1).expect("1");
        assert_eq!(
            (one.rack.as_deref(), one.record_bytes, one.records),
            (Some("r1"), 110, 3)
        );
        assert_eq!(one.follower_partitions, 0);
        let two = s.broker(2).expect("2");
        assert_eq!(
            (two.rack.as_deref(), two.record_bytes, two.records),
            (Some("r2"), 55, 2)
        );
        assert_eq!(two.follower_partitions, 1);
        let three = s
            .broker(3)
            .expect("3 serves a partition, nothing fetched yet");
        assert_eq!((three.record_bytes, three.follower_partitions), (0, 1));
        assert_eq!(s.follower_partitions.len(), 2);
        c.set_followers(BTreeMap::new());
        assert!(c.snapshot().follower_partitions.is_empty());
        assert!(c.snapshot().broker(3).is_none());
    }
}
