//! Kafka's consumer system tests (tests/kafkatest/tests/client/consumer_test.py: OffsetValidationTest
//! and AssignmentValidationTest) against the real broker, driving `verifiable-consumer` processes
//! (ours, and Kafka's Java `VerifiableConsumer` in the mixed scenarios) and judging them only by
//! their JSON event lines, as kafkatest's `verifiable_consumer.py` does ([`events`], [`driver`]).
//!
//! As Kafka's, every scenario runs under both group protocols: the classic one (the tests at the
//! top, by their long-standing names) and KIP-848's `consumer` protocol ([`consumer_protocol`]:
//! `--group-protocol consumer`, the broker's `range` assignor standing for `RangeAssignor`, the
//! session timeout and heartbeat interval set on the group, as the protocol has them). Where the
//! protocols differ the scenario says so: a static member whose instance id is taken is refused
//! (UNRELEASED_INSTANCE_ID) instead of fencing the older one, and a dynamic member's partitions
//! move to the others while it is away, where the classic protocol's eager rebalance revokes from
//! everyone. The scenarios that restart brokers run both protocols' groups side by side on one
//! dedicated cluster ([`brokers`]); [`mixed`] puts ours, Java's and librdkafka's consumers in one
//! group under each protocol and migrates a group online from one protocol to the other and back;
//! [`lines`] holds ours against Java's event lines.
//!
//! Smaller than Kafka's: 6 s sessions (10 s for static members, 30 s while brokers fail),
//! 500 ms heartbeats, two bounce rounds, a producer at 300 records/s. Every child process is
//! killed when its scenario ends, pass or fail. The consumer protocol's scenarios need Kafka 4.x
//! (KIP-848 on by default) and say they are skipped on an older broker.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod brokers;
mod driver;
mod events;
mod lines;
mod mixed;

use std::collections::BTreeSet;
use std::time::Duration;

use driver::{Impl, Protocol, Scenario, COOPERATIVE, RANGE};
use events::{Global, MemberView, Status};
use mooring_testkit::{wait_blocking, Cluster};

/// The shared cluster; a scenario of the consumer protocol fails on a broker without it (the
/// runner leaves those out there: [`Cluster::require_consumer_protocol`]).
fn shared(protocol: Protocol) -> Cluster {
    let cluster = Cluster::shared();
    if protocol == Protocol::Consumer {
        cluster.require_consumer_protocol();
    }
    cluster
}

// ---- OffsetValidationTest ------------------------------------------------------------------

fn consumer_bounce(protocol: Protocol, name: &str, rolling: bool, imps: [Impl; 3], swap: bool) {
    let cluster = shared(protocol);
    let mut s = Scenario::new(&cluster, name, 1, protocol);
    let f = s.flags(RANGE, "6000");
    for imp in imps {
        s.add(imp, &f);
    }
    s.start_producer(300);
    s.start_all();
    s.await_all_members();
    s.await_protocol();
    s.await_settled();
    for _ in 0..2 {
        if rolling {
            for i in 0..3 {
                s.stop(i, true);
                wait_blocking("the member is dead", Duration::from_secs(11), || {
                    s.dead() == 1
                });
                if swap {
                    s.members[i].imp = match s.members[i].imp {
                        Impl::Java => Impl::Mooring,
                        Impl::Mooring => Impl::Java,
                        Impl::Librdkafka => Impl::Librdkafka,
                    };
                }
                s.start(i);
                s.await_all_members();
                s.await_consumed(100);
            }
        } else {
            s.stop_all();
            for i in 0..3 {
                s.start(i);
            }
            s.await_all_members();
            s.await_consumed(100);
        }
    }
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean(name);
    verdict.assert_committed_all(name);
}

#[test]
fn consumer_bounce_rolling() {
    consumer_bounce(
        Protocol::Classic,
        "bounce-rolling",
        true,
        [Impl::Mooring; 3],
        false,
    );
}

#[test]
fn consumer_bounce_all() {
    consumer_bounce(
        Protocol::Classic,
        "bounce-all",
        false,
        [Impl::Mooring; 3],
        false,
    );
}

/// Ours and Kafka's Java VerifiableConsumer in one group, swapped at every restart.
#[test]
fn consumer_bounce_rolling_mixed_with_java() {
    consumer_bounce(
        Protocol::Classic,
        "bounce-mixed",
        true,
        [Impl::Java, Impl::Mooring, Impl::Java],
        true,
    );
}

