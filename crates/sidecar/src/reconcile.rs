//! The `consumer` group protocol (KIP-848) in the sidecar: reconciliations, their causes, and the
//! wait for an unreleased `group.instance.id`.
//!
//! Under this protocol the coordinator assigns, and a member reconciles each new target
//! assignment (revoke, assign, acknowledge) as its member epoch catches up with the group epoch;
//! nothing stops the world. The unit a rebalance counts under this protocol is an **assignment
//! change**: a reconciliation that moved at least one of the member's partitions. Those count in
//! `mooring_rebalances_total{cause}` (and the rebalance alert's window), so the rebalance
//! thresholds count assignment changes here as they count rebalances under the classic protocol;
//! an epoch bump that moved nothing is counted only in `mooring_reconciliations_total`. The
//! member's `rebalance_completed` (which it also sends, the member epoch as generation) is then
//! not counted a second time.
//!
//! Causes, in order:
//! - what the member knows itself, from the `rebalance_started` before it: `epoch_fenced`
//!   (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID), `subscription_change`, `poll_interval_exceeded`,
//!   `metadata_change`, `coordinator_moved`, `session_timeout`, `fenced`, `instance_id_unreleased`;
//! - a wait for the member's instance id since its last reconciliation: `instance_id_unreleased`;
//! - its own join (member epoch 0 or less before): `member_joined`;
//! - otherwise another member's change moved the group epoch, and the broker tells which: the
//!   members of the group (ConsumerGroupDescribe, [`State::epoch_views`]) at the member's epoch
//!   before against those at the epoch the change brought: a member gone whose commits stood still
//!   → `session_timeout`, else gone → `member_left`, new → `member_joined`, the same members with
//!   another subscription → `subscription_change`, nothing else → `metadata_change` (the
//!   subscribed topics changed: partitions added, a topic created or deleted). Without those
//!   views (no broker watch, or the epochs were not seen within three watch intervals), the
//!   member's own assignment decides as for the classic protocol.
//!
//! The epochs, as the member's events give them: the epoch it held before is the one its last
//! answered heartbeat was sent with (its `rebalance_started` names the epoch it holds when the
//! reconciliation starts, already the new one when the assignment came with it). The epoch the
//! change brought is the one the assignment came with, but a member that must revoke stays at
//! its epoch until it has (the coordinator moves it on with the acknowledgement), so for a revoke
//! it is a later one: at least the epoch before plus one. The member's current epoch
//! (`mooring_member_epoch`) is what its `joined`, `rebalance_completed` and snapshots say.
//!
//! A static member that takes over its predecessor's place (the predecessor left with epoch -2,
//! its assignment held) does not move the group epoch: its first reconciliation reaches a group
//! epoch the broker already had before it joined. That is KIP-848's static rejoin, not a
//! rebalance: recorded (`outcome: static_rejoin`), never counted.
//!
//! UNRELEASED_INSTANCE_ID: the member waits and retries. It is shown
//! (`mooring_instance_id_unreleased_wait_seconds`, `..._attempts_total`, `/readyz`, `/healthz`,
//! `/debug/group`) but keeps readiness: the wait ends only when another process — in a surge
//! rollout, the very pod whose replacement waits on this one's readiness — gives the id up
//! (deploy/README.md).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use mooring_telemetry_schema::{RebalanceCause, ReconcilePhases, Snapshot, TopicPartition};

use crate::app::App;
use crate::metrics::{Metrics, GROUP_PROTOCOLS, RECONCILE_PHASES};
use crate::state::{
    classify, refine_cause, EpochView, InstanceWait, MemberWatch, Pending, RebalanceRecord,
    ReconcileRecord, State, Unclassified,
};

/// One `reconciled` event.
#[derive(Debug, Clone)]
pub struct Reconciled {
    /// The member epoch it reconciled to.
    pub member_epoch: i32,
    /// New to the member.
    pub added: Vec<TopicPartition>,
    /// Given up.
    pub revoked: Vec<TopicPartition>,
    /// The whole reconciliation.
    pub total_seconds: f64,
    /// Its phases.
    pub phases: ReconcilePhases,
}

