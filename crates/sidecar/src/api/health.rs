//! `/startupz` (startup), `/healthz` (liveness) and `/readyz` (readiness).
//!
//! Startup is the sidecar's first look at the group: the native sidecar's startup probe asks it,
//! so the consumer starts only once the broker watch has answered (or failed: its look is
//! bounded, so a broker outage never holds the consumer back), or at once when no group is
//! watched. A consumer that joined first would be judged without the group as it stood before
//! it (a static member's rejoin, which keeps the group epoch, would count as a rebalance).
//!
//! Liveness is progress, never reachability: the sidecar's watch loop ticks, the consumer has
//! sent something within `health.stale.ms` (snapshots come every few seconds), the consumer's
//! fetch (poll) loop began an iteration within `health.stale.ms` (it iterates at least once a
//! second whatever the handlers do: a slow handler never fails liveness, a stuck runtime does),
//! and its handlers are not stalled past the critical poll-stall threshold (keep that above
//! `max.poll.interval.ms`). A broker outage fails none of these, so it cannot cause a restart
//! storm. Readiness is the member's: joined, stable, assigned.
//!
//! A static member waiting for its `group.instance.id` (UNRELEASED_INSTANCE_ID, `consumer`
//! protocol) is ready while it waits, its wait in both bodies: in a surge rollout the id's holder
//! is the old pod, which goes only once this one is ready (deploy/README.md).
//!
//! A consumer stopped on a fatal error (an authentication refused, ...) is not ready, and both
//! bodies carry the error (`fatal_error`, `consumer_fatal_error`); liveness stays progress: the
//! consumer's process exits on the error anyway, so its container restarts by itself, and a
//! liveness failure would only restart the sidecar with it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::alerts::AlertKind;
use crate::app::{loop_stale, poll_stall, App};
use crate::ingest::readiness;

pub(crate) async fn startupz(State(app): State<Arc<App>>) -> Response {
    let state = app.state();
    let started = !app.watches_group() || state.watch_tick.is_some();
    let body = serde_json::json!({
        "started": started,
        "watch_error": state.watch_error,
    });
    drop(state);
    let status = if started {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

pub(crate) async fn healthz(State(app): State<Arc<App>>) -> Response {
    let now = Instant::now();
    let stale = app.config.health_stale;
    let stall_limit = app.config.threshold(AlertKind::PollStallSeconds).critical;
    let mut problems: Vec<String> = Vec::new();
    let state = app.state();
    // The watch loop ticks every interval whatever the broker does.
    let watch_limit = (app.config.watch_interval * 3).max(Duration::from_secs(30));
    let watch_reference = state.watch_tick.unwrap_or(state.started);
    if now.duration_since(watch_reference) > watch_limit {
        problems.push("the sidecar's watch loop is stuck".into());
    }
    let consumer_reference = state.last_event.unwrap_or(state.started);
    let silent = now.duration_since(consumer_reference);
    if silent > stale {
        problems.push(format!(
            "the consumer has sent nothing for {:.0} s",
            silent.as_secs_f64()
        ));
    }
    let loop_age = loop_stale(&state, now);
    if let Some(age) = loop_age.filter(|a| *a > stale.as_secs_f64()) {
        problems.push(format!(
            "the consumer's fetch loop has not iterated for {age:.1} s (its runtime is stuck)"
        ));
    }
    let stall = poll_stall(&state, now);
    if stall > stall_limit {
        problems.push(format!(
            "the consumer's processing loop made no progress for {stall:.0} s"
        ));
    }
    let seen = state.last_event.is_some();
    let loop_ticks = state.snapshot.as_ref().map(|(_, s)| s.loop_ticks);
    let fatal_error = state.member.fatal_error.clone();
    let waiting = instance_wait_json(&state, now);
    drop(state);
    let status = if problems.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = serde_json::json!({
        "live": problems.is_empty(),
        "problems": problems,
        "consumer_seen": seen,
        "consumer_silent_seconds": silent.as_secs_f64(),
        "poll_stall_seconds": stall,
        "consumer_loop_stale_seconds": loop_age,
        "consumer_loop_ticks": loop_ticks,
        "consumer_fatal_error": fatal_error,
        "instance_id_unreleased": waiting,
    });
    (status, Json(body)).into_response()
}

/// The member's wait for its `group.instance.id` (`null` when it does not wait), with the
/// seconds waited so far.
pub(crate) fn instance_wait_json(state: &crate::state::State, now: Instant) -> serde_json::Value {
    match &state.member.instance_id_unreleased {
        Some(w) => serde_json::json!({
            "instance_id": w.instance_id,
            "attempt": w.attempt,
            "retry_in_seconds": w.retry_in_seconds,
            "since_ms": w.since_ms,
            "waited_seconds": w.waited_seconds(now),
            "waiting": w.waiting(),
        }),
        None => serde_json::Value::Null,
    }
}

pub(crate) async fn readyz(State(app): State<Arc<App>>) -> Response {
    let state = app.state();
    let (ready, why) = readiness(&state);
    let body = serde_json::json!({
        "ready": ready,
        "problems": why,
        "member_id": state.member.member_id,
        "generation": state.member.generation,
        "group_protocol": state.member.group_protocol,
        "member_epoch": state.member.member_epoch,
        "consumer_state": state.member.consumer_state,
        "assigned_partitions": state.member.assignment.len(),
        "fatal_error": state.member.fatal_error,
        "waiting_for_instance_id": instance_wait_json(&state, Instant::now()),
    });
    drop(state);
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}
