//! The lag status of a sidecar whose principal may not read `__consumer_offsets`, on a cluster of
//! its own whose brokers enforce ACLs (`scripts/kafka start --authorizer`): user alice, over SASL,
//! has only what the broker watch needs (DESCRIBE on the group and its topic). The sidecar says
//! where its commits come from (the watch) and why (the refusal, naming the topic and alice),
//! and still judges from the watch's offsets: a member that stops with records waiting is STOP.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::time::Duration;

use common::{get_json, sidecar};
use mooring_consumer::processing::ConsumerRecord;
use mooring_testkit::{unique, Cluster};
use serde_json::Value;
use support::{consumer, eventually, exporter, run, stop};

/// This cluster's port base, taken by no other test (`Cluster::dedicated_with("lag-authz", 1,
/// 23000, ["--authorizer"])`).
const PORT_BASE: u16 = 23000;

fn partition0<'a>(report: &'a Value, topic: &str) -> Option<&'a Value> {
    report["partitions"]
        .as_array()?
        .iter()
        .find(|p| p["topic"] == topic && p["partition"] == 0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_read_on_the_commit_log_the_status_comes_from_the_watch() {
    let cluster = Cluster::dedicated_with("lag-authz", 1, PORT_BASE, &["--authorizer"]);
    assert_eq!(cluster.var("MOORING_KAFKA_AUTHORIZER"), "1");
    let topic = unique("lag-authz");
    let group = unique("lag-authz-g");
    cluster.create_topic(&topic, 1);
    cluster.produce_perf(&topic, 200, 100);
    cluster.allow_user("Describe", "--group", &group);
    cluster.allow_user("Describe", "--topic", &topic);

    let s = sidecar(&format!(
        "\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{group}\"\n\"watch.interval.ms\" = 300\n\
         \"security.protocol\" = \"SASL_PLAINTEXT\"\n\"sasl.mechanism\" = \"SCRAM-SHA-512\"\n\
         \"sasl.username\" = \"{}\"\n\"sasl.password\" = \"{}\"\n\
         \"lag.status.min.distance.ms\" = 200\n",
        cluster.var("MOORING_BOOTSTRAP_SASL"),
        cluster.var("MOORING_SASL_USER"),
        cluster.var("MOORING_SASL_PASSWORD"),
    ))
    .await;
    let addr = s.addr;
    // The member is the admin (the PLAINTEXT listener), committing every 200 ms.
    let c = consumer(
        &cluster,
        &group,
        &topic,
        &[("auto.commit.interval.ms", "200")],
    );
    let _export = exporter(&c, addr);
    let task = run(&c, |_r: ConsumerRecord| async { Ok::<(), String>(()) });
    let name = topic.as_str();
    eventually(
        "the watch to see the commit of 200",
        Duration::from_secs(60),
        || async move {
            partition0(&get_json(addr, "/debug/lag").await, name)
                .is_some_and(|r| r["committed"] == 200)
        },
    )
    .await;

    let report = get_json(addr, "/debug/lag").await;
    assert_eq!(report["source"], "watch", "{report:#}");
    let why = report["source_error"].as_str().unwrap_or_default();
    for word in ["__consumer_offsets", "alice", "TOPIC_AUTHORIZATION_FAILED"] {
        assert!(why.contains(word), "`{word}` not in the reason: {why}");
    }
    assert_eq!(report["commits_read"], 0, "{report:#}");
    let r = partition0(&report, &topic).unwrap();
    assert_eq!(r["status"], "OK", "{r:#}");

    stop(&c, task).await;
    cluster.produce_perf(&topic, 300, 100);
    let mut last = Value::Null;
    let stopped = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            last = get_json(addr, "/debug/lag").await;
            if partition0(&last, &topic).is_some_and(|r| r["status"] == "STOP") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(stopped.is_ok(), "never STOP from the watch:\n{last:#}");
    let r = partition0(&last, &topic).unwrap();
    assert_eq!(r["rule"], "commits_stopped", "{r:#}");
    assert_eq!(r["lag"], 300, "{r:#}");
    assert_eq!(last["source"], "watch");
    assert_eq!(last["group_status"], "ERR");
    s.shutdown().await;
}
