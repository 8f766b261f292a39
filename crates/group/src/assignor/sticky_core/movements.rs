//! Java's `AbstractStickyAssignor.PartitionMovements`: the partitions the general builder has
//! moved so far, by topic and (from, to) member pair, so that a later move in the opposite
//! direction between the same two members takes back a partition that already moved instead of
//! moving a second one (which keeps the result sticky).
//!
//! Which partition is taken back is the first of a Java `HashSet<TopicPartition>`; we keep the
//! set's capacity and insertion order to pick the same one.

use std::collections::BTreeMap;

use super::Tp;
use crate::assignor::java;

/// The iteration order of a Java `HashSet<TopicPartition>` built with `new HashSet<>()`.
#[derive(Debug)]
struct JavaHashSet<'a> {
    capacity: usize,
    next_seq: u64,
    items: Vec<(Tp<'a>, u64)>,
}

impl<'a> JavaHashSet<'a> {
    fn new() -> Self {
        JavaHashSet {
            capacity: java::DEFAULT_CAPACITY,
            next_seq: 0,
            items: Vec::new(),
        }
    }

    fn insert(&mut self, tp: Tp<'a>) {
        if self.items.iter().any(|(x, _)| *x == tp) {
            return;
        }
        self.items.push((tp, self.next_seq));
        self.next_seq += 1;
        self.capacity = java::grown_capacity(self.capacity, self.items.len());
    }

    fn remove(&mut self, tp: Tp<'a>) {
        self.items.retain(|(x, _)| *x != tp);
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// What `iterator().next()` returns.
    fn first(&self) -> Option<Tp<'a>> {
        self.items
            .iter()
            .min_by_key(|((t, p), seq)| {
                (
                    java::bucket(java::topic_partition_hash(t, *p), self.capacity),
                    *seq,
                )
            })
            .map(|(tp, _)| *tp)
    }
}

type Pair<'a> = (&'a str, &'a str);

#[derive(Debug, Default)]
pub(super) struct PartitionMovements<'a> {
    by_topic: BTreeMap<&'a str, BTreeMap<Pair<'a>, JavaHashSet<'a>>>,
    /// Each moved partition's (first source, current destination).
    moves: BTreeMap<Tp<'a>, Pair<'a>>,
}

impl<'a> PartitionMovements<'a> {
    fn remove_record(&mut self, tp: Tp<'a>) -> Option<Pair<'a>> {
        let pair = self.moves.remove(&tp)?;
        if let Some(topic) = self.by_topic.get_mut(tp.0) {
            if let Some(set) = topic.get_mut(&pair) {
                set.remove(tp);
                if set.is_empty() {
                    topic.remove(&pair);
                }
            }
            if topic.is_empty() {
                self.by_topic.remove(tp.0);
            }
        }
        Some(pair)
    }

    fn add_record(&mut self, tp: Tp<'a>, pair: Pair<'a>) {
        self.moves.insert(tp, pair);
        self.by_topic
            .entry(tp.0)
            .or_default()
            .entry(pair)
            .or_insert_with(JavaHashSet::new)
            .insert(tp);
    }

    /// Records that `tp` moves from `old` to `new`; a partition moving back to where it started
    /// is no movement at all.
    pub(super) fn move_partition(&mut self, tp: Tp<'a>, old: &'a str, new: &'a str) {
        match self.remove_record(tp) {
            Some((source, _)) => {
                if source != new {
                    self.add_record(tp, (source, new));
                }
            }
            None => self.add_record(tp, (old, new)),
        }
    }

    /// The partition to move when `tp` should go from `old` to `new`: if a partition of the
    /// same topic already moved from `new` to (where `tp` started), that one goes back instead.
    pub(super) fn partition_to_move(&self, tp: Tp<'a>, old: &'a str, new: &'a str) -> Tp<'a> {
        let Some(topic) = self.by_topic.get(tp.0) else {
            return tp;
        };
        let old = self.moves.get(&tp).map_or(old, |&(source, _)| source);
        topic
            .get(&(new, old))
            .and_then(JavaHashSet::first)
            .unwrap_or(tp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_back_cancels() {
        let mut m = PartitionMovements::default();
        m.move_partition(("t", 0), "a", "b");
        assert_eq!(m.moves.get(&("t", 0)), Some(&("a", "b")));
        m.move_partition(("t", 0), "b", "c");
        assert_eq!(m.moves.get(&("t", 0)), Some(&("a", "c")));
        m.move_partition(("t", 0), "c", "a");
        assert!(m.moves.is_empty());
        assert!(m.by_topic.is_empty());
    }

    #[test]
    fn reverse_move_takes_back_a_moved_partition() {
        let mut m = PartitionMovements::default();
        m.move_partition(("t", 3), "a", "b");
        // Moving t-5 from b to a: t-3 went a -> b already, so it goes back instead.
        assert_eq!(m.partition_to_move(("t", 5), "b", "a"), ("t", 3));
        assert_eq!(m.partition_to_move(("u", 5), "b", "a"), ("u", 5));
        assert_eq!(m.partition_to_move(("t", 5), "b", "c"), ("t", 5));
    }

    #[test]
    fn hash_set_first_follows_java_buckets() {
        let mut s = JavaHashSet::new();
        // TopicPartition("t", p).hashCode() = 31 * (31 + p) + 116: p = 0 -> 1077 (bucket 5),
        // p = 1 -> 1108 (bucket 4 of 16).
        s.insert(("t", 0));
        s.insert(("t", 1));
        assert_eq!(s.first(), Some(("t", 1)));
        s.remove(("t", 1));
        assert_eq!(s.first(), Some(("t", 0)));
    }
}
