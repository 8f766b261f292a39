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
//! Not reproduced: the rack-aware placement of KIP-881, which needs the replicas' racks that the
//! [`Assignor`](super::Assignor) interface does not carry. Without racks Java's algorithm is this
//! one.

use std::collections::BTreeMap;

use bytes::Bytes;
use mooring_wire::consumer_protocol::{Assignment, TopicPartitions};

use super::{
    assignable_topics, java, normalize, to_assignments, Assignor, MemberSubscription,
    PartitionsPerTopic, RebalanceProtocol,
};

/// The protocol name.
pub(crate) const NAME: &str = "range";

/// Java's `RangeAssignor` (`range`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RangeAssignor;

impl Assignor for RangeAssignor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn protocol(&self) -> RebalanceProtocol {
        RebalanceProtocol::Eager
    }

    fn subscription_user_data(
        &self,
        _owned: &[TopicPartitions],
        _generation: i32,
    ) -> Option<Bytes> {
        None
    }

    fn assign(
        &self,
        partitions_per_topic: &PartitionsPerTopic,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment> {
        let members = normalize(members);
        let mut assigned = Vec::new();
        for (topic, replicas) in assignable_topics(partitions_per_topic) {
            let count = i32::try_from(replicas.len()).unwrap_or(i32::MAX);
            let mut subscribers: Vec<_> = members
                .iter()
                .filter(|m| m.topics.contains(topic))
                .collect();
            if subscribers.is_empty() {
                continue;
            }
            subscribers.sort_by(|a, b| java::cmp_member(a.id, a.instance_id, b.id, b.instance_id));
            for (range, member) in ranges(count, subscribers.len()).zip(&subscribers) {
                let id = member.id;
                assigned.extend(range.map(|p| (id, topic, p)));
            }
        }
        to_assignments(&members, assigned)
    }
}

/// The ranges `count` partitions are cut into for `members` members, in member order: each gets
/// `count / members`, the first `count % members` one more.
fn ranges(count: i32, members: usize) -> impl Iterator<Item = std::ops::Range<i32>> {
    let m = i32::try_from(members).unwrap_or(i32::MAX).max(1);
    let (quota, extra) = (count / m, count % m);
    (0..m).map(move |i| {
        let start = quota * i + i.min(extra);
        let len = quota + i32::from(i < extra);
        start..start + len
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::testkit::*;
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
