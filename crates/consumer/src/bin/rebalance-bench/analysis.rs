//! What one trace says about each change (a member joins or leaves): how long until every
//! partition is consumed again, and the longest pause of a partition, for the partitions that did
//! not move and for those that did. The same figures for every client, from the trace alone.
//!
//! - **Progress**: a partition progresses when a record past the highest offset consumed so far
//!   (by any member) is consumed. A record consumed again (a new owner starting from the last
//!   commit) is not progress, and is counted as redelivered.
//! - **Owners**: replaying the listener calls (assigned, revoked, lost; a closed member holds
//!   nothing). A partition *moved* in a change when its owner at the change differs from its
//!   owner at the end of the change's window (the next change, or the trace's end). Under an
//!   eager protocol a partition revoked and given back to the same member did not move.
//! - **Consumed again**: a partition is consumed again at its first progress by its final owner
//!   at or after the change and after the last listener call in the window that named it (the
//!   final assignment). The change's *recovery* is the last partition's, from the change's start.
//!   A listener call is noted as it starts, so a record handed out just before the call shows
//!   only at the next record, one produce interval later at most.
//! - **Pause**: the longest gap between a partition's consecutive progress in the window,
//!   counting from its last progress before the change and up to the window's end (so a
//!   partition that never resumes pauses until then). With a record produced per partition
//!   every interval, a partition that never stops pauses about one interval plus a fetch.
//! - **Wait**: the longest a record of the partition waited, from its produce time to its
//!   consumption, among the records first consumed in the window (a partition that never
//!   resumes: at least from its last progress to the window's end). Unlike the pause it does not
//!   grow when the producer itself is late (on a loaded machine it is, now and then), so it is
//!   the figure to check a pause against.
//! - **Producer gap**: the longest gap between the produce times of a partition's consecutive
//!   records in the window: what the load itself paused.
//! - **Baseline**: the longest pause of any partition from `steady` to the first change, and
//!   the producer's gap over the same time.

use std::collections::BTreeMap;

use crate::trace::{ChangeKind, Line, ListenerKind};

/// The figures of one change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChangeFigures {
    pub event: String,
    /// The how-manieth change of its kind in the trace (1-based).
    pub cycle: usize,
    pub at: i64,
    /// From the change to the next change (or the trace's end).
    pub window_ms: i64,
    /// From the change until every partition is consumed again; `None` when some partition
    /// was not within the window.
    pub recovery_ms: Option<i64>,
    pub not_recovered: usize,
    pub moved: usize,
    pub unmoved: usize,
    /// Longest pause of a partition that did not move; `None` when every partition moved.
    pub unmoved_max_pause_ms: Option<i64>,
    /// Longest pause of a partition that moved; `None` when none did.
    pub moved_max_pause_ms: Option<i64>,
    pub moved_median_pause_ms: Option<i64>,
    /// Longest wait (produce to consume) of a record of a partition that did not move.
    pub unmoved_max_wait_ms: Option<i64>,
    /// Longest wait of a record of a partition that moved.
    pub moved_max_wait_ms: Option<i64>,
    /// Longest gap between the produce times of a partition's consecutive records.
    pub producer_max_gap_ms: i64,
    /// Records consumed again (at or below the partition's highest offset) within the window.
    pub redelivered: usize,
}

/// The figures of a whole trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// The longest gap of any partition between `steady` and the first change.
    pub baseline_max_gap_ms: Option<i64>,
    /// The producer's longest gap over the baseline.
    pub baseline_producer_max_gap_ms: Option<i64>,
    pub changes: Vec<ChangeFigures>,
    pub records: usize,
    /// Partitions of `0..partitions` never consumed at all.
    pub never_consumed: usize,
}

/// A listener call or a member's close, the events ownership follows.
#[derive(Debug)]
struct OwnerEvent {
    at: i64,
    member: usize,
    /// `None`: the member closed (it holds nothing).
    kind: Option<ListenerKind>,
    partitions: Vec<i32>,
}

/// A record that moved its partition's highest consumed offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Progress {
    at: i64,
    member: usize,
    produced: i64,
}

#[derive(Debug, Default)]
struct PartitionLog {
    /// Each progress, in time (and so offset) order.
    progress: Vec<Progress>,
    /// Times of the records consumed again.
    redelivered: Vec<i64>,
}

