//! Ingestion: NDJSON lines from the consumer's exporter (`POST /v1/events`) → [`State`] and
//! [`Metrics`](crate::metrics::Metrics). A line that does not parse, or whose `type` this
//! version does not know, is skipped and counted; the rest of the batch still applies. The
//! `consumer` protocol's own events go to [`reconcile`], a share consumer's snapshots to
//! [`share`](crate::share).

use std::time::{Duration, Instant};

use mooring_telemetry_schema::{
    Envelope, Event, Phases, RebalanceCause, TopicPartition, FATAL_ERROR_KINDS,
};
use serde::Serialize;

use crate::app::{unix_ms, unix_now, App};
use crate::reconcile;
use crate::state::{
    classify, refine_cause, FatalErrorView, Pending, RebalanceRecord, State, Unclassified,
};

/// What one POST did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IngestReport {
    /// Lines applied.
    pub accepted: usize,
    /// Lines skipped.
    pub skipped: usize,
}

/// Applies every line of `body`.
pub fn ingest(app: &App, body: &[u8]) -> IngestReport {
    let mut report = IngestReport::default();
    for line in body.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Envelope>(line) {
            Ok(envelope) => {
                apply(app, envelope);
                report.accepted += 1;
            }
            Err(_) => report.skipped += 1,
        }
    }
    if report.skipped > 0 {
        app.state().skipped_lines += report.skipped as u64;
    }
    report
}

/// Applies one line.
pub fn apply(app: &App, envelope: Envelope) {
    let m = &app.metrics;
    m.telemetry_events_received_total
        .with_label_values(&[envelope.event.type_name()])
        .inc();
    m.telemetry_last_event_timestamp_seconds.set(unix_now());
    let now = Instant::now();
    let mut state = app.state();
    state.last_event = Some(now);
    state.identity = Some(envelope.member.clone());
    if let Some(protocol) = &envelope.member.group_protocol {
        reconcile::set_protocol(app, &mut state, protocol);
    }
    let ts_ms = envelope.ts_ms;
    let line = Line {
        now,
        ts_ms,
        seq: envelope.seq,
    };
    if state
        .member
        .fatal_error
        .as_ref()
        .is_some_and(|f| envelope.seq < f.seq)
    {
        // Numbering started over: a new exporter, so a new consumer process.
        clear_fatal(app, &mut state);
    }
    match envelope.event {
        event @ Event::RebalanceStarted { .. } => rebalance_started(&mut state, line, event),
        event @ Event::PartitionsRevoked { .. } => partitions_revoked(app, &mut state, event),
        event @ Event::Joined { .. } => joined(app, &mut state, line, event),
        Event::Synced { sync_seconds, .. } => m.sync_duration_seconds.observe(sync_seconds),
        event @ Event::PartitionsAssigned { .. } => partitions_assigned(app, &mut state, event),
        event @ Event::PartitionsLost { .. } => partitions_lost(app, &mut state, event),
        // `consumer` protocol: the reconciliation counts (`reconcile`), not this.
        Event::RebalanceCompleted { generation, .. } if state.member.is_consumer() => {
            state.pending = None;
            state.carried_cause = None;
            reconcile::member_event(&mut state, ts_ms);
            reconcile::set_member_epoch(app, &mut state, generation);
            state.member.generation = generation;
            state.member.joined = true;
            state.member.stable = true;
            m.group_generation.set(i64::from(generation));
            m.assigned_partitions
                .set(state.member.assignment.len() as i64);
        }
        event @ Event::RebalanceCompleted { .. } => {
            rebalance_completed(app, &mut state, line, event)
        }
        event @ Event::StaticRejoin { .. } => static_rejoin(app, &mut state, event),
        event @ Event::RebalanceFailed { .. } => rebalance_failed(app, &mut state, line, event),
        event @ Event::Heartbeat { .. } => heartbeat(app, &mut state, event),
        Event::Commit {
            latency_seconds,
            error,
            ..
        } => {
            m.commit_duration_seconds.observe(latency_seconds);
            if error.is_some() {
                m.commits_failed_total.inc();
            }
        }
        Event::CommitFailed { .. } => m.commits_failed_total.inc(),
        event @ Event::Fenced { .. } => fenced(app, &mut state, line, event),
        event @ Event::FatalError { .. } => fatal_error(app, &mut state, line, event),
        event @ Event::Reconciled { .. } => reconciled(app, &mut state, line, event),
        event @ Event::InstanceIdUnreleased { .. } => {
            instance_id_unreleased(app, &mut state, line, event)
        }
        Event::Left { .. } | Event::Shutdown { .. } => {
            state.member.joined = false;
            state.member.stable = false;
            reconcile::member_event(&mut state, ts_ms);
            reconcile::end_wait(&mut state);
        }
        event @ Event::EventsDropped { .. } => events_dropped(app, &mut state, event),
        Event::Backpressure { partition, paused } => {
            let cap = app.config.lag_max_partitions;
            state.lag_status.backpressure(partition, paused, cap);
        }
        Event::PollIntervalExceeded {
            partition,
            offset,
            elapsed_seconds,
        } => {
            let over = crate::lag_status::OverTime {
                offset,
                elapsed_seconds,
                at: now,
            };
            let cap = app.config.lag_max_partitions;
            state.lag_status.over_time(partition, over, cap);
        }
        event @ Event::Snapshot(_) => snapshot(app, &mut state, line, event),
        Event::ShareSnapshot(snap) => crate::share::snapshot(app, &mut state, snap, now),
        _ => {}
    }
    let stall = crate::app::poll_stall(&state, now);
    let loop_stale = crate::app::loop_stale(&state, now);
    drop(state);
    m.poll_stale_seconds.set(stall);
    m.consumer_loop_stale_seconds.set(loop_stale.unwrap_or(0.0));
}

