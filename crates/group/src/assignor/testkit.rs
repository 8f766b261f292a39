//! Test helpers shared by the assignors' tests: building groups, reading results, checking the
//! invariants every assignor keeps, and proptest strategies for random groups.

use std::collections::{BTreeMap, BTreeSet};

use mooring_wire::consumer_protocol::{Assignment, Subscription, TopicPartitions};
use proptest::prelude::*;

use super::{MemberSubscription, PartitionsPerTopic};

/// A (topic, partition).
pub(crate) type Tp = (String, i32);

/// A dynamic member subscribed to `topics`.
pub(crate) fn member(id: &str, topics: &[&str]) -> MemberSubscription {
    MemberSubscription {
        member_id: id.to_owned(),
        group_instance_id: None,
        subscription: Subscription {
            topics: topics.iter().map(|t| (*t).to_owned()).collect(),
            ..Subscription::default()
        },
    }
}

/// Topics with partition counts from pairs, no racks.
pub(crate) fn topics(list: &[(&str, i32)]) -> PartitionsPerTopic {
    let counts: BTreeMap<String, i32> = list.iter().map(|(t, n)| ((*t).to_owned(), *n)).collect();
    counts.into()
}

/// Parses "t0p1" into ("t0", 1).
fn parse_tp(s: &str) -> Tp {
    let at = s.rfind('p').unwrap_or(0);
    (s[..at].to_owned(), s[at + 1..].parse().unwrap_or(-1))
}

/// `TopicPartitions` from "t0p0 t0p1 t1p0".
pub(crate) fn owned(list: &str) -> Vec<TopicPartitions> {
    let mut by_topic: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for (t, p) in list.split_whitespace().map(parse_tp) {
        by_topic.entry(t).or_default().push(p);
    }
    by_topic
        .into_iter()
        .map(|(t, ps)| TopicPartitions::new(t, ps))
        .collect()
}

/// The partitions of an assignment as a set.
pub(crate) fn tps(a: &[TopicPartitions]) -> BTreeSet<Tp> {
    a.iter()
        .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.clone(), p)))
        .collect()
}

/// Each member's partitions as a set.
pub(crate) fn flat(result: &BTreeMap<String, Assignment>) -> BTreeMap<String, BTreeSet<Tp>> {
    result
        .iter()
        .map(|(m, a)| (m.clone(), tps(&a.partitions)))
        .collect()
}

/// Each member's partitions as "t0p0 t0p1" (sorted by topic then partition).
pub(crate) fn show(result: &BTreeMap<String, Assignment>) -> BTreeMap<String, String> {
    flat(result)
        .into_iter()
        .map(|(m, set)| {
            let s: Vec<String> = set.iter().map(|(t, p)| format!("{t}p{p}")).collect();
            (m, s.join(" "))
        })
        .collect()
}

/// The expected `show` output from pairs.
pub(crate) fn expect(list: &[(&str, &str)]) -> BTreeMap<String, String> {
    list.iter()
        .map(|(m, s)| {
            let mut v: Vec<Tp> = s.split_whitespace().map(parse_tp).collect();
            v.sort();
            let s: Vec<String> = v.iter().map(|(t, p)| format!("{t}p{p}")).collect();
            ((*m).to_owned(), s.join(" "))
        })
        .collect()
}

/// Every partition some member subscribes to, of a topic that exists.
pub(crate) fn subscribed_partitions(
    partitions: &PartitionsPerTopic,
    members: &[MemberSubscription],
) -> BTreeSet<Tp> {
    members
        .iter()
        .flat_map(|m| m.subscription.topics.iter())
        .filter_map(|t| partitions.count(t).map(|n| (t, n)))
        .flat_map(|(t, n)| (0..n).map(move |p| (t.clone(), p)))
        .collect()
}