/// The causes the member knows itself.
fn reported_by_member(cause: RebalanceCause) -> bool {
    !matches!(
        cause,
        RebalanceCause::MemberJoined
            | RebalanceCause::MemberLeft
            | RebalanceCause::CooperativeFollowUp
            | RebalanceCause::Unknown
    )
}

/// Takes the member's `group.protocol` (from its line's identity or its snapshot).
pub fn set_protocol(app: &App, state: &mut State, protocol: &str) {
    let protocol = match protocol {
        "consumer" => "consumer",
        "share" => "share",
        _ => "classic",
    };
    if state.member.group_protocol != protocol {
        state.member.group_protocol = protocol.to_string();
    }
    for p in GROUP_PROTOCOLS {
        app.metrics
            .group_protocol
            .with_label_values(&[p])
            .set(i64::from(p == protocol));
    }
}

/// The snapshot's `consumer_state`: the state gauge, and the wait it may show (a sidecar that
/// started during the wait learns of it here; a state past it ends it).
pub fn snapshot(app: &App, state: &mut State, snap: &Snapshot, now: Instant, ts_ms: u64) {
    if let Some(protocol) = &snap.group_protocol {
        set_protocol(app, state, protocol);
    }
    if ts_ms <= state.member_event_ms {
        // Taken before an event the sidecar has already applied (the snapshot task and the
        // event intake fill one buffer), or in its millisecond, maybe before the change it
        // reports: what it says of the member may be older.
        return;
    }
    if state.member.is_consumer() {
        set_member_epoch(app, state, snap.generation);
    }
    set_consumer_state(&app.metrics, state, snap.consumer_state.clone());
    match snap.consumer_state.as_deref() {
        Some("instance_id_unreleased") if state.member.instance_id_unreleased.is_none() => {
            let instance_id = state
                .identity
                .as_ref()
                .and_then(|i| i.instance_id.clone())
                .unwrap_or_default();
            state.member.instance_id_unreleased = Some(InstanceWait {
                instance_id,
                attempt: 0,
                retry_in_seconds: Some(0.0),
                since_ms: ts_ms,
                since: now,
            });
            state.reconcile.waited_since_ms.get_or_insert(ts_ms);
        }
        Some("instance_id_unreleased") => {}
        Some(_) => end_wait(state),
        None => {}
    }
}

fn set_consumer_state(metrics: &Metrics, state: &mut State, consumer_state: Option<String>) {
    for s in mooring_telemetry_schema::CONSUMER_MEMBER_STATES {
        metrics
            .consumer_member_state
            .with_label_values(&[s])
            .set(i64::from(consumer_state.as_deref() == Some(s)));
    }
    state.member.consumer_state = consumer_state;
}

/// An event that moves the member's epoch or its wait, at `ts_ms`: snapshots older than it are
/// not applied over it.
pub fn member_event(state: &mut State, ts_ms: u64) {
    state.member_event_ms = state.member_event_ms.max(ts_ms);
}

/// The wait is over (the member joined, left, or stopped).
pub fn end_wait(state: &mut State) {
    state.member.instance_id_unreleased = None;
}

/// An `instance_id_unreleased` event: one refused attempt.
pub fn instance_id_unreleased(
    app: &App,
    state: &mut State,
    instance_id: String,
    attempt: u32,
    retry_in_seconds: Option<f64>,
    now: Instant,
    ts_ms: u64,
) {
    app.metrics.instance_id_unreleased_attempts_total.inc();
    member_event(state, ts_ms);
    set_protocol(app, state, "consumer");
    set_consumer_state(
        &app.metrics,
        state,
        Some("instance_id_unreleased".to_string()),
    );
    let (since, since_ms) = match &state.member.instance_id_unreleased {
        Some(w) => (w.since, w.since_ms),
        None => (now, ts_ms),
    };
    state.member.instance_id_unreleased = Some(InstanceWait {
        instance_id,
        attempt,
        retry_in_seconds,
        since_ms,
        since,
    });
    state.reconcile.waited_since_ms.get_or_insert(since_ms);
    state.member.joined = false;
    state.member.stable = false;
}

/// The member's current epoch (its `joined`, `rebalance_completed` and snapshots say it, and a
/// reconciliation that came with a later one).
pub fn set_member_epoch(app: &App, state: &mut State, epoch: i32) {
    state.member.member_epoch = epoch;
    app.metrics.member_epoch.set(i64::from(epoch));
}

