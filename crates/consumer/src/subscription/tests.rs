//! Unit tests of the subscription state: modes, the pause rule, resets.

use super::*;

fn tp(topic: &str, p: i32) -> TopicPartition {
    TopicPartition::new(topic, p)
}

fn group_state(topics: &[&str]) -> SubscriptionState {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    s.subscribe(topics.iter().copied()).expect("subscribe");
    s
}

#[test]
fn modes_conflict_every_way() {
    let cases = [
        SubscriptionMode::Topics,
        SubscriptionMode::Pattern,
        SubscriptionMode::ManualAssign,
    ];
    for current in cases {
        for requested in cases {
            let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
            let set = |s: &mut SubscriptionState, m| match m {
                SubscriptionMode::Topics => s.subscribe(["a"]),
                SubscriptionMode::Pattern => s.subscribe_pattern("a.*"),
                _ => s.assign([tp("a", 0)]),
            };
            set(&mut s, current).expect("first call");
            let r = set(&mut s, requested);
            if current == requested {
                assert!(r.is_ok(), "{current} then {requested}");
            } else {
                assert_eq!(
                    r,
                    Err(SubscriptionError::ModeConflict { current, requested })
                );
                assert_eq!(s.mode(), current, "a refused call changes nothing");
            }
        }
    }
}

#[test]
fn unsubscribe_clears_and_allows_another_mode() {
    let mut s = group_state(&["a"]);
    s.assign_from_group([tp("a", 0), tp("a", 1)])
        .expect("assign");
    assert_eq!(s.unsubscribe(), vec![tp("a", 0), tp("a", 1)]);
    assert_eq!(s.mode(), SubscriptionMode::None);
    assert!(s.assigned_partitions().is_empty());
    s.assign([tp("b", 0)])
        .expect("manual assign after unsubscribe");
    assert_eq!(s.mode(), SubscriptionMode::ManualAssign);
}

#[test]
fn empty_subscribe_or_assign_unsubscribes_in_any_mode() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    s.subscribe_pattern("x.*").expect("pattern");
    assert_eq!(s.subscribe(Vec::<String>::new()), Ok(true));
    assert_eq!(s.mode(), SubscriptionMode::None);
    s.subscribe(["a"]).expect("topics");
    assert_eq!(s.assign([]), Ok(true));
    assert_eq!(s.mode(), SubscriptionMode::None);
}

#[test]
fn subscribe_reports_changes() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    assert_eq!(s.subscribe(["a", "b"]), Ok(true));
    assert_eq!(s.subscribe(["b", "a"]), Ok(false));
    assert_eq!(s.subscribe(["a"]), Ok(true));
    assert_eq!(s.subscribed_topics(), ["a".to_owned()].into());
}

#[test]
fn pattern_matches_whole_names_and_reports_changes() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    assert_eq!(s.subscribe_pattern("order-.*"), Ok(true));
    assert_eq!(s.subscribe_pattern("order-.*"), Ok(false));
    assert!(s.subscribed_topics().is_empty());
    assert!(s.update_pattern_matches(["order-sh", "orders", "x-order-bj", "order-bj"]));
    assert_eq!(
        s.subscribed_topics(),
        ["order-bj".to_owned(), "order-sh".to_owned()].into()
    );
    assert!(!s.update_pattern_matches(["order-bj", "order-sh", "other"]));
    assert!(s.update_pattern_matches(["order-bj"]));
    assert_eq!(s.pattern(), Some("order-.*"));
}

#[test]
fn invalid_pattern_is_an_error() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    let r = s.subscribe_pattern("(unclosed");
    assert!(
        matches!(r, Err(SubscriptionError::InvalidPattern { ref pattern, .. }) if pattern == "(unclosed")
    );
}

