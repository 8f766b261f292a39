//! Keeps `scripts/bench-sidecar` working: `scripts/bench-sidecar --smoke` on the suite's cluster
//! with this build's `mooring-sidecar`, `sidecar-bench` and `consume-bench`: a 50-partition group
//! the sidecar watches under a small event load, then one throughput round (the consumer without
//! the exporter, with it and a live sidecar, with it and no sidecar). Asserts what the run
//! printed (the lag series, the goal lines, a row per mode), never its figures.
//!
//! `consume-bench` is a binary of another package (mooring-consumer), so cargo gives this test no
//! path to it: it is taken from this build's directory, where building the workspace (as
//! `scripts/test` does first, and `cargo nextest run --workspace`) puts it.

use std::path::PathBuf;

use mooring_testkit::{run_bench_smoke, Cluster};

#[test]
fn bench_sidecar_smoke_renders_and_runs_a_throughput_round() {
    let consume_bench = sibling_binary("consume-bench");
    assert!(
        consume_bench.is_file(),
        "no {} (build the workspace first: cargo build --workspace --all-targets)",
        consume_bench.display()
    );
    let cluster = Cluster::shared();
    let (stdout, stderr) = run_bench_smoke(
        "bench-sidecar",
        &cluster,
        [
            "--sidecar-bin".as_ref(),
            env!("CARGO_BIN_EXE_mooring-sidecar").as_ref(),
            "--sidecar-bench-bin".as_ref(),
            env!("CARGO_BIN_EXE_sidecar-bench").as_ref(),
            "--consume-bench-bin".as_ref(),
            consume_bench.as_os_str(),
        ],
    );
    assert!(
        stdout.contains("mooring_assigned_partitions 50"),
        "the scrape does not show the announced assignment:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("goal scrape p99 <= 5 ms: "), "{stdout}");
    assert!(stdout.contains("goal RSS <= 30 MiB: "), "{stdout}");
    for mode in ["off", "on", "absent"] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("| {mode} | 1 | "))),
            "no row of the {mode} run in the throughput table:\n{stdout}\n{stderr}"
        );
    }
    for mode in ["on", "absent"] {
        assert!(
            stdout.contains(&format!("{mode}/off records/s: ")),
            "no {mode}/off verdict:\n{stdout}"
        );
    }
}

/// The path of `name`, a binary of this workspace, in this build's directory (the test runs
/// from `target/<profile>/deps`).
fn sibling_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("this test's path");
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("the test binary sits in target/<profile>/deps");
    profile_dir.join(name)
}
