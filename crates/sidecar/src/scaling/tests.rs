use super::*;

fn config() -> ScalingConfig {
    ScalingConfig {
        drain_target_seconds: 60.0,
        min_replicas: 1,
        max_replicas: 0,
        scale_down_hold_seconds: 30.0,
        rate_window_seconds: 10.0,
        static_pause_seconds: 45.0,
    }
}

fn tp(p: i32) -> TopicPartition {
    TopicPartition::new("t".to_string(), p)
}

/// `n` partitions, each appending `rate`/s with `lag` behind.
fn inputs(now: f64, consumed: i64, members: u32, n: i32, rate: f64, lag: i64) -> Inputs {
    Inputs {
        now,
        consumed,
        members,
        share: false,
        partitions: (0..n)
            .map(|p| PartitionFigures {
                partition: tp(p),
                lag: Some(lag),
                produce_rate: rate,
            })
            .collect(),
        cost: RebalanceCost {
            pause_seconds: 2.0,
            eager: false,
            source: "default",
        },
    }
}

/// Looks every second for `seconds` with `members` consuming `per_member`/s each, from `start`.
fn run(
    s: &mut ScalingState,
    start: f64,
    seconds: u32,
    members: u32,
    per_member: i64,
    make: impl Fn(f64, i64, u32) -> Inputs,
) -> Signal {
    for i in 0..seconds {
        let now = start + f64::from(i);
        s.observe(
            &make(now, per_member * i64::from(members), members),
            &config(),
        );
    }
    s.signal.clone().expect("a signal")
}

#[test]
fn saturated_members_give_the_capacity_and_the_replicas_to_drain() {
    let mut s = ScalingState::default();
    // 2 members at 100/s each, 8 partitions appending 50/s each (400/s), 20 000 behind.
    let sig = run(&mut s, 0.0, 20, 2, 100, |now, c, m| {
        inputs(now, c, m, 8, 50.0, 2_500)
    });
    assert_eq!(sig.capacity_source, CapacitySource::Measured);
    assert!((sig.capacity_per_replica.expect("capacity") - 100.0).abs() < 1e-6);
    // (400 + 20 000 / 60) / 100 = 7.33: 8 replicas.
    assert_eq!(sig.recommended_replicas, 8);
    assert_eq!(sig.desired_replicas, 8);
    assert_eq!(sig.cap, Some(8));
}

#[test]
fn never_more_than_the_partitions_except_for_a_share_group() {
    let mut s = ScalingState::default();
    let sig = run(&mut s, 0.0, 20, 1, 100, |now, c, m| {
        inputs(now, c, m, 3, 500.0, 100_000)
    });
    assert_eq!(sig.desired_replicas, 3);
    let mut s = ScalingState::default();
    let sig = run(&mut s, 0.0, 20, 1, 100, |now, c, m| Inputs {
        share: true,
        ..inputs(now, c, m, 3, 100.0, 10_000)
    });
    // Share: (300 + 30 000 / 60) / 100 = 8, above the 3 partitions.
    assert_eq!(sig.cap, None);
    assert_eq!(sig.desired_replicas, 8);
}

#[test]
fn a_hot_partition_counts_one_replica_and_is_named() {
    let mut s = ScalingState::default();
    let sig = run(&mut s, 0.0, 20, 2, 100, |now, c, m| {
        let mut i = inputs(now, c, m, 6, 10.0, 0);
        i.partitions[2].lag = Some(1_000_000);
        i
    });
    // Capacity 100/s (behind throughout). Five partitions need 10/s each, the hot one alone
    // 16 676/s, counted as one replica: 1.5 -> 2, not 6 or the partitions' cap.
    assert_eq!(sig.hot_partitions, vec![tp(2)]);
    assert_eq!(sig.recommended_replicas, 2);
}

#[test]
fn no_committed_offset_is_not_infinite_lag() {
    let mut s = ScalingState::default();
    let sig = run(&mut s, 0.0, 20, 2, 0, |now, c, m| {
        let mut i = inputs(now, c, m, 4, 0.0, 0);
        for p in &mut i.partitions {
            p.lag = None;
        }
        i
    });
    assert_eq!(sig.partitions_without_commit, 4);
    assert_eq!(sig.capacity_source, CapacitySource::Unknown);
    assert_eq!(sig.desired_replicas, 2, "the members as they are");
}

