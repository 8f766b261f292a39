//! An assignment the broker names by topic id (KIP-848's and KIP-932's heartbeats), and the names
//! a member resolves it to: what both broker-assigned members do before they can tell their
//! listener anything. A member keeps the names of the topics it holds; ids it does not know are
//! looked up in metadata (by the member, which decides what a failed look-up means), and those
//! still unknown wait for a later look-up.

use std::collections::{BTreeMap, BTreeSet};

use mooring_client::TopicPartition;
use mooring_wire::primitives::Uuid;
use tokio::time::Instant;

/// Partitions by topic id.
pub(crate) type ById = BTreeMap<Uuid, BTreeSet<i32>>;

/// An assignment as the coordinator gave it (a `consumer`-protocol member's target, a share
/// member's assignment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Bumped for every assignment given.
    pub(crate) seq: u64,
    /// The member epoch it came with.
    pub(crate) epoch: i32,
    pub(crate) partitions: ById,
    pub(crate) received: Instant,
}

/// An assignment resolved to names.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Resolved {
    pub(crate) partitions: BTreeSet<TopicPartition>,
    /// The ids of the topics named.
    pub(crate) ids: BTreeMap<String, Uuid>,
    /// Ids no name was found for.
    pub(crate) unresolved: BTreeSet<Uuid>,
}

/// The names of `target`'s topic ids among `known` (name → id), and the ids to look up.
pub(crate) fn known_names(
    known: &BTreeMap<String, Uuid>,
    target: &ById,
) -> (BTreeMap<Uuid, String>, Vec<Uuid>) {
    let names: BTreeMap<Uuid, String> = known
        .iter()
        .filter(|(_, id)| target.contains_key(id))
        .map(|(name, id)| (*id, name.clone()))
        .collect();
    let missing = target
        .keys()
        .filter(|id| !names.contains_key(id))
        .copied()
        .collect();
    (names, missing)
}

/// `target` by name, with `names` (id → name).
pub(crate) fn resolve(target: &ById, names: &BTreeMap<Uuid, String>) -> Resolved {
    let mut resolved = Resolved::default();
    for (id, partitions) in target {
        match names.get(id) {
            Some(name) => {
                resolved.ids.insert(name.clone(), *id);
                resolved.partitions.extend(
                    partitions
                        .iter()
                        .map(|p| TopicPartition::new(name.clone(), *p)),
                );
            }
            None => {
                resolved.unresolved.insert(*id);
            }
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_ids_are_named_the_others_looked_up_and_unnamed_ones_left_unresolved() {
        let (t, u) = (Uuid([1; 16]), Uuid([2; 16]));
        let target = ById::from([(t, BTreeSet::from([0, 2])), (u, BTreeSet::from([1]))]);
        let known = BTreeMap::from([("t".to_string(), t), ("gone".to_string(), Uuid([9; 16]))]);
        let (names, missing) = known_names(&known, &target);
        assert_eq!(names, BTreeMap::from([(t, "t".to_string())]));
        assert_eq!(missing, [u]);
        let resolved = resolve(&target, &names);
        assert_eq!(
            resolved.partitions,
            BTreeSet::from([TopicPartition::new("t", 0), TopicPartition::new("t", 2)])
        );
        assert_eq!(resolved.ids, BTreeMap::from([("t".to_string(), t)]));
        assert_eq!(resolved.unresolved, BTreeSet::from([u]));
    }
}
