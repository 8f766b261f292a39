//! Reconciliations of synthetic `consumer`-protocol members, with the group's members per epoch
//! set by hand where the broker watch would have read them.

use std::time::{Duration, Instant};

use mooring_telemetry_schema::{
    Envelope, Event, MemberIdentity, RebalanceCause, ReconcilePhases, TopicPartition,
};

use super::*;
use crate::state::GroupMemberView;
use crate::SidecarConfig;

fn p(n: i32) -> TopicPartition {
    TopicPartition::new("orders", n)
}

fn app(watching: bool) -> App {
    let text = if watching {
        "\"bootstrap.servers\" = \"127.0.0.1:1\"\n\"group.id\" = \"g\"\n"
    } else {
        ""
    };
    App::new(SidecarConfig::from_toml(text).expect("valid"))
}

struct Member {
    identity: MemberIdentity,
    seq: u64,
}

impl Member {
    fn new(instance_id: Option<&str>) -> Member {
        Member {
            identity: MemberIdentity {
                group: "g".into(),
                member_id: "m-1".into(),
                instance_id: instance_id.map(str::to_string),
                client_id: "c".into(),
                group_protocol: Some("consumer".into()),
            },
            seq: 0,
        }
    }

    fn send(&mut self, app: &App, event: Event) {
        self.seq += 1;
        crate::ingest::apply(
            app,
            Envelope {
                schema: 1,
                seq: self.seq,
                ts_ms: T0 + self.seq,
                member: self.identity.clone(),
                event,
            },
        );
    }

    /// An answered heartbeat sent with `epoch`.
    fn beat(&mut self, app: &App, epoch: i32) {
        self.send(
            app,
            Event::Heartbeat {
                generation: epoch,
                latency_seconds: 0.001,
                error: None,
            },
        );
    }

    /// A reconciliation as the member reports it: started, the callbacks' events, reconciled,
    /// completed.
    fn reconcile(
        &mut self,
        app: &App,
        cause: RebalanceCause,
        epochs: (i32, i32),
        added: Vec<TopicPartition>,
        revoked: Vec<TopicPartition>,
    ) {
        self.send(
            app,
            Event::RebalanceStarted {
                cause,
                generation: epochs.0,
                protocol: "cooperative".into(),
            },
        );
        if !revoked.is_empty() {
            self.send(
                app,
                Event::PartitionsRevoked {
                    partitions: revoked.clone(),
                    duration_seconds: 0.01,
                    timed_out: false,
                },
            );
        }
        self.send(
            app,
            Event::Reconciled {
                member_epoch: epochs.1,
                added,
                revoked,
                total_seconds: 0.5,
                phases: ReconcilePhases {
                    revoke_seconds: 0.2,
                    assign_seconds: 0.1,
                    acknowledge_seconds: 0.2,
                },
            },
        );
        self.send(
            app,
            Event::RebalanceCompleted {
                generation: epochs.1,
                total_seconds: 0.5,
                phases: Default::default(),
            },
        );
    }
}

fn counted(app: &App, cause: RebalanceCause) -> u64 {
    app.metrics
        .rebalances_total
        .with_label_values(&[cause.as_str()])
        .get()
}

fn total(app: &App) -> u64 {
    RebalanceCause::ALL.iter().map(|c| counted(app, *c)).sum()
}

/// When the member's first line happened (its lines are numbered from here, 1 ms apart).
const T0: u64 = 1_764_000_000_000;

fn view(members: &[(&str, Option<&str>, &[&str])], answered_ms: u64) -> EpochView {
    let list: Vec<GroupMemberView> = members
        .iter()
        .map(|(id, instance, topics)| GroupMemberView {
            member_id: id.to_string(),
            instance_id: instance.map(str::to_string),
            client_id: String::new(),
            host: String::new(),
            partitions: Vec::new(),
            member_epoch: Some(1),
            subscribed_topics: topics.iter().map(|t| t.to_string()).collect(),
            subscribed_regex: None,
            target_partitions: None,
        })
        .collect();
    let mut state = State::new(1);
    state.record_epoch_view(1, &list, answered_ms);
    state.epoch_views.remove(&1).expect("recorded")
}

