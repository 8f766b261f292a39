//! The algorithm shared by `sticky` and `cooperative-sticky`: Java's
//! `org.apache.kafka.clients.consumer.internals.AbstractStickyAssignor` (KIP-54, reworked for
//! KIP-429 and KAFKA-9987's constrained path).
//!
//! 1. Read each member's previous ownership and generation ([`MemberData`]; where it comes from
//!    is the one thing the two assignors do differently). Drop owned partitions of topics that
//!    are not assigned any more. When two members claim the same partition the one with the
//!    higher generation keeps it; equal generations both lose it (it is "claimed by multiple
//!    previous owners" and must move through a revocation).
//! 2. If every member subscribes to the same topics, the [constrained](constrained) builder:
//!    quotas `floor(total / members)` and `ceil(total / members)`, each member keeps up to its
//!    quota of what it owns, the rest is dealt round-robin to the members under quota.
//! 3. Otherwise the [general](general) builder: keep every valid ownership, give each unassigned
//!    partition to the least-loaded eligible member, then move partitions (preferring a
//!    partition's previous owner of an older generation) until no move improves the balance,
//!    keeping the result only if it is more balanced than before.
//!
//! Both builders are rack-aware as Java's are (KIP-881, [`racks`]): when racks matter, a member
//! keeps only owned partitions with a replica in its rack, and unassigned partitions go first
//! to members in their racks within the quotas (constrained) or to the least-loaded such
//! member (general); the rest is placed as without racks.
//!
//! Where Java iterates a `HashMap` and the order changes the result, we iterate in the order
//! Java's `HashMap` would (see [`super::java`]), so that our leader and a Java leader compute the
//! same assignment.

mod constrained;
mod general;
mod movements;
mod racks;

use std::collections::{BTreeMap, BTreeSet};

use mooring_wire::consumer_protocol::{
    decode_cooperative_sticky_generation, Assignment, StickyAssignorUserData, Subscription,
    NO_GENERATION,
};

use super::{java, Member, PartitionsPerTopic};
use racks::RackInfo;

/// A topic partition, the topic borrowed from the partition counts.
pub(crate) type Tp<'a> = (&'a str, i32);

/// Where a member's previous ownership comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// `sticky`: the previous assignment and generation in `StickyAssignorUserData` (an eager
    /// member revokes everything before joining, so its owned partitions are empty).
    Eager,
    /// `cooperative-sticky`: the subscription's owned partitions, with the subscription's
    /// generation (v2+) or else the generation in the user data.
    Cooperative,
}

/// A member's previous ownership as the assignor reads it (Java's `MemberData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MemberData {
    pub(crate) partitions: Vec<(String, i32)>,
    pub(crate) generation: Option<i32>,
}

fn flatten(list: &[mooring_wire::consumer_protocol::TopicPartitions]) -> Vec<(String, i32)> {
    list.iter()
        .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.clone(), p)))
        .collect()
}

impl MemberData {
    /// Java's `memberData(Subscription)` of `StickyAssignor` or `CooperativeStickyAssignor`.
    pub(crate) fn read(flavor: Flavor, sub: &Subscription) -> MemberData {
        match flavor {
            Flavor::Eager => match sub.user_data.as_deref() {
                None | Some([]) => MemberData {
                    partitions: Vec::new(),
                    generation: None,
                },
                Some(bytes) => match StickyAssignorUserData::decode(bytes) {
                    Ok(data) => MemberData {
                        partitions: flatten(&data.previous_assignment),
                        generation: data.generation,
                    },
                    // Unreadable user data: no previous assignment, as Java does.
                    Err(_) => MemberData {
                        partitions: Vec::new(),
                        generation: Some(NO_GENERATION),
                    },
                },
            },
            Flavor::Cooperative => {
                let generation = match sub.generation() {
                    Some(g) => Some(g),
                    None => sub.user_data.as_deref().map(|bytes| {
                        decode_cooperative_sticky_generation(bytes).unwrap_or(NO_GENERATION)
                    }),
                };
                MemberData {
                    partitions: flatten(&sub.owned_partitions),
                    generation,
                }
            }
        }
    }
}

/// What the builders share: the topics to assign and the members in Java's iteration order.
#[derive(Debug)]
pub(crate) struct Group<'a> {
    /// Partition counts of the topics to assign (existing, subscribed by some member).
    pub(crate) counts: BTreeMap<&'a str, i32>,
    /// Member ids in the iteration order of Java's `HashMap<String, Subscription>`.
    pub(crate) order: Vec<&'a str>,
    pub(crate) members: BTreeMap<&'a str, &'a Member<'a>>,
    pub(crate) data: BTreeMap<&'a str, MemberData>,
    /// The highest generation any member reports (`-1` if none).
    pub(crate) max_generation: i32,
    pub(crate) racks: RackInfo<'a>,
}

