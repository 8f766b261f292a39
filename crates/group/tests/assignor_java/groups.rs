//! The random groups of the Java cross-check: brokers with racks, topics with replicas on them,
//! members with subscriptions, racks, generations and previous ownership, and what a leader
//! gets of them (the Metadata response, each member's Subscription bytes per assignor).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use base64::Engine as _;
use bytes::BytesMut;
use mooring_group::assignor;
use mooring_wire::consumer_protocol::{Subscription, TopicPartitions, NO_GENERATION};
use mooring_wire::messages::metadata::{
    MetadataResponseBroker, MetadataResponsePartition, MetadataResponseTopic,
};
use mooring_wire::messages::MetadataResponse;
use serde_json::json;

/// SplitMix64: a small generator whose sequence depends on the seed alone.
#[derive(Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True `percent` times in a hundred.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn shuffle<T>(&mut self, list: &mut [T]) {
        for i in (1..list.len()).rev() {
            list.swap(i, self.below(i + 1));
        }
    }

    /// A random non-empty subset of `items`, in random order.
    fn subset<T: Clone>(&mut self, items: &[T]) -> Vec<T> {
        let mut out: Vec<T> = items.to_vec();
        self.shuffle(&mut out);
        out.truncate(1 + self.below(items.len()));
        out
    }
}

#[derive(Debug, Clone)]
pub struct Broker {
    pub id: i32,
    pub rack: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Topic {
    pub name: String,
    /// Each partition's replica broker ids.
    pub replicas: Vec<Vec<i32>>,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub id: String,
    pub instance: Option<String>,
    /// `client.rack` as configured (possibly empty); sent only from Subscription v3.
    pub rack: Option<String>,
    pub topics: Vec<String>,
    /// The Subscription version the member sends.
    pub version: i16,
    pub generation: i32,
    pub owned: Vec<(String, i32)>,
}

#[derive(Debug, Clone)]
pub struct Group {
    pub brokers: Vec<Broker>,
    pub topics: Vec<Topic>,
    pub members: Vec<Member>,
    /// Whether the members own what our sticky assignors gave them in earlier rebalances of
    /// this group ([`Group::rejoin_after`]).
    pub rejoined: bool,
}

const RACKS: [&str; 4] = ["rack-a", "rack-b", "rack-c", "rack-d"];
const TOPICS: [&str; 8] = [
    "t0",
    "t1",
    "t2",
    "orders",
    "orders-eu",
    "payments",
    "Z9",
    "a",
];
/// Broker ids replicas may name that no broker in the metadata has (offline brokers).
const OFFLINE: i32 = 100;

impl Group {
    pub fn random(rng: &mut Rng, index: usize) -> Group {
        let racks = &RACKS[..1 + rng.below(RACKS.len())];
        let layout = rng.below(10);
        let brokers = random_brokers(rng, racks, layout);
        let mut names: Vec<&str> = TOPICS.to_vec();
        rng.shuffle(&mut names);
        let topics: Vec<Topic> = names[..1 + rng.below(4)]
            .iter()
            .map(|name| Topic {
                name: (*name).to_owned(),
                replicas: (0..1 + rng.below(12))
                    .map(|_| random_replicas(rng, &brokers, racks, layout))
                    .collect(),
            })
            .collect();
        let members = random_members(rng, index, racks, &topics);
        let mut group = Group {
            brokers,
            topics,
            members,
            rejoined: false,
        };
        // Rejoining is worth most where racks matter.
        group.rejoined = rng.chance(if group.rack_aware() { 40 } else { 10 });
        if group.rejoined {
            let assignor = ["sticky", "cooperative-sticky"][rng.below(2)];
            group.rejoin_after(assignor, 1 + i32::try_from(rng.below(3)).unwrap());
        } else {
            random_ownership(rng, &group.topics, &mut group.members);
        }
        group
    }

