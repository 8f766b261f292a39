//! Burrow's evaluation of one partition: its status from a window of the group's commits (each
//! with the lag it left), the log ends of the last look-ups, and the lag now, with no threshold
//! to tune. As Burrow (1.x) decides, the first rule that holds:
//!
//! 1. OK when the lag now is not above the allowed lag (Burrow allows none).
//! 2. STOP when the time since the last commit is longer than the window's span (first to last
//!    commit) and no log end of the recent look-ups was within the allowed lag of the last
//!    commit (one that was says the consumer was caught up a moment ago: not yet stopped).
//! 3. OK when a commit of the window left no more than the allowed lag.
//! 4. REWIND when a commit's offset is below the one before it.
//! 5. STALL when the window holds two commits or more, all of the same offset: the member
//!    commits, but without moving.
//! 6. WARN when the window is full and the lag did not go down from any commit to the next:
//!    offsets move, but the consumer falls behind.
//! 7. Else OK.
//!
//! An empty window (no commit seen yet) is OK, as in Burrow, with its completeness 0. Two
//! deliberate differences, both about a partition whose first commits come while a burst
//! arrives (seen on the real broker: a partition that had no records before the burst): Burrow
//! calls a window of one commit with lag STALL (its "same offset" check holds trivially), and
//! judges WARN on a window not yet full (lag growing over two or three commits, then drained).
//! Here STALL needs a repeated commit, and WARN growth over a full window.

use serde::Serialize;

/// A partition's status, Burrow's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PartitionStatus {
    /// Caught up within the window, or moving without falling behind.
    Ok,
    /// Moving, but the lag grows at every commit.
    Warn,
    /// Committing the same offset over and over with lag.
    Stall,
    /// Commits stopped, with lag.
    Stop,
    /// The committed offset went back.
    Rewind,
}

impl PartitionStatus {
    /// Every status, for the state-set series.
    pub const ALL: [PartitionStatus; 5] = [
        PartitionStatus::Ok,
        PartitionStatus::Warn,
        PartitionStatus::Stall,
        PartitionStatus::Stop,
        PartitionStatus::Rewind,
    ];

    /// The label value.
    pub fn name(self) -> &'static str {
        match self {
            PartitionStatus::Ok => "OK",
            PartitionStatus::Warn => "WARN",
            PartitionStatus::Stall => "STALL",
            PartitionStatus::Stop => "STOP",
            PartitionStatus::Rewind => "REWIND",
        }
    }

    /// An error: the group is ERR while one of its partitions is.
    pub fn is_error(self) -> bool {
        matches!(
            self,
            PartitionStatus::Stall | PartitionStatus::Stop | PartitionStatus::Rewind
        )
    }
}

/// A group's status: ERR if a partition is STOP, STALL or REWIND, else WARN if one is WARN.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GroupStatus {
    /// Every partition OK.
    Ok,
    /// A partition WARN, none in error.
    Warn,
    /// A partition STOP, STALL or REWIND.
    Err,
}

impl GroupStatus {
    /// Every status, for the state-set series.
    pub const ALL: [GroupStatus; 3] = [GroupStatus::Ok, GroupStatus::Warn, GroupStatus::Err];

    /// The label value.
    pub fn name(self) -> &'static str {
        match self {
            GroupStatus::Ok => "OK",
            GroupStatus::Warn => "WARN",
            GroupStatus::Err => "ERR",
        }
    }

    /// The group's status over its partitions' statuses.
    pub fn of(statuses: impl IntoIterator<Item = PartitionStatus>) -> GroupStatus {
        statuses
            .into_iter()
            .map(|s| match s {
                PartitionStatus::Ok => GroupStatus::Ok,
                PartitionStatus::Warn => GroupStatus::Warn,
                _ => GroupStatus::Err,
            })
            .max()
            .unwrap_or(GroupStatus::Ok)
    }
}

/// One commit of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WindowCommit {
    /// The committed offset.
    pub offset: i64,
    /// When it was committed, ms since the epoch.
    pub at_ms: i64,
    /// The lag it left: the log end known then minus the offset (0 when the end known was
    /// behind the offset).
    pub lag: i64,
}