#[test]
fn a_scale_down_waits_for_the_hold_and_a_dip_is_ignored() {
    let mut s = ScalingState::default();
    // Behind with 4 members at 100/s: capacity 100 measured, 8 replicas at once.
    let sig = run(&mut s, 0.0, 20, 4, 100, |now, c, m| {
        inputs(now, c, m, 8, 40.0, 5_000)
    });
    assert_eq!(sig.desired_replicas, 8);
    // Caught up at 100/s over 8 partitions: 1 replica by rate, 2 with the rebalance priced.
    let sig = run(&mut s, 20.0, 5, 4, 25, |now, c, m| {
        inputs(now, c, m, 8, 12.5, 0)
    });
    assert_eq!(sig.recommended_replicas, 2);
    assert_eq!(sig.desired_replicas, 8, "held");
    assert!(sig.scale_down_in_seconds.is_some());
    // 30 s after the last high recommendation: down.
    let sig = run(&mut s, 25.0, 35, 4, 25, |now, c, m| {
        inputs(now, c, m, 8, 12.5, 0)
    });
    assert_eq!(sig.desired_replicas, 2);
    assert_eq!(sig.scale_down_in_seconds, None);
}

#[test]
fn a_scale_up_is_at_once() {
    let mut s = ScalingState::default();
    run(&mut s, 0.0, 20, 2, 100, |now, c, m| {
        inputs(now, c, m, 8, 10.0, 3_000)
    });
    let before = s.signal.clone().expect("signal").desired_replicas;
    let sig = run(&mut s, 20.0, 1, 2, 100, |now, c, m| {
        inputs(now, c, m, 8, 100.0, 3_000)
    });
    assert!(sig.desired_replicas > before);
    assert_eq!(sig.desired_replicas, 8);
}

#[test]
fn the_rebalance_a_scale_down_causes_is_priced() {
    let cost = |eager| {
        let mut s = ScalingState::default();
        run(&mut s, 0.0, 20, 4, 100, |now, c, m| {
            inputs(now, c, m, 4, 60.0, 3_000)
        });
        // Caught up at 4 × 60 = 240/s: 3 replicas by rate alone (2.4).
        let sig = run(&mut s, 20.0, 1, 4, 60, |now, c, m| {
            let mut i = inputs(now, c, m, 4, 60.0, 0);
            i.cost = RebalanceCost {
                pause_seconds: 30.0,
                eager,
                source: "measured",
            };
            i
        });
        sig.recommended_replicas
    };
    // Cooperative: a quarter of 240/s for 30 s is 1 800 more to drain in 60 s: 2.4 + 0.3.
    assert_eq!(cost(false), 3);
    // Eager: all of it stops: 7 200 more, 2.4 + 1.2 = 3.6: 4, no scale-down.
    assert_eq!(cost(true), 4);
}

#[test]
fn the_floor_and_the_maximum() {
    let mut s = ScalingState::default();
    let c = ScalingConfig {
        min_replicas: 2,
        max_replicas: 5,
        ..config()
    };
    for i in 0..20 {
        s.observe(&inputs(f64::from(i), 100, 1, 12, 100.0, 10_000), &c);
    }
    assert_eq!(s.signal.as_ref().map(|x| x.desired_replicas), Some(5));
    let mut s = ScalingState::default();
    for i in 0..20 {
        s.observe(&inputs(f64::from(i), 0, 0, 12, 0.0, 0), &c);
    }
    assert_eq!(s.signal.as_ref().map(|x| x.desired_replicas), Some(2));
}

#[test]
fn a_group_keeping_up_is_not_taken_as_saturated() {
    let mut s = ScalingState::default();
    // 2 members consuming what is appended (100/s), 300 behind: 3 s of the rate, a commit
    // interval's worth.
    let sig = run(&mut s, 0.0, 30, 2, 50, |now, c, m| {
        inputs(now, c, m, 4, 25.0, 75)
    });
    assert_eq!(sig.capacity_source, CapacitySource::Estimated);
    assert_eq!(sig.capacity_per_replica, Some(50.0));
    assert_eq!(sig.desired_replicas, 2, "the members as they are");
}

#[test]
fn the_tail_of_a_drain_is_one_scale_down() {
    let mut s = ScalingState::default();
    let mut desired = Vec::new();
    // Behind: capacity 100, 8 replicas; then the lag falls to nothing over 4 s.
    run(&mut s, 0.0, 20, 4, 100, |now, c, m| {
        inputs(now, c, m, 8, 40.0, 5_000)
    });
    for (i, lag) in [(20, 3_000), (21, 1_500), (22, 500), (23, 0)] {
        s.observe(&inputs(f64::from(i), 400, 8, 8, 5.0, lag), &config());
    }
    for i in 24..80 {
        let sig = s.observe(&inputs(f64::from(i), 40, 8, 8, 5.0, 0), &config());
        desired.push(sig.desired_replicas);
    }
    desired.dedup();
    assert_eq!(desired, [8, 1], "one step down");
}
