//! One rollout: three pods started in StatefulSet order, a steady producer, then one rolling
//! update per protocol phase (each pod restarted in turn, highest ordinal first), and what it
//! measured: records lost and duplicated against the producer's acknowledgements, what the
//! running members' sidecars counted while another restarted, and each partition's longest
//! pause.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::net::TcpListener;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mooring_testkit::{unique, Cluster};

use super::pod::{Pod, Protocol};
use super::producer::{processed, Producer};
use super::{
    binaries, now_ms, reserve_port, wait_until, MEMBERS, MIN_READY, PARTITIONS, RATE, READY_TIMEOUT,
};

/// One rollout's setting.
pub(crate) struct Scenario {
    pub(crate) name: &'static str,
    pub(crate) static_members: bool,
    /// The protocol of the first start, then of each rolling update in turn (two entries: one
    /// update; `[Classic, Consumer, Classic]`: an online migration there and back).
    pub(crate) phases: &'static [Protocol],
    /// A surge rollout, as a Deployment with `maxSurge: 1, maxUnavailable: 0` does it: each new
    /// process starts (with the same instance id) while the old one still runs, and the old one
    /// is stopped once the new one's sidecar is Ready.
    pub(crate) surge: bool,
    /// Where the pods' sidecar ports come from (one range per test: they run side by side).
    pub(crate) ports: Range<u16>,
}

pub(crate) struct Run {
    pub(crate) scenario: Scenario,
    pub(crate) bootstrap: String,
    pub(crate) group: String,
    pub(crate) topic: String,
}

/// What one rollout measured.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) generation_before: Vec<i64>,
    pub(crate) generations_after: Vec<i64>,
    /// Every running member's sidecar's rebalance count change while another restarted, summed.
    pub(crate) rebalances_seen_by_others: u64,
    /// The same for revocations (the listener told of revoked partitions).
    pub(crate) revocations_seen_by_others: u64,
    /// What each restarted member's new sidecar counted for its own (re)join.
    pub(crate) new_sidecar_rebalances: Vec<u64>,
    pub(crate) acked: usize,
    pub(crate) lost: usize,
    pub(crate) duplicates: usize,
    pub(crate) wrong_values: usize,
    /// Per partition: the longest gap between two records processed during the update.
    pub(crate) longest_pause: BTreeMap<i32, Duration>,
    /// Per restart: SIGTERM → consumer exit, and new start → new sidecar ready.
    pub(crate) restarts: Vec<(String, Duration, Duration)>,
    pub(crate) update: Duration,
    /// After the first start and after each update: the group's type and whether each member
    /// speaks the consumer protocol, as Kafka's ConsumerGroupCommand lists them.
    pub(crate) group_types: Vec<(Option<String>, Vec<bool>)>,
}

/// Asserts that every member speaks `protocol`, as ConsumerGroupCommand lists them (a
/// consumer-protocol member has a member epoch and is not UPGRADED false), and returns the
/// group's type and each member's answer.
fn check_protocol(
    cluster: &Cluster,
    group: &str,
    protocol: Protocol,
) -> (Option<String>, Vec<bool>) {
    let kind = cluster.group_type(group);
    let upgraded: Vec<bool> = cluster
        .describe_members(group)
        .iter()
        .map(|m| m.speaks_consumer_protocol())
        .collect();
    match protocol {
        Protocol::Consumer => assert!(
            kind.as_deref() == Some("Consumer")
                && upgraded.len() == MEMBERS
                && upgraded.iter().all(|&u| u),
            "{group}: not every member speaks the consumer protocol: type {kind:?}, upgraded {upgraded:?}"
        ),
        Protocol::Classic => assert!(
            upgraded.len() == MEMBERS && upgraded.iter().all(|&u| !u),
            "{group}: not every member speaks the classic protocol: type {kind:?}, upgraded {upgraded:?}"
        ),
    }
    (kind, upgraded)
}

