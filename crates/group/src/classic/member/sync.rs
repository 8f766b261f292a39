//! A rebalance's second half: the leader's assignment, SyncGroup, and taking the assignment
//! (KIP-429: revoke what moved away, then join again at once).

use std::sync::Arc;

use mooring_client::error::Result;
use mooring_client::TopicPartition;
use mooring_wire::consumer_protocol::Assignment;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::sync_group::SyncGroupRequestAssignment;
use mooring_wire::messages::JoinGroupResponse;
use tokio::time::Instant;
use tracing::Instrument;

use super::{ClassicMember, RebalanceAttempt};
use crate::assignor::RebalanceProtocol;
use crate::classic::protocol;
use crate::events::{GroupEventKind, PhaseTimings, RebalanceCause};
use crate::listener::{Callback, RebalanceListener};
use crate::reaction::{self, Reaction};
use crate::requests;
use crate::state::{flatten, MemberState};
use crate::trace;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ClassicMember<T, L> {
    /// The leader's assignment with the protocol the coordinator picked (KIP-814: unless told to
    /// skip); none for a follower.
    pub(super) async fn assign(
        &mut self,
        resp: &JoinGroupResponse,
        protocol_name: &str,
        started: Instant,
        phases: &mut PhaseTimings,
    ) -> Result<Vec<SyncGroupRequestAssignment>, RebalanceAttempt> {
        let backoff = self.config.retry_backoff;
        let leader = self.is_leader();
        let mut assignments = Vec::new();
        if leader {
            let assign_started = Instant::now();
            let group = protocol::decode_members(&resp.members);
            self.group_topics = group.topics.clone();
            if !resp.skip_assignment {
                let Some(assignor) = self.strategies.get(protocol_name).cloned() else {
                    return Err(RebalanceAttempt::Stop);
                };
                let topics: Vec<String> = group.topics.iter().cloned().collect();
                let transport = self.transport.clone();
                let Some(partitions) = self
                    .serve(
                        async move { transport.partitions_per_topic(&topics).await },
                        true,
                    )
                    .await
                else {
                    return Err(RebalanceAttempt::Stop);
                };
                let partitions = match partitions {
                    Ok(c) => c,
                    Err(e) if e.is_fatal() => {
                        return Err(self.transport_failed("Metadata", e, started, *phases).await);
                    }
                    Err(e) => {
                        self.failed(
                            format!("metadata for assignment: {e}"),
                            None,
                            started,
                            *phases,
                        );
                        return Err(RebalanceAttempt::Again(Some(backoff)));
                    }
                };
                match protocol::assign(assignor.as_ref(), &group, &partitions) {
                    Ok(a) => assignments = a,
                    Err(e) => {
                        self.failed(format!("assignment: {e}"), None, started, *phases);
                        return Err(RebalanceAttempt::Again(Some(backoff)));
                    }
                }
                self.assigned_topics = Some(self.rejoin_snapshot(partitions));
            }
            phases.assign += assign_started.elapsed();
        } else {
            self.assigned_topics = None;
        }
        Ok(assignments)
    }

    /// SyncGroup: this member's assignment, or how the attempt ended.
    pub(super) async fn sync(
        &mut self,
        protocol_name: String,
        assignments: Vec<SyncGroupRequestAssignment>,
        started: Instant,
        phases: &mut PhaseTimings,
    ) -> Result<Assignment, RebalanceAttempt> {
        let backoff = self.config.retry_backoff;
        let (config, member_id) = (Arc::clone(&self.config), self.member_id.clone());
        let (generation, name) = (self.generation, protocol_name.clone());
        let transport = self.transport.clone();
        let group = self.config.group_id.clone();
        let sync = mooring_client::CoordinatorCall::group(
            self.config.sync_timeout(self.transport.request_timeout()),
        );
        let sync_started = Instant::now();
        let call = async move {
            transport
                .call_coordinator_with(&group, sync, move |version| {
                    requests::sync_group(version, &config, generation, member_id, name, assignments)
                })
                .await
        };
        let span = trace::sync();
        let Some(result) = self.serve(call.instrument(span.clone()), true).await else {
            return Err(RebalanceAttempt::Stop);
        };
        phases.sync += sync_started.elapsed();
        let resp = match result {
            Ok(r) => r,
            Err(e) => {
                trace::transport_failed(&span);
                drop(span);
                return Err(self
                    .transport_failed("SyncGroup", e, started, *phases)
                    .await);
            }
        };
        let code = ErrorCode::from_i16(resp.error_code);
        trace::answered(&span, code, self.generation);
        drop(span);
        let r = reaction::sync_group(code);
        if r != Reaction::Proceed {
            return Err(self.react("SyncGroup", r, code, started, *phases).await);
        }
        if resp
            .protocol_name
            .as_deref()
            .is_some_and(|n| n != protocol_name)
        {
            self.fatal(
                "SyncGroup",
                ErrorCode::InconsistentGroupProtocol,
                started,
                *phases,
            )
            .await;
            return Err(RebalanceAttempt::Stop);
        }
        let assignment = if resp.assignment.is_empty() {
            Assignment::default()
        } else {
            match Assignment::decode(&resp.assignment) {
                Ok((_, a)) => a,
                Err(e) => {
                    self.failed(
                        format!("undecodable assignment: {e}"),
                        None,
                        started,
                        *phases,
                    );
                    return Err(RebalanceAttempt::Again(Some(backoff)));
                }
            }
        };
        self.events.emit(GroupEventKind::Synced {
            generation: self.generation,
            sync_time: sync_started.elapsed(),
        });
        self.set_state(MemberState::Stable);
        Ok(assignment)
    }

    /// The assignment taken: the listener's calls (cooperative: revoked first, then a follow-up
    /// join), then the rebalance's end.
    pub(super) async fn take_assignment(
        &mut self,
        assignment: Assignment,
        started: Instant,
        phases: &mut PhaseTimings,
    ) -> RebalanceAttempt {
        let callbacks_started = Instant::now();
        let new = flatten(&assignment.partitions);
        let protocol = self.strategies.rebalance_protocol();
        let mut follow_up = false;
        let added: Vec<TopicPartition> = match protocol {
            RebalanceProtocol::Eager => new.iter().cloned().collect(),
            RebalanceProtocol::Cooperative => {
                let revoked: Vec<TopicPartition> = self.owned.difference(&new).cloned().collect();
                let added = new.difference(&self.owned).cloned().collect();
                if !revoked.is_empty() {
                    self.call_listener(Callback::Revoked(protocol), revoked)
                        .await;
                    self.owned.retain(|tp| new.contains(tp));
                    self.publish();
                    follow_up = true;
                }
                added
            }
        };
        self.owned = new;
        self.publish();
        self.call_listener(Callback::Assigned, added).await;
        phases.callbacks += callbacks_started.elapsed();
        self.fenced_attempts = 0;
        if std::mem::take(&mut self.static_rejoin) {
            self.events.emit(GroupEventKind::StaticRejoin {
                generation: self.generation,
                total: started.elapsed(),
                phases: *phases,
            });
        } else {
            self.events.emit(GroupEventKind::RebalanceCompleted {
                generation: self.generation,
                total: started.elapsed(),
                phases: *phases,
            });
        }
        if follow_up {
            // KIP-429: partitions were revoked, so join again at once to let them be reassigned.
            self.rejoin
                .get_or_insert(RebalanceCause::CooperativeFollowUp);
        }
        RebalanceAttempt::Done
    }
}
