//! `roundrobin`: Java's `org.apache.kafka.clients.consumer.RoundRobinAssignor`.
//!
//! Every partition of every subscribed topic, sorted by topic then partition, is dealt in turn to
//! the members in Java's `MemberInfo` order (static members first by `group.instance.id`, then by
//! member id), going round; a member not subscribed to the partition's topic is skipped (and
//! loses its turn). With identical subscriptions the counts differ by at most one; with
//! different subscriptions the result can be unbalanced, as Java's javadoc shows.

use std::collections::{BTreeMap, BTreeSet};

use mooring_wire::consumer_protocol::Assignment;

use super::{
    assignable_topics, java, normalize, to_assignments, Assignor, MemberSubscription,
    PartitionsPerTopic,
};

/// Java's `RoundRobinAssignor` (`roundrobin`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RoundRobinAssignor;

impl Assignor for RoundRobinAssignor {
    fn name(&self) -> &'static str {
        "roundrobin"
    }

    fn assign(
        &self,
        partitions_per_topic: &PartitionsPerTopic,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment> {
        let mut members = normalize(members);
        members.sort_by(|a, b| java::cmp_member(a.id, a.instance_id, b.id, b.instance_id));
        let existing = assignable_topics(partitions_per_topic);
        let mut topics: Vec<&str> = members
            .iter()
            .flat_map(|m| m.topics.iter().copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        topics.sort_by(|a, b| java::cmp_str(a, b));

        let mut assigned = Vec::new();
        let mut next = 0usize;
        for topic in topics {
            let Some(replicas) = existing.get(topic) else {
                continue;
            };
            for partition in 0..i32::try_from(replicas.len()).unwrap_or(i32::MAX) {
                // A topic in the list has a subscriber, so this finds one within a lap.
                let Some(skip) = (0..members.len())
                    .find(|k| members[(next + k) % members.len()].topics.contains(topic))
                else {
                    break;
                };
                let turn = (next + skip) % members.len();
                assigned.push((members[turn].id, topic, partition));
                next = turn + 1;
            }
        }
        to_assignments(&members, assigned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::testkit::*;
    use crate::assignor::RebalanceProtocol;
    use proptest::prelude::*;

    #[test]
    fn javadoc_identical_subscriptions() {
        let members = [member("C0", &["t0", "t1"]), member("C1", &["t0", "t1"])];
        let result = RoundRobinAssignor.assign(&topics(&[("t0", 3), ("t1", 3)]), &members);
        assert_eq!(
            show(&result),
            expect(&[("C0", "t0p0 t0p2 t1p1"), ("C1", "t0p1 t1p0 t1p2")])
        );
    }

    #[test]
    fn javadoc_different_subscriptions() {
        let members = [
            member("C0", &["t0"]),
            member("C1", &["t0", "t1"]),
            member("C2", &["t0", "t1", "t2"]),
        ];
        let result =
            RoundRobinAssignor.assign(&topics(&[("t0", 1), ("t1", 2), ("t2", 3)]), &members);
        assert_eq!(
            show(&result),
            expect(&[
                ("C0", "t0p0"),
                ("C1", "t1p0"),
                ("C2", "t1p1 t2p0 t2p1 t2p2")
            ])
        );
    }

    #[test]
    fn javadoc_static_membership() {
        let parts = topics(&[("t0", 3), ("t1", 3)]);
        let dynamic = [
            member("C0", &["t0", "t1"]),
            member("C1", &["t0", "t1"]),
            member("C2", &["t0", "t1"]),
        ];
        assert_eq!(
            show(&RoundRobinAssignor.assign(&parts, &dynamic)),
            expect(&[
                ("C0", "t0p0 t1p0"),
                ("C1", "t0p1 t1p1"),
                ("C2", "t0p2 t1p2")
            ])
        );
        // After a rolling bounce: C0 -> C5, C1 -> C3, C2 -> C4. By member id it shuffles...
        let bounced = [
            member("C5", &["t0", "t1"]),
            member("C3", &["t0", "t1"]),
            member("C4", &["t0", "t1"]),
        ];
        assert_eq!(
            show(&RoundRobinAssignor.assign(&parts, &bounced)),
            expect(&[
                ("C3", "t0p0 t1p0"),
                ("C4", "t0p1 t1p1"),
                ("C5", "t0p2 t1p2")
            ])
        );
        // ...with instance ids I0, I1, I2 it does not.
        let mut with_ids = bounced.clone();
        for (m, id) in with_ids.iter_mut().zip(["I0", "I1", "I2"]) {
            m.group_instance_id = Some(id.into());
        }
        assert_eq!(
            show(&RoundRobinAssignor.assign(&parts, &with_ids)),
            expect(&[
                ("C5", "t0p0 t1p0"),
                ("C3", "t0p1 t1p1"),
                ("C4", "t0p2 t1p2")
            ])
        );
    }

    #[test]
    fn by_name_and_protocol() {
        let a = crate::assignor::by_name("roundrobin").expect("roundrobin exists");
        assert_eq!(a.name(), "roundrobin");
        assert_eq!(a.protocol(), RebalanceProtocol::Eager);
        assert_eq!(a.subscription_user_data(&[], 3), None);
        assert!(crate::assignor::by_name("RoundRobin").is_none());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn valid_and_complete((parts, members) in group(false)) {
            let result = RoundRobinAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
        }

        #[test]
        fn balanced_with_identical_subscriptions((parts, members) in group(true)) {
            let result = RoundRobinAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            let (min, max) = min_max(&result);
            prop_assert!(max - min <= 1, "min {min} max {max}");
        }
    }
}