#[test]
fn only_reconciliations_that_move_partitions_count_and_none_twice() {
    let app = app(false);
    let mut m = Member::new(None);
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (0, 1),
        vec![p(0), p(1)],
        vec![],
    );
    // Another member's join moves the epoch without moving anything of ours.
    m.reconcile(&app, RebalanceCause::MemberJoined, (1, 2), vec![], vec![]);
    // Then ours shrinks (no broker watch: the assignment rule says a member joined).
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (2, 3),
        vec![],
        vec![p(1)],
    );
    assert_eq!(app.metrics.reconciliations_total.get(), 3);
    assert_eq!(counted(&app, RebalanceCause::MemberJoined), 2);
    assert_eq!(total(&app), 2, "the completions are not counted again");
    assert_eq!(app.metrics.member_epoch.get(), 3);
    assert_eq!(app.metrics.group_generation.get(), 3);
    assert_eq!(app.metrics.assigned_partitions.get(), 1);
    assert_eq!(app.metrics.rebalance_duration_seconds.get_sample_count(), 2);
    let moved = &app.metrics.reconcile_partitions_moved;
    assert_eq!(moved.get_sample_count(), 3);
    assert_eq!(moved.get_sample_sum(), 3.0);
    assert_eq!(app.metrics.reconcile_duration_seconds.get_sample_count(), 3);
    for (phase, sum) in [("revoke", 0.6), ("assign", 0.3), ("acknowledge", 0.6)] {
        let h = app
            .metrics
            .reconcile_phase_duration_seconds
            .with_label_values(&[phase]);
        assert_eq!(h.get_sample_count(), 3, "{phase}");
        assert!((h.get_sample_sum() - sum).abs() < 1e-9, "{phase}");
    }
    let state = app.state();
    assert_eq!(state.member.assignment, vec![p(0)]);
    assert!(state.member.stable && state.member.joined);
    let records: Vec<(i32, Option<i32>, &str)> = state
        .history
        .iter()
        .map(|r| (r.generation_before, r.generation, r.cause_basis))
        .collect();
    assert_eq!(
        records,
        [(0, Some(1), "member"), (2, Some(3), "assignment")]
    );
    let last = state.history.back().expect("a record");
    assert_eq!(last.revoked, vec![p(1)]);
    assert_eq!(
        last.reconciliation.map(|r| r.phases.revoke_seconds),
        Some(0.2)
    );
}

#[test]
fn the_member_s_own_causes_are_taken_as_it_reports_them() {
    let app = app(true);
    let mut m = Member::new(Some("pod-0"));
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (-1, 4),
        vec![p(0), p(1)],
        vec![],
    );
    assert_eq!(
        counted(&app, RebalanceCause::MemberJoined),
        1,
        "its own join"
    );
    m.send(
        &app,
        Event::PartitionsLost {
            partitions: vec![p(0), p(1)],
            duration_seconds: 0.0,
            timed_out: false,
        },
    );
    m.reconcile(
        &app,
        RebalanceCause::EpochFenced,
        (0, 6),
        vec![p(0)],
        vec![],
    );
    m.reconcile(
        &app,
        RebalanceCause::SubscriptionChange,
        (6, 7),
        vec![p(2)],
        vec![],
    );
    assert_eq!(counted(&app, RebalanceCause::EpochFenced), 1);
    assert_eq!(counted(&app, RebalanceCause::SubscriptionChange), 1);
    assert_eq!(total(&app), 3);
    let state = app.state();
    let fenced = &state.history[1];
    assert_eq!(fenced.cause, RebalanceCause::EpochFenced);
    assert_eq!(fenced.lost, vec![p(0), p(1)], "what the fencing cost");
    assert!(state.unclassified.is_empty());
}

