//! What a soak's files add up to: lost and duplicated records against the producer's
//! acknowledgements, why each duplicate happened, the stalls of each partition, and what the
//! soak and the fault proxy were doing at the time.
//!
//! A *stall* of a partition is a time during which it had acknowledged records not yet processed
//! and nothing of it was processed: between two processings `t1 < t2` of the partition (any
//! processing, duplicates too), it starts when the first record not processed by `t1` was
//! acknowledged (or at `t1`, if that was earlier) and ends at `t2`. Records never processed
//! stall their partition until the end of the run.

use std::collections::{BTreeMap, HashMap};

use crate::inputs::{Acked, LifeId, Mark, Processed};

/// Acknowledged and processed records compared per (partition, offset).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Check {
    /// Acknowledged, never processed.
    pub lost: Vec<(i32, i64)>,
    /// Processings beyond the first, per cause.
    pub duplicates: BTreeMap<String, u64>,
    /// Processed with another value than the one acknowledged at that offset.
    pub wrong: Vec<(i32, i64)>,
    /// Processed but not acknowledged (the producer gave up on them or stopped before the ack).
    pub unacked: u64,
    /// Distinct acknowledged records processed.
    pub distinct: u64,
}

impl Check {
    pub fn duplicated(&self) -> u64 {
        self.duplicates.values().sum()
    }
}

/// How a member's life ended, from the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Life {
    pub start_ms: i64,
    /// When its process exited (`None`: still running when the timeline ends).
    pub end_ms: Option<i64>,
    /// The signal that ended it (`TERM`, `KILL`; `None`: it exited on its own).
    pub signal: Option<String>,
    /// Why the soak sent it: `chaos`, `final`, `hung` (a SIGTERM that did not end it in time).
    pub reason: Option<String>,
    pub status: Option<String>,
}

/// Every member life, from the timeline's `member-start`, `member-stop` and `member-exit`.
pub fn lives(timeline: &[Mark]) -> BTreeMap<LifeId, Life> {
    let mut lives: BTreeMap<LifeId, Life> = BTreeMap::new();
    for mark in timeline.iter().filter(|m| m.who == "soak") {
        let (Some(member), Some(life)) = (
            mark.field("member").and_then(|m| m.parse().ok()),
            mark.field("life").and_then(|l| l.parse().ok()),
        ) else {
            continue;
        };
        let entry = lives.entry((member, life)).or_insert(Life {
            start_ms: mark.at_ms,
            end_ms: None,
            signal: None,
            reason: None,
            status: None,
        });
        match mark.what.as_str() {
            "member-start" => entry.start_ms = mark.at_ms,
            // A later stop (SIGKILL after a hung SIGTERM) is the one that ended it.
            "member-stop" => {
                entry.signal = mark.field("signal").map(String::from);
                entry.reason = mark.field("reason").map(String::from);
            }
            "member-exit" => {
                entry.end_ms = Some(mark.at_ms);
                entry.status = mark.field("status").map(String::from);
            }
            _ => {}
        }
    }
    lives
}

/// Why a record was processed again by `again` after `before` had processed it.
fn cause(before: LifeId, again: (LifeId, i64), lives: &BTreeMap<LifeId, Life>) -> String {
    let (life, at_ms) = again;
    if before == life {
        return "the same member life processed it again (partition lost and regained, or \
                fetched again)"
            .into();
    }
    let Some(previous) = lives.get(&before) else {
        return "a member life the timeline does not know".into();
    };
    match previous.end_ms {
        Some(end) if end <= at_ms => match (previous.signal.as_deref(), previous.reason.as_deref())
        {
            (Some("KILL"), Some("hung")) => {
                "its member was SIGKILLed after a SIGTERM that did not end it".into()
            }
            (Some("KILL"), _) => "its member was SIGKILLed (uncommitted progress)".into(),
            (Some("TERM"), _) => {
                "its member stopped on SIGTERM (its last commit did not land)".into()
            }
            _ => format!(
                "its member exited on its own (status {})",
                previous.status.as_deref().unwrap_or("?")
            ),
        },
        _ => "the partition moved from a live member (a rebalance; uncommitted progress)".into(),
    }
}