/// A `rebalance_started` of a `consumer`-protocol member: its cause and the epoch it held, for
/// the reconciliation that follows. The member names the epoch it holds when it starts (`-1`
/// for a join), which is already the new one when the assignment came with it; the heartbeat
/// before said the one it held.
pub fn started(state: &mut State, cause: RebalanceCause, member_epoch: i32, ts_ms: u64) {
    let held = state
        .heartbeat_epoch
        .map_or(member_epoch, |e| e.min(member_epoch));
    state.reconcile.started = Some((cause, held, ts_ms));
}

/// An answered heartbeat of a `consumer`-protocol member, sent with `member_epoch`.
pub fn heartbeat(state: &mut State, member_epoch: i32) {
    state.heartbeat_epoch = Some(member_epoch);
}

/// A `reconciled` event: the metrics of every reconciliation; for one that moved partitions,
/// its record and, once its cause is known, its count.
pub fn reconciled(app: &App, state: &mut State, r: Reconciled, now: Instant, ts_ms: u64) {
    member_event(state, ts_ms);
    set_protocol(app, state, "consumer");
    observe(&app.metrics, &r);
    let context = std::mem::take(&mut state.reconcile);
    let epoch_before = context.started.map_or_else(
        || state.heartbeat_epoch.unwrap_or(state.member.member_epoch),
        |(_, epoch, _)| epoch,
    );
    let own_join = epoch_before <= 0;
    let assignment_before = state.member.assignment.clone();
    apply(app, state, &r, own_join);
    if r.added.is_empty() && r.revoked.is_empty() {
        return;
    }
    let judged = judge(
        app,
        state,
        &context,
        &r,
        epoch_before,
        &assignment_before,
        ts_ms,
    );
    if judged.basis != "static_rejoin" {
        timed(app, state, r.total_seconds, now);
        if judged.basis != "pending" {
            app.metrics
                .rebalances_total
                .with_label_values(&[judged.cause.as_str()])
                .inc();
        }
    }
    // `member_epoch` is the epoch the assignment came with. A member that must revoke stays at
    // its epoch until it has (the coordinator bumps it on the acknowledgement), so a revoke
    // comes with the epoch before; the group epoch that caused it is a later one all the same.
    let epoch_after = if own_join {
        r.member_epoch
    } else {
        r.member_epoch.max(epoch_before.saturating_add(1))
    };
    let (basis, fallback) = (judged.basis, judged.fallback);
    let seq = record(state, r, judged, epoch_before, ts_ms);
    if basis == "pending" {
        state.unclassified.push_back(Unclassified {
            seq,
            ended: now,
            members_before: BTreeSet::new(),
            fallback,
            epochs: Some((epoch_before, epoch_after)),
        });
        app.watch_now.notify_one();
    }
}

/// A share member's reconciliation (KIP-932): the reconciliation series, its epoch and
/// assignment. A share member's protocol stays `share`, and its assignment changes count as
/// rebalances through its `rebalance_completed` (by the cause it reports: a share group commits
/// nothing, so the broker's views have no evidence to judge it by), not here.
pub fn share_reconciled(app: &App, state: &mut State, r: Reconciled, ts_ms: u64) {
    member_event(state, ts_ms);
    observe(&app.metrics, &r);
    apply(app, state, &r, true);
}

/// The histograms and counter every reconciliation feeds.
fn observe(m: &Metrics, r: &Reconciled) {
    m.reconciliations_total.inc();
    m.reconcile_duration_seconds.observe(r.total_seconds);
    let phases = [
        r.phases.revoke_seconds,
        r.phases.assign_seconds,
        r.phases.acknowledge_seconds,
    ];
    for (phase, seconds) in RECONCILE_PHASES.iter().zip(phases) {
        m.reconcile_phase_duration_seconds
            .with_label_values(&[phase])
            .observe(seconds);
    }
    let moved = r.added.len() + r.revoked.len();
    m.reconcile_partitions_moved.observe(moved as f64);
}

