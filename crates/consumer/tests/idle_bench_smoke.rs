//! Keeps `scripts/bench-idle` and `consume-bench --idle` (the idle-consumer bench and its Mooring
//! binary) working: `scripts/bench-idle --smoke` on the suite's cluster with this build's
//! `consume-bench`, a 5 s window on an empty topic of 20 partitions, mooring and Java's
//! VerifiableConsumer, one round. Asserts what the run printed (a row per client with its CPU and
//! wake-ups, the ratio line), never its figures.
//!
//! The suite's cluster has no JMX, so the broker's request counts are not read there: the request
//! columns are "-" (the bench says so). It is listed with the bench tools' tests in
//! `.config/nextest.toml` (profile bench-tools), as the share bench's smoke is.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mooring_testkit::{run_bench_smoke, Cluster};

#[test]
fn bench_idle_smoke_runs_mooring_and_java() {
    let cluster = Cluster::shared();
    let (stdout, stderr) = run_bench_smoke(
        "bench-idle",
        &cluster,
        ["--mooring-bin", env!("CARGO_BIN_EXE_consume-bench")],
    );
    assert!(
        stdout.contains("bench-idle-smoke (20 partitions, empty)"),
        "{stdout}\n{stderr}"
    );
    let header = stdout
        .lines()
        .find(|l| l.starts_with("| client "))
        .unwrap_or_else(|| panic!("no table:\n{stdout}\n{stderr}"));
    assert!(
        header.contains("wake-ups/s"),
        "no wake-ups column: {header}"
    );
    for client in ["mooring", "java"] {
        let row = stdout
            .lines()
            .find(|l| l.starts_with(&format!("| {client} ")))
            .unwrap_or_else(|| panic!("no {client} row:\n{stdout}\n{stderr}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // | client | CPU s/min | wake-ups/s | ...: both measured, so numbers, not "-".
        for (i, what) in [(2, "CPU s/min"), (3, "wake-ups/s")] {
            assert!(
                cells.get(i).is_some_and(|c| c.parse::<f64>().is_ok()),
                "{client}'s {what} is not a number: {row}"
            );
        }
    }
    assert!(
        stdout.contains("mooring / java: CPU "),
        "no ratio line:\n{stdout}"
    );
}