/// When a line's event happened: on this clock, and as its envelope says (ms since the epoch,
/// and its sequence number).
#[derive(Debug, Clone, Copy)]
struct Line {
    now: Instant,
    ts_ms: u64,
    seq: u64,
}

/// The rebalance begins: what the member had before it, for its record.
fn rebalance_started(state: &mut State, line: Line, event: Event) {
    let Event::RebalanceStarted {
        cause,
        generation,
        protocol,
    } = event
    else {
        return;
    };
    let Line { now, ts_ms, .. } = line;
    state.member.stable = false;
    if state.member.is_consumer() {
        reconcile::started(state, cause, generation, ts_ms);
    }
    let assignment_before = state.member.assignment.clone();
    let members_before = state.last_stable_members.as_ref().map(|(_, m)| m.clone());
    state.pending = Some(Pending {
        members_before,
        cause,
        started_ms: ts_ms,
        started: now,
        generation_before: generation,
        protocol,
        assignment_before,
        revoked: Vec::new(),
        assigned: Vec::new(),
        lost: std::mem::take(&mut state.lost_before_start),
    });
}

/// The member joined (JoinGroup, or a consumer-protocol member taken in with an epoch).
fn joined(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::Joined {
        generation,
        member_id,
        leader,
        join_seconds,
        ..
    } = event
    else {
        return;
    };
    let m = &app.metrics;
    let Line { ts_ms, .. } = line;
    m.join_duration_seconds.observe(join_seconds);
    state.member.member_id = member_id;
    state.member.generation = generation;
    state.member.leader = leader;
    state.member.joined = true;
    state.member.fenced = false;
    m.group_generation.set(i64::from(generation));
    if state.member.is_consumer() {
        // Taken in with an epoch: the instance id is its own now.
        reconcile::member_event(state, ts_ms);
        reconcile::set_member_epoch(app, state, generation);
        reconcile::end_wait(state);
    }
}

/// A classic rebalance ended: counted by cause (classified now, or once the broker's view tells),
/// recorded.
fn rebalance_completed(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::RebalanceCompleted {
        generation,
        total_seconds,
        phases,
    } = event
    else {
        return;
    };
    let m = &app.metrics;
    let Line { now, ts_ms, .. } = line;
    let pending = state.pending.take();
    let reported = pending
        .as_ref()
        .map(|p| p.cause)
        .or(state.carried_cause.take())
        .unwrap_or(RebalanceCause::Unknown);
    let assignment = state.member.assignment.clone();
    // REBALANCE_IN_PROGRESS on a member that had a generation: someone else joined or
    // left; the broker's view tells which (see `state::classify`). A share member's assignment
    // changes are the coordinator's own, with the cause the member read from them: no view.
    let needs_view = reported == RebalanceCause::MemberJoined
        && !state.member.is_share()
        && pending.as_ref().is_some_and(|p| p.generation_before >= 0);
    let fallback = refine_cause(reported, pending.as_ref(), &assignment);
    let members_before = pending.as_ref().and_then(|p| p.members_before.clone());
    let watching = app.watches_group();
    let (cause, basis) = match (needs_view, watching, &members_before) {
        (true, true, Some(_)) => (reported, "pending"),
        (true, _, _) => (fallback, "assignment"),
        (false, _, _) => (reported, "member"),
    };
    if basis != "pending" {
        m.rebalances_total
            .with_label_values(&[cause.as_str()])
            .inc();
    }
    m.rebalance_duration_seconds.observe(total_seconds);
    m.last_rebalance_duration_seconds.set(total_seconds);
    m.last_rebalance_timestamp_seconds.set(unix_now());
    m.group_generation.set(i64::from(generation));
    m.assigned_partitions.set(assignment.len() as i64);
    state.member.generation = generation;
    state.member.stable = true;
    state.last_rebalance_seconds = total_seconds;
    state.rebalance_times.push_back(now);
    let mut record = record(
        pending,
        cause,
        reported,
        ts_ms,
        Some(generation),
        total_seconds,
        phases,
        assignment,
        None,
    );
    record.cause_basis = basis;
    let seq = state.push_record(record);
    if let (true, Some(members_before)) = (basis == "pending", members_before) {
        state.unclassified.push_back(Unclassified {
            seq,
            ended: now,
            members_before,
            fallback,
            epochs: None,
        });
        app.watch_now.notify_one();
    }
}

