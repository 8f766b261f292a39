//! Compiling and running `tests/assignor-check/AssignorCheck.java` against the kafka-clients jar
//! `scripts/kafka fetch` keeps under `$MOORING_CACHE/kafka-<version>/libs` (the release of
//! `KAFKA_TOOLS_VERSION`, 4.4.0 unless set, as `scripts/kafka` picks it). Anything missing fails
//! the test with what to run.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const FETCH: &str = "fetch the jars with `scripts/kafka fetch` (scripts/setup and scripts/test do)";

/// `AssignorCheck`'s output for `input` (one JSON line per group), parsed line by line.
pub fn run(input: &str) -> Vec<serde_json::Value> {
    let (clients, classpath) = jars();
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/assignor-check/AssignorCheck.java");
    let classes =
        std::env::temp_dir().join(format!("mooring-assignor-check-{}", std::process::id()));
    std::fs::create_dir_all(&classes).expect("temporary directory");
    let compiled = Command::new("javac")
        .arg("-nowarn")
        .arg("-cp")
        .arg(&clients)
        .arg("-d")
        .arg(&classes)
        .arg(&source)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "could not run javac ({e}): the Java cross-check needs a JDK 17+; install it with \
                 `apt-get install -y openjdk-17-jdk-headless` (scripts/setup does)"
            )
        });
    assert!(
        compiled.status.success(),
        "javac {} failed:\n{}",
        source.display(),
        String::from_utf8_lossy(&compiled.stderr)
    );

    let path = std::env::join_paths(std::iter::once(classes.clone()).chain(classpath))
        .expect("a classpath");
    let mut child = Command::new("java")
        .args([
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-cp",
        ])
        .arg(&path)
        .arg("AssignorCheck")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("could not run java ({e}): the Java cross-check needs Java 17+")
        });
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = {
        let input = input.to_owned();
        std::thread::spawn(move || stdin.write_all(input.as_bytes()))
    };
    let out = child.wait_with_output().expect("java ran");
    writer
        .join()
        .expect("writer thread")
        .expect("input written");
    let _ = std::fs::remove_dir_all(&classes);
    assert!(
        out.status.success(),
        "AssignorCheck failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8 output")
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("AssignorCheck printed {line:?}, not JSON: {e}"))
        })
        .collect()
}

/// The kafka-clients jar, and the classpath to run with: it and slf4j-api (which kafka-clients
/// logs through; without a binding nothing is logged, so stdout carries only the answers).
fn jars() -> (PathBuf, Vec<PathBuf>) {
    let version = std::env::var("KAFKA_TOOLS_VERSION").unwrap_or_else(|_| "4.4.0".into());
    let libs = cache_dir().join(format!("kafka-{version}")).join("libs");
    let clients = libs.join(format!("kafka-clients-{version}.jar"));
    assert!(
        clients.is_file(),
        "kafka-clients {version} is not at {}: {FETCH}",
        clients.display()
    );
    let slf4j = std::fs::read_dir(&libs)
        .unwrap_or_else(|e| panic!("could not read {}: {e}", libs.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| is_slf4j_api(p))
        .unwrap_or_else(|| panic!("no slf4j-api jar in {}: {FETCH}", libs.display()));
    (clients.clone(), vec![clients, slf4j])
}

fn is_slf4j_api(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("slf4j-api-") && n.ends_with(".jar"))
}

/// `$MOORING_CACHE`, else `~/.cache/mooring`, as `scripts/kafka` has it.
fn cache_dir() -> PathBuf {
    std::env::var_os("MOORING_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mooring")))
        .expect("MOORING_CACHE or HOME is set")
}
