//! The pieces of the rolling-update simulation: pods (a consumer and its sidecar as processes),
//! the producer whose acknowledgements are the truth, and one rollout's run and measures.

pub mod pod;
pub mod producer;
pub mod rollout;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub(crate) const MEMBERS: usize = 3;
pub(crate) const PARTITIONS: u32 = 6;
/// Records per second the producer sends during the whole update.
pub(crate) const RATE: u32 = 300;
/// `session.timeout.ms`. The timing rule (deploy/README.md): it must exceed the worst restart of
/// a pod (termination + scheduling + start + join). Here a restart is a process exit and start
/// on the same machine: SIGTERM to exit about 0.03 s and start to Ready about 0.35 s measured
/// (the table the test prints), up to a few seconds when the shared 2-core machine is loaded by
/// builds. 20 s keeps a wide margin over that, so a slow start never expires a session (which
/// would be a rebalance, failing the test for the wrong reason), and costs nothing here: a static
/// member that is gone for good would only be noticed that much later.
pub(crate) const SESSION_TIMEOUT_MS: u64 = 20_000;
/// The kubelet's grace between SIGTERM and SIGKILL (`terminationGracePeriodSeconds`).
pub(crate) const GRACE: Duration = Duration::from_secs(30);
/// The controller's patience for a new pod to become Ready.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a pod waits, Ready, before the next is touched (the StatefulSet's
/// `minReadySeconds`); it is also the time a rebalance, if one happened, has to show in the
/// sidecars' counters, which the static rollout asserts stayed still.
pub(crate) const MIN_READY: Duration = Duration::from_secs(2);

/// The target directory's profile folder (`target/debug`) holding the binaries: the one this
/// test runs from.
pub(crate) fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's path");
    // target/debug/deps/rolling_update-HASH
    exe.parent()
        .and_then(Path::parent)
        .expect("the test runs from target/<profile>/deps")
        .to_path_buf()
}

/// `orders-demo` and `mooring-sidecar` of this very tree: cargo builds them into the target
/// directory the test runs from (a no-op when `nextest --workspace` already did; without it a
/// lone `-p mooring-e2e` run would use stale binaries, or none).
pub(crate) fn binaries() -> &'static (PathBuf, PathBuf) {
    static BINS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINS.get_or_init(|| {
        let dir = bin_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut build = Command::new(cargo);
        build.current_dir(&workspace).args([
            "build",
            "--locked",
            "-p",
            "mooring-consumer",
            "--bin",
            "orders-demo",
            "-p",
            "mooring-sidecar",
            "--bin",
            "mooring-sidecar",
        ]);
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_some_and(set_for_tests_only) {
                build.env_remove(name);
            }
        }
        if dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build
            .env("CARGO_TARGET_DIR", dir.parent().expect("target dir"))
            .status()
            .expect("could not run cargo to build orders-demo and mooring-sidecar");
        let (member, sidecar) = (dir.join("orders-demo"), dir.join("mooring-sidecar"));
        assert!(
            status.success() && member.exists() && sidecar.exists(),
            "building orders-demo and mooring-sidecar into {} failed ({status}): build them with \
             `cargo build -p mooring-consumer --bin orders-demo -p mooring-sidecar --bin \
             mooring-sidecar`",
            dir.display()
        );
        (member, sidecar)
    })
}

/// Whether `name` is one of the variables cargo and nextest set for a running test. A cargo
/// started from the test must not inherit them: cargo compares a build script's declared inputs
/// with its own environment, so ring's `CARGO_MANIFEST_DIR` seen here would rebuild ring, rustls
/// and every crate above them, and again for the next cargo run without it (the doc tests, the
/// compatibility phase: five minutes of a CI run).
fn set_for_tests_only(name: &str) -> bool {
    matches!(
        name,
        "CARGO_MANIFEST_DIR"
            | "CARGO_MANIFEST_PATH"
            | "CARGO_CRATE_NAME"
            | "CARGO_PRIMARY_PACKAGE"
            | "CARGO_TARGET_TMPDIR"
            | "OUT_DIR"
    ) || ["CARGO_PKG_", "CARGO_BIN_", "NEXTEST"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
}

pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A free port below 32768 (outside Linux's range for outgoing connections, so no client socket
/// takes it between the check and the sidecar's bind), from a range of its own per scenario (the
/// two tests run side by side under nextest) that avoids the dedicated clusters' port bases
/// (23000, 28000, 29000) and the demo's sidecars (24464...). The listener returned holds the
/// port until the pod's first start.
pub(crate) fn reserve_port(range: std::ops::Range<u16>) -> TcpListener {
    let width = range.end - range.start;
    let offset = (std::process::id() % u32::from(width)) as u16;
    (0..width)
        .map(|i| range.start + (offset + i) % width)
        .find_map(|p| TcpListener::bind(("127.0.0.1", p)).ok())
        .expect("a free port in the test's range")
}

/// A plain HTTP/1.0 GET on 127.0.0.1: (status, body), or `None` if nothing answers.
pub(crate) fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream =
        TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    Some((status, body))
}

pub(crate) fn json(port: u16, path: &str) -> Option<(u16, serde_json::Value)> {
    let (status, body) = http_get(port, path)?;
    Some((status, serde_json::from_str(&body).ok()?))
}

/// The sum of a metric's samples over its labels (`name{...} v` and `name v` lines), `None` if
/// the sidecar does not answer.
pub(crate) fn metric_sum(port: u16, name: &str) -> Option<u64> {
    let (status, text) = http_get(port, "/metrics")?;
    (status == 200).then(|| {
        text.lines()
            .filter(|l| {
                l.strip_prefix(name)
                    .is_some_and(|rest| rest.starts_with('{') || rest.starts_with(' '))
            })
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    })
}

pub(crate) fn wait_until<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?}: {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// SIGTERM, then up to `grace` for the exit, then SIGKILL (as the kubelet). Returns the status
/// and whether the grace sufficed.
pub(crate) fn terminate(child: &mut Child, grace: Duration) -> (ExitStatus, bool) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let deadline = Instant::now() + grace;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return (status, true);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            return (child.wait().expect("wait after SIGKILL"), false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
