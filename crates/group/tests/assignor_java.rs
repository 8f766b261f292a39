//! Our assignors against Java's own, group by group: a few hundred random groups (members with
//! and without `client.rack`, static and dynamic, equal and different subscriptions, previous
//! ownership fresh, random, from an earlier assignment, or from the group's own earlier
//! `sticky` or `cooperative-sticky` rebalances, old Subscription versions) on random
//! rack layouts (brokers with and without racks, replicas on some racks or on all of them,
//! replicas on brokers the metadata does not list). Each group is assigned by `range`,
//! `roundrobin`, `sticky` and `cooperative-sticky` here and by kafka-clients' assignors in one
//! run of `tests/assignor-check/AssignorCheck.java`, which gets the same Metadata response and
//! the same Subscription bytes a leader would; every assignment must be the same, so a group
//! mixing our members with Java's agrees whoever leads.
//!
//! The groups come from a fixed seed; `MOORING_ASSIGNOR_CHECK_SEED` (decimal or 0x-hex) picks
//! another, `MOORING_ASSIGNOR_CHECK_GROUPS` another count. The Java program is compiled with
//! `javac` against the kafka-clients jar `scripts/kafka fetch` puts under `$MOORING_CACHE`; if
//! either is missing the test fails saying how to get it.
//!
//! Left out on purpose are inputs where we deliberately differ from Java (see the assignors):
//! a member claiming partitions of topics it does not subscribe to or that do not exist, one
//! claiming a partition twice, and members subscribed to nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "assignor_java/groups.rs"]
mod groups;
#[path = "assignor_java/java.rs"]
mod java;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use bytes::Bytes;
use mooring_client::metadata::Metadata;
use mooring_group::assignor::{self, MemberSubscription};
use mooring_wire::consumer_protocol::Subscription;

use groups::{Group, Rng};

/// Member id → its partitions, or the error Java threw.
type Outcome = Result<BTreeMap<String, BTreeSet<(String, i32)>>, String>;

const ASSIGNORS: [&str; 4] = ["range", "roundrobin", "sticky", "cooperative-sticky"];
const DEFAULT_SEED: u64 = 0x4d6f_6f72_696e_6721;
const DEFAULT_GROUPS: usize = 400;

#[test]
fn assignors_agree_with_javas_on_random_rack_layouts() {
    let seed = env_number("MOORING_ASSIGNOR_CHECK_SEED").unwrap_or(DEFAULT_SEED);
    let count = env_number("MOORING_ASSIGNOR_CHECK_GROUPS").map_or(DEFAULT_GROUPS, |n| n as usize);
    eprintln!("assignor check: {count} groups, seed {seed:#x} (MOORING_ASSIGNOR_CHECK_SEED)");
    let mut rng = Rng::new(seed);
    let groups: Vec<Group> = (0..count).map(|i| Group::random(&mut rng, i)).collect();

    let input: String = groups
        .iter()
        .map(|g| format!("{}\n", g.to_json()))
        .collect();
    let theirs = java::run(&input);
    assert_eq!(theirs.len(), groups.len(), "one Java answer per group");

    let mut mismatches = Vec::new();
    let mut by_assignor: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, (group, java)) in groups.iter().zip(&theirs).enumerate() {
        for name in ASSIGNORS {
            let ours = ours(group, name);
            let java = java_outcome(java, name);
            if ours != java {
                *by_assignor.entry(name).or_default() += 1;
                mismatches.push((i, name, ours, java));
            }
        }
    }

    let rack_aware = groups.iter().filter(|g| g.rack_aware()).count();
    // Rejoining unchanged, a group with racks may still move what sat off its member's rack (and
    // a cooperative one assigns what was in transit).
    let rejoined: Vec<usize> = (0..count).filter(|&i| groups[i].rejoined).collect();
    let moving = rejoined
        .iter()
        .filter(|&&i| {
            ["sticky", "cooperative-sticky"]
                .iter()
                .any(|a| java_outcome(&theirs[i], a) != Ok(groups[i].owned()))
        })
        .count();
    eprintln!(
        "assignor check: {rack_aware} of {count} groups rack-aware, {} rejoining unchanged \
         ({moving} of them not given what they own); {} assignments differ {by_assignor:?}",
        rejoined.len(),
        mismatches.len()
    );
    let mut report = String::new();
    for (i, name, ours, java) in mismatches.iter().take(4) {
        let _ = writeln!(
            report,
            "\ngroup {i}, {name}:\n{}{}",
            groups[*i].describe(),
            diff(ours, java)
        );
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} assignments differ from Java's (by assignor: {by_assignor:?}; seed {seed:#x}):{report}",
        mismatches.len(),
        count * ASSIGNORS.len()
    );
    // The layouts must exercise rack-aware placement, not only the rack-less paths.
    assert!(
        count < 100 || rack_aware * 4 >= count,
        "only {rack_aware} of {count} groups are rack-aware: the generator lost its racks"
    );
}