#[test]
fn a_pattern_the_broker_matches_accepts_every_topic_the_group_assigns() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    // RE2/J syntax the `regex` crate does not take (`\Q...\E` quoting) is the broker's to judge.
    let quoted = r"\Qorder-\E.*";
    assert!(regex::Regex::new(quoted).is_err());
    assert_eq!(s.subscribe_broker_pattern(r"\Qorder-\E.*"), Ok(true));
    assert_eq!(s.subscribe_broker_pattern(r"\Qorder-\E.*"), Ok(false));
    assert!(s.pattern_on_broker());
    assert_eq!(s.mode(), SubscriptionMode::Pattern);
    assert_eq!(s.pattern(), Some(r"\Qorder-\E.*"));
    assert!(
        !s.update_pattern_matches(["order-bj", "order-sh"]),
        "the broker matches"
    );
    assert!(
        s.subscribed_topics().is_empty(),
        "nothing asked for by name"
    );
    s.assign_from_group([tp("order-bj", 0), tp("refunds", 1)])
        .expect("whatever the broker assigned for the pattern");
    assert!(s.assigned_outside_subscription().is_empty());
    assert_eq!(
        s.assigned_partitions(),
        [tp("order-bj", 0), tp("refunds", 1)]
    );
    // The same pattern matched here is another subscription.
    assert_eq!(s.subscribe_pattern("order-.*"), Ok(true));
    assert!(!s.pattern_on_broker());
    assert_eq!(s.assigned_outside_subscription(), [tp("refunds", 1)]);
    assert!(matches!(
        s.subscribe(["a"]),
        Err(SubscriptionError::ModeConflict { .. })
    ));
}

#[test]
fn an_empty_broker_pattern_is_refused() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    assert!(matches!(
        s.subscribe_broker_pattern(""),
        Err(SubscriptionError::InvalidPattern { .. })
    ));
    assert_eq!(s.mode(), SubscriptionMode::None, "nothing changed");
}

#[test]
fn update_pattern_outside_pattern_mode_is_a_no_op() {
    let mut s = group_state(&["a"]);
    assert!(!s.update_pattern_matches(["a", "b"]));
}

#[test]
fn group_assignment_needs_group_mode_and_subscribed_topics() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    assert_eq!(
        s.assign_from_group([tp("a", 0)]),
        Err(SubscriptionError::NotGroupManaged {
            current: SubscriptionMode::None
        })
    );
    s.subscribe(["a"]).expect("subscribe");
    assert_eq!(
        s.assign_from_group([tp("a", 0), tp("b", 0)]),
        Err(SubscriptionError::NotSubscribed {
            partitions: vec![tp("b", 0)]
        })
    );
    assert!(s.assigned_partitions().is_empty(), "all-or-nothing");

    let mut p = SubscriptionState::new(OffsetResetStrategy::Latest);
    p.subscribe_pattern("a|b").expect("pattern");
    p.assign_from_group([tp("a", 0), tp("b", 1)])
        .expect("pattern covers both");
}

#[test]
fn pause_holds_while_assigned_and_ends_with_revoke() {
    let mut s = group_state(&["a"]);
    s.assign_from_group([tp("a", 0), tp("a", 1)])
        .expect("assign");
    s.seek(&tp("a", 0), 5).expect("seek");
    s.pause([tp("a", 0)]).expect("pause");
    assert!(!s.is_fetchable(&tp("a", 0)));
    assert_eq!(s.paused_partitions(), vec![tp("a", 0)]);

    // Eager rebalance: everything revoked, then the same partitions come back.
    assert_eq!(
        s.revoke(&s.assigned_partitions()),
        vec![tp("a", 0), tp("a", 1)]
    );
    s.assign_from_group([tp("a", 0), tp("a", 1)])
        .expect("reassign");
    let state = s.partition(&tp("a", 0)).expect("assigned");
    assert!(
        !state.is_paused(),
        "revoked then reassigned starts unpaused"
    );
    assert_eq!(state.position(), None, "and with a fresh state");
}

#[test]
fn pause_survives_a_cooperative_rebalance_where_the_partition_stays() {
    let mut s = group_state(&["a"]);
    s.assign_from_group([tp("a", 0), tp("a", 1)])
        .expect("assign");
    s.seek(&tp("a", 0), 7).expect("seek");
    s.set_committed(&tp("a", 0), OffsetAndMetadata::new(6));
    s.pause([tp("a", 0)]).expect("pause");

    // Cooperative: a-1 moves away, a-2 arrives, a-0 stays (and is listed again by the member).
    s.revoke(&[tp("a", 1)]);
    s.assign_from_group([tp("a", 0), tp("a", 2)])
        .expect("incremental add");
    let kept = s.partition(&tp("a", 0)).expect("a-0 stays");
    assert!(kept.is_paused());
    assert_eq!(kept.position(), Some(FetchPosition::new(7)));
    assert_eq!(kept.committed(), Some(&OffsetAndMetadata::new(6)));
    assert!(!s.partition(&tp("a", 2)).expect("new").is_paused());
    assert_eq!(s.assigned_partitions(), vec![tp("a", 0), tp("a", 2)]);
}