/// Static members (or dynamic ones, `static_membership` false) restarted but the first: under
/// static membership the member kept alive sees no revoke (and under the consumer protocol no
/// partition changes hands); dynamic members cause revokes (classic) or have their partitions
/// taken over while away (consumer).
fn static_consumer_bounce(
    protocol: Protocol,
    name: &str,
    strategy: &str,
    rolling: bool,
    static_membership: bool,
) {
    let cluster = shared(protocol);
    let mut s = Scenario::new(&cluster, name, 3, protocol);
    let ids: Vec<String> = (0..3).map(|i| format!("{name}-{i}")).collect();
    for id in &ids {
        let mut f = s.flags(strategy, "10000");
        if static_membership {
            f.extend(["--group-instance-id".to_owned(), id.clone()]);
        }
        s.add(Impl::Mooring, &f);
    }
    s.start_producer(300);
    s.start_all();
    s.await_all_members();
    s.await_protocol();
    s.await_settled();
    let before = s.view(|g| g.members[0].revoked);
    let takeovers_before = s.view(Global::takeovers);
    for _ in 0..2 {
        if rolling {
            for i in 1..3 {
                s.stop(i, true);
                wait_blocking("the member is dead", Duration::from_secs(15), || {
                    s.dead() == 1
                });
                if protocol == Protocol::Consumer && !static_membership {
                    // The coordinator gives a departed dynamic member's partitions to the others.
                    let taken = s.view(Global::takeovers);
                    wait_blocking(
                        &format!("member {i}'s partitions taken over ({})", s.describe()),
                        Duration::from_secs(20),
                        || s.view(Global::takeovers) > taken,
                    );
                }
                s.start(i);
                s.await_all_members();
                s.await_consumed(100);
            }
        } else {
            for i in 1..3 {
                s.signal_stop(i, true);
            }
            for i in 1..3 {
                s.reap(i, true);
            }
            for i in 1..3 {
                s.start(i);
            }
            s.await_all_members();
            s.await_consumed(100);
        }
    }
    let revokes = s.view(|g| g.members[0].revoked) - before;
    let takeovers = s.view(Global::takeovers) - takeovers_before;
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    eprintln!("{name}: revokes of the member kept alive: {revokes}, takeovers: {takeovers}");
    match (static_membership, protocol) {
        (true, _) => {
            assert_eq!(revokes, 0, "{name}: static members restarted, yet a revoke");
            if protocol == Protocol::Consumer {
                assert_eq!(takeovers, 0, "{name}: a static member's partitions moved");
            }
        }
        (false, Protocol::Classic) => assert!(
            revokes > 0,
            "{name}: dynamic members restarted, yet no revoke"
        ),
        (false, Protocol::Consumer) => assert!(
            takeovers > 0,
            "{name}: dynamic members restarted, yet no partition moved"
        ),
    }
    verdict.assert_clean(name);
}

#[test]
fn static_consumer_bounce_rolling() {
    static_consumer_bounce(Protocol::Classic, "static-rolling", RANGE, true, true);
}

#[test]
fn static_consumer_bounce_all() {
    static_consumer_bounce(Protocol::Classic, "static-all", RANGE, false, true);
}

#[test]
fn dynamic_consumer_bounce_rolling_revokes() {
    static_consumer_bounce(Protocol::Classic, "dynamic-rolling", RANGE, true, false);
}

#[test]
fn static_consumer_bounce_rolling_cooperative() {
    static_consumer_bounce(Protocol::Classic, "static-coop", COOPERATIVE, true, true);
}