#[test]
fn a_wait_for_the_instance_id_is_shown_and_names_the_join_it_delayed() {
    let app = app(false);
    let mut m = Member::new(Some("pod-0"));
    for attempt in 1..=3 {
        m.send(
            &app,
            Event::InstanceIdUnreleased {
                instance_id: "pod-0".into(),
                attempt,
                retry_in_seconds: Some(1.0),
            },
        );
    }
    assert_eq!(app.metrics.instance_id_unreleased_attempts_total.get(), 3);
    {
        let state = app.state();
        let wait = state
            .member
            .instance_id_unreleased
            .as_ref()
            .expect("waiting");
        assert_eq!((wait.attempt, wait.waiting()), (3, true));
        assert_eq!(wait.since_ms, 1_764_000_000_001, "from the first refusal");
        let (ready, why) = crate::ingest::readiness(&state);
        assert!(ready, "waiting keeps readiness: {why:?}");
    }
    let state_gauge = |s: &str| {
        app.metrics
            .consumer_member_state
            .with_label_values(&[s])
            .get()
    };
    assert_eq!(state_gauge("instance_id_unreleased"), 1);
    std::thread::sleep(Duration::from_millis(20));
    let _ = app.alerts();
    assert!(app.metrics.instance_id_unreleased_wait_seconds.get() >= 0.02);
    // Taken in: no longer waiting, before its partitions are reconciled.
    m.send(
        &app,
        Event::Joined {
            generation: 9,
            member_id: "m-1".into(),
            leader: false,
            protocol_name: "uniform".into(),
            join_seconds: 0.1,
        },
    );
    let _ = app.alerts();
    assert_eq!(app.metrics.instance_id_unreleased_wait_seconds.get(), 0.0);
    assert!(app.state().member.instance_id_unreleased.is_none());
    // The predecessor's session expired (the group epoch moved meanwhile): this join counts.
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (0, 9),
        vec![p(0)],
        vec![],
    );
    assert_eq!(counted(&app, RebalanceCause::InstanceIdUnreleased), 1);
    let _ = app.alerts();
    assert_eq!(app.metrics.instance_id_unreleased_wait_seconds.get(), 0.0);
    assert!(app.state().member.instance_id_unreleased.is_none());

    // A wait the member gives up on: not ready.
    m.send(
        &app,
        Event::InstanceIdUnreleased {
            instance_id: "pod-0".into(),
            attempt: 40,
            retry_in_seconds: None,
        },
    );
    let state = app.state();
    let (ready, why) = crate::ingest::readiness(&state);
    assert!(!ready);
    assert!(
        why.contains(&"the member gave up waiting for its group.instance.id"),
        "{why:?}"
    );
    drop(state);
    let _ = app.alerts();
    assert_eq!(app.metrics.instance_id_unreleased_wait_seconds.get(), 0.0);
}

#[test]
fn a_static_member_taking_over_its_predecessor_is_no_rebalance() {
    let app = app(true);
    let before = T0 - 1000;
    {
        let mut state = app.state();
        let members = view(
            &[
                ("old", Some("pod-0"), &["orders"]),
                ("b", None, &["orders"]),
            ],
            before,
        );
        state.epoch_views.insert(5, members);
    }
    let mut m = Member::new(Some("pod-0"));
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (0, 5),
        vec![p(0), p(1)],
        vec![],
    );
    assert_eq!(total(&app), 0);
    assert_eq!(app.metrics.rebalance_duration_seconds.get_sample_count(), 0);
    let state = app.state();
    let r = state.history.back().expect("recorded");
    assert_eq!(
        (r.outcome, r.cause_basis),
        ("static_rejoin", "static_rejoin")
    );
    assert!(state.member.stable);
    drop(state);

    // A join that moved the group epoch past every earlier view is one.
    let app = app_with_view(5, T0 - 1000);
    let mut m = Member::new(Some("pod-0"));
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (0, 6),
        vec![p(0)],
        vec![],
    );
    assert_eq!(counted(&app, RebalanceCause::MemberJoined), 1);

    // So is one whose epoch a view showed first after the join began, by the member's clock,
    // even when that view reached the sidecar before the member's lines did (seen live).
    let app = app_with_view(6, T0 + 10);
    let mut m = Member::new(Some("pod-0"));
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (0, 6),
        vec![p(0)],
        vec![],
    );
    assert_eq!(counted(&app, RebalanceCause::MemberJoined), 1);
}

