//! Where each partition is fetched from: its leader, or the replica the leader names (KIP-392,
//! fetching from the closest replica).
//!
//! Every Fetch carries `client.rack` (Fetch v11+). A leader whose broker has a
//! `replica.selector.class` (Kafka's `RackAwareReplicaSelector`: an in-sync replica in the
//! client's rack) may answer a partition with a preferred read replica instead of its records: it
//! skips the read and names the replica. The partition is then fetched from that replica under a
//! *lease* of `metadata.max.age.ms` from the answer, as Java's consumer does (its subscription
//! state keeps the preferred replica with an expiry): when the lease ends the next fetch goes to
//! the leader, which names a replica again or serves the partition itself. Positions move only by
//! records read, whoever serves them; only the leader's word resets a position.
//!
//! A replica that failed is *avoided* for that partition, with the partition's own retry back-off
//! (`retry.backoff.ms`, doubling with each failure in a row up to `retry.backoff.max.ms`, ended by
//! an answer read from it without error). While a partition avoids its replica, the requests to
//! its leader carry no rack, so the leader serves it itself instead of naming the same replica
//! again: a follower that dies stays in the in-sync set until the controller fences it (9 s by
//! default, longer when only `replica.lag.time.max.ms` notices), and a leader naming it meanwhile
//! sends no records, so following its word would stall the partition that long. The leader's
//! other partitions in those requests are served by the leader too until the back-off ends.
//!
//! # Reactions
//!
//! | event | reaction |
//! |---|---|
//! | the leader answers a partition with preferred read replica R (not -1, not itself) | fetched from R until the lease ends, `metadata.max.age.ms` after that answer (the answer has no records: the next request goes to R at once); a preference naming a replica the partition avoids is ignored |
//! | the leader answers -1 (no preferred replica) | fetched from the leader; a lease held ends |
//! | R answers -1 | the lease stands (only leaders choose replicas) |
//! | the lease ends | the next fetch goes to the leader, which may name R again |
//! | R no longer in metadata's brokers, or no longer a replica of the partition (checked at every plan) | the lease ends; metadata refresh; fetched from the leader |
//! | R becomes the leader | the lease ends: R is fetched from as the leader |
//! | a request to R fails as a whole (connect, I/O, timeout, a top-level error: a dead broker) | every lease on R ends and R is avoided by those partitions; R is backed off as any broker; they go to their leaders at once |
//! | a partition error from R: NOT_LEADER_OR_FOLLOWER, REPLICA_NOT_AVAILABLE, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, KAFKA_STORAGE_ERROR, an unknown topic, any other code but TOPIC_AUTHORIZATION_FAILED | the lease ends, R is avoided; metadata refresh; `FetchError` event naming R; fetched from the leader at once, without a back-off (the leader's own answer decides) |
//! | OFFSET_OUT_OF_RANGE from R (R behind the leader, or truncated) | as above: never a reset by `auto.offset.reset`; the leader decides (its own OFFSET_OUT_OF_RANGE resets the position) |
//! | an answer from R read without error | R's avoidance by that partition ends |
//!
//! Whether a partition was fetched from a replica is decided when its request is sent (a lease
//! ending while the request is in flight changes nothing): such a partition's errors go by the
//! rows above, so a replica never resets a position; a partition fetched from its leader goes by
//! the fetcher's error table (`mod.rs`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use mooring_client::metadata::{BrokerInfo, Metadata, PartitionInfo};
use mooring_wire::error_code::ErrorCode;
use tokio::time::Instant;

use super::Fetcher;
use crate::events::ConsumerEvent;
use crate::processing::Dispatch;
use crate::TopicPartition;

/// A replica the leader named, and until when to trust it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lease {
    node: i32,
    until: Instant,
}

/// A replica that failed for a partition, not read from until `until`.
#[derive(Debug, Clone, Copy)]
struct Avoided {
    node: i32,
    until: Instant,
    /// The avoidance after the next failure in a row.
    next: Duration,
}

/// Why [`ReadReplicas::select`] ended a lease before its time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LeaseEnded {
    /// The lease ran out: back to the leader, which chooses again.
    Expired,
    /// The replica is gone from the brokers or the partition's replicas in metadata: metadata
    /// is refreshed.
    NotInMetadata,
    /// The replica leads the partition now.
    Leads,
}

