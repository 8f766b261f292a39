//! The benches' smoke runs (`scripts/bench-* --smoke`), which tests run to keep each bench
//! working as documented.

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use crate::Cluster;

/// Runs `scripts/<bench> --smoke --cluster <cluster>` with `args` after them and returns what it
/// printed (stdout, stderr); panics with both if it failed. Prints how long it took.
pub fn run_bench_smoke<I, S>(bench: &str, cluster: &Cluster, args: I) -> (String, String)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scripts")
        .join(bench);
    let started = Instant::now();
    let out = Command::new(script)
        .args(["--smoke", "--cluster", cluster.name()])
        .args(args)
        // A bench chooses the ports of what it starts: a sidecar listen address from the test's
        // environment would clash.
        .env_remove("MOORING_SIDECAR_LISTEN")
        .output()
        .unwrap_or_else(|e| panic!("could not run scripts/{bench}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    eprintln!(
        "scripts/{bench} --smoke took {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        out.status.success(),
        "scripts/{bench} --smoke failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    (stdout, stderr)
}
