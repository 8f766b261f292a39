//! `range`: Java's `org.apache.kafka.clients.consumer.RangeAssignor`, the consumer's historical
//! default.
//!
//! Topic by topic, the members subscribed to the topic are sorted (static members first by
//! `group.instance.id`, then the others by member id: Java's `MemberInfo` order, which keeps a
//! static group's assignment stable across restarts) and the partitions are cut into contiguous
//! ranges in that order; the first `partitions % members` members get one partition more.
//! Because every topic is cut the same way, topics with the same partition count and the same
//! subscribers are co-partitioned: partition `p` of each goes to the same member.
//!
//! Rack-aware (KIP-881), as Java's: when some topic needs it (a subscriber's `client.rack` is one
//! of the topic's replica racks, and not every partition has replicas on all of them), a first
//! pass gives each member, within the same per-topic quotas, the partitions it may take in rack
//! order: per topic, each member in turn takes the first partitions with a replica in its rack
//! (a member without a rack takes any), up to its quota; co-partitioned topics (same subscribers,
//! same partition count) instead go partition by partition to the first member whose rack holds
//! that partition of every one of them, so they stay co-partitioned. The ranges pass then hands
//! out what is left, in member order.

use std::collections::{BTreeMap, BTreeSet};

use mooring_wire::consumer_protocol::Assignment;

use super::{
    assignable_topics, java, normalize, to_assignments, use_rack_aware, Assignor, Member,
    MemberSubscription, PartitionsPerTopic,
};

/// Java's `RangeAssignor` (`range`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RangeAssignor;

impl Assignor for RangeAssignor {
    fn name(&self) -> &'static str {
        "range"
    }

    fn assign(
        &self,
        partitions_per_topic: &PartitionsPerTopic,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment> {
        let members = normalize(members);
        let mut states: Vec<TopicState<'_>> = assignable_topics(partitions_per_topic)
            .into_iter()
            .filter_map(|(topic, replica_racks)| TopicState::new(topic, replica_racks, &members))
            .collect();
        if states.iter().any(|s| s.needs_rack_aware) {
            assign_with_rack_matching(&mut states);
        }
        for state in &mut states {
            state.assign_ranges(|_, _, _| true);
        }
        to_assignments(
            &members,
            states
                .iter()
                .flat_map(|s| s.assigned.iter().map(move |&(m, p)| (m, s.topic, p))),
        )
    }
}

/// One topic's assignment under way (Java's `TopicAssignmentState`).
#[derive(Debug)]
struct TopicState<'a> {
    topic: &'a str,
    /// The subscribers in Java's `MemberInfo` order, with their racks.
    members: Vec<(&'a str, Option<&'a str>)>,
    /// Each partition's replica racks; only looked at when some subscriber has a rack.
    replica_racks: &'a [BTreeSet<String>],
    /// Whether some subscriber has a rack (Java keeps the partitions' racks only then).
    member_racks: bool,
    needs_rack_aware: bool,
    unassigned: BTreeSet<i32>,
    /// Partitions assigned so far, by member (index into `members`).
    counts: Vec<usize>,
    quota: usize,
    /// How many members may still get one partition over `quota`.
    extra: usize,
    assigned: Vec<(&'a str, i32)>,
}

impl<'a> TopicState<'a> {
    fn new(
        topic: &'a str,
        replica_racks: &'a [BTreeSet<String>],
        members: &[Member<'a>],
    ) -> Option<TopicState<'a>> {
        let mut subscribers: Vec<&Member<'a>> = members
            .iter()
            .filter(|m| m.topics.contains(topic))
            .collect();
        if subscribers.is_empty() {
            return None;
        }
        subscribers.sort_by(|a, b| java::cmp_member(a.id, a.instance_id, b.id, b.instance_id));
        let member_racks: BTreeSet<&str> = subscribers.iter().filter_map(|m| m.rack).collect();
        let n = subscribers.len();
        let partitions = replica_racks.len();
        Some(TopicState {
            topic,
            members: subscribers.iter().map(|m| (m.id, m.rack)).collect(),
            replica_racks,
            member_racks: !member_racks.is_empty(),
            needs_rack_aware: use_rack_aware(&member_racks, replica_racks),
            unassigned: (0..i32::try_from(partitions).unwrap_or(i32::MAX)).collect(),
            counts: vec![0; n],
            quota: partitions / n,
            extra: partitions % n,
            assigned: Vec::new(),
        })
    }

