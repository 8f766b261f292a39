//! The statuses as of now, with their evidence: what `/debug/lag` shows and the state-set series
//! `/metrics` writes (`mooring_partition_lag_status`, `mooring_group_lag_status`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Instant;

use serde::Serialize;

use crate::config::SidecarConfig;
use crate::lag_status::{
    evaluate, GroupStatus, Judge, LagStatusState, PartitionStatus, Rule, Source, WindowCommit,
};
use crate::state::{State, GROUP_TYPE_SHARE};

/// Every watched partition's status and the group's.
#[derive(Debug, Clone, Serialize)]
pub struct LagReport {
    /// The group's status (none for a share group, which commits nothing).
    pub group_status: Option<GroupStatus>,
    /// Where the commits come from.
    pub source: Source,
    /// Why the commit log is not read, if it is not.
    pub source_error: Option<String>,
    /// Commits of the group read from the commit log.
    pub commits_read: u64,
    /// Records of the commit log skipped (undecodable, or past a bound).
    pub records_skipped: u64,
    /// The settings the statuses were judged with.
    pub window: usize,
    /// See [`StatusConfig::min_distance_ms`].
    pub min_distance_ms: i64,
    /// See [`StatusConfig::allowed_lag`].
    pub allowed_lag: i64,
    /// Partitions per status.
    pub counts: BTreeMap<&'static str, usize>,
    /// Each partition, by topic and index.
    pub partitions: Vec<PartitionReport>,
}

/// One partition's status and why.
#[derive(Debug, Clone, Serialize)]
pub struct PartitionReport {
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
    /// The status.
    pub status: PartitionStatus,
    /// The rule that decided.
    pub rule: Rule,
    /// What Burrow's rules alone say, when the sidecar's knowledge changed it.
    pub burrow_status: Option<PartitionStatus>,
    /// Records behind now.
    pub lag: i64,
    /// The committed offset now.
    pub committed: Option<i64>,
    /// The log end now.
    pub end: Option<i64>,
    /// The member owning the partition (`group.instance.id`, else member id), as the broker
    /// last listed it.
    pub owner: Option<String>,
    /// The partition is the member's beside this sidecar.
    pub ours: bool,
    /// Our member's telemetry is fresh (within `health.stale.ms`); only for `ours`.
    pub member_alive: Option<bool>,
    /// Paused by `application` or by `backpressure` (our member's partitions only).
    pub paused: Option<&'static str>,
    /// A handler past `max.poll.interval.ms` on this partition (our member's only).
    pub handler_over_time: Option<OverTimeReport>,
    /// Commits kept over the window's length (1: full).
    pub window_complete: f64,
    /// The window, oldest first.
    pub commits: Vec<WindowCommit>,
    /// The log ends of the recent look-ups, oldest first.
    pub recent_ends: Vec<i64>,
    /// The status in a sentence.
    pub reason: String,
}

/// A handler past its time, for the report.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct OverTimeReport {
    /// The record's offset.
    pub offset: i64,
    /// How long it has run by now (as reported, plus the time since).
    pub running_seconds: f64,
}

/// The statuses of every partition in the lag table as of `now_ms`.
pub fn report(config: &SidecarConfig, state: &State, now_ms: i64) -> LagReport {
    let health_stale = config.health_stale;
    let config = config.lag_status;
    let status = &state.lag_status;
    let share = state
        .group
        .as_ref()
        .is_some_and(|g| g.group_type == GROUP_TYPE_SHARE);
    let partitions: Vec<PartitionReport> = if share {
        Vec::new()
    } else {
        state
            .lag
            .iter()
            .map(|(tp, l)| {
                let window = status.windows.get(tp);
                let commits = window.map(|w| w.commits(l.lag_records)).unwrap_or_default();
                let ends = window.map(|w| w.recent_ends()).unwrap_or_default();
                let facts = facts(health_stale, state, tp);
                let judge = Judge {
                    lag_now: l.lag_records,
                    now_ms,
                    allowed: config.allowed_lag,
                    full: config.window,
                };
                let (burrow, rule) = evaluate(&commits, &ends, judge);
                let (status, rule) = refine(burrow, rule, &facts);
                PartitionReport {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                    status,
                    rule,
                    burrow_status: (status != burrow).then_some(burrow),
                    lag: l.lag_records,
                    committed: l.committed,
                    end: l.end,
                    owner: l.owner.clone(),
                    ours: facts.ours,
                    member_alive: facts.ours.then_some(facts.alive),
                    paused: facts.paused,
                    handler_over_time: facts.over_time,
                    window_complete: commits.len() as f64 / config.window.max(1) as f64,
                    reason: reason(rule, &commits, now_ms, &facts),
                    commits,
                    recent_ends: ends,
                }
            })
            .collect()
    };
    let mut counts = BTreeMap::new();
    for p in &partitions {
        *counts.entry(p.status.name()).or_insert(0) += 1;
    }
    LagReport {
        group_status: (!share).then(|| GroupStatus::of(partitions.iter().map(|p| p.status))),
        source: status.source,
        source_error: status.source_error.clone(),
        commits_read: status.commits_read,
        records_skipped: status.records_skipped,
        window: config.window,
        min_distance_ms: config.min_distance_ms,
        allowed_lag: config.allowed_lag,
        counts,
        partitions,
    }
}

/// What the sidecar knows of a partition beyond its commits.
struct Facts {
    ours: bool,
    alive: bool,
    paused: Option<&'static str>,
    over_time: Option<OverTimeReport>,
}