/// Compares what was acknowledged with what was processed; duplicates get their causes from
/// the member lives.
pub fn check(acked: &[Acked], processed: &[Processed], lives: &BTreeMap<LifeId, Life>) -> Check {
    let mut by_record: HashMap<(i32, i64), Vec<&Processed>> = HashMap::new();
    for p in processed {
        by_record
            .entry((p.partition, p.offset))
            .or_default()
            .push(p);
    }
    let acked_at: HashMap<(i32, i64), &Acked> =
        acked.iter().map(|a| ((a.partition, a.offset), a)).collect();
    let mut out = Check::default();
    for (key, times) in &mut by_record {
        let key = *key;
        times.sort_by_key(|p| p.at_ms);
        match acked_at.get(&key) {
            Some(a) => {
                out.distinct += 1;
                if times.iter().any(|p| p.value != a.value) {
                    out.wrong.push(key);
                }
            }
            None => out.unacked += 1,
        }
        for pair in times.windows(2) {
            let why = cause(pair[0].life, (pair[1].life, pair[1].at_ms), lives);
            *out.duplicates.entry(why).or_default() += 1;
        }
    }
    out.lost = acked
        .iter()
        .map(|a| (a.partition, a.offset))
        .filter(|k| !by_record.contains_key(k))
        .collect();
    out.lost.sort_unstable();
    out.wrong.sort_unstable();
    out
}

/// One stall of a partition, `[start_ms, end_ms)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stall {
    pub start_ms: i64,
    pub end_ms: i64,
}

impl Stall {
    pub fn millis(&self) -> i64 {
        self.end_ms - self.start_ms
    }
}

/// The stalls of one partition, in time order: `acked` is each acknowledged record's (ack time,
/// first processing time or `None`), `processed` every processing time of the partition, and
/// `until` the end of the run (records never processed stall the partition until then).
pub fn stalls(acked: &[(i64, Option<i64>)], processed: &[i64], until: i64) -> Vec<Stall> {
    // (first processing, ack) by first processing; never processed: at the end.
    let mut pending: Vec<(i64, i64)> = acked
        .iter()
        .map(|(ack, first)| (first.unwrap_or(i64::MAX), *ack))
        .collect();
    pending.sort_unstable();
    // suffix_min[i]: the earliest ack among pending[i..].
    let mut suffix_min = vec![i64::MAX; pending.len() + 1];
    for i in (0..pending.len()).rev() {
        suffix_min[i] = suffix_min[i + 1].min(pending[i].1);
    }
    let mut times: Vec<i64> = processed.to_vec();
    times.sort_unstable();
    times.dedup();
    let mut out = Vec::new();
    // From each processing (and the run's start) to the next processing (and the run's end).
    let starts = std::iter::once(i64::MIN).chain(times.iter().copied());
    let ends = times.iter().copied().chain(std::iter::once(until));
    for (from, to) in starts.zip(ends) {
        // The records not processed by `from`.
        let first = pending.partition_point(|(f, _)| *f <= from);
        let earliest_ack = suffix_min[first];
        if earliest_ack == i64::MAX {
            continue;
        }
        let start = earliest_ack.max(from);
        if start < to {
            out.push(Stall {
                start_ms: start,
                end_ms: to,
            });
        }
    }
    out
}

/// A time the soak or the fault proxy disturbed the members.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Disturbance {
    pub start_ms: i64,
    /// When it was over (the member or broker back, the fault switched off), before `settle`.
    pub end_ms: i64,
    /// What it was: `member SIGKILL`, `broker restart`, `coordinator move`, `proxy half-open`...
    pub kind: String,
    pub label: String,
}

