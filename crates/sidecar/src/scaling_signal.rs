//! The scaling signal from what the sidecar knows: after each broker look-up, the figures
//! [`scaling`](crate::scaling) computes it from (each partition's lag and produce rate, the
//! records consumed, the members, what a rebalance costs this group); and the series `/metrics`
//! writes from it.

use std::fmt::Write as _;

use crate::scaling::{Inputs, PartitionFigures, RebalanceCost, ScalingConfig, Signal};
use crate::state::{State, GROUP_TYPE_CLASSIC, GROUP_TYPE_SHARE};

/// Rebalances averaged for the pause a scale-down causes.
const REBALANCES_AVERAGED: usize = 10;

/// After a look-up: the signal from the lag table as it now stands and `consumed`, the records
/// consumed since the look-up before.
pub fn after_lookup(state: &mut State, config: &ScalingConfig, consumed: i64, now: f64) {
    let Some(view) = state.group.as_ref() else {
        return;
    };
    let share = view.group_type == GROUP_TYPE_SHARE;
    // A static member that left keeps its assignment for its return, but processes nothing.
    let members = view
        .members
        .iter()
        .filter(|m| m.member_epoch != Some(-2))
        .count();
    let partitions = state
        .lag
        .iter()
        .map(|(tp, l)| PartitionFigures {
            partition: tp.clone(),
            lag: l.committed.map(|_| l.lag_records),
            produce_rate: state
                .samples
                .get(tp)
                .map_or(0.0, |s| s.append_rate(config.rate_window_seconds)),
        })
        .collect();
    let inputs = Inputs {
        now,
        consumed,
        members: u32::try_from(members).unwrap_or(u32::MAX),
        share,
        partitions,
        cost: rebalance_cost(state, config),
    };
    state.scaling.observe(&inputs, config);
}

/// What a rebalance costs this group: the mean of this member's last completed rebalances,
/// else a default by protocol (a classic rebalance's JoinGroup and SyncGroup round trips and
/// revocation, a `consumer`-protocol reconciliation); a share group's members all fetch every
/// partition, so a member leaving stops none of them. Static members (`group.instance.id`) send
/// no leave when their pod goes: its partitions wait out the session timeout before they move.
fn rebalance_cost(state: &State, config: &ScalingConfig) -> RebalanceCost {
    let Some(view) = state
        .group
        .as_ref()
        .filter(|v| v.group_type != GROUP_TYPE_SHARE)
    else {
        return RebalanceCost {
            pause_seconds: 0.0,
            eager: false,
            source: "default",
        };
    };
    let classic = view.group_type == GROUP_TYPE_CLASSIC;
    let eager = classic && !view.protocol.contains("cooperative");
    let recent: Vec<f64> = state
        .history
        .iter()
        .rev()
        .filter(|r| r.outcome == "completed")
        .take(REBALANCES_AVERAGED)
        .map(|r| r.total_seconds)
        .collect();
    let (pause_seconds, source) = if recent.is_empty() {
        (if classic { 5.0 } else { 2.0 }, "default")
    } else {
        (recent.iter().sum::<f64>() / recent.len() as f64, "measured")
    };
    let static_members = view.members.iter().any(|m| m.instance_id.is_some());
    if static_members && config.static_pause_seconds > pause_seconds {
        return RebalanceCost {
            pause_seconds: config.static_pause_seconds,
            eager,
            source: "static_session_timeout",
        };
    }
    RebalanceCost {
        pause_seconds,
        eager,
        source,
    }
}

/// `mooring_scaling_desired_replicas`: its name and help text.
pub const DESIRED: (&str, &str) = (
    "mooring_scaling_desired_replicas",
    "Replicas the group needs to drain its lag within scaling.drain.target.ms at the measured rate per replica, capped at the partitions (not for a share group), a scale-down held for scaling.scale.down.hold.ms. For KEDA or the HPA as an AverageValue of 1.",
);
/// `mooring_scaling_recommended_replicas`: its name and help text.
pub const RECOMMENDED: (&str, &str) = (
    "mooring_scaling_recommended_replicas",
    "This look-up's recommendation, before the scale-down hold.",
);
/// `mooring_scaling_capacity_records_per_second`: its name and help text.
pub const CAPACITY: (&str, &str) = (
    "mooring_scaling_capacity_records_per_second",
    "Records one replica processes per second, measured while the group was behind (or estimated from the current rate until then; absent before anything was consumed).",
);
/// `mooring_scaling_produce_records_per_second`: its name and help text.
pub const PRODUCE_RATE: (&str, &str) = (
    "mooring_scaling_produce_records_per_second",
    "Records appended per second to the group's partitions over scaling.rate.window.ms.",
);
/// `mooring_scaling_partitions_without_commit`: its name and help text.
pub const WITHOUT_COMMIT: (&str, &str) = (
    "mooring_scaling_partitions_without_commit",
    "Partitions of the group without a committed offset: their lag is not known and not counted in the signal.",
);

/// Appends the scaling series (none before the first look-up).
pub fn write_scaling_families(out: &mut String, signal: Option<&Signal>) {
    let Some(s) = signal else {
        return;
    };
    let mut gauge = |family: (&str, &str), value: f64| {
        crate::metrics::write_header(out, family);
        let _ = writeln!(out, "{} {}", family.0, value);
    };
    gauge(DESIRED, f64::from(s.desired_replicas));
    gauge(RECOMMENDED, f64::from(s.recommended_replicas));
    if let Some(c) = s.capacity_per_replica {
        gauge(CAPACITY, c);
    }
    gauge(PRODUCE_RATE, s.produce_rate);
    gauge(WITHOUT_COMMIT, s.partitions_without_commit as f64);
}
