//! The trace a run of members leaves: what each member consumed and when, each rebalance-listener
//! call, and the scenario's own marks. Mooring's members (`members.rs`) and the Java client's
//! (`bench/java-peers/RebalanceBench.java`) write the same lines, so one analysis reads both.
//!
//! One line each, space-separated, times in ms since the Unix epoch, partitions of the one topic:
//!
//! ```text
//! steady T          the first members have settled: the baseline runs from here to the first change
//! join T M          member M is created and subscribes (a change begins)
//! leave T M         member M starts to close (a change begins)
//! settled T         the driver saw the group settle after the last change (informational)
//! closed T M        member M has closed
//! end T             the last change is over; the members close after it
//! assigned T M P,P  a listener call (revoked, lost alike); "-" for no partitions
//! r M P O C T       member M consumed offset O of partition P at C; the record was produced at T
//! ```

use std::fmt;
use std::io::BufRead;

/// A change the scenario makes to the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Join,
    Leave,
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChangeKind::Join => "join",
            ChangeKind::Leave => "leave",
        })
    }
}

/// A rebalance-listener call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListenerKind {
    Assigned,
    Revoked,
    Lost,
}

impl fmt::Display for ListenerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ListenerKind::Assigned => "assigned",
            ListenerKind::Revoked => "revoked",
            ListenerKind::Lost => "lost",
        })
    }
}

/// One line of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    Steady(i64),
    Change {
        kind: ChangeKind,
        at: i64,
        member: usize,
    },
    Settled(i64),
    Closed {
        at: i64,
        member: usize,
    },
    End(i64),
    Listener {
        kind: ListenerKind,
        at: i64,
        member: usize,
        partitions: Vec<i32>,
    },
    Record(Consumed),
}

/// One record a member consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Consumed {
    pub member: usize,
    pub partition: i32,
    pub offset: i64,
    pub consumed: i64,
    pub produced: i64,
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Line::Steady(at) => write!(f, "steady {at}"),
            Line::Change { kind, at, member } => write!(f, "{kind} {at} {member}"),
            Line::Settled(at) => write!(f, "settled {at}"),
            Line::Closed { at, member } => write!(f, "closed {at} {member}"),
            Line::End(at) => write!(f, "end {at}"),
            Line::Listener {
                kind,
                at,
                member,
                partitions,
            } => {
                write!(f, "{kind} {at} {member} ")?;
                if partitions.is_empty() {
                    return f.write_str("-");
                }
                for (i, p) in partitions.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{p}")?;
                }
                Ok(())
            }
            Line::Record(r) => write!(
                f,
                "r {} {} {} {} {}",
                r.member, r.partition, r.offset, r.consumed, r.produced
            ),
        }
    }
}

/// A line that is not one of the trace's.
#[derive(Debug, thiserror::Error)]
#[error("trace line {number}: {message}: {text:?}")]
pub struct ParseError {
    pub number: usize,
    pub text: String,
    pub message: String,
}

impl Line {
    /// Parses one line (`number` is 1-based, for the error).
    pub fn parse(text: &str, number: usize) -> Result<Line, ParseError> {
        let fail = |message: &str| ParseError {
            number,
            text: text.to_owned(),
            message: message.to_owned(),
        };
        let fields: Vec<&str> = text.split_whitespace().collect();
        let int = |i: usize| -> Result<i64, ParseError> {
            fields
                .get(i)
                .ok_or_else(|| fail("too few fields"))?
                .parse()
                .map_err(|_| fail("not an integer"))
        };
        let member = |i: usize| -> Result<usize, ParseError> {
            usize::try_from(int(i)?).map_err(|_| fail("not a member index"))
        };
        let listener = |kind| -> Result<Line, ParseError> {
            let list = fields.get(3).ok_or_else(|| fail("too few fields"))?;
            let partitions = if *list == "-" {
                Vec::new()
            } else {
                list.split(',')
                    .map(|p| p.parse().map_err(|_| fail("not a partition")))
                    .collect::<Result<_, _>>()?
            };
            Ok(Line::Listener {
                kind,
                at: int(1)?,
                member: member(2)?,
                partitions,
            })
        };
        let change = |kind| -> Result<Line, ParseError> {
            Ok(Line::Change {
                kind,
                at: int(1)?,
                member: member(2)?,
            })
        };
        match fields.first().copied() {
            Some("r") => Ok(Line::Record(Consumed {
                member: member(1)?,
                partition: i32::try_from(int(2)?).map_err(|_| fail("not a partition"))?,
                offset: int(3)?,
                consumed: int(4)?,
                produced: int(5)?,
            })),
            Some("steady") => Ok(Line::Steady(int(1)?)),
            Some("join") => change(ChangeKind::Join),
            Some("leave") => change(ChangeKind::Leave),
            Some("settled") => Ok(Line::Settled(int(1)?)),
            Some("closed") => Ok(Line::Closed {
                at: int(1)?,
                member: member(2)?,
            }),
            Some("end") => Ok(Line::End(int(1)?)),
            Some("assigned") => listener(ListenerKind::Assigned),
            Some("revoked") => listener(ListenerKind::Revoked),
            Some("lost") => listener(ListenerKind::Lost),
            _ => Err(fail("unknown line")),
        }
    }
}

/// Reads every line of a trace (blank lines skipped).
pub fn read(input: impl BufRead) -> Result<Vec<Line>, Box<dyn std::error::Error>> {
    let mut lines = Vec::new();
    for (i, text) in input.lines().enumerate() {
        let text = text?;
        if text.trim().is_empty() {
            continue;
        }
        lines.push(Line::parse(&text, i + 1)?);
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_reads_back_as_written() {
        let lines = [
            Line::Steady(10),
            Line::Change {
                kind: ChangeKind::Join,
                at: 11,
                member: 3,
            },
            Line::Change {
                kind: ChangeKind::Leave,
                at: 12,
                member: 3,
            },
            Line::Settled(13),
            Line::Closed { at: 14, member: 3 },
            Line::End(15),
            Line::Listener {
                kind: ListenerKind::Assigned,
                at: 16,
                member: 0,
                partitions: vec![0, 5, 999],
            },
            Line::Listener {
                kind: ListenerKind::Revoked,
                at: 17,
                member: 1,
                partitions: vec![],
            },
            Line::Listener {
                kind: ListenerKind::Lost,
                at: 18,
                member: 2,
                partitions: vec![7],
            },
            Line::Record(Consumed {
                member: 2,
                partition: 7,
                offset: 1234,
                consumed: 19,
                produced: 9,
            }),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let read = read(text.as_bytes()).expect("a trace we wrote");
        assert_eq!(read, lines);
    }

    #[test]
    fn a_bad_line_is_an_error_naming_it() {
        let err = read("steady 1\nr 1 2 x 4 5\n".as_bytes()).expect_err("offset x");
        assert!(err.to_string().contains("trace line 2"), "{err}");
        assert!(read("wat 1\n".as_bytes()).is_err());
        assert!(read("assigned 1 2\n".as_bytes()).is_err());
    }
}
