//! One partition's window of commits, kept as Burrow keeps it: the last `lag.status.window`
//! commits, where a commit less than `lag.status.min.distance.ms` after the last one kept
//! replaces it (its offset and lag) but keeps that one's time, so a member committing more often
//! than the distance still fills the window at the distance's pace. Beside them, the log ends of
//! as many recent broker look-ups (Burrow's broker offsets), which say whether the member was
//! caught up a moment ago.

use std::collections::VecDeque;

use super::rules::WindowCommit;

/// The commits kept for one partition, oldest first. A commit's lag is unknown until the broker
/// watch has seen the partition's log end (commits read before its first look-up).
#[derive(Debug, Clone, Default)]
pub struct CommitWindow {
    commits: VecDeque<(i64, i64, Option<i64>)>,
    ends: VecDeque<i64>,
}

impl CommitWindow {
    /// Adds a commit of `offset` at `at_ms` leaving `lag` (if known), keeping at most `len`.
    pub fn record(
        &mut self,
        offset: i64,
        at_ms: i64,
        lag: Option<i64>,
        len: usize,
        min_distance_ms: i64,
    ) {
        if let Some(last) = self.commits.back_mut() {
            if at_ms - last.1 < min_distance_ms {
                *last = (offset, last.1, lag);
                return;
            }
        }
        while self.commits.len() >= len.max(1) {
            self.commits.pop_front();
        }
        self.commits.push_back((offset, at_ms, lag));
    }

    /// The log end of a look-up: kept (the last `len`), and given to the commits whose lag is
    /// not known yet.
    pub fn record_end(&mut self, end: i64, len: usize) {
        while self.ends.len() >= len.max(1) {
            self.ends.pop_front();
        }
        self.ends.push_back(end);
        self.fill_lags(end);
    }

    /// The log ends of the recent look-ups, oldest first.
    pub fn recent_ends(&self) -> Vec<i64> {
        self.ends.iter().copied().collect()
    }

    /// Gives the commits whose lag is unknown the lag they leave behind `end`.
    fn fill_lags(&mut self, end: i64) {
        for c in self.commits.iter_mut().filter(|c| c.2.is_none()) {
            c.2 = Some((end - c.0).max(0));
        }
    }

    /// The commits, oldest first; an unknown lag is taken as `lag_now` (only before the watch's
    /// first look-up, when nothing is evaluated).
    pub fn commits(&self, lag_now: i64) -> Vec<WindowCommit> {
        self.commits
            .iter()
            .map(|&(offset, at_ms, lag)| WindowCommit {
                offset,
                at_ms,
                lag: lag.unwrap_or(lag_now),
            })
            .collect()
    }

    /// The offset of the last commit kept.
    pub fn last_offset(&self) -> Option<i64> {
        self.commits.back().map(|c| c.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_commits_and_merges_those_closer_than_the_distance() {
        let mut w = CommitWindow::default();
        for i in 0..12 {
            w.record(i * 10, i * 1_000, Some(i), 10, 1_000);
        }
        let kept = w.commits(0);
        assert_eq!(kept.len(), 10);
        assert_eq!(kept[0].offset, 20);
        // 400 ms after the last: replaces it, keeps its time.
        w.record(125, 11_400, Some(3), 10, 1_000);
        let last = *w.commits(0).last().expect("a commit");
        assert_eq!((last.offset, last.at_ms, last.lag), (125, 11_000, 3));
        assert_eq!(w.commits(0).len(), 10);
        // Committing every 400 ms forever still moves the window once a second.
        for step in 1..=5 {
            w.record(130 + step, 11_000 + 400 * step, Some(0), 10, 1_000);
        }
        let times: Vec<i64> = w.commits(0).iter().map(|c| c.at_ms).collect();
        assert_eq!(times[8..], [11_000, 12_200]);
    }

    #[test]
    fn unknown_lags_are_filled_from_the_first_end_seen() {
        let mut w = CommitWindow::default();
        w.record(10, 0, None, 10, 0);
        w.record(30, 1_000, None, 10, 0);
        w.record(40, 2_000, Some(7), 10, 0);
        assert_eq!(w.commits(99)[0].lag, 99);
        w.record_end(35, 2);
        w.record_end(36, 2);
        w.record_end(37, 2);
        assert_eq!(w.recent_ends(), [36, 37]);
        let lags: Vec<i64> = w.commits(99).iter().map(|c| c.lag).collect();
        assert_eq!(lags, [25, 5, 7]);
    }
}