/// Static members and a fourth sharing the first one's `group.instance.id`, started after the
/// group is stable (`stable_first`) or all at once. Classic: the older of the two is fenced
/// (FENCED_INSTANCE_ID) and dies saying so. Consumer protocol: the newcomer is refused
/// (UNRELEASED_INSTANCE_ID) and the group is left as it was; started after the group is stable,
/// it keeps retrying and takes the instance's place once the first one stops (a rolling update);
/// started all at once, the one refused gives up after `mooring.unreleased.instance.timeout.ms`
/// (5 s here) and dies saying so, as Java's consumer dies at once.
fn fencing_static_consumer(protocol: Protocol, name: &str, stable_first: bool) {
    let cluster = shared(protocol);
    let mut s = Scenario::new(&cluster, name, 3, protocol);
    let ids: Vec<String> = (0..3).map(|i| format!("{name}-{i}")).collect();
    let short_bound = [("mooring.unreleased.instance.timeout.ms", "5000")];
    let extra: &[(&str, &str)] = match (protocol, stable_first) {
        (Protocol::Consumer, false) => &short_bound,
        _ => &[],
    };
    for (i, id) in ids.iter().enumerate() {
        let mut f = s.flags(RANGE, "10000");
        f.extend(["--group-instance-id".to_owned(), id.clone()]);
        if i == 0 {
            s.add_with_config(Impl::Mooring, &f, extra);
        } else {
            s.add(Impl::Mooring, &f);
        }
    }
    // The conflicting member shares the first one's instance id.
    let mut f = s.flags(RANGE, "10000");
    f.extend(["--group-instance-id".to_owned(), ids[0].clone()]);
    let conflict = s.add_with_config(Impl::Mooring, &f, extra);
    s.start_producer(300);
    if stable_first {
        for i in 0..3 {
            s.start(i);
        }
        s.await_members(3);
        s.await_protocol();
        s.await_settled();
        let rebalances = s.num_rebalances();
        s.start(conflict);
        match protocol {
            Protocol::Classic => wait_blocking(
                &format!("the older member is fenced ({})", s.describe()),
                Duration::from_secs(20),
                || {
                    s.view(|g| g.members[0].status == Status::Dead)
                        && s.view(|g| g.members[conflict].status == Status::Joined)
                },
            ),
            Protocol::Consumer => {
                refused_while_the_instance_is_held(&mut s, conflict, rebalances);
                return;
            }
        }
    } else {
        s.start_all();
        wait_blocking(
            &format!("three joined, one dead ({})", s.describe()),
            Duration::from_secs(30),
            || s.joined() == 3 && s.dead() == 1,
        );
    }
    let fenced = s.view(|g| {
        g.members
            .iter()
            .position(|m| m.status == Status::Dead)
            .unwrap()
    });
    assert!(
        fenced == 0 || fenced == conflict,
        "{name}: member {fenced} died, it shares no instance id"
    );
    let said = s.view(|g| g.members[fenced].errors.clone());
    let stderr = s.stderr(fenced);
    eprintln!("{name}: member {fenced} out: {said:?} / {stderr}");
    let why = match protocol {
        Protocol::Classic => "fenced",
        Protocol::Consumer => "unreleased",
    };
    assert!(
        said.iter().any(|e| e.to_lowercase().contains(why)),
        "{name}: the member out did not say it was {why}: {said:?} {stderr}"
    );
    s.await_consumed(100);
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    eprintln!("{name}: {verdict:?}");
    assert_eq!(verdict.lost, 0, "{name}: records lost");
    assert!(verdict.position as u64 <= verdict.total_consumed);
}

/// Consumer protocol, the group stable: the newcomer sharing member 0's instance id is refused,
/// the group goes on unchanged (no rebalance, the three still joined, the newcomer alive and
/// unjoined); once member 0 stops cleanly (leaving with epoch -2, its assignment kept for it) the
/// newcomer takes its place without a restart, and nothing is lost or consumed twice.
fn refused_while_the_instance_is_held(s: &mut Scenario, conflict: usize, rebalances: u32) {
    let name = s.group.clone();
    s.await_consumed(300);
    assert_eq!(
        s.num_rebalances(),
        rebalances,
        "{name}: a member joining with an instance id in use caused a rebalance ({})",
        s.describe()
    );
    assert_eq!(s.joined(), 3, "{name}: {}", s.describe());
    let newcomer = s.view(|g| g.members[conflict].status);
    assert_eq!(newcomer, Status::Started, "{name}: {}", s.describe());
    s.stop(0, true);
    wait_blocking(
        &format!("the newcomer takes the instance's place ({})", s.describe()),
        Duration::from_secs(45),
        || s.view(|g| g.members[conflict].status == Status::Joined),
    );
    s.await_consumed(100);
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean(&name);
    verdict.assert_committed_all(&name);
    let errors = s.view(|g| g.members[conflict].errors.clone());
    assert!(errors.is_empty(), "{name}: the newcomer failed: {errors:?}");
}

#[test]
fn fencing_static_consumer_stable() {
    fencing_static_consumer(Protocol::Classic, "fencing-stable", true);
}

