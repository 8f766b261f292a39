//! What the driver knows of a group from its members' event lines, as kafkatest's
//! `verifiable_consumer.py` keeps it: per member its state, assignment, revokes, assignments,
//! position and fatal errors; for the group every partition's position and commit, every offset
//! consumed (losses and duplicates) and every ownership interval (overlaps, and partitions taken
//! over by another member), with the checks Python makes while reading collected as violations.

use std::collections::{BTreeMap, BTreeSet};

use mooring_testkit::unix_millis;
use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Dead,
    Started,
    Joined,
    Rebalancing,
}

/// One member's view, from its own events (kafkatest's `ConsumerEventHandler`).
#[derive(Debug)]
pub struct MemberView {
    pub status: Status,
    pub assignment: BTreeSet<i32>,
    pub revoked: u32,
    pub assigned: u32,
    pub consumed: u64,
    pub position: BTreeMap<i32, i64>,
    /// Fatal errors it reported (`shutdown_complete` with an `error`), e.g. fenced.
    pub errors: Vec<String>,
    /// Whether it speaks the consumer protocol (KIP-848), under which a revoke moves only some
    /// partitions and the member goes on consuming the others until its next assignment.
    pub consumer_protocol: bool,
}

impl MemberView {
    pub fn new() -> Self {
        MemberView {
            status: Status::Dead,
            assignment: BTreeSet::new(),
            revoked: 0,
            assigned: 0,
            consumed: 0,
            position: BTreeMap::new(),
            errors: Vec::new(),
            consumer_protocol: false,
        }
    }
}

/// The group's view.
#[derive(Debug, Default)]
pub struct Global {
    pub members: Vec<MemberView>,
    pub position: BTreeMap<i32, i64>,
    pub committed: BTreeMap<i32, i64>,
    /// (partition, offset) → when it was consumed (event time, ms), once per delivery.
    pub seen: BTreeMap<(i32, i64), Vec<i64>>,
    /// (member, partition) → since when it owns the partition (event time, ms).
    pub owning: BTreeMap<(usize, i32), i64>,
    /// Closed ownership intervals: (partition, member, from, to).
    pub intervals: Vec<(i32, usize, i64, i64)>,
    /// Commits the coordinator refused because the member's generation had moved on under it
    /// (ILLEGAL_GENERATION), of partitions the group had committed before. The member's
    /// partitions are lost at that moment, so their next owner starts from the commit before,
    /// and the records in between come again: at-least-once, for every client.
    pub refused: Vec<Refusal>,
    pub violations: Vec<String>,
}

/// One partition's commit refused with ILLEGAL_GENERATION.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub partition: i32,
    /// The group's last successful commit of the partition before the refusal.
    pub committed: i64,
    /// The refused commit's offset.
    pub refused: i64,
    /// When the member reported the refusal (event time, ms).
    pub at: i64,
}

impl Refusal {
    /// Whether this refusal can bring `offset` of `partition` again at `at`: an offset the
    /// group's commit did not cover and the refused one would have (`committed <= offset <
    /// refused`), consumed again after the refusal.
    fn explains(&self, partition: i32, offset: i64, at: i64) -> bool {
        self.partition == partition
            && self.committed <= offset
            && offset < self.refused
            && self.at <= at
    }
}

/// How many of the deliveries of `offset` of `partition` (their times, `at`) a refused commit
/// explains: the first delivery is the record's own; each later one is explained by a refusal
/// that [`Refusal::explains`] it, and each refusal explains at most one delivery of the offset
/// (its next owner starts once from the commit before). The rest are duplicates.
pub fn explained_repeats(refused: &[Refusal], partition: i32, offset: i64, at: &[i64]) -> u32 {
    let mut times = at.to_vec();
    times.sort_unstable();
    let mut used = vec![false; refused.len()];
    let mut explained = 0;
    // The refusals that explain a delivery only grow with its time, so taking any unused one for
    // each delivery in time order explains as many as can be.
    for &t in times.iter().skip(1) {
        let found = refused
            .iter()
            .enumerate()
            .position(|(i, r)| !used[i] && r.explains(partition, offset, t));
        if let Some(i) = found {
            used[i] = true;
            explained += 1;
        }
    }
    explained
}