/// The invariants of every assignor: each member has an entry and nothing else does; a member
/// only gets partitions of existing topics it subscribes to; no partition goes to two members.
/// Returns the partitions assigned.
pub(crate) fn check_valid(
    partitions: &PartitionsPerTopic,
    members: &[MemberSubscription],
    result: &BTreeMap<String, Assignment>,
) -> Result<BTreeSet<Tp>, TestCaseError> {
    let ids: BTreeSet<&str> = members.iter().map(|m| m.member_id.as_str()).collect();
    let got: BTreeSet<&str> = result.keys().map(String::as_str).collect();
    prop_assert_eq!(ids, got, "one entry per member");
    let mut seen = BTreeSet::new();
    for m in members {
        let Some(a) = result.get(&m.member_id) else {
            continue;
        };
        prop_assert!(a.user_data.is_none());
        for (t, p) in tps(&a.partitions) {
            prop_assert!(
                m.subscription.topics.contains(&t),
                "{} got {t}p{p} without subscribing",
                m.member_id
            );
            let n = partitions.count(&t).unwrap_or(0);
            prop_assert!((0..n).contains(&p), "{t}p{p} does not exist");
            prop_assert!(seen.insert((t.clone(), p)), "{t}p{p} assigned twice");
        }
    }
    Ok(seen)
}

/// [`check_valid`] plus: every subscribed partition of an existing topic is assigned.
pub(crate) fn check_complete(
    partitions: &PartitionsPerTopic,
    members: &[MemberSubscription],
    result: &BTreeMap<String, Assignment>,
) -> Result<(), TestCaseError> {
    let assigned = check_valid(partitions, members, result)?;
    prop_assert_eq!(assigned, subscribed_partitions(partitions, members));
    Ok(())
}

/// The smallest and largest partition counts of the members.
pub(crate) fn min_max(result: &BTreeMap<String, Assignment>) -> (usize, usize) {
    let counts = result.values().map(|a| tps(&a.partitions).len());
    let min = counts.clone().min().unwrap_or(0);
    let max = counts.max().unwrap_or(0);
    (min, max)
}

/// A random group: topic partition counts (1–5 topics of 1–16 partitions; members may also
/// subscribe to a topic that does not exist) and 1–8 members with non-empty subscriptions, or
/// all the same subscription when `same` is set.
pub(crate) fn group(
    same: bool,
) -> impl Strategy<Value = (PartitionsPerTopic, Vec<MemberSubscription>)> {
    (prop::collection::vec(1..=16i32, 1..=5), 1..=8usize)
        .prop_flat_map(move |(counts, n_members)| {
            let n_topics = counts.len();
            // Subscription masks over the topics plus one missing topic (bit n_topics).
            let mask = 1u32..(1u32 << (n_topics + 1));
            let masks = if same {
                mask.prop_map(move |m| vec![m; n_members]).boxed()
            } else {
                prop::collection::vec(mask, n_members).boxed()
            };
            (Just(counts), masks)
        })
        .prop_map(|(counts, masks)| {
            let partitions: BTreeMap<String, i32> = counts
                .iter()
                .enumerate()
                .map(|(i, &n)| (format!("t{i}"), n))
                .collect();
            let members = masks
                .iter()
                .enumerate()
                .map(|(i, &mask)| {
                    let topics: Vec<String> = (0..=counts.len())
                        .filter(|b| mask & (1 << b) != 0)
                        .map(|b| format!("t{b}"))
                        .collect();
                    let refs: Vec<&str> = topics.iter().map(String::as_str).collect();
                    member(&format!("consumer-{i}"), &refs)
                })
                .collect();
            (partitions.into(), members)
        })
}

/// Whose ownership a test member reports, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// `sticky`: `StickyAssignorUserData` v1 in the user data, generation also in the
    /// subscription (as Java's `ConsumerCoordinator` sends it).
    Sticky,
    /// `cooperative-sticky`: owned partitions and the subscription's generation (v2+).
    Cooperative,
}

/// `m` reporting `owned` at `generation`.
pub(crate) fn reporting(
    mut m: MemberSubscription,
    how: Report,
    owned: Vec<TopicPartitions>,
    generation: i32,
) -> MemberSubscription {
    use super::Assignor;
    m.subscription.generation_id = generation;
    match how {
        Report::Sticky => {
            m.subscription.user_data =
                super::StickyAssignor.subscription_user_data(&owned, generation);
            m.subscription.owned_partitions = Vec::new();
        }
        Report::Cooperative => {
            m.subscription.user_data =
                super::CooperativeStickyAssignor.subscription_user_data(&owned, generation);
            m.subscription.owned_partitions = owned;
        }
    }
    m
}

