//! Fencing at the consumer level on the real broker, under both group protocols: one of two
//! members of a group reaches the broker through testkit's fault proxy, whose connections go
//! half-open (every frame dropped) for longer than the group's session timeout, so its
//! heartbeats stop reaching the coordinator. The broker expires the member and gives its
//! partitions to the other one. When the network comes back the member learns it has been fenced
//! (classic: UNKNOWN_MEMBER_ID; consumer protocol: FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID),
//! reports its partitions lost (a `PartitionsLost` event and the listener's `lost`, never
//! `revoked`: they may be someone else's already), rejoins, gets partitions again and consumes
//! them. Every record the producer saw acknowledged is handled by one member or the other; the
//! fenced member's uncommitted progress may be handled twice (counted and printed).
//!
//! Run with `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-consumer --test session_fencing`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{spawn_run, stop, wait_until, Call, Calls, Seen};
use mooring_consumer::{Consumer, ConsumerEvent, GroupEvent, GroupEventKind, TopicPartition};
use mooring_testkit::{unique, Cluster, FaultProxy};
use tokio::time::Instant;

const PARTITIONS: u32 = 4;
/// The group's session timeout; the half-open episode outlasts it.
const SESSION_MS: &str = "6000";

/// A member of `group` with a recording listener and its events kept with their time.
struct Member {
    consumer: Consumer,
    seen: Seen,
    calls: Calls,
    events: Arc<Mutex<Vec<(Instant, ConsumerEvent)>>>,
}

impl Member {
    fn new(cluster: &Cluster, group: &str, protocol: &str, extra: &[(&str, &str)]) -> Member {
        let mut props = vec![("session.timeout.ms", SESSION_MS)];
        props.extend_from_slice(extra);
        let consumer = common::consumer_for(cluster, group, protocol, &props);
        let calls = Calls::default();
        consumer.set_rebalance_listener(calls.clone());
        let events = Arc::new(Mutex::new(Vec::new()));
        let mut rx = consumer.events().unwrap();
        let sink = Arc::clone(&events);
        tokio::spawn(async move {
            while let Some(event) = rx.recv().await {
                sink.lock().unwrap().push((Instant::now(), event));
            }
        });
        Member {
            consumer,
            seen: Seen::default(),
            calls,
            events,
        }
    }

    fn owned(&self) -> BTreeSet<TopicPartition> {
        self.consumer.assignment().into_iter().collect()
    }

    fn lost_since(&self, since: Instant) -> Vec<Vec<TopicPartition>> {
        self.calls
            .timed()
            .into_iter()
            .filter(|(at, _)| *at >= since)
            .filter_map(|(_, call)| match call {
                Call::Lost(partitions) => Some(partitions),
                _ => None,
            })
            .collect()
    }

    fn group_events_since(&self, since: Instant) -> Vec<GroupEventKind> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|(at, _)| *at >= since)
            .filter_map(|(_, e)| match e {
                ConsumerEvent::Group(GroupEvent { kind, .. }) => Some(kind.clone()),
                _ => None,
            })
            .collect()
    }
}

