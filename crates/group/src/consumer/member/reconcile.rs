//! Reconciliation: from the coordinator's target assignment (topic ids and partitions) to the
//! partitions the member owns, in KIP-848's order. Topic ids are resolved to names through
//! metadata (refreshed when one is unknown; partitions of ids still unknown wait and are looked up
//! again, and nothing is revoked for them); then owned − target is revoked through the listener
//! (bounded; the runtime drains their handlers and commits what finished, with the current epoch,
//! which the coordinator keeps until the revocation is acknowledged); then target − owned is
//! assigned (the listener's `assigned`); then the next heartbeat, sent at once, acknowledges the
//! result (`TopicPartitions` = owned). A new target arriving meanwhile waits for this one to end.
//!
//! Also here: giving up every partition through `lost` when the membership is gone.

use std::sync::Arc;
use std::time::Duration;

use mooring_client::TopicPartition;
use tokio::time::Instant;

use super::ConsumerMember;
use crate::assignor::RebalanceProtocol;
use crate::by_topic_id::Target;
use crate::by_topic_id::{self, Resolved};
use crate::consumer::target::Reconciliation;
use crate::events::{RebalanceCause, ReconcileTimings};
use crate::listener::{Callback, RebalanceListener};
use crate::state::ConsumerMemberState;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ConsumerMember<T, L> {
    /// Whether a target waits to be reconciled: a new one, or one whose unresolved topic ids are
    /// due to be looked up again. Not before the last reconciliation's acknowledgement has gone.
    pub(super) fn reconcile_due(&self) -> bool {
        use ConsumerMemberState as S;
        let Some(target) = &self.target else {
            return false;
        };
        if self.beat.ack_due
            || !matches!(
                self.state,
                S::Joining | S::Reconciling | S::Acknowledging | S::Stable
            )
        {
            return false;
        }
        self.applied != Some(target.seq)
            || (!self.unresolved.is_empty()
                && self.resolve_at.is_some_and(|at| at <= Instant::now()))
    }

    /// Whether the reconciliation of membership `incarnation` must stop: the membership ended,
    /// or the member is to end, go stale or leave.
    fn interrupted(&self, incarnation: u64) -> bool {
        self.incarnation != incarnation || self.ending.is_some() || self.chores.any()
    }

    /// Reconciles the current target (see the module docs).
    pub(super) async fn reconcile(&mut self) {
        let Some(target) = self.target.clone() else {
            return;
        };
        let incarnation = self.incarnation;
        let first = self.applied.is_none();
        // The same target again: ids unknown last time may now have names.
        let rerun = self.applied == Some(target.seq);
        self.resolve_at = None;
        let resolve_started = Instant::now();
        let Some(resolved) = self.resolve(&target).await else {
            return;
        };
        if self.interrupted(incarnation) {
            return;
        }
        let resolution = resolve_started.elapsed();
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
        if !first && revoked.is_empty() && added.is_empty() {
            // Only ids still unknown differ: nothing moves, nothing to acknowledge.
            self.applied = Some(target.seq);
            if self.state == ConsumerMemberState::Reconciling {
                self.set_state(ConsumerMemberState::Stable);
            }
            return;
        }
        let cause = self.pending_cause.take().unwrap_or(if rerun {
            RebalanceCause::MetadataChange
        } else if revoked.is_empty() {
            RebalanceCause::MemberLeft
        } else {
            RebalanceCause::MemberJoined
        });
        self.start_run(cause);
        self.set_state(ConsumerMemberState::Reconciling);
        let mut timings = ReconcileTimings::default();
        if !revoked.is_empty() {
            timings.revoke = self
                .call_listener(
                    Callback::Revoked(RebalanceProtocol::Cooperative),
                    revoked.clone(),
                )
                .await;
            self.owned.retain(|tp| !revoked.contains(tp));
            self.publish();
            if self.interrupted(incarnation) {
                return;
            }
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
        if self.interrupted(incarnation) {
            return;
        }
        self.applied = Some(target.seq);
        self.acknowledge(target, added, revoked, timings);
    }

    /// The reconciliation is done: acknowledge it in the next heartbeat, sent at once (merged
    /// with an earlier one whose acknowledgement has not been answered yet).
    fn acknowledge(
        &mut self,
        target: Target,
        added: Vec<TopicPartition>,
        revoked: Vec<TopicPartition>,
        timings: ReconcileTimings,
    ) {
        let now = Instant::now();
        let done = match self.unacked.take() {
            Some(mut earlier) => {
                earlier.epoch = target.epoch;
                earlier.added.retain(|tp| !revoked.contains(tp));
                earlier.added.extend(added);
                earlier.revoked.extend(revoked);
                earlier.assigned_at = now;
                earlier.timings.revoke += timings.revoke;
                earlier.timings.assign += timings.assign;
                earlier
            }
            None => Reconciliation {
                epoch: target.epoch,
                added,
                revoked,
                received: target.received,
                assigned_at: now,
                timings,
            },
        };
        self.unacked = Some(done);
        self.beat.ack_due = true;
        self.set_state(ConsumerMemberState::Acknowledging);
    }

    /// The target's partitions by name: ids of owned topics from what the member knows, the rest
    /// from metadata (the transport refreshes it when an id is missing). `None` when the member
    /// is to end meanwhile, or failed for good (a metadata request refused by the authorizer).
    async fn resolve(&mut self, target: &Target) -> Option<Resolved> {
        let (mut names, missing) = by_topic_id::known_names(&self.topic_ids, &target.partitions);
        if !missing.is_empty() {
            let transport = Arc::clone(&self.transport);
            let looked_up = self
                .serve(
                    async move { transport.topic_names(&missing, false).await },
                    true,
                )
                .await?;
            match looked_up {
                Ok(found) => names.extend(found),
                Err(error) if error.is_fatal() => {
                    let code = crate::reaction::failed_code(&error);
                    self.on_fatal(error, code);
                    return None;
                }
                Err(error) => {
                    tracing::info!(group = %self.config.group_id, %error, "topic ids of the assignment not resolved; trying again later");
                }
            }
        }
        Some(by_topic_id::resolve(&target.partitions, &names))
    }

    /// Gives up every partition through `lost` (the membership is gone: nothing of them can be
    /// committed), then rejoins if the reaction said so.
    pub(super) async fn give_up_partitions(&mut self, rejoin: Option<RebalanceCause>) {
        self.lose_all().await;
        if let Some(cause) = rejoin {
            if self.ending.is_none() && self.subscription.is_some() {
                self.join(cause);
            }
        }
    }

    pub(super) async fn lose_all(&mut self) {
        if self.owned.is_empty() {
            return;
        }
        let parts: Vec<TopicPartition> = self.owned.iter().cloned().collect();
        self.call_listener(Callback::Lost, parts).await;
        self.owned.clear();
        self.publish();
    }

    /// One listener call, bounded (see [`ConsumerMember::await_listener`]), with its event.
    pub(super) async fn call_listener(
        &mut self,
        kind: Callback,
        partitions: Vec<TopicPartition>,
    ) -> Duration {
        let (under_way, call) = kind.start(Arc::clone(&self.listener), partitions);
        let timed_out = !self.await_listener(call).await;
        under_way.finish(&self.config.group_id, &self.owned, timed_out, &self.events)
    }
}
