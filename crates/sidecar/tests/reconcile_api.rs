//! A `consumer`-protocol (KIP-848) member's synthetic telemetry through a sidecar without a
//! broker: the protocol's series in the scrape (checked by `promtool check metrics`), the
//! reconciliations in `/debug/rebalances`, and a static member waiting for its
//! `group.instance.id`: shown in `/readyz`, `/healthz`, `/debug/group`, `/alerts` and the
//! scrape, ready while it waits, not ready once it gives up.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{alert_entry, get, get_json, member, metric, post_events, post_events_as, sidecar};
use mooring_telemetry_schema::{
    Event, MemberIdentity, RebalanceCause, ReconcilePhases, Snapshot, TopicPartition,
};

fn p(n: i32) -> TopicPartition {
    TopicPartition::new("orders", n)
}

fn consumer_member(instance_id: Option<&str>) -> MemberIdentity {
    MemberIdentity {
        instance_id: instance_id.map(str::to_string),
        group_protocol: Some("consumer".into()),
        ..member()
    }
}

fn reconciled(
    member_epoch: i32,
    added: Vec<TopicPartition>,
    revoked: Vec<TopicPartition>,
) -> Event {
    Event::Reconciled {
        member_epoch,
        added,
        revoked,
        total_seconds: 0.4,
        phases: ReconcilePhases {
            revoke_seconds: 0.25,
            assign_seconds: 0.05,
            acknowledge_seconds: 0.1,
        },
    }
}

/// A snapshot of a consumer-protocol member in `consumer_state` at `member_epoch`.
fn snapshot(consumer_state: &str, member_epoch: i32) -> Event {
    Event::Snapshot(Snapshot {
        member_state: Some("Stable".into()),
        generation: member_epoch,
        group_protocol: Some("consumer".into()),
        consumer_state: Some(consumer_state.into()),
        ..Snapshot::default()
    })
}

fn promtool_check_metrics(text: &str) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (apt-get install -y prometheus; scripts/setup does)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // Status 1: a parse error; 3: lint remarks, none of which may be about this protocol's
    // series.
    assert!(matches!(out.status.code(), Some(0 | 3)), "promtool: {said}");
    assert!(!said.contains("error"), "promtool: {said}");
    for family in [
        "reconcile",
        "epoch",
        "instance_id",
        "group_protocol",
        "member_state",
    ] {
        assert!(!said.contains(family), "promtool on {family}: {said}");
    }
}