/// The preferred read replicas of the assigned partitions (see the module docs).
#[derive(Debug)]
pub(crate) struct ReadReplicas {
    /// `metadata.max.age.ms`.
    lease: Duration,
    /// `retry.backoff.ms` and `retry.backoff.max.ms`: how long a failed replica is avoided.
    first_avoid: Duration,
    max_avoid: Duration,
    leases: HashMap<TopicPartition, Lease>,
    avoided: HashMap<TopicPartition, Avoided>,
    /// Whether `leases` changed since [`take_changed`](Self::take_changed) last looked.
    changed: bool,
}

impl ReadReplicas {
    /// Leases of `lease`; failed replicas avoided from `first_avoid` doubling up to `max_avoid`.
    pub(crate) fn new(lease: Duration, first_avoid: Duration, max_avoid: Duration) -> Self {
        ReadReplicas {
            lease,
            first_avoid,
            max_avoid: max_avoid.max(first_avoid),
            leases: HashMap::new(),
            avoided: HashMap::new(),
            changed: false,
        }
    }

    /// The node to fetch `tp` from at `now`: its leased replica while the lease holds and
    /// metadata (`brokers`, the partition's `info`) still lists it, else `leader`; with why a
    /// lease ended here.
    pub(crate) fn select(
        &mut self,
        tp: &TopicPartition,
        leader: i32,
        info: Option<&PartitionInfo>,
        brokers: &BTreeMap<i32, BrokerInfo>,
        now: Instant,
    ) -> (i32, Option<LeaseEnded>) {
        let Some(lease) = self.leases.get(tp).copied() else {
            return (leader, None);
        };
        let listed = brokers.contains_key(&lease.node)
            && info.is_none_or(|p| p.replicas.is_empty() || p.replicas.contains(&lease.node));
        let ended = if now >= lease.until {
            LeaseEnded::Expired
        } else if lease.node == leader {
            LeaseEnded::Leads
        } else if !listed {
            LeaseEnded::NotInMetadata
        } else {
            return (lease.node, None);
        };
        self.end_lease(tp);
        (leader, Some(ended))
    }

    /// A partition's answer from `node` (its leader when `from_leader`) carried no error and
    /// `preferred` as its preferred read replica (-1: none). Returns the replica newly leased, if
    /// any (the answer had no records: fetch there at once).
    pub(crate) fn answered(
        &mut self,
        tp: &TopicPartition,
        node: i32,
        from_leader: bool,
        preferred: i32,
        now: Instant,
    ) -> Option<i32> {
        if self.avoided.get(tp).is_some_and(|a| a.node == node) {
            self.avoided.remove(tp);
        }
        if preferred < 0 || preferred == node {
            // The leader serves it itself; a replica never chooses, so its -1 says nothing.
            if from_leader {
                self.end_lease(tp);
            }
            return None;
        }
        if self.is_avoided(tp, preferred, now) {
            return None;
        }
        let lease = Lease {
            node: preferred,
            until: now + self.lease,
        };
        if self.leases.insert(tp.clone(), lease).map(|l| l.node) != Some(preferred) {
            self.changed = true;
        }
        Some(preferred)
    }

    /// `node` failed to serve `tp` (a partition error from a node not its leader): the lease ends
    /// and the node is avoided by the partition.
    pub(crate) fn replica_failed(&mut self, tp: &TopicPartition, node: i32, now: Instant) {
        if self.leases.get(tp).is_some_and(|l| l.node == node) {
            self.end_lease(tp);
        }
        let wait = match self.avoided.get(tp) {
            Some(a) if a.node == node => a.next,
            _ => self.first_avoid,
        };
        self.avoided.insert(
            tp.clone(),
            Avoided {
                node,
                until: now + wait,
                next: wait.saturating_mul(2).min(self.max_avoid),
            },
        );
    }

    /// A request to `node` failed as a whole (transport, top-level error): every lease on it
    /// ends and those partitions avoid it. Returns them.
    pub(crate) fn node_failed(&mut self, node: i32, now: Instant) -> Vec<TopicPartition> {
        let leased: Vec<TopicPartition> = self
            .leases
            .iter()
            .filter(|(_, l)| l.node == node)
            .map(|(tp, _)| tp.clone())
            .collect();
        for tp in &leased {
            self.replica_failed(tp, node, now);
        }
        leased
    }