fn facts(
    health_stale: std::time::Duration,
    state: &State,
    tp: &mooring_telemetry_schema::TopicPartition,
) -> Facts {
    let now = Instant::now();
    let ours = state.member.assignment.contains(tp);
    let alive = state
        .last_event
        .is_some_and(|at| now.duration_since(at) <= health_stale);
    let lag_status: &LagStatusState = &state.lag_status;
    let paused = state
        .snapshot
        .as_ref()
        .and_then(|(_, s)| {
            s.partitions
                .iter()
                .find(|p| p.topic == tp.topic && p.partition == tp.partition)
        })
        .filter(|p| ours && p.paused)
        .map(|_| {
            if lag_status.backpressure.contains(tp) {
                "backpressure"
            } else {
                "application"
            }
        });
    let over_time = lag_status
        .over_time
        .get(tp)
        .filter(|_| ours)
        .map(|o| OverTimeReport {
            offset: o.offset,
            running_seconds: o.elapsed_seconds + now.duration_since(o.at).as_secs_f64(),
        });
    Facts {
        ours,
        alive,
        paused,
        over_time,
    }
}

/// A STOP of a partition our live member holds, paused or with its handler past its time, is
/// a STALL: the member is there, the partition does not move.
fn refine(status: PartitionStatus, rule: Rule, facts: &Facts) -> (PartitionStatus, Rule) {
    let held = facts.ours && facts.alive && (facts.paused.is_some() || facts.over_time.is_some());
    if status == PartitionStatus::Stop && held {
        (PartitionStatus::Stall, Rule::HeldByLiveMember)
    } else {
        (status, rule)
    }
}

fn reason(rule: Rule, commits: &[WindowCommit], now_ms: i64, facts: &Facts) -> String {
    let (first, last) = match (commits.first(), commits.last()) {
        (Some(f), Some(l)) => (*f, *l),
        _ => return "no commit seen yet".to_string(),
    };
    let secs = |ms: i64| ms as f64 / 1000.0;
    let mut text = match rule {
        Rule::NoCommits => "no commit seen yet".to_string(),
        Rule::CaughtUpNow => "caught up now".to_string(),
        Rule::CaughtUpInWindow => "caught up within the window".to_string(),
        Rule::OffsetWentBack => {
            let back = commits
                .windows(2)
                .find(|w| w[1].offset < w[0].offset)
                .map_or((0, 0), |w| (w[0].offset, w[1].offset));
            format!("the committed offset went back from {} to {}", back.0, back.1)
        }
        Rule::CommitsStopped | Rule::HeldByLiveMember => format!(
            "no commit for {:.1} s, longer than the window's span of {:.1} s; last at offset {} with lag {}",
            secs(now_ms - last.at_ms),
            secs(last.at_ms - first.at_ms),
            last.offset,
            last.lag
        ),
        Rule::SameOffset => format!(
            "{} commits of offset {} over {:.1} s, with lag",
            commits.len(),
            last.offset,
            secs(last.at_ms - first.at_ms)
        ),
        Rule::LagNeverFell => format!(
            "offsets move but the lag never fell: {} to {} over {} commits",
            first.lag,
            last.lag,
            commits.len()
        ),
        Rule::Moving => "offsets move and the lag falls".to_string(),
    };
    if rule == Rule::HeldByLiveMember {
        text.push_str("; the member beside this sidecar is alive and holds the partition");
    }
    if let Some(paused) = facts.paused {
        let _ = write!(text, "; paused by the {paused}");
    }
    if let Some(o) = facts.over_time {
        let _ = write!(
            text,
            "; a handler has run {:.0} s on offset {}",
            o.running_seconds, o.offset
        );
    }
    text
}

/// `mooring_partition_lag_status`: its name and help text.
pub const PARTITION_STATUS: (&str, &str) = (
    "mooring_partition_lag_status",
    "Burrow's status of the partition over a window of its commits (1 for the status it is in): OK, WARN (lag grows at every commit), STALL (commits without moving, or held by a live member), STOP (commits stopped with lag), REWIND (the committed offset went back).",
);
/// `mooring_group_lag_status`: its name and help text.
pub const GROUP_STATUS: (&str, &str) = (
    "mooring_group_lag_status",
    "The group's lag status (1 for the status it is in): ERR if a partition is STOP, STALL or REWIND, WARN if one is WARN, else OK.",
);

/// Appends the state sets: one series per status for the group and for each partition.
pub fn write_status_families(out: &mut String, report: &LagReport) {
    let Some(group) = report.group_status else {
        return;
    };
    crate::metrics::write_header(out, GROUP_STATUS);
    for s in GroupStatus::ALL {
        let _ = writeln!(
            out,
            "{}{{status=\"{}\"}} {}",
            GROUP_STATUS.0,
            s.name(),
            u8::from(s == group)
        );
    }
    if report.partitions.is_empty() {
        return;
    }
    crate::metrics::write_header(out, PARTITION_STATUS);
    for p in &report.partitions {
        for s in PartitionStatus::ALL {
            let _ = write!(
                out,
                "{}{{partition=\"{}\",status=\"{}\",topic=\"",
                PARTITION_STATUS.0,
                p.partition,
                s.name()
            );
            crate::metrics::push_escaped(out, &p.topic, true);
            let _ = writeln!(out, "\"}} {}", u8::from(s == p.status));
        }
    }
}
