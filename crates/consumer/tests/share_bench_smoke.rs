//! Keeps `scripts/bench-share` and `share-bench` (the share-group performance bench and its
//! Mooring binary) working: `scripts/bench-share --smoke` on the suite's cluster with this build's
//! `share-bench`, a few thousand records, mooring and Java's ShareConsumerPerformance, one round.
//! Asserts what the run printed (a row per client and handler, the verdict line), never its
//! figures.
//!
//! The bench times each client with `/usr/bin/time` (Debian's `time`, which `scripts/setup`
//! installs). Where it is absent, `scripts/test` leaves this test out (the bench-tools filter of
//! `.config/nextest.toml`), so nextest counts it skipped; run anyway, it fails saying so.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use mooring_testkit::{run_bench_smoke, Cluster};

#[test]
fn bench_share_smoke_runs_mooring_and_java() {
    assert!(
        Path::new("/usr/bin/time").is_file(),
        "/usr/bin/time is absent (apt-get install time): this test should have been left out by \
         the runner (the bench-tools filter of .config/nextest.toml, which scripts/test applies \
         where the tool is absent)"
    );
    let cluster = Cluster::shared();
    let (stdout, stderr) = run_bench_smoke(
        "bench-share",
        &cluster,
        ["--mooring-bin", env!("CARGO_BIN_EXE_share-bench")],
    );
    let (noop, delay) = stdout
        .split_once("2 ms async handler")
        .unwrap_or_else(|| panic!("no table of the 2 ms handler:\n{stdout}\n{stderr}"));
    assert!(
        noop.contains("no-op handler, 5000 records"),
        "{stdout}\n{stderr}"
    );
    for client in ["mooring", "java"] {
        assert!(
            noop.lines().any(|l| l.starts_with(&format!("| {client} "))),
            "no {client} row with the no-op handler:\n{stdout}\n{stderr}"
        );
    }
    assert!(
        delay.lines().any(|l| l.starts_with("| mooring ")),
        "no mooring row with the 2 ms handler:\n{stdout}\n{stderr}"
    );
    assert!(
        !delay.lines().any(|l| l.starts_with("| java ")),
        "java has no handler to delay:\n{stdout}"
    );
    assert!(
        stdout.contains("ahead of every peer (java) on all three: "),
        "no verdict:\n{stdout}"
    );
}
