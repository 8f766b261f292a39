//! Keeps `sidecar-bench` (the performance bench binary, run by `scripts/bench-sidecar`) working:
//! a tiny `render --smoke` run against the real `mooring-sidecar` binary, no broker. Asserts what
//! the run saw (the announced assignment in the scrape, the figures printed), never its timings.

use std::process::Command;

#[test]
fn render_smoke_run_scrapes_the_real_sidecar() {
    let out = Command::new(env!("CARGO_BIN_EXE_sidecar-bench"))
        .args(["render", "--smoke", "--partitions", "1000", "--sidecar"])
        .arg(env!("CARGO_BIN_EXE_mooring-sidecar"))
        .env_remove("MOORING_SIDECAR_LISTEN")
        .output()
        .expect("run sidecar-bench");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "sidecar-bench failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("50 scrapes in"), "{stdout}");
    assert!(
        stdout.contains("mooring_assigned_partitions 1000"),
        "the scrape does not show the announced assignment:\n{stdout}"
    );
    assert!(stdout.contains("goal scrape p99 <= 5 ms: "), "{stdout}");
    assert!(stdout.contains("goal RSS <= 30 MiB: "), "{stdout}");
    assert!(stdout.contains("sidecar RSS (/proc/"), "{stdout}");
}
