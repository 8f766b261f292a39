//! mooring-sidecar: the process that runs beside each Mooring consumer.
//!
//! It receives the consumer's telemetry (NDJSON over localhost HTTP, the schema of
//! `mooring_telemetry_schema`), watches the group from the broker (DescribeGroups,
//! OffsetFetch, ListOffsets with `mooring-client`), and serves Prometheus rebalance metrics
//! named after the Java client's consumer-coordinator metrics, alert states from configured
//! thresholds, and a health/debug API. It talks to the consumer only over HTTP and is never
//! linked into the consumer process.
//!
//! # Modules
//! - [`config`]: file + environment configuration, Kafka property names, nearest-key errors;
//!   [`credential`]: the telemetry ingest's token file.
//! - [`metrics`]: the Prometheus series.
//! - [`state`]: what the sidecar knows; [`ingest`]: events → state and metrics;
//!   [`reconcile`]: the `consumer` protocol's reconciliations, causes and instance-id waits.
//! - [`alerts`]: thresholds and levels; [`rules`]: the Prometheus rule file.
//! - [`lag`]: time lag from offset samples; [`watcher`]: the broker watch loop.
//! - [`lag_status`]: Burrow's status of each partition and of the group; [`commit_log`]: the
//!   group's commits, followed in `__consumer_offsets`; [`lag_report`]: the statuses with their
//!   evidence, for `/debug/lag` and `/metrics`.
//! - [`scaling`]: the replicas the group needs (for KEDA and the HPA); [`scaling_signal`]: its
//!   figures from the state after each look-up, and its series.
//! - [`zones`]: bytes fetched per broker and rack, the share across racks.
//! - [`share`]: share groups (KIP-932): a share consumer's counters, archived records, the
//!   poison and lock-expiry windows.
//! - [`api`]: the axum routes; [`app`]: what they share; [`server`]: the listeners' timeouts
//!   and connection cap.

pub mod alerts;
pub mod api;
pub mod app;
pub mod commit_log;
pub mod config;
pub mod credential;
pub mod ingest;
pub mod lag;
pub mod lag_report;
pub mod lag_status;
pub mod metrics;
pub mod reconcile;
pub mod rules;
pub mod scaling;
pub mod scaling_signal;
pub mod server;
pub mod share;
pub mod state;
pub mod watcher;
pub mod zones;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use app::App;
pub use config::SidecarConfig;

/// A running sidecar (for the binary and for tests).
#[derive(Debug)]
pub struct Running {
    /// The shared state.
    pub app: Arc<App>,
    /// Where the main listener is bound.
    pub addr: SocketAddr,
    /// Where the metrics listener is bound, if configured.
    pub metrics_addr: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl Running {
    /// Stops the listeners (in-flight requests finish) and the watch loop.
    pub async fn shutdown(self) {
        self.stop.send_replace(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}

/// Binds the listeners and starts serving and watching.
pub async fn start(config: SidecarConfig) -> std::io::Result<Running> {
    let listener = TcpListener::bind(config.listen).await?;
    let addr = listener.local_addr()?;
    let metrics_listener = match config.metrics_listen {
        Some(a) => Some(TcpListener::bind(a).await?),
        None => None,
    };
    let metrics_addr = match &metrics_listener {
        Some(l) => Some(l.local_addr()?),
        None => None,
    };
    let ingest_token = match &config.ingest_token_file {
        Some(path) => Some(credential::load_or_create(path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("ingest.token.file {}: {e}", path.display()),
            )
        })?),
        None => None,
    };
    let limits = config.http;
    let mut app = App::new(config);
    app.ingest_token = ingest_token;
    let app = Arc::new(app);
    let (stop, stop_rx) = watch::channel(false);
    let mut tasks = Vec::new();
    tasks.push(tokio::spawn(server::serve(
        listener,
        api::router(Arc::clone(&app)),
        limits,
        stop_rx.clone(),
    )));
    if let Some(l) = metrics_listener {
        tasks.push(tokio::spawn(server::serve(
            l,
            api::metrics_router(Arc::clone(&app)),
            limits,
            stop_rx.clone(),
        )));
    }
    tasks.push(tokio::spawn(commit_log::run(
        Arc::clone(&app),
        stop_rx.clone(),
    )));
    tasks.push(tokio::spawn(watcher::run(Arc::clone(&app), stop_rx)));
    Ok(Running {
        app,
        addr,
        metrics_addr,
        stop,
        tasks,
    })
}
