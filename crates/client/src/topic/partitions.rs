//! What the leader's assignor is told about the topics: each topic's partitions and, for each
//! partition, the racks of the brokers holding its replicas. Java's assignors get the same from
//! the leader's metadata (`Cluster.partitionsForTopic`, each `PartitionInfo.replicas()` with its
//! `Node.rack()`); the replica racks are what rack-aware placement (KIP-881) matches members'
//! `client.rack` against.

use std::collections::{BTreeMap, BTreeSet};

/// The topics to assign, as the leader's metadata describes them: every existing topic some
/// member subscribes to, with the racks of each partition's replicas, partition 0 first.
///
/// A replica whose broker has no `broker.rack`, or whose broker the metadata does not list (an
/// offline broker), adds no rack, as in Java. Without any racks (e.g. [`from_counts`]) the
/// assignors place partitions exactly as they do without KIP-881.
///
/// [`from_counts`]: PartitionsPerTopic::from_counts
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionsPerTopic {
    topics: BTreeMap<String, Vec<BTreeSet<String>>>,
}

impl PartitionsPerTopic {
    /// No topics.
    pub fn new() -> Self {
        Self::default()
    }

    /// Topics with their partition counts and no replica racks (a count below 1: no partitions).
    pub fn from_counts<'a>(counts: impl IntoIterator<Item = (&'a String, &'a i32)>) -> Self {
        let mut out = Self::new();
        for (topic, &n) in counts {
            let n = usize::try_from(n).unwrap_or(0);
            out.insert(topic.clone(), vec![BTreeSet::new(); n]);
        }
        out
    }

    /// Adds (or replaces) `topic`, each partition's replica racks in partition order.
    pub fn insert(&mut self, topic: impl Into<String>, replica_racks: Vec<BTreeSet<String>>) {
        self.topics.insert(topic.into(), replica_racks);
    }

    /// Whether there is no topic.
    pub fn is_empty(&self) -> bool {
        self.topics.is_empty()
    }

    /// The partition count of `topic`, if it is one of the topics.
    pub fn count(&self, topic: &str) -> Option<i32> {
        self.topics.get(topic).map(|p| len_i32(p.len()))
    }

    /// Every topic's partition count.
    pub fn counts(&self) -> BTreeMap<String, i32> {
        self.iter()
            .map(|(t, p)| (t.to_owned(), len_i32(p.len())))
            .collect()
    }

    /// The racks of the replicas of `partition` of `topic` (empty if it has none or does not
    /// exist).
    pub fn replica_racks(&self, topic: &str, partition: i32) -> &BTreeSet<String> {
        static NONE: BTreeSet<String> = BTreeSet::new();
        usize::try_from(partition)
            .ok()
            .and_then(|p| self.topics.get(topic)?.get(p))
            .unwrap_or(&NONE)
    }

    /// The topics, sorted by name, each with its partitions' replica racks.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[BTreeSet<String>])> {
        self.topics.iter().map(|(t, p)| (t.as_str(), p.as_slice()))
    }

    /// The same topics and partition counts with no racks: what a leader that does not use
    /// replica racks would compare to tell whether the topics changed.
    pub fn without_racks(&self) -> Self {
        Self::from_counts(&self.counts())
    }
}

impl From<BTreeMap<String, i32>> for PartitionsPerTopic {
    fn from(counts: BTreeMap<String, i32>) -> Self {
        Self::from_counts(&counts)
    }
}

fn len_i32(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_racks_and_lookups() {
        let counts: BTreeMap<String, i32> = [("a".into(), 2), ("b".into(), 0)].into();
        let mut p = PartitionsPerTopic::from(counts.clone());
        assert_eq!(p.counts(), counts);
        assert_eq!(p.count("a"), Some(2));
        assert_eq!(p.count("c"), None);
        assert!(p.replica_racks("a", 1).is_empty());
        p.insert("a", vec![["r1".to_owned()].into(), BTreeSet::new()]);
        assert_eq!(p.replica_racks("a", 0), &BTreeSet::from(["r1".to_owned()]));
        assert!(p.replica_racks("a", 2).is_empty());
        assert!(p.replica_racks("a", -1).is_empty());
        assert_eq!(p.without_racks(), PartitionsPerTopic::from(counts));
    }
}
