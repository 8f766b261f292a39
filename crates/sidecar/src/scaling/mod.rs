//! The scaling signal: how many replicas the group needs to drain its lag within a target time
//! at the rate its members are measured to process, for KEDA (a `prometheus` trigger) or the
//! HPA (through a Prometheus adapter) to act on as an `AverageValue` of 1.
//!
//! Each broker look-up gives the records the group consumed since the last one (its committed
//! offsets' advance), its lag per partition and its members; the log-end samples give each
//! partition's produce rate. From those:
//! - **capacity per replica**: the group's consume rate over `scaling.rate.window.ms` divided
//!   by its members, taken only from windows in which every look-up saw lag and the members did
//!   not change (saturated: the members processed as fast as they could); the 90th percentile
//!   of the last 64 such figures. Before any, the current rate per member stands in (`estimated`),
//!   which asks for no change while the group keeps up: a group is scaled down only once its
//!   capacity was seen.
//! - **need**: each partition's produce rate plus its lag over `scaling.drain.target.ms`,
//!   counted at most one replica's capacity (a partition is read by one member: more replicas do
//!   not drain one hot partition faster, and one hot partition does not scale the group to its
//!   maximum; such partitions are listed). A share group's partitions are not so bounded. A partition without a committed offset has no known
//!   lag: it is counted apart, not as infinite lag.
//! - **recommendation**: the need in replicas, between `scaling.min.replicas` and the cap (the
//!   partition count for classic and `consumer` groups, whose extra members would sit idle; no
//!   such cap for a share group; `scaling.max.replicas` if set). A scale-down is priced: the
//!   rebalance it causes pauses the partitions that move (all of them under an eager classic
//!   assignor) for as long as this member's recent rebalances took (static members: their
//!   session timeout, since a static member sends no leave), and the records produced
//!   meanwhile are added to the lag to drain.
//! - **desired**: a higher recommendation at once; a lower one only once every recommendation of
//!   the last `scaling.scale.down.hold.ms` was below the signal, so a dip does not cost two
//!   rebalances; it then drops in one step to the highest of the hold's last half, so the tail
//!   of a drain is one scale-down, not one per step of the falling lag.

mod history;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use mooring_telemetry_schema::TopicPartition;
use serde::Serialize;

pub use history::Look;

/// `scaling.*`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalingConfig {
    /// The time within which the lag should drain.
    pub drain_target_seconds: f64,
    /// The fewest replicas asked for.
    pub min_replicas: u32,
    /// The most replicas asked for (0: only the partition count caps).
    pub max_replicas: u32,
    /// How long a lower recommendation must hold before it is the signal.
    pub scale_down_hold_seconds: f64,
    /// The window the rates are measured over.
    pub rate_window_seconds: f64,
    /// How long a scaled-down static member's partitions wait before they move (it sends no
    /// leave: its `session.timeout.ms`).
    pub static_pause_seconds: f64,
}

/// Hot partitions listed at most.
const HOT_LISTED: usize = 10;
/// Capacity figures kept: the last saturated windows', however old (a handler's speed changes
/// with its code and its downstream services, which the next saturated window shows).
const CAPACITY_KEPT: usize = 64;
/// Recommendations kept for the hold, at most.
const RECOMMENDATIONS_KEPT: usize = 4096;

/// How the group's members take a rebalance, for pricing a scale-down.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RebalanceCost {
    /// How long the moved partitions stop, in seconds.
    pub pause_seconds: f64,
    /// Every partition stops (an eager classic assignor), not only the moved ones.
    pub eager: bool,
    /// Where the pause comes from: `measured` (this member's recent rebalances), `default`, or
    /// `static_session_timeout` (static members: `scaling.static.pause.ms`).
    pub source: &'static str,
}

/// One partition's figures at a look-up.
#[derive(Debug, Clone)]
pub struct PartitionFigures {
    /// The partition.
    pub partition: TopicPartition,
    /// Records behind (none: no committed offset, so not known).
    pub lag: Option<i64>,
    /// Records appended per second over the rate window.
    pub produce_rate: f64,
}

/// What one look-up brings.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// Seconds (unix).
    pub now: f64,
    /// Records consumed since the last look-up (the committed offsets' advance).
    pub consumed: i64,
    /// Members of the group now.
    pub members: u32,
    /// A share group (no cap at the partition count).
    pub share: bool,
    /// The partitions.
    pub partitions: Vec<PartitionFigures>,
    /// What a rebalance costs this group.
    pub cost: RebalanceCost,
}

/// Where the capacity per replica comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacitySource {
    /// Windows in which the members were saturated.
    Measured,
    /// The current rate per member (never saturated yet).
    Estimated,
    /// Nothing consumed yet.
    Unknown,
}