/// The members of the next rebalance: each reports what `result` gave it, at `generation`.
pub(crate) fn rejoin(
    members: &[MemberSubscription],
    result: &BTreeMap<String, Assignment>,
    how: Report,
    generation: i32,
) -> Vec<MemberSubscription> {
    members
        .iter()
        .map(|m| {
            let owned = result
                .get(&m.member_id)
                .map(|a| a.partitions.clone())
                .unwrap_or_default();
            reporting(m.clone(), how, owned, generation)
        })
        .collect()
}

/// Who owns what before the rebalance, as reported: partition → members claiming it.
pub(crate) fn claims(members: &[MemberSubscription], how: Report) -> BTreeMap<Tp, Vec<String>> {
    let mut out: BTreeMap<Tp, Vec<String>> = BTreeMap::new();
    for m in members {
        let owned = match how {
            Report::Cooperative => m.subscription.owned_partitions.clone(),
            Report::Sticky => m
                .subscription
                .user_data
                .as_deref()
                .and_then(|d| {
                    mooring_wire::consumer_protocol::StickyAssignorUserData::decode(d).ok()
                })
                .map(|d| d.previous_assignment)
                .unwrap_or_default(),
        };
        for tp in tps(&owned) {
            out.entry(tp).or_default().push(m.member_id.clone());
        }
    }
    out
}

/// Partitions assigned to a member other than the one (sole claimant) that owned them.
pub(crate) fn moved(
    before: &BTreeMap<Tp, Vec<String>>,
    result: &BTreeMap<String, Assignment>,
) -> BTreeSet<Tp> {
    flat(result)
        .into_iter()
        .flat_map(|(m, set)| set.into_iter().map(move |tp| (m.clone(), tp)))
        .filter(|(m, tp)| before.get(tp).is_some_and(|owners| !owners.contains(m)))
        .map(|(_, tp)| tp)
        .collect()
}

/// A random group with random previous ownership: each existing partition owned by one random
/// member or none, a few extra (conflicting or stale) claims, and random generations 1–3.
pub(crate) fn group_with_ownership(
    same: bool,
    how: Report,
) -> impl Strategy<Value = (PartitionsPerTopic, Vec<MemberSubscription>)> {
    with_ownership(group(same), how)
}

/// `groups` with random previous ownership, as [`group_with_ownership`] has it.
pub(crate) fn with_ownership(
    groups: impl Strategy<Value = (PartitionsPerTopic, Vec<MemberSubscription>)>,
    how: Report,
) -> impl Strategy<Value = (PartitionsPerTopic, Vec<MemberSubscription>)> {
    (
        groups,
        prop::collection::vec(prop::option::of(0..8usize), 80),
        prop::collection::vec((0..8usize, 0..6usize, 0..16i32), 0..4),
        prop::collection::vec(1..=3i32, 8),
    )
        .prop_map(move |((parts, members), owners, extra, gens)| {
            let n = members.len();
            let mut owned: Vec<Vec<Tp>> = vec![Vec::new(); n];
            let all: Vec<Tp> = parts
                .counts()
                .into_iter()
                .flat_map(|(t, c)| (0..c).map(move |p| (t.clone(), p)))
                .collect();
            for (tp, owner) in all.iter().zip(&owners) {
                if let Some(o) = owner {
                    owned[o % n].push(tp.clone());
                }
            }
            for (o, t, p) in extra {
                owned[o % n].push((format!("t{t}"), p));
            }
            let members = members
                .into_iter()
                .enumerate()
                .map(|(i, m)| {
                    let list: String = owned[i].iter().map(|(t, p)| format!("{t}p{p} ")).collect();
                    reporting(m, how, self::owned(&list), gens[i % gens.len()])
                })
                .collect();
            (parts, members)
        })
}

/// The racks of the rack strategies.
const RACKS: [&str; 3] = ["rack-a", "rack-b", "rack-c"];

