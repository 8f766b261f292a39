//! Sending a heartbeat and reacting to its answer, one reaction per error code (the table in the
//! [module docs](crate::share), [`reaction::heartbeat`](crate::share::reaction::heartbeat) in
//! code). All of it synchronous: a reaction that needs the listener (fenced, fatal) only marks
//! the partitions to lose, and the member's loop calls `lost` next.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use mooring_client::error::Error;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::{Message, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse};
use mooring_wire::primitives::Uuid;
use tokio::time::Instant;

use super::{InFlight, Sent, ShareMember};
use crate::by_topic_id::Target;
use crate::events::{GroupEventKind, RebalanceCause};
use crate::listener::RebalanceListener;
use crate::reaction::Reaction;
use crate::share::reaction;
use crate::state::ShareMemberState;
use crate::transport::GroupTransport;

/// The API name the member's errors and events give its heartbeats.
pub(super) const API: &str = "ShareGroupHeartbeat";

impl<T: GroupTransport, L: RebalanceListener> ShareMember<T, L> {
    /// Builds the next heartbeat (full when joining, else only what changed) and sends it.
    pub(super) fn send_heartbeat(&mut self) {
        let topics = self.subscription.clone().unwrap_or_default();
        let request = self
            .beat
            .sent
            .build(&self.config, &self.member_id, self.epoch, &topics);
        let sent = Sent {
            at: Instant::now(),
            epoch: self.epoch,
            incarnation: self.incarnation,
        };
        self.beat.urgent = false;
        let transport = Arc::clone(&self.transport);
        let group = self.config.group_id.clone();
        let answer = Box::pin(async move {
            transport
                .call_coordinator(&group, move |_version| request)
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
                self.heartbeat_failed(error);
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
            Reaction::RejoinAtEpochZero => self.on_fenced(code),
            Reaction::Rediscover => {
                self.transport.forget_coordinator(&self.config.group_id);
                self.retry_later();
            }
            Reaction::RetryAfterBackoff => self.retry_later(),
            _ => {
                let error = self.refusal(code, response.error_message);
                self.on_fatal(error, code);
            }
        }
    }

    /// The typed error of a fatal code: UNSUPPORTED_VERSION says the broker has no share groups
    /// (a 4.x cluster with `share.version` off answers so), authorization refusals name the group
    /// (or the subscribed topics) and the principal.
    fn refusal(&self, code: ErrorCode, message: Option<String>) -> Error {
        if code == ErrorCode::UnsupportedVersion {
            return Error::ShareGroupsUnsupported {
                group: self.config.group_id.clone(),
                reason: format!(
                    "{API} answered UNSUPPORTED_VERSION{}",
                    message.map(|m| format!(": {m}")).unwrap_or_default()
                ),
            };
        }
        let topics = self.subscription.clone().unwrap_or_default();
        Error::from_code(
            API,
            code,
            message.or_else(|| Some("the share member stopped".into())),
            &self.config.group_id,
            || topics.into_iter().collect(),
            || self.transport.principal(),
        )
    }

    /// No answer (transport failure): a broker without the API at a version this client speaks
    /// (share groups absent or off), or a security refusal, stops the member; anything else is
    /// retried after the back-off, with the coordinator rediscovered.
    fn heartbeat_failed(&mut self, error: Error) {
        if let Error::UnsupportedVersion { api, broker } = &error {
            if *api == ShareGroupHeartbeatRequest::NAME {
                let error = Error::ShareGroupsUnsupported {
                    group: self.config.group_id.clone(),
                    reason: format!("{broker} does not offer {API} v1 or later (ApiVersions)"),
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
        self.retry_later();
    }

    /// The next heartbeat after `retry.backoff.ms`, and full: the coordinator may not have read
    /// the last one.
    fn retry_later(&mut self) {
        let at = Instant::now() + self.config.retry_backoff;
        self.beat.sent.reset();
        self.beat.backoff_until = Some(at);
        self.beat.next_at = Some(at);
    }

    fn on_success(&mut self, response: ShareGroupHeartbeatResponse, sent: Sent) {
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
        if let Some(assignment) = response.assignment {
            let mut partitions: BTreeMap<Uuid, BTreeSet<i32>> = BTreeMap::new();
            for t in assignment.topic_partitions {
                partitions
                    .entry(t.topic_id)
                    .or_default()
                    .extend(t.partitions);
            }
            self.next_seq += 1;
            self.target = Some(Target {
                seq: self.next_seq,
                epoch: self.epoch,
                partitions,
                received: Instant::now(),
            });
        } else if joined {
            // In the group with nothing assigned yet: stable until the coordinator assigns.
            self.set_state(ShareMemberState::Stable);
        }
        self.publish();
    }

    fn on_joined(&mut self) {
        let join_time = self.join_started.take().map(|t| t.elapsed());
        if let Some(run) = &mut self.run {
            run.phases.join += join_time.unwrap_or_default();
        }
        self.events.emit(GroupEventKind::Joined {
            generation: self.epoch,
            member_id: self.member_id.clone(),
            leader: false,
            protocol_name: String::new(),
            join_time: join_time.unwrap_or_default(),
        });
    }

    /// FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, GROUP_ID_NOT_FOUND: the membership is gone; lose
    /// everything, rejoin at epoch 0 with the same member id.
    fn on_fenced(&mut self, code: ErrorCode) {
        tracing::info!(group = %self.config.group_id, member_id = %self.member_id, %code, "share member fenced; rejoining");
        self.fail_run(format!("fenced: {code}"), Some(code));
        self.end_membership();
        self.set_state(ShareMemberState::Fenced);
        self.lose = Some(Some(RebalanceCause::EpochFenced));
    }

    /// A fatal error: lose everything, stop (a new `subscribe` tries again).
    pub(super) fn on_fatal(&mut self, error: Error, code: ErrorCode) {
        tracing::error!(group = %self.config.group_id, %error, "share member stopped");
        self.fail_run(error.to_string(), Some(code));
        self.end_membership();
        self.failure = Some(Arc::new(error));
        self.failed_code = code;
        self.set_state(ShareMemberState::Fatal);
        self.lose = Some(None);
    }

    /// The membership is over: its epoch, assignment and heartbeat in flight are forgotten.
    pub(super) fn end_membership(&mut self) {
        self.incarnation += 1;
        self.epoch = 0;
        self.target = None;
        self.applied = None;
        self.unresolved.clear();
        self.resolve_at = None;
        self.beat.in_flight = None;
        self.beat.urgent = false;
        self.beat.sent.reset();
    }
}
