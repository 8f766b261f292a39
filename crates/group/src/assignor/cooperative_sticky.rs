//! `cooperative-sticky`: Java's `org.apache.kafka.clients.consumer.CooperativeStickyAssignor`
//! (KIP-429), the sticky algorithm under the cooperative rebalance protocol.
//!
//! Members keep their partitions while they rebalance, and tell the leader what they own in the
//! subscription's owned partitions, with the generation (the subscription's v2 field, KIP-792, or
//! failing that this assignor's user data: the generation as one int32). The leader computes the
//! sticky assignment ([`super::sticky_core`]) and then leaves out every partition that would go
//! from one member straight to another: its owner sees it missing from its assignment and
//! revokes it, and because something was revoked the members join again at once; in that second
//! rebalance nobody owns the partition and it goes to its new member. A partition is therefore
//! never owned by two members at the same time.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use mooring_wire::consumer_protocol::{
    encode_cooperative_sticky_generation, Assignment, TopicPartitions,
};

use super::sticky_core::{self, Flavor, Tp};
use super::{
    normalize, Assignor, Member, MemberSubscription, PartitionsPerTopic, RebalanceProtocol,
};

/// Java's `CooperativeStickyAssignor` (`cooperative-sticky`).
#[derive(Debug, Clone, Copy, Default)]
pub struct CooperativeStickyAssignor;

impl Assignor for CooperativeStickyAssignor {
    fn name(&self) -> &'static str {
        "cooperative-sticky"
    }

    fn protocol(&self) -> RebalanceProtocol {
        RebalanceProtocol::Cooperative
    }

    /// The generation as one int32 (`-1` before the first), always sent, as Java does.
    fn subscription_user_data(&self, _owned: &[TopicPartitions], generation: i32) -> Option<Bytes> {
        Some(encode_cooperative_sticky_generation(generation))
    }

    fn assign(
        &self,
        partitions_per_topic: &PartitionsPerTopic,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment> {
        let members = normalize(members);
        let mut outcome = sticky_core::assign(Flavor::Cooperative, partitions_per_topic, &members);
        let transferring = match outcome.transferring.take() {
            Some(t) => t,
            None => transferring_ownership(&members, &outcome.assignment),
        };
        // Java's `adjustAssignment`: what changes hands waits for the follow-up rebalance.
        for (tp, member) in &transferring {
            if let Some(list) = outcome.assignment.get_mut(member) {
                list.retain(|x| x != tp);
            }
        }
        outcome.to_assignments(&members)
    }
}

