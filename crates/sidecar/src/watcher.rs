//! The broker watch: every `watch.interval.ms`, DescribeGroups (ConsumerGroupDescribe for a
//! `consumer`-protocol group), OffsetFetch and ListOffsets for the configured group (with the
//! network client, `mooring-client`), so the group's state, membership, epochs and lag are known even when the
//! consumer process is stuck or gone. A failed look-up is counted and
//! shown in `/debug/group`; the loop itself never stops (its ticks feed `/healthz`).
//!
//! A share group (KIP-932) is read with ShareGroupDescribe, DescribeShareGroupOffsets (each
//! share-partition's start offset and the broker's lag) and ListOffsets (the log end), under the
//! same `lag.max.partitions` bound, and its `share.delivery.count.limit` with DescribeConfigs.
//! The lag table then holds share-partitions: the start offset as the committed offset, the
//! broker's share-partition lag as the lag (the log end minus the start offset where the broker
//! does not say it), and no owner (every member may be assigned every share-partition).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mooring_client::admin::{ConsumerGroupDescription, GroupDescription, ShareGroupDescription};
use mooring_client::Client;
use mooring_client::TopicPartition;
use mooring_client::{OffsetAndMetadata, OffsetAndTimestamp, OffsetSpec};
use tokio::sync::watch;

use crate::app::{unix_ms, unix_now, App};
use crate::metrics::GROUP_STATES;
use crate::state::{
    GroupMemberView, GroupView, MemberWatch, PartitionLag, State, GROUP_TYPE_CLASSIC,
    GROUP_TYPE_CONSUMER, GROUP_TYPE_SHARE,
};

/// The group config that says how often a share group delivers a record before archiving it.
const DELIVERY_COUNT_LIMIT: &str = "share.delivery.count.limit";

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
            _ = app.watch_now.notified() => {}
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
        crate::ingest::settle_causes(&app);
        let _ = app.alerts();
    }
}

/// The group as the broker describes it, whichever protocol it runs.
struct Described {
    view: GroupView,
    /// The view lists each member's current assignment (a classic group only when Stable; a
    /// `consumer` group always).
    assignments_listed: bool,
}