    /// Whether a request holding `partitions` should go without the rack: one of them avoids a
    /// replica now (see the module docs).
    pub(crate) fn falls_back<'a>(
        &self,
        partitions: impl IntoIterator<Item = &'a TopicPartition>,
        now: Instant,
    ) -> bool {
        !self.avoided.is_empty()
            && partitions
                .into_iter()
                .any(|tp| self.avoided.get(tp).is_some_and(|a| now < a.until))
    }

    /// Whether `tp` avoids `node` at `now`.
    fn is_avoided(&self, tp: &TopicPartition, node: i32, now: Instant) -> bool {
        self.avoided
            .get(tp)
            .is_some_and(|a| a.node == node && now < a.until)
    }

    /// Those of `partitions` fetched from `node` as their leased replica.
    pub(crate) fn served_by<'a>(
        &self,
        node: i32,
        partitions: impl IntoIterator<Item = &'a TopicPartition>,
    ) -> BTreeSet<TopicPartition> {
        if self.leases.is_empty() {
            return BTreeSet::new();
        }
        partitions
            .into_iter()
            .filter(|tp| self.leased(tp) == Some(node))
            .cloned()
            .collect()
    }

    /// The replica `tp` is leased to, if any.
    pub(crate) fn leased(&self, tp: &TopicPartition) -> Option<i32> {
        self.leases.get(tp).map(|l| l.node)
    }

    /// Every lease, by partition, when they changed since the last call: the partitions
    /// fetched from a follower.
    pub(crate) fn take_changed(&mut self) -> Option<BTreeMap<TopicPartition, i32>> {
        if !std::mem::take(&mut self.changed) {
            return None;
        }
        Some(self.leases())
    }

    /// Every lease, by partition: the partitions fetched from a follower.
    pub(crate) fn leases(&self) -> BTreeMap<TopicPartition, i32> {
        self.leases
            .iter()
            .map(|(tp, l)| (tp.clone(), l.node))
            .collect()
    }

    /// When the first lease ends (the plan changes then).
    pub(crate) fn next_expiry(&self, now: Instant) -> Option<Instant> {
        self.leases
            .values()
            .map(|l| l.until)
            .filter(|until| *until > now)
            .min()
    }

    /// Whether there is no state at all (nothing to prune).
    pub(crate) fn is_empty(&self) -> bool {
        self.leases.is_empty() && self.avoided.is_empty()
    }

    /// Forgets partitions no longer assigned.
    pub(crate) fn retain(&mut self, assigned: &BTreeSet<TopicPartition>) {
        let before = self.leases.len();
        self.leases.retain(|tp, _| assigned.contains(tp));
        self.changed |= self.leases.len() != before;
        self.avoided.retain(|tp, _| assigned.contains(tp));
    }

    fn end_lease(&mut self, tp: &TopicPartition) {
        self.changed |= self.leases.remove(tp).is_some();
    }
}

impl<H: Dispatch> Fetcher<H> {
    /// The node to fetch `tp`, led by `leader`, from now ([`ReadReplicas::select`]); a lease that
    /// ended for want of its replica in metadata asks for a refresh.
    pub(super) fn read_from(
        &mut self,
        tp: &TopicPartition,
        leader: i32,
        metadata: &Metadata,
        now: Instant,
    ) -> i32 {
        let info = metadata
            .topics
            .get(&tp.topic)
            .and_then(|t| t.partitions.get(&tp.partition));
        let (node, ended) = self
            .replicas
            .select(tp, leader, info, &metadata.brokers, now);
        if let Some(ended) = ended {
            tracing::debug!(partition = %tp, leader, ?ended, "read replica lease ended; fetching from the leader");
            self.refresh_metadata |= ended == LeaseEnded::NotInMetadata;
        }
        node
    }

