//! What a handler's `ConsumerRecord` says of a record written by another client through the real
//! broker: its timestamp and timestamp type (create time from the producer, log-append time from
//! the broker when the topic says so), its headers in order, and its leader epoch.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{consumer, stop, wait_until};
use mooring_consumer::processing::{ConsumerRecord, TimestampType};
use mooring_testkit::{unique, unix_millis, Cluster};

/// confluent-kafka producer: `[[timestamp_ms, value, [[header key, header value], ...]], ...]`,
/// one record at a time to partition 0.
const PRODUCER: &str = r#"
import json, sys
from confluent_kafka import Producer
bootstrap, topic, spec = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
for ts, value, headers in spec:
    p.produce(topic, value=value.encode(), partition=0, timestamp=ts,
              headers=[(k, v.encode()) for k, v in headers])
    p.flush(30)
"#;

/// (offset, timestamp, timestamp type, leader epoch, headers, last "k" header).
type Seen = (
    i64,
    i64,
    TimestampType,
    Option<i32>,
    Vec<(String, Option<String>)>,
    Option<String>,
);

fn facts(r: &ConsumerRecord) -> Seen {
    let text = |v: Option<&bytes::Bytes>| v.map(|v| String::from_utf8_lossy(v).into_owned());
    (
        r.offset(),
        r.timestamp(),
        r.timestamp_type(),
        r.leader_epoch(),
        r.headers()
            .iter()
            .map(|h| (h.key.as_str().to_owned(), text(h.value.as_ref())))
            .collect(),
        r.header("k").and_then(|h| text(h.value.as_ref())),
    )
}

/// Consumes `count` records of `topic` (one partition) and returns what the handler saw.
async fn consume(cluster: &Cluster, topic: &str, count: usize) -> Vec<Seen> {
    let c = consumer(cluster, &unique("fields-g"), &[]);
    c.subscribe([topic.to_owned()]).unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let handler = move |r: ConsumerRecord| {
        let log = Arc::clone(&log);
        async move {
            log.lock().unwrap().push(facts(&r));
            Ok::<(), String>(())
        }
    };
    let consumer = c.clone();
    let run = tokio::spawn(async move { consumer.run(handler).await });
    wait_until("every record handled", Duration::from_secs(30), || {
        seen.lock().unwrap().len() >= count
    })
    .await;
    stop(&c, run).await.unwrap();
    let mut seen = seen.lock().unwrap().clone();
    seen.sort_by_key(|s| s.0);
    seen
}

fn h(k: &str, v: &str) -> (String, Option<String>) {
    (k.to_owned(), Some(v.to_owned()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn timestamps_headers_and_leader_epoch_as_written() {
    let cluster = Cluster::shared();
    let created = unique("fields-create");
    cluster.create_topic(&created, 1);
    let appended = unique("fields-append");
    cluster.tool_ok(
        "TopicCommand",
        &[
            "--bootstrap-server",
            cluster.bootstrap(),
            "--create",
            "--topic",
            &appended,
            "--partitions",
            "1",
            "--config",
            "message.timestamp.type=LogAppendTime",
        ],
    );
    let spec = serde_json::json!([
        [
            1_600_000_000_000i64,
            "a",
            [["trace", "t-1"], ["k", "1"], ["k", "2"]]
        ],
        [1_600_000_000_007i64, "b", []],
    ]);
    let before = unix_millis();
    common::produce_with_python(&cluster, PRODUCER, &created, &spec);
    common::produce_with_python(&cluster, PRODUCER, &appended, &spec);
    let after = unix_millis();

    let headers = vec![h("trace", "t-1"), h("k", "1"), h("k", "2")];
    let create = TimestampType::CreateTime;
    let seen = consume(&cluster, &created, 2).await;
    println!("create time: {seen:?}");
    assert_eq!(
        seen,
        [
            (
                0,
                1_600_000_000_000,
                create,
                Some(0),
                headers.clone(),
                Some("2".into())
            ),
            (1, 1_600_000_000_007, create, Some(0), vec![], None),
        ]
    );

    let seen = consume(&cluster, &appended, 2).await;
    println!("log-append time (produced between {before} and {after}): {seen:?}");
    assert_eq!(seen.len(), 2);
    for (i, (offset, timestamp, kind, epoch, got, _)) in seen.iter().enumerate() {
        assert_eq!(*offset, i as i64);
        assert_eq!(*kind, TimestampType::LogAppendTime);
        assert!(
            (before..=after).contains(timestamp),
            "the broker's append time, not the producer's: {timestamp}"
        );
        assert_eq!(*epoch, Some(0));
        assert_eq!(*got, if i == 0 { headers.clone() } else { vec![] });
    }
}