/// `groups` with racks: 1–3 racks, each partition's replicas on a random set of them (now and
/// then on none), each member in one of them or (now and then) in none.
pub(crate) fn with_racks(
    groups: impl Strategy<Value = (PartitionsPerTopic, Vec<MemberSubscription>)>,
) -> impl Strategy<Value = (PartitionsPerTopic, Vec<MemberSubscription>)> {
    (
        groups,
        1..=RACKS.len(),
        prop::collection::vec(0u8..8, 80),
        prop::collection::vec(0..=RACKS.len(), 8),
    )
        .prop_map(|((parts, mut members), n_racks, masks, member_racks)| {
            let racks = &RACKS[..n_racks];
            let mut out = PartitionsPerTopic::new();
            let mut masks = masks.iter().cycle();
            for (topic, partitions) in parts.iter() {
                let list = partitions
                    .iter()
                    .map(|_| {
                        let mask = masks.next().copied().unwrap_or(0);
                        racks
                            .iter()
                            .enumerate()
                            .filter(|(b, _)| mask & (1 << b) != 0)
                            .map(|(_, r)| (*r).to_owned())
                            .collect()
                    })
                    .collect();
                out.insert(topic, list);
            }
            for (m, r) in members.iter_mut().zip(member_racks) {
                m.subscription.rack_id = racks.get(r).map(|r| (*r).to_owned());
            }
            (out, members)
        })
}

/// A layout in which balance allows every partition a member in its replicas' rack: every
/// member in a rack (1–3 of them in each of 1–3 racks) and subscribed to all 1–3 topics, each
/// partition's replicas on one rack, and each rack holding exactly its members' share
/// (`quota` partitions a member) of every topic, partition `p` on the same rack in each.
pub(crate) fn rack_aligned_group(
) -> impl Strategy<Value = (PartitionsPerTopic, Vec<MemberSubscription>)> {
    (
        prop::collection::vec(1..=3usize, 1..=RACKS.len()),
        1..=3usize,
        1..=3usize,
    )
        .prop_flat_map(|(per_rack, quota, n_topics)| {
            let layout: Vec<usize> = per_rack
                .iter()
                .enumerate()
                .flat_map(|(r, &n)| std::iter::repeat_n(r, n * quota))
                .collect();
            let mut racks: Vec<usize> = per_rack
                .iter()
                .enumerate()
                .flat_map(|(r, &n)| std::iter::repeat_n(r, n))
                .collect();
            racks.reverse();
            (
                Just(layout).prop_shuffle(),
                Just(racks).prop_shuffle(),
                Just(n_topics),
            )
        })
        .prop_map(|(layout, member_racks, n_topics)| {
            let names: Vec<String> = (0..n_topics).map(|i| format!("t{i}")).collect();
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut parts = PartitionsPerTopic::new();
            for name in &names {
                let racks = layout
                    .iter()
                    .map(|&r| BTreeSet::from([RACKS[r].to_owned()]))
                    .collect();
                parts.insert(name.as_str(), racks);
            }
            let members = member_racks
                .iter()
                .enumerate()
                .map(|(i, &r)| {
                    let mut m = member(&format!("consumer-{i}"), &refs);
                    m.subscription.rack_id = Some(RACKS[r].to_owned());
                    m
                })
                .collect();
            (parts, members)
        })
}

/// The partitions assigned to a member none of whose racks hold a replica of them, when the
/// member has a rack.
pub(crate) fn off_rack(
    partitions: &PartitionsPerTopic,
    members: &[MemberSubscription],
    result: &BTreeMap<String, Assignment>,
) -> Vec<(String, Tp)> {
    let flat = flat(result);
    members
        .iter()
        .filter_map(|m| Some((m, m.subscription.rack_id.as_deref()?)))
        .flat_map(|(m, rack)| {
            flat.get(&m.member_id)
                .into_iter()
                .flatten()
                .filter(move |(t, p)| !partitions.replica_racks(t, *p).contains(rack))
                .map(move |tp| (m.member_id.clone(), tp.clone()))
        })
        .collect()
}