    /// The rack a request holding `partitions` sends: `client.rack`, or none while one of them
    /// avoids a replica that failed (its leader then serves it instead of naming that replica).
    pub(super) fn rack_for<'a>(
        &self,
        partitions: impl IntoIterator<Item = &'a TopicPartition>,
        now: Instant,
    ) -> String {
        match &self.shared.config.client.client_rack {
            Some(rack) if !self.replicas.falls_back(partitions, now) => rack.clone(),
            _ => String::new(),
        }
    }

    /// An answer without error for `tp` from `node`: its preferred read replica is followed.
    pub(super) fn replica_answered(
        &mut self,
        node: i32,
        tp: &TopicPartition,
        from_replica: bool,
        preferred: i32,
    ) {
        let now = Instant::now();
        if let Some(replica) = self
            .replicas
            .answered(tp, node, !from_replica, preferred, now)
        {
            tracing::debug!(partition = %tp, leader = node, replica, "fetching from the preferred read replica");
        }
    }

    /// `tp`, fetched from the replica `node`, answered `code`: back to its leader at once, which
    /// decides (see the module docs). No back-off: the leader has not failed.
    pub(super) fn replica_failed(&mut self, node: i32, tp: TopicPartition, code: ErrorCode) {
        if matches!(
            code,
            ErrorCode::UnknownTopicId
                | ErrorCode::UnknownTopicOrPartition
                | ErrorCode::InconsistentTopicId
        ) {
            // The replica's session may name the topic by an id it does not know.
            if let Some(session) = self.sessions.get_mut(&node) {
                session.reset();
            }
        }
        self.replicas.replica_failed(&tp, node, Instant::now());
        self.refresh_metadata = true;
        tracing::debug!(partition = %tp, replica = node, %code, "read replica failed; fetching from the leader");
        self.shared.emit(ConsumerEvent::FetchError {
            node,
            partition: Some(tp),
            error: code.to_string(),
        });
    }

    /// A request to `node` failed as a whole: the partitions it served as a replica go to their
    /// leaders.
    pub(super) fn replica_node_failed(&mut self, node: i32) {
        let moved = self.replicas.node_failed(node, Instant::now());
        if !moved.is_empty() {
            tracing::debug!(
                replica = node,
                partitions = moved.len(),
                "read replica failed; its partitions go to their leaders"
            );
        }
    }

    /// Publishes the partitions fetched from a follower to the fetch stats, when they changed.
    pub(super) fn publish_followers(&mut self) {
        if let Some(followers) = self.replicas.take_changed() {
            self.shared.fetch_stats.set_followers(followers);
        }
    }

    /// When the first partition back-off or read replica lease ends.
    pub(super) fn next_expiry(&self, now: Instant) -> Option<Instant> {
        match (self.errors.next_expiry(now), self.replicas.next_expiry(now)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const LEADER: i32 = 1;
    const FOLLOWER: i32 = 2;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    fn replicas() -> ReadReplicas {
        ReadReplicas::new(1000 * MS, 100 * MS, 400 * MS)
    }

    fn brokers(nodes: &[i32]) -> BTreeMap<i32, BrokerInfo> {
        nodes
            .iter()
            .map(|n| {
                (
                    *n,
                    BrokerInfo {
                        node_id: *n,
                        host: "127.0.0.1".into(),
                        port: 1,
                        rack: Some(format!("r{n}")),
                    },
                )
            })
            .collect()
    }

    fn partition(replicas: &[i32]) -> PartitionInfo {
        PartitionInfo {
            partition: 0,
            leader: LEADER,
            leader_epoch: 0,
            replicas: replicas.to_vec(),
            isr: replicas.to_vec(),
            error: mooring_wire::error_code::ErrorCode::None,
        }
    }

    #[test]
    fn a_lease_holds_until_metadata_max_age_after_the_leaders_answer() {
        let mut r = replicas();
        let now = Instant::now();
        let (b, p) = (brokers(&[1, 2, 3]), partition(&[1, 2, 3]));
        assert_eq!(r.select(&tp(0), LEADER, Some(&p), &b, now), (LEADER, None));
        assert_eq!(
            r.answered(&tp(0), LEADER, true, FOLLOWER, now),
            Some(FOLLOWER)
        );
        let before_end = now + 999 * MS;
        assert_eq!(
            r.select(&tp(0), LEADER, Some(&p), &b, before_end),
            (FOLLOWER, None)
        );
        // The follower's own answers carry -1: the lease stands.
        assert_eq!(r.answered(&tp(0), FOLLOWER, false, -1, before_end), None);
        assert_eq!(r.leased(&tp(0)), Some(FOLLOWER));
        assert_eq!(r.next_expiry(now), Some(now + 1000 * MS));
        assert_eq!(
            r.select(&tp(0), LEADER, Some(&p), &b, now + 1000 * MS),
            (LEADER, Some(LeaseEnded::Expired))
        );
        assert_eq!(r.leased(&tp(0)), None);
    }

    #[test]
    fn the_leaders_minus_one_means_the_leader() {
        let mut r = replicas();
        let now = Instant::now();
        r.answered(&tp(0), LEADER, true, FOLLOWER, now);
        assert_eq!(r.answered(&tp(0), LEADER, true, -1, now), None);
        assert_eq!(r.leased(&tp(0)), None);
        // A leader naming itself is the same.
        r.answered(&tp(0), LEADER, true, FOLLOWER, now);
        r.answered(&tp(0), LEADER, true, LEADER, now);
        assert_eq!(r.leased(&tp(0)), None);
    }

    #[test]
    fn a_replica_gone_from_metadata_or_now_leading_ends_the_lease() {
        let mut r = replicas();
        let now = Instant::now();
        let p = partition(&[1, 2, 3]);
        r.answered(&tp(0), LEADER, true, FOLLOWER, now);
        assert_eq!(
            r.select(&tp(0), LEADER, Some(&p), &brokers(&[1, 3]), now),
            (LEADER, Some(LeaseEnded::NotInMetadata))
        );
        r.answered(&tp(0), LEADER, true, FOLLOWER, now);
        assert_eq!(
            r.select(
                &tp(0),
                LEADER,
                Some(&partition(&[1, 3, 4])),
                &brokers(&[1, 2, 3]),
                now
            ),
            (LEADER, Some(LeaseEnded::NotInMetadata)),
            "reassigned away from the replica"
        );
        r.answered(&tp(0), LEADER, true, FOLLOWER, now);
        assert_eq!(
            r.select(&tp(0), FOLLOWER, Some(&p), &brokers(&[1, 2, 3]), now),
            (FOLLOWER, Some(LeaseEnded::Leads))
        );
        assert_eq!(r.leased(&tp(0)), None);
    }

    #[test]
    fn a_failed_replica_is_avoided_with_a_doubling_back_off_until_it_reads() {
        let mut r = replicas();
        let now = Instant::now();
        r.answered(&tp(0), LEADER, true, FOLLOWER, now);
        r.replica_failed(&tp(0), FOLLOWER, now);
        assert_eq!(r.leased(&tp(0)), None);
        assert!(r.falls_back([&tp(0)], now + 99 * MS));
        assert!(!r.falls_back([&tp(1)], now), "another partition does not");
        assert_eq!(
            r.answered(&tp(0), LEADER, true, FOLLOWER, now + 99 * MS),
            None,
            "the leader naming it again is not followed"
        );
        assert!(!r.falls_back([&tp(0)], now + 100 * MS));
        let later = now + 100 * MS;
        assert_eq!(
            r.answered(&tp(0), LEADER, true, FOLLOWER, later),
            Some(FOLLOWER)
        );
        r.replica_failed(&tp(0), FOLLOWER, later);
        assert!(r.falls_back([&tp(0)], later + 199 * MS), "doubled");
        assert!(!r.falls_back([&tp(0)], later + 200 * MS));
        // Capped at the maximum.
        for _ in 0..4 {
            r.replica_failed(&tp(0), FOLLOWER, later);
        }
        assert!(!r.falls_back([&tp(0)], later + 400 * MS));
        // A read without error from it ends the streak.
        r.answered(&tp(0), FOLLOWER, false, -1, later);
        r.replica_failed(&tp(0), FOLLOWER, later);
        assert!(!r.falls_back([&tp(0)], later + 100 * MS), "from the start");
    }

    #[test]
    fn a_failed_node_ends_every_lease_on_it() {
        let mut r = replicas();
        let now = Instant::now();
        r.answered(&tp(0), LEADER, true, FOLLOWER, now);
        r.answered(&tp(1), LEADER, true, FOLLOWER, now);
        r.answered(&tp(2), LEADER, true, 3, now);
        assert_eq!(r.take_changed().map(|l| l.len()), Some(3));
        assert_eq!(r.take_changed(), None, "unchanged since");
        r.answered(&tp(2), LEADER, true, 3, now);
        assert_eq!(r.take_changed(), None, "a lease renewed is no change");
        let mut ended = r.node_failed(FOLLOWER, now);
        ended.sort();
        assert_eq!(ended, [tp(0), tp(1)]);
        assert_eq!(r.leases(), BTreeMap::from([(tp(2), 3)]));
        assert_eq!(r.take_changed(), Some(BTreeMap::from([(tp(2), 3)])));
        assert!(r.falls_back([&tp(1)], now));
        r.retain(&BTreeSet::from([tp(1)]));
        assert!(r.leases().is_empty());
        r.retain(&BTreeSet::new());
        assert!(r.is_empty());
    }
}