/// A rebalance failed: counted and recorded; its cause carries over to the next one.
fn rebalance_failed(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::RebalanceFailed {
        error,
        total_seconds,
        phases,
        ..
    } = event
    else {
        return;
    };
    let m = &app.metrics;
    let Line { ts_ms, .. } = line;
    m.rebalances_failed_total.inc();
    let pending = state.pending.take();
    let reported = pending
        .as_ref()
        .map_or(RebalanceCause::Unknown, |p| p.cause);
    state.carried_cause = Some(reported);
    state.member.stable = false;
    let assignment = state.member.assignment.clone();
    let rec = record(
        pending,
        reported,
        reported,
        ts_ms,
        None,
        total_seconds,
        phases,
        assignment,
        Some(error),
    );
    state.push_record(rec);
}

/// The consumer stopped on a fatal error: shown until a new process numbers its lines afresh.
fn fatal_error(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::FatalError { kind, message } = event else {
        return;
    };
    let m = &app.metrics;
    let Line { ts_ms, seq, .. } = line;
    clear_fatal(app, state);
    reconcile::member_event(state, ts_ms);
    reconcile::end_wait(state);
    let kind = if FATAL_ERROR_KINDS.contains(&kind.as_str()) {
        kind
    } else {
        "other".to_string()
    };
    m.consumer_fatal_error.with_label_values(&[&kind]).set(1);
    state.member.fatal_error = Some(FatalErrorView {
        kind,
        message,
        at_ms: ts_ms,
        seq,
    });
    state.member.stable = false;
}

/// A snapshot: gauges, the fetch view, and lag from the consumer's own view when no broker watch
/// runs.
fn snapshot(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::Snapshot(snap) = event else {
        return;
    };
    let m = &app.metrics;
    let Line { now, ts_ms, seq } = line;
    let paused = snap.partitions.iter().filter(|p| p.paused).count();
    m.partitions_paused.set(paused as i64);
    m.processing_in_flight.set(snap.in_flight as i64);
    m.consumer_memory_bytes
        .set(i64::try_from(snap.memory_bytes).unwrap_or(i64::MAX));
    m.consumer_memory_limit_bytes
        .set(i64::try_from(snap.memory_limit_bytes).unwrap_or(i64::MAX));
    if let Some(latency) = &snap.handler_latency {
        m.handler_duration_seconds.set(latency);
    }
    m.fetch.observe(seq, &snap);
    if app.config.client.is_none() {
        // No broker watch: lag from the consumer's own view.
        state.lag.clear();
        for p in snap.partitions.iter().take(app.config.lag_max_partitions) {
            if let (Some(end), Some(pos)) = (p.high_watermark, p.committed.or(p.position)) {
                let key = TopicPartition {
                    topic: p.topic.clone(),
                    partition: p.partition,
                };
                state.lag.insert(
                    key,
                    crate::state::PartitionLag {
                        committed: p.committed,
                        end: Some(end),
                        lag_records: (end - pos).max(0),
                        lag_seconds: 0.0,
                        owner: None,
                        start_offset: None,
                    },
                );
            }
        }
    }
    reconcile::snapshot(app, state, &snap, now, ts_ms);
    state.snapshot = Some((now, snap));
}

/// The revoke listener ran: the partitions leave the assignment.
fn partitions_revoked(app: &App, state: &mut State, event: Event) {
    let Event::PartitionsRevoked {
        partitions,
        duration_seconds,
        ..
    } = event
    else {
        return;
    };
    let m = &app.metrics;
    m.partitions_revoked_duration_seconds
        .observe(duration_seconds);
    state.member.assignment.retain(|p| !partitions.contains(p));
    state.lag_status.revoked(&partitions);
    if let Some(p) = state.pending.as_mut() {
        p.revoked.extend(partitions);
    }
}

