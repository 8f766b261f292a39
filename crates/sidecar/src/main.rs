//! mooring-sidecar: the process that runs beside each Mooring consumer.
//!
//! It will receive the consumer's telemetry events, watch the group from the broker, and serve
//! Prometheus rebalance metrics, alert states and a health/debug API. It talks to the consumer only
//! over localhost HTTP and must never be linked into the consumer process.

fn main() {
    eprintln!("mooring-sidecar: not built yet (see the sidecar issue); nothing to run");
    std::process::exit(2);
}