/// The member after a reconciliation: its epoch (the one the assignment came with, if later),
/// its assignment, joined and stable, no longer waiting or fenced.
fn apply(app: &App, state: &mut State, r: &Reconciled, own_join: bool) {
    let current = if own_join {
        r.member_epoch
    } else {
        state.member.member_epoch.max(r.member_epoch)
    };
    set_member_epoch(app, state, current);
    // The member's partitions events may have moved the assignment already: apply what the
    // reconciliation says once more (removing and adding are idempotent).
    state.member.assignment.retain(|p| !r.revoked.contains(p));
    for p in &r.added {
        if !state.member.assignment.contains(p) {
            state.member.assignment.push(p.clone());
        }
    }
    state.member.assignment.sort();
    app.metrics
        .assigned_partitions
        .set(state.member.assignment.len() as i64);
    state.member.reconciliations += 1;
    state.member.joined = true;
    state.member.stable = true;
    state.member.fenced = false;
    end_wait(state);
}

/// What a reconciliation that moved partitions is, as far as known now.
struct Judged {
    cause: RebalanceCause,
    /// `member`, `static_rejoin`, `pending` (the broker's view decides) or `assignment`.
    basis: &'static str,
    /// The member's own cause, if it said one.
    reported: Option<RebalanceCause>,
    /// The assignment rule's cause, for when the broker's views cannot tell.
    fallback: RebalanceCause,
}

/// The cause of a reconciliation that moved partitions, in the order of the module docs.
fn judge(
    app: &App,
    state: &State,
    context: &crate::state::ReconcileContext,
    r: &Reconciled,
    epoch_before: i32,
    assignment_before: &[TopicPartition],
    ts_ms: u64,
) -> Judged {
    // When the reconciliation began, by the member's clock: its rebalance_started (or the first
    // refusal of its instance id), else its own duration back.
    let began_ms = context.started.map_or_else(
        || ts_ms.saturating_sub((r.total_seconds.max(0.0) * 1000.0) as u64),
        |(_, _, at)| at,
    );
    let began_ms = context
        .waited_since_ms
        .map_or(began_ms, |w| w.min(began_ms));
    let reported = context.started.map(|(cause, _, _)| cause);
    let own = reported.filter(|c| reported_by_member(*c));
    let fallback = refine_cause(
        reported.unwrap_or(RebalanceCause::MemberJoined),
        Some(&pending_for_fallback(epoch_before, assignment_before)),
        &state.member.assignment,
    );
    let own_join = epoch_before <= 0;
    let watching = app.watches_group();
    let static_member = state
        .identity
        .as_ref()
        .is_some_and(|i| i.instance_id.is_some());
    let (cause, basis) = if static_member
        && own_join
        && static_replacement(&state.epoch_views, r.member_epoch, began_ms)
    {
        (own.unwrap_or(RebalanceCause::MemberJoined), "static_rejoin")
    } else if let Some(cause) = own {
        (cause, "member")
    } else if context.waited_since_ms.is_some() {
        (RebalanceCause::InstanceIdUnreleased, "member")
    } else if own_join {
        (RebalanceCause::MemberJoined, "member")
    } else if watching {
        (fallback, "pending")
    } else {
        (fallback, "assignment")
    };
    Judged {
        cause,
        basis,
        reported,
        fallback,
    }
}

/// Keeps a reconciliation that moved partitions in `/debug/rebalances`; returns its `seq`.
fn record(state: &mut State, r: Reconciled, judged: Judged, epoch_before: i32, ts_ms: u64) -> u64 {
    let pending = state.pending.take();
    let lost = pending
        .as_ref()
        .map(|p| p.lost.clone())
        .unwrap_or_default()
        .into_iter()
        .chain(std::mem::take(&mut state.lost_before_start))
        .collect();
    let record = RebalanceRecord {
        seq: 0,
        cause: judged.cause,
        reported_cause: judged.reported.unwrap_or(RebalanceCause::Unknown),
        outcome: if judged.basis == "static_rejoin" {
            "static_rejoin"
        } else {
            "completed"
        },
        error: None,
        started_ms: pending.as_ref().map_or_else(
            || ts_ms.saturating_sub((r.total_seconds.max(0.0) * 1000.0) as u64),
            |p| p.started_ms,
        ),
        ended_ms: ts_ms,
        generation_before: epoch_before,
        generation: Some(r.member_epoch),
        protocol: "consumer".to_string(),
        total_seconds: r.total_seconds,
        phases: Default::default(),
        revoked: r.revoked,
        assigned: r.added,
        lost,
        assignment: state.member.assignment.clone(),
        cause_basis: judged.basis,
        members_joined: Vec::new(),
        members_left: Vec::new(),
        reconciliation: Some(ReconcileRecord {
            member_epoch_before: epoch_before,
            member_epoch: r.member_epoch,
            phases: r.phases,
        }),
    };
    state.push_record(record)
}

