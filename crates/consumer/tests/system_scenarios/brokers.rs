//! The scenarios that restart brokers (kafkatest's `test_broker_rolling_bounce`,
//! `test_broker_failure`, `test_static_consumer_persisted_after_rejoin`), each on a three-node
//! cluster of its own. Each runs its groups side by side on that cluster, a classic group and,
//! on Kafka 4.x, a consumer-protocol one, so both protocols meet the same restarts for the price
//! of one cluster; every group is judged on its own.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use mooring_testkit::{kafka_script, unique, Cluster};

use crate::driver::{Impl, Protocol, Scenario, RANGE};

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

/// The protocols the cluster's groups speak: the consumer protocol too where the broker has it.
fn protocols(cluster: &Cluster) -> Vec<Protocol> {
    if cluster.supports_consumer_protocol() {
        vec![Protocol::Classic, Protocol::Consumer]
    } else {
        eprintln!("the consumer-protocol group is skipped: this broker predates KIP-848's default");
        vec![Protocol::Classic]
    }
}

/// The `__consumer_offsets` partition, hence the coordinator, of a group: Kafka's
/// `Utils.abs(groupId.hashCode()) % partitions`, with Java's `String.hashCode` over UTF-16.
fn offsets_partition(group: &str, partitions: i32) -> i32 {
    let hash = group.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    let abs = if hash == i32::MIN { 0 } else { hash.abs() };
    abs % partitions
}

/// A group name for `name` on the same coordinator as `group` (`scripts/kafka` gives the offsets
/// topic 10 partitions), so one broker failure takes the coordinator of both.
fn group_beside(name: &str, group: &str) -> String {
    const OFFSETS_PARTITIONS: i32 = 10;
    let target = offsets_partition(group, OFFSETS_PARTITIONS);
    loop {
        let candidate = unique(&format!("vc-{name}-g"));
        if offsets_partition(&candidate, OFFSETS_PARTITIONS) == target {
            return candidate;
        }
    }
}

/// Broker rolling bounce (every node restarted cleanly, one at a time), then a broker failure
/// (SIGKILL of the groups' coordinator, the same node for both): no rebalance, nothing lost, no
/// duplicate, everything committed, in each group. One three-node cluster for all of it.
#[test]
fn broker_rolling_bounce_then_failure() {
    let cluster = dedicated_cluster("t-vc-brokers", 26000);
    let mut groups: Vec<Scenario> = Vec::new();
    for protocol in protocols(&cluster) {
        let name = match protocol {
            Protocol::Classic => "brokers",
            Protocol::Consumer => "848-brokers",
        };
        let group = match groups.first() {
            Some(first) => group_beside(name, &first.group),
            None => unique(&format!("vc-{name}-g")),
        };
        let mut s = Scenario::with_group(&cluster, name, 1, protocol, group);
        // Sessions outlast a coordinator's move (as kafkatest's 30 s).
        let f = s.flags(RANGE, "30000");
        s.add_n(3, Impl::Mooring, &f);
        groups.push(s);
    }
    for s in &mut groups {
        s.start_producer(200);
        s.start_all();
    }
    for s in &groups {
        s.await_all_members();
        s.await_consumed(200);
    }
    let rebalances: Vec<u32> = groups.iter().map(Scenario::num_rebalances).collect();
    for node in 1..=3 {
        cluster.restart(node);
        for s in &groups {
            s.await_all_members();
            s.await_consumed(200);
        }
    }
    for (s, before) in groups.iter().zip(&rebalances) {
        let after_bounce = s.num_rebalances() - before;
        eprintln!(
            "{:?} broker rolling bounce: {after_bounce} unexpected rebalances",
            s.protocol
        );
        assert_eq!(
            after_bounce, 0,
            "{:?}: broker rolling bounce caused rebalances",
            s.protocol
        );
    }

    // kafkatest picks a broker arbitrarily ("TODO: target the coordinator"); we kill the
    // groups' coordinator.
    let coordinators: Vec<i32> = groups
        .iter()
        .map(|s| {
            cluster
                .group_state(&s.group)
                .expect("Kafka knows the group")
                .coordinator_id
        })
        .collect();
    assert!(
        coordinators.windows(2).all(|w| w[0] == w[1]),
        "the groups have different coordinators {coordinators:?}: does the offsets topic still have 10 partitions?"
    );
    let coordinator = coordinators[0];
    eprintln!("broker failure: SIGKILL node {coordinator}, the groups' coordinator");
    cluster.kill(usize::try_from(coordinator).unwrap());
    for s in &groups {
        s.await_consumed(500);
    }
    for (s, before) in groups.iter_mut().zip(&rebalances) {
        let after_failure = s.num_rebalances() - before;
        let what = format!("{:?} broker bounce and failure", s.protocol);
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
    }
}

