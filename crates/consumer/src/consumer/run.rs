//! `Consumer::run`: starts the processing engine, the group member (with the rebalance wiring),
//! the telemetry forwarders and auto-commit, runs the fetch loop until shutdown, then drains,
//! commits and closes.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use mooring_coordinator::group::{
    EventReceiver as GroupEvents, FencedPolicy, GroupHandle, GroupMember, MemberState,
};
use mooring_coordinator::Client;
use tokio::task::JoinSet;

use super::commit::{commit_offsets, EngineOps};
use super::rebalance::MemberListener;
use super::{Inner, Running};
use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::fetcher::Fetcher;
use crate::otel::spans::TraceInfo;
use crate::processing::{EventReceiver, Handler, ProcessingEngine, ProcessingEvent};
use crate::shared::Shared;
use crate::subscription::SubscriptionMode;

pub(crate) async fn run<H: Handler>(inner: &Inner, handler: H) -> Result<(), ConsumerError> {
    let shared = Arc::clone(&inner.shared);
    let config = &shared.config;
    let mode = shared.subs().mode();
    if mode == SubscriptionMode::None {
        return Err(ConsumerError::NotSubscribed);
    }
    if mode.is_group_managed() && config.group.is_none() {
        return Err(ConsumerError::NoGroup("subscribe"));
    }
    let trace = TraceInfo {
        group: config
            .group
            .as_ref()
            .map(|g| Arc::from(g.group_id.as_str())),
        client_id: Some(Arc::from(config.client.client_id.as_str())),
    };
    let (engine, engine_events) =
        ProcessingEngine::with_trace(config.processing.clone(), handler, trace)?;
    let mut tasks = JoinSet::new();

    let member = match (&config.group, &inner.group_client) {
        (Some(group), Some(client)) => {
            let cell = Arc::new(OnceLock::new());
            let listener = MemberListener {
                shared: Arc::clone(&shared),
                engine: engine.clone(),
                member: Arc::clone(&cell),
                commits: Arc::clone(&inner.commits),
                user: inner.listener(),
            };
            let member = GroupMember::spawn(Arc::clone(client), group.clone(), listener)?;
            let _ = cell.set(member.clone());
            Some(member)
        }
        _ => None,
    };
    if mode == SubscriptionMode::ManualAssign {
        engine.add_partitions(shared.subs().assigned_partitions());
    }
    inner.set_running(Some(Running {
        member: member.clone(),
        engine: Arc::new(engine.clone()),
    }));

    // Kept apart from `tasks`: the member's last events (revoked, left) are still queued when
    // it has closed, and must reach the application before `run` returns.
    let (flush, flushed) = tokio::sync::oneshot::channel();
    let group_events = member
        .as_ref()
        .and_then(GroupHandle::take_events)
        .map(|events| tokio::spawn(forward_group_events(events, Arc::clone(&shared), flushed)));
    tasks.spawn(forward_engine_events(
        engine_events,
        Arc::clone(&shared),
        member.clone(),
    ));

    let started = async {
        if let (Some(member), true) = (&member, mode.is_group_managed()) {
            if mode == SubscriptionMode::Pattern {
                let metadata = shared.fetch_client.refresh_metadata().await?;
                shared
                    .subs()
                    .update_pattern_matches(metadata.topics.keys().cloned());
            }
            tasks.spawn(watch_metadata(Arc::clone(&shared), member.clone()));
            let topics = shared.subs().subscribed_topics();
            member.subscribe(topics).await?;
        }
        Ok::<(), ConsumerError>(())
    }
    .await;
    if let Err(e) = started {
        shared.fail(e);
    }

    if let (Some(member), true) = (&member, config.enable_auto_commit) {
        tasks.spawn(auto_commit(
            Arc::clone(&shared),
            member.clone(),
            Arc::clone(&inner.commits),
            Arc::new(engine.clone()),
        ));
    }
    if let Some(member) = &member {
        tasks.spawn(watch_member(Arc::clone(&shared), member.clone()));
    }
    tasks.spawn(watch_failure(Arc::clone(&shared), engine.clone()));

    Fetcher::new(Arc::clone(&shared), engine.clone(), member.clone())
        .run()
        .await;

    // Shutdown: fetching has stopped; drain, commit, close.
    let begun = Instant::now();
    let report = engine.shutdown(config.shutdown_timeout).await;
    if let Some(member) = &member {
        if member.state().state.has_generation() {
            if let Err(e) =
                commit_offsets(&shared, member, &inner.commits, report.committable).await
            {
                tracing::warn!(error = %e, "commit at shutdown failed");
                shared.emit(ConsumerEvent::CommitFailed {
                    error: e.to_string(),
                });
            }
        }
        if let Err(e) = member.close().await {
            tracing::warn!(error = %e, "closing the group member");
        }
    }
    tasks.abort_all();
    let _ = flush.send(());
    if let Some(forwarder) = group_events {
        let _ = forwarder.await;
    }
    inner.set_running(None);
    shared.emit(ConsumerEvent::Shutdown {
        duration: begun.elapsed(),
        timed_out: report.timed_out,
    });
    match shared.fatal() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Forwards the member's events until `flush` fires (or its sender is dropped), then forwards
/// what is queued and ends.
async fn forward_group_events(
    mut events: GroupEvents,
    shared: Arc<Shared>,
    mut flush: tokio::sync::oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => shared.emit(ConsumerEvent::Group(event)),
                None => return,
            },
            _ = &mut flush => break,
        }
    }
    while let Ok(event) = events.try_recv() {
        shared.emit(ConsumerEvent::Group(event));
    }
}