/// The disturbances of a timeline: a member from its stop to its next start, a broker from its
/// stop to its answering again, a fault episode from its start to its end; each open one ends at
/// `until`.
pub fn disturbances(timeline: &[Mark], until: i64) -> Vec<Disturbance> {
    type Open = BTreeMap<String, (i64, String, String)>;
    let mut open: Open = BTreeMap::new();
    let mut out = Vec::new();
    let mut close = |key: String, at: i64, open: &mut Open| {
        if let Some((start_ms, kind, label)) = open.remove(&key) {
            out.push(Disturbance {
                start_ms,
                end_ms: at,
                kind,
                label,
            });
        }
    };
    for mark in timeline {
        let field = |k: &str| mark.field(k).unwrap_or("?");
        match (mark.who.as_str(), mark.what.as_str()) {
            ("soak", "member-stop") if field("reason") != "final" => {
                // A SIGKILL after a hung SIGTERM continues the same disturbance.
                open.entry(format!("member-{}", field("member")))
                    .or_insert_with(|| {
                        let label = format!(
                            "SIG{} of member {} ({})",
                            field("signal"),
                            field("member"),
                            field("kind")
                        );
                        (mark.at_ms, format!("member SIG{}", field("signal")), label)
                    });
            }
            ("soak", "member-start") => {
                close(format!("member-{}", field("member")), mark.at_ms, &mut open)
            }
            ("soak", "broker-stop") => {
                let (kind, what) = if field("reason") == "coordinator" {
                    ("coordinator move", "coordinator move: ")
                } else {
                    ("broker restart", "")
                };
                let how = if field("how") == "kill" {
                    "SIGKILL"
                } else {
                    "restart"
                };
                let label = format!("{what}broker {} {how}", field("node"));
                let key = format!("broker-{}", field("node"));
                open.insert(key, (mark.at_ms, kind.to_string(), label));
            }
            ("soak", "broker-up") => {
                close(format!("broker-{}", field("node")), mark.at_ms, &mut open)
            }
            ("fault-proxy", "fault-start") => {
                let label = format!("proxy {}", field("kind"));
                let key = format!("fault-{}", field("kind"));
                open.insert(key, (mark.at_ms, label.clone(), label));
            }
            ("fault-proxy", "fault-end") => {
                close(format!("fault-{}", field("kind")), mark.at_ms, &mut open)
            }
            _ => {}
        }
    }
    for (_, (start_ms, kind, label)) in open {
        out.push(Disturbance {
            start_ms,
            end_ms: until,
            kind,
            label,
        });
    }
    out.sort_by_key(|d| d.start_ms);
    out
}

