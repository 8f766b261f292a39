//! `isolation.level` against the real broker, with transactions written by a real transactional
//! producer (librdkafka through PyPI `confluent-kafka`, from the peers' virtualenv that
//! `scripts/setup` makes): committed, aborted, committed. `read_committed` sees only the committed
//! records, `read_uncommitted` sees all data records; neither ever sees a control batch (the
//! transaction markers), and both positions end past the last marker.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::process::Command;
use std::time::Duration;

use common::{consumer, spawn_run, stop, wait_until, Seen};
use mooring_consumer::TopicPartition;
use mooring_testkit::{unique, Cluster};

const PRODUCER: &str = r#"
import sys
from confluent_kafka import Producer
bootstrap, topic = sys.argv[1], sys.argv[2]
p = Producer({"bootstrap.servers": bootstrap, "transactional.id": topic + "-tx"})
p.init_transactions(30)
def txn(values, commit):
    p.begin_transaction()
    for v in values:
        p.produce(topic, value=v.encode(), partition=0)
    p.flush(30)
    (p.commit_transaction if commit else p.abort_transaction)(30)
txn(["committed-%d" % i for i in range(10)], True)
txn(["aborted-%d" % i for i in range(10)], False)
txn(["committed-%d" % i for i in range(10, 20)], True)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn read_committed_skips_an_aborted_transaction() {
    let cluster = Cluster::shared();
    let topic = unique("txn");
    cluster.create_topic(&topic, 1);
    let out = Command::new(mooring_testkit::peer_python())
        .args(["-c", PRODUCER, cluster.bootstrap(), &topic])
        .output()
        .expect("run the transactional producer (scripts/setup makes its virtualenv)");
    assert!(
        out.status.success(),
        "transactional producer failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 30 data records and 3 markers.
    let end = cluster.end_offsets(&topic)[&0];
    assert_eq!(end, 33);
    let tp = TopicPartition::new(&topic, 0);

    let mut results = Vec::new();
    for (level, expected) in [("read_committed", 20), ("read_uncommitted", 30)] {
        let c = consumer(&cluster, &unique("txn-g"), &[("isolation.level", level)]);
        c.subscribe([topic.clone()]).unwrap();
        let seen = Seen::default();
        let run = spawn_run(&c, &seen, Duration::ZERO);
        wait_until(
            &format!("{level}: {expected} records and the position past the last marker"),
            Duration::from_secs(30),
            || seen.distinct() == expected && c.position(&tp) == Some(end),
        )
        .await;
        stop(&c, run).await.unwrap();
        let values = seen.values();
        println!(
            "{level}: {} records, duplicates = {}",
            values.len(),
            seen.duplicates()
        );
        assert_eq!(seen.duplicates(), 0);
        results.push(values);
    }
    let committed = &results[0];
    assert!(
        committed.iter().all(|v| v.starts_with("committed-")),
        "{committed:?}"
    );
    let mut want: Vec<String> = (0..20).map(|i| format!("committed-{i}")).collect();
    let mut got = committed.clone();
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(
        results[1]
            .iter()
            .filter(|v| v.starts_with("aborted-"))
            .count(),
        10
    );
}
