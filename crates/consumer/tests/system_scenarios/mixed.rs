//! Groups that other clients share: ours, Kafka's Java `VerifiableConsumer` and librdkafka's
//! (`tests/peers/verifiable_consumer.py`) in one group under each protocol, and a group migrating
//! online from the classic protocol to the consumer protocol and back, its members restarted one
//! at a time on the other protocol (the broker converts the group both ways under
//! `group.consumer.migration.policy=bidirectional`, Kafka 4.x's default, which `scripts/kafka`
//! writes out).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mooring_testkit::wait_blocking;

use crate::driver::{Impl, Protocol, Scenario, RANGE};
use crate::events::Status;
use crate::shared;

/// Two of ours, a Java and a librdkafka consumer, each with a client id of its own, share a
/// topic of six partitions while a producer writes: every member's own view (its event lines)
/// must agree with Kafka's (`ConsumerGroupCommand --describe --members`) on an assignment that is
/// disjoint, complete and balanced (one or two partitions each); then everything acknowledged
/// is consumed once and committed.
fn mixed_group(protocol: Protocol, name: &str) {
    const PARTITIONS: i32 = 6;
    let cluster = shared(protocol);
    let mut s = Scenario::new(&cluster, name, PARTITIONS as u32, protocol);
    let f = s.flags(RANGE, "6000");
    let mut client_ids = Vec::new();
    for (imp, id) in [
        (Impl::Mooring, "ours-0"),
        (Impl::Java, "java-0"),
        (Impl::Librdkafka, "rdkafka-0"),
        (Impl::Mooring, "ours-1"),
    ] {
        let client_id = format!("{name}-{id}");
        s.add_with_config(imp, &f, &[("client.id", &client_id)]);
        client_ids.push(client_id);
    }
    s.start_producer(300);
    s.start_all();
    let all: BTreeSet<i32> = (0..PARTITIONS).collect();
    let mut agreed = BTreeMap::new();
    wait_blocking(
        &format!(
            "every member's view and Kafka's agree on a disjoint, complete, balanced assignment, \
             every member speaking {protocol:?} ({})",
            s.describe()
        ),
        Duration::from_secs(90),
        || {
            let views: BTreeMap<String, BTreeSet<i32>> = s.view(|g| {
                client_ids
                    .iter()
                    .zip(&g.members)
                    .filter(|(_, m)| m.status == Status::Joined)
                    .map(|(id, m)| (id.clone(), m.assignment.clone()))
                    .collect()
            });
            let total: usize = views.values().map(BTreeSet::len).sum();
            let union: BTreeSet<i32> = views.values().flatten().copied().collect();
            let balanced = views.values().all(|v| (1..=2).contains(&v.len()));
            if views.len() != client_ids.len() || total != all.len() || union != all || !balanced {
                return false;
            }
            let members = s.cluster.describe_members(&s.group);
            // Under the consumer protocol every member speaks it (none is a classic member in
            // a consumer group).
            let speaking = members.iter().all(|m| match protocol {
                Protocol::Classic => m.current_epoch.is_none(),
                Protocol::Consumer => m.speaks_consumer_protocol(),
            });
            let kafka: BTreeMap<String, BTreeSet<i32>> = members
                .into_iter()
                .map(|m| {
                    let parts = m.assignment.get(&s.topic).cloned().unwrap_or_default();
                    (m.client_id, parts.into_iter().collect())
                })
                .collect();
            let same = kafka == views && speaking;
            if same {
                agreed = views;
            }
            same
        },
    );
    eprintln!("{name}: {protocol:?} group agreed on {agreed:?}");
    s.await_consumed(300);
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean(name);
    verdict.assert_committed_all(name);
}

#[test]
fn mixed_group_of_mooring_java_and_librdkafka() {
    mixed_group(Protocol::Classic, "mixed-3");
}

/// Waits until Kafka lists the group as `kind` (`Classic` or `Consumer`).
fn await_group_type(s: &Scenario, kind: &str) {
    wait_blocking(
        &format!("Kafka lists the group as {kind} ({})", s.describe()),
        Duration::from_secs(30),
        || s.cluster.group_type(&s.group).as_deref() == Some(kind),
    );
}

/// Restarts member `i` cleanly on `flags` and `config` (`None`: the scenario's), and waits until
/// every member is back and consuming.
fn restart_as(s: &mut Scenario, i: usize, flags: &[String], config: Option<&std::path::Path>) {
    s.stop(i, true);
    wait_blocking("the member is dead", Duration::from_secs(15), || {
        s.dead() == 1
    });
    s.members[i].flags = flags.to_vec();
    s.members[i].config = config.map(std::path::Path::to_path_buf);
    s.start(i);
    s.await_all_members();
    s.await_consumed(100);
}

/// Online migration, classic → consumer → classic: a classic group of ours and a Java member,
/// under load; each member in turn restarts speaking the consumer protocol (the first one to do
/// so converts the group to a consumer group, the classic members staying in it meanwhile), then
/// each in turn back to the classic protocol (the last consumer-protocol member to leave turns it
/// classic again). Nothing acknowledged is lost, nothing consumed twice, commits follow the
/// consumption throughout, and no partition is ever owned twice.
fn online_migration_classic_to_consumer_and_back() {
    let cluster = shared(Protocol::Consumer);
    let mut s = Scenario::new(&cluster, "848-migration", 3, Protocol::Consumer);
    // The classic members read the heartbeat interval the consumer protocol refuses.
    let classic_config = s.config_file("classic", &[("heartbeat.interval.ms", "500")]);
    let classic = s.flags_for(Protocol::Classic, RANGE, "6000");
    let consumer = s.flags_for(Protocol::Consumer, RANGE, "6000");
    for imp in [Impl::Mooring, Impl::Java, Impl::Mooring] {
        let i = s.add(imp, &classic);
        s.members[i].config = Some(classic_config.clone());
    }
    s.start_producer(300);
    s.start_all();
    s.await_all_members();
    s.await_consumed(100);
    await_group_type(&s, "Classic");
    for i in 0..3 {
        restart_as(&mut s, i, &consumer, None);
        if i == 0 {
            await_group_type(&s, "Consumer");
        }
    }
    wait_blocking(
        &format!(
            "every member speaks the consumer protocol ({})",
            s.describe()
        ),
        Duration::from_secs(30),
        || {
            let members = s.cluster.describe_members(&s.group);
            members.len() == 3 && members.iter().all(|m| m.speaks_consumer_protocol())
        },
    );
    for i in 0..3 {
        restart_as(&mut s, i, &classic, Some(&classic_config));
    }
    await_group_type(&s, "Classic");
    let ends = s.drain();
    s.stop_all();
    let verdict = s.verdict(&ends);
    verdict.assert_clean("online migration");
    verdict.assert_committed_all("online migration");
}

mod consumer_protocol {
    use super::*;

    #[test]
    fn mixed_group_of_mooring_java_and_librdkafka() {
        mixed_group(Protocol::Consumer, "848-mixed-3");
    }

    #[test]
    fn online_migration_from_classic_and_back() {
        online_migration_classic_to_consumer_and_back();
    }
}