    /// Java's `racksMatch`: a member without a rack matches every partition.
    fn racks_match(&self, member: usize, partition: i32) -> bool {
        match self.members[member].1 {
            None => true,
            Some(rack) => {
                self.member_racks
                    && usize::try_from(partition)
                        .ok()
                        .and_then(|p| self.replica_racks.get(p))
                        .is_some_and(|racks| racks.contains(rack))
            }
        }
    }

    /// How many partitions Java's map of partition racks holds: all of them, or none when no
    /// subscriber has a rack (co-partitioned topics are grouped by this).
    fn rack_map_size(&self) -> usize {
        if self.member_racks {
            self.replica_racks.len()
        } else {
            0
        }
    }

    /// Java's `maxAssignable`: what the member may still take within its quota.
    fn max_assignable(&self, member: usize) -> usize {
        (self.quota + usize::from(self.extra > 0)).saturating_sub(self.counts[member])
    }

    fn assign(&mut self, member: usize, partitions: &[i32]) {
        for &p in partitions {
            self.unassigned.remove(&p);
            self.assigned.push((self.members[member].0, p));
        }
        self.counts[member] += partitions.len();
        if self.counts[member] > self.quota {
            self.extra = self.extra.saturating_sub(1);
        }
    }

    /// Java's `assignRanges`: each member in turn takes the first unassigned partitions
    /// `may_assign` allows it, up to what it may still take.
    fn assign_ranges(&mut self, may_assign: impl Fn(&Self, usize, i32) -> bool) {
        for member in 0..self.members.len() {
            if self.unassigned.is_empty() {
                break;
            }
            let take: Vec<i32> = self
                .unassigned
                .iter()
                .copied()
                .filter(|&p| may_assign(self, member, p))
                .take(self.max_assignable(member))
                .collect();
            if !take.is_empty() {
                self.assign(member, &take);
            }
        }
    }
}

/// Java's `assignWithRackMatching`: topics with the same subscribers and the same number of
/// partitions go together, partition by partition; any other topic that needs it gets a rack
/// matching ranges pass of its own.
fn assign_with_rack_matching(states: &mut [TopicState<'_>]) {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for i in 0..states.len() {
        let together = |g: &Vec<usize>| {
            let (a, b) = (&states[g[0]], &states[i]);
            a.members == b.members && a.rack_map_size() == b.rack_map_size()
        };
        match groups.iter_mut().find(|g| together(g)) {
            Some(group) => group.push(i),
            None => groups.push(vec![i]),
        }
    }
    for group in groups {
        if group.len() > 1 {
            let partitions = states[group[0]].rack_map_size();
            assign_co_partitioned(states, &group, partitions);
        } else if states[group[0]].needs_rack_aware {
            states[group[0]].assign_ranges(|s, m, p| s.racks_match(m, p));
        }
    }
}