fn app_with_view(epoch: i32, answered_ms: u64) -> App {
    let app = app(true);
    app.state()
        .epoch_views
        .insert(epoch, view(&[("a", None, &["orders"])], answered_ms));
    app
}

/// Another member's change: the group's members at the epochs before and after name it, once
/// the watch has seen the epoch the member reconciled to.
#[test]
fn the_broker_s_members_per_epoch_name_another_member_s_change() {
    type Members<'a> = &'a [(&'a str, Option<&'a str>, &'a [&'a str])];
    let cases: [(Members, Members, RebalanceCause); 4] = [
        (
            &[("me", None, &["orders"])],
            &[("me", None, &["orders"]), ("new", None, &["orders"])],
            RebalanceCause::MemberJoined,
        ),
        (
            &[
                ("me", None, &["orders"]),
                ("old", Some("pod-1"), &["orders"]),
            ],
            &[("me", None, &["orders"])],
            RebalanceCause::MemberLeft,
        ),
        (
            &[("me", None, &["orders"]), ("b", None, &["orders"])],
            &[("me", None, &["orders"]), ("b", None, &["audit", "orders"])],
            RebalanceCause::SubscriptionChange,
        ),
        (
            &[("me", None, &["orders"])],
            &[("me", None, &["orders"])],
            RebalanceCause::MetadataChange,
        ),
    ];
    for (before, after, want) in cases {
        let app = app(true);
        app.state().epoch_views.insert(3, view(before, T0));
        let mut m = Member::new(None);
        m.reconcile(
            &app,
            RebalanceCause::Unknown,
            (0, 3),
            vec![p(0), p(1)],
            vec![],
        );
        // A revoke comes with the epoch before: the coordinator moves the member on once it has
        // revoked; the change is the next group epoch's.
        m.reconcile(&app, RebalanceCause::Unknown, (3, 3), vec![], vec![p(1)]);
        assert_eq!(total(&app), 1, "the second waits for the broker");
        crate::ingest::settle_causes(&app);
        assert_eq!(total(&app), 1, "no view at epoch 4 yet");
        app.state().epoch_views.insert(4, view(after, T0));
        crate::ingest::settle_causes(&app);
        // Its own join counted as member_joined, then the other's change.
        assert_eq!(total(&app), 2, "{want:?}");
        let own_join = u64::from(want == RebalanceCause::MemberJoined);
        assert_eq!(counted(&app, want), 1 + own_join, "{want:?}");
        let state = app.state();
        let r = state.history.back().expect("recorded");
        assert_eq!((r.cause, r.cause_basis), (want, "broker_view"));
        if want == RebalanceCause::MemberLeft {
            assert_eq!(r.members_left.len(), 1);
            assert_eq!(
                r.members_left[0].member_id, "pod-1",
                "named by its instance id"
            );
        }
        assert!(state.unclassified.is_empty());
    }
}

#[test]
fn a_departed_member_whose_commits_stood_still_timed_out() {
    let mut views = BTreeMap::new();
    let now = Instant::now();
    views.insert(
        3,
        view(&[("me", None, &["t"]), ("dead", Some("pod-1"), &["t"])], T0),
    );
    views.insert(4, view(&[("me", None, &["t"])], T0));
    let mut watch = BTreeMap::new();
    watch.insert(
        "dead".to_string(),
        MemberWatch {
            partitions: Vec::new(),
            committed: BTreeMap::new(),
            last_seen: now + Duration::from_secs(20),
            last_progress: now,
            gone: None,
        },
    );
    let stall = Duration::from_secs(10);
    let (cause, _, left) =
        classify_epochs(&views, (3, 4), &watch, stall).expect("both epochs seen");
    assert_eq!(cause, Some(RebalanceCause::SessionTimeout));
    assert!((left[0].stalled_seconds - 20.0).abs() < 0.01);
    // The views are the closest ones kept: epochs between are fine.
    assert!(
        classify_epochs(&views, (3, 5), &watch, stall).is_none(),
        "epoch 5 unseen"
    );
    let (cause, ..) = classify_epochs(&views, (2, 4), &watch, stall).expect("after seen");
    assert_eq!(cause, None, "nothing kept at or before epoch 2");
}

