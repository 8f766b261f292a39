//! Serving a router on a listener: hyper's HTTP/1 connections with a header-read timeout (which
//! also closes a keep-alive connection idle that long), a request timeout around every route
//! (tower-http's, answering 408), and a cap on open connections. At the cap the listener accepts
//! no more until one closes: the kernel's backlog holds the rest, so a client that holds
//! connections costs at most the cap's sockets, each for at most the header timeout.

use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower_http::timeout::TimeoutLayer;

use crate::config::HttpLimits;

/// How long a stopping listener waits for the requests in flight.
const DRAIN: Duration = Duration::from_secs(5);
/// The pause after a failed accept (out of file descriptors, say) before the next.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Serves `router` on `listener` within `limits` until `stop` turns true, then lets the requests
/// in flight finish (for at most 5 s).
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: HttpLimits,
    mut stop: watch::Receiver<bool>,
) {
    let router = router.layer(TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        limits.request_timeout,
    ));
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let graceful = GracefulShutdown::new();
    loop {
        let slot = tokio::select! {
            slot = Arc::clone(&slots).acquire_owned() => match slot {
                Ok(slot) => slot,
                Err(_) => break,
            },
            () = stopped(&mut stop) => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting an HTTP connection failed");
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            () = stopped(&mut stop) => break,
        };
        let connection = graceful.watch(http.serve_connection(
            TokioIo::new(stream),
            TowerToHyperService::new(router.clone()),
        ));
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "an HTTP connection ended");
            }
            drop(slot);
        });
    }
    if tokio::time::timeout(DRAIN, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("HTTP requests still in flight after {DRAIN:?}; dropped");
    }
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