/// The assign listener ran: the new assignment.
fn partitions_assigned(app: &App, state: &mut State, event: Event) {
    let Event::PartitionsAssigned {
        added,
        assignment,
        duration_seconds,
        ..
    } = event
    else {
        return;
    };
    let m = &app.metrics;
    m.partitions_assigned_duration_seconds
        .observe(duration_seconds);
    m.assigned_partitions.set(assignment.len() as i64);
    state.member.assignment = assignment;
    if let Some(p) = state.pending.as_mut() {
        p.assigned.extend(added);
    }
}

/// Partitions lost: out of the assignment, kept for the rebalance that follows if none is under
/// way.
fn partitions_lost(app: &App, state: &mut State, event: Event) {
    let Event::PartitionsLost {
        partitions,
        duration_seconds,
        ..
    } = event
    else {
        return;
    };
    let m = &app.metrics;
    m.partitions_lost_duration_seconds.observe(duration_seconds);
    state.member.assignment.retain(|p| !partitions.contains(p));
    m.assigned_partitions
        .set(state.member.assignment.len() as i64);
    match state.pending.as_mut() {
        Some(p) => p.lost.extend(partitions),
        // The member lost them before its rejoin began (an expired session).
        None => state.lost_before_start.extend(partitions),
    }
}

/// KIP-345: a static member's new process in its old place, no rebalance: stable in the group's
/// unchanged generation, and not counted.
fn static_rejoin(app: &App, state: &mut State, event: Event) {
    let Event::StaticRejoin { generation, .. } = event else {
        return;
    };
    let m = &app.metrics;
    state.pending = None;
    state.member.generation = generation;
    state.member.joined = true;
    state.member.stable = true;
    m.group_generation.set(i64::from(generation));
    m.assigned_partitions
        .set(state.member.assignment.len() as i64);
}

/// A heartbeat answered, or failed.
fn heartbeat(app: &App, state: &mut State, event: Event) {
    let Event::Heartbeat {
        generation,
        latency_seconds,
        error,
    } = event
    else {
        return;
    };
    let m = &app.metrics;
    m.heartbeat_response_duration_seconds
        .observe(latency_seconds);
    match error {
        None => {
            m.last_heartbeat_timestamp_seconds.set(unix_now());
            if state.member.is_consumer() {
                reconcile::heartbeat(state, generation);
            }
        }
        Some(_) => m.heartbeats_failed_total.inc(),
    }
}

/// The member was fenced.
fn fenced(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::Fenced { .. } = event else {
        return;
    };
    let m = &app.metrics;
    let Line { now, .. } = line;
    // One fencing per fall from the group: the member's retries that find the instance
    // id still held report `fenced` again, and are not new fencings.
    if !state.member.fenced {
        m.fenced_total.inc();
        state.fenced_times.push_back(now);
    }
    state.member.fenced = true;
    state.member.stable = false;
}

/// The exporter dropped events: its running total.
fn events_dropped(app: &App, state: &mut State, event: Event) {
    let Event::EventsDropped { dropped_total, .. } = event else {
        return;
    };
    let m = &app.metrics;
    // A total below the last one means the consumer restarted: all of it is new.
    let delta = if dropped_total >= state.dropped_seen {
        dropped_total - state.dropped_seen
    } else {
        dropped_total
    };
    m.telemetry_events_dropped_total.inc_by(delta);
    state.dropped_seen = dropped_total;
}

/// A consumer-protocol (or share) reconciliation ended.
fn reconciled(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::Reconciled {
        member_epoch,
        added,
        revoked,
        total_seconds,
        phases,
    } = event
    else {
        return;
    };
    let Line { now, ts_ms, .. } = line;
    let r = reconcile::Reconciled {
        member_epoch,
        added,
        revoked,
        total_seconds,
        phases,
    };
    if state.member.is_share() {
        reconcile::share_reconciled(app, state, r, ts_ms);
    } else {
        reconcile::reconciled(app, state, r, now, ts_ms);
    }
}

/// A static member waits for its instance id.
fn instance_id_unreleased(app: &App, state: &mut State, line: Line, event: Event) {
    let Event::InstanceIdUnreleased {
        instance_id,
        attempt,
        retry_in_seconds,
    } = event
    else {
        return;
    };
    let Line { now, ts_ms, .. } = line;
    reconcile::instance_id_unreleased(
        app,
        state,
        instance_id,
        attempt,
        retry_in_seconds,
        now,
        ts_ms,
    );
}