/// Our leader's assignment: the topics from the same Metadata response Java gets, each
/// member's Subscription decoded from the bytes it sent.
fn ours(group: &Group, name: &str) -> Outcome {
    let metadata = Metadata::from_response(&group.metadata_response());
    let topics: Vec<String> = group.subscribed_topics().into_iter().collect();
    let partitions = metadata.partitions_per_topic(&topics);
    let members: Vec<MemberSubscription> = group
        .members
        .iter()
        .map(|m| {
            let bytes = Bytes::from(group.subscription_bytes(m, name));
            let (_, subscription) = Subscription::decode(&bytes).expect("our own bytes decode");
            MemberSubscription {
                member_id: m.id.clone(),
                group_instance_id: m.instance.clone(),
                subscription,
            }
        })
        .collect();
    let assignor = assignor::by_name(name).expect("a built-in assignor");
    Ok(assignor
        .assign(&partitions, &members)
        .into_iter()
        .map(|(member, a)| {
            let set = a
                .partitions
                .iter()
                .flat_map(|tp| tp.partitions.iter().map(|&p| (tp.topic.clone(), p)))
                .collect();
            (member, set)
        })
        .collect())
}

/// Java's answer for one assignor, from `AssignorCheck`'s output line.
fn java_outcome(line: &serde_json::Value, name: &str) -> Outcome {
    let result = line
        .get(name)
        .and_then(serde_json::Value::as_object)
        .unwrap_or_else(|| panic!("AssignorCheck said nothing of {name}: {line}"));
    if let Some(error) = result.get("error") {
        return Err(error.to_string());
    }
    Ok(result
        .iter()
        .map(|(member, list)| {
            let set = list
                .as_array()
                .into_iter()
                .flatten()
                .map(|tp| {
                    let topic = tp[0].as_str().expect("topic").to_owned();
                    let partition = tp[1].as_i64().expect("partition");
                    (topic, i32::try_from(partition).expect("a partition index"))
                })
                .collect();
            (member.clone(), set)
        })
        .collect())
}

/// What differs, member by member.
fn diff(ours: &Outcome, java: &Outcome) -> String {
    let (ours, java) = match (ours, java) {
        (Ok(o), Ok(j)) => (o, j),
        _ => return format!("  ours: {ours:?}\n  Java: {java:?}\n"),
    };
    let show = |s: Option<&BTreeSet<(String, i32)>>| -> String {
        s.into_iter()
            .flatten()
            .map(|(t, p)| format!("{t}-{p}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let members: BTreeSet<&String> = ours.keys().chain(java.keys()).collect();
    let mut out = String::new();
    for m in members {
        let (o, j) = (ours.get(m), java.get(m));
        let mark = if o == j { " " } else { "*" };
        let _ = writeln!(
            out,
            " {mark}{m}\n     ours: {}\n     Java: {}",
            show(o),
            show(j)
        );
    }
    out
}

fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    let value = value.trim();
    let parsed = match value.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => value.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={value:?} is not a number: {e}")))
}