async fn forward_engine_events(
    mut events: EventReceiver,
    shared: Arc<Shared>,
    member: Option<GroupHandle<Client>>,
) {
    while let Some(event) = events.recv().await {
        match &event {
            ProcessingEvent::BackpressureResume { .. } => shared.wake(),
            ProcessingEvent::PollIntervalExceeded {
                partition, offset, ..
            } => {
                tracing::warn!(%partition, offset, "handler past max.poll.interval.ms; rejoining");
                if let Some(member) = &member {
                    if let Err(e) = member.poll_interval_exceeded().await {
                        tracing::debug!(error = %e, "poll interval report");
                    }
                }
            }
            _ => {}
        }
        shared.emit(ConsumerEvent::Processing(event));
    }
}

/// A handler failure under policy `stop` ends the run with the failure.
async fn watch_failure<H: Handler>(shared: Arc<Shared>, engine: ProcessingEngine<H>) {
    let mut shutdown = shared.shutdown.subscribe();
    loop {
        if let Some(failure) = engine.failure() {
            shared.fail(ConsumerError::HandlerFailed(Box::new(failure)));
            return;
        }
        tokio::select! {
            _ = shutdown.changed() => return,
            _ = tokio::time::sleep(std::time::Duration::from_millis(50)) => {}
        }
    }
}

/// A member fenced for good, or failed, ends the run with the reason.
async fn watch_member(shared: Arc<Shared>, member: GroupHandle<Client>) {
    let mut state = member.watch_state();
    loop {
        let snapshot = state.borrow_and_update().clone();
        match snapshot.state {
            MemberState::Fenced
                if shared
                    .config
                    .group
                    .as_ref()
                    .is_some_and(|g| g.fenced_policy == FencedPolicy::Stop) =>
            {
                shared.fail(ConsumerError::Client(
                    mooring_coordinator::Error::FencedInstanceId {
                        group: shared
                            .config
                            .group
                            .as_ref()
                            .map(|g| g.group_id.clone())
                            .unwrap_or_default(),
                        instance_id: snapshot.group_instance_id.unwrap_or_default(),
                    },
                ));
                return;
            }
            MemberState::Failed(code) => {
                shared.fail(ConsumerError::Client(match snapshot.failure {
                    Some(failure) => (*failure).clone(),
                    None => mooring_coordinator::Error::Broker {
                        api: "JoinGroup",
                        code,
                        message: Some("the group member stopped".into()),
                    },
                }));
                return;
            }
            _ => {}
        }
        if state.changed().await.is_err() {
            return;
        }
    }
}

