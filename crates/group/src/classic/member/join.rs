//! A rebalance's first half: its span, the eager revoke, the attempts, and JoinGroup with what
//! its answer gives (KIP-394 member id, KIP-345 static rejoin without a rebalance).

use std::sync::Arc;
use std::time::Duration;

use mooring_client::error::Result;
use mooring_client::TopicPartition;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{DescribeGroupsResponse, JoinGroupResponse};
use tokio::time::Instant;
use tracing::Instrument;

use super::{ClassicMember, RebalanceAttempt};
use crate::assignor::RebalanceProtocol;
use crate::events::{GroupEventKind, PhaseTimings, RebalanceCause};
use crate::listener::{Callback, RebalanceListener};
use crate::reaction::{self, Reaction};
use crate::requests;
use crate::state::MemberState;
use crate::trace;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ClassicMember<T, L> {
    /// One rebalance: revoke (eager), then JoinGroup/SyncGroup attempts until stable or stopped.
    pub(super) async fn rebalance(&mut self, cause: RebalanceCause) {
        let span = trace::rebalance(
            &self.config.group_id,
            cause,
            self.strategies.rebalance_protocol(),
            self.generation,
        );
        self.rebalance_phases(cause, span.clone())
            .instrument(span)
            .await
    }

    pub(super) async fn rebalance_phases(&mut self, cause: RebalanceCause, span: tracing::Span) {
        let started = Instant::now();
        let mut phases = PhaseTimings::default();
        let protocol = self.strategies.rebalance_protocol();
        self.static_rejoin =
            cause == RebalanceCause::MemberJoined && self.static_rejoin_expected().await;
        if !self.static_rejoin {
            self.events.emit(GroupEventKind::RebalanceStarted {
                cause,
                generation: self.generation,
                protocol,
            });
        }
        if protocol == RebalanceProtocol::Eager && !self.owned.is_empty() {
            let parts: Vec<TopicPartition> = self.owned.iter().cloned().collect();
            phases.revoke += self.call_listener(Callback::Revoked(protocol), parts).await;
            self.owned.clear();
            self.publish();
        }
        loop {
            match self.attempt(cause, started, &mut phases).await {
                RebalanceAttempt::Done => {
                    trace::rebalance_ended(&span, true, self.generation);
                    return;
                }
                RebalanceAttempt::Stop => {
                    trace::rebalance_ended(&span, false, self.generation);
                    return;
                }
                RebalanceAttempt::Again(None) => {}
                RebalanceAttempt::Again(Some(after)) => {
                    if !self.backoff(after).await {
                        return;
                    }
                }
            }
            if self.ending.is_some() {
                return;
            }
        }
    }

    pub(super) async fn attempt(
        &mut self,
        cause: RebalanceCause,
        started: Instant,
        phases: &mut PhaseTimings,
    ) -> RebalanceAttempt {
        let (resp, protocol_name) = match self.join(cause, started, phases).await {
            Ok(joined) => joined,
            Err(end) => return end,
        };
        let assignments = match self.assign(&resp, &protocol_name, started, phases).await {
            Ok(assignments) => assignments,
            Err(end) => return end,
        };
        let assignment = match self.sync(protocol_name, assignments, started, phases).await {
            Ok(assignment) => assignment,
            Err(end) => return end,
        };
        self.take_assignment(assignment, started, phases).await
    }

    /// JoinGroup (heartbeats pause: the coordinator holds the request until all have joined):
    /// the answer and the protocol the coordinator picked, or how the attempt ended.
    pub(super) async fn join(
        &mut self,
        cause: RebalanceCause,
        started: Instant,
        phases: &mut PhaseTimings,
    ) -> Result<(JoinGroupResponse, String), RebalanceAttempt> {
        self.set_state(MemberState::PreparingRebalance);
        let protocols = match self.strategies.join_protocols(
            &self.subscription,
            &self.owned,
            self.generation,
            self.config.client_rack.as_deref(),
        ) {
            Ok(p) => p,
            Err(e) => {
                self.fatal(
                    "JoinGroup",
                    ErrorCode::InconsistentGroupProtocol,
                    started,
                    *phases,
                )
                .await;
                tracing::error!(error = %e, "cannot encode the subscription");
                return Err(RebalanceAttempt::Stop);
            }
        };
        let (config, member_id) = (Arc::clone(&self.config), self.member_id.clone());
        let reason = cause.as_str().to_owned();
        let transport = self.transport.clone();
        let group = self.config.group_id.clone();
        // On the group connection, timed by the rebalance (see `GroupConfig::join_timeout`).
        let join = mooring_client::CoordinatorCall::group(
            self.config.join_timeout(self.transport.request_timeout()),
        );
        let join_started = Instant::now();
        let call = async move {
            transport
                .call_coordinator_with(&group, join, move |version| {
                    requests::join_group(version, &config, member_id, protocols, reason)
                })
                .await
        };
        let span = trace::join();
        let Some(result) = self.serve(call.instrument(span.clone()), true).await else {
            return Err(RebalanceAttempt::Stop);
        };
        phases.join += join_started.elapsed();
        let resp: JoinGroupResponse = match result {
            Ok(r) => r,
            Err(e) => {
                trace::transport_failed(&span);
                drop(span);
                return Err(self
                    .transport_failed("JoinGroup", e, started, *phases)
                    .await);
            }
        };
        let code = ErrorCode::from_i16(resp.error_code);
        trace::answered(&span, code, resp.generation_id);
        drop(span);
        let r = reaction::join_group(code);
        if r == Reaction::RejoinWithGivenMemberId {
            // KIP-394: the coordinator gave us an id; join again with it at once.
            self.member_id = resp.member_id.clone();
            self.publish();
            return Err(RebalanceAttempt::Again(None));
        }
        if r != Reaction::Proceed {
            return Err(self.react("JoinGroup", r, code, started, *phases).await);
        }
        let protocol_name = match resp.protocol_name.clone().filter(|n| !n.is_empty()) {
            Some(n) if self.strategies.get(&n).is_some() => n,
            other => {
                tracing::error!(protocol = ?other, "coordinator picked a protocol we did not offer");
                self.fatal(
                    "JoinGroup",
                    ErrorCode::InconsistentGroupProtocol,
                    started,
                    *phases,
                )
                .await;
                return Err(RebalanceAttempt::Stop);
            }
        };
        self.joined(&resp, &protocol_name, join_started.elapsed());
        Ok((resp, protocol_name))
    }

    /// A JoinGroup answered: the generation, member id, leader and protocol it gives, said in the
    /// `Joined` event.
    pub(super) fn joined(
        &mut self,
        resp: &JoinGroupResponse,
        protocol_name: &str,
        join_time: Duration,
    ) {
        self.generation = resp.generation_id;
        self.member_id = resp.member_id.clone();
        if let Ok(mut invalidated) = self.invalidated.lock() {
            // The coordinator vouches for this generation and member id, whatever it refused before.
            *invalidated = None;
        }
        self.leader_id = Some(resp.leader.clone());
        self.protocol_name = Some(protocol_name.to_owned());
        let leader = self.is_leader();
        self.events.emit(GroupEventKind::Joined {
            generation: self.generation,
            member_id: self.member_id.clone(),
            leader,
            protocol_name: protocol_name.to_owned(),
            join_time,
        });
        self.set_state(MemberState::CompletingRebalance);
    }

    /// Whether this first join of a static member will take its previous process's place
    /// without a rebalance (KIP-345): the coordinator does so when the group is Stable, still
    /// lists the instance id (its session has not expired) and keeps its protocol. Asked with
    /// DescribeGroups before joining; any doubt (no answer, another state) means no.
    pub(super) async fn static_rejoin_expected(&mut self) -> bool {
        let Some(instance) = self.config.group_instance_id.clone() else {
            return false;
        };
        if !self.member_id.is_empty() {
            return false;
        }
        let Some(Ok(resp)) = self.describe_own_group().await else {
            return false;
        };
        resp.groups.iter().any(|g| {
            g.error_code == 0
                && g.group_state == "Stable"
                && self.strategies.get(&g.protocol_data).is_some()
                && g.members
                    .iter()
                    .any(|m| m.group_instance_id.as_deref() == Some(instance.as_str()))
        })
    }

    /// DescribeGroups of this member's group at its coordinator; `None` when stopped meanwhile.
    pub(super) async fn describe_own_group(&mut self) -> Option<Result<DescribeGroupsResponse>> {
        let group = self.config.group_id.clone();
        let transport = self.transport.clone();
        let call = async move {
            let name = group.clone();
            transport
                .call_coordinator(&group, move |version| {
                    requests::describe_groups(version, vec![name])
                })
                .await
        };
        self.serve(call, true).await
    }
}