/// Analyses a trace of members on a topic of `partitions` partitions.
pub fn analyse(lines: &[Line], partitions: usize) -> Result<Analysis, String> {
    let mut steady = None;
    let mut end = None;
    let mut changes = Vec::new();
    let mut owner_events = Vec::new();
    let mut records: Vec<Vec<(i64, i64, usize, i64)>> = vec![Vec::new(); partitions];
    let mut count = 0;
    for line in lines {
        match line {
            Line::Steady(at) => steady = Some(*at),
            Line::End(at) => end = Some(*at),
            Line::Change { kind, at, member } => changes.push((*kind, *at, *member)),
            Line::Settled(_) => {}
            Line::Closed { at, member } => owner_events.push(OwnerEvent {
                at: *at,
                member: *member,
                kind: None,
                partitions: Vec::new(),
            }),
            Line::Listener {
                kind,
                at,
                member,
                partitions: parts,
            } => owner_events.push(OwnerEvent {
                at: *at,
                member: *member,
                kind: Some(*kind),
                partitions: parts.clone(),
            }),
            Line::Record(r) => {
                let slot = usize::try_from(r.partition)
                    .ok()
                    .and_then(|p| records.get_mut(p))
                    .ok_or_else(|| {
                        format!(
                            "partition {} is outside the topic's {partitions}",
                            r.partition
                        )
                    })?;
                slot.push((r.consumed, r.offset, r.member, r.produced));
                count += 1;
            }
        }
    }
    let end = end.ok_or("the trace has no end line (the run did not finish)")?;
    changes.sort_by_key(|c| c.1);
    owner_events.sort_by_key(|e| e.at);
    let logs: Vec<PartitionLog> = records.into_iter().map(progress).collect();
    let never_consumed = logs.iter().filter(|l| l.progress.is_empty()).count();

    let baseline_to = changes.first().map_or(end, |c| c.1);
    let baseline_max_gap_ms = steady.map(|from| {
        logs.iter()
            .map(|log| longest_pause(&log.progress, from, baseline_to))
            .max()
            .unwrap_or(0)
    });
    let baseline_producer_max_gap_ms = steady.map(|from| producer_gap(&logs, from, baseline_to));
    let mut cycles: BTreeMap<String, usize> = BTreeMap::new();
    let mut figures = Vec::new();
    for (i, &(kind, at, _member)) in changes.iter().enumerate() {
        let next = changes.get(i + 1).map_or(end, |c| c.1);
        let cycle = cycles.entry(kind.to_string()).or_default();
        *cycle += 1;
        figures.push(change_figures(
            kind,
            *cycle,
            at,
            next,
            &logs,
            &owner_events,
            partitions,
        ));
    }
    Ok(Analysis {
        baseline_max_gap_ms,
        baseline_producer_max_gap_ms,
        changes: figures,
        records: count,
        never_consumed,
    })
}

/// Orders a partition's records and finds its progress.
fn progress(mut records: Vec<(i64, i64, usize, i64)>) -> PartitionLog {
    records.sort_unstable();
    let mut log = PartitionLog::default();
    let mut highest = i64::MIN;
    for (at, offset, member, produced) in records {
        if offset > highest {
            highest = offset;
            log.progress.push(Progress {
                at,
                member,
                produced,
            });
        } else {
            log.redelivered.push(at);
        }
    }
    log
}

/// Who holds each partition once every event up to `at` (inclusive) has happened.
fn owners_at(events: &[OwnerEvent], at: i64, partitions: usize) -> Vec<Option<usize>> {
    let mut owners = vec![None; partitions];
    for e in events.iter().take_while(|e| e.at <= at) {
        match e.kind {
            Some(ListenerKind::Assigned) => {
                for &p in &e.partitions {
                    if let Some(slot) = usize::try_from(p).ok().and_then(|p| owners.get_mut(p)) {
                        *slot = Some(e.member);
                    }
                }
            }
            Some(ListenerKind::Revoked | ListenerKind::Lost) => {
                for &p in &e.partitions {
                    if let Some(slot) = usize::try_from(p).ok().and_then(|p| owners.get_mut(p)) {
                        if *slot == Some(e.member) {
                            *slot = None;
                        }
                    }
                }
            }
            None => {
                for slot in owners.iter_mut().filter(|o| **o == Some(e.member)) {
                    *slot = None;
                }
            }
        }
    }
    owners
}

/// The longest gap between consecutive progress within `[from, to]`, counting from the last
/// progress before `from` (or `from` itself) and up to `to`.
fn longest_pause(progress: &[Progress], from: i64, to: i64) -> i64 {
    let first_in = progress.partition_point(|p| p.at < from);
    let mut previous = match first_in {
        0 => from,
        i => progress[i - 1].at,
    };
    let mut longest = 0;
    for p in progress[first_in..].iter().take_while(|p| p.at < to) {
        longest = longest.max(p.at - previous);
        previous = p.at;
    }
    longest.max(to - previous)
}

