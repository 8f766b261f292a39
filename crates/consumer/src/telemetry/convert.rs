//! From the runtime's typed [`ConsumerEvent`]s to the wire schema's [`Event`]s: the one place
//! that knows both, so the schema stays stable while the runtime's types evolve.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mooring_group::assignor::RebalanceProtocol;
use mooring_group::{GroupEventKind, PhaseTimings, ReconcileTimings};

use crate::processing::ProcessingEvent;
use crate::ConsumerEvent;
use mooring_telemetry_schema::{Event, Phases, ReconcilePhases};

/// The schema event for `event` and when it happened (ms since the epoch).
pub(crate) fn convert(event: ConsumerEvent) -> Option<(u64, Event)> {
    match event {
        ConsumerEvent::Group(group) => Some((millis(group.at), group_event(group.kind)?)),
        ConsumerEvent::Processing(p) => Some((now_ms(), processing_event(p)?)),
        ConsumerEvent::FetchError {
            node,
            partition,
            error,
        } => Some((
            now_ms(),
            Event::FetchError {
                node,
                partition,
                error,
            },
        )),
        ConsumerEvent::TopicUnavailable {
            topic,
            partitions,
            code,
            recheck_in,
        } => Some((
            now_ms(),
            Event::TopicUnavailable {
                topic,
                partitions,
                error: code.to_string(),
                recheck_in_seconds: recheck_in.as_secs_f64(),
            },
        )),
        ConsumerEvent::OffsetReset {
            partition,
            strategy,
            offset,
        } => Some((
            now_ms(),
            Event::OffsetReset {
                partition,
                strategy: strategy.as_str().to_string(),
                offset,
            },
        )),
        ConsumerEvent::CommitFailed { error } => Some((now_ms(), Event::CommitFailed { error })),
        ConsumerEvent::OffsetsNotCommitted {
            during,
            offsets,
            error,
        } => Some((
            now_ms(),
            Event::CommitFailed {
                error: format!(
                    "{during}: not committed {}: {error}",
                    offsets
                        .iter()
                        .map(|(tp, offset)| format!("{tp}@{offset}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        )),
        ConsumerEvent::Shutdown {
            duration,
            timed_out,
        } => Some((
            now_ms(),
            Event::Shutdown {
                duration_seconds: duration.as_secs_f64(),
                timed_out,
            },
        )),
        ConsumerEvent::FatalError { kind, error } => Some((
            now_ms(),
            Event::FatalError {
                kind: kind.to_string(),
                message: error.to_string(),
            },
        )),
        // `ConsumerEvent` is non-exhaustive: a new variant is skipped until the schema has it.
        #[allow(unreachable_patterns)]
        _ => None,
    }
}

/// A group event as the telemetry schema says it; `None` for what the schema leaves out.
pub(crate) fn group_event(kind: GroupEventKind) -> Option<Event> {
    match kind {
        GroupEventKind::RebalanceStarted { .. }
        | GroupEventKind::PartitionsRevoked { .. }
        | GroupEventKind::Joined { .. }
        | GroupEventKind::Synced { .. }
        | GroupEventKind::PartitionsAssigned { .. }
        | GroupEventKind::PartitionsLost { .. }
        | GroupEventKind::RebalanceCompleted { .. }
        | GroupEventKind::StaticRejoin { .. }
        | GroupEventKind::RebalanceFailed { .. } => rebalance_event(kind),
        other => member_event(other),
    }
}

/// A phase of a rebalance.
fn rebalance_event(kind: GroupEventKind) -> Option<Event> {
    Some(match kind {
        GroupEventKind::RebalanceStarted {
            cause: c,
            generation,
            protocol,
        } => Event::RebalanceStarted {
            cause: c,
            generation,
            protocol: protocol_name(protocol).to_string(),
        },
        GroupEventKind::PartitionsRevoked {
            partitions,
            duration,
            timed_out,
            ..
        } => Event::PartitionsRevoked {
            partitions,
            duration_seconds: duration.as_secs_f64(),
            timed_out,
        },
        GroupEventKind::Joined {
            generation,
            member_id,
            leader,
            protocol_name,
            join_time,
        } => Event::Joined {
            generation,
            member_id,
            leader,
            protocol_name,
            join_seconds: join_time.as_secs_f64(),
        },
        GroupEventKind::Synced {
            generation,
            sync_time,
        } => Event::Synced {
            generation,
            sync_seconds: sync_time.as_secs_f64(),
        },
        GroupEventKind::PartitionsAssigned {
            added,
            assignment,
            duration,
            timed_out,
        } => Event::PartitionsAssigned {
            added,
            assignment,
            duration_seconds: duration.as_secs_f64(),
            timed_out,
        },
        GroupEventKind::PartitionsLost {
            partitions,
            duration,
            timed_out,
        } => Event::PartitionsLost {
            partitions,
            duration_seconds: duration.as_secs_f64(),
            timed_out,
        },
        GroupEventKind::RebalanceCompleted {
            generation,
            total,
            phases,
        } => Event::RebalanceCompleted {
            generation,
            total_seconds: total.as_secs_f64(),
            phases: phase_timings(phases),
        },
        GroupEventKind::StaticRejoin {
            generation,
            total,
            phases,
        } => Event::StaticRejoin {
            generation,
            total_seconds: total.as_secs_f64(),
            phases: phase_timings(phases),
        },
        GroupEventKind::RebalanceFailed {
            error,
            code,
            total,
            phases,
        } => Event::RebalanceFailed {
            error,
            code: code.map(i16::from),
            total_seconds: total.as_secs_f64(),
            phases: phase_timings(phases),
        },
        _ => return None,
    })
}

/// The member's life between rebalances: heartbeats, commits, fencing, reconciliations, leaving.
fn member_event(kind: GroupEventKind) -> Option<Event> {
    Some(match kind {
        GroupEventKind::Heartbeat {
            generation,
            latency,
            error,
        } => Event::Heartbeat {
            generation,
            latency_seconds: latency.as_secs_f64(),
            error,
        },
        GroupEventKind::Commit {
            generation,
            latency,
            partitions,
            error,
        } => Event::Commit {
            generation,
            latency_seconds: latency.as_secs_f64(),
            partitions,
            error,
        },
        GroupEventKind::Fenced {
            instance_id,
            retry_in,
            ..
        } => Event::Fenced {
            instance_id,
            retry_in_seconds: retry_in.map(|d| d.as_secs_f64()),
        },
        GroupEventKind::Reconciled {
            member_epoch,
            added,
            revoked,
            total,
            phases,
        } => Event::Reconciled {
            member_epoch,
            added,
            revoked,
            total_seconds: total.as_secs_f64(),
            phases: reconcile_timings(phases),
        },
        GroupEventKind::InstanceIdUnreleased {
            instance_id,
            attempt,
            retry_in,
        } => Event::InstanceIdUnreleased {
            instance_id,
            attempt,
            retry_in_seconds: retry_in.map(|d| d.as_secs_f64()),
        },
        GroupEventKind::Left {
            sent_leave_group,
            error,
        } => Event::Left {
            sent_leave_group,
            error,
        },
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

fn processing_event(event: ProcessingEvent) -> Option<Event> {
    Some(match event {
        ProcessingEvent::BackpressurePause { partition, .. } => Event::Backpressure {
            partition,
            paused: true,
        },
        ProcessingEvent::BackpressureResume { partition, .. } => Event::Backpressure {
            partition,
            paused: false,
        },
        ProcessingEvent::PollIntervalExceeded {
            partition,
            offset,
            elapsed,
        } => Event::PollIntervalExceeded {
            partition,
            offset,
            elapsed_seconds: elapsed.as_secs_f64(),
        },
        ProcessingEvent::HandlerFailed {
            partition,
            offset,
            attempt,
            error,
            ..
        } => Event::HandlerFailed {
            partition,
            offset,
            attempt,
            error: error.to_string(),
        },
        ProcessingEvent::RecordAbandoned { partition, offset } => {
            Event::RecordAbandoned { partition, offset }
        }
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

fn protocol_name(protocol: RebalanceProtocol) -> &'static str {
    match protocol {
        RebalanceProtocol::Eager => "eager",
        RebalanceProtocol::Cooperative => "cooperative",
    }
}

fn phase_timings(p: PhaseTimings) -> Phases {
    Phases {
        revoke_seconds: p.revoke.as_secs_f64(),
        join_seconds: p.join.as_secs_f64(),
        assign_seconds: p.assign.as_secs_f64(),
        sync_seconds: p.sync.as_secs_f64(),
        callbacks_seconds: p.callbacks.as_secs_f64(),
    }
}

fn reconcile_timings(p: ReconcileTimings) -> ReconcilePhases {
    ReconcilePhases {
        revoke_seconds: p.revoke.as_secs_f64(),
        assign_seconds: p.assign.as_secs_f64(),
        acknowledge_seconds: p.acknowledge.as_secs_f64(),
    }
}

/// Milliseconds since the epoch (0 for a clock before it).
pub(crate) fn millis(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis()
        .try_into()
        .unwrap_or(u64::MAX)
}

pub(crate) fn now_ms() -> u64 {
    millis(SystemTime::now())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use mooring_wire::error_code::ErrorCode;

    use crate::TopicPartition;

    use super::*;

    #[test]
    fn a_topic_unavailable_event_reaches_the_schema() {
        let event = ConsumerEvent::TopicUnavailable {
            topic: "orders".into(),
            partitions: vec![
                TopicPartition::new("orders", 0),
                TopicPartition::new("orders", 1),
            ],
            code: ErrorCode::UnknownTopicId,
            recheck_in: Duration::from_secs(300),
        };
        let (_, converted) = convert(event).expect("converted");
        let json = serde_json::to_value(&converted).expect("json");
        assert_eq!(converted.type_name(), "topic_unavailable");
        assert_eq!(json["type"], "topic_unavailable");
        assert_eq!(json["topic"], "orders");
        assert_eq!(json["partitions"][1]["partition"], 1);
        assert_eq!(json["error"], "UNKNOWN_TOPIC_ID (100)");
        assert_eq!(json["recheck_in_seconds"], 300.0);
        let back: Event = serde_json::from_value(json).expect("the sidecar reads it back");
        assert_eq!(back, converted);
    }

    #[test]
    fn a_fatal_error_is_a_fatal_error_line() {
        let error = crate::ConsumerError::TopicAuthorizationFailed {
            topics: vec!["orders".into()],
            principal: "User:alice".into(),
        };
        let event = ConsumerEvent::FatalError {
            kind: error.kind(),
            error,
        };
        let (_, converted) = convert(event).expect("converted");
        assert_eq!(converted.type_name(), "fatal_error");
        let json = serde_json::to_value(&converted).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "type": "fatal_error",
                "kind": "topic_authorization",
                "message": "User:alice is not authorized to read topic(s) orders (TOPIC_AUTHORIZATION_FAILED)",
            })
        );
        let back: Event = serde_json::from_value(json).expect("the sidecar reads it back");
        assert_eq!(back, converted);
    }

    #[test]
    fn an_abandoned_record_is_a_record_abandoned_line() {
        let event = ConsumerEvent::Processing(ProcessingEvent::RecordAbandoned {
            partition: TopicPartition::new("orders", 3),
            offset: 41,
        });
        let (_, event) = convert(event).expect("converted");
        assert_eq!(event.type_name(), "record_abandoned");
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "type": "record_abandoned",
                "partition": {"topic": "orders", "partition": 3},
                "offset": 41,
            })
        );
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
    }

    fn group(kind: GroupEventKind) -> ConsumerEvent {
        ConsumerEvent::Group(mooring_group::GroupEvent {
            at: UNIX_EPOCH + Duration::from_millis(1_764_000_000_123),
            kind,
        })
    }

    #[test]
    fn a_reconciliation_is_a_reconciled_line() {
        let event = group(GroupEventKind::Reconciled {
            member_epoch: 7,
            added: vec![TopicPartition::new("orders", 2)],
            revoked: vec![
                TopicPartition::new("orders", 0),
                TopicPartition::new("orders", 1),
            ],
            total: Duration::from_millis(1500),
            phases: ReconcileTimings {
                revoke: Duration::from_millis(1000),
                assign: Duration::from_millis(250),
                acknowledge: Duration::from_millis(250),
            },
        });
        let (ts, event) = convert(event).expect("converted");
        assert_eq!(ts, 1_764_000_000_123);
        assert_eq!(event.type_name(), "reconciled");
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "type": "reconciled",
                "member_epoch": 7,
                "added": [{"topic": "orders", "partition": 2}],
                "revoked": [{"topic": "orders", "partition": 0}, {"topic": "orders", "partition": 1}],
                "total_seconds": 1.5,
                "phases": {"revoke_seconds": 1.0, "assign_seconds": 0.25, "acknowledge_seconds": 0.25},
            })
        );
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
    }

    #[test]
    fn an_unreleased_instance_id_is_an_instance_id_unreleased_line() {
        for (retry_in, shown) in [
            (Some(Duration::from_secs(2)), serde_json::json!(2.0)),
            (None, serde_json::Value::Null),
        ] {
            let event = group(GroupEventKind::InstanceIdUnreleased {
                instance_id: "orders-consumer-2".into(),
                attempt: 3,
                retry_in,
            });
            let (_, event) = convert(event).expect("converted");
            assert_eq!(event.type_name(), "instance_id_unreleased");
            let json = serde_json::to_value(&event).unwrap();
            assert_eq!(
                json,
                serde_json::json!({
                    "type": "instance_id_unreleased",
                    "instance_id": "orders-consumer-2",
                    "attempt": 3,
                    "retry_in_seconds": shown,
                })
            );
            let back: Event = serde_json::from_value(json).unwrap();
            assert_eq!(back, event);
        }
    }

    /// Lines of an exporter from before the consumer protocol still parse: the new fields
    /// default (read as a classic member), and a classic identity writes no `group_protocol`.
    #[test]
    fn the_new_fields_are_optional_both_ways() {
        use mooring_telemetry_schema::{Envelope, MemberIdentity, Snapshot};
        let old = r#"{"schema":1,"seq":3,"ts_ms":5,
            "member":{"group":"g","member_id":"m","instance_id":null,"client_id":"c"},
            "event":{"type":"snapshot","member_state":"Stable","generation":4,"leader_id":null,
              "protocol_name":"range","partitions":[],"in_flight":0,"concurrency":1,
              "since_last_progress_seconds":0.0,"buffered_records":0,"stream_dropped_total":0,
              "shutting_down":false}}"#;
        let envelope: Envelope = serde_json::from_str(old).unwrap();
        assert_eq!(envelope.member.group_protocol, None);
        let Event::Snapshot(snap) = &envelope.event else {
            panic!("a snapshot: {envelope:?}");
        };
        assert_eq!((&snap.group_protocol, &snap.consumer_state), (&None, &None));
        let identity = MemberIdentity {
            group: "g".into(),
            ..MemberIdentity::default()
        };
        let json = serde_json::to_value(&identity).unwrap();
        assert!(json.get("group_protocol").is_none(), "{json}");
        let consumer = MemberIdentity {
            group_protocol: Some("consumer".into()),
            ..identity
        };
        assert_eq!(
            serde_json::to_value(&consumer).unwrap()["group_protocol"],
            "consumer"
        );
        let snap = Snapshot {
            group_protocol: Some("consumer".into()),
            consumer_state: Some("instance_id_unreleased".into()),
            ..Snapshot::default()
        };
        let back: Snapshot = serde_json::from_value(serde_json::to_value(&snap).unwrap()).unwrap();
        assert_eq!(back, snap);
    }

    #[test]
    fn every_consumer_state_has_its_label() {
        use mooring_group::ConsumerMemberState as S;
        use mooring_telemetry_schema::{consumer_state_name, CONSUMER_MEMBER_STATES};
        let all = [
            S::Unsubscribed,
            S::Joining,
            S::Reconciling,
            S::Acknowledging,
            S::Stable,
            S::Fenced,
            S::Stale,
            S::Leaving,
            S::InstanceIdUnreleased,
            S::Fatal,
        ];
        let names: Vec<&str> = all.into_iter().map(consumer_state_name).collect();
        assert_eq!(names, CONSUMER_MEMBER_STATES);
        // As the coordinator serializes them.
        for (state, name) in all.into_iter().zip(names) {
            assert_eq!(serde_json::to_value(state).unwrap(), name);
        }
    }
}
