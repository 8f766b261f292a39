//! The event lines themselves: ours and Kafka's `VerifiableConsumer` consume the same records and
//! are compared line shape by line shape, under each group protocol.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mooring_testkit::{kafka_script, unique, Cluster};
use serde_json::Value;

use crate::driver::{kill, Protocol};

/// The JSON shape of a value: objects by key, arrays by their first element, leaves by type.
fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            Value::Object(map.iter().map(|(k, v)| (k.clone(), shape(v))).collect())
        }
        Value::Array(items) => Value::Array(items.first().map(shape).into_iter().collect()),
        Value::String(_) => Value::from("string"),
        Value::Number(_) => Value::from("number"),
        Value::Bool(_) => Value::from("bool"),
        Value::Null => Value::from("null"),
    }
}

/// Whether `ours` has every field of `java`, with the same shape (extra fields allowed).
fn covers(ours: &Value, java: &Value) -> bool {
    match (ours, java) {
        (Value::Object(o), Value::Object(j)) => j
            .iter()
            .all(|(k, jv)| o.get(k).is_some_and(|ov| covers(ov, jv))),
        (Value::Array(o), Value::Array(j)) => match (o.first(), j.first()) {
            (Some(ov), Some(jv)) => covers(ov, jv),
            (_, None) => true,
            (None, Some(_)) => false,
        },
        (o, j) => o == j,
    }
}

/// Runs a consumer to `--max-messages` and returns its events by name (first of each).
fn run_to_max(command: &mut Command) -> BTreeMap<String, Value> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut events = BTreeMap::new();
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str::<Value>(&line) {
                let name = event["name"].as_str().unwrap_or_default().to_owned();
                events.entry(name).or_insert(event);
            }
        }
        events
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            kill(&mut child);
            panic!("the consumer did not stop at --max-messages");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status}");
    reader.join().unwrap()
}

/// Ours and Kafka's tool read the same records to `--max-messages` under `protocol`: every
/// event Java prints, ours prints too, with all of Java's fields in the same shapes.
fn event_lines_as_java_prints_them(protocol: Protocol) {
    let cluster = Cluster::shared();
    if protocol == Protocol::Consumer {
        cluster.require_consumer_protocol();
    }
    let topic = unique("vc-shape");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, 40, 4, &[]), 40);
    let args = |group: &str| -> Vec<String> {
        [
            "--bootstrap-server",
            cluster.bootstrap(),
            "--topic",
            &topic,
            "--group-id",
            group,
            "--max-messages",
            "25",
            "--verbose",
        ]
        .iter()
        .chain(match protocol {
            Protocol::Classic => &["--session-timeout", "6000"],
            Protocol::Consumer => &["--group-protocol", "consumer"],
        })
        .map(|s| s.to_string())
        .collect()
    };
    let java = run_to_max(
        Command::new(kafka_script())
            .args(["--cluster", cluster.name(), "tool", "VerifiableConsumer"])
            .args(args(&unique("vc-shape-java"))),
    );
    let ours = run_to_max(
        Command::new(env!("CARGO_BIN_EXE_verifiable-consumer"))
            .args(args(&unique("vc-shape-ours"))),
    );
    for name in [
        "startup_complete",
        "partitions_assigned",
        "record_data",
        "records_consumed",
        "offsets_committed",
        "partitions_revoked",
        "shutdown_complete",
    ] {
        assert!(java.contains_key(name), "Java printed no {name}: {java:?}");
    }
    for (name, event) in &java {
        let theirs = shape(event);
        let mine = ours
            .get(name)
            .map(shape)
            .unwrap_or_else(|| panic!("ours printed no {name}: {ours:?}"));
        assert!(
            covers(&mine, &theirs),
            "{name}: ours {mine} vs Java {theirs}"
        );
    }
}

#[test]
fn event_lines_have_javas_names_fields_and_shapes() {
    event_lines_as_java_prints_them(Protocol::Classic);
}

/// The same under the consumer protocol, both tools `--group-protocol consumer`.
#[test]
fn event_lines_have_javas_names_fields_and_shapes_under_the_consumer_protocol() {
    event_lines_as_java_prints_them(Protocol::Consumer);
}
