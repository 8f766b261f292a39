//! The consumer's lifecycle at its edges, against the real broker: dropping the `run` future (as
//! `tokio::select!` does when another branch wins) closes the group member in the background, and
//! a revoke whose application listener outlives its bound still ends, with the revoked partitions
//! gone from the subscription, the fetcher and the engine, and the rebalance completing.
//!
//! What the broker says about the group is read with Kafka's own `ConsumerGroupCommand`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_consumer::{ConsumerEvent, ConsumerRebalanceListener, GroupEventKind, TopicPartition};
use mooring_testkit::{unique, Cluster, GroupMember};
use tokio::time::Instant;

use common::{consumer, spawn_run, stop, wait_until, Call, Calls, Seen};

const PARTITIONS: usize = 4;

/// `ConsumerGroupCommand --describe --members` (a JVM: run where blocking is allowed).
async fn members(cluster: &Cluster, group: &str) -> Vec<GroupMember> {
    tokio::task::block_in_place(|| cluster.describe_members(group))
}

/// Polls the broker's member list until `holds(list)`; only a look-up that started before
/// `deadline` counts. Returns when the look-up that saw it started.
async fn until_members(
    cluster: &Cluster,
    group: &str,
    what: &str,
    deadline: Instant,
    mut holds: impl FnMut(&[GroupMember]) -> bool,
) -> Instant {
    loop {
        let asked = Instant::now();
        assert!(
            asked < deadline,
            "ConsumerGroupCommand: not within the deadline: {what}"
        );
        let list = members(cluster, group).await;
        if holds(&list) {
            return asked;
        }
        println!("{what}: not yet: {list:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Runs `a` inside a `select!` against a timer that fires some seconds after `a` owns every
/// partition, so `run` is dropped mid-flight. Returns the member id `a` had, and when `run` was
/// dropped.
async fn run_then_drop(a: &mooring_consumer::Consumer, seen: &Seen) -> (String, Instant) {
    let member_id = tokio::select! {
        result = a.run(seen.handler(Duration::ZERO)) => panic!("run ended by itself: {result:?}"),
        id = async {
            wait_until("the member owns every partition", Duration::from_secs(30), || {
                a.assignment().len() == PARTITIONS
            })
            .await;
            let id = a.member_state().unwrap().member_id;
            // The timer of the select: the application gives up on `run` after a while.
            tokio::time::sleep(Duration::from_secs(3)).await;
            id
        } => id,
    };
    (member_id, Instant::now())
}

/// Nothing of a dropped run is left: the consumer knows of no running member.
fn nothing_left_running(a: &mooring_consumer::Consumer) {
    assert!(
        a.member_state().is_none(),
        "nothing of the run is left running once it is dropped"
    );
}

/// A second member, alone in the group: it gets every partition.
async fn second_member_gets_everything(cluster: &Cluster, group: &str, topic: &str) {
    let seen = Seen::default();
    let b = consumer(cluster, group, &[]);
    b.subscribe([topic.to_owned()]).unwrap();
    let run_b = spawn_run(&b, &seen, Duration::ZERO);
    wait_until(
        "the second member owns every partition",
        Duration::from_secs(30),
        || b.assignment().len() == PARTITIONS,
    )
    .await;
    let b_id = b.member_state().unwrap().member_id;
    until_members(
        cluster,
        group,
        "the broker lists the second member alone, with every partition",
        Instant::now() + Duration::from_secs(30),
        |list| list.len() == 1 && list[0].consumer_id == b_id && list[0].partitions == 4,
    )
    .await;
    stop(&b, run_b).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_run_makes_a_dynamic_member_leave_the_group() {
    let cluster = Cluster::shared();
    let topic = unique("lc-drop");
    let group = unique("lc-drop-g");
    cluster.create_topic(&topic, PARTITIONS as u32);
    cluster.produce_perf(&topic, 2000, 100);
    // A long session: only a LeaveGroup takes the member out of the group within 5 s.
    let a = consumer(&cluster, &group, &[("session.timeout.ms", "30000")]);
    a.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let (member_id, dropped) = run_then_drop(&a, &seen).await;

    let gone = until_members(
        &cluster,
        &group,
        "the dropped member left the group",
        dropped + Duration::from_secs(5),
        |list| !list.iter().any(|m| m.consumer_id == member_id),
    )
    .await;
    println!(
        "dropped member gone in the look-up started {:?} after the drop, answered after {:?}",
        gone - dropped,
        dropped.elapsed()
    );
    second_member_gets_everything(&cluster, &group, &topic).await;
    nothing_left_running(&a);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_run_stops_a_static_member_without_leaving() {
    let cluster = Cluster::shared();
    let topic = unique("lc-drop-static");
    let group = unique("lc-drop-static-g");
    let instance = unique("lc-instance");
    cluster.create_topic(&topic, PARTITIONS as u32);
    cluster.produce_perf(&topic, 2000, 100);
    let session = Duration::from_secs(10);
    let a = consumer(
        &cluster,
        &group,
        &[
            ("session.timeout.ms", "10000"),
            ("group.instance.id", &instance),
        ],
    );
    a.subscribe([topic.clone()]).unwrap();
    let seen = Seen::default();
    let (_, dropped) = run_then_drop(&a, &seen).await;

    // No LeaveGroup: the broker still lists the instance shortly after the drop ...
    let listed = members(&cluster, &group).await;
    assert!(
        Instant::now() < dropped + session,
        "the first look-up came too late to tell"
    );
    assert!(
        listed
            .iter()
            .any(|m| m.group_instance_id.as_deref() == Some(instance.as_str())),
        "a static member sends no LeaveGroup when dropped: {listed:?}"
    );
    // ... and, its heartbeats stopped, drops it once the session times out.
    let gone = until_members(
        &cluster,
        &group,
        "the static member's session expired",
        dropped + session + Duration::from_secs(10),
        |list| {
            !list
                .iter()
                .any(|m| m.group_instance_id.as_deref() == Some(instance.as_str()))
        },
    )
    .await;
    println!("static member gone {:?} after the drop", gone - dropped);
    second_member_gets_everything(&cluster, &group, &topic).await;
    nothing_left_running(&a);
}

/// Records calls; the first `revoked` then sleeps far past every bound.
#[derive(Clone)]
struct StuckOnRevoke {
    calls: Calls,
    stuck: Arc<AtomicBool>,
    entered: Arc<Mutex<Option<Instant>>>,
}

impl ConsumerRebalanceListener for StuckOnRevoke {
    async fn assigned(&self, partitions: Vec<TopicPartition>) {
        ConsumerRebalanceListener::assigned(&self.calls, partitions).await;
    }

    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        ConsumerRebalanceListener::revoked(&self.calls, partitions).await;
        if !self.stuck.swap(true, Ordering::SeqCst) {
            *self.entered.lock().unwrap() = Some(Instant::now());
            tokio::time::sleep(Duration::from_secs(120)).await;
        }
    }

    async fn lost(&self, partitions: Vec<TopicPartition>) {
        ConsumerRebalanceListener::lost(&self.calls, partitions).await;
    }
}

/// `(when, failed?)` of the member's rebalance outcomes, and its `Joined` member ids.
type Outcomes = Arc<Mutex<Vec<(Instant, Option<String>)>>>;

fn record_outcomes(consumer: &mooring_consumer::Consumer) -> Outcomes {
    let outcomes: Outcomes = Arc::default();
    let out = Arc::clone(&outcomes);
    let mut events = consumer.events().unwrap();
    tokio::spawn(async move {
        while let Some(event) = events.recv().await {
            if let ConsumerEvent::Group(e) = event {
                match e.kind {
                    GroupEventKind::RebalanceFailed { error, .. } => {
                        out.lock().unwrap().push((Instant::now(), Some(error)))
                    }
                    GroupEventKind::RebalanceCompleted { .. } => {
                        out.lock().unwrap().push((Instant::now(), None))
                    }
                    _ => {}
                }
            }
        }
    });
    outcomes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_revoke_listener_past_its_bound_still_ends_the_revoke() {
    const RECORDS: u64 = 3000;
    let cluster = Cluster::shared();
    let topic = unique("lc-revoke");
    let group = unique("lc-revoke-g");
    cluster.create_topic(&topic, PARTITIONS as u32);
    assert_eq!(cluster.produce_verifiable(&topic, RECORDS, 0, &[]), RECORDS);
    // Eager (range): the first member revokes everything before joining again, within the
    // rebalance timeout of 12 s, or the coordinator drops it from the group.
    let extra = [
        ("partition.assignment.strategy", "range"),
        ("max.poll.interval.ms", "12000"),
        ("mooring.concurrency", "4"),
    ];
    let a = consumer(&cluster, &group, &extra);
    let outcomes = record_outcomes(&a);
    let listener = StuckOnRevoke {
        calls: Calls::default(),
        stuck: Arc::default(),
        entered: Arc::default(),
    };
    a.set_rebalance_listener(listener.clone());
    a.subscribe([topic.clone()]).unwrap();
    let seen_a = Seen::default();
    // 10 ms a record, 4 partitions at once: the backlog lasts about 7 s.
    let run_a = spawn_run(&a, &seen_a, Duration::from_millis(10));
    wait_until(
        "the first member handles records",
        Duration::from_secs(30),
        || seen_a.distinct() >= 300,
    )
    .await;
    let a_id = a.member_state().unwrap().member_id;

    let b = consumer(&cluster, &group, &extra);
    b.subscribe([topic.clone()]).unwrap();
    let seen_b = Seen::default();
    let run_b = spawn_run(&b, &seen_b, Duration::from_millis(10));
    wait_until(
        "the first member's revoke listener is called",
        Duration::from_secs(30),
        || listener.entered.lock().unwrap().is_some(),
    )
    .await;
    let entered = listener.entered.lock().unwrap().unwrap();
    // While the application's listener hangs, the revoked partitions are gone from the runtime.
    assert!(a.assignment().is_empty(), "{:?}", a.assignment());
    for p in 0..PARTITIONS as i32 {
        assert_eq!(a.position(&TopicPartition::new(topic.clone(), p)), None);
    }

    // The rebalance completes with both members, the first one still in the group (and told so:
    // its listener's second non-empty assignment).
    let assigned_again = || {
        listener
            .calls
            .timed()
            .into_iter()
            .filter(|(_, c)| matches!(c, Call::Assigned(p) if !p.is_empty()))
            .map(|(at, _)| at)
            .nth(1)
    };
    wait_until(
        "both members assigned after the rebalance",
        Duration::from_secs(30),
        || {
            a.assignment().len() + b.assignment().len() == PARTITIONS
                && !b.assignment().is_empty()
                && assigned_again().is_some()
        },
    )
    .await;
    let reassigned = assigned_again().unwrap();
    println!(
        "revoke listener entered, reassigned {:?} later",
        reassigned - entered
    );
    let failures: Vec<String> = outcomes
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(_, failed)| failed.clone())
        .collect();
    assert!(
        failures.is_empty(),
        "the member stayed in the group (no rebalance failed): {failures:?}"
    );
    assert_eq!(a.member_state().unwrap().member_id, a_id);
    // Nothing of the revoked partitions was handled while the listener hung.
    let all: Vec<i32> = (0..PARTITIONS as i32).collect();
    assert_eq!(seen_a.handled_between(&all, entered, reassigned), 0);

    // Nothing lost: every acknowledged record handled by one of them.
    wait_until("every record handled", Duration::from_secs(60), || {
        let mut offsets = seen_a.offsets();
        offsets.extend(seen_b.offsets());
        offsets.sort();
        offsets.dedup();
        offsets.len() as u64 >= RECORDS
    })
    .await;
    stop(&b, run_b).await.unwrap();
    stop(&a, run_a).await.unwrap();
}
