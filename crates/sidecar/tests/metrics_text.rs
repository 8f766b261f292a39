//! `GET /metrics`' per-partition lag families, written from the lag table rather than through
//! the registry: the whole scrape parses (`promtool check metrics` and the checks below), each
//! family's `# HELP`/`# TYPE` appears once, exactly the table's series appear with its values and
//! escaped labels, and a partition the broker watch stops watching loses its series.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mooring_sidecar::state::PartitionLag;
use mooring_sidecar::{App, SidecarConfig};
use mooring_telemetry_schema::TopicPartition;
use mooring_testkit::{unique, Cluster};

const RECORDS: &str = "mooring_partition_lag_records";
const SECONDS: &str = "mooring_partition_lag_seconds";

/// (family, topic, partition) → the sample's text value.
type Series = BTreeMap<(String, String, i32), String>;

/// Parses a label set `{a="x",b="y"}` (escapes `\\`, `\"`, `\n`), returning the pairs and the
/// rest of the line.
fn labels(s: &str) -> (Vec<(String, String)>, &str) {
    let mut pairs = Vec::new();
    let Some(mut rest) = s.strip_prefix('{') else {
        return (pairs, s);
    };
    loop {
        if let Some(r) = rest.strip_prefix('}') {
            return (pairs, r);
        }
        rest = rest.strip_prefix(',').unwrap_or(rest);
        let eq = rest.find("=\"").expect("label name then =\"");
        let name = rest[..eq].to_string();
        let mut value = String::new();
        let mut chars = rest[eq + 2..].char_indices();
        let end = loop {
            let (i, c) = chars.next().expect("unterminated label value");
            match c {
                '\\' => match chars.next().expect("escape at the end").1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    other => panic!("bad escape \\{other} in {s}"),
                },
                '"' => break eq + 2 + i + 1,
                c => value.push(c),
            }
        };
        pairs.push((name, value));
        rest = &rest[end..];
    }
}

/// The lag series of a scrape, after checking the whole text's shape: every family's `# HELP`
/// and `# TYPE` once, before its samples, and a family's samples together.
fn lag_series(text: &str) -> Series {
    let mut helped = Vec::<String>::new();
    let mut typed = Vec::<String>::new();
    let mut seen_families = Vec::<String>::new();
    let mut series = Series::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let name = rest.split(' ').next().expect("a name").to_string();
            assert!(!helped.contains(&name), "second HELP for {name}");
            helped.push(name);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("name and type");
            assert!(!typed.contains(&name.to_string()), "second TYPE for {name}");
            if name.starts_with("mooring_partition_lag_") {
                assert_eq!(kind, "gauge");
            }
            typed.push(name.to_string());
            continue;
        }
        assert!(!line.starts_with('#'), "unexpected comment {line}");
        let name_end = line.find(['{', ' ']).expect("a sample line");
        let name = &line[..name_end];
        let family = typed.last().expect("a TYPE before samples");
        assert!(
            name.starts_with(family.as_str()),
            "{name} outside its family {family}"
        );
        if seen_families.last() != Some(family) {
            assert!(!seen_families.contains(family), "{family}'s samples split");
            seen_families.push(family.clone());
        }
        let (pairs, rest) = labels(&line[name_end..]);
        let value = rest.strip_prefix(' ').expect("a space before the value");
        assert!(
            value == "NaN" || value == "+Inf" || value == "-Inf" || value.parse::<f64>().is_ok(),
            "value {value:?} in {line}"
        );
        if name == RECORDS || name == SECONDS {
            let names: Vec<&str> = pairs.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["partition", "topic"], "{line}");
            let partition = pairs[0].1.parse().expect("a partition number");
            let key = (name.to_string(), pairs[1].1.clone(), partition);
            assert!(
                series.insert(key, value.to_string()).is_none(),
                "duplicate {line}"
            );
        }
    }
    assert_eq!(helped, typed, "a HELP and a TYPE per family, in order");
    series
}

/// `promtool check metrics` on the text: no parsing error (exit status 1); lint remarks (status
/// 3) are allowed, but none about the lag families.
fn promtool(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package, /usr/bin/promtool)");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write to promtool");
    let out = child.wait_with_output().expect("promtool output");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "promtool: {}: {said}",
        out.status
    );
    assert!(!said.contains("error"), "promtool: {said}");
    assert!(!said.contains("mooring_partition_lag"), "promtool: {said}");
}

fn lag(records: i64, seconds: f64) -> PartitionLag {
    PartitionLag {
        committed: Some(0),
        end: Some(records),
        lag_records: records,
        lag_seconds: seconds,
        owner: None,
        start_offset: None,
    }
}

fn key(topic: &str, partition: i32) -> TopicPartition {
    TopicPartition {
        topic: topic.to_string(),
        partition,
    }
}

fn expected(rows: &[(&str, i32, &str, &str)]) -> Series {
    rows.iter()
        .flat_map(|&(topic, p, records, seconds)| {
            [
                (
                    (RECORDS.to_string(), topic.to_string(), p),
                    records.to_string(),
                ),
                (
                    (SECONDS.to_string(), topic.to_string(), p),
                    seconds.to_string(),
                ),
            ]
        })
        .collect()
}

