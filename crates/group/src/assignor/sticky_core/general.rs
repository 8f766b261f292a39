//! The general path of Java's `AbstractStickyAssignor` (`GeneralAssignmentBuilder`, the original
//! KIP-54 algorithm), taken when members subscribe to different topics.
//!
//! 1. Keep every valid previous ownership; drop partitions of topics a member left (and,
//!    rack-aware, partitions off the member's rack).
//! 2. Give each unassigned partition (topics with the fewest potential members first) to the
//!    eligible member with the fewest partitions; rack-aware, first to the one with the fewest
//!    among those in the partition's racks, if any.
//! 3. Leave out what cannot move (topics with one potential member, members that already have
//!    every partition they could get and nothing movable), then move partitions until the
//!    assignment is balanced: a member holding 2+ more than a partition's previous owner (of an
//!    older generation) gives it back to that owner, otherwise to the least-loaded eligible
//!    member. "Balanced" means min and max differ by at most one, or no member could take a
//!    partition from a member with 2+ more.
//! 4. Keep the moved result only if its balance score (sum of count differences over member
//!    pairs) is lower than before the moves, unless this is the first assignment.

use std::collections::{BTreeMap, BTreeSet};

use mooring_wire::consumer_protocol::NO_GENERATION;

use super::movements::PartitionMovements;
use super::{java, Group, StickyAssignment, Tp};

pub(super) fn build<'a>(
    group: &Group<'a>,
    owned: BTreeMap<&'a str, Vec<Tp<'a>>>,
) -> StickyAssignment<'a> {
    let mut b = Builder::new(group, owned);
    let prev = b.previous_assignment();
    let assigned = b.keep_owned();
    let unassigned: Vec<Tp<'a>> = b
        .sorted_all_partitions
        .iter()
        .copied()
        .filter(|tp| !assigned.contains(tp))
        .collect();
    b.balance(&prev, unassigned);
    StickyAssignment {
        assignment: b.current,
        transferring: None,
    }
}

struct Builder<'g, 'a> {
    group: &'g Group<'a>,
    /// Topic → the members subscribed to it (Java's `topic2AllPotentialConsumers`).
    potential_members: BTreeMap<&'a str, Vec<&'a str>>,
    /// Member → the assignable topics it subscribes to.
    potential_topics: BTreeMap<&'a str, BTreeSet<&'a str>>,
    /// Member → its partitions (Java's `currentAssignment`).
    current: BTreeMap<&'a str, Vec<Tp<'a>>>,
    /// Partition → the member holding it.
    holder: BTreeMap<Tp<'a>, &'a str>,
    /// All partitions, topics with fewer potential members first, then by topic and partition.
    sorted_all_partitions: Vec<Tp<'a>>,
    /// Members ordered by (partition count, member id) (Java's `sortedCurrentSubscriptions`):
    /// (count, rank of the member id in Java's string order).
    by_load: BTreeSet<(usize, usize)>,
    rank: BTreeMap<&'a str, usize>,
    by_rank: Vec<&'a str>,
    revocation_required: bool,
    movements: PartitionMovements<'a>,
}

impl<'g, 'a> Builder<'g, 'a> {
    fn new(group: &'g Group<'a>, owned: BTreeMap<&'a str, Vec<Tp<'a>>>) -> Self {
        let mut potential_members: BTreeMap<&'a str, Vec<&'a str>> =
            group.counts.keys().map(|&t| (t, Vec::new())).collect();
        let mut potential_topics = BTreeMap::new();
        let mut current = owned;
        for &id in &group.order {
            let Some(member) = group.members.get(id) else {
                continue;
            };
            let mut topics = BTreeSet::new();
            for &t in &member.topics {
                if let Some(list) = potential_members.get_mut(t) {
                    topics.insert(t);
                    list.push(id);
                }
            }
            potential_topics.insert(id, topics);
            current.entry(id).or_default();
        }
        let holder = current
            .iter()
            .flat_map(|(&m, list)| list.iter().map(move |&tp| (tp, m)))
            .collect();

        let mut topics: Vec<&'a str> = potential_members.keys().copied().collect();
        topics.sort_by(|a, b| {
            let (na, nb) = (potential_members[a].len(), potential_members[b].len());
            na.cmp(&nb).then_with(|| java::cmp_str(a, b))
        });
        let sorted_all_partitions = group.partitions_of(&topics);

        let mut by_rank: Vec<&'a str> = current.keys().copied().collect();
        by_rank.sort_by(|a, b| java::cmp_str(a, b));
        let rank = by_rank.iter().enumerate().map(|(i, &m)| (m, i)).collect();

        Builder {
            group,
            potential_members,
            potential_topics,
            current,
            holder,
            sorted_all_partitions,
            by_load: BTreeSet::new(),
            rank,
            by_rank,
            revocation_required: false,
            movements: PartitionMovements::default(),
        }
    }

    fn load(&self, member: &str) -> usize {
        self.current.get(member).map_or(0, Vec::len)
    }

    fn load_key(&self, member: &str) -> Option<(usize, usize)> {
        Some((self.load(member), *self.rank.get(member)?))
    }

