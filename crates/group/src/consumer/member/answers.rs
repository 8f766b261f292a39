//! Sending a heartbeat and reacting to its answer, one reaction per error code (the table in the
//! [module docs](super), [`reaction::heartbeat`](super::reaction::heartbeat) in code). All of it
//! synchronous: a reaction that needs the listener (fenced, fatal) only marks the partitions to
//! lose, and the member's loop calls `lost` next.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use mooring_client::error::Error;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, Message,
};
use mooring_wire::primitives::Uuid;
use tokio::time::Instant;

use super::chores::Chore;
use super::{ConsumerMember, InFlight, Sent, Unreleased};
use crate::by_topic_id::Target;
use crate::consumer::heartbeat::{unreleased_backoff, Wanted};
use crate::consumer::reaction;
use crate::events::{GroupEventKind, RebalanceCause};
use crate::listener::RebalanceListener;
use crate::reaction::Reaction;
use crate::requests;
use crate::state::ConsumerMemberState;
use crate::transport::GroupTransport;

/// The API name the member's errors and events give its heartbeats.
pub(super) const API: &str = "ConsumerGroupHeartbeat";

impl<T: GroupTransport, L: RebalanceListener> ConsumerMember<T, L> {
    /// Builds the next heartbeat (full when joining, else only what changed) and sends it.
    pub(super) fn send_heartbeat(&mut self) {
        // Full only while joining at epoch 0 (waiting for an unreleased instance id included). A
        // member answered with its first epoch is in the group even before its reconciliation
        // starts: a full heartbeat then would say an empty `TopicPartitions`, which the
        // coordinator reads as the member giving up what it was just assigned.
        let full = self.epoch == 0;
        let owned = self.owned_by_id();
        let fields = self.beat.sent.build(
            &self.config,
            &Wanted {
                member_id: &self.member_id,
                epoch: self.epoch,
                full,
                subscription: self.subscription.as_ref(),
                owned: &owned,
                acknowledge: self.beat.ack_due,
            },
        );
        let sent = Sent {
            at: Instant::now(),
            epoch: self.epoch,
            acknowledges: fields.topic_partitions.is_some() && self.unacked.is_some(),
            incarnation: self.incarnation,
        };
        self.beat.ack_due = false;
        self.beat.urgent = false;
        let transport = Arc::clone(&self.transport);
        let group = self.config.group_id.clone();
        let answer = Box::pin(async move {
            let name = group.clone();
            transport
                .call_coordinator(&group, move |version| {
                    requests::consumer_group_heartbeat(version, &name, &fields)
                })
                .await
        });
        self.beat.in_flight = Some(InFlight { answer, sent });
    }

    /// A heartbeat's answer (or its failure to arrive).
    pub(super) fn on_answer(&mut self, answer: super::Answer, sent: Sent) {
        if sent.incarnation != self.incarnation {
            return; // sent in a membership that has ended since
        }
        let latency = sent.at.elapsed();
        let response = match answer {
            Ok(response) => response,
            Err(error) => {
                self.events.emit(GroupEventKind::Heartbeat {
                    generation: sent.epoch,
                    latency,
                    error: Some(error.to_string()),
                });
                self.heartbeat_failed(error, sent);
                return;
            }
        };
        let code = ErrorCode::from_i16(response.error_code);
        self.events.emit(GroupEventKind::Heartbeat {
            generation: sent.epoch,
            latency,
            error: (!code.is_ok()).then(|| code.to_string()),
        });
        match reaction::heartbeat(code) {
            Reaction::Proceed => self.on_success(response, sent),
            Reaction::RejoinAtEpochZero => self.on_fenced(code, sent),
            Reaction::AwaitInstanceRelease => self.on_unreleased(),
            Reaction::Rediscover => {
                self.transport.forget_coordinator(&self.config.group_id);
                self.retry_later(sent);
            }
            Reaction::RetryAfterBackoff => self.retry_later(sent),
            _ => {
                let error = self.refusal(code, response.error_message);
                self.on_fatal(error, code);
            }
        }
    }

    /// The typed error of a fatal code: UNSUPPORTED_VERSION says the broker does not run the
    /// `consumer` protocol (a 3.x broker with it off answers so), authorization refusals name
    /// the group (or the subscribed topics) and the principal.
    fn refusal(&self, code: ErrorCode, message: Option<String>) -> Error {
        if code == ErrorCode::UnsupportedVersion {
            return Error::ConsumerProtocolUnsupported {
                group: self.config.group_id.clone(),
                reason: format!(
                    "{API} answered UNSUPPORTED_VERSION{}",
                    message.map(|m| format!(": {m}")).unwrap_or_default()
                ),
            };
        }
        let topics = self
            .subscription
            .as_ref()
            .map(|s| s.topics().into_iter().collect())
            .unwrap_or_default();
        Error::from_code(
            API,
            code,
            message.or_else(|| Some("the group member stopped".into())),
            &self.config.group_id,
            || topics,
            || self.transport.principal(),
        )
    }