impl<'a> Group<'a> {
    /// The topic as borrowed from the counts, if it is assigned and `partition` exists.
    pub(crate) fn tp(&self, topic: &str, partition: i32) -> Option<Tp<'a>> {
        let (&t, &n) = self.counts.get_key_value(topic)?;
        (0..n).contains(&partition).then_some((t, partition))
    }

    /// Every partition of `topics`, in the order given, partitions ascending.
    pub(crate) fn partitions_of(&self, topics: &[&'a str]) -> Vec<Tp<'a>> {
        topics
            .iter()
            .flat_map(|&t| (0..self.counts.get(t).copied().unwrap_or(0)).map(move |p| (t, p)))
            .collect()
    }

    pub(crate) fn total(&self) -> usize {
        self.counts
            .values()
            .map(|&n| usize::try_from(n).unwrap_or(0))
            .sum()
    }
}

/// The assignment and, from the constrained builder, the partitions it moves from a previous
/// owner to another member (Java's `partitionsTransferringOwnership`; `None` from the general
/// builder, whose caller computes it).
#[derive(Debug)]
pub(crate) struct StickyAssignment<'a> {
    pub(crate) assignment: BTreeMap<&'a str, Vec<Tp<'a>>>,
    pub(crate) transferring: Option<BTreeMap<Tp<'a>, &'a str>>,
}

impl StickyAssignment<'_> {
    /// The assignment as the group's answer: every member, with its partitions by topic.
    pub(crate) fn to_assignments(&self, members: &[Member<'_>]) -> BTreeMap<String, Assignment> {
        super::to_assignments(
            members,
            self.assignment
                .iter()
                .flat_map(|(&m, list)| list.iter().map(move |&(t, p)| (m, t, p))),
        )
    }
}

/// Java's `AbstractStickyAssignor.assignPartitions`.
pub(crate) fn assign<'a>(
    flavor: Flavor,
    partitions_per_topic: &'a PartitionsPerTopic,
    members: &'a [Member<'a>],
) -> StickyAssignment<'a> {
    let subscribed: BTreeSet<&str> = members
        .iter()
        .flat_map(|m| m.topics.iter().copied())
        .collect();
    let topics: BTreeMap<&'a str, &'a [BTreeSet<String>]> =
        super::assignable_topics(partitions_per_topic)
            .into_iter()
            .filter(|(t, _)| subscribed.contains(t))
            .collect();
    let counts = topics
        .iter()
        .map(|(&t, p)| (t, i32::try_from(p.len()).unwrap_or(i32::MAX)))
        .collect();
    let join_order: Vec<&'a str> = members.iter().map(|m| m.id).collect();
    let mut group = Group {
        counts,
        order: java::hash_map_order(&join_order),
        members: members.iter().map(|m| (m.id, m)).collect(),
        data: BTreeMap::new(),
        max_generation: NO_GENERATION,
        racks: RackInfo::new(&topics, members),
    };

    let (all_equal, owned, multiply_claimed) = read_ownership(flavor, &mut group);
    if all_equal {
        constrained::build(&group, owned, multiply_claimed)
    } else {
        general::build(&group, owned)
    }
}

/// Java's `allSubscriptionsEqual`: whether all members subscribe to the same topics, each
/// member's valid previous ownership after resolving conflicts, and the partitions claimed by
/// two members of the same generation.
#[allow(clippy::type_complexity)]
fn read_ownership<'a>(
    flavor: Flavor,
    group: &mut Group<'a>,
) -> (bool, BTreeMap<&'a str, Vec<Tp<'a>>>, BTreeSet<Tp<'a>>) {
    let mut all_equal = true;
    let mut first_topics: Option<&BTreeSet<&str>> = None;
    let mut owned: BTreeMap<&'a str, Vec<Tp<'a>>> = BTreeMap::new();
    let mut multiply_claimed = BTreeSet::new();
    let mut owner_of: BTreeMap<Tp<'a>, &'a str> = BTreeMap::new();

    for &id in &group.order {
        let Some(&member) = group.members.get(id) else {
            continue;
        };
        // Java starts from the first member whose topic set is non-empty, so a member
        // subscribed to nothing would count as "equal"; we compare sets as they are, so such a
        // member is never handed partitions of topics it did not ask for.
        match first_topics {
            None => first_topics = Some(&member.topics),
            Some(first) => all_equal &= *first == member.topics,
        }

        let data = MemberData::read(flavor, member.subscription);
        let generation = data.generation.unwrap_or(NO_GENERATION);
        group.max_generation = group.max_generation.max(generation);

        let mut mine: Vec<Tp<'a>> = Vec::new();
        let mut seen = BTreeSet::new();
        for (topic, partition) in &data.partitions {
            // Partitions of topics not assigned any more, or that do not exist, are dropped;
            // a partition listed twice by one member counts once.
            let Some(tp) = group.tp(topic, *partition) else {
                continue;
            };
            if !seen.insert(tp) {
                continue;
            }
            match owner_of.get(&tp).copied() {
                None => {
                    mine.push(tp);
                    owner_of.insert(tp, id);
                }
                Some(other) => {
                    // Java compares with the other member's *subscription* generation.
                    let other_generation = group
                        .members
                        .get(other)
                        .and_then(|m| m.subscription.generation())
                        .unwrap_or(NO_GENERATION);
                    if generation == other_generation {
                        multiply_claimed.insert(tp);
                        if let Some(list) = owned.get_mut(other) {
                            list.retain(|&x| x != tp);
                        }
                        owner_of.insert(tp, id);
                    } else if generation > other_generation {
                        mine.push(tp);
                        if let Some(list) = owned.get_mut(other) {
                            list.retain(|&x| x != tp);
                        }
                        owner_of.insert(tp, id);
                    }
                }
            }
        }
        owned.insert(id, mine);
        group.data.insert(id, data);
    }
    (all_equal, owned, multiply_claimed)
}
