//! The event lines themselves: ours and Kafka's `VerifiableShareConsumer` read the same records
//! (each in a share group of its own) and their lines are compared: the same event names, the
//! same fields in the same order with values of the same types, the same records consumed and
//! acknowledged, and under `--ack-pattern` the same `ackTypeCounts`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mooring_testkit::{kafka_script, unique, Cluster};
use regex::Regex;
use serde_json::Value;

/// A line with its values blanked, its key order kept: strings `s`, numbers `0`, booleans `b`,
/// null `n`, a run of numbers in an array one `0`.
fn skeleton(line: &str) -> String {
    let strings = Regex::new(r#":"(?:[^"\\]|\\.)*""#).unwrap();
    let numbers = Regex::new(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?").unwrap();
    let bools = Regex::new(r":(?:true|false)").unwrap();
    let nulls = Regex::new(r":null").unwrap();
    let runs = Regex::new(r"\[0(?:,0)*\]").unwrap();
    let line = strings.replace_all(line, ":s");
    let line = bools.replace_all(&line, ":b");
    let line = nulls.replace_all(&line, ":n");
    let line = numbers.replace_all(&line, "0");
    runs.replace_all(&line, "[0]").into_owned()
}

/// One run's lines.
struct Lines {
    raw: Vec<String>,
}

impl Lines {
    fn events(&self) -> impl Iterator<Item = Value> + '_ {
        self.raw
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
    }

    fn names(&self) -> BTreeSet<String> {
        self.events()
            .map(|e| e["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Each event name's skeletons.
    fn skeletons(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let counts = Regex::new(r#""ackTypeCounts":\{[^}]*\}"#).unwrap();
        for line in &self.raw {
            let Ok(event) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let name = event["name"].as_str().unwrap_or_default().to_owned();
            // The offsets acknowledged together depend on timing; the counts' keys too.
            let mut skeleton = skeleton(line);
            if name == "offsets_acknowledged" {
                skeleton = counts
                    .replace_all(&skeleton, r#""ackTypeCounts":{..}"#)
                    .into_owned();
            }
            out.entry(name).or_default().insert(skeleton);
        }
        out
    }

    /// Every offset a line of `name` lists (success true for `offsets_acknowledged`).
    fn offsets(&self, name: &str) -> BTreeSet<i64> {
        self.events()
            .filter(|e| e["name"] == name && e["success"] != false)
            .flat_map(|e| {
                e["partitions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .flat_map(|p| p["offsets"].as_array().cloned().unwrap_or_default())
                    .filter_map(|o| o.as_i64())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// `ackTypeCounts` summed over the successful `offsets_acknowledged` lines.
    fn ack_type_counts(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for e in self
            .events()
            .filter(|e| e["name"] == "offsets_acknowledged")
        {
            if let Some(counts) = e["ackTypeCounts"].as_object() {
                for (k, v) in counts {
                    *out.entry(k.clone()).or_default() += v.as_u64().unwrap_or(0);
                }
            }
        }
        out
    }
}

fn spawn(command: &mut Command) -> Child {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits for a tool to stop at `--max-messages` and returns its lines.
fn lines_of(mut child: Child) -> Lines {
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<_>>()
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the tool did not stop at --max-messages");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status}");
    Lines {
        raw: reader.join().unwrap(),
    }
}

/// Both tools read 30 records of one partition, each in a new share group set to earliest by
/// `--offset-reset-strategy`: once verbose under `auto` to `--max-messages 30`, once `sync` with
/// `--ack-pattern accept,release,reject` until every delivery is answered. Every event name Java
/// prints, ours prints, with the same skeletons; the same records are consumed and
/// acknowledged, with the same `ackTypeCounts`.
#[test]
fn event_lines_are_javas() {
    let cluster = Cluster::shared();
    let topic = unique("vsc-lines");
    cluster.create_topic(&topic, 1);
    assert_eq!(cluster.produce_verifiable(&topic, 30, 0, &[]), 30);
    let args = |group: &str, extra: &[&str]| -> Vec<String> {
        [
            "--bootstrap-server",
            cluster.bootstrap(),
            "--topic",
            &topic,
            "--group-id",
            group,
            "--offset-reset-strategy",
            "earliest",
        ]
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
    };
    let java = |extra: &[&str]| {
        spawn(
            Command::new(kafka_script())
                .args([
                    "--cluster",
                    cluster.name(),
                    "tool",
                    "VerifiableShareConsumer",
                ])
                .args(args(&unique("vsc-lines-java"), extra)),
        )
    };
    let ours = |extra: &[&str]| {
        spawn(
            Command::new(env!("CARGO_BIN_EXE_verifiable-share-consumer"))
                .args(args(&unique("vsc-lines-ours"), extra)),
        )
    };
    let verbose: &[&str] = &["--verbose", "--max-messages", "30"];
    // Every delivery of every record until none is left: ten accepted, ten rejected, and ten
    // released at each of their five deliveries (the group's share.delivery.count.limit), then
    // archived.
    let pattern: &[&str] = &[
        "--max-messages",
        "70",
        "--acknowledgement-mode",
        "sync",
        "--ack-pattern",
        "accept,release,reject",
    ];
    let running = [java(verbose), ours(verbose), java(pattern), ours(pattern)];
    let [java_verbose, ours_verbose, java_pattern, ours_pattern] = running.map(lines_of);
    for (what, java, ours) in [
        ("verbose", &java_verbose, &ours_verbose),
        ("ack pattern", &java_pattern, &ours_pattern),
    ] {
        assert_eq!(
            ours.names(),
            java.names(),
            "{what}: event names\nJava: {:#?}\nours: {:#?}",
            java.raw,
            ours.raw
        );
        let (java_skeletons, our_skeletons) = (java.skeletons(), ours.skeletons());
        for (name, skeletons) in &java_skeletons {
            assert_eq!(
                our_skeletons.get(name),
                Some(skeletons),
                "{what}: {name} lines\nJava: {:#?}\nours: {:#?}",
                java.raw,
                ours.raw
            );
        }
        let all: BTreeSet<i64> = (0..30).collect();
        for name in ["records_consumed", "offsets_acknowledged"] {
            assert_eq!(java.offsets(name), all, "{what}: Java's {name}");
            assert_eq!(ours.offsets(name), all, "{what}: our {name}");
        }
    }
    assert!(
        java_verbose.names().contains("record_data")
            && java_verbose.names().contains("offset_reset_strategy_set"),
        "{:?}",
        java_verbose.raw
    );
    let expected = BTreeMap::from([
        ("ACCEPT".to_owned(), 10),
        ("REJECT".to_owned(), 10),
        ("RELEASE".to_owned(), 50),
    ]);
    assert_eq!(
        java_pattern.ack_type_counts(),
        expected,
        "{:#?}",
        java_pattern.raw
    );
    assert_eq!(
        ours_pattern.ack_type_counts(),
        expected,
        "{:#?}",
        ours_pattern.raw
    );
}