/// The member names the epoch it holds when its reconciliation starts; when the assignment came
/// with a new epoch that is the new one, and the heartbeat before says the epoch it held.
#[test]
fn the_epoch_before_is_the_one_the_last_heartbeat_was_sent_with() {
    let app = app(true);
    {
        let mut state = app.state();
        let both = view(&[("me", None, &["orders"]), ("b", None, &["orders"])], T0);
        state.epoch_views.insert(3, both);
        state
            .epoch_views
            .insert(4, view(&[("me", None, &["orders"])], T0));
    }
    let mut m = Member::new(None);
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (-1, 3),
        vec![p(0)],
        vec![],
    );
    m.beat(&app, 3);
    m.beat(&app, 3);
    // b left: epoch 4 came with the partitions it freed.
    m.reconcile(&app, RebalanceCause::MemberLeft, (4, 4), vec![p(1)], vec![]);
    crate::ingest::settle_causes(&app);
    assert_eq!(counted(&app, RebalanceCause::MemberLeft), 1);
    let state = app.state();
    let r = state.history.back().expect("recorded");
    assert_eq!(
        (r.cause, r.cause_basis),
        (RebalanceCause::MemberLeft, "broker_view")
    );
    assert_eq!(r.generation_before, 3);
    assert_eq!(r.members_left.len(), 1);
    assert_eq!(state.member.member_epoch, 4);
}

/// The snapshot task and the event intake fill one buffer: a snapshot taken while the member
/// waited can arrive after the reconciliation that ended the wait (seen on the real broker). It
/// neither restarts the wait nor sets the epoch back; a later one applies.
#[test]
fn a_snapshot_older_than_the_reconciliation_does_not_undo_it() {
    let app = app(false);
    let mut m = Member::new(Some("pod-0"));
    m.send(
        &app,
        Event::InstanceIdUnreleased {
            instance_id: "pod-0".into(),
            attempt: 1,
            retry_in_seconds: Some(0.5),
        },
    );
    m.reconcile(
        &app,
        RebalanceCause::MemberJoined,
        (-1, 5),
        vec![p(0)],
        vec![],
    );
    let snapshot = |state: &str, generation: i32| {
        Event::Snapshot(mooring_telemetry_schema::Snapshot {
            generation,
            group_protocol: Some("consumer".into()),
            consumer_state: Some(state.into()),
            ..Default::default()
        })
    };
    // Taken (ts) before the reconciliation, sent after it.
    let stale = Envelope {
        schema: 1,
        seq: m.seq + 1,
        ts_ms: T0 + 2,
        member: m.identity.clone(),
        event: snapshot("instance_id_unreleased", 0),
    };
    crate::ingest::apply(&app, stale);
    assert!(app.state().member.instance_id_unreleased.is_none());
    assert_eq!(app.metrics.member_epoch.get(), 5);
    // Stamped in the millisecond of the last event: it may have read the member before the
    // change that event reports.
    let same_ms = Envelope {
        schema: 1,
        seq: m.seq + 2,
        ts_ms: T0 + m.seq,
        member: m.identity.clone(),
        event: snapshot("instance_id_unreleased", 0),
    };
    crate::ingest::apply(&app, same_ms);
    assert!(app.state().member.instance_id_unreleased.is_none());
    assert_eq!(app.metrics.member_epoch.get(), 5);
    m.seq += 2;
    m.send(&app, snapshot("stable", 5));
    assert_eq!(
        app.metrics
            .consumer_member_state
            .with_label_values(&["stable"])
            .get(),
        1
    );
}