#[test]
fn fencing_static_consumer_all() {
    fencing_static_consumer(Protocol::Classic, "fencing-all", false);
}

fn consumer_failure(protocol: Protocol, name: &str, autocommit: bool) {
    let cluster = shared(protocol);
    let mut s = Scenario::new(&cluster, name, 1, protocol);
    let mut f = s.flags(RANGE, "6000");
    if autocommit {
        f.push("--enable-autocommit".to_owned());
    }
    s.add_n(3, Impl::Mooring, &f);
    s.start_all();
    s.await_all_members();
    s.await_protocol();
    s.await_settled();
    let owner = s.owner(0).expect("partition 0 has an owner");
    s.start_producer(300);
    s.await_consumed(300);
    // SIGKILL: no commit, no leave; the group notices after the session timeout.
    s.stop(owner, false);
    wait_blocking(
        &format!("two members, partition 0 taken over ({})", s.describe()),
        Duration::from_secs(17),
        || s.joined() == 2 && s.owner(0).is_some_and(|o| o != owner),
    );
    s.await_consumed(500);
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    eprintln!("{name}: {verdict:?}");
    assert!(
        verdict.violations.is_empty(),
        "{name}: {:?}",
        verdict.violations
    );
    assert!(
        verdict.overlaps.is_empty(),
        "{name}: {:?}",
        verdict.overlaps
    );
    assert_eq!(verdict.lost, 0, "{name}: records lost");
    // A hard failure may duplicate (what the killed member consumed after its last commit).
    assert!(
        verdict.position as u64 <= verdict.total_consumed,
        "{name}: position greater than the records consumed"
    );
    if !autocommit {
        verdict.assert_committed_all(name);
    }
}

#[test]
fn consumer_failure_manual_commit() {
    consumer_failure(Protocol::Classic, "failure-manual", false);
}

#[test]
fn consumer_failure_autocommit() {
    consumer_failure(Protocol::Classic, "failure-auto", true);
}

/// Consumers started one by one, then stopped one by one; the partition stays readable after
/// every rebalance.
fn group_consumption_scenario(protocol: Protocol) {
    let cluster = shared(protocol);
    let mut s = Scenario::new(&cluster, "group", 1, protocol);
    let f = s.flags(RANGE, "6000");
    s.add_n(3, Impl::Mooring, &f);
    s.start_producer(300);
    for i in 0..3 {
        s.start(i);
        s.await_members(i + 1);
        s.await_consumed(100);
    }
    s.await_protocol();
    for i in 0..2 {
        s.stop(i, true);
        s.await_members(2 - i);
        s.await_consumed(100);
    }
    let ends = s.drain();
    s.stop(2, true);
    let verdict = s.verdict(&ends);
    verdict.assert_clean("group consumption");
    verdict.assert_committed_all("group consumption");
}

#[test]
fn group_consumption() {
    group_consumption_scenario(Protocol::Classic);
}

// ---- AssignmentValidationTest --------------------------------------------------------------

fn valid_assignment(protocol: Protocol, name: &str, strategy: &str) {
    const PARTITIONS: u32 = 6;
    let cluster = shared(protocol);
    let mut s = Scenario::new(&cluster, name, PARTITIONS, protocol);
    let f = s.flags(strategy, "6000");
    s.add_n(3, Impl::Mooring, &f);
    for n in 1..=3 {
        s.start(n - 1);
        s.await_members(n);
        wait_blocking(
            &format!("a valid assignment over {n} members ({})", s.describe()),
            Duration::from_secs(30),
            || {
                s.view(|g| {
                    let joined: Vec<&MemberView> = g
                        .members
                        .iter()
                        .filter(|m| m.status == Status::Joined)
                        .collect();
                    let total: usize = joined.iter().map(|m| m.assignment.len()).sum();
                    let union: BTreeSet<i32> = joined
                        .iter()
                        .flat_map(|m| m.assignment.iter().copied())
                        .collect();
                    joined.len() == n
                        && total == PARTITIONS as usize
                        && union.len() == PARTITIONS as usize
                        && joined.iter().all(|m| !m.assignment.is_empty())
                })
            },
        );
    }
    s.await_protocol();
    s.stop_all();
    let overlaps = s.view(Global::overlaps);
    let violations = s.view(|g| g.violations.clone());
    assert!(overlaps.is_empty(), "{name}: {overlaps:?}");
    assert!(violations.is_empty(), "{name}: {violations:?}");
}

