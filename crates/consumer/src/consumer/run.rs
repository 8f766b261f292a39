//! `Consumer::run`: starts the processing engine, the group member (with the rebalance wiring),
//! the telemetry forwarders and auto-commit ([`tasks`](super::tasks)), runs the fetch loop until
//! shutdown, then winds down: drains, commits and closes, all of it by
//! `mooring.shutdown.timeout.ms` whatever the brokers do.
//!
//! What `run` starts belongs to a [`Lifecycle`] that the `run` future owns. When the future is
//! dropped before its end (a `select!` took another branch, its task was aborted), the
//! lifecycle's drop ends all of it: the fetch loop and its fetches go with the future, the tasks
//! are aborted, the consumer's `Running` state (its handle to the member) is cleared, and the
//! wind-down runs in the background, bounded the same way. So a dropped `run` leaves no member
//! heartbeating with partitions that nothing fetches: a dynamic member leaves the group, a static
//! one stops heartbeating and stays until its session times out.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mooring_client::Client;
use mooring_group::{GroupHandle, GroupMember};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::Instant;

use super::commit::{commit_offsets, report_not_committed, CommitLock};
use super::rebalance::MemberListener;
use super::tasks::{
    auto_commit, forward_engine_events, forward_group_events, pattern_candidates, watch_failure,
    watch_member, watch_metadata, AbortOnDrop,
};
use super::{Inner, Running};
use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::fetcher::Fetcher;
use crate::metrics_push::MetricsPush;
use crate::processing::spans::TraceInfo;
use crate::processing::{Dispatch, ProcessingEngine, ProcessingEvents, StopReport};
use crate::shared::Shared;
use crate::subscription::SubscriptionMode;
use crate::telemetry::fatal::FATAL_EXPORT_WAIT;

pub(crate) async fn run<H: Dispatch>(inner: &Inner, handler: H) -> Result<(), ConsumerError> {
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
    let member = spawn_member(inner, &engine)?;
    if mode == SubscriptionMode::ManualAssign {
        engine.add_partitions(shared.subs().assigned_partitions());
    }
    inner.set_running(Some(Running {
        member: member.clone(),
        engine: Arc::new(engine.clone()),
    }));
    let mut life = Lifecycle {
        inner,
        shared: Arc::clone(&shared),
        engine: engine.clone(),
        member,
        tasks: JoinSet::new(),
        auto_commit: None,
        group_events: None,
        metrics_push: None,
        finished: false,
    };
    life.start(mode, engine_events).await;
    // The fetch loop ends by itself at its next turn after a shutdown request; a turn waiting on
    // an unreachable broker must not hold the shutdown up, so it is dropped at the request.
    let mut stopping = shared.shutdown.subscribe();
    tokio::select! {
        () = Fetcher::new(Arc::clone(&shared), engine, life.member.clone()).run() => {}
        _ = stopping.wait_for(|stop| *stop) => {}
    }
    life.finish().await
}

/// The group member, with the rebalance wiring as its listener (holding it weakly).
fn spawn_member<H: Dispatch>(
    inner: &Inner,
    engine: &ProcessingEngine<H>,
) -> Result<Option<GroupHandle<Client>>, ConsumerError> {
    let (Some(group), Some(client)) = (&inner.shared.config.group, &inner.group_client) else {
        return Ok(None);
    };
    let cell = Arc::new(OnceLock::new());
    let listener = MemberListener {
        shared: Arc::clone(&inner.shared),
        engine: engine.clone(),
        member: Arc::clone(&cell),
        commits: Arc::clone(&inner.commits),
        user: inner.listener(),
    };
    let member = GroupMember::spawn(Arc::clone(client), group.clone(), listener)?;
    let _ = cell.set(member.downgrade());
    Ok(Some(member))
}

