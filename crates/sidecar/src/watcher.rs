//! The broker watch: every `watch.interval.ms`, DescribeGroups, OffsetFetch and ListOffsets for
//! the configured group (with the coordinator crate), so the group's state, membership and lag
//! are known even when the consumer process is stuck or gone. A failed look-up is counted and
//! shown in `/debug/group`; the loop itself never stops (its ticks feed `/healthz`).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Instant;

use mooring_consumer::telemetry::Partition;
use mooring_coordinator::admin::OffsetSpec;
use mooring_coordinator::group::TopicPartition;
use mooring_coordinator::Client;
use tokio::sync::watch;

use crate::app::{unix_ms, unix_now, App};
use crate::metrics::GROUP_STATES;
use crate::state::{GroupMemberView, GroupView, PartitionLag};

/// Runs until `shutdown` turns true.
pub async fn run(app: Arc<App>, mut shutdown: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(
        app.config
            .watch_interval
            .max(std::time::Duration::from_millis(100)),
    );
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let client = match (&app.config.client, &app.config.group_id) {
        (Some(config), Some(_)) => match Client::new(config.clone()) {
            Ok(c) => Some(c),
            Err(e) => {
                app.state().watch_error = Some(e.to_string());
                None
            }
        },
        _ => None,
    };
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
        if let (Some(client), Some(group)) = (&client, &app.config.group_id) {
            // A broker call in flight never holds up shutdown (a pod's grace period is short).
            let result = tokio::select! {
                r = tokio::time::timeout(
                    app.config
                        .watch_interval
                        .max(std::time::Duration::from_secs(5)),
                    watch_once(&app, client, group),
                ) => r,
                _ = shutdown.wait_for(|s| *s) => return,
            };
            let error = match result {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some(e.to_string()),
                Err(_) => Some("timed out".to_string()),
            };
            match &error {
                Some(_) => app.metrics.broker_watch_errors_total.inc(),
                None => app
                    .metrics
                    .broker_watch_last_success_timestamp_seconds
                    .set(unix_now()),
            }
            app.state().watch_error = error;
        }
        app.state().watch_tick = Some(Instant::now());
        let _ = app.alerts();
    }
}

async fn watch_once(app: &App, client: &Client, group: &str) -> mooring_coordinator::Result<()> {
    let description = client.describe_group(group).await?;
    let members: Vec<GroupMemberView> = description
        .members
        .iter()
        .map(|m| GroupMemberView {
            member_id: m.member_id.clone(),
            instance_id: m.group_instance_id.clone(),
            client_id: m.client_id.clone(),
            host: m.client_host.clone(),
            partitions: m
                .assignment
                .as_ref()
                .map(|a| {
                    a.partitions
                        .iter()
                        .flat_map(|t| {
                            t.partitions.iter().map(|&p| Partition {
                                topic: t.topic.clone(),
                                partition: p,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect();
    let state_label = if GROUP_STATES.contains(&description.state.as_str()) {
        description.state.as_str()
    } else {
        "Unknown"
    };
    for s in GROUP_STATES {
        app.metrics
            .group_state
            .with_label_values(&[s])
            .set(i64::from(s == state_label));
    }
    app.metrics.group_members.set(members.len() as i64);

    let committed = client.committed_offsets(group, None).await?;
    let mut partitions: BTreeSet<TopicPartition> = committed.keys().cloned().collect();
    for m in &members {
        for p in &m.partitions {
            partitions.insert(TopicPartition::new(p.topic.clone(), p.partition));
        }
    }
    let partitions: Vec<TopicPartition> = partitions
        .into_iter()
        .take(app.config.lag_max_partitions)
        .collect();
    let ends = if partitions.is_empty() {
        BTreeMap::new()
    } else {
        client.list_offsets(&partitions, OffsetSpec::Latest).await?
    };

    let now = unix_now();
    let mut state = app.state();
    state.group = Some(GroupView {
        state: description.state.clone(),
        protocol: description.protocol.clone(),
        members,
        observed_ms: unix_ms(),
    });
    state.lag.clear();
    app.metrics.partition_lag_records.reset();
    app.metrics.partition_lag_seconds.reset();
    for tp in &partitions {
        let key = Partition {
            topic: tp.topic.clone(),
            partition: tp.partition,
        };
        let end = ends.get(tp).map(|o| o.offset);
        let committed = committed.get(tp).map(|c| c.offset);
        if let Some(end) = end {
            state
                .samples
                .entry(key.clone())
                .or_default()
                .record(end, now);
        }
        let lag_records = match (end, committed) {
            (Some(e), Some(c)) => (e - c).max(0),
            _ => 0,
        };
        let lag_seconds = match (committed, state.samples.get(&key)) {
            (Some(c), Some(s)) => s.time_lag(c, now),
            _ => 0.0,
        };
        let part = key.partition.to_string();
        app.metrics
            .partition_lag_records
            .with_label_values(&[key.topic.as_str(), part.as_str()])
            .set(lag_records);
        app.metrics
            .partition_lag_seconds
            .with_label_values(&[key.topic.as_str(), part.as_str()])
            .set(lag_seconds);
        state.lag.insert(
            key,
            PartitionLag {
                committed,
                end,
                lag_records,
                lag_seconds,
            },
        );
    }
    let keep: BTreeSet<Partition> = state.lag.keys().cloned().collect();
    state.samples.retain(|k, _| keep.contains(k));
    Ok(())
}