/// The signal and its evidence, as `/debug/scaling` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Signal {
    /// The replicas to run (`mooring_scaling_desired_replicas`).
    pub desired_replicas: u32,
    /// This look-up's recommendation, before the scale-down hold.
    pub recommended_replicas: u32,
    /// Members of the group now.
    pub members: u32,
    /// The most replicas that can work (the partitions; none for a share group).
    pub cap: Option<u32>,
    /// The fewest replicas asked for.
    pub floor: u32,
    /// Records per second one replica processes.
    pub capacity_per_replica: Option<f64>,
    /// Where that comes from.
    pub capacity_source: CapacitySource,
    /// Records appended per second, all partitions.
    pub produce_rate: f64,
    /// Records consumed per second over the rate window.
    pub consume_rate: Option<f64>,
    /// Records behind, over the partitions with a committed offset.
    pub lag_records: i64,
    /// Partitions without a committed offset: their lag is not known, and not counted.
    pub partitions_without_commit: usize,
    /// Partitions that alone need more than one replica's capacity (at most ten listed).
    pub hot_partitions: Vec<TopicPartition>,
    /// The need, in replicas (before rounding, the floor and the cap).
    pub needed_replicas: f64,
    /// What a rebalance is taken to cost.
    pub rebalance: RebalanceCost,
    /// Seconds until a lower recommendation becomes the signal, while one is held.
    pub scale_down_in_seconds: Option<f64>,
    /// The signal in a sentence.
    pub reason: String,
}

/// What the signal is computed from, kept between look-ups.
#[derive(Debug, Default)]
pub struct ScalingState {
    looks: history::Looks,
    capacity: VecDeque<f64>,
    recommendations: VecDeque<(f64, u32)>,
    desired: Option<u32>,
    /// The last signal (none before the first look-up).
    pub signal: Option<Signal>,
}

impl ScalingState {
    /// Takes a look-up's figures and computes the signal.
    pub fn observe(&mut self, inputs: &Inputs, config: &ScalingConfig) -> &Signal {
        let now = inputs.now;
        self.looks.push(
            Look {
                at: now,
                consumed: inputs.consumed.max(0),
                members: inputs.members,
                lag: inputs.partitions.iter().filter_map(|p| p.lag).sum(),
            },
            config.rate_window_seconds,
        );
        let window = self.looks.window();
        if let (Some(rate), true) = (window.consume_rate, window.saturated) {
            if window.members > 0 {
                self.capacity.push_back(rate / f64::from(window.members));
            }
        }
        while self.capacity.len() > CAPACITY_KEPT {
            self.capacity.pop_front();
        }
        let (capacity, source) = match percentile_90(self.capacity.iter().copied()) {
            Some(c) => (Some(c), CapacitySource::Measured),
            None => match window.consume_rate {
                Some(r) if r > 0.0 && inputs.members > 0 => (
                    Some(r / f64::from(inputs.members)),
                    CapacitySource::Estimated,
                ),
                _ => (None, CapacitySource::Unknown),
            },
        };
        let mut signal = recommend(inputs, config, capacity, source, window.consume_rate);
        self.hold(&mut signal, now, config.scale_down_hold_seconds);
        self.signal.insert(signal)
    }

    /// A higher recommendation is the signal at once. A lower one waits until every
    /// recommendation of the hold's span was below the signal, and the signal then drops in one
    /// step to the highest recommendation of the span's last half: a drain's tail (the
    /// recommendations falling as the lag does) is one scale-down, not a staircase of them,
    /// each a rebalance.
    fn hold(&mut self, signal: &mut Signal, now: f64, hold_seconds: f64) {
        let recommended = signal.recommended_replicas;
        self.recommendations.push_back((now, recommended));
        while self
            .recommendations
            .front()
            .is_some_and(|(at, _)| now - at > hold_seconds)
            || self.recommendations.len() > RECOMMENDATIONS_KEPT
        {
            self.recommendations.pop_front();
        }
        let current = self.desired.unwrap_or(recommended);
        let highest_since = |since: f64| {
            self.recommendations
                .iter()
                .filter(|r| r.0 >= since)
                .map(|r| r.1)
                .max()
                .unwrap_or(recommended)
        };
        let desired = if recommended >= current {
            recommended
        } else if highest_since(now - hold_seconds) < current {
            highest_since(now - hold_seconds / 2.0)
        } else {
            current
        };
        self.desired = Some(desired);
        signal.desired_replicas = desired;
        if desired > recommended {
            // When the last recommendation as high as the signal leaves the span.
            let leaves = self
                .recommendations
                .iter()
                .rev()
                .find(|r| r.1 >= desired)
                .map_or(0.0, |r| (r.0 + hold_seconds - now).max(0.0));
            signal.scale_down_in_seconds = Some(leaves);
            signal.reason.push_str(&format!(
                "; {desired} held for {leaves:.0} s more before scaling down"
            ));
        }
    }
}

