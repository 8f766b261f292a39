//! Taking an assignment: from the coordinator's share-partitions (topic ids and partitions) to
//! the partitions the member owns. Topic ids are resolved to names through metadata (refreshed
//! when one is unknown; partitions of ids still unknown wait and are looked up again); then what
//! the member no longer holds is `revoked` and what it gains is `assigned`, through the listener.
//! Unlike the `consumer` protocol nothing waits for the revoke and nothing is acknowledged: the
//! records a member acquired stay its own until acknowledged or their lock expires, whoever the
//! partition is assigned to, so the runtime only stops fetching from revoked partitions.
//!
//! Also here: giving up every partition through `lost` when the membership is gone.

use std::sync::Arc;

use mooring_client::TopicPartition;
use tokio::time::Instant;

use super::ShareMember;
use crate::assignor::RebalanceProtocol;
use crate::by_topic_id::Target;
use crate::by_topic_id::{self, Resolved};
use crate::events::{GroupEventKind, RebalanceCause, ReconcileTimings};
use crate::listener::{Callback, RebalanceListener};
use crate::state::ShareMemberState;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ShareMember<T, L> {
    /// Whether an assignment waits to be taken: a new one, or one whose unresolved topic ids are
    /// due to be looked up again.
    pub(super) fn reconcile_due(&self) -> bool {
        use ShareMemberState as S;
        let Some(target) = &self.target else {
            return false;
        };
        if !matches!(self.state, S::Joining | S::Reconciling | S::Stable) {
            return false;
        }
        self.applied != Some(target.seq)
            || (!self.unresolved.is_empty()
                && self.resolve_at.is_some_and(|at| at <= Instant::now()))
    }

    /// Takes the current assignment (see the module docs).
    pub(super) async fn reconcile(&mut self) {
        let Some(target) = self.target.clone() else {
            return;
        };
        let incarnation = self.incarnation;
        let rerun = self.applied == Some(target.seq);
        self.resolve_at = None;
        let Some(resolved) = self.resolve(&target).await else {
            return;
        };
        if self.incarnation != incarnation || self.ending.is_some() {
            return;
        }
        let resolution = target.received.elapsed();
        let revoked: Vec<TopicPartition> = self
            .owned
            .difference(&resolved.partitions)
            .cloned()
            .collect();
        let added: Vec<TopicPartition> = resolved
            .partitions
            .difference(&self.owned)
            .cloned()
            .collect();
        self.topic_ids.extend(resolved.ids);
        self.unresolved = resolved.unresolved;
        if !self.unresolved.is_empty() {
            self.resolve_at =
                Some(Instant::now() + self.beat.interval.max(self.config.retry_backoff));
        }
        self.applied = Some(target.seq);
        if revoked.is_empty() && added.is_empty() {
            if self.owned.is_empty() {
                // Nothing assigned yet (a join is often answered with nothing, the partitions
                // coming with a later heartbeat): in the group, and the rebalance under way goes
                // on until the member has something, so one join is one rebalance.
                self.set_state(ShareMemberState::Stable);
            } else {
                self.settle(target.epoch);
            }
            return;
        }
        // A member given its first share-partitions is seeing its own join through (a join is
        // often answered with nothing, the partitions coming with a later heartbeat).
        let cause = self.pending_cause.take().unwrap_or(if rerun {
            RebalanceCause::MetadataChange
        } else if revoked.is_empty() && !self.owned.is_empty() {
            RebalanceCause::MemberLeft
        } else {
            RebalanceCause::MemberJoined
        });
        self.start_run(cause);
        self.set_state(ShareMemberState::Reconciling);
        let mut timings = ReconcileTimings::default();
        if !revoked.is_empty() {
            self.owned.retain(|tp| !revoked.contains(tp));
            self.publish();
            timings.revoke = self
                .call_listener(
                    Callback::Revoked(RebalanceProtocol::Cooperative),
                    revoked.clone(),
                )
                .await;
        }
        if self.incarnation != incarnation || self.ending.is_some() {
            return;
        }
        self.owned.extend(added.iter().cloned());
        self.publish();
        let assigned = self.call_listener(Callback::Assigned, added.clone()).await;
        timings.assign = resolution + assigned;
        if let Some(run) = &mut self.run {
            run.phases.revoke += timings.revoke;
            run.phases.assign += resolution;
            run.phases.callbacks += assigned;
        }
        if self.incarnation != incarnation || self.ending.is_some() {
            return;
        }
        self.events.emit(GroupEventKind::Reconciled {
            member_epoch: target.epoch,
            added,
            revoked,
            total: target.received.elapsed(),
            phases: timings,
        });
        self.settle(target.epoch);
    }

    /// The assignment is the member's: Stable, and the rebalance under way (if any) completed.
    fn settle(&mut self, epoch: i32) {
        if let Some(run) = self.run.take() {
            self.events.emit(GroupEventKind::RebalanceCompleted {
                generation: epoch,
                total: run.started.elapsed(),
                phases: run.phases,
            });
        }
        if matches!(
            self.state,
            ShareMemberState::Joining | ShareMemberState::Reconciling
        ) {
            self.set_state(ShareMemberState::Stable);
        }
    }

    /// The assignment's partitions by name: ids of owned topics from what the member knows, the
    /// rest from metadata (the transport refreshes it when an id is missing). `None` when the
    /// member is to end meanwhile, or failed for good (a metadata request the authorizer
    /// refused).
    async fn resolve(&mut self, target: &Target) -> Option<Resolved> {
        let (mut names, missing) = by_topic_id::known_names(&self.topic_ids, &target.partitions);
        if !missing.is_empty() {
            let transport = Arc::clone(&self.transport);
            let looked_up = self
                .serve(async move { transport.topic_names(&missing, false).await })
                .await?;
            match looked_up {
                Ok(found) => names.extend(found),
                Err(error) if error.is_fatal() => {
                    let code = crate::reaction::failed_code(&error);
                    self.on_fatal(error, code);
                    return None;
                }
                Err(error) => {
                    tracing::info!(group = %self.config.group_id, %error, "topic ids of the share assignment not resolved; trying again later");
                }
            }
        }
        Some(by_topic_id::resolve(&target.partitions, &names))
    }

    /// Gives up every partition through `lost`, then rejoins if the reaction said so.
    pub(super) async fn give_up_partitions(&mut self, rejoin: Option<RebalanceCause>) {
        self.lose_all().await;
        if let Some(cause) = rejoin {
            if self.ending.is_none() && self.subscription.is_some() {
                self.join(cause);
            }
        }
    }

    async fn lose_all(&mut self) {
        if self.owned.is_empty() {
            return;
        }
        let parts: Vec<TopicPartition> = std::mem::take(&mut self.owned).into_iter().collect();
        self.publish();
        self.call_listener(Callback::Lost, parts).await;
    }
}
