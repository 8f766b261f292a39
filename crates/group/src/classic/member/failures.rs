//! How a failed request or error code ends an attempt: one reaction per code (the table in the
//! [module docs](crate::classic)), fatal errors that stop the member, and FENCED_INSTANCE_ID with its retry.

use std::sync::Arc;

use mooring_client::error::Error;
use mooring_wire::consumer_protocol;
use mooring_wire::error_code::ErrorCode;
use tokio::time::Instant;

use super::{ClassicMember, RebalanceAttempt};
use crate::events::{GroupEventKind, PhaseTimings, RebalanceCause};
use crate::listener::RebalanceListener;
use crate::reaction::{self, Reaction};
use crate::state::MemberState;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ClassicMember<T, L> {
    pub(super) fn failed(
        &mut self,
        error: String,
        code: Option<ErrorCode>,
        started: Instant,
        phases: PhaseTimings,
    ) {
        tracing::info!(group = %self.config.group_id, %error, "rebalance attempt failed");
        if std::mem::take(&mut self.static_rejoin) {
            // Not the quiet rejoin expected: report the join as what it is.
            self.events.emit(GroupEventKind::RebalanceStarted {
                cause: RebalanceCause::MemberJoined,
                generation: consumer_protocol::NO_GENERATION,
                protocol: self.strategies.rebalance_protocol(),
            });
        }
        self.events.emit(GroupEventKind::RebalanceFailed {
            error,
            code,
            total: started.elapsed(),
            phases,
        });
    }

    /// Reacts to a JoinGroup/SyncGroup error code per the table.
    pub(super) async fn react(
        &mut self,
        api: &'static str,
        reaction: Reaction,
        code: ErrorCode,
        started: Instant,
        phases: PhaseTimings,
    ) -> RebalanceAttempt {
        let backoff = self.config.retry_backoff;
        match reaction {
            Reaction::Proceed => RebalanceAttempt::Done,
            Reaction::RejoinWithGivenMemberId => RebalanceAttempt::Again(None),
            Reaction::ResetMemberAndRejoin => {
                self.failed(format!("{api}: {code}"), Some(code), started, phases);
                self.lose_all().await;
                self.member_id.clear();
                self.generation = consumer_protocol::NO_GENERATION;
                RebalanceAttempt::Again(None)
            }
            Reaction::ResetGenerationAndRejoin => {
                self.failed(format!("{api}: {code}"), Some(code), started, phases);
                self.lose_all().await;
                self.generation = consumer_protocol::NO_GENERATION;
                RebalanceAttempt::Again(None)
            }
            Reaction::Rejoin => {
                self.failed(format!("{api}: {code}"), Some(code), started, phases);
                RebalanceAttempt::Again(None)
            }
            Reaction::RetryAfterBackoff | Reaction::RetryAfterRebalance => {
                self.failed(format!("{api}: {code}"), Some(code), started, phases);
                RebalanceAttempt::Again(Some(backoff))
            }
            Reaction::Rediscover => {
                self.failed(format!("{api}: {code}"), Some(code), started, phases);
                self.transport.forget_coordinator(&self.config.group_id);
                RebalanceAttempt::Again(Some(backoff))
            }
            Reaction::Fenced => {
                self.on_fenced().await;
                RebalanceAttempt::Stop
            }
            // The last three are the `consumer` protocol's and never come from classic's table.
            Reaction::Fatal
            | Reaction::AlreadyGone
            | Reaction::RejoinAtEpochZero
            | Reaction::AwaitInstanceRelease
            | Reaction::FailMemberGone => {
                self.fatal(api, code, started, phases).await;
                RebalanceAttempt::Stop
            }
        }
    }

    /// A non-retriable error code stops the member (`MemberState::Failed(code)`), with the typed
    /// error in its snapshot: an authorization refused names the group (or the subscribed
    /// topics) and the principal.
    pub(super) async fn fatal(
        &mut self,
        api: &'static str,
        code: ErrorCode,
        started: Instant,
        phases: PhaseTimings,
    ) {
        let subscription = &self.subscription;
        let error = Error::from_code(
            api,
            code,
            Some("the group member stopped".into()),
            &self.config.group_id,
            || subscription.iter().cloned().collect(),
            || self.transport.principal(),
        );
        self.stop_failed(api, error, code, started, phases).await;
    }

    /// A fatal failure of this client ([`Error::is_fatal`]): a request it cannot encode at the
    /// version negotiated (stopped as UNSUPPORTED_VERSION, as Java's client raises
    /// `UnsupportedVersionException` for it), a security failure (authentication, TLS, an
    /// authorization refused, with their codes). The member stops with the error itself in its
    /// snapshot: retrying would fail the same way forever.
    pub(super) async fn fatal_failure(
        &mut self,
        api: &'static str,
        error: Error,
        started: Instant,
        phases: PhaseTimings,
    ) {
        let code = reaction::failed_code(&error);
        self.stop_failed(api, error, code, started, phases).await;
    }

    /// → FAILED(code) with `error`, said once (as a warning: the application that owns the
    /// member reports it; the consumer ends with it); partitions lost.
    pub(super) async fn stop_failed(
        &mut self,
        api: &'static str,
        error: Error,
        code: ErrorCode,
        started: Instant,
        phases: PhaseTimings,
    ) {
        tracing::warn!(group = %self.config.group_id, api, %error, "group member stopped by a non-retriable error");
        self.failed(
            format!("{api}: {error} (member stopped)"),
            Some(code),
            started,
            phases,
        );
        self.failure = Some(Arc::new(error));
        self.set_state(MemberState::Failed(code));
        self.lose_all().await;
    }

    pub(super) async fn transport_failed(
        &mut self,
        api: &'static str,
        e: Error,
        started: Instant,
        phases: PhaseTimings,
    ) -> RebalanceAttempt {
        if e.is_fatal() {
            self.fatal_failure(api, e, started, phases).await;
            return RebalanceAttempt::Stop;
        }
        self.failed(format!("{api}: {e}"), None, started, phases);
        if e.is_retriable() {
            self.transport.forget_coordinator(&self.config.group_id);
        }
        RebalanceAttempt::Again(Some(self.config.retry_backoff))
    }

    /// FENCED_INSTANCE_ID: stop, lose the partitions, tell the app, maybe schedule a retry.
    pub(super) async fn on_fenced(&mut self) {
        let instance_id = self.config.group_instance_id.clone().unwrap_or_default();
        tracing::error!(group = %self.config.group_id, %instance_id, "FENCED_INSTANCE_ID: another member took this group.instance.id");
        self.heartbeat.send_replace(None);
        self.lose_all().await;
        self.member_id.clear();
        self.generation = consumer_protocol::NO_GENERATION;
        self.rejoin = None;
        self.set_state(MemberState::Fenced);
        self.schedule_fenced_retry();
    }

    pub(super) fn schedule_fenced_retry(&mut self) {
        self.fenced_attempts += 1;
        let retry_in = self
            .config
            .fenced_policy
            .backoff(self.config.session_timeout, self.fenced_attempts);
        self.fenced_retry_at = retry_in.map(|d| Instant::now() + d);
        self.events.emit(GroupEventKind::Fenced {
            instance_id: self.config.group_instance_id.clone().unwrap_or_default(),
            policy: self.config.fenced_policy,
            retry_in,
        });
    }

    /// The retry of the `RetryAfter` policy: rejoin only if no live member holds the instance id.
    pub(super) async fn fenced_retry(&mut self) {
        self.fenced_retry_at = None;
        let Some(result) = self.describe_own_group().await else {
            return;
        };
        let instance = self.config.group_instance_id.as_deref();
        let twin_alive = match result {
            Ok(resp) => resp.groups.iter().any(|g| {
                g.members
                    .iter()
                    .any(|m| m.group_instance_id.as_deref() == instance)
            }),
            // Cannot tell: assume the twin lives (never fight for the id blindly).
            Err(_) => true,
        };
        if twin_alive {
            self.schedule_fenced_retry();
        } else {
            self.set_state(MemberState::Unjoined);
            self.rejoin = Some(RebalanceCause::Fenced);
        }
    }
}