#[test]
fn a_scrape_holds_exactly_the_tables_series_and_parses() {
    let app = App::new(SidecarConfig::from_toml("").expect("default config"));
    // Nothing watched yet: no lag family at all (as an empty GaugeVec was not exported).
    let empty = app.scrape();
    promtool(&empty);
    assert!(lag_series(&empty).is_empty());
    assert!(!empty.contains("mooring_partition_lag"), "{empty}");

    let odd = "odd\"topic\\with\nnewline";
    {
        let mut state = app.state();
        state.lag.insert(key("orders", 0), lag(0, 0.0));
        state.lag.insert(key("orders", 1), lag(1500, 12.25));
        state.lag.insert(key("orders", 10), lag(3, 0.001));
        state
            .lag
            .insert(key("orders.v2_x-y", 7), lag(i64::from(i32::MAX), 1e21));
        state.lag.insert(key(odd, 2), lag(9, f64::INFINITY));
        state.lag.insert(key("nan", 0), lag(1, f64::NAN));
    }
    let text = app.scrape();
    // The registry's families are still there, and the lag ones come after them.
    assert!(text.contains("# TYPE mooring_assigned_partitions gauge\n"));
    assert!(
        text.find("# TYPE mooring_rebalances_total")
            < text.find("# TYPE mooring_partition_lag_records")
    );
    // The escapes, literally.
    assert!(text.contains(
        "mooring_partition_lag_records{partition=\"2\",topic=\"odd\\\"topic\\\\with\\nnewline\"} 9\n"
    ));
    assert_eq!(
        text.matches("# HELP mooring_partition_lag_records ")
            .count(),
        1
    );
    assert_eq!(
        text.matches("# TYPE mooring_partition_lag_seconds gauge\n")
            .count(),
        1
    );
    promtool(&text);
    assert_eq!(
        lag_series(&text),
        expected(&[
            ("orders", 0, "0", "0"),
            ("orders", 1, "1500", "12.25"),
            ("orders", 10, "3", "0.001"),
            ("orders.v2_x-y", 7, "2147483647", "1000000000000000000000"),
            (odd, 2, "9", "+Inf"),
            ("nan", 0, "1", "NaN"),
        ])
    );

    // A partition no longer in the table: its two series go, the others stay.
    app.state().lag.remove(&key("orders", 1));
    let text = app.scrape();
    promtool(&text);
    let series = lag_series(&text);
    assert_eq!(series.len(), 10);
    assert!(!series.keys().any(|(_, t, p)| t == "orders" && *p == 1));
    assert!(!text.contains("partition=\"1\",topic=\"orders\""), "{text}");
}

/// Polls the scrape until `done` holds for its lag series (or panics after `timeout`).
async fn until(app: &App, timeout: Duration, what: &str, done: impl Fn(&Series) -> bool) -> Series {
    let start = Instant::now();
    loop {
        let text = app.scrape();
        let series = lag_series(&text);
        if done(&series) {
            promtool(&text);
            return series;
        }
        assert!(
            start.elapsed() < timeout,
            "{what}: last scrape's lag series {series:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_broker_watch_fills_the_series_and_drops_an_unwatched_partitions() {
    let cluster = Cluster::shared();
    let topic = unique("metrics-text");
    let group = unique("metrics-text-group");
    cluster.create_topic(&topic, 3);
    cluster.produce_perf(&topic, 60, 10);
    let ends = cluster.end_offsets(&topic);
    assert_eq!(ends.len(), 3);
    // Committed offsets (the earliest) on all three partitions, no member.
    cluster.tool_ok(
        "ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--reset-offsets",
            "--group",
            &group,
            "--topic",
            &topic,
            "--to-earliest",
            "--execute",
        ],
    );
    let config = SidecarConfig::from_toml(&format!(
        "\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{group}\"\n\"watch.interval.ms\" = 200\n",
        cluster.bootstrap()
    ))
    .expect("config");
    let app = Arc::new(App::new(config));
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let watch = tokio::spawn(mooring_sidecar::watcher::run(Arc::clone(&app), stopped));

    let mine = |s: &Series| s.keys().filter(|(_, t, _)| *t == topic).count();
    let series = until(
        &app,
        Duration::from_secs(30),
        "three partitions' series",
        |s| mine(s) == 6,
    )
    .await;
    for (&p, &end) in &ends {
        assert_eq!(
            series.get(&(RECORDS.to_string(), topic.clone(), p)),
            Some(&end.to_string()),
            "partition {p}: lag = end {end} - committed 0"
        );
        let seconds = &series[&(SECONDS.to_string(), topic.clone(), p)];
        assert!(seconds.parse::<f64>().expect("a number") >= 0.0);
    }
    // `/debug/partitions` and the lag alerts read the same table.
    assert_eq!(
        app.state()
            .lag
            .iter()
            .filter(|(k, _)| k.topic == topic)
            .map(|(k, l)| (k.partition, l.lag_records))
            .collect::<Vec<_>>(),
        ends.iter().map(|(&p, &e)| (p, e)).collect::<Vec<_>>()
    );

    // TopicPartition 2's committed offset deleted: the watch no longer looks at it.
    cluster.tool_ok(
        "ConsumerGroupCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--delete-offsets",
            "--group",
            &group,
            "--topic",
            &format!("{topic}:2"),
        ],
    );
    app.watch_now.notify_one();
    let series = until(
        &app,
        Duration::from_secs(30),
        "partition 2's series gone",
        |s| mine(s) == 4,
    )
    .await;
    assert!(!series.keys().any(|(_, t, p)| *t == topic && *p == 2));
    for p in [0, 1] {
        assert!(series.contains_key(&(RECORDS.to_string(), topic.clone(), p)));
        assert!(series.contains_key(&(SECONDS.to_string(), topic.clone(), p)));
    }
    assert!(!app.state().lag.contains_key(&key(&topic, 2)));

    stop.send(true).expect("the watch runs");
    watch.await.expect("the watch ends");
    cluster.delete_topic(&topic);
}
