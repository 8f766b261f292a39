//! Bearer tokens: the debug token in front of `/debug/*` and `/alerts` (when `debug.token` is
//! set), and the ingest credential on `POST /v1/events` (when `ingest.token.file` is set).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use mooring_client::config::Secret;

use crate::app::App;

/// Lets the request through if no debug token is configured or it carries the right one.
pub(crate) async fn require_token(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    if authorized(request.headers(), app.config.debug_token.as_ref()) {
        next.run(request).await
    } else {
        unauthorized()
    }
}

/// Whether `headers` carry `Authorization: Bearer <expected>` (always, when nothing is expected).
pub(crate) fn authorized(headers: &HeaderMap, expected: Option<&Secret>) -> bool {
    let Some(expected) = expected else {
        return true;
    };
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|token| constant_time_eq(token.as_bytes(), expected.expose().as_bytes()))
}

/// 401 with `WWW-Authenticate: Bearer`.
pub(crate) fn unauthorized() -> Response {
    let mut response = super::error(StatusCode::UNAUTHORIZED, "a bearer token is required");
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    response
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
