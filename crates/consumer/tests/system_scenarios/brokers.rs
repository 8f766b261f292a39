//! The scenarios that restart brokers (kafkatest's `test_broker_rolling_bounce`,
//! `test_broker_failure`, `test_static_consumer_persisted_after_rejoin`), each test on a
//! three-node cluster of its own: the classic protocol's tests here, the consumer protocol's in
//! [`consumer_protocol`] (one test per protocol, so each fits its time on a loaded machine and a
//! broker without KIP-848 leaves out exactly the tests it cannot run). Every step's wall time is
//! printed as it ends.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use mooring_client::{Client, ClientConfig};
use mooring_testkit::{kafka_script, Cluster};

use crate::driver::{Impl, Protocol, Scenario, RANGE};

/// The wall time of a scenario's steps, printed as each ends: where a slow run spent its time.
struct Steps {
    start: Instant,
    last: Instant,
}

impl Steps {
    fn new() -> Self {
        let now = Instant::now();
        Steps {
            start: now,
            last: now,
        }
    }

    /// Ends the step `what`: prints its duration and the time since the scenario began.
    fn done(&mut self, what: &str) {
        let now = Instant::now();
        eprintln!(
            "[{:6.1} s] {what}: {:.1} s",
            (now - self.start).as_secs_f64(),
            (now - self.last).as_secs_f64()
        );
        self.last = now;
    }
}

/// A three-node cluster of the broker scenarios, each scenario with its own name and ports. A
/// node can still lose its port to a client's connection and fail to start ("Address already in
/// use"): try again (each attempt stops what the last one started), and stop everything before
/// giving up.
fn dedicated_cluster(name: &str, port_base: u16) -> Cluster {
    for attempt in 1..=3 {
        match std::panic::catch_unwind(|| Cluster::dedicated(name, 3, port_base)) {
            Ok(cluster) => return cluster,
            Err(_) => eprintln!("starting cluster {name}: attempt {attempt} failed"),
        }
    }
    let _ = Command::new(kafka_script())
        .args(["--cluster", name, "stop"])
        .status();
    panic!("cluster {name} did not start in three attempts");
}

/// Broker rolling bounce (every node restarted cleanly, one at a time), then a broker failure
/// (SIGKILL of the group's coordinator): no rebalance, nothing lost, no duplicate, everything
/// committed. One three-node cluster for both.
fn broker_bounce_then_failure(protocol: Protocol, cluster_name: &str, name: &str) {
    let mut steps = Steps::new();
    let cluster = dedicated_cluster(cluster_name, 26000);
    steps.done("three-node cluster started");
    if protocol == Protocol::Consumer {
        cluster.require_consumer_protocol();
    }
    let mut s = Scenario::new(&cluster, name, 1, protocol);
    // Sessions outlast a coordinator's move (as kafkatest's 30 s).
    let f = s.flags(RANGE, "30000");
    s.add_n(3, Impl::Mooring, &f);
    steps.done("topic and group set up");
    s.start_producer(200);
    s.start_all();
    s.await_all_members();
    s.await_consumed(200);
    steps.done("the group consuming");
    let rebalances = s.num_rebalances();
    for node in 1..=3 {
        cluster.restart(node);
        steps.done(&format!("node {node} restarted"));
        s.await_all_members();
        s.await_consumed(200);
        steps.done("consuming again");
    }
    let after_bounce = s.num_rebalances() - rebalances;
    eprintln!("{protocol:?} broker rolling bounce: {after_bounce} unexpected rebalances");
    assert_eq!(
        after_bounce, 0,
        "{protocol:?}: broker rolling bounce caused rebalances"
    );

    // kafkatest picks a broker arbitrarily ("TODO: target the coordinator"); we kill the
    // group's coordinator.
    let coordinator = Admin::new(&cluster).coordinator(&s.group);
    steps.done("coordinator looked up");
    eprintln!("broker failure: SIGKILL node {coordinator}, the group's coordinator");
    cluster.kill(usize::try_from(coordinator).unwrap());
    s.await_consumed(500);
    steps.done(&format!("node {coordinator} killed, consuming again"));
    let after_failure = s.num_rebalances() - rebalances;
    let what = format!("{protocol:?} broker bounce and failure");
    eprintln!("{what}: {after_failure} unexpected rebalances");
    assert_eq!(
        after_failure, 0,
        "{what}: the broker failure caused a rebalance"
    );
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean(&what);
    verdict.assert_committed_all(&what);
    steps.done("drained and verified");
}

#[test]
fn broker_rolling_bounce_then_failure() {
    broker_bounce_then_failure(Protocol::Classic, "t-vc-brokers", "brokers");
}

/// Our admin client on a scenario's cluster, for the lookups that Kafka's tools (a JVM started
/// for each) took 6-17 s for at load 30 on 2 cores: the coordinator of a group and its static
/// members. A client of its own for each lookup, so none outlives a broker's restart.
struct Admin {
    runtime: tokio::runtime::Runtime,
    bootstrap: Vec<String>,
}