#[allow(clippy::too_many_arguments)]
fn record(
    pending: Option<Pending>,
    cause: RebalanceCause,
    reported: RebalanceCause,
    ended_ms: u64,
    generation: Option<i32>,
    total_seconds: f64,
    phases: Phases,
    assignment: Vec<TopicPartition>,
    error: Option<String>,
) -> RebalanceRecord {
    let (started_ms, generation_before, protocol, revoked, assigned, lost) = match pending {
        Some(p) => (
            p.started_ms,
            p.generation_before,
            p.protocol,
            p.revoked,
            p.assigned,
            p.lost,
        ),
        None => (0, -1, String::new(), Vec::new(), Vec::new(), Vec::new()),
    };
    RebalanceRecord {
        seq: 0,
        cause,
        reported_cause: reported,
        outcome: if error.is_some() {
            "failed"
        } else {
            "completed"
        },
        error,
        started_ms,
        ended_ms: if ended_ms == 0 { unix_ms() } else { ended_ms },
        generation_before,
        generation,
        protocol,
        total_seconds,
        phases,
        revoked,
        assigned,
        lost,
        assignment,
        cause_basis: "member",
        members_joined: Vec::new(),
        members_left: Vec::new(),
        reconciliation: None,
    }
}

/// Names the causes of completed rebalances that wait for the broker's view, oldest first: with
/// the first Stable view read after the completion, or, when none comes within three watch
/// intervals (at least 5 s), with the assignment rule. Only then are they counted in
/// `mooring_rebalances_total` (so the counter lags a completion by about one watch round trip).
pub fn settle_causes(app: &App) {
    let now = Instant::now();
    let timeout = (app.config.watch_interval * 3).max(Duration::from_secs(5));
    let mut state = app.state();
    while let Some(u) = state.unclassified.front().cloned() {
        let judged = match u.epochs {
            // `consumer` protocol: the group's members at the member's epochs before and after.
            Some(epochs) => crate::reconcile::classify_epochs(
                &state.epoch_views,
                epochs,
                &state.member_watch,
                app.config.causes_stall,
            )
            .map(|(cause, joined, left)| match cause {
                Some(c) => (c, joined, left, "broker_view"),
                None => (u.fallback, joined, left, "assignment"),
            }),
            None => match &state.last_stable_members {
                Some((read_at, after)) if *read_at > u.ended => {
                    let (cause, joined, left) = classify(
                        &u.members_before,
                        after,
                        &state.member_watch,
                        app.config.causes_stall,
                    );
                    Some(match cause {
                        Some(c) => (c, joined, left, "broker_view"),
                        None => (u.fallback, joined, left, "assignment"),
                    })
                }
                _ => None,
            },
        };
        let (cause, joined, left, basis) = match judged {
            Some(judged) => judged,
            None if now.duration_since(u.ended) > timeout => {
                (u.fallback, Vec::new(), Vec::new(), "assignment")
            }
            None => break,
        };
        state.unclassified.pop_front();
        app.metrics
            .rebalances_total
            .with_label_values(&[cause.as_str()])
            .inc();
        if let Some(r) = state.record_mut(u.seq) {
            r.cause = cause;
            r.cause_basis = basis;
            r.members_joined = joined;
            r.members_left = left;
        }
    }
}

/// Forgets the consumer's fatal error (a new process reports), and its gauge.
fn clear_fatal(app: &App, state: &mut State) {
    if let Some(fatal) = state.member.fatal_error.take() {
        app.metrics
            .consumer_fatal_error
            .with_label_values(&[&fatal.kind])
            .set(0);
    }
}

/// Whether the member is ready: joined, stable, assigned, and not stopped on a fatal error. A
/// static member waiting for its `group.instance.id` (UNRELEASED_INSTANCE_ID, `consumer`
/// protocol) is ready while it waits: the process holding the id may be the very pod a rolling
/// update stops only once this one is ready (deploy/README.md); once it gives up it is not.
pub fn readiness(state: &State) -> (bool, Vec<&'static str>) {
    let mut why = Vec::new();
    if state.member.fatal_error.is_some() {
        why.push("the consumer stopped on a fatal error");
    }
    match &state.member.instance_id_unreleased {
        Some(wait) if wait.waiting() && why.is_empty() => return (true, why),
        Some(_) => why.push("the member gave up waiting for its group.instance.id"),
        None => {}
    }
    if !state.member.joined {
        why.push("not joined");
    }
    if !state.member.stable {
        why.push("rebalancing or not stable");
    }
    if state.member.assignment.is_empty() {
        why.push("no partitions assigned");
    }
    (why.is_empty(), why)
}