/// Waits until every partition has a record processed at or after `since_ms` (ms since the
/// epoch): the group consumes everywhere.
fn await_processing_since(dir: &Path, since_ms: u64, what: &str) {
    wait_until(what, Duration::from_secs(60), || {
        let partitions: BTreeSet<i32> = processed(dir)
            .iter()
            .filter(|r| r.at_ms >= since_ms)
            .map(|r| r.partition)
            .collect();
        (partitions.len() == PARTITIONS as usize).then_some(())
    });
}

/// Every member's generation (classic) or member epoch (consumer), once every member is ready,
/// all partitions are held, and (classic) all are in one generation. Member epochs are each
/// member's own, so under the consumer protocol they need not agree.
fn balanced(pods: &[Pod]) -> Option<Vec<i64>> {
    let states: Vec<serde_json::Value> = pods.iter().filter_map(Pod::ready).collect();
    let generations: Vec<i64> = states
        .iter()
        .map(|s| s["generation"].as_i64().unwrap_or(-1))
        .collect();
    let assigned: u64 = states
        .iter()
        .filter_map(|s| s["assigned_partitions"].as_u64())
        .sum();
    let classic = pods.iter().all(|p| p.protocol == Protocol::Classic);
    let one_generation = generations.iter().collect::<BTreeSet<_>>().len() == 1;
    (states.len() == MEMBERS && assigned == u64::from(PARTITIONS) && (one_generation || !classic))
        .then_some(generations)
}