impl Admin {
    fn new(cluster: &Cluster) -> Self {
        Admin {
            runtime: tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap(),
            bootstrap: cluster.bootstrap().split(',').map(str::to_owned).collect(),
        }
    }

    fn client(&self) -> Client {
        self.runtime
            .block_on(Client::connect(ClientConfig::new(self.bootstrap.clone())))
            .unwrap()
    }

    /// The node coordinating `group` (FindCoordinator).
    fn coordinator(&self, group: &str) -> i32 {
        let client = self.client();
        self.runtime
            .block_on(client.find_coordinator(group))
            .unwrap()
    }

    /// The coordinator's view of a group of static members: `group.instance.id` → member id
    /// (DescribeGroups for a classic group, ConsumerGroupDescribe for a consumer-protocol one).
    fn static_members(&self, group: &str, protocol: Protocol) -> BTreeMap<String, String> {
        let client = self.client();
        self.runtime.block_on(async {
            match protocol {
                Protocol::Classic => client
                    .describe_group(group)
                    .await
                    .unwrap()
                    .members
                    .into_iter()
                    .filter_map(|m| Some((m.group_instance_id?, m.member_id)))
                    .collect(),
                Protocol::Consumer => client
                    .describe_consumer_group(group)
                    .await
                    .unwrap()
                    .map(|g| g.members)
                    .unwrap_or_default()
                    .into_iter()
                    .filter_map(|m| Some((m.instance_id?, m.member_id)))
                    .collect(),
            }
        })
    }
}

/// The coordinator's view of a group of static members: `group.instance.id` → member id, once
/// every one of the scenario's members is listed.
fn member_ids(admin: &Admin, s: &Scenario) -> BTreeMap<String, String> {
    let mut ids = BTreeMap::new();
    mooring_testkit::wait_blocking(
        &format!(
            "the coordinator lists {} static members ({})",
            s.members.len(),
            s.describe()
        ),
        Duration::from_secs(60),
        || {
            ids = admin.static_members(&s.group, s.protocol);
            ids.len() == s.members.len()
        },
    );
    ids
}

/// Restarts every member cleanly, one at a time (`rolling`) or all at once, as kafkatest's
/// `rolling_bounce_consumers` and `bounce_all_consumers` do, once.
fn bounce_consumers(s: &mut Scenario, rolling: bool) {
    let n = s.members.len();
    if rolling {
        for i in 0..n {
            s.stop(i, true);
            mooring_testkit::wait_blocking("the member is dead", Duration::from_secs(15), || {
                s.dead() == 1
            });
            s.start(i);
            s.await_all_members();
            s.await_consumed(50);
        }
    } else {
        for i in 0..n {
            s.signal_stop(i, true);
        }
        for i in 0..n {
            s.reap(i, true);
        }
        for i in 0..n {
            s.start(i);
        }
        s.await_all_members();
        s.await_consumed(50);
    }
}

/// Waits until every partition's commit has moved past `before` (the group commits again).
fn await_commits_past(s: &Scenario, before: &BTreeMap<i32, i64>) {
    mooring_testkit::wait_blocking(
        &format!("commits past {before:?} ({})", s.describe()),
        Duration::from_secs(45),
        || {
            s.view(|g| {
                before
                    .iter()
                    .all(|(p, c)| g.committed.get(p).is_some_and(|now| now > c))
            })
        },
    );
}

