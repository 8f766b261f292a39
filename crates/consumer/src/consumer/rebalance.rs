//! The consumer's side of a rebalance: the group member's [`RebalanceListener`], wired to the
//! processing engine, the subscription state, commits and the application's listener.
//!
//! - **revoked** (eager: everything, before JoinGroup; cooperative: only the partitions moving
//!   away): stop dispatching them and wait (bounded by `mooring.revoke.timeout.ms`) for their
//!   running handlers; commit what finished, while the generation is still valid; forget them in
//!   the subscription state (their pauses end); then call the application's `revoked`.
//! - **assigned** (eager: everything; cooperative: only the new partitions): add them to the
//!   subscription state (new partitions start unpaused, partitions kept by a cooperative
//!   rebalance keep their state) and to the engine; initialise their positions (committed offset,
//!   else `auto.offset.reset`); then call the application's `assigned`.
//! - **lost**: drop their state at once, commit nothing (someone else may own them), then call the
//!   application's `lost`.
//!
//! Partitions not named in a call are not touched: during a cooperative rebalance the partitions
//! that stay keep being fetched, processed and committed.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mooring_coordinator::group::{GroupHandle, RebalanceListener, TopicPartition as GroupTp};
use mooring_coordinator::Client;

use super::commit::{commit_offsets, CommitLock};
use super::listener::ErasedListener;
use crate::error::ConsumerError;
use crate::fetcher::positions;
use crate::processing::{Handler, ProcessingEngine};
use crate::shared::Shared;
use crate::subscription::SubscriptionError;
use crate::TopicPartition;

pub(crate) struct MemberListener<H: Handler> {
    pub(crate) shared: Arc<Shared>,
    pub(crate) engine: ProcessingEngine<H>,
    /// Set right after the member is spawned, before it is asked to join.
    pub(crate) member: Arc<OnceLock<GroupHandle<Client>>>,
    pub(crate) commits: Arc<CommitLock>,
    pub(crate) user: Option<Arc<dyn ErasedListener>>,
}

fn convert(partitions: Vec<GroupTp>) -> Vec<TopicPartition> {
    partitions.into_iter().map(TopicPartition::from).collect()
}

impl<H: Handler> MemberListener<H> {
    fn revoke_timeout(&self) -> Duration {
        self.shared.config.revoke_timeout
    }

    /// Adds what the subscription accepts; partitions of topics no longer subscribed are left out
    /// (the member revokes them at the next rebalance).
    fn assign(&self, partitions: &[TopicPartition]) -> Vec<TopicPartition> {
        let mut subs = self.shared.subs();
        match subs.assign_from_group(partitions.iter().cloned()) {
            Ok(()) => partitions.to_vec(),
            Err(SubscriptionError::NotSubscribed {
                partitions: outside,
            }) => {
                tracing::warn!(?outside, "assigned partitions outside the subscription");
                let inside: Vec<TopicPartition> = partitions
                    .iter()
                    .filter(|tp| !outside.contains(tp))
                    .cloned()
                    .collect();
                match subs.assign_from_group(inside.iter().cloned()) {
                    Ok(()) => inside,
                    Err(e) => {
                        tracing::warn!(error = %e, "assignment not applied");
                        Vec::new()
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "assignment not applied");
                Vec::new()
            }
        }
    }
}

impl<H: Handler> RebalanceListener for MemberListener<H> {
    async fn revoked(&self, partitions: Vec<GroupTp>) {
        let tps = convert(partitions);
        let report = self
            .engine
            .stop_partitions(tps.iter().cloned(), self.revoke_timeout())
            .await;
        if !report.timed_out.is_empty() {
            tracing::warn!(partitions = ?report.timed_out, "revoke: handlers still running at the timeout");
        }
        if let Some(member) = self.member.get() {
            let offsets = report
                .committable
                .into_iter()
                .filter(|(tp, _)| tps.contains(tp))
                .collect();
            if let Err(e) = commit_offsets(&self.shared, member, &self.commits, offsets).await {
                tracing::warn!(error = %e, "commit of revoked partitions failed");
            }
        }
        self.shared.assignment_changed();
        self.shared.subs().revoke(&tps);
        self.shared.wake();
        if let Some(user) = &self.user {
            user.revoked(tps).await;
        }
    }

    async fn assigned(&self, partitions: Vec<GroupTp>) {
        // Bumped before the change: a look-up that checks it under the state's lock never
        // applies old answers to new partitions.
        self.shared.assignment_changed();
        let tps = self.assign(&convert(partitions));
        self.engine.add_partitions(tps.iter().cloned());
        let member = self.member.get();
        match tokio::time::timeout(
            self.revoke_timeout(),
            positions::initialize(&self.shared, member),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e @ ConsumerError::NoOffsetForPartition { .. })) => self.shared.fail(e),
            // The fetch loop tries again.
            Ok(Err(e)) => tracing::warn!(error = %e, "initialising positions after assignment"),
            Err(_) => tracing::warn!("initialising positions after assignment timed out"),
        }
        self.shared.wake();
        if let Some(user) = &self.user {
            user.assigned(tps).await;
        }
    }

    async fn lost(&self, partitions: Vec<GroupTp>) {
        let tps = convert(partitions);
        let discarded = self.engine.drop_partitions(tps.iter().cloned());
        tracing::info!(partitions = ?tps, discarded, "partitions lost");
        self.shared.assignment_changed();
        self.shared.subs().revoke(&tps);
        self.shared.wake();
        if let Some(user) = &self.user {
            user.lost(tps).await;
        }
    }
}
