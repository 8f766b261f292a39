//! The HTTP API (axum). Routes are fixed templates (bounded labels, no raw paths in metrics):
//!
//! | route | what |
//! |---|---|
//! | `POST /v1/events` | NDJSON telemetry from the consumer's exporter → 202 `{accepted, skipped}` |
//! | `GET /metrics` | Prometheus text format |
//! | `GET /startupz` | startup: the broker watch has looked at the group once (or watches none) |
//! | `GET /healthz` | liveness: the sidecar's and the consumer's loops make progress (never "the broker is reachable") |
//! | `GET /readyz` | readiness: joined, stable, assigned |
//! | `GET /alerts` | every alert's level, value and thresholds |
//! | `GET /debug/group` | member (from events) and group (from the broker) |
//! | `GET /debug/rebalances?limit=N` | the last N rebalances: cause, phase timings, partitions |
//! | `GET /debug/partitions` | assignment, positions, committed, high watermark, pause, lag |
//! | `GET /debug/lag` | each partition's lag status (Burrow's rules) with its window of commits and what the member said, the group's status |
//! | `GET /debug/scaling` | the scaling signal: desired and recommended replicas, members, cap and floor, capacity per replica and its source, produce and consume rates, lag, partitions without a commit, hot partitions, the rebalance price, the hold, a reason |
//! | `GET /debug/config` | the configuration, secrets redacted |
//!
//! `/debug/*` and `/alerts` require `Authorization: Bearer <debug.token>` when a token is set.
//! Bad requests get a 4xx with a JSON `error`; unknown routes a 404. Both listeners are served by
//! [`crate::server`], with its timeouts and connection cap.

mod auth;
mod debug;
mod health;
mod ingest;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::app::App;

/// Largest accepted telemetry POST.
pub const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Every route on one router.
pub fn router(app: Arc<App>) -> Router {
    let debug = Router::new()
        .route("/alerts", get(debug::alerts))
        .route("/debug/group", get(debug::group))
        .route("/debug/rebalances", get(debug::rebalances))
        .route("/debug/partitions", get(debug::partitions))
        .route("/debug/lag", get(debug::lag))
        .route("/debug/scaling", get(debug::scaling))
        .route("/debug/config", get(debug::config))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            auth::require_token,
        ));
    Router::new()
        .route("/v1/events", post(ingest::events))
        .merge(public_routes())
        .merge(debug)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(app)
}

/// The routes the optional second listener serves: metrics and probes.
pub fn metrics_router(app: Arc<App>) -> Router {
    public_routes().fallback(not_found).with_state(app)
}

fn public_routes() -> Router<Arc<App>> {
    Router::new()
        .route("/metrics", get(ingest::metrics))
        .route("/startupz", get(health::startupz))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
}

async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such route")
}

/// A JSON error response.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(serde_json::json!({ "error": message }))).into_response()
}
