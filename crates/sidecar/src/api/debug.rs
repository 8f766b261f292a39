//! `/alerts` and the `/debug/*` endpoints: JSON views of the state.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;

use crate::app::App;

pub(crate) async fn alerts(State(app): State<Arc<App>>) -> Response {
    Json(serde_json::json!({ "alerts": app.alerts() })).into_response()
}

pub(crate) async fn group(State(app): State<Arc<App>>) -> Response {
    let state = app.state();
    let body = serde_json::json!({
        "group_id": app.config.group_id,
        "identity": state.identity,
        "member": state.member,
        "instance_id_unreleased": super::health::instance_wait_json(&state, std::time::Instant::now()),
        "rebalancing_since_ms": state.pending.as_ref().map(|p| p.started_ms),
        "broker_view": state.group,
        "share": state.member.is_share().then_some(&state.share),
        "broker_watch_error": state.watch_error,
        "telemetry_dropped_total": state.dropped_seen,
        "telemetry_skipped_lines": state.skipped_lines,
    });
    drop(state);
    Json(body).into_response()
}

/// `?limit=N`, 1..=1000.
#[derive(Debug, Deserialize)]
pub(crate) struct Limit {
    limit: Option<usize>,
}

pub(crate) async fn rebalances(
    State(app): State<Arc<App>>,
    query: Result<Query<Limit>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let limit = match query {
        Ok(Query(Limit { limit })) => limit.unwrap_or(app.config.rebalance_history),
        Err(e) => return super::error(StatusCode::BAD_REQUEST, &format!("bad query: {e}")),
    };
    if !(1..=1000).contains(&limit) {
        return super::error(StatusCode::BAD_REQUEST, "limit must be between 1 and 1000");
    }
    let state = app.state();
    let skip = state.history.len().saturating_sub(limit);
    let list: Vec<_> = state.history.iter().skip(skip).cloned().collect();
    drop(state);
    Json(serde_json::json!({ "rebalances": list })).into_response()
}

pub(crate) async fn partitions(State(app): State<Arc<App>>) -> Response {
    let state = app.state();
    let snapshot = state.snapshot.as_ref().map(|(_, s)| s.clone());
    let lag: Vec<_> = state
        .lag
        .iter()
        .map(|(p, l)| serde_json::json!({ "topic": p.topic, "partition": p.partition, "lag": l }))
        .collect();
    let assignment = state.member.assignment.clone();
    drop(state);
    Json(serde_json::json!({
        "assignment": assignment,
        "consumer": snapshot,
        "lag": lag,
    }))
    .into_response()
}

/// Each partition's lag status with its evidence, and the group's.
pub(crate) async fn lag(State(app): State<Arc<App>>) -> Response {
    let state = app.state();
    let report = crate::lag_report::report(&app.config, &state, crate::app::unix_ms() as i64);
    drop(state);
    Json(report).into_response()
}

/// The scaling signal with its evidence (`null` before the first look-up).
pub(crate) async fn scaling(State(app): State<Arc<App>>) -> Response {
    let signal = app.state().scaling.signal.clone();
    Json(serde_json::json!({ "group_id": app.config.group_id, "scaling": signal })).into_response()
}

pub(crate) async fn config(State(app): State<Arc<App>>) -> Response {
    Json(serde_json::json!({ "config": app.config.redacted })).into_response()
}
