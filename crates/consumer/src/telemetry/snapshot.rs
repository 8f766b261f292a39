//! Builds a [`Snapshot`] of the consumer's state: member state (with the group protocol and a
//! `consumer`-protocol member's own state), assignment, and per partition the position,
//! committed offset, high watermark, pause and handlers in flight; the engine's in-flight count
//! and the time since its last progress; the fetch loop's ticks; the handler latency histogram;
//! what was fetched from each broker. Locks are taken briefly, one at a time, never across an
//! `.await`.

use crate::Consumer;
use mooring_telemetry_schema::{
    consumer_state_name, BrokerFetchSnapshot, HandlerLatency, PartitionSnapshot, Snapshot,
};

/// The consumer's state now.
pub(crate) fn snapshot(consumer: &Consumer) -> Snapshot {
    let (shared, metrics) = consumer.telemetry_view();
    let member = consumer.member_state();
    let mut partitions: Vec<PartitionSnapshot> = {
        let subs = shared.subs();
        subs.partitions()
            .map(|(tp, state)| {
                let p = tp.clone();
                PartitionSnapshot {
                    topic: p.topic,
                    partition: p.partition,
                    position: state.position().map(|pos| pos.offset),
                    committed: state.committed().map(|c| c.offset),
                    high_watermark: state.high_watermark(),
                    paused: state.is_paused() || state.is_paused_by_backpressure(),
                    in_flight: 0,
                }
            })
            .collect()
    };
    let mut snap = Snapshot {
        member_state: member.as_ref().map(|m| format!("{:?}", m.state)),
        generation: member.as_ref().map_or(-1, |m| m.generation),
        leader_id: member.as_ref().and_then(|m| m.leader_id.clone()),
        protocol_name: member.as_ref().and_then(|m| m.protocol_name.clone()),
        partitions: Vec::new(),
        in_flight: 0,
        concurrency: 0,
        since_last_progress_seconds: 0.0,
        buffered_records: 0,
        stream_dropped_total: consumer.dropped_events(),
        shutting_down: shared.is_shutting_down(),
        loop_ticks: 0,
        since_last_loop_tick_seconds: None,
        handler_latency: None,
        memory_bytes: shared.memory.in_use() as u64,
        memory_limit_bytes: shared.memory.limit() as u64,
        fetch_brokers: consumer
            .fetch_stats()
            .brokers
            .into_iter()
            .map(|b| BrokerFetchSnapshot {
                node_id: b.node_id,
                rack: b.rack,
                record_bytes_total: b.record_bytes,
                records_total: b.records,
                follower_partitions: b.follower_partitions,
            })
            .collect(),
        client_rack: shared.config.client.client_rack.clone(),
        group_protocol: member
            .as_ref()
            .map(|m| m.group_protocol.as_str().to_string()),
        consumer_state: member
            .as_ref()
            .and_then(|m| m.consumer_state)
            .map(|s| consumer_state_name(s).to_string()),
    };
    let (ticks, since) = shared.loop_progress();
    snap.loop_ticks = ticks;
    if let Some(m) = metrics {
        snap.in_flight = m.in_flight;
        snap.concurrency = m.concurrency;
        snap.since_last_progress_seconds = m.since_last_progress.as_secs_f64();
        snap.buffered_records = m.partitions.iter().map(|p| p.buffered_records).sum();
        // Only while running: a consumer between runs has no loop to judge.
        snap.since_last_loop_tick_seconds = since.map(|d| d.as_secs_f64());
        snap.handler_latency = Some(HandlerLatency {
            buckets: m.handler_latency.cumulative(),
            sum_seconds: m.handler_latency.sum().as_secs_f64(),
            count: m.handler_latency.count(),
        });
        for pm in &m.partitions {
            let key = pm.partition.clone();
            if let Some(ps) = partitions
                .iter_mut()
                .find(|ps| ps.topic == key.topic && ps.partition == key.partition)
            {
                ps.in_flight = pm.in_flight;
            }
        }
    }
    partitions.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    snap.partitions = partitions;
    snap
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use std::collections::BTreeMap;

    use super::*;
    use crate::{ConsumerConfig, TopicPartition};

    #[test]
    fn a_snapshot_carries_what_was_fetched_from_each_broker() {
        let config =
            ConsumerConfig::from_properties([("bootstrap.servers", "127.0.0.1:9")]).unwrap();
        let consumer = Consumer::new(config).unwrap();
        let (shared, _) = consumer.telemetry_view();
        shared.fetch_stats.fetched(2, Some("r2"), 1000, 10);
        shared.fetch_stats.fetched(1, Some("r1"), 10, 1);
        shared
            .fetch_stats
            .set_followers(BTreeMap::from([(TopicPartition::new("t", 0), 2)]));
        let snap = snapshot(&consumer);
        assert_eq!(
            snap.fetch_brokers,
            [
                BrokerFetchSnapshot {
                    node_id: 1,
                    rack: Some("r1".into()),
                    record_bytes_total: 10,
                    records_total: 1,
                    follower_partitions: 0,
                },
                BrokerFetchSnapshot {
                    node_id: 2,
                    rack: Some("r2".into()),
                    record_bytes_total: 1000,
                    records_total: 10,
                    follower_partitions: 1,
                },
            ]
        );
        // On the wire by name; a line of an older exporter, without it, still reads.
        let mut json = serde_json::to_value(&snap).unwrap();
        assert_eq!(json["fetch_brokers"][1]["record_bytes_total"], 1000);
        assert_eq!(json["fetch_brokers"][1]["rack"], "r2");
        json.as_object_mut().unwrap().remove("fetch_brokers");
        let older: Snapshot = serde_json::from_value(json).unwrap();
        assert!(older.fetch_brokers.is_empty());
    }
}