/// A stand-in for the classic rule's pending rebalance: the epoch and assignment before.
fn pending_for_fallback(epoch_before: i32, assignment_before: &[TopicPartition]) -> Pending {
    Pending {
        cause: RebalanceCause::MemberJoined,
        started_ms: 0,
        started: Instant::now(),
        generation_before: epoch_before,
        protocol: "consumer".to_string(),
        assignment_before: assignment_before.to_vec(),
        revoked: Vec::new(),
        assigned: Vec::new(),
        lost: Vec::new(),
        members_before: None,
    }
}

/// An assignment change as a rebalance: the alert window and the duration (its cause is counted
/// once known).
fn timed(app: &App, state: &mut State, seconds: f64, now: Instant) {
    let m = &app.metrics;
    m.rebalance_duration_seconds.observe(seconds);
    m.last_rebalance_duration_seconds.set(seconds);
    m.last_rebalance_timestamp_seconds
        .set(crate::app::unix_now());
    state.last_rebalance_seconds = seconds;
    state.rebalance_times.push_back(now);
}

/// Whether a static member's first reconciliation, to `member_epoch`, took over a predecessor's
/// place: a view answered before it began (`began_ms`) already showed that group epoch (a join
/// that moves the group epoch reaches one no earlier view had). The member's lines may arrive
/// after the watch has seen what followed them, hence the member's own clock (the pod's
/// containers share the node's).
pub fn static_replacement(
    views: &BTreeMap<i32, EpochView>,
    member_epoch: i32,
    began_ms: u64,
) -> bool {
    views
        .range(member_epoch..)
        .any(|(_, v)| v.answered_ms < began_ms)
}

/// What [`classify_epochs`] found: the cause (`None`: the views cannot tell), who joined, who
/// left.
pub type Classified = (
    Option<RebalanceCause>,
    Vec<String>,
    Vec<crate::state::DepartedMember>,
);

/// The cause of a reconciliation from member epoch `before` to `after`, from the group's
/// members at those group epochs: `None` while the broker has not been seen at `after` yet (or
/// no view at or before `before` is kept: then `Some` of `None`, the caller falls back).
///
/// Returns the cause (`None`: the views cannot tell), the members that joined, the departed.
pub fn classify_epochs(
    views: &BTreeMap<i32, EpochView>,
    (before, after): (i32, i32),
    watch: &BTreeMap<String, MemberWatch>,
    stall: Duration,
) -> Option<Classified> {
    let (after_epoch, after_view) = views.range(after..).next()?;
    let Some((before_epoch, before_view)) = views.range(..=before).next_back() else {
        return Some((None, Vec::new(), Vec::new()));
    };
    let keys = |v: &EpochView| -> BTreeSet<String> { v.members.keys().cloned().collect() };
    // Progress is followed by member id; the views name a member by its instance id if static.
    let by_key: BTreeMap<String, MemberWatch> = before_view
        .members
        .iter()
        .filter_map(|(key, m)| Some((key.clone(), watch.get(&m.member_id)?.clone())))
        .collect();
    let (cause, joined, left) = classify(&keys(before_view), &keys(after_view), &by_key, stall);
    if cause.is_some() {
        return Some((cause, joined, left));
    }
    let resubscribed = before_view.members.iter().any(|(key, m)| {
        after_view
            .members
            .get(key)
            .is_some_and(|a| a.subscription != m.subscription)
    });
    let cause = if resubscribed {
        Some(RebalanceCause::SubscriptionChange)
    } else if after_epoch > before_epoch {
        Some(RebalanceCause::MetadataChange)
    } else {
        None
    };
    Some((cause, joined, left))
}

#[cfg(test)]
mod tests;