/// Everything a run started, owned by the `run` future; its drop ends what is left (see the
/// module docs).
struct Lifecycle<'a, H: Dispatch> {
    inner: &'a Inner,
    shared: Arc<Shared>,
    engine: ProcessingEngine<H>,
    /// The only strong handle to the member besides `Running`'s and the fetch loop's.
    member: Option<GroupHandle<Client>>,
    /// Watchers and the engine's event forwarder: aborted when the run ends or is dropped.
    tasks: JoinSet<()>,
    /// Stopped when the wind-down begins: the final commit takes its place.
    auto_commit: Option<AbortOnDrop>,
    /// The member's event forwarder and its flush, kept apart from `tasks`: the member's last
    /// events (revoked, left) are still queued when it has closed, and must reach the
    /// application before the run ends.
    group_events: Option<(JoinHandle<()>, oneshot::Sender<()>)>,
    /// The client metrics reporter: its terminating push comes at the end of the wind-down,
    /// with the final figures.
    metrics_push: Option<MetricsPush>,
    /// The wind-down ran to its end in `run`.
    finished: bool,
}

impl<H: Dispatch> Lifecycle<'_, H> {
    /// Starts the tasks and joins the group; a failure to join stops the run.
    async fn start(&mut self, mode: SubscriptionMode, engine_events: ProcessingEvents) {
        let shared = &self.shared;
        let weak = self.member.as_ref().map(GroupHandle::downgrade);
        if let Some(events) = self.member.as_ref().and_then(GroupHandle::take_events) {
            let (flush, flushed) = oneshot::channel();
            let forwarder = tokio::spawn(forward_group_events(events, Arc::clone(shared), flushed));
            self.group_events = Some((forwarder, flush));
        }
        self.tasks.spawn(forward_engine_events(
            engine_events,
            Arc::clone(shared),
            weak.clone(),
        ));
        self.metrics_push = MetricsPush::start(shared, self.inner.group_client.clone());
        if let Err(e) = self.join(mode).await {
            self.shared.fail(e);
        }
        let shared = &self.shared;
        if let (Some(weak), true) = (weak, shared.config.enable_auto_commit) {
            self.auto_commit = Some(AbortOnDrop(tokio::spawn(auto_commit(
                Arc::clone(shared),
                weak,
                Arc::clone(&self.inner.commits),
                Arc::new(self.engine.clone()),
            ))));
        }
        if let Some(member) = &self.member {
            self.tasks
                .spawn(watch_member(Arc::clone(shared), member.watch_state()));
        }
        self.tasks
            .spawn(watch_failure(Arc::clone(shared), self.engine.clone()));
    }

    /// Subscribes the member (and starts the metadata watcher) for a group subscription.
    async fn join(&mut self, mode: SubscriptionMode) -> Result<(), ConsumerError> {
        let (Some(member), true) = (&self.member, mode.is_group_managed()) else {
            return Ok(());
        };
        let shared = &self.shared;
        let broker_pattern = shared.subs().pattern_on_broker();
        if mode == SubscriptionMode::Pattern && !broker_pattern {
            let metadata = shared.fetch_client.refresh_metadata().await?;
            shared
                .subs()
                .update_pattern_matches(pattern_candidates(&metadata));
        }
        self.tasks
            .spawn(watch_metadata(Arc::clone(shared), member.downgrade()));
        let pattern = shared.subs().pattern().map(str::to_owned);
        match pattern {
            Some(pattern) if broker_pattern => member.subscribe_regex(pattern).await?,
            _ => {
                let topics = shared.subs().subscribed_topics();
                member.subscribe(topics).await?
            }
        }
        Ok(())
    }

    /// What the wind-down needs, taken out of the lifecycle.
    fn wind_down(&mut self) -> WindDown<H> {
        WindDown {
            shared: Arc::clone(&self.shared),
            engine: self.engine.clone(),
            member: self.member.take(),
            commits: Arc::clone(&self.inner.commits),
            group_events: self.group_events.take(),
            metrics_push: self.metrics_push.take(),
        }
    }

    /// The fetch loop has stopped: wind down, then end the run with its fatal error, if any.
    async fn finish(mut self) -> Result<(), ConsumerError> {
        self.auto_commit = None;
        let (duration, report) = self.wind_down().run().await;
        self.finished = true;
        self.inner.set_running(None);
        self.shared.emit(ConsumerEvent::Shutdown {
            duration,
            timed_out: report.timed_out,
        });
        match self.shared.fatal() {
            Some(e) => {
                // The sidecar should hear of it before the process exits on it, within what the
                // shutdown's bound has left (a second at most).
                let left = self
                    .shared
                    .shutdown_requested_at()
                    .map(|at| {
                        (at + self.shared.config.shutdown_timeout)
                            .saturating_duration_since(Instant::now())
                    })
                    .unwrap_or_default();
                self.shared
                    .fatal_delivery
                    .wait(left.min(FATAL_EXPORT_WAIT))
                    .await;
                Err(e)
            }
            None => Ok(()),
        }
    }
}

