//! The constrained path of Java's `AbstractStickyAssignor` (`ConstrainedAssignmentBuilder`,
//! KAFKA-9987), taken when every member subscribes to the same topics.
//!
//! With `total` partitions and `n` members, every member ends with `floor(total / n)` (the min
//! quota) or `ceil(total / n)` (the max quota) partitions, exactly `total % n` of them with the
//! max. Members first keep what they own, up to a quota, in Java's member iteration order; the
//! remaining partitions, sorted by topic and partition, are dealt round-robin to the members
//! under quota, sorted by member id.
//!
//! Rack-aware, a member keeps only owned partitions with a replica in its rack, and before the
//! round-robin the remaining partitions (those with the fewest members in their racks first) go
//! round-robin to the members under quota in their racks, then to the members at the min quota
//! in their racks while max-quota places are left.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::racks::RackInfo;
use super::{java, Group, StickyAssignment, Tp};

pub(super) fn build<'a>(
    group: &Group<'a>,
    owned: BTreeMap<&'a str, Vec<Tp<'a>>>,
    multiply_claimed: BTreeSet<Tp<'a>>,
) -> StickyAssignment<'a> {
    let total = group.total();
    let members = group.order.len();
    let mut b = Builder {
        min_quota: total.checked_div(members).unwrap_or(0),
        max_quota: total.div_ceil(members.max(1)),
        expected_over_min: total.checked_rem(members).unwrap_or(0),
        current_over_min: 0,
        assignment: group.order.iter().map(|&m| (m, Vec::new())).collect(),
        maybe_revoked: BTreeMap::new(),
        multiply_claimed,
        under_min: Vec::new(),
        exactly_min: VecDeque::new(),
        transferring: BTreeMap::new(),
    };

    let assigned = b.assign_owned(group, &owned);
    let mut topics: Vec<&'a str> = group.counts.keys().copied().collect();
    topics.sort_by(|a, b| java::cmp_str(a, b));
    let mut unassigned: Vec<Tp<'a>> = group
        .partitions_of(&topics)
        .into_iter()
        .filter(|tp| !assigned.contains(tp))
        .collect();
    b.under_min.sort_by(|x, y| java::cmp_str(x, y));
    b.exactly_min
        .make_contiguous()
        .sort_by(|x, y| java::cmp_str(x, y));
    group.racks.sort_by_members_in_racks(&mut unassigned);
    if group.racks.is_rack_aware() {
        unassigned = b.assign_rack_aware_round_robin(&group.racks, unassigned);
    }
    b.assign_round_robin(&unassigned);

    StickyAssignment {
        assignment: b.assignment,
        transferring: Some(b.transferring),
    }
}

struct Builder<'a> {
    min_quota: usize,
    max_quota: usize,
    /// How many members end with the max quota (0 when the quotas are equal).
    expected_over_min: usize,
    current_over_min: usize,
    assignment: BTreeMap<&'a str, Vec<Tp<'a>>>,
    /// Owned partitions a member could not keep within its quota, with that member.
    maybe_revoked: BTreeMap<Tp<'a>, &'a str>,
    multiply_claimed: BTreeSet<Tp<'a>>,
    /// Members below the min quota.
    under_min: Vec<&'a str>,
    /// Members at the min quota that may still take one more.
    exactly_min: VecDeque<&'a str>,
    transferring: BTreeMap<Tp<'a>, &'a str>,
}