#[test]
fn lost_partitions_come_back_unpaused() {
    let mut s = group_state(&["a"]);
    s.assign_from_group([tp("a", 0)]).expect("assign");
    s.pause([tp("a", 0)]).expect("pause");
    assert_eq!(s.lose_all(), vec![tp("a", 0)]);
    s.assign_from_group([tp("a", 0)]).expect("reassign");
    assert!(s.paused_partitions().is_empty());
}

#[test]
fn pause_topic_follows_java_only_current_partitions() {
    let mut s = group_state(&["a", "b"]);
    s.assign_from_group([tp("a", 0), tp("a", 1), tp("b", 0)])
        .expect("assign");
    assert_eq!(s.pause_topic("a"), vec![tp("a", 0), tp("a", 1)]);
    s.assign_from_group([tp("a", 2)]).expect("later partition");
    assert_eq!(s.paused_partitions(), vec![tp("a", 0), tp("a", 1)]);
    assert_eq!(s.resume_topic("a").len(), 3);
    assert!(s.paused_partitions().is_empty());
}

#[test]
fn pausing_an_unassigned_partition_is_an_error_and_changes_nothing() {
    let mut s = group_state(&["a"]);
    s.assign_from_group([tp("a", 0)]).expect("assign");
    assert_eq!(
        s.pause([tp("a", 0), tp("a", 9)]),
        Err(SubscriptionError::NotAssigned {
            partitions: vec![tp("a", 9)]
        })
    );
    assert!(s.paused_partitions().is_empty());
}

#[test]
fn backpressure_pause_is_separate_from_the_user_pause() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    s.assign([tp("a", 0)]).expect("assign");
    s.seek(&tp("a", 0), 0).expect("seek");
    assert!(s.set_paused_by_backpressure(&tp("a", 0), true));
    assert!(!s.is_fetchable(&tp("a", 0)));
    s.resume([tp("a", 0)]).expect("user resume");
    assert!(
        !s.is_fetchable(&tp("a", 0)),
        "user resume leaves backpressure"
    );
    s.set_paused_by_backpressure(&tp("a", 0), false);
    assert_eq!(s.fetchable_partitions(), vec![tp("a", 0)]);
    assert!(!s.set_paused_by_backpressure(&tp("z", 0), true));
}

#[test]
fn manual_reassign_keeps_state_of_partitions_that_stay() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    assert_eq!(s.assign([tp("a", 0), tp("a", 1)]), Ok(true));
    s.seek(&tp("a", 0), 3).expect("seek");
    assert_eq!(s.assign([tp("a", 1), tp("a", 0)]), Ok(false));
    assert_eq!(s.assign([tp("a", 0), tp("a", 2)]), Ok(true));
    assert_eq!(s.position(&tp("a", 0)), Some(FetchPosition::new(3)));
    assert_eq!(s.assigned_partitions(), vec![tp("a", 0), tp("a", 2)]);
}

#[test]
fn reset_none_names_every_partition_without_an_offset() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::None);
    s.subscribe(["a"]).expect("subscribe");
    s.assign_from_group([tp("a", 0), tp("a", 1), tp("a", 2)])
        .expect("assign");
    assert_eq!(
        s.initializing_partitions(),
        vec![tp("a", 0), tp("a", 1), tp("a", 2)]
    );
    s.apply_committed_offsets([
        (tp("a", 0), None),
        (
            tp("a", 1),
            Some(OffsetAndMetadata::new(40).with_leader_epoch(2)),
        ),
        (tp("a", 2), None),
    ]);
    assert_eq!(
        s.position(&tp("a", 1)),
        Some(FetchPosition::new(40).with_leader_epoch(2))
    );
    let err = s.reset_missing_positions().expect_err("none");
    assert_eq!(
        err,
        SubscriptionError::NoOffsetForPartition {
            partitions: vec![tp("a", 0), tp("a", 2)]
        }
    );
    assert!(err.to_string().contains("a-0, a-2"), "{err}");
}