/// DescribeGroups for a classic group, ConsumerGroupDescribe for a `consumer` one. Kafka answers
/// DescribeGroups for a `consumer` group with GROUP_ID_NOT_FOUND (described as `Dead` without
/// members), so such an answer is asked again with ConsumerGroupDescribe; once a group answered
/// that, it is asked first (until it says the group is not a consumer group). A broker without
/// ConsumerGroupDescribe (UNSUPPORTED_VERSION) has no `consumer` groups: the classic answer
/// stands.
///
/// A share group is not a classic or a `consumer` group either: when both say so, or when the
/// group (or the member's telemetry) was a share group's, ShareGroupDescribe is asked (first,
/// in the second case). A broker without share groups answers UNSUPPORTED_VERSION: no such
/// group there.
async fn describe(app: &App, client: &Client, group: &str) -> mooring_client::Result<Described> {
    let (consumer_first, share_first) = {
        let state = app.state();
        let known = state.group.as_ref().map(|g| g.group_type);
        (
            known == Some(GROUP_TYPE_CONSUMER),
            known == Some(GROUP_TYPE_SHARE) || state.member.is_share(),
        )
    };
    if share_first {
        match client.describe_share_group(group).await {
            Ok(Some(d)) => return Ok(share_view(d)),
            Ok(None) | Err(mooring_client::Error::UnsupportedVersion { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    if consumer_first {
        if let Some(d) = client.describe_consumer_group(group).await? {
            return Ok(consumer_view(d));
        }
    }
    let description = client.describe_group(group).await?;
    if description.state == "Dead" && description.members.is_empty() {
        if !consumer_first {
            match client.describe_consumer_group(group).await {
                Ok(Some(d)) => return Ok(consumer_view(d)),
                Ok(None) | Err(mooring_client::Error::UnsupportedVersion { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if !share_first {
            match client.describe_share_group(group).await {
                Ok(Some(d)) => return Ok(share_view(d)),
                Ok(None) | Err(mooring_client::Error::UnsupportedVersion { .. }) => {}
                Err(e) => return Err(e),
            }
        }
    }
    Ok(classic_view(description))
}

fn classic_view(description: GroupDescription) -> Described {
    let members = description
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
                            t.partitions.iter().map(|&p| TopicPartition {
                                topic: t.topic.clone(),
                                partition: p,
                            })
                        })
                        .collect()
                })
                .unwrap_or_default(),
            member_epoch: None,
            subscribed_topics: m
                .subscription
                .as_ref()
                .map(|s| s.topics.clone())
                .unwrap_or_default(),
            subscribed_regex: None,
            target_partitions: None,
        })
        .collect();
    Described {
        assignments_listed: description.state == "Stable",
        view: GroupView {
            state: description.state,
            protocol: description.protocol,
            members,
            observed_ms: unix_ms(),
            group_type: GROUP_TYPE_CLASSIC,
            group_epoch: None,
            assignment_epoch: None,
        },
    }
}

fn consumer_view(d: ConsumerGroupDescription) -> Described {
    let members = d
        .members
        .into_iter()
        .map(|m| GroupMemberView {
            member_id: m.member_id,
            instance_id: m.instance_id,
            client_id: m.client_id,
            host: m.client_host,
            partitions: m.assignment,
            member_epoch: Some(m.member_epoch),
            subscribed_topics: m.subscribed_topic_names,
            subscribed_regex: m.subscribed_topic_regex,
            target_partitions: Some(m.target_assignment),
        })
        .collect();
    Described {
        assignments_listed: true,
        view: GroupView {
            state: d.state,
            protocol: d.assignor,
            members,
            observed_ms: unix_ms(),
            group_type: GROUP_TYPE_CONSUMER,
            group_epoch: Some(d.group_epoch),
            assignment_epoch: Some(d.assignment_epoch),
        },
    }
}

fn share_view(d: ShareGroupDescription) -> Described {
    let members = d
        .members
        .into_iter()
        .map(|m| GroupMemberView {
            member_id: m.member_id,
            instance_id: None,
            client_id: m.client_id,
            host: m.client_host,
            partitions: m.assignment,
            member_epoch: Some(m.member_epoch),
            subscribed_topics: m.subscribed_topic_names,
            subscribed_regex: None,
            target_partitions: None,
        })
        .collect();
    Described {
        assignments_listed: true,
        view: GroupView {
            state: d.state,
            protocol: d.assignor,
            members,
            observed_ms: unix_ms(),
            group_type: GROUP_TYPE_SHARE,
            group_epoch: Some(d.group_epoch),
            assignment_epoch: Some(d.assignment_epoch),
        },
    }
}

async fn watch_once(app: &App, client: &Client, group: &str) -> mooring_client::Result<()> {
    // The view counts as read when asked: it is at least this fresh.
    let asked = Instant::now();
    let Described {
        view,
        assignments_listed,
    } = describe(app, client, group).await?;
    // The broker's state at some moment before this: what any event after it must follow.
    let answered_ms = unix_ms();
    set_group_metrics(app, &view);
    if view.group_type == GROUP_TYPE_SHARE {
        return watch_share_group(app, client, group, view).await;
    }
    let offsets = read_offsets(app, client, group, &view.members).await?;
    let owners = assignments_listed.then(|| owners(&view.members));
    let now = unix_now();
    let mut state = app.state();
    if let Some(epoch) = view.group_epoch {
        state.record_epoch_view(epoch, &view.members, answered_ms);
    }
    let stable = view.state == "Stable";
    state.group = Some(view);
    let consumed = update_lag(&mut state, &offsets, owners.as_ref(), now);
    let state = &mut *state;
    crate::scaling_signal::after_lookup(state, &app.config.scaling, consumed, now);
    let now_ms = (now * 1000.0) as i64;
    let lookup = state.lag.iter().map(|(tp, l)| (tp, l.end, l.committed));
    state
        .lag_status
        .after_lookup(lookup, now_ms, &app.config.lag_status);
    track_members(state, assignments_listed, stable, asked);
    Ok(())
}

/// The group's own series: its state (1 for the one it is in, `Unknown` for a state this build
/// does not name), its member count and its epochs (-1 for a classic group).
fn set_group_metrics(app: &App, view: &GroupView) {
    let state_label = if GROUP_STATES.contains(&view.state.as_str()) {
        view.state.as_str()
    } else {
        "Unknown"
    };
    for s in GROUP_STATES {
        app.metrics
            .group_state
            .with_label_values(&[s])
            .set(i64::from(s == state_label));
    }
    app.metrics.group_members.set(view.members.len() as i64);
    app.metrics
        .group_epoch
        .set(view.group_epoch.map_or(-1, i64::from));
    app.metrics
        .group_assignment_epoch
        .set(view.assignment_epoch.map_or(-1, i64::from));
}

/// The offsets one look-up reads: the group's committed offsets and the end offsets of the
/// watched partitions.
struct Offsets {
    /// Every partition with a committed offset or assigned to a member, in order, capped at
    /// `lag.max.partitions`.
    watched: Vec<TopicPartition>,
    committed: BTreeMap<TopicPartition, OffsetAndMetadata>,
    ends: BTreeMap<TopicPartition, OffsetAndTimestamp>,
}

/// OffsetFetch for the group, then ListOffsets (latest) for the partitions it commits or is
/// assigned (none asked when there are none).
async fn read_offsets(
    app: &App,
    client: &Client,
    group: &str,
    members: &[GroupMemberView],
) -> mooring_client::Result<Offsets> {
    let committed = client.committed_offsets(group, None).await?;
    let mut partitions: BTreeSet<TopicPartition> = committed.keys().cloned().collect();
    for m in members {
        for p in &m.partitions {
            partitions.insert(TopicPartition::new(p.topic.clone(), p.partition));
        }
    }
    let watched: Vec<TopicPartition> = partitions
        .into_iter()
        .take(app.config.lag_max_partitions)
        .collect();
    let ends = if watched.is_empty() {
        BTreeMap::new()
    } else {
        client.list_offsets(&watched, OffsetSpec::Latest).await?
    };
    Ok(Offsets {
        watched,
        committed,
        ends,
    })
}

/// Each listed partition's owner: the member's `group.instance.id`, else its member id. Only
/// for a view that lists assignments: outside Stable the broker lists no classic group's
/// assignments, and owners are then kept from the last view.
fn owners(members: &[GroupMemberView]) -> BTreeMap<TopicPartition, String> {
    members
        .iter()
        .flat_map(|m| {
            let owner = m.instance_id.as_ref().unwrap_or(&m.member_id);
            m.partitions.iter().map(|p| (p.clone(), owner.clone()))
        })
        .collect()
}

/// Brings the lag table (and the end-offset samples the time lag is estimated from) up to the
/// look-up's offsets. `owners` is `None` when the view lists no assignments: each partition then
/// keeps the owner it had. Returns the records consumed since the look-up before ([`set_lag`]).
///
/// The lag table is the lag series' only source (`/metrics` writes them from it): entries are
/// updated in place and only those of partitions no longer watched are removed, all under the
/// state lock, so a scrape sees every watched partition (a reset first let a concurrent scrape
/// see some missing, seen by sidecar-bench: 370 of 1,000 in one scrape, which Prometheus takes
/// for stale series).
fn update_lag(
    state: &mut State,
    offsets: &Offsets,
    owners: Option<&BTreeMap<TopicPartition, String>>,
    now: f64,
) -> i64 {
    let rows = offsets
        .watched
        .iter()
        .map(|tp| {
            let partition = TopicPartition {
                topic: tp.topic.clone(),
                partition: tp.partition,
            };
            let owner = match owners {
                Some(owners) => owners.get(&partition).cloned(),
                None => state.lag.get(&partition).and_then(|l| l.owner.clone()),
            };
            LagRow {
                committed: offsets.committed.get(tp).map(|c| c.offset),
                end: offsets.ends.get(tp).map(|o| o.offset),
                lag_records: None,
                owner,
                start_offset: None,
                partition,
            }
        })
        .collect();
    set_lag(state, rows, now)
}

/// One watched partition's figures, for [`set_lag`].
struct LagRow {
    partition: TopicPartition,
    committed: Option<i64>,
    end: Option<i64>,
    /// The lag when the broker says it (a share-partition's); else the log end minus the
    /// committed offset.
    lag_records: Option<i64>,
    owner: Option<String>,
    start_offset: Option<i64>,
}

/// The lag table (and its time-lag samples) as `rows` say, in place; partitions not among them
/// are removed. Returns the records consumed since the look-up before: the committed offsets'
/// advance over the partitions committed both times (a committed offset that went back counts
/// nothing).
fn set_lag(state: &mut State, rows: Vec<LagRow>, now: f64) -> i64 {
    let mut consumed = 0;
    let mut watched = BTreeSet::new();
    for row in rows {
        let key = row.partition;
        if let Some(end) = row.end {
            state
                .samples
                .entry(key.clone())
                .or_default()
                .record(end, now);
        }
        let lag_records = row.lag_records.unwrap_or(match (row.end, row.committed) {
            (Some(e), Some(c)) => (e - c).max(0),
            _ => 0,
        });
        let lag_seconds = match (row.committed, state.samples.get(&key)) {
            (Some(c), Some(s)) => s.time_lag(c, now),
            _ => 0.0,
        };
        let lag = PartitionLag {
            committed: row.committed,
            end: row.end,
            lag_records,
            lag_seconds,
            owner: row.owner,
            start_offset: row.start_offset,
        };
        match state.lag.get_mut(&key) {
            Some(entry) => {
                if let (Some(before), Some(after)) = (entry.committed, lag.committed) {
                    consumed += (after - before).max(0);
                }
                *entry = lag;
            }
            None => {
                state.lag.insert(key.clone(), lag);
            }
        }
        watched.insert(key);
    }
    state.lag.retain(|k, _| watched.contains(k));
    state.samples.retain(|k, _| watched.contains(k));
    consumed
}

/// Follows each member's progress for [`classify`](crate::state::classify): in a view that lists
/// assignments, a member whose committed offsets moved, or whose partitions have nothing waiting,
/// made progress now; a member with new partitions starts over. Members missing from a view are
/// marked gone (and forgotten ten minutes later). A Stable view's members are the ones the
/// rebalance causes compare.
fn track_members(state: &mut State, assignments_listed: bool, stable: bool, asked: Instant) {
    let now = Instant::now();
    let Some(view) = state.group.clone() else {
        return;
    };
    let listed: BTreeSet<String> = view.members.iter().map(|m| m.member_id.clone()).collect();
    for member in &view.members {
        let committed: BTreeMap<TopicPartition, i64> = member
            .partitions
            .iter()
            .filter_map(|p| Some((p.clone(), state.lag.get(p)?.committed?)))
            .collect();
        let waiting = member
            .partitions
            .iter()
            .any(|p| state.lag.get(p).is_some_and(|l| l.lag_records > 0));
        let entry = state
            .member_watch
            .entry(member.member_id.clone())
            .or_insert_with(|| MemberWatch {
                partitions: Vec::new(),
                committed: BTreeMap::new(),
                last_seen: now,
                last_progress: now,
                gone: None,
            });
        entry.last_seen = now;
        entry.gone = None;
        // Without assignments (a classic group outside Stable) only the sighting counts.
        if !assignments_listed {
            continue;
        }
        let moved = committed
            .iter()
            .any(|(p, c)| entry.committed.get(p).is_none_or(|before| c > before));
        if entry.partitions != member.partitions || moved || !waiting {
            entry.last_progress = now;
        }
        entry.partitions.clone_from(&member.partitions);
        entry.committed = committed;
    }
    for (id, w) in state.member_watch.iter_mut() {
        if !listed.contains(id) && w.gone.is_none() {
            w.gone = Some(now);
        }
    }
    state.member_watch.retain(|_, w| {
        w.gone
            .is_none_or(|g| now.duration_since(g) < Duration::from_secs(600))
    });
    if stable {
        state.last_stable_members = Some((asked, listed));
    }
}

/// A share group's look-up after ShareGroupDescribe: each share-partition's start offset and
/// lag, the log ends, and the group's delivery limit. The cause machinery of the other protocols
/// (Stable views, each member's commits) has nothing to follow here: a share group commits
/// nothing, and its members' assignment changes are the coordinator's, reported by the member.
async fn watch_share_group(
    app: &App,
    client: &Client,
    group: &str,
    view: GroupView,
) -> mooring_client::Result<()> {
    let offsets = client.share_group_offsets(group).await?;
    let mut partitions: BTreeSet<TopicPartition> = offsets
        .iter()
        .filter(|(_, o)| o.start_offset >= 0)
        .map(|(tp, _)| tp.clone())
        .collect();
    for m in &view.members {
        partitions.extend(m.partitions.iter().cloned());
    }
    let watched: Vec<TopicPartition> = partitions
        .into_iter()
        .take(app.config.lag_max_partitions)
        .collect();
    let ends = if watched.is_empty() {
        BTreeMap::new()
    } else {
        client.list_offsets(&watched, OffsetSpec::Latest).await?
    };
    // The delivery limit only sharpens a metric: a refusal (no DescribeConfigs on the group for
    // this principal) leaves it unknown, the rest of the look-up stands.
    let limit = match client.describe_group_configs(group).await {
        Ok(configs) => configs
            .get(DELIVERY_COUNT_LIMIT)
            .and_then(|v| v.as_deref()?.trim().parse::<i32>().ok()),
        Err(error) => {
            tracing::info!(%error, group, "the share group's configuration could not be read");
            None
        }
    };
    let now = unix_now();
    let rows: Vec<LagRow> = watched
        .iter()
        .map(|tp| {
            let share = offsets.get(tp).filter(|o| o.start_offset >= 0);
            let start = share.map(|o| o.start_offset);
            let end = ends.get(tp).map(|o| o.offset);
            let lag = share.and_then(|o| o.lag).or(match (end, start) {
                (Some(e), Some(s)) => Some((e - s).max(0)),
                _ => None,
            });
            LagRow {
                partition: TopicPartition {
                    topic: tp.topic.clone(),
                    partition: tp.partition,
                },
                committed: start,
                end,
                lag_records: lag,
                owner: None,
                start_offset: start,
            }
        })
        .collect();
    let mut state = app.state();
    state.group = Some(view);
    let consumed = set_lag(&mut state, rows, now);
    crate::scaling_signal::after_lookup(&mut state, &app.config.scaling, consumed, now);
    crate::share::set_delivery_count_limit(app, &mut state, limit);
    Ok(())
}
