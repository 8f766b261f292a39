//! Java's `AbstractStickyAssignor.RackInfo`: what the sticky builders know of racks (KIP-881).
//!
//! The sticky assignors are rack-aware when some member's `client.rack` is one of the replica
//! racks of the partitions to assign and not every partition has replicas on all of those
//! racks. Then a member keeps an owned partition only if its rack holds a replica of it, and
//! unassigned partitions go first to members in their racks (the partitions with the fewest
//! such members first), as far as the quotas allow; what is left is placed as without racks.
//! A member without a rack matches every partition.

use std::collections::{BTreeMap, BTreeSet};

use super::Tp;
use crate::assignor::{use_rack_aware, Member};

#[derive(Debug, Default)]
pub(crate) struct RackInfo<'a> {
    /// Each member's rack, when rack-aware (empty otherwise).
    member_racks: BTreeMap<&'a str, &'a str>,
    /// Each partition's replica racks, when rack-aware (empty otherwise).
    partition_racks: BTreeMap<Tp<'a>, &'a BTreeSet<String>>,
    /// How many members are in a partition's replica racks, when some member has a rack (Java's
    /// `numConsumersByPartition`, which the constrained builder orders partitions by).
    members_in_racks: BTreeMap<Tp<'a>, usize>,
}

impl<'a> RackInfo<'a> {
    /// From the topics to assign, with their partitions' replica racks, and every member.
    pub(crate) fn new(
        topics: &BTreeMap<&'a str, &'a [BTreeSet<String>]>,
        members: &[Member<'a>],
    ) -> RackInfo<'a> {
        let mut by_rack: BTreeMap<&'a str, usize> = BTreeMap::new();
        for rack in members.iter().filter_map(|m| m.rack) {
            *by_rack.entry(rack).or_default() += 1;
        }
        if by_rack.is_empty() {
            return RackInfo::default();
        }
        let partitions: Vec<(Tp<'a>, &'a BTreeSet<String>)> = topics
            .iter()
            .flat_map(|(&topic, racks)| {
                racks
                    .iter()
                    .enumerate()
                    .map(move |(p, r)| ((topic, i32::try_from(p).unwrap_or(i32::MAX)), r))
            })
            .collect();
        let members_in_racks = partitions
            .iter()
            .map(|&(tp, racks)| {
                let n = racks
                    .iter()
                    .map(|r| by_rack.get(r.as_str()).copied().unwrap_or(0))
                    .sum();
                (tp, n)
            })
            .collect();
        let member_rack_set: BTreeSet<&str> = by_rack.keys().copied().collect();
        if !use_rack_aware(&member_rack_set, partitions.iter().map(|&(_, r)| r)) {
            return RackInfo {
                members_in_racks,
                ..RackInfo::default()
            };
        }
        RackInfo {
            member_racks: members
                .iter()
                .filter_map(|m| Some((m.id, m.rack?)))
                .collect(),
            partition_racks: partitions.into_iter().collect(),
            members_in_racks,
        }
    }

    /// Whether placement is rack-aware.
    pub(crate) fn is_rack_aware(&self) -> bool {
        !self.member_racks.is_empty()
    }

    /// Java's `racksMismatch`: the member has a rack (and placement is rack-aware) and no replica
    /// of `tp` is in it.
    pub(crate) fn mismatch(&self, member: &str, tp: Tp<'_>) -> bool {
        self.member_racks.get(member).is_some_and(|rack| {
            !self
                .partition_racks
                .get(&tp)
                .is_some_and(|racks| racks.contains(*rack))
        })
    }

    /// Java's `sortPartitionsByRackConsumers`: a stable sort by how many members are in each
    /// partition's racks, fewest first (no change when no member has a rack).
    pub(crate) fn sort_by_members_in_racks(&self, partitions: &mut [Tp<'a>]) {
        if self.members_in_racks.is_empty() {
            return;
        }
        partitions.sort_by_key(|tp| self.members_in_racks.get(tp).copied().unwrap_or(0));
    }

    /// Java's `nextRackConsumer`: the position in `list`, going round from `first`, of the first
    /// member in one of `tp`'s replica racks.
    pub(crate) fn next_rack_member(
        &self,
        tp: Tp<'_>,
        list: &[&str],
        first: usize,
    ) -> Option<usize> {
        let racks = self.partition_racks.get(&tp)?;
        if racks.is_empty() {
            return None;
        }
        (0..list.len())
            .map(|i| (first + i) % list.len())
            .find(|&i| {
                self.member_racks
                    .get(list[i])
                    .is_some_and(|rack| racks.contains(*rack))
            })
    }
}
