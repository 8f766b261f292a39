//! Partition assignors: the algorithm the group leader runs after JoinGroup, chosen by the
//! coordinator among the protocols every member lists (`partition.assignment.strategy` is an
//! ordered list, which makes the two-step upgrade from `range` to `cooperative-sticky` possible).
//! Names and algorithms are Java's, so a group mixing our members with Java (or librdkafka)
//! members agrees whichever member leads. `range`, `sticky` and `cooperative-sticky` are
//! rack-aware as Java's are (KIP-881): told the racks of each partition's replicas
//! ([`PartitionsPerTopic`]) and each member's `client.rack` (the Subscription, v3), they prefer
//! giving a partition to a member in one of its replicas' racks, as long as balance allows.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use mooring_wire::consumer_protocol::{Assignment, Subscription, TopicPartitions};

mod cooperative_sticky;
mod java;
mod range;
mod roundrobin;
mod sticky;
mod sticky_core;
#[cfg(test)]
mod testkit;

pub use cooperative_sticky::CooperativeStickyAssignor;
pub use mooring_client::PartitionsPerTopic;
pub use range::RangeAssignor;
pub use roundrobin::RoundRobinAssignor;
pub use sticky::StickyAssignor;

/// Which rebalance protocol an assignor supports (KIP-429).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebalanceProtocol {
    /// Every member revokes everything before joining (stop-the-world).
    Eager,
    /// Members keep what they own; only partitions that move are revoked, then a second join.
    Cooperative,
}

/// One member as the leader sees it in the JoinGroup response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSubscription {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub subscription: Subscription,
}

/// A partition assignor.
pub trait Assignor: Send + Sync + std::fmt::Debug {
    /// Java's protocol name: `range`, `roundrobin`, `sticky` or `cooperative-sticky`.
    fn name(&self) -> &'static str;

    /// The rebalance protocol this assignor needs from the members; eager unless it says
    /// otherwise, as in Java.
    fn protocol(&self) -> RebalanceProtocol {
        RebalanceProtocol::Eager
    }

    /// The user data this member puts in its Subscription for this assignor (the sticky
    /// assignor's previous assignment and generation; cooperative-sticky's generation), given what
    /// it owns now and its generation (`-1` when it has none). None unless it says otherwise, as
    /// in Java.
    fn subscription_user_data(&self, owned: &[TopicPartitions], generation: i32) -> Option<Bytes> {
        let _ = (owned, generation);
        None
    }

    /// The leader's assignment: member id → what it gets. `partitions_per_topic` holds every
    /// topic some member subscribes to that exists, with its partitions' replica racks; topics
    /// missing from it are not assigned. Every member of `members` appears in the result
    /// (possibly with nothing).
    fn assign(
        &self,
        partitions_per_topic: &PartitionsPerTopic,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment>;
}

/// The assignor with Java's protocol `name`, if we implement it.
pub fn by_name(name: &str) -> Option<Box<dyn Assignor>> {
    let builtin: [Box<dyn Assignor>; 4] = [
        Box::new(RangeAssignor),
        Box::new(RoundRobinAssignor),
        Box::new(StickyAssignor),
        Box::new(CooperativeStickyAssignor),
    ];
    builtin.into_iter().find(|a| a.name() == name)
}

/// A member as the assignors use it: its subscription with the topics de-duplicated.
#[derive(Debug)]
pub(crate) struct Member<'a> {
    pub(crate) id: &'a str,
    pub(crate) instance_id: Option<&'a str>,
    pub(crate) topics: BTreeSet<&'a str>,
    /// `client.rack`, if set and not empty (Java's assignors ignore an empty rack).
    pub(crate) rack: Option<&'a str>,
    pub(crate) subscription: &'a Subscription,
}

/// The members in JoinGroup order, each member id once. Java's leader puts them in a `HashMap`
/// keyed by member id, so a repeated id (which the coordinator never sends) keeps its first
/// position and its last subscription; we do the same.
pub(crate) fn normalize(list: &[MemberSubscription]) -> Vec<Member<'_>> {
    let mut out: Vec<Member<'_>> = Vec::with_capacity(list.len());
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for m in list {
        let member = Member {
            id: &m.member_id,
            instance_id: m.group_instance_id.as_deref(),
            topics: m.subscription.topics.iter().map(String::as_str).collect(),
            rack: m.subscription.rack_id.as_deref().filter(|r| !r.is_empty()),
            subscription: &m.subscription,
        };
        match index.get(m.member_id.as_str()) {
            Some(&i) => out[i] = member,
            None => {
                index.insert(&m.member_id, out.len());
                out.push(member);
            }
        }
    }
    out
}

/// The topics that can be assigned, with their partitions' replica racks: those with
/// partitions (Java's `AbstractPartitionAssignor` leaves out topics without metadata or
/// partitions).
pub(crate) fn assignable_topics(
    partitions_per_topic: &PartitionsPerTopic,
) -> BTreeMap<&str, &[BTreeSet<String>]> {
    partitions_per_topic
        .iter()
        .filter(|(_, p)| !p.is_empty())
        .collect()
}

/// Java's `AbstractPartitionAssignor.useRackAwareAssignment` (KIP-881): some member rack is a
/// replica rack, and some partition is not on every replica rack (when all are, every member is
/// as near to every partition as any other).
pub(crate) fn use_rack_aware<'r>(
    member_racks: &BTreeSet<&str>,
    replica_racks: impl IntoIterator<Item = &'r BTreeSet<String>> + Clone,
) -> bool {
    let all: BTreeSet<&str> = replica_racks
        .clone()
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect();
    !member_racks.is_disjoint(&all)
        && replica_racks
            .into_iter()
            .any(|racks| racks.len() != all.len())
}

/// The result for every member: its partitions grouped by topic, topics and partitions sorted,
/// no user data (none of Java's built-in assignors puts user data in the assignment).
pub(crate) fn to_assignments<'a>(
    members: &[Member<'a>],
    assigned: impl IntoIterator<Item = (&'a str, &'a str, i32)>,
) -> BTreeMap<String, Assignment> {
    let mut by_member: BTreeMap<&str, BTreeMap<&str, BTreeSet<i32>>> =
        members.iter().map(|m| (m.id, BTreeMap::new())).collect();
    for (member, topic, partition) in assigned {
        by_member
            .entry(member)
            .or_default()
            .entry(topic)
            .or_default()
            .insert(partition);
    }
    by_member
        .into_iter()
        .map(|(member, topics)| {
            let partitions = topics
                .into_iter()
                .map(|(t, ps)| TopicPartitions::new(t, ps.into_iter().collect::<Vec<_>>()))
                .collect();
            (
                member.to_owned(),
                Assignment {
                    partitions,
                    user_data: None,
                },
            )
        })
        .collect()
}