#[test]
fn reset_flow_earliest_and_overtaken_answers() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Earliest);
    s.assign([tp("a", 0), tp("a", 1)]).expect("assign");
    let req = s.reset_missing_positions().expect("earliest");
    assert_eq!(req.purpose, ListOffsetsPurpose::Reset);
    assert_eq!(
        req.partitions.values().copied().collect::<Vec<_>>(),
        vec![OffsetSpec::Earliest, OffsetSpec::Earliest]
    );
    assert!(s.complete_reset(
        &tp("a", 0),
        OffsetResetStrategy::Earliest,
        FetchPosition::new(0)
    ));
    // The user seeks a-1 before the answer arrives: the seek wins.
    s.seek(&tp("a", 1), 99).expect("seek");
    assert!(!s.complete_reset(
        &tp("a", 1),
        OffsetResetStrategy::Earliest,
        FetchPosition::new(0)
    ));
    assert_eq!(s.position(&tp("a", 1)), Some(FetchPosition::new(99)));
    assert!(s.pending_resets().is_empty());
}

#[test]
fn seek_to_end_and_beginning_mark_resets() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::None);
    s.assign([tp("a", 0), tp("b", 0)]).expect("assign");
    s.seek(&tp("a", 0), 10).expect("seek");
    s.seek(&tp("b", 0), 10).expect("seek");
    s.seek_to_end([tp("a", 0)]).expect("end");
    assert_eq!(s.position(&tp("a", 0)), None);
    assert!(!s.is_fetchable(&tp("a", 0)));
    assert_eq!(
        s.pending_resets().partitions,
        [(tp("a", 0), OffsetSpec::Latest)].into()
    );
    // Empty means every assigned partition, and a pending reset is not "initializing": `none`
    // does not complain about partitions the user explicitly reset.
    s.seek_to_beginning([]).expect("beginning");
    assert_eq!(
        s.reset_missing_positions()
            .expect("nothing initializing")
            .partitions,
        [
            (tp("a", 0), OffsetSpec::Earliest),
            (tp("b", 0), OffsetSpec::Earliest)
        ]
        .into()
    );
    assert_eq!(
        s.seek_to_end([tp("c", 0)]),
        Err(SubscriptionError::NotAssigned {
            partitions: vec![tp("c", 0)]
        })
    );
    assert_eq!(
        s.seek(&tp("a", 0), -1),
        Err(SubscriptionError::InvalidOffset {
            partition: tp("a", 0),
            offset: -1
        })
    );
}

#[test]
fn fetch_info_and_lag() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    s.assign([tp("a", 0)]).expect("assign");
    s.seek(&tp("a", 0), 90).expect("seek");
    assert!(s.update_fetch_info(
        &tp("a", 0),
        PartitionFetchInfo {
            high_watermark: Some(100),
            last_stable_offset: Some(95),
            log_start_offset: Some(0),
        }
    ));
    s.update_fetch_info(
        &tp("a", 0),
        PartitionFetchInfo {
            high_watermark: Some(120),
            ..Default::default()
        },
    );
    let st = s.partition(&tp("a", 0)).expect("assigned");
    assert_eq!(
        (
            st.high_watermark(),
            st.last_stable_offset(),
            st.log_start_offset()
        ),
        (Some(120), Some(95), Some(0))
    );
    assert_eq!(st.lag(false), Some(30));
    assert_eq!(st.lag(true), Some(5));
    assert!(!s.update_fetch_info(&tp("z", 0), PartitionFetchInfo::default()));
}

#[test]
fn narrowing_the_subscription_keeps_partitions_until_revoked() {
    let mut s = group_state(&["a", "b"]);
    s.assign_from_group([tp("a", 0), tp("b", 0)])
        .expect("assign");
    assert_eq!(s.subscribe(["a"]), Ok(true));
    assert_eq!(s.assigned_partitions(), vec![tp("a", 0), tp("b", 0)]);
    assert_eq!(s.assigned_outside_subscription(), vec![tp("b", 0)]);
}

#[test]
fn sync_backpressure_is_level_triggered() {
    let mut s = SubscriptionState::new(OffsetResetStrategy::Latest);
    s.assign([tp("a", 0), tp("a", 1)]).expect("assign");
    s.seek(&tp("a", 0), 0).expect("seek");
    s.seek(&tp("a", 1), 0).expect("seek");
    s.sync_backpressure(&[tp("a", 1), tp("z", 9)]);
    assert_eq!(s.fetchable_partitions(), vec![tp("a", 0)]);
    s.sync_backpressure(&[]);
    assert_eq!(s.fetchable_partitions(), vec![tp("a", 0), tp("a", 1)]);
}