/// Which rule decided, in words, for the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// No commit seen yet.
    NoCommits,
    /// The lag now is within the allowed lag.
    CaughtUpNow,
    /// A commit of the window left no more than the allowed lag.
    CaughtUpInWindow,
    /// A commit's offset is below the one before.
    OffsetWentBack,
    /// No commit for longer than the window's span.
    CommitsStopped,
    /// Every commit of the window has the same offset.
    SameOffset,
    /// The lag grew (or held) at every commit.
    LagNeverFell,
    /// Offsets move and the lag fell at some commit.
    Moving,
    /// Commits stopped, but the member beside the sidecar is alive and holds the partition
    /// (paused, or its handler past its time): STALL rather than STOP.
    HeldByLiveMember,
}

/// What a window is judged against besides its commits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Judge {
    /// The lag now.
    pub lag_now: i64,
    /// Now, ms since the epoch.
    pub now_ms: i64,
    /// Lags up to this count as none.
    pub allowed: i64,
    /// The window's length when full.
    pub full: usize,
}

/// Burrow's status of a window (oldest commit first) with the log ends of the recent look-ups
/// (`recent_ends`).
pub fn evaluate(
    window: &[WindowCommit],
    recent_ends: &[i64],
    judge: Judge,
) -> (PartitionStatus, Rule) {
    let Judge {
        lag_now,
        now_ms,
        allowed,
        full,
    } = judge;
    let (Some(first), Some(last)) = (window.first(), window.last()) else {
        return (PartitionStatus::Ok, Rule::NoCommits);
    };
    if lag_now <= allowed {
        return (PartitionStatus::Ok, Rule::CaughtUpNow);
    }
    let stopped = now_ms - last.at_ms > last.at_ms - first.at_ms;
    let caught_up_recently = recent_ends.iter().any(|&end| end - last.offset <= allowed);
    if stopped && !caught_up_recently {
        return (PartitionStatus::Stop, Rule::CommitsStopped);
    }
    if window.iter().any(|c| c.lag <= allowed) {
        return (PartitionStatus::Ok, Rule::CaughtUpInWindow);
    }
    let pairs = || window.windows(2).map(|w| (w[0], w[1]));
    if pairs().any(|(a, b)| b.offset < a.offset) {
        return (PartitionStatus::Rewind, Rule::OffsetWentBack);
    }
    if window.len() >= 2 && pairs().all(|(a, b)| a.offset == b.offset) {
        return (PartitionStatus::Stall, Rule::SameOffset);
    }
    if window.len() >= full && pairs().all(|(a, b)| b.lag >= a.lag) {
        return (PartitionStatus::Warn, Rule::LagNeverFell);
    }
    (PartitionStatus::Ok, Rule::Moving)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commits a second apart from t = 100 s: (offset, lag) pairs.
    fn window(commits: &[(i64, i64)]) -> Vec<WindowCommit> {
        commits
            .iter()
            .enumerate()
            .map(|(i, &(offset, lag))| WindowCommit {
                offset,
                at_ms: 100_000 + 1_000 * i as i64,
                lag,
            })
            .collect()
    }

    /// Judged with a window of 4 when full.
    fn j(lag_now: i64, now_ms: i64, allowed: i64) -> Judge {
        Judge {
            lag_now,
            now_ms,
            allowed,
            full: 4,
        }
    }

    /// Just after the last of `n` commits.
    fn soon(n: usize) -> i64 {
        100_000 + 1_000 * n as i64
    }

    #[test]
    fn burrows_rules_in_their_order() {
        let far = [1_000];
        let moving = window(&[(10, 5), (20, 8), (30, 4), (40, 9)]);
        assert_eq!(
            evaluate(&moving, &far, j(9, soon(4), 0)),
            (PartitionStatus::Ok, Rule::Moving)
        );
        let caught_up = window(&[(10, 5), (20, 0), (30, 4)]);
        assert_eq!(
            evaluate(&caught_up, &far, j(9, soon(3), 0)).1,
            Rule::CaughtUpInWindow
        );
        assert_eq!(
            evaluate(&moving, &far, j(0, soon(4), 0)).1,
            Rule::CaughtUpNow
        );
        let falling_behind = window(&[(10, 5), (20, 8), (30, 8), (40, 12)]);
        assert_eq!(
            evaluate(&falling_behind, &far, j(12, soon(4), 0)),
            (PartitionStatus::Warn, Rule::LagNeverFell)
        );
        let stalled = window(&[(10, 5), (10, 8), (10, 12)]);
        assert_eq!(
            evaluate(&stalled, &far, j(12, soon(3), 0)),
            (PartitionStatus::Stall, Rule::SameOffset)
        );
        let rewound = window(&[(40, 5), (10, 35), (20, 40)]);
        assert_eq!(
            evaluate(&rewound, &far, j(40, soon(3), 0)),
            (PartitionStatus::Rewind, Rule::OffsetWentBack)
        );
        // The window spans 3 s (4 commits a second apart): 3.001 s after the last, stopped.
        assert_eq!(
            evaluate(&falling_behind, &far, j(12, 103_000 + 3_000, 0)).0,
            PartitionStatus::Warn
        );
        assert_eq!(
            evaluate(&falling_behind, &far, j(12, 103_000 + 3_001, 0)),
            (PartitionStatus::Stop, Rule::CommitsStopped)
        );
        // A stop comes before everything else, even a window that once caught up or rewound.
        assert_eq!(
            evaluate(&caught_up, &far, j(9, 1_000_000, 0)).0,
            PartitionStatus::Stop
        );
        assert_eq!(
            evaluate(&rewound, &far, j(40, 1_000_000, 0)).0,
            PartitionStatus::Stop
        );
        assert_eq!(
            evaluate(&[], &far, j(40, 1_000_000, 0)),
            (PartitionStatus::Ok, Rule::NoCommits)
        );
    }

    #[test]
    fn not_stopped_while_a_recent_log_end_was_caught_up() {
        // The last commit (40) was the log end at a recent look-up: new records came after the
        // member went quiet, it is not called stopped yet.
        let w = window(&[(10, 0), (40, 0)]);
        assert_eq!(
            evaluate(&w, &[40, 90], j(50, 1_000_000, 0)).1,
            Rule::CaughtUpInWindow
        );
        assert_eq!(
            evaluate(&w, &[60, 90], j(50, 1_000_000, 0)).0,
            PartitionStatus::Stop
        );
        assert_eq!(
            evaluate(&w, &[60, 90], j(50, 1_000_000, 20)).1,
            Rule::CaughtUpInWindow
        );
    }

    #[test]
    fn an_allowed_lag_counts_as_caught_up() {
        let far = [1_000];
        let w = window(&[(10, 5), (20, 8), (30, 9), (40, 9)]);
        assert_eq!(
            evaluate(&w, &far, j(9, soon(4), 0)).0,
            PartitionStatus::Warn
        );
        assert_eq!(
            evaluate(&w, &far, j(9, soon(4), 5)).1,
            Rule::CaughtUpInWindow
        );
        assert_eq!(evaluate(&w, &far, j(9, soon(4), 9)).1, Rule::CaughtUpNow);
    }

    #[test]
    fn warn_needs_a_full_window() {
        // A burst arriving as the first commits come: lag grows over three, then drains.
        let w = window(&[(10, 5), (20, 80), (30, 900)]);
        assert_eq!(
            evaluate(&w, &[1_000], j(900, soon(3), 0)),
            (PartitionStatus::Ok, Rule::Moving)
        );
    }

    #[test]
    fn a_single_commit_with_lag_is_not_stalled_and_stopped_as_soon_as_time_passes() {
        // Burrow's rule with a span of 0: one commit and lag is a stop a moment later, unless a
        // recent look-up saw the log end at or below it.
        let w = window(&[(10, 5)]);
        assert_eq!(
            evaluate(&w, &[1_000], j(5, 100_000, 0)).0,
            PartitionStatus::Ok
        );
        assert_eq!(
            evaluate(&w, &[1_000], j(5, 100_001, 0)).0,
            PartitionStatus::Stop
        );
        assert_eq!(
            evaluate(&w, &[0, 1_000], j(5, 100_001, 0)).0,
            PartitionStatus::Ok
        );
    }

    #[test]
    fn the_group_is_its_worst_partition() {
        use PartitionStatus::*;
        assert_eq!(GroupStatus::of([Ok, Ok]), GroupStatus::Ok);
        assert_eq!(GroupStatus::of([Ok, Warn]), GroupStatus::Warn);
        for error in [Stall, Stop, Rewind] {
            assert_eq!(GroupStatus::of([Warn, error, Ok]), GroupStatus::Err);
        }
        assert_eq!(GroupStatus::of([]), GroupStatus::Ok);
    }
}