#[test]
fn valid_assignment_range() {
    valid_assignment(Protocol::Classic, "assign-range", RANGE);
}

#[test]
fn valid_assignment_cooperative_sticky() {
    valid_assignment(Protocol::Classic, "assign-coop", COOPERATIVE);
}

#[test]
fn valid_assignment_roundrobin_and_sticky() {
    valid_assignment(
        Protocol::Classic,
        "assign-rr",
        "org.apache.kafka.clients.consumer.RoundRobinAssignor",
    );
    valid_assignment(
        Protocol::Classic,
        "assign-sticky",
        "org.apache.kafka.clients.consumer.StickyAssignor",
    );
}

/// The cooperative protocol through a rolling bounce: only moving partitions are revoked, and
/// still nothing is lost or duplicated. (The consumer protocol is always incremental: its
/// rolling bounce is [`consumer_protocol::consumer_bounce_rolling`].)
#[test]
fn consumer_bounce_rolling_cooperative() {
    let cluster = Cluster::shared();
    let mut s = Scenario::new(&cluster, "bounce-coop", 3, Protocol::Classic);
    let f = s.flags(COOPERATIVE, "6000");
    s.add_n(3, Impl::Mooring, &f);
    s.start_producer(300);
    s.start_all();
    s.await_all_members();
    for i in 0..3 {
        s.stop(i, true);
        s.start(i);
        s.await_all_members();
        s.await_consumed(100);
    }
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean("cooperative rolling bounce");
    verdict.assert_committed_all("cooperative rolling bounce");
}

/// The scenarios above under KIP-848's consumer group protocol, as Kafka's matrix runs them
/// (`group_protocol=consumer`, the remote assignor `range` unless the scenario names another).
mod consumer_protocol {
    use super::*;

    #[test]
    fn consumer_bounce_rolling() {
        consumer_bounce(
            Protocol::Consumer,
            "848-bounce-rolling",
            true,
            [Impl::Mooring; 3],
            false,
        );
    }

    #[test]
    fn consumer_bounce_all() {
        consumer_bounce(
            Protocol::Consumer,
            "848-bounce-all",
            false,
            [Impl::Mooring; 3],
            false,
        );
    }

    /// Ours and Kafka's Java VerifiableConsumer (`--group-protocol consumer`) in one consumer
    /// group, swapped at every restart.
    #[test]
    fn consumer_bounce_rolling_mixed_with_java() {
        consumer_bounce(
            Protocol::Consumer,
            "848-bounce-mixed",
            true,
            [Impl::Java, Impl::Mooring, Impl::Java],
            true,
        );
    }

    #[test]
    fn static_consumer_bounce_rolling() {
        static_consumer_bounce(Protocol::Consumer, "848-static-rolling", RANGE, true, true);
    }

    #[test]
    fn static_consumer_bounce_all() {
        static_consumer_bounce(Protocol::Consumer, "848-static-all", RANGE, false, true);
    }

    #[test]
    fn dynamic_consumer_bounce_rolling_moves_partitions() {
        static_consumer_bounce(
            Protocol::Consumer,
            "848-dynamic-rolling",
            RANGE,
            true,
            false,
        );
    }

    #[test]
    fn fencing_static_consumer_stable() {
        fencing_static_consumer(Protocol::Consumer, "848-fencing-stable", true);
    }

    #[test]
    fn fencing_static_consumer_all() {
        fencing_static_consumer(Protocol::Consumer, "848-fencing-all", false);
    }

    #[test]
    fn consumer_failure_manual_commit() {
        consumer_failure(Protocol::Consumer, "848-failure-manual", false);
    }

    #[test]
    fn consumer_failure_autocommit() {
        consumer_failure(Protocol::Consumer, "848-failure-auto", true);
    }

    #[test]
    fn group_consumption() {
        group_consumption_scenario(Protocol::Consumer);
    }

    /// Kafka's matrix for the consumer protocol: the broker's `range` and `uniform` assignors.
    #[test]
    fn valid_assignment_range_and_uniform() {
        valid_assignment(Protocol::Consumer, "848-assign-range", "range");
        valid_assignment(Protocol::Consumer, "848-assign-uniform", "uniform");
    }
}