/// Kafka's view of a group of static members: `group.instance.id` → member id, once every one of
/// the scenario's members is listed.
fn member_ids(s: &Scenario) -> BTreeMap<String, String> {
    let mut ids = BTreeMap::new();
    mooring_testkit::wait_blocking(
        &format!(
            "Kafka lists {} static members ({})",
            s.members.len(),
            s.describe()
        ),
        Duration::from_secs(60),
        || {
            ids = s
                .cluster
                .describe_members(&s.group)
                .into_iter()
                .filter_map(|m| Some((m.group_instance_id?, m.consumer_id)))
                .collect();
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

/// Kafka's `test_static_consumer_persisted_after_rejoin`, the bounce modes side by side on one
/// three-node cluster: three static members of each group consume and commit; they restart (in
/// one classic group one at a time, in the other all at once, and one at a time in the
/// consumer-protocol group), which gives each a new member id under its instance id; then every
/// broker restarts in turn, so the coordinator moves and loads the group from
/// `__consumer_offsets`, where the new ids must be. The members must keep consuming and
/// committing after every broker restart under the ids they rejoined with: never fenced by a
/// stale member id, no rebalance, nothing lost against the producer's acknowledgements, nothing
/// consumed twice, everything committed.
#[test]
fn static_consumer_persisted_after_rejoin_broker_rolling_bounce() {
    let cluster = dedicated_cluster("t-vc-static-rejoin", 22000);
    let mut plan = vec![
        (Protocol::Classic, true, "rejoin-rolling"),
        (Protocol::Classic, false, "rejoin-all"),
    ];
    if protocols(&cluster).contains(&Protocol::Consumer) {
        plan.push((Protocol::Consumer, true, "848-rejoin-rolling"));
    }
    let mut groups: Vec<(bool, Scenario)> = plan
        .into_iter()
        .map(|(protocol, rolling, name)| {
            let mut s = Scenario::new(&cluster, name, 3, protocol);
            for i in 0..3 {
                let mut f = s.flags(RANGE, "30000");
                f.extend(["--group-instance-id".to_owned(), format!("{name}-{i}")]);
                s.add(Impl::Mooring, &f);
            }
            (rolling, s)
        })
        .collect();
    for (_, s) in &mut groups {
        s.start_producer(100);
        s.start_all();
    }
    for (_, s) in &groups {
        s.await_all_members();
        s.await_consumed(100);
    }

    // The restart: same instance ids, new member ids, which the coordinator must persist.
    let mut rejoined = Vec::new();
    for (rolling, s) in &mut groups {
        let before = member_ids(s);
        bounce_consumers(s, *rolling);
        let after = member_ids(s);
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

    // Every broker restarts in turn; after each, every group consumes and commits again.
    for node in 1..=3 {
        let coordinators: Vec<i32> = groups
            .iter()
            .map(|(_, s)| {
                cluster
                    .group_state(&s.group)
                    .expect("Kafka knows the group")
                    .coordinator_id
            })
            .collect();
        let committed: Vec<BTreeMap<i32, i64>> = groups
            .iter()
            .map(|(_, s)| s.view(|g| g.committed.clone()))
            .collect();
        eprintln!("restarting node {node}; the groups' coordinators: {coordinators:?}");
        cluster.restart(node);
        for ((_, s), before) in groups.iter().zip(&committed) {
            s.await_all_members();
            s.await_consumed(100);
            await_commits_past(s, before);
        }
    }

    for (((_, s), ids), rebalances) in groups.iter_mut().zip(&rejoined).zip(rebalances) {
        let name = s.group.clone();
        assert_eq!(
            &member_ids(s),
            ids,
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
    }
}

#[cfg(test)]
mod tests {
    use super::offsets_partition;

    /// Java's `"orders".hashCode()` is -1008770331; `Utils.abs` of it is 1008770331.
    #[test]
    fn the_offsets_partition_is_javas() {
        assert_eq!(offsets_partition("orders", 10), 1_008_770_331 % 10);
        assert_eq!(offsets_partition("", 10), 0);
    }
}