impl<H: Dispatch> Drop for Lifecycle<'_, H> {
    fn drop(&mut self) {
        self.inner.set_running(None);
        self.tasks.abort_all();
        if self.finished {
            return;
        }
        // `run` was dropped midway: stop, and wind down in the background.
        self.shared.request_shutdown();
        self.auto_commit = None;
        let wind_down = self.wind_down();
        let shared = Arc::clone(&self.shared);
        // Without a runtime (it is shutting down) the member's task goes with it.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let (duration, report) = wind_down.run().await;
                shared.emit(ConsumerEvent::Shutdown {
                    duration,
                    timed_out: report.timed_out,
                });
            });
        }
    }
}

/// The end of a run, by `mooring.shutdown.timeout.ms` in all, counted from the shutdown request:
/// running handlers get until a quarter of it is left (records not started are dropped and fetched again by the next owner);
/// the final commit gets what the drain left (past it: given up and reported with the offsets it
/// could not commit); closing the member (revoke callback, LeaveGroup or not) what the commit
/// left; the terminating metrics push what the close left.
struct WindDown<H: Dispatch> {
    shared: Arc<Shared>,
    engine: ProcessingEngine<H>,
    member: Option<GroupHandle<Client>>,
    commits: Arc<CommitLock>,
    group_events: Option<(JoinHandle<()>, oneshot::Sender<()>)>,
    metrics_push: Option<MetricsPush>,
}

impl<H: Dispatch> WindDown<H> {
    /// Returns how long it took from the shutdown request, and what the drain left.
    async fn run(self) -> (Duration, StopReport) {
        let begun = self
            .shared
            .shutdown_requested_at()
            .unwrap_or_else(Instant::now);
        let budget = self.shared.config.shutdown_timeout;
        let deadline = begun + budget;
        let left = || deadline.saturating_duration_since(Instant::now());
        let drain_until = deadline - budget / 4;
        let report = self
            .engine
            .shutdown(drain_until.saturating_duration_since(Instant::now()))
            .await;
        if !report.timed_out.is_empty() {
            tracing::warn!(partitions = ?report.timed_out, "shutdown: handlers still running when the drain's time ran out; the next owner processes their records again");
        }
        if let Some(member) = &self.member {
            let offsets = report.committable.clone();
            if let Err(failed) =
                commit_offsets(&self.shared, member, &self.commits, offsets, left()).await
            {
                report_not_committed(&self.shared, "shutdown", failed);
            }
            if let Err(e) = member.close_within(left()).await {
                tracing::warn!(error = %e, "closing the group member");
            }
        }
        drop(self.member);
        if let Some(push) = self.metrics_push {
            // The last push, marked terminating, within the shutdown's bound and one request.
            let by = Instant::now() + self.shared.config.client.request_timeout;
            push.close(by.min(deadline)).await;
        }
        if let Some((forwarder, flush)) = self.group_events {
            let _ = flush.send(());
            let _ = forwarder.await;
        }
        (begun.elapsed(), report)
    }
}