/// The disturbances going on during `stall`, each counted as going on until `settle_ms` after
/// it was over (a member back still has to rejoin, a broker back to lead again).
pub fn during<'a>(
    stall: &Stall,
    disturbances: &'a [Disturbance],
    settle_ms: i64,
) -> Vec<&'a Disturbance> {
    disturbances
        .iter()
        .filter(|d| d.start_ms < stall.end_ms && d.end_ms + settle_ms > stall.start_ms)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::inputs::parse_mark;

    fn marks(text: &str) -> Vec<Mark> {
        text.lines().filter_map(parse_mark).collect()
    }

    #[test]
    fn a_stall_starts_at_the_first_unprocessed_ack_and_ends_at_the_next_processing() {
        // Acked at 0, 10, 20, 30; processed at 5, 12, 100 (a gap), the last never.
        let acked = [(0, Some(5)), (10, Some(12)), (20, Some(100)), (30, None)];
        let processed = [5, 12, 100];
        let got = stalls(&acked, &processed, 200);
        assert_eq!(
            got,
            [
                Stall {
                    start_ms: 0,
                    end_ms: 5
                },
                Stall {
                    start_ms: 10,
                    end_ms: 12
                },
                Stall {
                    start_ms: 20,
                    end_ms: 100
                },
                Stall {
                    start_ms: 100,
                    end_ms: 200
                },
            ]
        );
        // Nothing pending between two processings: no stall.
        assert_eq!(stalls(&[(0, Some(0)), (50, Some(50))], &[0, 50], 60), []);
        // A duplicate processing in the middle of a gap ends the stall there.
        let got = stalls(&[(0, Some(0)), (10, Some(90))], &[0, 40, 90], 100);
        assert_eq!(
            got,
            [
                Stall {
                    start_ms: 10,
                    end_ms: 40
                },
                Stall {
                    start_ms: 40,
                    end_ms: 90
                }
            ]
        );
    }

    fn processed(partition: i32, offset: i64, at_ms: i64, life: LifeId) -> Processed {
        Processed {
            partition,
            offset,
            value: offset.to_string(),
            at_ms,
            life,
        }
    }

    fn acked(partition: i32, offset: i64) -> Acked {
        Acked {
            partition,
            offset,
            value: offset.to_string(),
            at_ms: 0,
        }
    }

    #[test]
    fn lost_wrong_and_duplicates_by_cause() {
        let timeline = marks(
            "0 soak member-start member=1 life=1\n\
             0 soak member-start member=2 life=1\n\
             0 soak member-start member=3 life=1\n\
             50 soak member-stop member=1 life=1 signal=KILL reason=chaos\n\
             51 soak member-exit member=1 life=1 status=137\n\
             60 soak member-stop member=3 life=1 signal=TERM reason=chaos\n\
             61 soak member-exit member=3 life=1 status=0\n",
        );
        let lives = lives(&timeline);
        assert_eq!(lives[&(1, 1)].signal.as_deref(), Some("KILL"));
        let acked = [
            acked(0, 0),
            acked(0, 1),
            acked(0, 2),
            acked(0, 3),
            acked(1, 0),
        ];
        let mut wrong = processed(0, 3, 10, (2, 1));
        wrong.value = "x".into();
        let processed = [
            processed(0, 0, 10, (1, 1)),
            processed(0, 0, 70, (2, 1)), // after member 1's SIGKILL
            processed(0, 1, 10, (2, 1)),
            processed(0, 1, 20, (3, 1)), // member 2 still alive
            processed(0, 2, 10, (3, 1)),
            processed(0, 2, 80, (2, 1)), // after member 3's SIGTERM
            processed(0, 2, 90, (2, 1)), // member 2 again
            processed(5, 9, 10, (2, 1)), // never acknowledged
            wrong,
        ];
        let check = check(&acked, &processed, &lives);
        assert_eq!(check.lost, [(1, 0)]);
        assert_eq!(check.wrong, [(0, 3)]);
        assert_eq!(check.unacked, 1);
        assert_eq!(check.distinct, 4);
        assert_eq!(check.duplicated(), 4);
        assert_eq!(check.duplicates.len(), 4, "{:?}", check.duplicates);
        assert!(check.duplicates.values().all(|n| *n == 1));
        assert!(check.duplicates.keys().any(|k| k.contains("SIGKILLed")));
        assert!(check.duplicates.keys().any(|k| k.contains("SIGTERM")));
        assert!(check.duplicates.keys().any(|k| k.contains("live member")));
        assert!(check
            .duplicates
            .keys()
            .any(|k| k.contains("same member life")));
    }

    #[test]
    fn disturbances_span_stop_to_back_and_settle_widens_them() {
        let timeline = marks(
            "100 soak member-stop member=4 life=1 signal=KILL reason=chaos kind=dynamic\n\
             150 soak member-start member=4 life=2\n\
             200 soak broker-stop node=2 how=kill reason=coordinator\n\
             300 soak broker-up node=2\n\
             400 fault-proxy fault-start kind=half-open for_ms=8000\n\
             480 fault-proxy fault-end kind=half-open dropped_frames=3\n\
             500 fault-proxy fault-start kind=latency for_ms=20000\n\
             900 soak member-stop member=1 life=1 signal=TERM reason=final kind=static\n",
        );
        let d = disturbances(&timeline, 1000);
        let labels: Vec<&str> = d.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "SIGKILL of member 4 (dynamic)",
                "coordinator move: broker 2 SIGKILL",
                "proxy half-open",
                "proxy latency"
            ]
        );
        assert_eq!((d[1].start_ms, d[1].end_ms), (200, 300));
        assert_eq!(d[3].end_ms, 1000, "still on at the end");
        let stall = Stall {
            start_ms: 320,
            end_ms: 390,
        };
        assert!(during(&stall, &d, 0).is_empty());
        let got: Vec<&str> = during(&stall, &d, 30)
            .iter()
            .map(|d| d.label.as_str())
            .collect();
        assert_eq!(got, ["coordinator move: broker 2 SIGKILL"]);
    }
}