    /// A later rebalance of an unchanged group: `rounds` rebalances by our `assignor` from a
    /// new group, each member then owning what the last gave it (with racks a partition off its
    /// member's rack is placed again and may move; under `cooperative-sticky` partitions in
    /// transit are owned by nobody).
    fn rejoin_after(&mut self, assignor: &str, rounds: i32) {
        let metadata = mooring_client::metadata::Metadata::from_response(&self.metadata_response());
        let topics: Vec<String> = self.subscribed_topics().into_iter().collect();
        let partitions = metadata.partitions_per_topic(&topics);
        let a = assignor::by_name(assignor).expect("a built-in assignor");
        for generation in 1..=rounds {
            let members: Vec<assignor::MemberSubscription> = self
                .members
                .iter()
                .map(|m| {
                    let bytes = bytes::Bytes::from(self.subscription_bytes(m, assignor));
                    assignor::MemberSubscription {
                        member_id: m.id.clone(),
                        group_instance_id: m.instance.clone(),
                        subscription: Subscription::decode(&bytes).expect("decodes").1,
                    }
                })
                .collect();
            let result = a.assign(&partitions, &members);
            for m in &mut self.members {
                m.generation = generation;
                m.owned = result
                    .get(&m.id)
                    .into_iter()
                    .flat_map(|a| &a.partitions)
                    .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.clone(), p)))
                    .collect();
            }
        }
    }

    /// What each member owns.
    pub fn owned(&self) -> BTreeMap<String, BTreeSet<(String, i32)>> {
        self.members
            .iter()
            .map(|m| (m.id.clone(), m.owned.iter().cloned().collect()))
            .collect()
    }

    pub fn subscribed_topics(&self) -> BTreeSet<String> {
        self.members
            .iter()
            .flat_map(|m| m.topics.iter().cloned())
            .collect()
    }

    /// The Metadata response the leader's refresh returns (Java gets the same, as its
    /// `MetadataResponseData`).
    pub fn metadata_response(&self) -> MetadataResponse {
        MetadataResponse {
            brokers: self
                .brokers
                .iter()
                .map(|b| MetadataResponseBroker {
                    node_id: b.id,
                    host: format!("broker-{}", b.id),
                    port: 9092,
                    rack: b.rack.clone(),
                    ..Default::default()
                })
                .collect(),
            cluster_id: Some("assignor-check".into()),
            topics: self
                .topics
                .iter()
                .map(|t| MetadataResponseTopic {
                    name: Some(t.name.clone()),
                    partitions: t
                        .replicas
                        .iter()
                        .enumerate()
                        .map(|(p, replicas)| MetadataResponsePartition {
                            partition_index: i32::try_from(p).unwrap(),
                            leader_id: replicas.first().copied().unwrap_or(-1),
                            replica_nodes: replicas.clone(),
                            isr_nodes: replicas.clone(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    /// What `m` sends for `assignor` in JoinGroup: its topics, the assignor's user data, what it
    /// owns (only under the cooperative protocol: an eager member has revoked everything before
    /// it joins), its generation and rack, all at the member's Subscription version.
    pub fn subscription_bytes(&self, m: &Member, assignor: &str) -> Vec<u8> {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in &m.owned {
            by_topic.entry(t).or_default().push(*p);
        }
        let owned: Vec<TopicPartitions> = by_topic
            .into_iter()
            .map(|(t, ps)| TopicPartitions::new(t, ps))
            .collect();
        let a = assignor::by_name(assignor).expect("a built-in assignor");
        let subscription = Subscription {
            topics: m.topics.clone(),
            user_data: a.subscription_user_data(&owned, m.generation),
            owned_partitions: if assignor == "cooperative-sticky" {
                owned
            } else {
                Vec::new()
            },
            generation_id: m.generation,
            rack_id: m.rack.clone(),
        }
        .for_version(m.version);
        let mut buf = BytesMut::new();
        subscription.encode(m.version, &mut buf).expect("encodes");
        buf.to_vec()
    }

    /// `AssignorCheck`'s input line.
    pub fn to_json(&self) -> serde_json::Value {
        let b64 = base64::engine::general_purpose::STANDARD;
        let members: Vec<serde_json::Value> = self
            .members
            .iter()
            .map(|m| {
                let subscriptions: serde_json::Map<String, serde_json::Value> = super::ASSIGNORS
                    .iter()
                    .map(|a| {
                        (
                            (*a).to_owned(),
                            b64.encode(self.subscription_bytes(m, a)).into(),
                        )
                    })
                    .collect();
                json!({"id": m.id, "instance": m.instance, "subscriptions": subscriptions})
            })
            .collect();
        json!({
            "brokers": self.brokers.iter().map(|b| json!({"id": b.id, "rack": b.rack})).collect::<Vec<_>>(),
            "topics": self.topics.iter().map(|t| json!({"name": t.name, "replicas": t.replicas})).collect::<Vec<_>>(),
            "members": members,
        })
    }

    /// The racks of a partition's replicas (brokers the metadata lists with a rack).
    fn replica_racks(&self, replicas: &[i32]) -> BTreeSet<&str> {
        replicas
            .iter()
            .filter_map(|id| self.brokers.iter().find(|b| b.id == *id)?.rack.as_deref())
            .collect()
    }

    /// The racks members send (v3, not empty).
    fn member_racks(&self) -> BTreeSet<&str> {
        self.members
            .iter()
            .filter(|m| m.version >= 3)
            .filter_map(|m| m.rack.as_deref().filter(|r| !r.is_empty()))
            .collect()
    }

    /// Whether the sticky assignors place this group rack-aware (KIP-881's condition): some
    /// member rack is a replica rack and some subscribed partition is not on every replica rack.
    pub fn rack_aware(&self) -> bool {
        let subscribed = self.subscribed_topics();
        let sets: Vec<BTreeSet<&str>> = self
            .topics
            .iter()
            .filter(|t| subscribed.contains(&t.name))
            .flat_map(|t| t.replicas.iter().map(|r| self.replica_racks(r)))
            .collect();
        let all: BTreeSet<&str> = sets.iter().flatten().copied().collect();
        !self.member_racks().is_disjoint(&all) && sets.iter().any(|s| *s != all)
    }

    /// The group, for a failure's report.
    pub fn describe(&self) -> String {
        let mut out = String::from("  brokers:");
        for b in &self.brokers {
            let _ = write!(out, " {}@{}", b.id, b.rack.as_deref().unwrap_or("-"));
        }
        out.push('\n');
        for t in &self.topics {
            let _ = write!(out, "  topic {}:", t.name);
            for (p, r) in t.replicas.iter().enumerate() {
                let racks: Vec<&str> = self.replica_racks(r).into_iter().collect();
                let _ = write!(out, " p{p}{r:?}{{{}}}", racks.join(","));
            }
            out.push('\n');
        }
        for m in &self.members {
            let owned: Vec<String> = m.owned.iter().map(|(t, p)| format!("{t}-{p}")).collect();
            let _ = writeln!(
                out,
                "  member {} instance {:?} rack {:?} v{} generation {} topics {:?} owns [{}]",
                m.id,
                m.instance,
                m.rack,
                m.version,
                m.generation,
                m.topics,
                owned.join(" ")
            );
        }
        out
    }
}

/// Brokers, every rack on at least one; by `layout`: some without a rack (6) or none with one
/// (8).
fn random_brokers(rng: &mut Rng, racks: &[&str], layout: usize) -> Vec<Broker> {
    let count = racks.len().max(1 + rng.below(6));
    (0..count)
        .map(|i| {
            let rack = if i < racks.len() {
                racks[i]
            } else {
                racks[rng.below(racks.len())]
            };
            let rack = match layout {
                8 => None,
                6 if rng.chance(30) => None,
                _ => Some(rack.to_owned()),
            };
            Broker {
                id: i32::try_from(i + 1).unwrap(),
                rack,
            }
        })
        .collect()
}

/// One partition's replicas: one broker of every rack (layout 7: every partition on every
/// rack), else 1-3 distinct brokers, now and then one that the metadata does not list.
fn random_replicas(rng: &mut Rng, brokers: &[Broker], racks: &[&str], layout: usize) -> Vec<i32> {
    let mut ids: Vec<i32> = if layout == 7 {
        racks
            .iter()
            .map(|r| {
                let on: Vec<i32> = brokers
                    .iter()
                    .filter(|b| b.rack.as_deref() == Some(*r))
                    .map(|b| b.id)
                    .collect();
                on[rng.below(on.len())]
            })
            .collect()
    } else {
        let mut all: Vec<i32> = brokers.iter().map(|b| b.id).collect();
        rng.shuffle(&mut all);
        all.truncate(1 + rng.below(all.len().min(3)));
        all
    };
    if (layout == 9 && rng.chance(50)) || rng.chance(3) {
        let at = rng.below(ids.len() + 1);
        ids.insert(at, OFFLINE + i32::try_from(rng.below(3)).unwrap());
    }
    rng.shuffle(&mut ids);
    ids
}

/// 1-7 members: ids of the form Java's consumers have (so Java's `HashMap` order of them is as
/// varied as in real groups), a quarter static, racks by a per-group mode, equal subscriptions
/// half of the time.
fn random_members(rng: &mut Rng, index: usize, racks: &[&str], topics: &[Topic]) -> Vec<Member> {
    let mut names: Vec<String> = topics.iter().map(|t| t.name.clone()).collect();
    if rng.chance(10) {
        names.push("missing".into());
    }
    let equal = rng.chance(50).then(|| rng.subset(&names));
    let rack_mode = rng.below(8);
    (0..1 + rng.below(7))
        .map(|i| {
            let rack = match rack_mode {
                0..=3 => Some(racks[rng.below(racks.len())].to_owned()),
                4 => match rng.below(4) {
                    0 => None,
                    1 => Some(String::new()),
                    _ => Some(racks[rng.below(racks.len())].to_owned()),
                },
                5 => None,
                6 => Some(["rack-y", "rack-z"][rng.below(2)].to_owned()),
                _ => rng
                    .chance(50)
                    .then(|| RACKS[rng.below(RACKS.len())].to_owned()),
            };
            let mut topics = match &equal {
                Some(list) => list.clone(),
                None => rng.subset(&names),
            };
            rng.shuffle(&mut topics);
            Member {
                id: format!("consumer-g{index}-{}-{:08x}", i + 1, rng.next() as u32),
                instance: rng
                    .chance(25)
                    .then(|| format!("instance-{i}-{:04x}", rng.next() as u16)),
                rack,
                topics,
                version: match rng.below(100) {
                    0..=2 => 0,
                    3..=9 => 1,
                    10..=15 => 2,
                    _ => 3,
                },
                generation: NO_GENERATION,
                owned: Vec::new(),
            }
        })
        .collect()
}

/// Previous ownership: none (a new group), random claims (conflicting now and then, generations
/// 1-4, some members new), or an earlier balanced assignment of the members but a few, most at
/// the latest generation and some a generation behind. (Some groups instead rejoin after our
/// sticky assignors' earlier rebalances: [`Group::rejoin_after`].)
fn random_ownership(rng: &mut Rng, topics: &[Topic], members: &mut [Member]) {
    let partitions: Vec<(String, i32)> = topics
        .iter()
        .flat_map(|t| (0..t.replicas.len()).map(|p| (t.name.clone(), i32::try_from(p).unwrap())))
        .collect();
    match rng.below(10) {
        0 | 1 => {}
        2..=5 => {
            for m in members.iter_mut() {
                if !rng.chance(15) {
                    m.generation = 1 + i32::try_from(rng.below(4)).unwrap();
                }
            }
            for (t, p) in &partitions {
                let claimants: Vec<usize> = (0..members.len())
                    .filter(|&i| members[i].generation > 0 && members[i].topics.contains(t))
                    .collect();
                if claimants.is_empty() || rng.chance(25) {
                    continue;
                }
                let first = claimants[rng.below(claimants.len())];
                members[first].owned.push((t.clone(), *p));
                let second = claimants[rng.below(claimants.len())];
                if second != first && rng.chance(10) {
                    members[second].owned.push((t.clone(), *p));
                }
            }
        }
        _ => {
            let generation = 2 + i32::try_from(rng.below(4)).unwrap();
            let new = rng.below(3.min(members.len()));
            let mut old: Vec<usize> = (0..members.len()).collect();
            rng.shuffle(&mut old);
            old.truncate(members.len() - new);
            old.sort_unstable();
            for &i in &old {
                members[i].generation = if rng.chance(15) {
                    generation - 1
                } else {
                    generation
                };
            }
            // Dealt round-robin over the old members subscribed to each partition's topic.
            let mut next = 0;
            for (t, p) in &partitions {
                let eligible: Vec<usize> = old
                    .iter()
                    .copied()
                    .filter(|&i| members[i].topics.contains(t))
                    .collect();
                if !eligible.is_empty() {
                    members[eligible[next % eligible.len()]]
                        .owned
                        .push((t.clone(), *p));
                    next += 1;
                }
            }
        }
    }
}