/// Java's `assignCoPartitionedWithRackMatching`: partition `p` of every topic of `group` to the
/// first member left whose rack matches `p` of each and that may still take one of each; a
/// member that may take no more of any of them is left out from then on.
fn assign_co_partitioned(states: &mut [TopicState<'_>], group: &[usize], partitions: usize) {
    let mut remaining: Vec<usize> = (0..states[group[0]].members.len()).collect();
    for p in 0..i32::try_from(partitions).unwrap_or(i32::MAX) {
        let found = remaining.iter().position(|&m| {
            group
                .iter()
                .all(|&t| states[t].racks_match(m, p) && states[t].max_assignable(m) > 0)
        });
        let Some(at) = found else {
            continue;
        };
        let member = remaining[at];
        for &t in group {
            states[t].assign(member, &[p]);
        }
        if group.iter().all(|&t| states[t].max_assignable(member) == 0) {
            remaining.remove(at);
            if remaining.is_empty() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::testkit::*;
    use crate::assignor::RebalanceProtocol;
    use proptest::prelude::*;

    #[test]
    fn javadoc_example() {
        // RangeAssignor's javadoc: C0 and C1 subscribe to t0 and t1, 3 partitions each.
        let members = [member("C0", &["t0", "t1"]), member("C1", &["t0", "t1"])];
        let result = RangeAssignor.assign(&topics(&[("t0", 3), ("t1", 3)]), &members);
        assert_eq!(
            show(&result),
            expect(&[("C0", "t0p0 t0p1 t1p0 t1p1"), ("C1", "t0p2 t1p2")])
        );
    }

    #[test]
    fn javadoc_static_membership_example() {
        // After a rolling bounce C0 became C3 and C1 became C2; with instance ids I0 and I1 the
        // assignment follows the instance ids, not the new member ids.
        let mut c3 = member("C3", &["t0", "t1"]);
        c3.group_instance_id = Some("I0".into());
        let mut c2 = member("C2", &["t0", "t1"]);
        c2.group_instance_id = Some("I1".into());
        let result = RangeAssignor.assign(&topics(&[("t0", 3), ("t1", 3)]), &[c2, c3]);
        assert_eq!(
            show(&result),
            expect(&[("C3", "t0p0 t0p1 t1p0 t1p1"), ("C2", "t0p2 t1p2")])
        );
        // Without instance ids the member ids decide.
        let members = [member("C3", &["t0", "t1"]), member("C2", &["t0", "t1"])];
        let result = RangeAssignor.assign(&topics(&[("t0", 3), ("t1", 3)]), &members);
        assert_eq!(
            show(&result),
            expect(&[("C2", "t0p0 t0p1 t1p0 t1p1"), ("C3", "t0p2 t1p2")])
        );
    }

    #[test]
    fn per_topic_subscribers_and_missing_topics() {
        let members = [
            member("a", &["t0", "t1"]),
            member("b", &["t1", "gone"]),
            member("c", &[]),
        ];
        let result = RangeAssignor.assign(&topics(&[("t0", 2), ("t1", 5), ("empty", 0)]), &members);
        assert_eq!(
            show(&result),
            expect(&[
                ("a", "t0p0 t0p1 t1p0 t1p1 t1p2"),
                ("b", "t1p3 t1p4"),
                ("c", "")
            ])
        );
        assert_eq!(
            RangeAssignor.assign(&topics(&[("t0", 2)]), &[]),
            BTreeMap::new()
        );
    }

    #[test]
    fn more_members_than_partitions() {
        let members: Vec<_> = ["m0", "m1", "m2", "m3"]
            .iter()
            .map(|m| member(m, &["t"]))
            .collect();
        let result = RangeAssignor.assign(&topics(&[("t", 2)]), &members);
        assert_eq!(
            show(&result),
            expect(&[("m0", "tp0"), ("m1", "tp1"), ("m2", ""), ("m3", "")])
        );
    }

    /// A member with its `client.rack`.
    fn racked(id: &str, topics: &[&str], rack: Option<&str>) -> MemberSubscription {
        let mut m = member(id, topics);
        m.subscription.rack_id = rack.map(str::to_owned);
        m
    }

    /// Partitions on the racks given (one entry per partition, racks space-separated).
    fn on_racks(parts: &mut PartitionsPerTopic, topic: &str, racks: &[&str]) {
        let list = racks
            .iter()
            .map(|r| r.split_whitespace().map(str::to_owned).collect())
            .collect();
        parts.insert(topic, list);
    }

    #[test]
    fn each_member_takes_its_racks_partitions() {
        let members = [
            racked("C0", &["t"], Some("a")),
            racked("C1", &["t"], Some("b")),
            racked("C2", &["t"], Some("c")),
        ];
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t", &["a", "b", "c", "a", "b", "c"]);
        assert_eq!(
            show(&RangeAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 tp3"), ("C1", "tp1 tp4"), ("C2", "tp2 tp5")])
        );
        // Without racks: contiguous ranges.
        assert_eq!(
            show(&RangeAssignor.assign(&topics(&[("t", 6)]), &members)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3"), ("C2", "tp4 tp5")])
        );
    }

    /// Balance comes first: C0's rack holds three partitions, its quota is two.
    #[test]
    fn balance_before_racks() {
        let members = [
            racked("C0", &["t"], Some("a")),
            racked("C1", &["t"], Some("b")),
        ];
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t", &["a", "a", "a", "b"]);
        assert_eq!(
            show(&RangeAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")])
        );
        // The greedy pass is Java's: C0 takes the first partitions of its rack, tp0 (also on
        // b), leaving C1 none of b's; tp1 goes across racks although swapping would align both.
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t", &["a b", "a"]);
        assert_eq!(
            show(&RangeAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0"), ("C1", "tp1")])
        );
    }

    /// Co-partitioned topics (same subscribers, same partition count) stay co-partitioned: a
    /// partition goes by racks only to a member whose rack holds it in every one of them.
    #[test]
    fn co_partitioned_topics_stay_together() {
        let members = [
            racked("C0", &["t1", "t2"], Some("a")),
            racked("C1", &["t1", "t2"], Some("b")),
            racked("C2", &["t1", "t2"], Some("c")),
        ];
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t1", &["b", "a", "c"]);
        on_racks(&mut parts, "t2", &["b", "a c", "c"]);
        assert_eq!(
            show(&RangeAssignor.assign(&parts, &members)),
            expect(&[
                ("C0", "t1p1 t2p1"),
                ("C1", "t1p0 t2p0"),
                ("C2", "t1p2 t2p2")
            ])
        );
        // No member's rack holds partition p of both: the ranges decide, together.
        on_racks(&mut parts, "t2", &["c", "b", "a"]);
        assert_eq!(
            show(&RangeAssignor.assign(&parts, &members)),
            expect(&[
                ("C0", "t1p0 t2p0"),
                ("C1", "t1p1 t2p1"),
                ("C2", "t1p2 t2p2")
            ])
        );
    }

    /// Not rack-aware when racks cannot matter: every partition on every rack, or no member in
    /// a replica rack. A member without a rack takes what the ranges give it.
    #[test]
    fn racks_that_do_not_matter_change_nothing() {
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t", &["a b", "b a", "a b", "a b"]);
        let members = [
            racked("C0", &["t"], Some("b")),
            racked("C1", &["t"], Some("a")),
        ];
        let plain = expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")]);
        assert_eq!(show(&RangeAssignor.assign(&parts, &members)), plain);
        on_racks(&mut parts, "t", &["a", "b", "a", "b"]);
        let elsewhere = [
            racked("C0", &["t"], Some("x")),
            racked("C1", &["t"], Some("")),
        ];
        assert_eq!(show(&RangeAssignor.assign(&parts, &elsewhere)), plain);
        // Rack-aware, but C0, without a rack, takes the first partitions before C1's turn.
        let mixed = [racked("C0", &["t"], None), racked("C1", &["t"], Some("a"))];
        assert_eq!(
            show(&RangeAssignor.assign(&parts, &mixed)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")])
        );
        // C0 (rack b) first takes b's partitions; C1, without a rack, what is left.
        let mixed = [racked("C0", &["t"], Some("b")), racked("C1", &["t"], None)];
        assert_eq!(
            show(&RangeAssignor.assign(&parts, &mixed)),
            expect(&[("C0", "tp1 tp3"), ("C1", "tp0 tp2")])
        );
    }

    #[test]
    fn by_name_and_protocol() {
        let a = crate::assignor::by_name("range").expect("range exists");
        assert_eq!(a.name(), "range");
        assert_eq!(a.protocol(), RebalanceProtocol::Eager);
        assert_eq!(a.subscription_user_data(&[], 3), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn valid_complete_and_balanced_per_topic((parts, members) in group(false)) {
            let result = RangeAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            let flat = flat(&result);
            for (topic, n) in &parts.counts() {
                let mut subs: Vec<&MemberSubscription> =
                    members.iter().filter(|m| m.subscription.topics.contains(topic)).collect();
                if subs.is_empty() {
                    continue;
                }
                subs.sort_by(|a, b| a.member_id.cmp(&b.member_id));
                // Contiguous ranges in member order, the bigger ones first.
                let mut next = 0;
                let mut last_len = usize::MAX;
                for m in subs {
                    let mine: Vec<i32> = flat[&m.member_id]
                        .iter()
                        .filter(|(t, _)| t == topic)
                        .map(|(_, p)| *p)
                        .collect();
                    prop_assert!(mine.len() <= last_len);
                    last_len = mine.len();
                    for p in mine {
                        prop_assert_eq!(p, next);
                        next += 1;
                    }
                }
                prop_assert_eq!(next, *n);
            }
        }

        #[test]
        fn racks_keep_per_topic_balance((parts, members) in with_racks(group(false))) {
            let result = RangeAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            let flat = flat(&result);
            for (topic, n) in parts.counts() {
                let counts: Vec<usize> = members
                    .iter()
                    .filter(|m| m.subscription.topics.contains(&topic))
                    .map(|m| flat[&m.member_id].iter().filter(|(t, _)| *t == topic).count())
                    .collect();
                if counts.is_empty() {
                    continue;
                }
                let n = usize::try_from(n).unwrap_or(0);
                let (quota, extra) = (n / counts.len(), n % counts.len());
                prop_assert!(counts.iter().all(|&c| c == quota || c == quota + 1), "{topic}: {counts:?}");
                prop_assert_eq!(counts.iter().filter(|&&c| c == quota + 1).count(), extra);
            }
        }

        #[test]
        fn racks_align_when_balance_allows((parts, members) in rack_aligned_group()) {
            let result = RangeAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            prop_assert_eq!(off_rack(&parts, &members, &result), vec![]);
        }

        #[test]
        fn co_partitioned_topics_align_with_racks((parts, members) in with_racks(group(true))) {
            let result = RangeAssignor.assign(&parts, &members);
            let flat = flat(&result);
            let owner = |t: &str, p: i32| {
                flat.iter().find(|(_, s)| s.contains(&(t.to_owned(), p))).map(|(m, _)| m.clone())
            };
            let subscribed = &members[0].subscription.topics;
            let counts: BTreeMap<String, i32> =
                parts.counts().into_iter().filter(|(t, _)| subscribed.contains(t)).collect();
            for (a, &na) in &counts {
                for (b, &nb) in &counts {
                    if na == nb {
                        for p in 0..na {
                            prop_assert_eq!(owner(a, p), owner(b, p));
                        }
                    }
                }
            }
        }

        #[test]
        fn co_partitioned_topics_align((parts, members) in group(true)) {
            let result = RangeAssignor.assign(&parts, &members);
            let flat = flat(&result);
            let owner = |t: &str, p: i32| {
                flat.iter().find(|(_, s)| s.contains(&(t.to_owned(), p))).map(|(m, _)| m.clone())
            };
            let subscribed = &members[0].subscription.topics;
            let counts = parts.counts();
            for (a, &na) in counts.iter().filter(|(t, _)| subscribed.contains(t)) {
                for (b, &nb) in counts.iter().filter(|(t, _)| subscribed.contains(t)) {
                    if na == nb {
                        for p in 0..na {
                            prop_assert_eq!(owner(a, p), owner(b, p));
                        }
                    }
                }
            }
        }
    }
}
