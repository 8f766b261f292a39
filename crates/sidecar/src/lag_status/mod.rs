//! Lag status, per partition and per group: Burrow's rules ([`rules`]) over a window of the
//! group's commits ([`window`]), read as they happen from `__consumer_offsets`
//! ([`commit_log`](crate::commit_log)), plus what only the sidecar knows of the partitions its
//! member owns: paused by the application or by backpressure, a handler past
//! `max.poll.interval.ms`, the member alive (its telemetry fresh).
//!
//! That knowledge changes one verdict. A Mooring member never commits an offset it committed
//! before, so a partition it holds without moving (its handler stuck, or paused) shows no commit:
//! by Burrow's rules commits stopped (STOP), which reads as "the consumer is gone". When the
//! partition's owner is the member beside this sidecar, alive, and the partition is paused or
//! its handler is past its time, the status is STALL (alive, not moving), with the reason; a
//! Java member in the same state commits the same offset again and again, which Burrow calls
//! STALL too.
//!
//! Without read access to `__consumer_offsets` the window is filled from the broker watch's
//! OffsetFetch: a commit is seen when the committed offset moved since the last look-up. A member
//! that commits the same offset again is then not told from one that stopped (STALL shows as
//! STOP) unless the sidecar's own knowledge says so. `/debug/lag` says which source is read.

pub mod rules;
pub mod window;

use std::collections::BTreeMap;
use std::time::Instant;

use mooring_telemetry_schema::TopicPartition;
use serde::Serialize;

pub use rules::{evaluate, GroupStatus, Judge, PartitionStatus, Rule, WindowCommit};
pub use window::CommitWindow;

/// Where the commits come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `__consumer_offsets`: every commit, repeats included.
    CommitLog,
    /// The broker watch's OffsetFetch (the commit log cannot be read): offset changes only.
    #[default]
    Watch,
}

/// The commit windows and what the sidecar knows of its member's partitions.
#[derive(Debug, Default)]
pub struct LagStatusState {
    /// Per partition, its commits.
    pub windows: BTreeMap<TopicPartition, CommitWindow>,
    /// Where they come from.
    pub source: Source,
    /// Why the commit log is not read (the last error), if it is not.
    pub source_error: Option<String>,
    /// Commits of the group read from the commit log.
    pub commits_read: u64,
    /// Records of the commit log skipped: undecodable, or past the bound on transactions held.
    pub records_skipped: u64,
    /// Partitions the member's backpressure paused (its `backpressure` events).
    pub backpressure: std::collections::BTreeSet<TopicPartition>,
    /// Handlers of the member past `max.poll.interval.ms`: the record's offset, how long it had
    /// run, and when that was said. Kept until a commit passes the offset.
    pub over_time: BTreeMap<TopicPartition, OverTime>,
}

/// A handler past its time.
#[derive(Debug, Clone, Copy)]
pub struct OverTime {
    /// The record's offset.
    pub offset: i64,
    /// How long it had run when reported.
    pub elapsed_seconds: f64,
    /// When it was reported.
    pub at: Instant,
}

/// How windows are kept and judged (`lag.status.*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StatusConfig {
    /// Commits kept per partition (Burrow's `intervals`).
    pub window: usize,
    /// Commits closer than this to the last one kept replace it (Burrow's `min-distance`).
    pub min_distance_ms: i64,
    /// Lag up to this counts as caught up (Burrow: 0).
    pub allowed_lag: i64,
    /// How far back the commit log is read at start, to fill the windows.
    pub lookback_ms: i64,
}

impl LagStatusState {
    /// A commit of the group: added to its partition's window with the lag it leaves behind
    /// `end` (the last log end the watch saw, if any). A handler past its time on a record the
    /// commit passes is over. Partitions beyond `max_partitions` windows are not followed.
    pub fn record_commit(
        &mut self,
        partition: &TopicPartition,
        offset: i64,
        at_ms: i64,
        end: Option<i64>,
        config: &StatusConfig,
        max_partitions: usize,
    ) {
        if !self.windows.contains_key(partition) && self.windows.len() >= max_partitions {
            return;
        }
        let lag = end.map(|e| (e - offset).max(0));
        self.windows.entry(partition.clone()).or_default().record(
            offset,
            at_ms,
            lag,
            config.window,
            config.min_distance_ms,
        );
        if self
            .over_time
            .get(partition)
            .is_some_and(|o| offset > o.offset)
        {
            self.over_time.remove(partition);
        }
    }

    /// After a broker look-up of `partitions` (each with its log end and committed offset, if
    /// known): windows of partitions no longer watched are dropped, unknown lags are filled from
    /// the log ends, and (watch source) a moved committed offset is a commit.
    pub fn after_lookup<'a>(
        &mut self,
        partitions: impl IntoIterator<Item = (&'a TopicPartition, Option<i64>, Option<i64>)>,
        now_ms: i64,
        config: &StatusConfig,
    ) {
        let mut before = std::mem::take(&mut self.windows);
        for (tp, end, committed) in partitions {
            let mut window = before.remove(tp).unwrap_or_default();
            let Some(end) = end else {
                self.windows.insert(tp.clone(), window);
                continue;
            };
            window.record_end(end, config.window);
            let moved = committed.filter(|&c| window.last_offset() != Some(c));
            self.windows.insert(tp.clone(), window);
            if let (Some(committed), Source::Watch) = (moved, self.source) {
                self.record_commit(tp, committed, now_ms, Some(end), config, usize::MAX);
            }
        }
    }

    /// The member's `backpressure` event.
    pub fn backpressure(&mut self, partition: TopicPartition, paused: bool, cap: usize) {
        if !paused {
            self.backpressure.remove(&partition);
        } else if self.backpressure.len() < cap {
            self.backpressure.insert(partition);
        }
    }

    /// The member's `poll_interval_exceeded` event.
    pub fn over_time(&mut self, partition: TopicPartition, over: OverTime, cap: usize) {
        if self.over_time.contains_key(&partition) || self.over_time.len() < cap {
            self.over_time.insert(partition, over);
        }
    }

    /// The member no longer owns these partitions: their backpressure is over. A handler past
    /// its time stays known until a commit passes its record (a member rejoins after such a
    /// handler, and may get the partition back with the handler still running).
    pub fn revoked(&mut self, partitions: &[TopicPartition]) {
        for tp in partitions {
            self.backpressure.remove(tp);
        }
    }
}
