//! The telemetry lines the consumer's exporter posts to `/v1/events` (NDJSON envelopes of the
//! schema crate), made up for one member: the rebalance that announces the assignment, the
//! steady events (heartbeats, commits, backpressure) and the snapshot with every partition.

use mooring_telemetry_schema::SCHEMA_VERSION;
use mooring_telemetry_schema::{
    Envelope, Event, MemberIdentity, PartitionSnapshot, Phases, RebalanceCause, Snapshot,
    TopicPartition,
};

use crate::Error;

/// Envelopes of one member, numbered in order.
pub struct Lines {
    identity: MemberIdentity,
    seq: u64,
}

impl Lines {
    /// Lines of the bench's member of `group`, numbered from 0.
    pub fn new(group: String) -> Lines {
        Lines {
            identity: MemberIdentity {
                group,
                member_id: "sidecar-bench-member".into(),
                instance_id: None,
                client_id: "sidecar-bench".into(),
                group_protocol: Some("classic".into()),
            },
            seq: 0,
        }
    }

    /// Appends `event` as one NDJSON line to `out`.
    pub fn line(&mut self, event: Event, out: &mut Vec<u8>) -> Result<(), Error> {
        let envelope = Envelope {
            schema: SCHEMA_VERSION,
            seq: self.seq,
            ts_ms: mooring_sidecar::app::unix_ms(),
            member: self.identity.clone(),
            event,
        };
        self.seq += 1;
        serde_json::to_writer(&mut *out, &envelope)?;
        out.push(b'\n');
        Ok(())
    }
}

/// Partitions 0..n of `topic`.
fn partitions(topic: &str, n: i32) -> Vec<TopicPartition> {
    (0..n)
        .map(|p| TopicPartition {
            topic: topic.to_string(),
            partition: p,
        })
        .collect()
}

/// A rebalance that ends with `n` partitions assigned.
pub fn rebalance_body(lines: &mut Lines, topic: &str, n: i32) -> Result<Vec<u8>, Error> {
    let all = partitions(topic, n);
    let mut body = Vec::new();
    lines.line(
        Event::RebalanceStarted {
            cause: RebalanceCause::MemberJoined,
            generation: -1,
            protocol: "eager".into(),
        },
        &mut body,
    )?;
    lines.line(
        Event::Joined {
            generation: 1,
            member_id: "sidecar-bench-member".into(),
            leader: true,
            protocol_name: "range".into(),
            join_seconds: 0.012,
        },
        &mut body,
    )?;
    lines.line(
        Event::Synced {
            generation: 1,
            sync_seconds: 0.004,
        },
        &mut body,
    )?;
    lines.line(
        Event::PartitionsAssigned {
            added: all.clone(),
            assignment: all,
            duration_seconds: 0.001,
            timed_out: false,
        },
        &mut body,
    )?;
    lines.line(
        Event::RebalanceCompleted {
            generation: 1,
            total_seconds: 0.02,
            phases: Phases {
                join_seconds: 0.012,
                sync_seconds: 0.004,
                callbacks_seconds: 0.001,
                ..Phases::default()
            },
        },
        &mut body,
    )?;
    Ok(body)
}

/// `n` lines: heartbeats, commits, backpressure pause/resume, in turn.
pub fn events_body(
    lines: &mut Lines,
    topic: &str,
    partitions: i32,
    n: u64,
) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    for i in 0..n {
        let event = match i % 4 {
            0 => Event::Heartbeat {
                generation: 1,
                latency_seconds: 0.0008,
                error: None,
            },
            1 => Event::Commit {
                generation: 1,
                latency_seconds: 0.003,
                partitions: partitions.max(0) as usize,
                error: None,
            },
            k => Event::Backpressure {
                partition: TopicPartition {
                    topic: topic.to_string(),
                    partition: (i as i32 / 4) % partitions.max(1),
                },
                paused: k == 2,
            },
        };
        lines.line(event, &mut body)?;
    }
    Ok(body)
}

/// A snapshot with every partition.
pub fn snapshot_body(lines: &mut Lines, topic: &str, n: i32) -> Result<Vec<u8>, Error> {
    let snapshot = Snapshot {
        member_state: Some("Stable".into()),
        generation: 1,
        leader_id: Some("sidecar-bench-member".into()),
        protocol_name: Some("range".into()),
        partitions: (0..n)
            .map(|p| PartitionSnapshot {
                topic: topic.to_string(),
                partition: p,
                position: Some(1_000_000 + i64::from(p)),
                committed: Some(999_000 + i64::from(p)),
                high_watermark: Some(1_001_000 + i64::from(p)),
                paused: p % 50 == 0,
                in_flight: usize::from(p % 10 == 0),
            })
            .collect(),
        in_flight: 100,
        concurrency: 256,
        since_last_progress_seconds: 0.001,
        buffered_records: 5000,
        stream_dropped_total: 0,
        shutting_down: false,
        ..Snapshot::default()
    };
    let mut body = Vec::new();
    lines.line(Event::Snapshot(snapshot), &mut body)?;
    Ok(body)
}