/// Starts pod `pod` and waits for its sidecar's Ready; a consumer that exits meanwhile fails.
/// Returns the time to Ready.
fn start_until_ready(pod: &mut Pod, run: &Run, protocol: Protocol) -> Duration {
    let started = Instant::now();
    pod.start(run, protocol);
    loop {
        if pod.ready().is_some() {
            return started.elapsed();
        }
        let exited = pod.exited();
        assert!(
            exited.is_none() && started.elapsed() < READY_TIMEOUT,
            "{} not ready {:?} after its start (exit: {exited:?}):\n{}",
            pod.name(),
            started.elapsed(),
            pod.member_log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Restarts pod `i` with `protocol`: stop then start, or (surge) a second process with the same
/// instance id and a sidecar of its own started first, the old one stopped once it is Ready.
fn restart(
    pods: &mut [Pod],
    i: usize,
    run: &Run,
    protocol: Protocol,
) -> (String, Duration, Duration) {
    if run.scenario.surge {
        let port = reserve_port(run.scenario.ports.clone());
        let mut new = pods[i].twin(port_of(port));
        let ready_took = start_until_ready(&mut new, run, protocol);
        // Ready while it waits: the old process still holds the instance id.
        let waits = new.instance_id_waits();
        let stop_took = pods[i].stop();
        // The old process is gone: the new one must take the partitions over, not give up.
        let name = new.name();
        assert!(
            waits > 0,
            "{name}'s new process was never refused its instance id while the old one ran"
        );
        pods[i] = new;
        (name, stop_took, ready_took)
    } else {
        let stop_took = pods[i].stop();
        let ready_took = start_until_ready(&mut pods[i], run, protocol);
        (pods[i].name(), stop_took, ready_took)
    }
}

/// The port a reservation holds, released for the sidecar to bind.
fn port_of(listener: TcpListener) -> u16 {
    listener.local_addr().expect("reserved port").port()
}

pub(crate) fn rollout(scenario: Scenario) -> Outcome {
    // Built (or found built) before any pod's start is timed.
    binaries();
    let cluster = Cluster::shared();
    let run = Run {
        bootstrap: cluster.bootstrap().to_owned(),
        group: unique(&format!("rolling-{}", scenario.name)),
        topic: unique(&format!("rolling-{}", scenario.name)),
        scenario,
    };
    cluster.create_topic(&run.topic, PARTITIONS);
    let dir: PathBuf = std::env::temp_dir().join(unique("rolling-update"));
    std::fs::create_dir_all(&dir).expect("run dir");
    let reserved: Vec<TcpListener> = (0..MEMBERS)
        .map(|_| reserve_port(run.scenario.ports.clone()))
        .collect();
    let ports: Vec<u16> = reserved.into_iter().map(port_of).collect();
    let mut pods: Vec<Pod> = ports
        .iter()
        .enumerate()
        .map(|(ordinal, &port)| Pod::new(ordinal, port, &dir))
        .collect();
    // The StatefulSet's first rollout (OrderedReady): pod 0, 1, 2, each once the previous is
    // Ready. A member is ready once assigned; the last one joining leaves the group balanced.
    let first = run.scenario.phases[0];
    for pod in pods.iter_mut() {
        start_until_ready(pod, &run, first);
    }
    wait_until(
        "all three members ready, holding all partitions",
        READY_TIMEOUT,
        || balanced(&pods),
    );

    let producer = Producer::start(&cluster, &run.topic, &dir);
    // Steady consumption before the update: every partition processed again since then.
    await_processing_since(&dir, 0, "every member to process records");
    await_processing_since(
        &dir,
        now_ms(),
        "every partition to go on being processed before the update",
    );
    let generation_before = wait_until("a settled group", Duration::from_secs(30), || {
        balanced(&pods)
    });
    let mut group_types = vec![check_protocol(&cluster, &run.group, first)];

    // The updates: highest ordinal first, each pod after the previous is Ready again.
    let update_started = Instant::now();
    let update_from_ms = now_ms();
    let mut rebalances_seen_by_others = 0;
    let mut revocations_seen_by_others = 0;
    let mut new_sidecar_rebalances = Vec::new();
    let mut restarts = Vec::new();
    for &protocol in &run.scenario.phases[1..] {
        for i in (0..MEMBERS).rev() {
            let others: Vec<usize> = (0..MEMBERS).filter(|&j| j != i).collect();
            let counts = |pods: &[Pod]| -> Vec<(u64, u64)> {
                others
                    .iter()
                    .map(|&j| (pods[j].rebalances(), pods[j].revocations()))
                    .collect()
            };
            let before = counts(&pods);
            restarts.push(restart(&mut pods, i, &run, protocol));
            // The group settles (at once when static), then the next pod waits `MIN_READY`.
            // That wait checks an absence (no rebalance shows in the counters), so it is a
            // fixed time, not a condition.
            wait_until(
                "the group to settle after the restart",
                READY_TIMEOUT,
                || balanced(&pods),
            );
            std::thread::sleep(MIN_READY);
            for (j, ((rb, vb), (ra, va))) in others.iter().zip(before.iter().zip(counts(&pods))) {
                if run.scenario.static_members && run.scenario.phases.len() == 2 {
                    assert_eq!(
                        (ra, va),
                        (*rb, *vb),
                        "{}'s sidecar counted a rebalance or a revocation while {} restarted:\n{}",
                        pods[*j].name(),
                        pods[i].name(),
                        pods[*j].member_log()
                    );
                }
                rebalances_seen_by_others += ra - rb;
                revocations_seen_by_others += va - vb;
            }
            new_sidecar_rebalances.push(pods[i].rebalances());
        }
        group_types.push(check_protocol(&cluster, &run.group, protocol));
    }
    let update = update_started.elapsed();
    let update_to_ms = now_ms();
    // Steady consumption after the update: every partition processed again (which also bounds
    // each partition's longest pause below).
    await_processing_since(
        &dir,
        update_to_ms,
        "every partition to be processed again after the update",
    );
    let generations_after: Vec<i64> = pods.iter().map(Pod::generation).collect();

    // Every acknowledged record processed, then the pods stop.
    let acked = producer.stop();
    assert!(!acked.is_empty(), "the producer had nothing acknowledged");
    wait_until(
        "every acknowledged record to be processed",
        Duration::from_secs(60),
        || {
            let done: BTreeSet<(i32, i64)> = processed(&dir)
                .iter()
                .map(|r| (r.partition, r.offset))
                .collect();
            acked.keys().all(|k| done.contains(k)).then_some(())
        },
    );
    for pod in pods.iter_mut().rev() {
        pod.stop();
    }

    let records = processed(&dir);
    let mut count: BTreeMap<(i32, i64), u32> = BTreeMap::new();
    let mut wrong_values = 0;
    for r in &records {
        *count.entry((r.partition, r.offset)).or_default() += 1;
        if acked
            .get(&(r.partition, r.offset))
            .is_some_and(|v| *v != r.value)
        {
            wrong_values += 1;
        }
    }
    let lost = acked.keys().filter(|k| !count.contains_key(k)).count();
    let duplicates = count.values().map(|&n| (n - 1) as usize).sum();
    let longest_pause = longest_pauses(&records, update_from_ms, update_to_ms);
    let _ = std::fs::remove_dir_all(&dir);
    cluster.delete_topic(&run.topic);
    Outcome {
        generation_before,
        generations_after,
        rebalances_seen_by_others,
        revocations_seen_by_others,
        new_sidecar_rebalances,
        acked: acked.len(),
        lost,
        duplicates,
        wrong_values,
        longest_pause,
        restarts,
        update,
        group_types,
    }
}

/// The longest pause per partition: the largest gap between consecutive processing times of its
/// records over the update (from the first SIGTERM to the last pod's Ready), the last record
/// before it and the first after it bounding the window.
fn longest_pauses(
    records: &[super::producer::Processed],
    from_ms: u64,
    to_ms: u64,
) -> BTreeMap<i32, Duration> {
    let mut times: BTreeMap<i32, Vec<u64>> = BTreeMap::new();
    for r in records {
        times.entry(r.partition).or_default().push(r.at_ms);
    }
    times
        .into_iter()
        .map(|(p, mut t)| {
            t.sort_unstable();
            let first = t.iter().rposition(|&x| x <= from_ms).unwrap_or(0);
            let last = t
                .iter()
                .position(|&x| x >= to_ms)
                .unwrap_or(t.len().saturating_sub(1));
            let gap = t[first..=last.max(first)]
                .windows(2)
                .map(|w| w[1] - w[0])
                .max()
                .unwrap_or(0);
            (p, Duration::from_millis(gap))
        })
        .collect()
}

pub(crate) fn report(name: &str, o: &Outcome) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "\n== rolling update, {name} ({MEMBERS} members, {PARTITIONS} partitions, {RATE} records/s, update took {:.1} s)", o.update.as_secs_f64());
    let _ = writeln!(out, "   restart    SIGTERM->exit   start->Ready");
    for (pod, stop, ready) in &o.restarts {
        let _ = writeln!(
            out,
            "   {pod:<10} {:>10.2} s   {:>10.2} s",
            stop.as_secs_f64(),
            ready.as_secs_f64()
        );
    }
    let _ = writeln!(
        out,
        "   generations {:?} -> {:?}; counted by the running members' sidecars: {} rebalances, \
         {} revocations; rebalances by each restarted member's new sidecar: {:?}",
        o.generation_before,
        o.generations_after,
        o.rebalances_seen_by_others,
        o.revocations_seen_by_others,
        o.new_sidecar_rebalances
    );
    let _ = writeln!(
        out,
        "   group type and whether each member speaks the consumer protocol, after each phase: {:?}",
        o.group_types
    );
    let _ = writeln!(
        out,
        "   acknowledged {}, lost {}, duplicates {}, wrong values {}",
        o.acked, o.lost, o.duplicates, o.wrong_values
    );
    let longest = o.longest_pause.values().max().copied().unwrap_or_default();
    let _ = writeln!(
        out,
        "   longest pause of any partition: {} ms ({name})",
        longest.as_millis()
    );
    let _ = writeln!(out, "   partition  longest pause");
    for (p, pause) in &o.longest_pause {
        let _ = writeln!(out, "   {p:>9}  {:>9} ms", pause.as_millis());
    }
}