#[tokio::test]
async fn a_consumer_protocol_member_s_series_and_timeline() {
    let s = sidecar("").await;
    let me = consumer_member(None);
    let events = vec![
        snapshot("joining", 0),
        Event::RebalanceStarted {
            cause: RebalanceCause::MemberJoined,
            generation: 0,
            protocol: "cooperative".into(),
        },
        reconciled(1, vec![p(0), p(1), p(2)], vec![]),
        Event::RebalanceCompleted {
            generation: 1,
            total_seconds: 0.4,
            phases: Default::default(),
        },
        // An epoch bump that moves nothing of this member's, then a fencing.
        reconciled(2, vec![], vec![]),
        Event::RebalanceStarted {
            cause: RebalanceCause::EpochFenced,
            generation: 0,
            protocol: "cooperative".into(),
        },
        Event::PartitionsLost {
            partitions: vec![p(0), p(1), p(2)],
            duration_seconds: 0.0,
            timed_out: false,
        },
        reconciled(4, vec![p(0)], vec![]),
        Event::RebalanceCompleted {
            generation: 4,
            total_seconds: 0.4,
            phases: Default::default(),
        },
        snapshot("stable", 4),
    ];
    let (status, body) = post_events_as(s.addr, &me, 0, &events).await;
    assert_eq!(status, 202, "{body}");
    let (_, text) = get(s.addr, "/metrics").await;
    promtool_check_metrics(&text);
    for (series, want) in [
        ("mooring_group_protocol{protocol=\"consumer\"}", 1.0),
        ("mooring_group_protocol{protocol=\"classic\"}", 0.0),
        ("mooring_consumer_member_state{state=\"stable\"}", 1.0),
        ("mooring_consumer_member_state{state=\"joining\"}", 0.0),
        ("mooring_member_epoch", 4.0),
        ("mooring_group_generation", 4.0),
        ("mooring_reconciliations_total", 3.0),
        ("mooring_reconcile_duration_seconds_count", 3.0),
        (
            "mooring_reconcile_phase_duration_seconds_count{phase=\"revoke\"}",
            3.0,
        ),
        (
            "mooring_reconcile_phase_duration_seconds_sum{phase=\"revoke\"}",
            0.75,
        ),
        (
            "mooring_reconcile_phase_duration_seconds_count{phase=\"acknowledge\"}",
            3.0,
        ),
        ("mooring_reconcile_partitions_moved_bucket{le=\"0\"}", 1.0),
        ("mooring_reconcile_partitions_moved_bucket{le=\"1\"}", 2.0),
        ("mooring_reconcile_partitions_moved_bucket{le=\"4\"}", 3.0),
        ("mooring_reconcile_partitions_moved_sum", 4.0),
        ("mooring_rebalances_total{cause=\"member_joined\"}", 1.0),
        ("mooring_rebalances_total{cause=\"epoch_fenced\"}", 1.0),
        ("mooring_rebalance_duration_seconds_count", 2.0),
        ("mooring_assigned_partitions", 1.0),
        ("mooring_instance_id_unreleased_wait_seconds", 0.0),
        ("mooring_group_epoch", -1.0),
    ] {
        assert_eq!(metric(&text, series), Some(want), "{series}:\n{text}");
    }
    let total: f64 = text
        .lines()
        .filter(|l| l.starts_with("mooring_rebalances_total{"))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum();
    assert_eq!(
        total, 2.0,
        "the epoch bump that moved nothing is not a rebalance"
    );

    let r = get_json(s.addr, "/debug/rebalances").await;
    let list = r["rebalances"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{r}");
    let fenced = &list[1];
    assert_eq!(fenced["cause"], "epoch_fenced");
    assert_eq!(fenced["protocol"], "consumer");
    assert_eq!(fenced["lost"].as_array().unwrap().len(), 3);
    assert_eq!(fenced["reconciliation"]["member_epoch_before"], 0);
    assert_eq!(fenced["reconciliation"]["member_epoch"], 4);
    assert_eq!(fenced["reconciliation"]["phases"]["revoke_seconds"], 0.25);
    let ready = get_json(s.addr, "/readyz").await;
    assert_eq!(ready["group_protocol"], "consumer", "{ready}");
    assert_eq!(ready["member_epoch"], 4, "{ready}");
    assert_eq!(ready["consumer_state"], "stable", "{ready}");
}

#[tokio::test]
async fn a_member_waiting_for_its_instance_id_stays_ready_until_it_gives_up() {
    let s =
        sidecar("[alerts.instance_id_unreleased_seconds]\nwarning = 0.05\ncritical = 3600\n").await;
    let me = consumer_member(Some("orders-consumer-2"));
    let waits: Vec<Event> = (1..=2)
        .map(|attempt| Event::InstanceIdUnreleased {
            instance_id: "orders-consumer-2".into(),
            attempt,
            retry_in_seconds: Some(1.0),
        })
        .collect();
    assert_eq!(post_events_as(s.addr, &me, 0, &waits).await.0, 202);
    let (status, body) = get(s.addr, "/readyz").await;
    assert_eq!(status, 200, "a waiting member is ready: {body}");
    let ready: serde_json::Value = serde_json::from_str(&body).unwrap();
    let wait = &ready["waiting_for_instance_id"];
    assert_eq!(wait["instance_id"], "orders-consumer-2", "{ready}");
    assert_eq!(wait["attempt"], 2, "{ready}");
    assert_eq!(wait["waiting"], true, "{ready}");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, body) = get(s.addr, "/healthz").await;
    let health: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(
        health["instance_id_unreleased"]["waited_seconds"]
            .as_f64()
            .unwrap()
            >= 0.1
    );
    let group = get_json(s.addr, "/debug/group").await;
    assert_eq!(group["instance_id_unreleased"]["attempt"], 2, "{group}");
    assert_eq!(
        group["member"]["consumer_state"], "instance_id_unreleased",
        "{group}"
    );
    let alerts = get_json(s.addr, "/alerts").await;
    let entry = alert_entry(&alerts, "instance_id_unreleased_seconds");
    assert_eq!(entry["level"], 1, "{entry}");
    assert!(entry["value"].as_f64().unwrap() >= 0.1, "{entry}");
    let (_, text) = get(s.addr, "/metrics").await;
    assert_eq!(
        metric(&text, "mooring_instance_id_unreleased_attempts_total"),
        Some(2.0)
    );
    assert!(metric(&text, "mooring_instance_id_unreleased_wait_seconds").unwrap() >= 0.1);
    assert_eq!(
        metric(
            &text,
            "mooring_alert_level{alert=\"instance_id_unreleased_seconds\"}"
        ),
        Some(1.0)
    );
    assert_eq!(
        metric(
            &text,
            "mooring_consumer_member_state{state=\"instance_id_unreleased\"}"
        ),
        Some(1.0)
    );

    // The bound passed: the member gives up, and is not ready.
    let give_up = [Event::InstanceIdUnreleased {
        instance_id: "orders-consumer-2".into(),
        attempt: 3,
        retry_in_seconds: None,
    }];
    post_events_as(s.addr, &me, 2, &give_up).await;
    let (status, body) = get(s.addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("gave up waiting for its group.instance.id"),
        "{body}"
    );
    let (_, text) = get(s.addr, "/metrics").await;
    assert_eq!(
        metric(&text, "mooring_instance_id_unreleased_wait_seconds"),
        Some(0.0)
    );
}

