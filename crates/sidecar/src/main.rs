//! The `mooring-sidecar` binary: `serve` (the default) runs the sidecar; `rules` prints the
//! Prometheus rule file built from the same configuration; `check-config` validates it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use mooring_sidecar::{rules, SidecarConfig};

#[derive(Debug, Parser)]
#[command(
    name = "mooring-sidecar",
    about = "Rebalance metrics, alerts and a health/debug API beside a Mooring consumer"
)]
struct Cli {
    /// Configuration file (TOML or YAML); `MOORING_SIDECAR_*` environment variables override it.
    #[arg(long, short)]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve (the default).
    Serve,
    /// Print the Prometheus rule file for the configured thresholds.
    Rules {
        /// `rules`: a rule file (`groups:`); `prometheus-rule`: a Prometheus Operator
        /// PrometheusRule (`spec.groups`).
        #[arg(long, value_enum, default_value_t = RulesFormat::Rules)]
        format: RulesFormat,
    },
    /// Validate the configuration and print it (secrets redacted).
    CheckConfig,
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum RulesFormat {
    Rules,
    PrometheusRule,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let config = match SidecarConfig::load(cli.config.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("mooring-sidecar: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command.unwrap_or(Command::Serve) {
        Command::Rules { format } => {
            let format = match format {
                RulesFormat::Rules => rules::Format::Rules,
                RulesFormat::PrometheusRule => rules::Format::PrometheusRule,
            };
            print!("{}", rules::render_as(&config, format));
            ExitCode::SUCCESS
        }
        Command::CheckConfig => {
            for (k, v) in &config.redacted {
                println!("{k} = {v}");
            }
            ExitCode::SUCCESS
        }
        Command::Serve => serve(config),
    }
}

fn serve(config: SidecarConfig) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("mooring-sidecar: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        // The handlers exist before "listening on" is printed: whoever waits for that line (a
        // test, a supervisor) may send SIGTERM at once, and without a handler it would kill us.
        let stop = match stop_signals() {
            Ok(s) => s,
            Err(e) => {
                eprintln!("mooring-sidecar: cannot watch for signals: {e}");
                return ExitCode::FAILURE;
            }
        };
        let running = match mooring_sidecar::start(config).await {
            Ok(r) => r,
            Err(e) => {
                eprintln!("mooring-sidecar: cannot start: {e}");
                return ExitCode::FAILURE;
            }
        };
        eprintln!("mooring-sidecar: listening on {}", running.addr);
        stop.await;
        running.shutdown().await;
        ExitCode::SUCCESS
    })
}

/// Registers SIGTERM (what Kubernetes sends; a PID 1 without a handler would ignore it) and
/// SIGINT now; the future resolves on the first of them.
fn stop_signals() -> std::io::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}