/// The progress consumed within `[from, to)`.
fn within(progress: &[Progress], from: i64, to: i64) -> &[Progress] {
    let first = progress.partition_point(|p| p.at < from);
    let last = progress.partition_point(|p| p.at < to);
    &progress[first..last.max(first)]
}

/// The longest wait (consumed - produced) of the records first consumed within `[from, to)`;
/// with none after `resumed_from`, at least from the last progress to `to`.
fn longest_wait(progress: &[Progress], from: i64, to: i64, resumed_from: i64) -> i64 {
    let window = within(progress, from, to);
    let waited = window.iter().map(|p| p.at - p.produced).max().unwrap_or(0);
    if window.iter().any(|p| p.at >= resumed_from) {
        return waited;
    }
    let last = progress[..progress.partition_point(|p| p.at < to)]
        .last()
        .map_or(from, |p| p.at);
    waited.max(to - last)
}

/// The longest gap between the produce times of consecutive records of any partition, over the
/// records produced within `[from, to)` and consumed at all.
fn producer_gap(logs: &[PartitionLog], from: i64, to: i64) -> i64 {
    logs.iter()
        .map(|log| {
            let mut produced: Vec<i64> = log
                .progress
                .iter()
                .map(|p| p.produced)
                .filter(|&t| t >= from && t < to)
                .collect();
            produced.sort_unstable();
            produced.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
        })
        .max()
        .unwrap_or(0)
}

