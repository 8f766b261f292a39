//! `POST /v1/events` and `GET /metrics`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::app::App;

/// Applies the lines of a POST that carries the ingest credential (when one is configured); one
/// without it changes nothing but the refusal counter.
pub(crate) async fn events(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !super::auth::authorized(&headers, app.ingest_token.as_ref()) {
        app.metrics.telemetry_requests_refused_total.inc();
        return super::auth::unauthorized();
    }
    let report = crate::ingest::ingest(&app, &body);
    if report.accepted == 0 && report.skipped > 0 {
        return super::error(
            StatusCode::BAD_REQUEST,
            "no line is a telemetry envelope (NDJSON, schema 1)",
        );
    }
    (StatusCode::ACCEPTED, Json(report)).into_response()
}

/// The registry's families, then the per-partition lag families written from the lag table
/// ([`App::scrape`](crate::app::App::scrape)).
pub(crate) async fn metrics(State(app): State<Arc<App>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        app.scrape(),
    )
        .into_response()
}
