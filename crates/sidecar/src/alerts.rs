//! Alert kinds, thresholds and levels. A level is 0 (ok), 1 (warning) or 2 (critical): warning
//! from the `warning` threshold on, critical above the `critical` threshold. So the seeds'
//! rebalance rule (in a rolling 24 h: below 3 ok, 3–10 warning, above 10 critical) is
//! `warning = 3, critical = 10`. The same numbers feed `/alerts`, the `mooring_alert_level` gauge
//! and the Prometheus rules (`mooring-sidecar rules`), so they cannot drift.

use std::time::Duration;

use serde::Serialize;

/// What an alert watches (a closed set: the `alert` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// Completed rebalances in the rolling window.
    Rebalances,
    /// The last rebalance's duration, or the running one's time so far.
    RebalanceDurationSeconds,
    /// The largest partition lag, in records.
    LagRecords,
    /// The largest estimated partition time lag.
    LagSeconds,
    /// Time the processing loop made no progress while work was waiting.
    PollStallSeconds,
    /// Fencings (FENCED_INSTANCE_ID) in the rolling window.
    Fenced,
    /// How long a static member has waited for its `group.instance.id` (UNRELEASED_INSTANCE_ID,
    /// `consumer` protocol).
    InstanceIdUnreleasedSeconds,
    /// Share groups: records rejected as poison in the rolling window.
    ShareRejected,
    /// Share groups: records archived after the delivery limit in the rolling window.
    ShareArchived,
    /// Share groups: acquisition locks that ran out before a verdict in the rolling window.
    ShareLockExpired,
}

impl AlertKind {
    /// Every kind.
    pub const ALL: [AlertKind; 10] = [
        AlertKind::Rebalances,
        AlertKind::RebalanceDurationSeconds,
        AlertKind::LagRecords,
        AlertKind::LagSeconds,
        AlertKind::PollStallSeconds,
        AlertKind::Fenced,
        AlertKind::InstanceIdUnreleasedSeconds,
        AlertKind::ShareRejected,
        AlertKind::ShareArchived,
        AlertKind::ShareLockExpired,
    ];

    /// The label value and config key segment.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::Rebalances => "rebalances",
            AlertKind::RebalanceDurationSeconds => "rebalance_duration_seconds",
            AlertKind::LagRecords => "lag_records",
            AlertKind::LagSeconds => "lag_seconds",
            AlertKind::PollStallSeconds => "poll_stall_seconds",
            AlertKind::Fenced => "fenced",
            AlertKind::InstanceIdUnreleasedSeconds => "instance_id_unreleased_seconds",
            AlertKind::ShareRejected => "share_rejected",
            AlertKind::ShareArchived => "share_archived",
            AlertKind::ShareLockExpired => "share_lock_expired",
        }
    }

    /// Counted over a rolling window.
    pub fn windowed(self) -> bool {
        matches!(
            self,
            AlertKind::Rebalances
                | AlertKind::Fenced
                | AlertKind::ShareRejected
                | AlertKind::ShareArchived
                | AlertKind::ShareLockExpired
        )
    }
}

/// One alert's thresholds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Threshold {
    /// Warning from this value on.
    pub warning: f64,
    /// Critical above this value.
    pub critical: f64,
    /// The rolling window, for counted alerts.
    #[serde(serialize_with = "secs")]
    pub window: Option<Duration>,
}

fn secs<S: serde::Serializer>(w: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match w {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

/// Ok, warning, critical.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// 0.
    Ok,
    /// 1.
    Warning,
    /// 2.
    Critical,
}

impl Level {
    /// The gauge value.
    pub fn as_i64(self) -> i64 {
        match self {
            Level::Ok => 0,
            Level::Warning => 1,
            Level::Critical => 2,
        }
    }
}

impl Threshold {
    /// The level of `value`.
    pub fn level(&self, value: f64) -> Level {
        if value > self.critical {
            Level::Critical
        } else if value >= self.warning {
            Level::Warning
        } else {
            Level::Ok
        }
    }
}

/// One alert's state, as `/alerts` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AlertState {
    /// Which alert.
    pub alert: AlertKind,
    /// 0, 1 or 2.
    pub level: i64,
    /// `ok`, `warning`, `critical`.
    pub state: Level,
    /// The value the level was judged on.
    pub value: f64,
    /// The thresholds.
    pub threshold: Threshold,
}

/// Judges `value` against `threshold`.
pub fn judge(alert: AlertKind, value: f64, threshold: Threshold) -> AlertState {
    let state = threshold.level(value);
    AlertState {
        alert,
        level: state.as_i64(),
        state,
        value,
        threshold,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_rebalance_levels() {
        let t = Threshold {
            warning: 3.0,
            critical: 10.0,
            window: None,
        };
        assert_eq!(t.level(2.0), Level::Ok);
        assert_eq!(t.level(3.0), Level::Warning);
        assert_eq!(t.level(10.0), Level::Warning);
        assert_eq!(t.level(11.0), Level::Critical);
    }
}