async fn fenced_member_reports_lost_rejoins_and_consumes(protocol: &str) {
    let cluster = Cluster::shared();
    common::require_protocol(&cluster, protocol);
    let name = format!("fenced-{protocol}");
    let topic = unique(&name);
    let group = unique(&format!("{name}-g"));
    cluster.create_topic(&topic, PARTITIONS);
    let proxy = FaultProxy::start(cluster.bootstrap()).unwrap();
    eprintln!("{name}: fault proxy seed {}", proxy.seed());
    let proxied = proxy.bootstrap();
    // Requests through the dropped frames time out well within the episode.
    let fenced = Member::new(
        &cluster,
        &group,
        protocol,
        &[
            ("bootstrap.servers", proxied.as_str()),
            ("request.timeout.ms", "2000"),
        ],
    );
    let other = Member::new(&cluster, &group, protocol, &[]);
    fenced
        .consumer
        .subscribe([topic.clone()])
        .expect("subscribe");
    other
        .consumer
        .subscribe([topic.clone()])
        .expect("subscribe");
    let producer = cluster.spawn_verifiable_producer(&topic, None, 200, &[]);
    let fenced_run = spawn_run(&fenced.consumer, &fenced.seen, Duration::ZERO);
    wait_until(
        "the first member owns every partition",
        Duration::from_secs(30),
        || fenced.owned().len() == PARTITIONS as usize,
    )
    .await;
    let other_run = spawn_run(&other.consumer, &other.seen, Duration::ZERO);
    wait_until(
        "the two members split the partitions",
        Duration::from_secs(45),
        || {
            let (a, b) = (fenced.owned(), other.owned());
            a.len() == 2 && b.len() == 2 && a.is_disjoint(&b)
        },
    )
    .await;
    if protocol == "consumer" {
        let members = cluster.describe_members(&group);
        assert!(
            members.len() == 2 && members.iter().all(|m| m.speaks_consumer_protocol()),
            "{name}: both members must speak the consumer protocol: {members:?}"
        );
    }
    let held = fenced.owned();
    let before = fenced.seen.distinct();
    wait_until("the first member consumes", Duration::from_secs(30), || {
        fenced.seen.distinct() > before + 50
    })
    .await;

    // Its heartbeats stop reaching the coordinator, which expires it after the session timeout.
    let episode = Instant::now();
    proxy.faults().set_half_open(true);
    wait_until(
        "the broker expires the silent member and the other takes every partition",
        Duration::from_secs(45),
        || other.owned().len() == PARTITIONS as usize,
    )
    .await;
    let expired_after = episode.elapsed();
    proxy.faults().set_half_open(false);
    let healed = Instant::now();

    wait_until(
        "the fenced member reports its partitions lost",
        Duration::from_secs(45),
        || {
            fenced
                .lost_since(episode)
                .iter()
                .flatten()
                .collect::<BTreeSet<_>>()
                == held.iter().collect::<BTreeSet<_>>()
        },
    )
    .await;
    wait_until(
        "the fenced member rejoins and owns partitions again",
        Duration::from_secs(45),
        || !fenced.owned().is_empty() && other.owned().len() < PARTITIONS as usize,
    )
    .await;
    let again = fenced.seen.distinct();
    wait_until(
        "the fenced member consumes again",
        Duration::from_secs(30),
        || fenced.seen.distinct() > again + 20,
    )
    .await;

    let acked = producer.stop();
    let handled = |m: &Member| -> BTreeSet<(i32, i64)> {
        m.seen
            .offsets()
            .into_iter()
            .map(|(_, p, o)| (p, o))
            .collect()
    };
    wait_until(
        "every acknowledged record handled",
        Duration::from_secs(60),
        || {
            let all: BTreeSet<(i32, i64)> =
                handled(&fenced).union(&handled(&other)).copied().collect();
            acked.iter().all(|ack| all.contains(ack))
        },
    )
    .await;
    stop(&fenced.consumer, fenced_run).await.unwrap();
    stop(&other.consumer, other_run).await.unwrap();

    let both: Vec<(i32, i64)> = handled(&fenced)
        .intersection(&handled(&other))
        .copied()
        .collect();
    let all: BTreeSet<(i32, i64)> = handled(&fenced).union(&handled(&other)).copied().collect();
    let lost = acked.iter().filter(|ack| !all.contains(ack)).count();
    let events = fenced.group_events_since(episode);
    // Up to the loss: what it held was lost, not revoked (a revoke commits).
    let revoked_held: Vec<&GroupEventKind> = events
        .iter()
        .take_while(|e| !matches!(e, GroupEventKind::PartitionsLost { .. }))
        .filter(|e| {
            matches!(e, GroupEventKind::PartitionsRevoked { partitions, .. }
                if partitions.iter().any(|p| held.contains(p)))
        })
        .collect();
    let rejoin_causes: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            GroupEventKind::RebalanceStarted { cause, .. } => Some(format!("{cause:?}")),
            _ => None,
        })
        .collect();
    eprintln!(
        "{name}: expired after {expired_after:.1?}, healed {:.1?} later; acknowledged {}, lost {lost}, \
         handled by both {} (the fenced member's uncommitted progress), rejoin causes {rejoin_causes:?}",
        healed.elapsed(),
        acked.len(),
        both.len(),
    );
    assert!(!acked.is_empty(), "{name}: nothing acknowledged");
    assert_eq!(lost, 0, "{name}: acknowledged records never handled");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, GroupEventKind::PartitionsLost { partitions, .. } if !partitions.is_empty())),
        "{name}: no PartitionsLost event: {events:?}"
    );
    let calls = fenced.calls.all();
    let last_lost = calls
        .iter()
        .rposition(|c| matches!(c, Call::Lost(p) if !p.is_empty()))
        .unwrap();
    assert!(
        calls[last_lost + 1..]
            .iter()
            .any(|c| matches!(c, Call::Assigned(p) if !p.is_empty())),
        "{name}: no assignment after the loss: {calls:?}"
    );
    assert!(
        revoked_held.is_empty(),
        "{name}: the fenced member revoked (and may have committed) partitions it had lost: {revoked_held:?}"
    );
    assert!(
        !rejoin_causes.is_empty(),
        "{name}: no rebalance started after the episode"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_classic_member_silent_past_its_session_is_fenced_reports_lost_rejoins_and_consumes() {
    fenced_member_reports_lost_rejoins_and_consumes("classic").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_consumer_protocol_member_silent_past_its_session_is_fenced_reports_lost_rejoins_and_consumes(
) {
    fenced_member_reports_lost_rejoins_and_consumes("consumer").await;
}