    fn members_by_load(&self) -> impl Iterator<Item = &'a str> + '_ {
        self.by_load.iter().map(|&(_, r)| self.by_rank[r])
    }

    fn subscribes(&self, member: &str, topic: &str) -> bool {
        self.potential_topics
            .get(member)
            .is_some_and(|t| t.contains(topic))
    }

    fn potential_count(&self, topic: &str) -> usize {
        self.potential_members.get(topic).map_or(0, Vec::len)
    }

    /// Java's `prepopulateCurrentAssignments`: for each partition, the owner with the highest
    /// generation below the group's highest (the owner before the latest one), which the
    /// balancing prefers to give a partition back to.
    fn previous_assignment(&self) -> BTreeMap<Tp<'a>, (&'a str, i32)> {
        let mut prev: BTreeMap<Tp<'a>, (&'a str, i32)> = BTreeMap::new();
        let max = self.group.max_generation;
        for &id in &self.group.order {
            let Some(data) = self.group.data.get(id) else {
                continue;
            };
            let generation = match data.generation {
                Some(g) if g < max => g,
                None if max > NO_GENERATION => NO_GENERATION,
                _ => continue,
            };
            for (topic, partition) in &data.partitions {
                let Some(tp) = self.group.tp(topic, *partition) else {
                    continue;
                };
                match prev.get(&tp) {
                    Some(&(_, g)) if generation <= g => {}
                    _ => {
                        prev.insert(tp, (id, generation));
                    }
                }
            }
        }
        prev
    }

    /// Java's `assignOwnedPartitions` of the general builder: drop what a member no longer
    /// subscribes to; return the partitions that stay where they are.
    fn keep_owned(&mut self) -> BTreeSet<Tp<'a>> {
        let mut kept = BTreeSet::new();
        let members: Vec<&'a str> = self.current.keys().copied().collect();
        for member in members {
            let list = self.current.remove(member).unwrap_or_default();
            let mut keep = Vec::with_capacity(list.len());
            for tp in list {
                if self.subscribes(member, tp.0) && !self.group.racks.mismatch(member, tp) {
                    keep.push(tp);
                    kept.insert(tp);
                } else {
                    // Not subscribed any more, or off the member's rack. The holder entry stays
                    // until the partition is reassigned, as in Java.
                    self.revocation_required = true;
                }
            }
            self.current.insert(member, keep);
        }
        kept
    }

    fn balance(&mut self, prev: &BTreeMap<Tp<'a>, (&'a str, i32)>, mut unassigned: Vec<Tp<'a>>) {
        let keys: Vec<(usize, usize)> = self
            .current
            .keys()
            .filter_map(|m| self.load_key(m))
            .collect();
        self.by_load.extend(keys);
        let initializing = self.by_load.last().is_none_or(|&(count, _)| count == 0);

        // Rack-aware, first to the least-loaded member in one of the partition's racks; then
        // what is left to the least-loaded member.
        let mut left = unassigned.clone();
        if self.group.racks.is_rack_aware() {
            left.retain(|&tp| !self.assign_to_least_loaded(tp, true));
        }
        for &tp in &left {
            self.assign_to_least_loaded(tp, false);
        }

        // Only partitions of topics with 2+ potential members, and members that can gain or
        // give something, take part in the balancing.
        let fixed_topics: BTreeSet<&'a str> = self
            .potential_members
            .iter()
            .filter(|(_, m)| m.len() < 2)
            .map(|(&t, _)| t)
            .collect();
        self.sorted_all_partitions
            .retain(|tp| !fixed_topics.contains(tp.0));
        unassigned.retain(|tp| !fixed_topics.contains(tp.0));

        let mut fixed_members: BTreeMap<&'a str, Vec<Tp<'a>>> = BTreeMap::new();
        let members: Vec<&'a str> = self.potential_topics.keys().copied().collect();
        for member in members {
            if !self.can_member_participate(member) {
                if let Some(key) = self.load_key(member) {
                    self.by_load.remove(&key);
                }
                if let Some(list) = self.current.remove(member) {
                    fixed_members.insert(member, list);
                }
            }
        }

        let before = self.current.clone();
        let holder_before = self.holder.clone();
        if !self.revocation_required {
            self.perform_reassignments(&unassigned, prev);
        }
        let all = self.sorted_all_partitions.clone();
        let reassigned = self.perform_reassignments(&all, prev);
        if !initializing && reassigned && balance_score(&self.current) >= balance_score(&before) {
            self.current = before;
            self.holder = holder_before;
        }

        self.current.extend(fixed_members);
    }

    /// Java's `maybeAssignPartition`: `tp` to the member with the fewest partitions that
    /// subscribes to its topic (and, `on_rack`, whose rack holds a replica of it). Returns
    /// whether there was one.
    fn assign_to_least_loaded(&mut self, tp: Tp<'a>, on_rack: bool) -> bool {
        if self.potential_count(tp.0) == 0 {
            return false;
        }
        let target = self
            .members_by_load()
            .find(|m| self.subscribes(m, tp.0) && !(on_rack && self.group.racks.mismatch(m, tp)));
        let Some(member) = target else {
            return false;
        };
        self.update(member, |list| list.push(tp));
        self.holder.insert(tp, member);
        true
    }

    /// Java's `canConsumerParticipateInReassignment`.
    fn can_member_participate(&self, member: &str) -> bool {
        let Some(list) = self.current.get(member) else {
            return false;
        };
        if list.len() < self.max_assignment_size(member) {
            return true;
        }
        list.iter().any(|tp| self.potential_count(tp.0) >= 2)
    }

    /// Every partition of the topics `member` subscribes to.
    fn max_assignment_size(&self, member: &str) -> usize {
        self.potential_topics.get(member).map_or(0, |topics| {
            topics
                .iter()
                .filter_map(|t| self.group.counts.get(t))
                .map(|&n| usize::try_from(n).unwrap_or(0))
                .sum()
        })
    }

    /// Java's `isBalanced`.
    fn is_balanced(&self) -> bool {
        let (Some(&(min, _)), Some(&(max, _))) = (self.by_load.first(), self.by_load.last()) else {
            return true;
        };
        if min + 1 >= max {
            return true;
        }
        for member in self.members_by_load() {
            let Some(mine) = self.current.get(member) else {
                continue;
            };
            let count = mine.len();
            if count == self.max_assignment_size(member) {
                continue;
            }
            let Some(topics) = self.potential_topics.get(member) else {
                continue;
            };
            for &topic in topics {
                let n = self.group.counts.get(topic).copied().unwrap_or(0);
                for p in 0..n {
                    let Some(other) = self.holder.get(&(topic, p)) else {
                        continue;
                    };
                    if *other == member {
                        continue;
                    }
                    let Some(theirs) = self.current.get(other) else {
                        continue;
                    };
                    if count + 1 < theirs.len() {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Java's `performReassignments`: sweep `partitions` until balanced, again while a sweep
    /// moved something. Returns whether anything moved.
    fn perform_reassignments(
        &mut self,
        partitions: &[Tp<'a>],
        prev: &BTreeMap<Tp<'a>, (&'a str, i32)>,
    ) -> bool {
        let mut reassigned = false;
        loop {
            let mut modified = false;
            for &tp in partitions {
                if self.is_balanced() {
                    break;
                }
                let Some(&member) = self.holder.get(&tp) else {
                    continue;
                };
                let Some(load) = self.current.get(member).map(Vec::len) else {
                    continue;
                };
                // Give it back to its previous owner if that one has 2+ fewer. (Java does not
                // check that the previous owner still takes part and subscribes to the topic; we
                // do, rather than fail or hand out a topic a member did not ask for.)
                if let Some(&(previous, _)) = prev.get(&tp) {
                    let eligible = self.subscribes(previous, tp.0);
                    if let Some(theirs) = self.current.get(previous).filter(|_| eligible) {
                        if load > theirs.len() + 1 {
                            self.reassign_to(tp, previous);
                            reassigned = true;
                            modified = true;
                            continue;
                        }
                    }
                }
                let better = self.potential_members.get(tp.0).is_some_and(|others| {
                    others.iter().any(|o| {
                        self.current
                            .get(o)
                            .is_some_and(|theirs| load > theirs.len() + 1)
                    })
                });
                if better {
                    let target = self.members_by_load().find(|m| self.subscribes(m, tp.0));
                    if let Some(target) = target {
                        self.reassign_to(tp, target);
                        reassigned = true;
                        modified = true;
                    }
                }
            }
            if !modified {
                return reassigned;
            }
        }
    }

    fn reassign_to(&mut self, tp: Tp<'a>, new: &'a str) {
        let Some(&old) = self.holder.get(&tp) else {
            return;
        };
        let tp = self.movements.partition_to_move(tp, old, new);
        let Some(&old) = self.holder.get(&tp) else {
            return;
        };
        self.movements.move_partition(tp, old, new);
        self.update(old, |list| list.retain(|&x| x != tp));
        self.update(new, |list| list.push(tp));
        self.holder.insert(tp, new);
    }

    /// Changes a member's partitions, keeping `by_load` ordered.
    fn update(&mut self, member: &'a str, f: impl FnOnce(&mut Vec<Tp<'a>>)) {
        let tracked = self
            .load_key(member)
            .is_some_and(|key| self.by_load.remove(&key));
        if let Some(list) = self.current.get_mut(member) {
            f(list);
        }
        if tracked {
            if let Some(key) = self.load_key(member) {
                self.by_load.insert(key);
            }
        }
    }
}

/// Java's `getBalanceScore`: the sum over member pairs of their count difference.
fn balance_score(assignment: &BTreeMap<&str, Vec<Tp<'_>>>) -> usize {
    let counts: Vec<usize> = assignment.values().map(Vec::len).collect();
    let mut score = 0;
    for (i, a) in counts.iter().enumerate() {
        for b in &counts[i + 1..] {
            score += a.abs_diff(*b);
        }
    }
    score
}
