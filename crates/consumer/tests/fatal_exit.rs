//! The binaries end on a fatal error: `verifiable-consumer` and `orders-demo`, given a wrong SASL
//! password against the shared real broker, exit non-zero within a few seconds, with the error
//! on stderr in one line naming broker, mechanism and principal (and one error log line), and
//! the password nowhere in their output.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use mooring_testkit::{unique, Cluster};

const WRONG_PASSWORD: &str = "not-alices-secret-exit-33b9";
/// How long a binary may take to exit on the failure (its JVM-free start included).
const PROMPTLY: Duration = Duration::from_secs(10);

/// Runs `command` to its end; kills it (and fails) if it has not exited within 30 s.
fn run_bounded(mut command: Command) -> (Output, Duration) {
    let started = Instant::now();
    let mut child = command
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = started + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after 30 s (a retry loop?); stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let took = started.elapsed();
    (child.wait_with_output().unwrap(), took)
}

/// Non-zero, promptly, the error in one stderr line starting with `prefix`, one error log line,
/// no password anywhere. Returns the error line.
fn fatal_exit(output: &Output, took: Duration, prefix: &str) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "exit status {}", output.status);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(took < PROMPTLY, "exited after {took:?}:\n{stderr}");
    let said: Vec<&str> = stderr.lines().filter(|l| l.starts_with(prefix)).collect();
    assert_eq!(said.len(), 1, "the error once on stderr:\n{stderr}");
    let errors = stderr.lines().filter(|l| l.contains(" ERROR ")).count();
    assert_eq!(errors, 1, "one error log line:\n{stderr}");
    assert!(
        !stdout.contains(WRONG_PASSWORD) && !stderr.contains(WRONG_PASSWORD),
        "the password is printed"
    );
    let line = said[0].to_string();
    for expected in ["SCRAM-SHA-512", "User:alice", "SASL_AUTHENTICATION_FAILED"] {
        assert!(line.contains(expected), "{line} does not name {expected}");
    }
    line
}

#[test]
fn verifiable_consumer_exits_non_zero_on_a_wrong_password() {
    let cluster = Cluster::shared();
    let topic = unique("exit-vc");
    cluster.create_topic(&topic, 1);
    let dir = std::env::temp_dir().join(unique("exit-vc"));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("consumer.properties");
    std::fs::write(
        &config,
        format!(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n\
             sasl.username={}\nsasl.password={WRONG_PASSWORD}\n",
            cluster.var("MOORING_SASL_USER")
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_verifiable-consumer"));
    command
        .args(["--bootstrap-server", cluster.var("MOORING_BOOTSTRAP_SASL")])
        .args(["--topic", &topic, "--group-id", &unique("exit-vc-g")])
        .arg("--consumer.config")
        .arg(&config);
    let (output, took) = run_bounded(command);
    let _ = std::fs::remove_dir_all(&dir);
    let line = fatal_exit(
        &output,
        took,
        "verifiable-consumer: stopped on a fatal error: ",
    );
    assert!(
        line.contains(cluster.var("MOORING_BOOTSTRAP_SASL")),
        "{line}"
    );
    // Java's tool's last events, the error in shutdown_complete.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let complete = stdout
        .lines()
        .find(|l| l.contains("\"name\":\"shutdown_complete\""))
        .unwrap_or_else(|| panic!("no shutdown_complete:\n{stdout}"));
    assert!(
        complete.contains("SASL_AUTHENTICATION_FAILED"),
        "{complete}"
    );
}

#[test]
fn orders_demo_exits_non_zero_on_a_wrong_password() {
    let cluster = Cluster::shared();
    let topic = unique("exit-demo");
    cluster.create_topic(&topic, 1);
    let dir = std::env::temp_dir().join(unique("exit-demo"));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("orders-demo.toml");
    std::fs::write(
        &config,
        format!(
            "\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{}\"\n\
             \"security.protocol\" = \"SASL_PLAINTEXT\"\n\"sasl.mechanism\" = \"SCRAM-SHA-512\"\n\
             \"sasl.username\" = \"{}\"\n\"sasl.password\" = \"{WRONG_PASSWORD}\"\n\
             [demo]\ntopic = \"{topic}\"\n",
            cluster.var("MOORING_BOOTSTRAP_SASL"),
            unique("exit-demo-g"),
            cluster.var("MOORING_SASL_USER"),
        ),
    )
    .unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_orders-demo"));
    command.arg("--config").arg(&config);
    // No MOORING__* override from the test's own environment.
    for (key, _) in std::env::vars().filter(|(k, _)| k.starts_with("MOORING__")) {
        command.env_remove(key);
    }
    let (output, took) = run_bounded(command);
    let _ = std::fs::remove_dir_all(&dir);
    fatal_exit(&output, took, "orders-demo: stopped on a fatal error: ");
}
