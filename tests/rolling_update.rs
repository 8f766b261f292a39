//! The rolling update of a StatefulSet, simulated faithfully with real processes on the real
//! broker.
//!
//! Three members of one group (`orders-demo`, the example service of `deploy/`), each with its own
//! `mooring-sidecar` process as a pod has its sidecar (own port, the member's telemetry exporter
//! pointed at it), consume a 6-partition topic while Kafka's VerifiableProducer sends a steady
//! stream. The members are restarted one at a time in StatefulSet order, highest ordinal first
//! (`member-2`, `member-1`, `member-0`): the pod is terminated as the kubelet does (SIGTERM to the
//! consumer, which drains, commits and closes, and after its exit SIGTERM to the native sidecar,
//! each within a grace period), then started again under the same name, and the next pod is
//! touched only once the new sidecar's `/readyz` answers 200, as the StatefulSet controller waits
//! for Ready.
//!
//! With static membership (`group.instance.id` = the pod name) it asserts: no rebalance (every
//! member's generation, from its sidecar, is the one the group had before the update, and no
//! sidecar's `mooring_rebalances_total` moves while another member restarts; a restarted
//! member's new sidecar shows no rebalance either: the static rejoin is not one), no record lost,
//! none processed twice, every record checked against what the broker acknowledged. It prints each
//! partition's longest pause in processing during the update.
//!
//! The same update with dynamic members (no instance id) shows the difference: each restart is a
//! LeaveGroup and a join, two rebalances or more; it asserts no loss and that rebalances happened,
//! and reports the duplicates (allowed there) and the rebalance count.
//!
//! Both group protocols: under `group.protocol=consumer` (KIP-848) a static member's clean close
//! sends epoch -2, the broker keeps its assignment for the session timeout, and the new process
//! with the same instance id takes it back; the survivors see no revocation. Dynamic members
//! under it leave (epoch -1) and rejoin, moving only the partitions that must move. A surge
//! rollout (a Deployment's `maxSurge`) starts the new process while the old one still holds the
//! instance id: the broker answers it UNRELEASED_INSTANCE_ID until the old one leaves, and the new
//! one waits instead of failing. An online migration rolls a classic group to `consumer` and
//! back, member by member, under load.
//!
//! `cargo nextest run -p mooring-e2e --test rolling_update --no-capture` prints the tables; each
//! ends with the longest pause of any partition, for the side-by-side comparison.

mod rolling;

use rolling::pod::Protocol::{Classic, Consumer};
use rolling::rollout::{report, rollout, Outcome, Scenario};
use rolling::PARTITIONS;

fn assert_exact(o: &Outcome) {
    assert_eq!(o.lost, 0, "records lost: {o:?}");
    assert_eq!(o.duplicates, 0, "records processed twice: {o:?}");
    assert_eq!(o.wrong_values, 0, "{o:?}");
    assert_eq!(o.longest_pause.len(), PARTITIONS as usize, "{o:?}");
}

#[test]
fn static_members_roll_without_a_rebalance_or_a_lost_record() {
    let o = rollout(Scenario {
        name: "classic-static",
        static_members: true,
        phases: &[Classic, Classic],
        surge: false,
        ports: 25_000..26_500,
    });
    report("classic-static", &o);
    assert_exact(&o);
    assert_eq!(
        o.generations_after, o.generation_before,
        "the group's generation moved: {o:?}"
    );
    assert_eq!(
        o.rebalances_seen_by_others, 0,
        "the running members' sidecars counted rebalances: {o:?}"
    );
    assert!(
        o.new_sidecar_rebalances.iter().all(|&n| n == 0),
        "a restarted static member's sidecar counted its rejoin as a rebalance: {o:?}"
    );
}

#[test]
fn dynamic_members_rebalance_on_every_restart() {
    let o = rollout(Scenario {
        name: "classic-dynamic",
        static_members: false,
        phases: &[Classic, Classic],
        surge: false,
        ports: 26_500..27_900,
    });
    report("classic-dynamic", &o);
    assert_eq!(o.lost, 0, "records lost: {o:?}");
    assert_eq!(o.wrong_values, 0, "{o:?}");
    let delta: i64 = o
        .generations_after
        .iter()
        .zip(&o.generation_before)
        .map(|(a, b)| a - b)
        .max()
        .unwrap_or(0);
    // Each restart is a LeaveGroup and a join: at least one new generation each (the join of
    // the new process usually lands in the rebalance the LeaveGroup started).
    assert!(
        delta >= rolling::MEMBERS as i64,
        "dynamic members rolled with only {delta} new generations: {o:?}"
    );
    assert!(o.rebalances_seen_by_others > 0, "{o:?}");
}

#[test]
fn consumer_protocol_static_members_roll_without_a_revocation_or_a_lost_record() {
    let o = rollout(Scenario {
        name: "consumer-static",
        static_members: true,
        phases: &[Consumer, Consumer],
        surge: false,
        ports: 21_500..21_900,
    });
    report("consumer-static", &o);
    // The survivors' unchanged rebalance and revocation counts are asserted during the rollout.
    assert_exact(&o);
    assert_eq!(o.revocations_seen_by_others, 0, "{o:?}");
    // The new process takes its predecessor's place without moving the group epoch: its sidecar
    // counts its first reconciliation as a static rejoin, not a rebalance.
    assert!(
        o.new_sidecar_rebalances.iter().all(|&n| n == 0),
        "a restarted static member's sidecar counted its rejoin as a rebalance: {o:?}"
    );
}

#[test]
fn consumer_protocol_dynamic_members_move_partitions_and_lose_nothing() {
    let o = rollout(Scenario {
        name: "consumer-dynamic",
        static_members: false,
        phases: &[Consumer, Consumer],
        surge: false,
        ports: 22_500..22_900,
    });
    report("consumer-dynamic", &o);
    assert_eq!(o.lost, 0, "records lost: {o:?}");
    assert_eq!(o.wrong_values, 0, "{o:?}");
    // Each leave (epoch -1) and join bumps the group's epoch, so every member's epoch moves on.
    // Whether the survivors revoke anything depends on timing: a new process that joins within
    // a heartbeat interval of the old one's leave takes the partitions the leaver freed before
    // the survivors were given them, and nothing moves for the survivors at all.
    assert!(
        o.generations_after
            .iter()
            .zip(&o.generation_before)
            .all(|(after, before)| after > before),
        "the member epochs did not move: {o:?}"
    );
}

#[test]
fn a_surge_rollout_waits_for_the_old_process_to_release_the_instance_id() {
    let o = rollout(Scenario {
        name: "consumer-surge",
        static_members: true,
        phases: &[Consumer, Consumer],
        surge: true,
        ports: 23_500..23_900,
    });
    report("consumer-surge", &o);
    assert_exact(&o);
}

#[test]
fn a_classic_group_migrates_to_the_consumer_protocol_and_back_under_load() {
    let o = rollout(Scenario {
        name: "migration",
        static_members: true,
        phases: &[Classic, Consumer, Classic],
        surge: false,
        ports: 30_500..30_900,
    });
    report("migration classic -> consumer -> classic", &o);
    assert_exact(&o);
}