    /// No answer (transport failure): fatal failures stop the member (a broker without the
    /// protocol, a request this client cannot encode at the version negotiated, a security
    /// refusal); anything else is retried after the back-off, with the coordinator rediscovered.
    fn heartbeat_failed(&mut self, error: Error, sent: Sent) {
        if let Error::UnsupportedVersion { api, broker } = &error {
            if *api == ConsumerGroupHeartbeatRequest::NAME {
                let error = Error::ConsumerProtocolUnsupported {
                    group: self.config.group_id.clone(),
                    reason: format!("{broker} does not offer {API} (ApiVersions)"),
                };
                self.on_fatal(error, ErrorCode::UnsupportedVersion);
                return;
            }
        }
        if error.is_fatal() {
            let code = crate::reaction::failed_code(&error);
            self.on_fatal(error, code);
            return;
        }
        if error.is_retriable() {
            self.transport.forget_coordinator(&self.config.group_id);
        }
        self.retry_later(sent);
    }

    /// The next heartbeat after `retry.backoff.ms`, and full: the coordinator may not have read
    /// the last one.
    fn retry_later(&mut self, sent: Sent) {
        let at = Instant::now() + self.config.retry_backoff;
        self.beat.sent.reset();
        self.beat.backoff_until = Some(at);
        self.beat.next_at = Some(at);
        if sent.acknowledges {
            self.beat.ack_due = true;
        }
    }

    fn on_success(&mut self, response: ConsumerGroupHeartbeatResponse, sent: Sent) {
        use ConsumerMemberState as S;
        if let Some(id) = response.member_id.filter(|id| !id.is_empty()) {
            // v0: the coordinator may name the member.
            self.member_id = id;
        }
        if response.heartbeat_interval_ms > 0 {
            self.beat.interval =
                Duration::from_millis(response.heartbeat_interval_ms.unsigned_abs().into());
        }
        self.beat.backoff_until = None;
        self.beat.next_at = Some(sent.at + self.beat.interval);
        let joined = self.epoch == 0 && response.member_epoch > 0;
        self.epoch = response.member_epoch;
        if joined {
            self.on_joined();
        }
        if sent.acknowledges {
            self.acknowledged();
        }
        if let Some(assignment) = response.assignment {
            let partitions: BTreeMap<Uuid, BTreeSet<i32>> = assignment
                .topic_partitions
                .iter()
                .map(|t| (t.topic_id, t.partitions.iter().copied().collect()))
                .collect();
            self.take_target(partitions);
        }
        if self.state == S::Acknowledging && sent.acknowledges && self.unacked.is_none() {
            self.state = S::Stable;
        }
        self.publish();
    }

    /// The first epoch of a join: `Joined`.
    fn on_joined(&mut self) {
        self.unreleased = None;
        if self.state == ConsumerMemberState::InstanceIdUnreleased {
            self.state = ConsumerMemberState::Joining;
        }
        let join_time = self
            .join_started
            .take()
            .map_or(Duration::ZERO, |t| t.elapsed());
        if let Some(run) = &mut self.run {
            run.phases.join += join_time;
        }
        // Shown before it is said: a snapshot stamped after the event reads the joined member.
        self.publish();
        self.events.emit(GroupEventKind::Joined {
            generation: self.epoch,
            member_id: self.member_id.clone(),
            leader: false,
            protocol_name: self.config.remote_assignor.clone().unwrap_or_default(),
            join_time,
        });
    }

    /// The coordinator answered the acknowledgement: `Reconciled`, and the rebalance completes.
    fn acknowledged(&mut self) {
        let Some(done) = self.unacked.take() else {
            return;
        };
        let now = Instant::now();
        let mut phases = done.timings;
        phases.acknowledge = now.saturating_duration_since(done.assigned_at);
        self.events.emit(GroupEventKind::Reconciled {
            member_epoch: done.epoch,
            added: done.added,
            revoked: done.revoked,
            total: now.saturating_duration_since(done.received),
            phases,
        });
        if let Some(run) = self.run.take() {
            self.events.emit(GroupEventKind::RebalanceCompleted {
                generation: self.epoch,
                total: run.started.elapsed(),
                phases: run.phases,
            });
        }
    }

