//! The bearer-token check in front of `/debug/*` (when `debug.token` is set).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::app::App;

/// Lets the request through if no token is configured or it carries the right one.
pub(crate) async fn require_token(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(expected) = app.config.debug_token.as_deref() else {
        return next.run(request).await;
    };
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(token) if constant_time_eq(token.as_bytes(), expected.as_bytes()) => {
            next.run(request).await
        }
        _ => {
            let mut response = super::error(StatusCode::UNAUTHORIZED, "a bearer token is required");
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                header::HeaderValue::from_static("Bearer"),
            );
            response.into_response()
        }
    }
}

/// Compares without stopping at the first difference.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
