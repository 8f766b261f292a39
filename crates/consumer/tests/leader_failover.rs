//! The fetcher across a leader failure, on a dedicated three-node cluster: the broker leading a
//! partition (not the group's coordinator) is killed while the consumer reads; fetches to it
//! fail, the fetcher refreshes metadata, finds the new leader (a new leader epoch, KIP-320),
//! opens a new fetch session there and goes on from its position: nothing lost, nothing twice.
//!
//! Its cluster is its own (port base 27000), so nextest runs it in the own-cluster test group,
//! one such test at a time.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{consumer, spawn_run, stop, wait_until, Seen};
use mooring_client::{Client, ClientConfig};
use mooring_consumer::ConsumerEvent;
use mooring_testkit::{unique, Cluster};

const RECORDS: u64 = 3000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_failure_loses_nothing() {
    let cluster = Cluster::dedicated("t-consumer-leader", 3, 27000);
    let topic = unique("leader");
    let group = unique("leader-g");
    cluster.create_topic(&topic, 3);
    assert_eq!(
        cluster.produce_verifiable(&topic, RECORDS, 30, &[]),
        RECORDS
    );

    let c = consumer(
        &cluster,
        &group,
        &[
            ("session.timeout.ms", "10000"),
            ("mooring.concurrency", "3"),
        ],
    );
    let mut events = c.events().unwrap();
    let fetch_errors = Arc::new(AtomicUsize::new(0));
    let errors = Arc::clone(&fetch_errors);
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let ConsumerEvent::FetchError { .. } = event {
                errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    });
    c.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    // 3 ms per record, one at a time per partition: about 3 s of work per partition.
    let run = spawn_run(&c, &seen, Duration::from_millis(3));
    wait_until("a fifth handled", Duration::from_secs(60), || {
        seen.distinct() as u64 >= RECORDS / 5
    })
    .await;

    let admin = Client::connect(ClientConfig::new(cluster.bootstrap().split(',')))
        .await
        .unwrap();
    let coordinator = admin.find_coordinator(&group).await.unwrap();
    let metadata = admin.refresh_metadata().await.unwrap();
    let victim = (0..3)
        .filter_map(|p| {
            metadata
                .leader_for(&topic, p)
                .map(|(leader, _)| (p, leader))
        })
        .find(|(_, leader)| *leader != coordinator)
        .expect("a partition led by a broker other than the coordinator");
    println!(
        "killing node {} (leader of partition {}), coordinator {coordinator}",
        victim.1, victim.0
    );
    cluster.kill(usize::try_from(victim.1).unwrap());

    wait_until("every record handled", Duration::from_secs(90), || {
        seen.distinct() as u64 >= RECORDS
    })
    .await;
    stop(&c, run).await.unwrap();
    let lost = RECORDS - seen.distinct() as u64;
    let duplicates = seen.duplicates();
    println!(
        "leader failover: lost = {lost}, duplicates = {duplicates}, fetch errors = {}",
        fetch_errors.load(Ordering::Relaxed)
    );
    assert_eq!((lost, duplicates), (0, 0));
    assert!(
        fetch_errors.load(Ordering::Relaxed) > 0,
        "the fetcher never saw the leader go"
    );
}