/// A sidecar restarted during the wait learns of it from the snapshot.
#[tokio::test]
async fn a_snapshot_shows_a_wait_the_events_did_not() {
    let s = sidecar("").await;
    let me = consumer_member(Some("orders-consumer-2"));
    post_events_as(s.addr, &me, 10, &[snapshot("instance_id_unreleased", 0)]).await;
    let (status, body) = get(s.addr, "/readyz").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("\"instance_id\":\"orders-consumer-2\""),
        "{body}"
    );
    post_events_as(s.addr, &me, 11, &[snapshot("joining", 0)]).await;
    let ready = get_json(s.addr, "/debug/group").await;
    assert!(
        ready["instance_id_unreleased"].is_null(),
        "the wait ended: {ready}"
    );
}

/// An exporter from before the consumer protocol: a classic member, as before.
#[tokio::test]
async fn a_member_that_does_not_say_its_protocol_is_classic() {
    let s = sidecar("").await;
    let events = [
        Event::RebalanceStarted {
            cause: RebalanceCause::MemberJoined,
            generation: -1,
            protocol: "eager".into(),
        },
        Event::RebalanceCompleted {
            generation: 1,
            total_seconds: 0.2,
            phases: Default::default(),
        },
    ];
    assert_eq!(post_events(s.addr, &events).await.0, 202);
    let (_, text) = get(s.addr, "/metrics").await;
    for (series, want) in [
        ("mooring_group_protocol{protocol=\"classic\"}", 1.0),
        ("mooring_group_protocol{protocol=\"consumer\"}", 0.0),
        ("mooring_rebalances_total{cause=\"member_joined\"}", 1.0),
        ("mooring_member_epoch", -1.0),
        ("mooring_reconciliations_total", 0.0),
        ("mooring_group_generation", 1.0),
    ] {
        assert_eq!(metric(&text, series), Some(want), "{series}");
    }
}