impl Global {
    fn partitions(event: &Value) -> Vec<i32> {
        event["partitions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p["partition"].as_i64())
                    .map(|p| p as i32)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn end_ownership(&mut self, member: usize, partition: i32, at: i64) {
        if let Some(from) = self.owning.remove(&(member, partition)) {
            self.intervals.push((partition, member, from, at));
        }
    }

    pub fn dead(&mut self, member: usize, at: i64) {
        let owned: Vec<i32> = self
            .owning
            .keys()
            .filter(|(m, _)| *m == member)
            .map(|(_, p)| *p)
            .collect();
        for p in owned {
            self.end_ownership(member, p, at);
        }
        let view = &mut self.members[member];
        view.status = Status::Dead;
        view.assignment.clear();
        view.position.clear();
    }

    pub fn handle(&mut self, member: usize, event: &Value) {
        let at = event["timestamp"].as_i64().unwrap_or_else(unix_millis);
        match event["name"].as_str().unwrap_or_default() {
            "startup_complete" => self.members[member].status = Status::Started,
            "shutdown_complete" => {
                if let Some(error) = event["error"].as_str() {
                    self.members[member].errors.push(error.to_owned());
                }
                self.dead(member, at);
            }
            "partitions_revoked" => {
                let view = &mut self.members[member];
                view.revoked += 1;
                if !view.consumer_protocol {
                    view.status = Status::Rebalancing;
                }
                view.position.clear();
                let revoked = Self::partitions(event);
                for p in &revoked {
                    view.assignment.remove(p);
                }
                for p in revoked {
                    self.end_ownership(member, p, at);
                }
            }
            "partitions_assigned" => {
                let view = &mut self.members[member];
                view.assigned += 1;
                view.status = Status::Joined;
                let added = Self::partitions(event);
                view.assignment.extend(added.iter().copied());
                for p in added {
                    self.owning.entry((member, p)).or_insert(at);
                }
            }
            "records_consumed" => self.consumed(member, event, at),
            "offsets_committed" => self.committed(member, event, at),
            _ => {}
        }
    }

    fn consumed(&mut self, member: usize, event: &Value, at: i64) {
        let view = &mut self.members[member];
        if view.status != Status::Joined {
            self.violations.push(format!(
                "member {member} consumed records while {:?}",
                view.status
            ));
        }
        let mut count = 0;
        for batch in event["partitions"].as_array().into_iter().flatten() {
            let p = batch["partition"].as_i64().unwrap_or(-1) as i32;
            let min = batch["minOffset"].as_i64().unwrap_or(-1);
            let max = batch["maxOffset"].as_i64().unwrap_or(-1);
            let n = batch["count"].as_i64().unwrap_or(-1);
            count += n.max(0) as u64;
            let view = &mut self.members[member];
            if !view.assignment.contains(&p) {
                self.violations.push(format!(
                    "member {member} consumed partition {p}, not assigned ({:?})",
                    view.assignment
                ));
            }
            if let Some(position) = view.position.get(&p) {
                if *position != min {
                    self.violations.push(format!(
                        "member {member} consumed partition {p} from {min}, its position was {position}"
                    ));
                }
            }
            view.position.insert(p, max + 1);
            if n != max - min + 1 {
                self.violations.push(format!(
                    "member {member}: partition {p} count {n} for offsets {min}..={max}"
                ));
            }
            if let Some(committed) = self.committed.get(&p) {
                if *committed > min {
                    self.violations.push(format!(
                        "member {member} consumed partition {p} from {min}, behind the commit {committed}"
                    ));
                }
            }
            self.position.insert(p, max + 1);
            for offset in min..=max {
                self.seen.entry((p, offset)).or_default().push(at);
            }
        }
        let total: u64 = event["count"].as_u64().unwrap_or(0);
        if total != count {
            self.violations.push(format!(
                "member {member}: records_consumed count {total} is not the sum {count}"
            ));
        }
        self.members[member].consumed += total;
    }

    fn committed(&mut self, member: usize, event: &Value, at: i64) {
        if event["success"].as_bool() != Some(true) {
            if event["error"]
                .as_str()
                .is_some_and(|e| e.contains("ILLEGAL_GENERATION"))
            {
                for commit in event["offsets"].as_array().into_iter().flatten() {
                    let p = commit["partition"].as_i64().unwrap_or(-1) as i32;
                    let offset = commit["offset"].as_i64().unwrap_or(-1);
                    // Without a commit before, where the next owner starts is
                    // auto.offset.reset's, which these lines do not show: nothing is explained.
                    if let Some(&committed) = self.committed.get(&p) {
                        self.refused.push(Refusal {
                            partition: p,
                            committed,
                            refused: offset,
                            at,
                        });
                    }
                }
            }
            return;
        }
        for commit in event["offsets"].as_array().into_iter().flatten() {
            let p = commit["partition"].as_i64().unwrap_or(-1) as i32;
            let offset = commit["offset"].as_i64().unwrap_or(-1);
            let view = &self.members[member];
            if !view.assignment.contains(&p) {
                self.violations.push(format!(
                    "member {member} committed partition {p}, not assigned ({:?})",
                    view.assignment
                ));
            }
            if self.position.get(&p).is_none_or(|pos| *pos < offset) {
                self.violations.push(format!(
                    "member {member} committed {offset} on partition {p}, ahead of the position {:?}",
                    self.position.get(&p)
                ));
            }
            self.committed.insert(p, offset);
        }
    }

    pub fn total_consumed(&self) -> u64 {
        self.members.iter().map(|m| m.consumed).sum()
    }

    /// Deliveries beyond each record's first, less those a refused commit explains (see
    /// [`explained_repeats`]).
    pub fn duplicates(&self) -> u64 {
        self.seen
            .iter()
            .map(|(&(p, offset), at)| {
                let repeats = u32::try_from(at.len().saturating_sub(1)).unwrap_or(u32::MAX);
                u64::from(repeats - explained_repeats(&self.refused, p, offset, at))
            })
            .sum()
    }

    /// Deliveries a refused commit (ILLEGAL_GENERATION) explains ([`explained_repeats`]).
    pub fn redelivered_after_refused_commit(&self) -> u64 {
        self.seen
            .iter()
            .map(|(&(p, offset), at)| u64::from(explained_repeats(&self.refused, p, offset, at)))
            .sum()
    }

    /// Records never consumed: offsets below a partition's end of log (`ends`), and offsets the
    /// broker acknowledged to the producer (`acked`), which the log's end would not show if the
    /// log lost them.
    pub fn lost(&self, ends: &BTreeMap<i32, i64>, acked: &BTreeSet<(i32, i64)>) -> i64 {
        let mut expected: BTreeSet<(i32, i64)> = acked.clone();
        for (p, end) in ends {
            expected.extend((0..*end).map(|o| (*p, o)));
        }
        expected
            .iter()
            .filter(|k| !self.seen.contains_key(k))
            .count() as i64
    }

    /// Every ownership interval, closed ones and those still open (to now): (partition, member,
    /// from, to).
    fn all_intervals(&self) -> Vec<(i32, usize, i64, i64)> {
        let now = unix_millis();
        let mut all: Vec<(i32, usize, i64, i64)> = self.intervals.clone();
        all.extend(
            self.owning
                .iter()
                .map(|((m, p), from)| (*p, *m, *from, now)),
        );
        all
    }

    /// How many times a partition went to another member than the one that owned it before: a
    /// member's partitions moving while it is away (dynamic members), not coming back to it
    /// (static members rejoining in time).
    pub fn takeovers(&self) -> usize {
        let mut all = self.all_intervals();
        all.sort_by_key(|&(p, _, from, _)| (p, from));
        all.windows(2)
            .filter(|w| w[0].0 == w[1].0 && w[0].1 != w[1].1)
            .count()
    }

    /// Pairs of members whose ownership of a partition overlapped in time.
    pub fn overlaps(&self) -> Vec<String> {
        let all = self.all_intervals();
        let mut found = Vec::new();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                if a.0 == b.0 && a.1 != b.1 && a.2 < b.3 && b.2 < a.3 {
                    found.push(format!(
                        "partition {}: member {} [{}, {}) and member {} [{}, {})",
                        a.0, a.1, a.2, a.3, b.1, b.2, b.3
                    ));
                }
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::{explained_repeats, Global, MemberView, Refusal};

    /// Partition 0's commit of 10 was refused at 1000 ms, the group's commit then being 4.
    const REFUSED: [Refusal; 1] = [Refusal {
        partition: 0,
        committed: 4,
        refused: 10,
        at: 1000,
    }];

    #[test]
    fn one_delivery_again_after_the_refusal_in_its_range_is_explained() {
        assert_eq!(explained_repeats(&REFUSED, 0, 4, &[500, 1200]), 1);
        assert_eq!(explained_repeats(&REFUSED, 0, 9, &[500, 1000]), 1);
        // The times' order does not matter: the earliest is the record's own delivery.
        assert_eq!(explained_repeats(&REFUSED, 0, 9, &[1200, 500]), 1);
        assert_eq!(explained_repeats(&REFUSED, 0, 7, &[500]), 0);
    }

    #[test]
    fn a_second_delivery_again_is_not() {
        assert_eq!(explained_repeats(&REFUSED, 0, 5, &[500, 1200, 1300]), 1);
    }

    #[test]
    fn a_delivery_again_before_the_refusal_is_not() {
        assert_eq!(explained_repeats(&REFUSED, 0, 5, &[500, 999]), 0);
    }

    #[test]
    fn a_delivery_again_outside_the_range_is_not() {
        // Covered by the commit before, at or past the refused offset, or another partition.
        assert_eq!(explained_repeats(&REFUSED, 0, 3, &[500, 1200]), 0);
        assert_eq!(explained_repeats(&REFUSED, 0, 10, &[500, 1200]), 0);
        assert_eq!(explained_repeats(&REFUSED, 1, 5, &[500, 1200]), 0);
    }

    #[test]
    fn a_refusal_of_a_partition_never_committed_explains_nothing() {
        let mut g = Global::default();
        g.members.push(MemberView::new());
        let commit = |success: bool, offsets: serde_json::Value| {
            serde_json::json!({
                "name": "offsets_committed",
                "timestamp": 1000,
                "success": success,
                "error": if success { None } else { Some("ILLEGAL_GENERATION") },
                "offsets": offsets,
            })
        };
        g.handle(
            0,
            &commit(true, serde_json::json!([{ "partition": 1, "offset": 4 }])),
        );
        g.handle(
            0,
            &commit(
                false,
                serde_json::json!([
                    { "partition": 0, "offset": 10 },
                    { "partition": 1, "offset": 10 }
                ]),
            ),
        );
        assert_eq!(
            g.refused,
            [Refusal {
                partition: 1,
                committed: 4,
                refused: 10,
                at: 1000
            }]
        );
    }

    #[test]
    fn each_refusal_explains_one_delivery_again() {
        let twice = [
            REFUSED[0],
            Refusal {
                refused: 12,
                at: 2000,
                ..REFUSED[0]
            },
        ];
        assert_eq!(explained_repeats(&twice, 0, 5, &[500, 1200, 2100]), 2);
        // Both deliveries again before the second refusal: the first explains one of them.
        assert_eq!(explained_repeats(&twice, 0, 5, &[500, 1200, 1300]), 1);
        // Offset 11 is in the second refusal's range only.
        assert_eq!(explained_repeats(&twice, 0, 11, &[500, 1200, 2100]), 1);
    }

    /// A member assigned partitions 0 and 1, then revoked partition 1, consuming partition 0
    /// before its next assignment: the violations its events give.
    fn consuming_between_revoke_and_assign(consumer_protocol: bool) -> Vec<String> {
        let mut g = Global::default();
        g.members.push(MemberView::new());
        g.members[0].consumer_protocol = consumer_protocol;
        let partitions = |ps: &[i32]| -> Vec<serde_json::Value> {
            ps.iter()
                .map(|p| serde_json::json!({ "topic": "t", "partition": p }))
                .collect()
        };
        for event in [
            serde_json::json!({ "name": "startup_complete", "timestamp": 1 }),
            serde_json::json!({ "name": "partitions_assigned", "timestamp": 2,
                "partitions": partitions(&[0, 1]) }),
            serde_json::json!({ "name": "partitions_revoked", "timestamp": 3,
                "partitions": partitions(&[1]) }),
            serde_json::json!({ "name": "records_consumed", "timestamp": 4, "count": 2,
                "partitions": [{ "topic": "t", "partition": 0, "count": 2,
                    "minOffset": 0, "maxOffset": 1 }] }),
        ] {
            g.handle(0, &event);
        }
        g.violations
    }

    #[test]
    fn a_consumer_protocol_member_consumes_its_other_partitions_while_one_is_revoked() {
        // As kafkatest's ConsumerProtocolConsumerEventHandler: a revoke does not stop the member.
        assert_eq!(
            consuming_between_revoke_and_assign(true),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_classic_member_consumes_nothing_between_revoke_and_assign() {
        assert_eq!(
            consuming_between_revoke_and_assign(false),
            ["member 0 consumed records while Rebalancing"]
        );
    }
}