/// Kafka's `test_static_consumer_persisted_after_rejoin` on a three-node cluster of its own, one
/// group per bounce mode in `plan` ((rolling, name): one member at a time, or all at once):
/// three static members of each group consume and commit; they restart, which gives each a new
/// member id under its instance id; then every broker restarts in turn, so the coordinator moves
/// and loads the group from `__consumer_offsets`, where the new ids must be. The members must
/// keep consuming and committing after every broker restart under the ids they rejoined with:
/// never fenced by a stale member id, no rebalance, nothing lost against the producer's
/// acknowledgements, nothing consumed twice, everything committed.
///
/// Its time goes to Kafka's JVMs, hardly to the consumers. Measured at load 30 on 2 cores with
/// three groups on one cluster (464 s in all): cluster start 42 s, each broker restart 43-49 s,
/// each listing of a group's member ids by ConsumerGroupCommand 9-17 s (nine of them), each
/// lookup of the three coordinators 27-34 s (three); a group's consumer restarts 1-3 s,
/// consuming and committing again after a broker restart about 1 s. So the member ids and
/// coordinators come from our admin client ([`Admin`], 0.1-0.6 s), and a test holds one
/// protocol's groups.
fn static_consumer_persisted_after_rejoin(
    protocol: Protocol,
    cluster_name: &str,
    plan: &[(bool, &str)],
) {
    let mut steps = Steps::new();
    let cluster = dedicated_cluster(cluster_name, 22000);
    steps.done("three-node cluster started");
    if protocol == Protocol::Consumer {
        cluster.require_consumer_protocol();
    }
    let admin = Admin::new(&cluster);
    let mut groups: Vec<(bool, Scenario)> = plan
        .iter()
        .map(|&(rolling, name)| {
            let mut s = Scenario::new(&cluster, name, 3, protocol);
            for i in 0..3 {
                let mut f = s.flags(RANGE, "30000");
                f.extend(["--group-instance-id".to_owned(), format!("{name}-{i}")]);
                s.add(Impl::Mooring, &f);
            }
            (rolling, s)
        })
        .collect();
    steps.done("topics and groups set up");
    for (_, s) in &mut groups {
        s.start_producer(100);
        s.start_all();
    }
    for (_, s) in &groups {
        s.await_all_members();
        s.await_consumed(100);
    }
    steps.done("every group consuming");

    // The restart: same instance ids, new member ids, which the coordinator must persist.
    let mut rejoined = Vec::new();
    for (rolling, s) in &mut groups {
        let before = member_ids(&admin, s);
        steps.done(&format!("{}: member ids listed", s.group));
        bounce_consumers(s, *rolling);
        steps.done(&format!("{}: members restarted", s.group));
        let after = member_ids(&admin, s);
        steps.done(&format!("{}: new member ids listed", s.group));
        eprintln!("{}: member ids {before:?} -> {after:?}", s.group);
        assert_eq!(
            before.keys().collect::<Vec<_>>(),
            after.keys().collect::<Vec<_>>(),
            "{}: the instance ids changed",
            s.group
        );
        for (instance, id) in &after {
            assert_ne!(
                &before[instance], id,
                "{}: {instance} rejoined under its old member id",
                s.group
            );
        }
        rejoined.push(after);
    }
    let rebalances: Vec<u32> = groups.iter().map(|(_, s)| s.num_rebalances()).collect();

    // Every broker restarts in turn (so every group's coordinator moves at least once); after
    // each, every group consumes and commits again.
    let coordinators: Vec<i32> = groups
        .iter()
        .map(|(_, s)| admin.coordinator(&s.group))
        .collect();
    steps.done(&format!("the groups' coordinators: {coordinators:?}"));
    for node in 1..=3 {
        let committed: Vec<BTreeMap<i32, i64>> = groups
            .iter()
            .map(|(_, s)| s.view(|g| g.committed.clone()))
            .collect();
        cluster.restart(node);
        steps.done(&format!("node {node} restarted"));
        for ((_, s), before) in groups.iter().zip(&committed) {
            s.await_all_members();
            s.await_consumed(100);
            await_commits_past(s, before);
            steps.done(&format!("{}: consuming and committing again", s.group));
        }
    }

    for (((_, s), ids), rebalances) in groups.iter_mut().zip(&rejoined).zip(rebalances) {
        let name = s.group.clone();
        let now = member_ids(&admin, s);
        steps.done(&format!("{name}: member ids listed"));
        assert_eq!(
            &now, ids,
            "{name}: the members' ids after the broker bounce are not the ones they rejoined with"
        );
        let after_bounce = s.num_rebalances() - rebalances;
        eprintln!("{name}: {after_bounce} rebalances during the broker bounce");
        assert_eq!(
            after_bounce, 0,
            "{name}: the broker bounce caused rebalances"
        );
        let ends = s.drain();
        s.stop_all();
        for i in 0..s.members.len() {
            let errors = s.view(|g| g.members[i].errors.clone());
            let stderr = s.stderr(i);
            assert!(
                errors.is_empty() && !stderr.to_lowercase().contains("fenced"),
                "{name}: member {i} was fenced or failed: {errors:?}\n{stderr}"
            );
        }
        let verdict = s.verdict(&ends);
        verdict.assert_clean(&name);
        verdict.assert_committed_all(&name);
        steps.done(&format!("{name}: drained and verified"));
    }
}

/// The classic protocol's bounce modes side by side: one group restarts its members one at a
/// time, the other all at once.
#[test]
fn static_consumer_persisted_after_rejoin_broker_rolling_bounce() {
    static_consumer_persisted_after_rejoin(
        Protocol::Classic,
        "t-vc-static-rejoin",
        &[(true, "rejoin-rolling"), (false, "rejoin-all")],
    );
}

/// The scenarios under KIP-848's consumer protocol, each on a cluster of its own; on a broker
/// without the protocol the runner leaves them out (their names say `consumer_protocol`).
mod consumer_protocol {
    use super::*;

    #[test]
    fn broker_rolling_bounce_then_failure() {
        broker_bounce_then_failure(Protocol::Consumer, "t-vc-848-brokers", "848-brokers");
    }

    /// One group, its members restarted one at a time (a static member restarted while its
    /// instance id is held is refused under this protocol, so all at once is the fencing
    /// scenarios' matter).
    #[test]
    fn static_consumer_persisted_after_rejoin_broker_rolling_bounce() {
        static_consumer_persisted_after_rejoin(
            Protocol::Consumer,
            "t-vc-848-static-rejoin",
            &[(true, "848-rejoin-rolling")],
        );
    }
}
