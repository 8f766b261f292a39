//! `sticky`: Java's `org.apache.kafka.clients.consumer.StickyAssignor` (KIP-54), eager.
//!
//! A balanced assignment (counts within one of each other where subscriptions allow) that keeps
//! as many partitions as it can where they were. Being eager, a member has revoked everything
//! before it joins, so its previous assignment travels in the subscription's user data:
//! `StickyAssignorUserData` v1, the partitions plus the generation they belong to (KIP-341, so
//! the leader can tell a stale claim from a current one when two members claim a partition).
//! The algorithm is in [`super::sticky_core`].

use std::collections::BTreeMap;

use bytes::{Bytes, BytesMut};
use mooring_wire::consumer_protocol::{
    Assignment, StickyAssignorUserData, TopicPartitions, NO_GENERATION,
};

use super::sticky_core::{self, Flavor};
use super::{normalize, Assignor, MemberSubscription, PartitionsPerTopic};

/// Java's `StickyAssignor` (`sticky`).
#[derive(Debug, Clone, Copy, Default)]
pub struct StickyAssignor;

impl Assignor for StickyAssignor {
    fn name(&self) -> &'static str {
        "sticky"
    }

    /// `StickyAssignorUserData` v1 with what the member was assigned and the generation; none
    /// before the member's first assignment (Java sends null until `onAssignment`).
    fn subscription_user_data(&self, owned: &[TopicPartitions], generation: i32) -> Option<Bytes> {
        if owned.is_empty() && generation == NO_GENERATION {
            return None;
        }
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for tp in owned {
            by_topic
                .entry(&tp.topic)
                .or_default()
                .extend_from_slice(&tp.partitions);
        }
        let data = StickyAssignorUserData {
            previous_assignment: by_topic
                .into_iter()
                .map(|(t, mut ps)| {
                    ps.sort_unstable();
                    ps.dedup();
                    TopicPartitions::new(t, ps)
                })
                .collect(),
            generation: Some(generation),
        };
        let mut buf = BytesMut::new();
        // Encoding an in-memory list only fails on lengths beyond i32 (not a real assignment).
        data.encode(&mut buf).ok()?;
        Some(buf.freeze())
    }

    fn assign(
        &self,
        partitions_per_topic: &PartitionsPerTopic,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment> {
        let members = normalize(members);
        let outcome = sticky_core::assign(Flavor::Eager, partitions_per_topic, &members);
        outcome.to_assignments(&members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::testkit::*;
    use crate::assignor::PartitionsPerTopic;
    use crate::assignor::RebalanceProtocol;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn sticky_member(
        id: &str,
        subscribed: &[&str],
        had: &str,
        generation: i32,
    ) -> MemberSubscription {
        reporting(
            member(id, subscribed),
            Report::Sticky,
            owned(had),
            generation,
        )
    }

    #[test]
    fn javadoc_example_1() {
        let all = ["t0", "t1", "t2", "t3"];
        let parts = topics(&[("t0", 2), ("t1", 2), ("t2", 2), ("t3", 2)]);
        let members = [member("C0", &all), member("C1", &all), member("C2", &all)];
        let first = StickyAssignor.assign(&parts, &members);
        // The same as the javadoc's (and round robin's).
        assert_eq!(
            show(&first),
            expect(&[
                ("C0", "t0p0 t1p1 t3p0"),
                ("C1", "t0p1 t2p0 t3p1"),
                ("C2", "t1p0 t2p1")
            ])
        );

        // C1 leaves. Everything C0 and C2 had stays; C1's three partitions are shared out. (The
        // javadoc, written for the original algorithm, gives t2p0 to C0 and t0p1, t3p1 to C2;
        // Java's constrained path since 2.8, which we follow, deals them in partition order to
        // the members under quota sorted by id: t0p1 to C0, t2p0 and t3p1 to C2.)
        let next = [
            sticky_member("C0", &all, "t0p0 t1p1 t3p0", 1),
            sticky_member("C2", &all, "t1p0 t2p1", 1),
        ];
        let second = StickyAssignor.assign(&parts, &next);
        assert_eq!(
            show(&second),
            expect(&[("C0", "t0p0 t1p1 t3p0 t0p1"), ("C2", "t1p0 t2p1 t2p0 t3p1")])
        );
    }

    #[test]
    fn javadoc_example_2() {
        let parts = topics(&[("t0", 1), ("t1", 2), ("t2", 3)]);
        let members = [
            member("C0", &["t0"]),
            member("C1", &["t0", "t1"]),
            member("C2", &["t0", "t1", "t2"]),
        ];
        let first = StickyAssignor.assign(&parts, &members);
        assert_eq!(
            show(&first),
            expect(&[
                ("C0", "t0p0"),
                ("C1", "t1p0 t1p1"),
                ("C2", "t2p0 t2p1 t2p2")
            ])
        );
        // C0 leaves: 5 of the 6 assignments survive.
        let next = [
            sticky_member("C1", &["t0", "t1"], "t1p0 t1p1", 1),
            sticky_member("C2", &["t0", "t1", "t2"], "t2p0 t2p1 t2p2", 1),
        ];
        assert_eq!(
            show(&StickyAssignor.assign(&parts, &next)),
            expect(&[("C1", "t1p0 t1p1 t0p0"), ("C2", "t2p0 t2p1 t2p2")])
        );
    }

    /// Who keeps the extra partition when more members own the max quota than there are
    /// max-quota places is decided by Java's `HashMap` order of the member ids: "D" (bucket 4)
    /// comes before "C0" (bucket 13). Checked against kafka-clients 4.4.0's `StickyAssignor`.
    #[test]
    fn java_member_order_decides_who_keeps_the_extra_partition() {
        let parts = topics(&[("t", 10)]);
        let members = [
            sticky_member("C0", &["t"], "tp0 tp1 tp2 tp3 tp4", 1),
            sticky_member("D", &["t"], "tp5 tp6 tp7 tp8 tp9", 1),
            member("E", &["t"]),
        ];
        assert_eq!(
            show(&StickyAssignor.assign(&parts, &members)),
            expect(&[
                ("C0", "tp0 tp1 tp2"),
                ("D", "tp5 tp6 tp7 tp8"),
                ("E", "tp3 tp4 tp9")
            ])
        );
    }

    #[test]
    fn higher_generation_wins_a_conflict() {
        let parts = topics(&[("t", 4)]);
        // C0 reports t-0,t-1 from generation 5; C1 reports t-1,t-2 from generation 3 (stale).
        let members = [
            sticky_member("C0", &["t"], "tp0 tp1", 5),
            sticky_member("C1", &["t"], "tp1 tp2", 3),
        ];
        assert_eq!(
            show(&StickyAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")])
        );
        // The same generation: nobody keeps t-1, it is dealt like a new partition.
        let members = [
            sticky_member("C0", &["t"], "tp0 tp1", 5),
            sticky_member("C1", &["t"], "tp1 tp2 tp3", 5),
        ];
        let result = StickyAssignor.assign(&parts, &members);
        assert_eq!(
            show(&result),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")])
        );
    }

    fn racked(mut m: MemberSubscription, rack: &str) -> MemberSubscription {
        m.subscription.rack_id = Some(rack.to_owned());
        m
    }

    /// Partitions on the racks given, one rack a partition.
    fn on_racks(parts: &mut PartitionsPerTopic, topic: &str, racks: &[&str]) {
        parts.insert(
            topic,
            racks.iter().map(|r| [(*r).to_owned()].into()).collect(),
        );
    }

    /// Equal subscriptions (the constrained path): each member gets its rack's partitions.
    #[test]
    fn constrained_path_follows_racks() {
        let members = [
            racked(member("C0", &["t"]), "a"),
            racked(member("C1", &["t"]), "b"),
            racked(member("C2", &["t"]), "c"),
        ];
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t", &["a", "a", "b", "b", "c", "c"]);
        assert_eq!(
            show(&StickyAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3"), ("C2", "tp4 tp5")])
        );
        // Without racks, round-robin.
        assert_eq!(
            show(&StickyAssignor.assign(&topics(&[("t", 6)]), &members)),
            expect(&[("C0", "tp0 tp3"), ("C1", "tp1 tp4"), ("C2", "tp2 tp5")])
        );
    }

    /// A member keeps an owned partition only on its rack: owning each other's, C0 and C1
    /// swap all four.
    #[test]
    fn owned_partitions_off_the_rack_move() {
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t", &["a", "a", "b", "b"]);
        let members = [
            racked(sticky_member("C0", &["t"], "tp2 tp3", 1), "a"),
            racked(sticky_member("C1", &["t"], "tp0 tp1", 1), "b"),
        ];
        assert_eq!(
            show(&StickyAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")])
        );
        // Balance first: C0's rack holds all four, it keeps two.
        on_racks(&mut parts, "t", &["a", "a", "a", "a"]);
        let members = [
            racked(sticky_member("C0", &["t"], "tp0 tp1 tp2 tp3", 1), "a"),
            racked(member("C1", &["t"]), "b"),
        ];
        assert_eq!(
            show(&StickyAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")])
        );
    }

    /// Different subscriptions (the general path): a partition goes to the least-loaded member
    /// on its rack first, the rest as without racks.
    #[test]
    fn general_path_follows_racks() {
        let mut parts = PartitionsPerTopic::new();
        on_racks(&mut parts, "t", &["a", "b"]);
        on_racks(&mut parts, "u", &["b"]);
        let members = [
            racked(member("C0", &["t", "u"]), "a"),
            racked(member("C1", &["t"]), "b"),
        ];
        assert_eq!(
            show(&StickyAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 up0"), ("C1", "tp1")])
        );
        let plain = StickyAssignor.assign(&topics(&[("t", 2), ("u", 1)]), &members);
        assert_eq!(show(&plain), expect(&[("C0", "tp1 up0"), ("C1", "tp0")]));
    }

    #[test]
    fn user_data_round_trips() {
        let data = StickyAssignor
            .subscription_user_data(&owned("bp1 ap2 ap0 ap2"), 7)
            .expect("user data");
        let decoded = StickyAssignorUserData::decode(&data).expect("decodes");
        assert_eq!(decoded.generation, Some(7));
        assert_eq!(
            decoded.previous_assignment,
            vec![
                TopicPartitions::new("a", [0, 2]),
                TopicPartitions::new("b", [1])
            ]
        );
        assert_eq!(
            StickyAssignor.subscription_user_data(&[], NO_GENERATION),
            None
        );
        // Assigned nothing in generation 3 is still worth saying.
        assert!(StickyAssignor.subscription_user_data(&[], 3).is_some());
        let a = crate::assignor::by_name("sticky").expect("sticky exists");
        assert_eq!(
            (a.name(), a.protocol()),
            ("sticky", RebalanceProtocol::Eager)
        );
    }

    #[test]
    fn unreadable_user_data_means_no_previous_assignment() {
        let parts = topics(&[("t", 2)]);
        let mut m = member("C0", &["t"]);
        m.subscription.user_data = Some(Bytes::from_static(&[0, 0]));
        let result = StickyAssignor.assign(&parts, &[m, member("C1", &["t"])]);
        assert_eq!(show(&result), expect(&[("C0", "tp0"), ("C1", "tp1")]));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn fresh_groups((parts, members) in group(false)) {
            let result = StickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            check_sticky_balance(&members, &result)?;
        }

        #[test]
        fn random_previous_ownership((parts, members) in group_with_ownership(false, Report::Sticky)) {
            let result = StickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
        }

        #[test]
        fn equal_subscriptions_balance_and_stick(
            (parts, members) in group_with_ownership(true, Report::Sticky)
        ) {
            let result = StickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            let (min, max) = min_max(&result);
            prop_assert!(max - min <= 1, "min {min} max {max}");
            // Unchanged membership: nothing moves.
            let again = rejoin(&members, &result, Report::Sticky, 4);
            prop_assert_eq!(show(&StickyAssignor.assign(&parts, &again)), show(&result));
            // A new member takes at most its quota, all from the others.
            let mut grown = again.clone();
            let subscribed: Vec<&str> =
                members[0].subscription.topics.iter().map(String::as_str).collect();
            grown.push(member("consumer-new", &subscribed));
            let before = claims(&grown, Report::Sticky);
            let after = StickyAssignor.assign(&parts, &grown);
            check_complete(&parts, &grown, &after)?;
            let total: usize = subscribed_partitions(&parts, &grown).len();
            let quota = total.div_ceil(grown.len());
            prop_assert!(moved(&before, &after).len() <= quota);
        }

        #[test]
        fn stable_groups_do_not_move((parts, members) in group(false)) {
            let first = StickyAssignor.assign(&parts, &members);
            let again = rejoin(&members, &first, Report::Sticky, 1);
            prop_assert_eq!(show(&StickyAssignor.assign(&parts, &again)), show(&first));
        }

        #[test]
        fn racks_keep_the_balance((parts, members) in with_racks(group(false))) {
            let result = StickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            check_sticky_balance(&members, &result)?;
        }

        #[test]
        fn racks_keep_equal_subscriptions_within_one(
            (parts, members) in with_racks(group_with_ownership(true, Report::Sticky))
        ) {
            let result = StickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            let (min, max) = min_max(&result);
            prop_assert!(max - min <= 1, "min {min} max {max}");
        }

        #[test]
        fn racks_with_any_ownership(
            (parts, members) in with_racks(group_with_ownership(false, Report::Sticky))
        ) {
            let result = StickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            let again = rejoin(&members, &result, Report::Sticky, 4);
            check_complete(&parts, &again, &StickyAssignor.assign(&parts, &again))?;
        }

        #[test]
        fn racks_align_when_balance_allows(
            (parts, members) in with_ownership(rack_aligned_group(), Report::Sticky)
        ) {
            let result = StickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &result)?;
            prop_assert_eq!(off_rack(&parts, &members, &result), vec![]);
            // Aligned, nothing moves any more; a member leaving moves only its partitions.
            let again = rejoin(&members, &result, Report::Sticky, 4);
            prop_assert_eq!(show(&StickyAssignor.assign(&parts, &again)), show(&result));
        }

        /// With racks an unchanged group with equal subscriptions keeps every partition on its
        /// member's rack; one off it (placed there for balance) is placed again, and may move,
        /// as in Java. (With different subscriptions, placing it again can make the balancing
        /// move others too, also as in Java.)
        #[test]
        fn stable_groups_with_racks_keep_what_is_on_their_racks(
            (parts, members) in with_racks(group(true))
        ) {
            let first = StickyAssignor.assign(&parts, &members);
            let again = rejoin(&members, &first, Report::Sticky, 1);
            let second = StickyAssignor.assign(&parts, &again);
            check_complete(&parts, &again, &second)?;
            let off: BTreeSet<Tp> =
                off_rack(&parts, &members, &first).into_iter().map(|(_, tp)| tp).collect();
            let moved = moved(&claims(&again, Report::Sticky), &second);
            prop_assert!(moved.is_subset(&off), "moved {moved:?}, off their racks {off:?}");
        }
    }

    /// Java's balance guarantee with any subscriptions: no partition could move from a member
    /// to one with 2+ fewer partitions that subscribes to its topic.
    fn check_sticky_balance(
        members: &[MemberSubscription],
        result: &BTreeMap<String, Assignment>,
    ) -> Result<(), TestCaseError> {
        let flat = flat(result);
        for a in members {
            for b in members {
                let (na, nb) = (flat[&a.member_id].len(), flat[&b.member_id].len());
                if na + 1 < nb {
                    for (t, p) in &flat[&b.member_id] {
                        prop_assert!(
                            !a.subscription.topics.contains(t),
                            "{}p{} could move from {} ({nb}) to {} ({na})",
                            t,
                            p,
                            b.member_id,
                            a.member_id
                        );
                    }
                }
            }
        }
        Ok(())
    }
}