/// This look-up's recommendation (the hold not applied yet).
fn recommend(
    inputs: &Inputs,
    config: &ScalingConfig,
    capacity: Option<f64>,
    capacity_source: CapacitySource,
    consume_rate: Option<f64>,
) -> Signal {
    let members = inputs.members;
    let partitions = u32::try_from(inputs.partitions.len()).unwrap_or(u32::MAX);
    let cap = match (inputs.share, config.max_replicas) {
        (true, 0) => None,
        (true, max) => Some(max),
        (false, 0) => Some(partitions.max(1)),
        (false, max) => Some(max.min(partitions.max(1))),
    };
    let floor = config.min_replicas.min(cap.unwrap_or(u32::MAX));
    let produce_rate: f64 = inputs.partitions.iter().map(|p| p.produce_rate).sum();
    let lag_records: i64 = inputs.partitions.iter().filter_map(|p| p.lag).sum();
    let without_commit = inputs.partitions.iter().filter(|p| p.lag.is_none()).count();
    let target = config.drain_target_seconds.max(1.0);
    let mut signal = Signal {
        desired_replicas: 0,
        recommended_replicas: 0,
        members,
        cap,
        floor,
        capacity_per_replica: capacity,
        capacity_source,
        produce_rate,
        consume_rate,
        lag_records,
        partitions_without_commit: without_commit,
        hot_partitions: Vec::new(),
        needed_replicas: 0.0,
        rebalance: inputs.cost,
        scale_down_in_seconds: None,
        reason: String::new(),
    };
    let clamp = |n: u32| n.max(floor).min(cap.unwrap_or(u32::MAX));
    let measured = capacity.filter(|c| *c > 0.0 && capacity_source == CapacitySource::Measured);
    let Some(capacity) = measured else {
        // Never behind: what a member can do is not known, only that the members keep up. No
        // change, except a group with no member and records waiting.
        let n = if members == 0 && (lag_records > 0 || produce_rate > 0.0) {
            1
        } else {
            members
        };
        signal.recommended_replicas = clamp(n);
        signal.reason =
            "the group was never behind, so what a replica can do is not measured: the members as they are"
                .to_string();
        return signal;
    };
    let need = |extra_lag_per_partition: f64| -> (f64, Vec<TopicPartition>) {
        let mut units = 0.0;
        let mut hot = Vec::new();
        for p in &inputs.partitions {
            let lag = p.lag.map_or(0.0, |l| l as f64);
            let rate = p.produce_rate + (lag + extra_lag_per_partition * p.produce_rate) / target;
            if inputs.share {
                // Every member of a share group may fetch every partition.
                units += rate / capacity;
                continue;
            }
            if rate > capacity && hot.len() < HOT_LISTED {
                hot.push(p.partition.clone());
            }
            units += rate.min(capacity) / capacity;
        }
        (units, hot)
    };
    let (units, hot) = need(0.0);
    let mut recommended = clamp(ceil(units));
    signal.reason = format!(
        "{produce_rate:.1}/s appended and {lag_records} behind, to drain within {target:.0} s at {capacity:.1}/s per replica: {units:.2} replicas"
    );
    if recommended < members {
        // A scale-down's rebalance stops the moved partitions (all, when eager) for the pause:
        // what they take meanwhile is lag to drain too.
        let moved = if inputs.cost.eager {
            1.0
        } else {
            f64::from(members - recommended) / f64::from(members)
        };
        let (priced, _) = need(inputs.cost.pause_seconds * moved);
        let priced = clamp(ceil(priced)).min(members);
        if priced > recommended {
            signal.reason.push_str(&format!(
                "; {priced}, not {recommended}, with the {:.1} s rebalance a scale-down causes",
                inputs.cost.pause_seconds
            ));
            recommended = priced;
        }
    }
    if !hot.is_empty() {
        signal.reason.push_str(&format!(
            "; {} partition(s) need more than one replica can give",
            hot.len()
        ));
    }
    if without_commit > 0 {
        signal.reason.push_str(&format!(
            "; {without_commit} partition(s) without a committed offset not counted"
        ));
    }
    signal.needed_replicas = units;
    signal.hot_partitions = hot;
    signal.recommended_replicas = recommended;
    signal
}

/// `x` rounded up, a hair's breadth below an integer counting as that integer.
fn ceil(x: f64) -> u32 {
    let c = (x - 1e-9).ceil();
    if c <= 0.0 {
        0
    } else if c >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        c as u32
    }
}

/// The 90th percentile (nearest rank): windows measured while new members were still starting
/// come out low, and a window that caught a burst of commits a little high.
fn percentile_90(values: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let rank = (v.len() * 9).div_ceil(10).max(1);
    v.get(rank - 1).copied()
}