fn change_figures(
    kind: ChangeKind,
    cycle: usize,
    at: i64,
    next: i64,
    logs: &[PartitionLog],
    events: &[OwnerEvent],
    partitions: usize,
) -> ChangeFigures {
    let before = owners_at(events, at, partitions);
    let after = owners_at(events, next.saturating_sub(1), partitions);
    // The last listener call in the window that named each partition.
    let mut settled_from = vec![at; partitions];
    for e in events.iter().filter(|e| e.at >= at && e.at < next) {
        for &p in &e.partitions {
            if let Some(slot) = usize::try_from(p)
                .ok()
                .and_then(|p| settled_from.get_mut(p))
            {
                *slot = e.at;
            }
        }
    }
    let mut recovery = Some(0i64);
    let mut not_recovered = 0;
    let mut moved_pauses = Vec::new();
    let mut unmoved_max: Option<i64> = None;
    let mut moved_wait: Option<i64> = None;
    let mut unmoved_wait: Option<i64> = None;
    let mut redelivered = 0;
    for (p, log) in logs.iter().enumerate() {
        let again = after[p].and_then(|owner| {
            log.progress
                .iter()
                .take_while(|g| g.at < next)
                .find(|g| g.at >= settled_from[p] && g.member == owner)
                .map(|g| g.at - at)
        });
        match again {
            Some(ms) => recovery = recovery.map(|r| r.max(ms)),
            None => {
                recovery = None;
                not_recovered += 1;
            }
        }
        let pause = longest_pause(&log.progress, at, next);
        let wait = longest_wait(&log.progress, at, next, settled_from[p]);
        let max = |m: Option<i64>, v: i64| Some(m.map_or(v, |m| m.max(v)));
        if before[p] != after[p] {
            moved_pauses.push(pause);
            moved_wait = max(moved_wait, wait);
        } else {
            unmoved_max = max(unmoved_max, pause);
            unmoved_wait = max(unmoved_wait, wait);
        }
        redelivered += log
            .redelivered
            .iter()
            .filter(|&&t| t >= at && t < next)
            .count();
    }
    moved_pauses.sort_unstable();
    ChangeFigures {
        event: kind.to_string(),
        cycle,
        at,
        window_ms: next - at,
        recovery_ms: recovery,
        not_recovered,
        moved: moved_pauses.len(),
        unmoved: partitions - moved_pauses.len(),
        unmoved_max_pause_ms: unmoved_max,
        moved_max_pause_ms: moved_pauses.last().copied(),
        moved_median_pause_ms: (!moved_pauses.is_empty())
            .then(|| moved_pauses[moved_pauses.len() / 2]),
        unmoved_max_wait_ms: unmoved_wait,
        moved_max_wait_ms: moved_wait,
        producer_max_gap_ms: producer_gap(logs, at, next),
        redelivered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Consumed;

    fn assigned(at: i64, member: usize, partitions: &[i32]) -> Line {
        listener(ListenerKind::Assigned, at, member, partitions)
    }

    fn revoked(at: i64, member: usize, partitions: &[i32]) -> Line {
        listener(ListenerKind::Revoked, at, member, partitions)
    }

    fn listener(kind: ListenerKind, at: i64, member: usize, partitions: &[i32]) -> Line {
        Line::Listener {
            kind,
            at,
            member,
            partitions: partitions.to_vec(),
        }
    }

    /// Records of `partition` every 100 ms in `[from, to)`, consumed by `member`, offsets
    /// counted from `first_offset`; offset k was produced at 100 k - 5 (a producer that never
    /// stops: a consumer that resumes late consumes records that have waited).
    fn records(member: usize, partition: i32, from: i64, to: i64, first_offset: i64) -> Vec<Line> {
        (0..)
            .map(|i| from + 100 * i)
            .take_while(|&t| t < to)
            .enumerate()
            .map(|(i, t)| {
                Line::Record(Consumed {
                    member,
                    partition,
                    offset: first_offset + i as i64,
                    consumed: t,
                    produced: 100 * (first_offset + i as i64) - 5,
                })
            })
            .collect()
    }

    /// Two members, two partitions each; member 2 joins at 1000 and takes partition 3 from
    /// member 1 (revoked at 1200, assigned at 1500, consumed from 1550); the trace ends at 3000.
    fn cooperative_join() -> Vec<Line> {
        let mut lines = vec![
            assigned(0, 0, &[0, 1]),
            assigned(0, 1, &[2, 3]),
            Line::Steady(100),
            Line::Change {
                kind: ChangeKind::Join,
                at: 1000,
                member: 2,
            },
            revoked(1200, 1, &[3]),
            assigned(1500, 2, &[3]),
            Line::End(3000),
        ];
        for p in 0..3 {
            lines.extend(records(p as usize / 2, p, 0, 3000, 0));
        }
        lines.extend(records(1, 3, 0, 1200, 0)); // last at 1100, offset 11
        lines.extend(records(2, 3, 1550, 3000, 12));
        lines
    }

    #[test]
    fn a_cooperative_join_moves_one_partition_and_pauses_only_it() {
        let a = analyse(&cooperative_join(), 4).expect("a whole trace");
        assert_eq!(a.baseline_max_gap_ms, Some(100));
        assert_eq!(a.never_consumed, 0);
        let [join] = a.changes.as_slice() else {
            panic!("one change: {:?}", a.changes)
        };
        assert_eq!((join.event.as_str(), join.cycle), ("join", 1));
        assert_eq!((join.moved, join.unmoved), (1, 3));
        assert_eq!(join.moved_max_pause_ms, Some(450), "1100 -> 1550");
        assert_eq!(join.unmoved_max_pause_ms, Some(100));
        assert_eq!(join.recovery_ms, Some(550), "partition 3 at 1550");
        assert_eq!((join.not_recovered, join.redelivered), (0, 0));
        assert_eq!(join.window_ms, 2000);
        assert_eq!(join.unmoved_max_wait_ms, Some(5));
        assert_eq!(
            join.moved_max_wait_ms,
            Some(355),
            "offset 12, produced at 1195"
        );
        assert_eq!(join.producer_max_gap_ms, 100);
        assert_eq!(a.baseline_producer_max_gap_ms, Some(100));
    }

    #[test]
    fn a_late_producer_lengthens_the_pause_but_not_the_wait() {
        let mut lines = vec![
            assigned(0, 0, &[0]),
            Line::Steady(100),
            Line::Change {
                kind: ChangeKind::Join,
                at: 1000,
                member: 1,
            },
            Line::End(3000),
        ];
        // The producer stops from 1400 to 2100; the consumer takes each record 5 ms after it.
        let times = (0..15).map(|i| 100 * i).chain((21..30).map(|i| 100 * i));
        lines.extend(times.enumerate().map(|(offset, t)| {
            Line::Record(Consumed {
                member: 0,
                partition: 0,
                offset: offset as i64,
                consumed: t + 5,
                produced: t,
            })
        }));
        let a = analyse(&lines, 1).expect("a whole trace");
        let join = &a.changes[0];
        assert_eq!(join.unmoved_max_pause_ms, Some(700));
        assert_eq!(join.unmoved_max_wait_ms, Some(5));
        assert_eq!(join.producer_max_gap_ms, 700);
        assert_eq!(join.moved_max_wait_ms, None, "nothing moved");
    }

    #[test]
    fn an_eager_rebalance_pauses_partitions_that_come_back_to_their_owner() {
        let mut lines = vec![
            assigned(0, 0, &[0, 1]),
            Line::Change {
                kind: ChangeKind::Join,
                at: 1000,
                member: 1,
            },
            revoked(1100, 0, &[0, 1]),
            assigned(1700, 0, &[0]),
            assigned(1700, 1, &[1]),
            Line::End(3000),
        ];
        lines.extend(records(0, 0, 0, 1100, 0)); // last at 1000
        lines.extend(records(0, 0, 1750, 3000, 11));
        lines.extend(records(0, 1, 0, 1100, 0));
        lines.extend(records(1, 1, 1800, 3000, 11));
        let a = analyse(&lines, 2).expect("a whole trace");
        let join = &a.changes[0];
        assert_eq!((join.moved, join.unmoved), (1, 1));
        assert_eq!(
            join.unmoved_max_pause_ms,
            Some(750),
            "1000 -> 1750, same owner"
        );
        assert_eq!(join.moved_max_pause_ms, Some(800));
        assert_eq!(join.recovery_ms, Some(800));
        assert_eq!(
            join.unmoved_max_wait_ms,
            Some(655),
            "offset 11, produced at 1095"
        );
        assert_eq!(join.moved_max_wait_ms, Some(705));
        assert_eq!(a.baseline_max_gap_ms, None, "no steady line");
    }

    #[test]
    fn records_consumed_again_are_not_progress() {
        let mut lines = cooperative_join();
        // The new owner starts from the last commit (offset 9) instead of 12: 9..=11 again.
        lines.retain(|l| !matches!(l, Line::Record(r) if r.member == 2));
        lines.extend(records(2, 3, 1550, 3000, 9));
        let a = analyse(&lines, 4).expect("a whole trace");
        let join = &a.changes[0];
        assert_eq!(join.redelivered, 3);
        assert_eq!(join.recovery_ms, Some(850), "offset 12 at 1850");
        assert_eq!(join.moved_max_pause_ms, Some(750));
        assert_eq!(join.moved_max_wait_ms, Some(655));
    }

    #[test]
    fn a_partition_not_consumed_again_leaves_the_change_unrecovered() {
        let mut lines = cooperative_join();
        lines.retain(|l| !matches!(l, Line::Record(r) if r.member == 2));
        let a = analyse(&lines, 4).expect("a whole trace");
        let join = &a.changes[0];
        assert_eq!((join.recovery_ms, join.not_recovered), (None, 1));
        assert_eq!(
            join.moved_max_pause_ms,
            Some(1900),
            "1100 until the end at 3000"
        );
        assert_eq!(
            join.moved_max_wait_ms,
            Some(1900),
            "at least as long as the pause"
        );
    }

    #[test]
    fn each_change_is_measured_up_to_the_next_and_a_closed_member_holds_nothing() {
        let mut lines = cooperative_join();
        lines.retain(|l| !matches!(l, Line::End(_)));
        lines.retain(|l| !matches!(l, Line::Record(r) if r.member == 2 && r.consumed >= 2000));
        lines.extend([
            Line::Change {
                kind: ChangeKind::Leave,
                at: 2000,
                member: 2,
            },
            Line::Closed {
                at: 2100,
                member: 2,
            },
            assigned(2300, 1, &[3]),
            Line::End(4000),
        ]);
        lines.extend(records(1, 3, 2400, 4000, 17));
        for p in 0..3 {
            lines.extend(records(p as usize / 2, p, 3000, 4000, 30));
        }
        let a = analyse(&lines, 4).expect("a whole trace");
        let [join, leave] = a.changes.as_slice() else {
            panic!("two changes: {:?}", a.changes)
        };
        assert_eq!(join.window_ms, 1000);
        assert_eq!(join.recovery_ms, Some(550));
        assert_eq!((leave.event.as_str(), leave.cycle), ("leave", 1));
        assert_eq!(leave.moved, 1, "partition 3 back to member 1");
        assert_eq!(leave.moved_max_pause_ms, Some(450), "1950 -> 2400");
        assert_eq!(leave.recovery_ms, Some(400));
    }

    #[test]
    fn a_trace_without_its_end_or_with_a_foreign_partition_is_refused() {
        let mut lines = cooperative_join();
        lines.retain(|l| !matches!(l, Line::End(_)));
        assert!(analyse(&lines, 4).is_err());
        assert!(analyse(&cooperative_join(), 3).is_err(), "partition 3 of 3");
    }
}