impl<'a> Builder<'a> {
    /// Java's `assignOwnedPartitions`: members keep owned partitions up to a quota, in Java's
    /// member iteration order (which decides who keeps the max quota when more members own it
    /// than there are max-quota places). Returns the partitions kept.
    fn assign_owned(
        &mut self,
        group: &Group<'a>,
        owned: &BTreeMap<&'a str, Vec<Tp<'a>>>,
    ) -> BTreeSet<Tp<'a>> {
        let mut kept = BTreeSet::new();
        for &member in &group.order {
            let mut mine: Vec<Tp<'a>> = owned.get(member).cloned().unwrap_or_default();
            // Off its rack, a partition is not kept, and may be revoked.
            mine.retain(|&tp| {
                let off_rack = group.racks.mismatch(member, tp);
                if off_rack {
                    self.maybe_revoked.insert(tp, member);
                }
                !off_rack
            });
            // Java sorts by partition, then topic.
            mine.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| java::cmp_str(a.0, b.0)));
            mine.retain(|tp| !self.multiply_claimed.contains(tp));

            let keep = if mine.len() < self.min_quota {
                self.under_min.push(member);
                mine.len()
            } else if mine.len() >= self.max_quota && self.current_over_min < self.expected_over_min
            {
                self.current_over_min += 1;
                if self.current_over_min == self.expected_over_min {
                    self.exactly_min.clear();
                }
                self.max_quota
            } else {
                if self.current_over_min < self.expected_over_min {
                    self.exactly_min.push_back(member);
                }
                self.min_quota
            };
            for &tp in &mine[keep..] {
                self.maybe_revoked.insert(tp, member);
            }
            kept.extend(mine[..keep].iter().copied());
            if let Some(list) = self.assignment.get_mut(member) {
                list.extend_from_slice(&mine[..keep]);
            }
        }
        kept
    }

    /// Java's `assignRackAwareRoundRobin`: each partition to the next member under the min quota
    /// in one of its racks (going round the list), else to the first member at the min quota in
    /// one of them while max-quota places are left. Returns the partitions still unassigned.
    fn assign_rack_aware_round_robin(
        &mut self,
        racks: &RackInfo<'a>,
        unassigned: Vec<Tp<'a>>,
    ) -> Vec<Tp<'a>> {
        let mut left = Vec::new();
        let mut next = 0usize;
        for tp in unassigned {
            let mut member = None;
            if let Some(at) = racks.next_rack_member(tp, &self.under_min, next) {
                let m = self.under_min[at];
                let count = self.count(m) + 1;
                let mut after = at;
                if count >= self.min_quota {
                    self.under_min.remove(at);
                    if count < self.max_quota && self.current_over_min < self.expected_over_min {
                        self.exactly_min.push_back(m);
                    }
                } else {
                    after += 1;
                }
                next = match self.under_min.len() {
                    0 => 0,
                    n => after % n,
                };
                member = Some(m);
            } else if !self.exactly_min.is_empty() {
                if let Some(at) = racks.next_rack_member(tp, self.exactly_min.make_contiguous(), 0)
                {
                    let m = self.exactly_min[at];
                    if self.count(m) + 1 == self.max_quota {
                        self.exactly_min.remove(at);
                        self.current_over_min += 1;
                        if self.current_over_min == self.expected_over_min {
                            self.exactly_min.clear();
                        }
                    }
                    member = Some(m);
                }
            }
            match member {
                Some(m) => {
                    self.assign_new(tp, m);
                }
                None => left.push(tp),
            }
        }
        left
    }

    fn count(&self, member: &str) -> usize {
        self.assignment.get(member).map_or(0, Vec::len)
    }

    /// Java's `assignRoundRobin`: fill the members under the min quota in turn, then the ones
    /// at the min quota, one partition each, until the max-quota places are taken.
    fn assign_round_robin(&mut self, unassigned: &[Tp<'a>]) {
        // The position of Java's iterator over `under_min`.
        let mut next = 0usize;
        for &tp in unassigned {
            let (member, from_under) = if next < self.under_min.len() {
                next += 1;
                (self.under_min[next - 1], true)
            } else if self.under_min.is_empty() {
                match self.exactly_min.pop_front() {
                    Some(m) => (m, false),
                    // Java throws here: the quotas add up to the partitions, so it cannot happen.
                    None => {
                        tracing::error!(partition = ?tp, "sticky assignor: no member left to fill");
                        break;
                    }
                }
            } else {
                next = 1;
                (self.under_min[0], true)
            };

            let count = self.assign_new(tp, member);
            if count == self.min_quota && from_under {
                next -= 1;
                self.under_min.remove(next);
                self.exactly_min.push_back(member);
            } else if count == self.max_quota {
                self.current_over_min += 1;
            }
        }
    }

    fn assign_new(&mut self, tp: Tp<'a>, member: &'a str) -> usize {
        let list = self.assignment.entry(member).or_default();
        list.push(tp);
        let moving = self
            .maybe_revoked
            .get(&tp)
            .is_some_and(|&previous| previous != member);
        if moving || self.multiply_claimed.contains(&tp) {
            self.transferring.insert(tp, member);
        }
        list.len()
    }
}