async fn auto_commit(
    shared: Arc<Shared>,
    member: GroupHandle<Client>,
    commits: Arc<super::commit::CommitLock>,
    engine: Arc<dyn EngineOps>,
) {
    let mut tick = tokio::time::interval(shared.config.auto_commit_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        if !member.state().state.has_generation() {
            continue;
        }
        if let Err(e) = commit_offsets(&shared, &member, &commits, engine.committable()).await {
            tracing::debug!(error = %e, "auto-commit failed; the next one retries");
            shared.emit(ConsumerEvent::CommitFailed {
                error: e.to_string(),
            });
        }
    }
}

/// Group subscriptions follow the topics' metadata, refreshed every `metadata.max.age.ms` and,
/// while a subscribed topic is missing (not created yet, or not yet known to this broker), every
/// `retry.backoff.ms` doubling to `retry.backoff.max.ms`, as Java's client does. Every refresh
/// re-evaluates a pattern (a change resubscribes) and, when the subscribed topics' partition
/// counts changed, tells the member, whose leader rejoins when they moved from those it assigned:
/// new partitions and topics get consumed.
async fn watch_metadata(shared: Arc<Shared>, member: GroupHandle<Client>) {
    let client = &shared.fetch_client;
    let refresher = client.spawn_metadata_refresher();
    let mut updates = client.metadata_updates();
    let (first_backoff, max_backoff) = (
        shared.config.client.retry_backoff,
        shared.config.client.retry_backoff_max,
    );
    let mut backoff = first_backoff;
    let mut last_counts: Option<BTreeMap<String, usize>> = None;
    loop {
        let missing: Vec<String> = {
            let metadata = updates.borrow();
            shared
                .subs()
                .subscribed_topics()
                .into_iter()
                .filter(|t| metadata.partition_count(t).unwrap_or(0) == 0)
                .collect()
        };
        if missing.is_empty() {
            backoff = first_backoff;
            if updates.changed().await.is_err() {
                break;
            }
        } else {
            tokio::select! {
                changed = updates.changed() => if changed.is_err() { break },
                () = tokio::time::sleep(backoff) => {
                    backoff = (backoff * 2).min(max_backoff);
                    if let Err(error) = client.refresh_topics(&missing).await {
                        tracing::debug!(%error, ?missing, "metadata for missing subscribed topics");
                    }
                    continue;
                }
            }
        }
        let metadata = updates.borrow_and_update().clone();
        if shared.subs().mode() == SubscriptionMode::Pattern {
            let changed = shared
                .subs()
                .update_pattern_matches(metadata.topics.keys().cloned());
            if changed {
                let topics = shared.subs().subscribed_topics();
                tracing::info!(?topics, "pattern matches changed");
                if let Err(e) = member.subscribe(topics).await {
                    tracing::warn!(error = %e, "resubscribing after a pattern change");
                }
            }
        }
        // Only when the subscribed topics' partition counts moved: the leader's check fetches
        // metadata itself, and that snapshot must not notify it again.
        let counts: BTreeMap<String, usize> = shared
            .subs()
            .subscribed_topics()
            .into_iter()
            .filter_map(|t| {
                let count = metadata.topics.get(&t)?.partitions.len();
                (count > 0).then_some((t, count))
            })
            .collect();
        if last_counts.as_ref() != Some(&counts) {
            last_counts = Some(counts);
            if member.metadata_changed().await.is_err() {
                break;
            }
        }
    }
    refresher.abort();
}
