//! A shutdown during a broker outage, tried as a user would: `verifiable-consumer` consumes from a
//! one-node cluster of its own, the broker is stopped, the consumer gets SIGTERM. It must exit
//! within its close timeout (draining, committing and closing each get what is left of it, and a
//! commit the broker cannot take is given up and reported), print `shutdown_complete`, and once
//! the broker is back a new member of the group must resume from the committed offsets with
//! nothing lost against what the producer had acknowledged.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mooring_testkit::{kafka_script, unique, unix_millis, wait_blocking, Cluster};
use serde_json::Value;

const PARTITIONS: u32 = 3;
const RECORDS: u64 = 3000;
const CLOSE_TIMEOUT: Duration = Duration::from_secs(10);
/// Process start-up and tear-down on a loaded machine, on top of the close timeout.
const EXIT_MARGIN: Duration = Duration::from_secs(5);

/// One `verifiable-consumer` process and the JSON events it printed.
struct Member {
    child: Child,
    events: Arc<Mutex<Vec<Value>>>,
    stderr: Arc<Mutex<String>>,
    /// Ends with the process's stderr.
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

impl Member {
    fn start(cluster: &Cluster, topic: &str, group: &str, extra: &[&str]) -> Member {
        let mut child = Command::new(env!("CARGO_BIN_EXE_verifiable-consumer"))
            .args([
                "--bootstrap-server",
                cluster.bootstrap(),
                "--topic",
                topic,
                "--group-id",
                group,
                "--close-timeout",
                &CLOSE_TIMEOUT.as_millis().to_string(),
                "--session-timeout",
                "10000",
            ])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let events: Arc<Mutex<Vec<Value>>> = Arc::default();
        let stdout = child.stdout.take().unwrap();
        let out = Arc::clone(&events);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(event) = serde_json::from_str::<Value>(&line) {
                    out.lock().unwrap().push(event);
                }
            }
        });
        let stderr: Arc<Mutex<String>> = Arc::default();
        let mut err = child.stderr.take().unwrap();
        let text = Arc::clone(&stderr);
        let stderr_reader = std::thread::spawn(move || {
            let mut all = String::new();
            let _ = err.read_to_string(&mut all);
            text.lock().unwrap().push_str(&all);
        });
        Member {
            child,
            events,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    fn events(&self, name: &str) -> Vec<Value> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["name"] == name)
            .cloned()
            .collect()
    }

    /// Records consumed so far.
    fn consumed(&self) -> u64 {
        self.events("records_consumed")
            .iter()
            .map(|e| e["count"].as_u64().unwrap_or(0))
            .sum()
    }

    /// Every (partition, offset) consumed.
    fn offsets(&self) -> Vec<(i32, i64)> {
        let mut all = Vec::new();
        for event in self.events("records_consumed") {
            for batch in event["partitions"].as_array().into_iter().flatten() {
                let p = batch["partition"].as_i64().unwrap() as i32;
                let (min, max) = (
                    batch["minOffset"].as_i64().unwrap(),
                    batch["maxOffset"].as_i64().unwrap(),
                );
                all.extend((min..=max).map(|o| (p, o)));
            }
        }
        all
    }

    /// Per partition, the first offset consumed.
    fn first_offsets(&self) -> BTreeMap<i32, i64> {
        let mut first = BTreeMap::new();
        for (p, o) in self.offsets() {
            first.entry(p).or_insert(o);
        }
        first
    }

    /// Per partition, the last offset reported committed with success.
    fn committed(&self) -> BTreeMap<i32, i64> {
        let mut last = BTreeMap::new();
        for event in self.events("offsets_committed") {
            if event["success"] != true {
                continue;
            }
            for c in event["offsets"].as_array().into_iter().flatten() {
                last.insert(
                    c["partition"].as_i64().unwrap() as i32,
                    c["offset"].as_i64().unwrap(),
                );
            }
        }
        last
    }

    fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the exit up to `limit`; `None` (and the process killed) if it did not exit.
    fn wait_exit(&mut self, limit: Duration) -> Option<(Duration, std::process::ExitStatus)> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some((started.elapsed(), status));
            }
            if started.elapsed() > limit {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The names of the events it printed, in order.
    fn names(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|e| e["name"].as_str().map(str::to_owned))
            .filter(|n| n != "records_consumed" && n != "offsets_committed")
            .collect()
    }

    /// The last lines of its stderr, once the process has ended, without the connection pool's
    /// (a broker outage repeats its warning every second).
    fn stderr(&mut self) -> String {
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        let all = self.stderr.lock().unwrap().clone();
        let lines: Vec<&str> = all.lines().filter(|l| !l.contains("conn::pool")).collect();
        lines[lines.len().saturating_sub(30)..].join("\n")
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Stops every node of `cluster` (a clean broker shutdown, as an operator's stop).
fn stop_broker(cluster: &Cluster) {
    let out = Command::new(kafka_script())
        .args(["--cluster", cluster.name(), "stop"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/kafka stop: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigterm_while_the_broker_is_down_exits_within_the_close_timeout_and_loses_nothing() {
    let cluster = Cluster::dedicated("lc-outage", 1, 21000);
    let topic = unique("lc-outage");
    let group = unique("lc-outage-g");
    cluster.create_topic(&topic, PARTITIONS);
    let acked = cluster.produce_verifiable(&topic, RECORDS, 0, &[]);
    assert_eq!(acked, RECORDS);

    // Slow reports (100 records per 200 ms): the broker goes away mid-way.
    let mut first = Member::start(
        &cluster,
        &topic,
        &group,
        &["--processing-delay-ms", "200", "--concurrency", "20"],
    );
    wait_blocking(
        "the first member consumed and committed",
        Duration::from_secs(60),
        || first.consumed() >= 500 && !first.committed().is_empty(),
    );
    stop_broker(&cluster);
    let consumed_before = first.consumed();

    let sigterm_at = unix_millis();
    first.sigterm();
    let exit = first.wait_exit(Duration::from_secs(60));
    let stderr = first.stderr();
    let Some((took, status)) = exit else {
        panic!(
            "verifiable-consumer still running 60 s after SIGTERM with the broker down \
             (close timeout {CLOSE_TIMEOUT:?}); its events {:?}; its stderr:\n{stderr}",
            first.names()
        );
    };
    println!("exited {took:?} after SIGTERM ({status}); stderr:\n{stderr}");
    assert!(
        took <= CLOSE_TIMEOUT + EXIT_MARGIN,
        "exit {took:?} after SIGTERM, close timeout {CLOSE_TIMEOUT:?}"
    );
    let complete = first.events("shutdown_complete");
    assert_eq!(complete.len(), 1, "shutdown_complete printed");
    println!(
        "shutdown_complete {} ms after SIGTERM",
        complete[0]["timestamp"].as_i64().unwrap() - sigterm_at
    );
    assert!(first.consumed() >= consumed_before);
    let committed_first = first.committed();
    let position_first: BTreeMap<i32, i64> = {
        let mut position = BTreeMap::new();
        for (p, o) in first.offsets() {
            let next = position.entry(p).or_insert(0);
            *next = (*next).max(o + 1);
        }
        position
    };

    cluster.restart(1);
    let committed = cluster.committed_offsets(&group, &topic);
    println!(
        "committed after the outage {committed:?}; the first member reported {committed_first:?}, \
         consumed up to {position_first:?}"
    );
    for (p, offset) in &committed_first {
        let on_broker = committed.get(p).copied().flatten();
        assert!(
            on_broker.is_some_and(|c| c >= *offset && c <= position_first[p]),
            "partition {p}: committed {on_broker:?}, reported {offset}, consumed up to {}",
            position_first[p]
        );
    }

    // A new member resumes from the committed offsets, and the two together miss nothing.
    let mut second = Member::start(&cluster, &topic, &group, &[]);
    let ends = cluster.end_offsets(&topic);
    assert_eq!(ends.values().sum::<i64>() as u64, acked);
    let missing = |first: &Member, second: &Member| -> Vec<(i32, i64)> {
        let mut seen = first.offsets();
        seen.extend(second.offsets());
        seen.sort_unstable();
        seen.dedup();
        ends.iter()
            .flat_map(|(p, end)| (0..*end).map(move |o| (*p, o)))
            .filter(|po| seen.binary_search(po).is_err())
            .collect()
    };
    wait_blocking(
        "every acknowledged record consumed by one member or the other",
        Duration::from_secs(90),
        || missing(&first, &second).is_empty(),
    );
    for (p, offset) in second.first_offsets() {
        let resumed_from = committed.get(&p).copied().flatten().unwrap_or(0);
        assert_eq!(
            offset, resumed_from,
            "partition {p}: the new member starts at the committed offset"
        );
    }
    second.sigterm();
    let (took, _) = second.wait_exit(Duration::from_secs(30)).expect("exits");
    println!("second member exited {took:?} after SIGTERM");
    let lost = missing(&first, &second).len();
    assert_eq!(lost, 0, "lost against {acked} acknowledged");
}