/// Java's `computePartitionsTransferringOwnership`: the partitions some member gains that some
/// member (by the ownership it reported) loses.
fn transferring_ownership<'a>(
    members: &[Member<'a>],
    assignment: &BTreeMap<&'a str, Vec<Tp<'a>>>,
) -> BTreeMap<Tp<'a>, &'a str> {
    let mut added: BTreeMap<Tp<'a>, &'a str> = BTreeMap::new();
    let mut revoked: BTreeSet<(&str, i32)> = BTreeSet::new();
    for m in members {
        let owned: BTreeSet<(&str, i32)> = m
            .subscription
            .owned_partitions
            .iter()
            .flat_map(|tp| tp.partitions.iter().map(move |&p| (tp.topic.as_str(), p)))
            .collect();
        let assigned: BTreeSet<Tp<'a>> = assignment
            .get(m.id)
            .map(|l| l.iter().copied().collect())
            .unwrap_or_default();
        for &tp in &assigned {
            if !owned.contains(&tp) {
                added.insert(tp, m.id);
            }
        }
        revoked.extend(owned.difference(&assigned).copied());
    }
    added.retain(|tp, _| revoked.contains(tp));
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignor::testkit::*;
    use crate::assignor::{PartitionsPerTopic, StickyAssignor};
    use mooring_wire::consumer_protocol::NO_GENERATION;
    use proptest::prelude::*;

    fn coop(id: &str, subscribed: &[&str], had: &str, generation: i32) -> MemberSubscription {
        reporting(
            member(id, subscribed),
            Report::Cooperative,
            owned(had),
            generation,
        )
    }

    /// KIP-429's scale-out: C2 joins C0 and C1. First rebalance: C0 and C1 keep what they keep,
    /// lose what moves, and C2 gets nothing yet (everything it would get is still owned). They
    /// rejoin at once; second rebalance: C2 gets the revoked partitions.
    #[test]
    fn two_rounds_when_a_member_joins() {
        let parts = topics(&[("t", 6)]);
        let round1 = [
            coop("C0", &["t"], "tp0 tp1 tp2", 1),
            coop("C1", &["t"], "tp3 tp4 tp5", 1),
            coop("C2", &["t"], "", NO_GENERATION),
        ];
        let first = CooperativeStickyAssignor.assign(&parts, &round1);
        assert_eq!(
            show(&first),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp3 tp4"), ("C2", "")])
        );
        // What eager `sticky` would hand out in one go, for comparison.
        let eager = StickyAssignor.assign(
            &parts,
            &[
                reporting(
                    member("C0", &["t"]),
                    Report::Sticky,
                    owned("tp0 tp1 tp2"),
                    1,
                ),
                reporting(
                    member("C1", &["t"]),
                    Report::Sticky,
                    owned("tp3 tp4 tp5"),
                    1,
                ),
                member("C2", &["t"]),
            ],
        );
        assert_eq!(show(&eager)["C2"], "tp2 tp5");

        let round2 = rejoin(&round1, &first, Report::Cooperative, 2);
        let second = CooperativeStickyAssignor.assign(&parts, &round2);
        assert_eq!(
            show(&second),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp3 tp4"), ("C2", "tp2 tp5")])
        );
        // Stable from then on.
        let round3 = rejoin(&round2, &second, Report::Cooperative, 3);
        assert_eq!(
            show(&CooperativeStickyAssignor.assign(&parts, &round3)),
            show(&second)
        );
    }

    /// When a member leaves, its partitions are owned by nobody and move in one rebalance.
    #[test]
    fn one_round_when_a_member_leaves() {
        let parts = topics(&[("t", 6)]);
        let members = [
            coop("C0", &["t"], "tp0 tp1", 4),
            coop("C2", &["t"], "tp2 tp5", 4),
        ];
        assert_eq!(
            show(&CooperativeStickyAssignor.assign(&parts, &members)),
            expect(&[("C0", "tp0 tp1 tp3"), ("C2", "tp2 tp5 tp4")])
        );
    }

    /// Owning each other's partitions across racks, C0 and C1 give them all up first: every
    /// partition changes hands, so the first rebalance assigns nothing and the second all.
    #[test]
    fn partitions_off_the_rack_move_in_two_rounds() {
        let mut parts = PartitionsPerTopic::new();
        let rack = |r: &str| std::collections::BTreeSet::from([r.to_owned()]);
        parts.insert("t", vec![rack("a"), rack("a"), rack("b"), rack("b")]);
        let mut c0 = coop("C0", &["t"], "tp2 tp3", 1);
        c0.subscription.rack_id = Some("a".into());
        let mut c1 = coop("C1", &["t"], "tp0 tp1", 1);
        c1.subscription.rack_id = Some("b".into());
        let round1 = [c0, c1];
        let first = CooperativeStickyAssignor.assign(&parts, &round1);
        assert_eq!(show(&first), expect(&[("C0", ""), ("C1", "")]));
        let round2 = rejoin(&round1, &first, Report::Cooperative, 2);
        assert_eq!(
            show(&CooperativeStickyAssignor.assign(&parts, &round2)),
            expect(&[("C0", "tp0 tp1"), ("C1", "tp2 tp3")])
        );
    }

    /// The general path (different subscriptions) computes the moving partitions afterwards.
    #[test]
    fn general_path_withholds_moving_partitions() {
        let parts = topics(&[("a", 4), ("b", 2)]);
        // C0 owns all of a; C1 (a and b) owns b. Balance wants one of a's partitions at C1.
        let members = [
            coop("C0", &["a"], "ap0 ap1 ap2 ap3", 2),
            coop("C1", &["a", "b"], "bp0 bp1", 2),
        ];
        let eager = StickyAssignor.assign(
            &parts,
            &[
                reporting(
                    member("C0", &["a"]),
                    Report::Sticky,
                    owned("ap0 ap1 ap2 ap3"),
                    2,
                ),
                reporting(
                    member("C1", &["a", "b"]),
                    Report::Sticky,
                    owned("bp0 bp1"),
                    2,
                ),
            ],
        );
        let result = CooperativeStickyAssignor.assign(&parts, &members);
        let (eager, coop) = (flat(&eager), flat(&result));
        assert_eq!(coop["C0"], eager["C0"]);
        assert_eq!(eager["C0"].len(), 3);
        // C1's new partition of a is withheld this round.
        assert_eq!(show(&result)["C1"], "bp0 bp1");
    }

    #[test]
    fn generation_comes_from_the_subscription_or_user_data() {
        use crate::assignor::sticky_core::{Flavor, MemberData};
        let mut m = coop("C0", &["t"], "tp0", 6);
        assert_eq!(
            MemberData::read(Flavor::Cooperative, &m.subscription).generation,
            Some(6)
        );
        m.subscription.generation_id = NO_GENERATION;
        m.subscription.user_data = Some(encode_cooperative_sticky_generation(4));
        assert_eq!(
            MemberData::read(Flavor::Cooperative, &m.subscription).generation,
            Some(4)
        );
        m.subscription.user_data = Some(Bytes::from_static(&[1]));
        assert_eq!(
            MemberData::read(Flavor::Cooperative, &m.subscription).generation,
            Some(NO_GENERATION)
        );
        m.subscription.user_data = None;
        assert_eq!(
            MemberData::read(Flavor::Cooperative, &m.subscription).generation,
            None
        );

        assert_eq!(
            CooperativeStickyAssignor.subscription_user_data(&[], NO_GENERATION),
            Some(Bytes::from_static(&[0xff, 0xff, 0xff, 0xff]))
        );
        let a = crate::assignor::by_name("cooperative-sticky").expect("exists");
        assert_eq!(
            (a.name(), a.protocol()),
            ("cooperative-sticky", RebalanceProtocol::Cooperative)
        );
    }

    /// The partitions some member reported owning that it is not assigned now.
    fn released(
        members: &[MemberSubscription],
        result: &BTreeMap<String, Assignment>,
    ) -> BTreeSet<Tp2> {
        let flat = flat(result);
        members
            .iter()
            .flat_map(|m| {
                let mine = flat.get(&m.member_id).cloned().unwrap_or_default();
                tps(&m.subscription.owned_partitions)
                    .into_iter()
                    .filter(move |tp| !mine.contains(tp))
            })
            .collect()
    }

    type Tp2 = (String, i32);

    /// The same group reporting through `sticky`'s user data.
    fn as_eager(members: &[MemberSubscription]) -> Vec<MemberSubscription> {
        members
            .iter()
            .map(|m| {
                let owned = m.subscription.owned_partitions.clone();
                reporting(
                    m.clone(),
                    Report::Sticky,
                    owned,
                    m.subscription.generation_id,
                )
            })
            .collect()
    }

    /// What a cooperative rebalance leaves out is what is in transit, and follow-up rebalances
    /// complete the assignment. With racks (`racks`) they need not: a partition placed off its
    /// member's rack for balance is placed again in every rebalance and may be handed to another
    /// member, in transit again, as in Java; every round still leaves out only what is in
    /// transit.
    fn check_in_transit(
        parts: &PartitionsPerTopic,
        members: &[MemberSubscription],
        racks: bool,
    ) -> Result<(), TestCaseError> {
        let result = CooperativeStickyAssignor.assign(parts, members);
        let assigned = check_valid(parts, members, &result)?;
        let missing: BTreeSet<Tp2> = subscribed_partitions(parts, members)
            .difference(&assigned)
            .cloned()
            .collect();
        // Only partitions that someone owned and is giving up are left out...
        prop_assert!(missing.is_subset(&released(members, &result)));
        // ...and they are exactly what the full sticky assignment moves between members.
        let full = StickyAssignor.assign(parts, &as_eager(members));
        check_complete(parts, members, &full)?;
        let full_flat = flat(&full);
        for (m, set) in flat(&result) {
            prop_assert!(set.is_subset(&full_flat[&m]));
        }
        let conflicts = claims(members, Report::Cooperative)
            .values()
            .any(|o| o.len() > 1);
        if !conflicts {
            let expected = moved(&claims(members, Report::Cooperative), &full);
            prop_assert_eq!(&missing, &expected);
            // Nobody is handed a partition another member still owns.
            prop_assert!(moved(&claims(members, Report::Cooperative), &result).is_empty());
        }
        // Follow-up rebalances, owners having revoked, complete the assignment: with equal
        // subscriptions the next one does (see below); with different ones the general
        // path may still move a few partitions in the second round, as in Java.
        let wanted = subscribed_partitions(parts, members);
        let (mut round, mut result) = (members.to_vec(), result);
        for generation in 4..8 {
            round = rejoin(&round, &result, Report::Cooperative, generation);
            result = CooperativeStickyAssignor.assign(parts, &round);
            let assigned = check_valid(parts, &round, &result)?;
            let missing: BTreeSet<Tp2> = wanted.difference(&assigned).cloned().collect();
            prop_assert!(missing.is_subset(&released(&round, &result)));
            if missing.is_empty() && !racks {
                break;
            }
        }
        if !racks {
            check_complete(parts, &round, &result)?;
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn in_transit_partitions_only(
            (parts, members) in group_with_ownership(false, Report::Cooperative)
        ) {
            check_in_transit(&parts, &members, false)?;
        }

        #[test]
        fn racks_in_transit_partitions_only(
            (parts, members) in with_racks(group_with_ownership(false, Report::Cooperative))
        ) {
            check_in_transit(&parts, &members, true)?;
        }

        #[test]
        fn racks_align_when_balance_allows(
            (parts, members) in with_ownership(rack_aligned_group(), Report::Cooperative)
        ) {
            let first = CooperativeStickyAssignor.assign(&parts, &members);
            prop_assert!(moved(&claims(&members, Report::Cooperative), &first).is_empty());
            let round2 = rejoin(&members, &first, Report::Cooperative, 4);
            let second = CooperativeStickyAssignor.assign(&parts, &round2);
            check_complete(&parts, &round2, &second)?;
            prop_assert_eq!(off_rack(&parts, &round2, &second), vec![]);
            let round3 = rejoin(&round2, &second, Report::Cooperative, 5);
            prop_assert_eq!(
                show(&CooperativeStickyAssignor.assign(&parts, &round3)),
                show(&second)
            );
        }

        #[test]
        fn equal_subscriptions_converge_and_stick(
            (parts, members) in group_with_ownership(true, Report::Cooperative)
        ) {
            let first = CooperativeStickyAssignor.assign(&parts, &members);
            let round2 = rejoin(&members, &first, Report::Cooperative, 4);
            let second = CooperativeStickyAssignor.assign(&parts, &round2);
            check_complete(&parts, &round2, &second)?;
            let (min, max) = min_max(&second);
            prop_assert!(max - min <= 1, "min {min} max {max}");
            let round3 = rejoin(&round2, &second, Report::Cooperative, 5);
            prop_assert_eq!(show(&CooperativeStickyAssignor.assign(&parts, &round3)), show(&second));

            // A member joins: over both rounds, at most its quota changes hands.
            let subscribed: Vec<&str> =
                members[0].subscription.topics.iter().map(String::as_str).collect();
            let mut grown = round3.clone();
            grown.push(member("consumer-new", &subscribed));
            let before = claims(&grown, Report::Cooperative);
            let r1 = CooperativeStickyAssignor.assign(&parts, &grown);
            prop_assert!(moved(&before, &r1).is_empty());
            let r2 = CooperativeStickyAssignor.assign(&parts, &rejoin(&grown, &r1, Report::Cooperative, 6));
            check_complete(&parts, &grown, &r2)?;
            let quota = subscribed_partitions(&parts, &grown).len().div_ceil(grown.len());
            prop_assert!(moved(&before, &r2).len() <= quota);
        }

        #[test]
        fn stable_groups_do_not_move((parts, members) in group(false)) {
            let first = CooperativeStickyAssignor.assign(&parts, &members);
            check_complete(&parts, &members, &first)?;
            let again = rejoin(&members, &first, Report::Cooperative, 1);
            prop_assert_eq!(show(&CooperativeStickyAssignor.assign(&parts, &again)), show(&first));
        }
    }
}
