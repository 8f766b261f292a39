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
use std::process::Command;

use mooring_testkit::Cluster;

#[test]
fn bench_sidecar_smoke_renders_and_runs_a_throughput_round() {
    let consume_bench = sibling_binary("consume-bench");
    assert!(
        consume_bench.is_file(),
        "no {} (build the workspace first: cargo build --workspace --all-targets)",
        consume_bench.display()
    );
    let cluster = Cluster::shared();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/bench-sidecar");
    let started = std::time::Instant::now();
    let out = Command::new(script)
        .args(["--smoke", "--cluster", cluster.name(), "--sidecar-bin"])
        .arg(env!("CARGO_BIN_EXE_mooring-sidecar"))
        .arg("--sidecar-bench-bin")
        .arg(env!("CARGO_BIN_EXE_sidecar-bench"))
        .arg("--consume-bench-bin")
        .arg(&consume_bench)
        .env_remove("MOORING_SIDECAR_LISTEN")
        .output()
        .expect("run scripts/bench-sidecar");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!(
        "scripts/bench-sidecar --smoke took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "scripts/bench-sidecar --smoke failed ({}):\n{stdout}\n{stderr}",
        out.status
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
