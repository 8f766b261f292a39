//! Graceful shutdown: a handle any task can use to stop the consumer, and a helper that stops it
//! on SIGTERM or SIGINT (what Kubernetes sends before killing a pod).
//!
//! Stopping means, in order: stop fetching; let the handlers already running finish (records not
//! started are dropped and fetched again by the next owner); commit what finished; close the
//! group member — a static member (`group.instance.id`) stays in the group and sends no
//! LeaveGroup unless `mooring.leave.group.on.close=true`, so a rolling restart within the session
//! timeout causes no rebalance (KIP-345).
//!
//! All of it ends within `mooring.shutdown.timeout.ms`, whatever the brokers do (a broker outage
//! must not turn a SIGTERM into the SIGKILL at the end of the pod's grace period): the handlers
//! get until a quarter of it is left, the final commit what they left, the close what the commit
//! left. A commit that cannot complete in time is given up and reported once, naming the offsets
//! not committed ([`ConsumerEvent::OffsetsNotCommitted`](crate::ConsumerEvent::OffsetsNotCommitted)
//! and a warning): their records are processed again by the next owner, none is lost. A close
//! without time left sends no LeaveGroup; the coordinator drops the member after its session
//! timeout.
//!
//! A [`ShareConsumer`](crate::share::ShareConsumer) stops the same way within the same bound, but
//! has nothing to commit: the verdicts of finished handlers are sent, the records it still holds
//! are released to the group, and the member leaves.

use std::sync::Arc;

/// What a [`ShutdownHandle`] stops: a consumer's or a share consumer's shared state.
pub(crate) trait Stop: Send + Sync + std::fmt::Debug {
    fn request_shutdown(&self);
    fn is_shutting_down(&self) -> bool;
}

/// Stops a running consumer (a [`Consumer`](crate::Consumer) or a
/// [`ShareConsumer`](crate::share::ShareConsumer)); cheap to clone.
///
/// ```no_run
/// # async fn demo(consumer: mooring_consumer::Consumer) -> Result<(), mooring_consumer::ConsumerError> {
/// let shutdown = consumer.shutdown_handle();
/// shutdown.on_signals(); // SIGTERM / SIGINT
/// consumer.run(|_record| async { Ok::<(), String>(()) }).await?; // returns once shut down
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct ShutdownHandle {
    pub(crate) target: Arc<dyn Stop>,
}

impl ShutdownHandle {
    /// Asks the consumer to stop; `run` returns once it has drained, committed and closed (within
    /// `mooring.shutdown.timeout.ms`).
    pub fn shutdown(&self) {
        self.target.request_shutdown();
    }

    /// Whether shutdown was asked for.
    pub fn is_shutdown(&self) -> bool {
        self.target.is_shutting_down()
    }

    /// Spawns a task that calls [`shutdown`](Self::shutdown) on SIGTERM or SIGINT (Ctrl-C).
    /// Must be called inside a Tokio runtime.
    pub fn on_signals(&self) -> tokio::task::JoinHandle<()> {
        let handle = self.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            tracing::info!("shutdown signal received");
            handle.shutdown();
        })
    }
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the consumer");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _ = tokio::signal::ctrl_c().await;
}
