//! The sidecar stops on SIGTERM, which is what Kubernetes sends. As PID 1 of its container a
//! process without a SIGTERM handler ignores the signal and holds the pod for the whole grace.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn sigterm_stops_the_sidecar() {
    let dir = std::env::temp_dir().join(format!("sidecar-sigterm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let config = dir.join("sidecar.toml");
    // No broker needed: the watcher's failures to reach 127.0.0.1:1 are only logged.
    std::fs::write(
        &config,
        "listen = \"127.0.0.1:0\"\n\"bootstrap.servers\" = \"127.0.0.1:1\"\n\"group.id\" = \"g\"\n",
    )
    .expect("write config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_mooring-sidecar"))
        .arg("--config")
        .arg(&config)
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mooring-sidecar");
    // Wait until it listens (it says so on stderr), then send SIGTERM.
    let mut stderr = child.stderr.take().expect("stderr");
    let mut seen = String::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !seen.contains("listening on") {
        let mut buf = [0u8; 256];
        let n = std::io::Read::read(&mut stderr, &mut buf).expect("read stderr");
        assert!(
            n > 0 && Instant::now() < deadline,
            "sidecar never listened: {seen}"
        );
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill -TERM");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(exit) = child.try_wait().expect("wait") {
            break exit;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("mooring-sidecar still runs 10 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = std::fs::remove_dir_all(&dir);
    assert!(exit.success(), "exit status after SIGTERM: {exit}");
}
