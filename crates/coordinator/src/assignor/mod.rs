//! Partition assignors: the algorithm the group leader runs after JoinGroup, chosen by the
//! coordinator among the protocols every member lists (`partition.assignment.strategy` is an
//! ordered list, which makes the two-step upgrade from `range` to `cooperative-sticky` possible).
//! Names and algorithms are Java's, so a group mixing our members with Java (or librdkafka)
//! members agrees whichever member leads.

use std::collections::BTreeMap;

use bytes::Bytes;
use mooring_wire::consumer_protocol::{Assignment, Subscription, TopicPartitions};

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

    /// The rebalance protocol this assignor needs from the members.
    fn protocol(&self) -> RebalanceProtocol;

    /// The user data this member puts in its Subscription for this assignor (the sticky
    /// assignor's previous assignment and generation; cooperative-sticky's generation), given what
    /// it owns now and its generation (`-1` when it has none).
    fn subscription_user_data(&self, owned: &[TopicPartitions], generation: i32) -> Option<Bytes>;

    /// The leader's assignment: member id → what it gets. `partitions_per_topic` holds the
    /// partition count of every topic some member subscribes to that exists; topics missing from it
    /// are not assigned. Every member of `members` appears in the result (possibly with nothing).
    fn assign(
        &self,
        partitions_per_topic: &BTreeMap<String, i32>,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment>;
}

/// The assignor with Java's protocol `name`, if we implement it.
pub fn by_name(name: &str) -> Option<Box<dyn Assignor>> {
    let _ = name;
    None
}
