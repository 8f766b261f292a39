//! The long-lived tasks `Consumer::run` starts beside the fetch loop: telemetry forwarders,
//! auto-commit, the metadata watcher (with its periodic refresher) and the watchers of the
//! member's state and of handler failures.
//!
//! None of them keeps the group member alive: they hold a [`WeakGroupHandle`] (or only the
//! member's state channel) and upgrade it for each use, so when `run` ends, or is dropped, the
//! member's last strong handle goes with it. `run` aborts them when it ends and when it is
//! dropped (they live in a `JoinSet` it owns); a task that starts one of its own ends it with an
//! [`AbortOnDrop`] guard, so an abort leaves nothing behind.

use std::collections::BTreeMap;
use std::sync::Arc;

use mooring_client::metadata::Metadata;
use mooring_client::Client;
use mooring_group::{
    EventReceiver, FencedPolicy, GroupEvent, GroupEventKind, GroupProtocol, MemberSnapshot,
    MemberState, WeakGroupHandle,
};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use super::commit::{commit_offsets, CommitLock, EngineOps};
use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::processing::{Dispatch, ProcessingEngine, ProcessingEvent, ProcessingEvents};
use crate::shared::Shared;
use crate::subscription::SubscriptionMode;

/// Aborts a task when dropped.
pub(crate) struct AbortOnDrop(pub(crate) JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Forwards the member's events until `flush` fires (or its sender is dropped), then forwards
/// what is queued and ends. It also ends when the member's event channel closes.
pub(crate) async fn forward_group_events(
    mut events: EventReceiver,
    shared: Arc<Shared>,
    mut flush: oneshot::Receiver<()>,
) {
    loop {
        tokio::select! {
            event = events.recv() => match event {
                Some(event) => forward(&shared, event),
                None => return,
            },
            _ = &mut flush => break,
        }
    }
    while let Ok(event) = events.try_recv() {
        forward(&shared, event);
    }
}

/// One member event to the application; a commit's latency, as the member timed it, also to
/// the window the client metrics push reports.
fn forward(shared: &Shared, event: GroupEvent) {
    if let GroupEventKind::Commit { latency, .. } = &event.kind {
        shared.commit_latency.record(*latency);
    }
    shared.emit(ConsumerEvent::Group(event));
}

pub(crate) async fn forward_engine_events(
    mut events: ProcessingEvents,
    shared: Arc<Shared>,
    member: Option<WeakGroupHandle<Client>>,
) {
    while let Some(event) = events.recv().await {
        // Backpressure reaches the fetcher from the engine itself, not through these events
        // (which a full queue may drop).
        if let ProcessingEvent::PollIntervalExceeded {
            partition, offset, ..
        } = &event
        {
            tracing::warn!(%partition, offset, "handler past max.poll.interval.ms; rejoining");
            if let Some(member) = member.as_ref().and_then(WeakGroupHandle::upgrade) {
                if let Err(e) = member.poll_interval_exceeded().await {
                    tracing::debug!(error = %e, "poll interval report");
                }
            }
        }
        shared.emit(ConsumerEvent::Processing(event));
    }
}

/// A handler failure under policy `stop` ends the run with the failure. Waits for the engine's
/// word of it (no polling), or for the shutdown.
pub(crate) async fn watch_failure<H: Dispatch>(shared: Arc<Shared>, engine: ProcessingEngine<H>) {
    let mut shutdown = shared.shutdown.subscribe();
    tokio::select! {
        biased;
        failure = engine.failed() => shared.fail(ConsumerError::HandlerFailed(Box::new(failure))),
        _ = shutdown.changed() => {}
    }
}

/// A member fenced for good, or failed, ends the run with the reason.
pub(crate) async fn watch_member(shared: Arc<Shared>, mut state: watch::Receiver<MemberSnapshot>) {
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
                    mooring_client::Error::FencedInstanceId {
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
                shared.fail(ConsumerError::from(match snapshot.failure {
                    Some(failure) => (*failure).clone(),
                    None => mooring_client::Error::Broker {
                        api: match snapshot.group_protocol {
                            GroupProtocol::Classic => "JoinGroup",
                            GroupProtocol::Consumer => "ConsumerGroupHeartbeat",
                            GroupProtocol::Share => "ShareGroupHeartbeat",
                        },
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

/// Commits what finished every `auto.commit.interval.ms`, each commit within
/// `default.api.timeout.ms`; ends once the member is gone.
pub(crate) async fn auto_commit(
    shared: Arc<Shared>,
    member: WeakGroupHandle<Client>,
    commits: Arc<CommitLock>,
    engine: Arc<dyn EngineOps>,
) {
    let mut tick = tokio::time::interval(shared.config.auto_commit_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tick.tick().await;
    loop {
        tick.tick().await;
        let Some(member) = member.upgrade() else {
            return;
        };
        if !member.state().state.has_generation() {
            continue;
        }
        let limit = shared.config.client.default_api_timeout;
        if let Err(failed) =
            commit_offsets(&shared, &member, &commits, engine.committable(), limit).await
        {
            if failed.error.is_fatal() {
                // `commit_offsets` has stopped the consumer with it.
                return;
            }
            tracing::debug!(error = %failed.error, "auto-commit failed; the next one retries");
            shared.emit(ConsumerEvent::CommitFailed {
                error: failed.error.to_string(),
            });
        }
    }
}

/// The topics a pattern matched here is matched against: every topic of the metadata but the
/// internal ones (`__consumer_offsets`, ...), as Java's default `exclude.internal.topics=true`.
pub(crate) fn pattern_candidates(metadata: &Metadata) -> impl Iterator<Item = String> + '_ {
    metadata
        .topics
        .values()
        .filter(|t| !t.is_internal)
        .map(|t| t.name.clone())
}

/// Group subscriptions follow the topics' metadata, refreshed every `metadata.max.age.ms` and,
/// while a subscribed topic is missing (not created yet, or not yet known to this broker), every
/// `retry.backoff.ms` doubling to `retry.backoff.max.ms`, as Java's client does. A missing topic
/// the broker refuses to describe (TOPIC_AUTHORIZATION_FAILED), or a refresh failing fatally
/// (authentication), stops the consumer with the error. Every refresh
/// re-evaluates a pattern (a change resubscribes) and, when the subscribed topics' partition
/// counts changed, tells the member, whose leader rejoins when they moved from those it assigned:
/// new partitions and topics get consumed. Ends (with its refresher) when aborted or once the
/// member is gone.
pub(crate) async fn watch_metadata(shared: Arc<Shared>, member: WeakGroupHandle<Client>) {
    let client = &shared.fetch_client;
    let _refresher = AbortOnDrop(client.spawn_metadata_refresher());
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
                return;
            }
        } else {
            tokio::select! {
                changed = updates.changed() => if changed.is_err() { return },
                () = tokio::time::sleep(backoff) => {
                    backoff = (backoff * 2).min(max_backoff);
                    match client.refresh_topics(&missing).await {
                        Ok(metadata) => {
                            // Left out of a refresh of every topic, refused when asked by name.
                            let denied = metadata.unauthorized_topics(&missing);
                            if !denied.is_empty() {
                                shared.fail(ConsumerError::TopicAuthorizationFailed {
                                    topics: denied,
                                    principal: shared.config.client.principal(),
                                });
                                return;
                            }
                        }
                        Err(error) if error.is_fatal() => {
                            shared.fail(error.into());
                            return;
                        }
                        Err(error) => {
                            tracing::debug!(%error, ?missing, "metadata for missing subscribed topics");
                        }
                    }
                    continue;
                }
            }
        }
        let metadata = updates.borrow_and_update().clone();
        let Some(member) = member.upgrade() else {
            return;
        };
        if shared.subs().mode() == SubscriptionMode::Pattern {
            // A pattern the broker matches is left alone (`update_pattern_matches` says so).
            let changed = shared
                .subs()
                .update_pattern_matches(pattern_candidates(&metadata));
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
                return;
            }
        }
    }
}