    /// A target assignment from the coordinator: kept for the member's loop to reconcile (after
    /// the reconciliation under way, if any). The same assignment again changes nothing.
    fn take_target(&mut self, partitions: BTreeMap<Uuid, BTreeSet<i32>>) {
        if self.ending.is_some() {
            return; // leaving: nothing new is taken
        }
        if let Some(target) = &mut self.target {
            if target.partitions == partitions {
                target.epoch = self.epoch;
                return;
            }
        }
        self.next_seq += 1;
        self.target = Some(Target {
            seq: self.next_seq,
            epoch: self.epoch,
            partitions,
            received: Instant::now(),
        });
    }

    /// FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID: the membership is gone. Lose everything, then
    /// rejoin at epoch 0 with the same member id (cause `EpochFenced`): at once, unless the
    /// refused heartbeat was itself a join (then after `retry.backoff.ms`, never a tight loop).
    fn on_fenced(&mut self, code: ErrorCode, sent: Sent) {
        tracing::info!(group = %self.config.group_id, member_id = %self.member_id, epoch = self.epoch, %code, "member fenced; rejoining");
        self.fail_run(format!("{API}: {code}"), Some(code));
        self.end_membership();
        self.state = ConsumerMemberState::Fenced;
        self.chores.owe(Chore::Lose {
            rejoin: Some(RebalanceCause::EpochFenced),
        });
        if sent.epoch == 0 {
            let at = Instant::now() + self.config.retry_backoff;
            self.beat.backoff_until = Some(at);
            self.beat.next_at = Some(at);
        }
        self.publish();
    }

    /// UNRELEASED_INSTANCE_ID: the member this static member replaces still holds the instance
    /// id. Join again after a growing back-off; past `mooring.unreleased.instance.timeout.ms`
    /// since the first refusal, fail (never a crash loop, never an endless one).
    fn on_unreleased(&mut self) {
        let now = Instant::now();
        let unreleased = self.unreleased.get_or_insert(Unreleased {
            since: now,
            attempts: 0,
        });
        unreleased.attempts += 1;
        let (attempt, waited) = (unreleased.attempts, now - unreleased.since);
        let instance_id = self.config.group_instance_id.clone().unwrap_or_default();
        let limit = self.config.unreleased_instance_timeout;
        if waited >= limit {
            self.events.emit(GroupEventKind::InstanceIdUnreleased {
                instance_id: instance_id.clone(),
                attempt,
                retry_in: None,
            });
            let error = Error::InstanceIdUnreleased {
                group: self.config.group_id.clone(),
                instance_id,
                after: waited,
            };
            self.on_fatal(error, ErrorCode::UnreleasedInstanceId);
            return;
        }
        let cap = self.beat.interval;
        let retry_in =
            unreleased_backoff(self.config.retry_backoff, cap, attempt).min(limit - waited);
        tracing::info!(group = %self.config.group_id, %instance_id, attempt, ?retry_in, "UNRELEASED_INSTANCE_ID: the instance id is still held; retrying");
        self.events.emit(GroupEventKind::InstanceIdUnreleased {
            instance_id,
            attempt,
            retry_in: Some(retry_in),
        });
        self.epoch = 0;
        self.beat.sent.reset();
        self.beat.backoff_until = Some(now + retry_in);
        self.beat.next_at = Some(now + retry_in);
        self.set_state(ConsumerMemberState::InstanceIdUnreleased);
    }

    /// A fatal error: → FATAL with the typed error, said once; partitions lost; heartbeats stop.
    /// A new `subscribe` tries again.
    pub(super) fn on_fatal(&mut self, error: Error, code: ErrorCode) {
        tracing::warn!(group = %self.config.group_id, %error, "group member stopped by a non-retriable error");
        let run = self.run.take();
        self.events.emit(GroupEventKind::RebalanceFailed {
            error: format!("{API}: {error} (member stopped)"),
            code: Some(code),
            total: run.as_ref().map_or(Duration::ZERO, |r| r.started.elapsed()),
            phases: run.map(|r| r.phases).unwrap_or_default(),
        });
        self.end_membership();
        self.failure = Some(Arc::new(error));
        self.failed_code = code;
        self.state = ConsumerMemberState::Fatal;
        self.chores.owe(Chore::Lose { rejoin: None });
        self.publish();
    }

    /// Forgets the membership: epoch, target, pending acknowledgement, what heartbeats said;
    /// answers to heartbeats sent in it are ignored from now on.
    pub(super) fn end_membership(&mut self) {
        self.incarnation += 1;
        self.forget_epoch();
        self.beat.in_flight = None;
        self.chores.cancel(Chore::GoStale);
    }
}
