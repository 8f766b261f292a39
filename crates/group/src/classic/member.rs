//! The member task: one task owns the state machine (UNJOINED → PREPARING_REBALANCE →
//! COMPLETING_REBALANCE → STABLE), reading commands, heartbeat/commit reports and timers in one
//! `select!` loop. It awaits only the network (JoinGroup, SyncGroup, metadata, LeaveGroup) and the
//! rebalance listener (bounded by [`GroupConfig::listener_timeout`], and by a close's deadline);
//! while it awaits either it keeps reading commands, and heartbeats run on their own task. Errors
//! follow the table in the [module docs](super), one reaction per code.
//!
//! It ends when closed or left (by a deadline: listener, heartbeats stopped, LeaveGroup if due
//! and time is left), or when every [`GroupHandle`](crate::GroupHandle) is gone (the commands
//! channel closes; a close as configured, within the rebalance timeout). Nothing it owns may hold
//! a strong handle, or that never happens: its listener holds a
//! [`WeakGroupHandle`](crate::WeakGroupHandle).

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mooring_wire::consumer_protocol::{self, Assignment};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::sync_group::SyncGroupRequestAssignment;
use mooring_wire::messages::{DescribeGroupsResponse, JoinGroupResponse, LeaveGroupResponse};
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, sleep_until, timeout_at, Instant};
use tracing::Instrument;

use super::heartbeat::HeartbeatTarget;
use super::protocol::{self, Strategies};
use crate::assignor::{PartitionsPerTopic, RebalanceProtocol};
use crate::command::{listener_until, Command, Ending};
use crate::config::{GroupConfig, GroupProtocol};
use crate::control::Control;
use crate::events::{EventSink, GroupEventKind, PhaseTimings, RebalanceCause};
use crate::leave;
use crate::listener::{Callback, RebalanceListener};
use crate::offsets::InvalidatedSlot;
use crate::reaction::{self, Reaction};
use crate::requests;
use crate::state::{flatten, MemberSnapshot, MemberState};
use crate::trace;
use crate::transport::GroupTransport;
use mooring_client::error::{Error, Result};
use mooring_client::TopicPartition;

/// How one attempt of a rebalance ended.
enum RebalanceAttempt {
    /// Stable.
    Done,
    /// Try again (after `backoff` if set).
    Again(Option<Duration>),
    /// The member stopped (fenced, fatal error, or closing).
    Stop,
}

pub(crate) struct ClassicMember<T, L> {
    pub(crate) transport: Arc<T>,
    pub(crate) listener: Arc<L>,
    pub(crate) config: Arc<GroupConfig>,
    pub(crate) strategies: Strategies,
    pub(crate) commands: mpsc::Receiver<Command>,
    pub(crate) control: mpsc::Receiver<Control>,
    pub(crate) heartbeat: watch::Sender<Option<HeartbeatTarget>>,
    pub(crate) snapshot: watch::Sender<MemberSnapshot>,
    pub(crate) events: EventSink,
    /// What commits found invalid; emptied once a JoinGroup answer gives a new identity.
    invalidated: InvalidatedSlot,

    pub(crate) state: MemberState,
    pub(crate) member_id: String,
    pub(crate) generation: i32,
    pub(crate) protocol_name: Option<String>,
    pub(crate) leader_id: Option<String>,
    pub(crate) subscribed: bool,
    pub(crate) subscription: BTreeSet<String>,
    pub(crate) owned: BTreeSet<TopicPartition>,
    pub(crate) rejoin: Option<RebalanceCause>,
    pub(crate) metadata_dirty: bool,
    pub(crate) commands_closed: bool,
    ending: Option<Ending>,
    /// The deadline of the close under way (`finish`), which bounds its listener call.
    closing_by: Option<Instant>,
    fenced_attempts: u32,
    fenced_retry_at: Option<Instant>,
    group_topics: BTreeSet<String>,
    /// The leader's last assignment's topics, as far as a change of them makes it rejoin
    /// ([`Self::rejoin_snapshot`]).
    assigned_topics: Option<PartitionsPerTopic>,
    /// This join is expected to be a static rejoin without a rebalance (KIP-345): its
    /// `RebalanceStarted` is held back, and its end is reported as `StaticRejoin`.
    static_rejoin: bool,
    /// The error of this client that stopped the member (see [`MemberSnapshot::failure`]).
    failure: Option<Arc<Error>>,
}

impl<T: GroupTransport, L: RebalanceListener> ClassicMember<T, L> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        transport: Arc<T>,
        listener: Arc<L>,
        config: Arc<GroupConfig>,
        strategies: Strategies,
        commands: mpsc::Receiver<Command>,
        control: mpsc::Receiver<Control>,
        heartbeat: watch::Sender<Option<HeartbeatTarget>>,
        snapshot: watch::Sender<MemberSnapshot>,
        events: EventSink,
        invalidated: InvalidatedSlot,
    ) -> Self {
        ClassicMember {
            transport,
            listener,
            config,
            strategies,
            commands,
            control,
            heartbeat,
            snapshot,
            events,
            invalidated,
            state: MemberState::Unjoined,
            member_id: String::new(),
            generation: consumer_protocol::NO_GENERATION,
            protocol_name: None,
            leader_id: None,
            subscribed: false,
            subscription: BTreeSet::new(),
            owned: BTreeSet::new(),
            rejoin: None,
            metadata_dirty: false,
            commands_closed: false,
            ending: None,
            closing_by: None,
            fenced_attempts: 0,
            fenced_retry_at: None,
            group_topics: BTreeSet::new(),
            assigned_topics: None,
            static_rejoin: false,
            failure: None,
        }
    }

    pub(crate) fn initial_snapshot(
        config: &GroupConfig,
        protocol: RebalanceProtocol,
    ) -> MemberSnapshot {
        MemberSnapshot {
            state: MemberState::Unjoined,
            member_id: String::new(),
            group_instance_id: config.group_instance_id.clone(),
            generation: consumer_protocol::NO_GENERATION,
            group_protocol: GroupProtocol::Classic,
            consumer_state: None,
            protocol_name: None,
            rebalance_protocol: protocol,
            leader_id: None,
            assignment: BTreeSet::new(),
            subscription: BTreeSet::new(),
            failure: None,
        }
    }

    fn publish(&self) {
        self.snapshot.send_replace(MemberSnapshot {
            state: self.state,
            member_id: self.member_id.clone(),
            group_instance_id: self.config.group_instance_id.clone(),
            generation: self.generation,
            group_protocol: GroupProtocol::Classic,
            consumer_state: None,
            protocol_name: self.protocol_name.clone(),
            rebalance_protocol: self.strategies.rebalance_protocol(),
            leader_id: self.leader_id.clone(),
            assignment: self.owned.clone(),
            subscription: self.subscription.clone(),
            failure: self.failure.clone(),
        });
    }

    fn set_state(&mut self, state: MemberState) {
        self.state = state;
        let target = match state {
            MemberState::CompletingRebalance | MemberState::Stable => Some(HeartbeatTarget {
                generation: self.generation,
                member_id: self.member_id.clone(),
            }),
            _ => None,
        };
        self.heartbeat.send_if_modified(|t| {
            if *t != target {
                *t = target;
                true
            } else {
                false
            }
        });
        self.publish();
    }

    fn is_leader(&self) -> bool {
        !self.member_id.is_empty() && self.leader_id.as_deref() == Some(self.member_id.as_str())
    }

    /// The task's body.
    pub(crate) async fn run(mut self) {
        loop {
            if let Some(ending) = self.ending.take() {
                self.finish(ending).await;
                return;
            }
            let can_join = self.subscribed
                && !matches!(self.state, MemberState::Fenced | MemberState::Failed(_));
            if can_join {
                if let Some(cause) = self.rejoin.take() {
                    self.rebalance(cause).await;
                    continue;
                }
                if self.metadata_dirty {
                    self.metadata_dirty = false;
                    self.check_metadata().await;
                    continue;
                }
            }
            let retry_at = self.fenced_retry_at;
            tokio::select! {
                cmd = self.commands.recv(), if !self.commands_closed => self.record(cmd),
                Some(ctl) = self.control.recv() => self.on_control(ctl).await,
                _ = sleep_until(retry_at.unwrap_or_else(Instant::now)), if retry_at.is_some() => {
                    self.fenced_retry().await;
                }
            }
        }
    }

    fn record(&mut self, cmd: Option<Command>) {
        match cmd {
            None => {
                // Every handle is gone: close as configured.
                self.commands_closed = true;
                if self.ending.is_none() {
                    self.ending = Some(Ending::handles_gone(self.config.rebalance_timeout));
                }
            }
            Some(Command::Subscribe(topics)) => {
                let first = !self.subscribed;
                self.subscribed = true;
                if first
                    || topics != self.subscription
                    || matches!(self.state, MemberState::Failed(_))
                {
                    self.subscription = topics;
                    if matches!(self.state, MemberState::Failed(_)) {
                        self.state = MemberState::Unjoined;
                        self.failure = None;
                    }
                    let cause = if first || self.member_id.is_empty() {
                        RebalanceCause::MemberJoined
                    } else {
                        RebalanceCause::SubscriptionChange
                    };
                    self.rejoin.get_or_insert(cause);
                    self.publish();
                }
            }
            // The handle refuses a broker-side regex for the classic protocol, whose patterns
            // the consumer resolves against metadata and subscribes as topics.
            Some(Command::SubscribeRegex(_)) => {}
            Some(Command::MetadataChanged) => self.metadata_dirty = true,
            Some(Command::PollIntervalExceeded) => {
                self.rejoin
                    .get_or_insert(RebalanceCause::PollIntervalExceeded);
            }
            Some(Command::Leave { reply, deadline }) => {
                self.ending = Some(Ending::leave(reply, deadline));
            }
            Some(Command::Close { reply, deadline }) => {
                self.ending = Some(Ending::close(reply, deadline));
            }
        }
    }

    /// Awaits `fut` while reading commands. Returns `None` if `interruptible` and the member is
    /// asked to close or leave (the future is dropped: transport calls are cancellation-safe).
    async fn serve<F: Future>(&mut self, fut: F, interruptible: bool) -> Option<F::Output> {
        tokio::pin!(fut);
        loop {
            if interruptible && self.ending.is_some() {
                return None;
            }
            tokio::select! {
                out = &mut fut => return Some(out),
                cmd = self.commands.recv(), if !self.commands_closed => self.record(cmd),
            }
        }
    }

    /// Awaits a listener call while reading commands, until it returns (`true`) or its bound
    /// passes (`false`; the call is dropped). The bound is the listener timeout, or the deadline
    /// of a close (pending, arriving meanwhile, or under way) when that comes first.
    async fn await_listener(&mut self, call: impl Future<Output = ()>) -> bool {
        let bound = Instant::now() + self.config.listener_timeout();
        tokio::pin!(call);
        loop {
            let until = listener_until(bound, self.ending.as_ref(), self.closing_by);
            tokio::select! {
                () = &mut call => return true,
                cmd = self.commands.recv(), if !self.commands_closed => self.record(cmd),
                () = sleep_until(until) => return false,
            }
        }
    }

    async fn backoff(&mut self, after: Duration) -> bool {
        self.serve(sleep(after), true).await.is_some()
    }

    async fn call_listener(&mut self, kind: Callback, partitions: Vec<TopicPartition>) -> Duration {
        let started = Instant::now();
        let (span, call) = kind.start(Arc::clone(&self.listener), partitions.clone());
        let timed_out = !self.await_listener(call).await;
        let (event, duration) = kind.finish(
            &self.config.group_id,
            span,
            started,
            partitions,
            &self.owned,
            timed_out,
        );
        self.events.emit(event);
        duration
    }

    async fn lose_all(&mut self) -> Duration {
        if self.owned.is_empty() {
            return Duration::ZERO;
        }
        let parts: Vec<TopicPartition> = self.owned.iter().cloned().collect();
        let d = self.call_listener(Callback::Lost, parts).await;
        self.owned.clear();
        self.publish();
        d
    }

    /// One rebalance: revoke (eager), then JoinGroup/SyncGroup attempts until stable or stopped.
    async fn rebalance(&mut self, cause: RebalanceCause) {
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

    async fn rebalance_phases(&mut self, cause: RebalanceCause, span: tracing::Span) {
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

    fn failed(
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
    async fn react(
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
    async fn fatal(
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
    async fn fatal_failure(
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
    async fn stop_failed(
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

    async fn attempt(
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
    async fn join(
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
    fn joined(&mut self, resp: &JoinGroupResponse, protocol_name: &str, join_time: Duration) {
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

    /// The leader's assignment with the protocol the coordinator picked (KIP-814: unless told to
    /// skip); none for a follower.
    async fn assign(
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
    async fn sync(
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
    async fn take_assignment(
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

    async fn transport_failed(
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

    /// Whether this first join of a static member will take its previous process's place
    /// without a rebalance (KIP-345): the coordinator does so when the group is Stable, still
    /// lists the instance id (its session has not expired) and keeps its protocol. Asked with
    /// DescribeGroups before joining; any doubt (no answer, another state) means no.
    async fn static_rejoin_expected(&mut self) -> bool {
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
    async fn describe_own_group(&mut self) -> Option<Result<DescribeGroupsResponse>> {
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

    /// FENCED_INSTANCE_ID: stop, lose the partitions, tell the app, maybe schedule a retry.
    async fn on_fenced(&mut self) {
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

    fn schedule_fenced_retry(&mut self) {
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
    async fn fenced_retry(&mut self) {
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

    /// A heartbeat or commit error bound to a generation.
    async fn on_control(&mut self, ctl: Control) {
        if ctl.generation != self.generation
            || ctl.member_id != self.member_id
            || !self.state.has_generation()
        {
            return;
        }
        if let Some(error) = ctl.failure {
            self.fatal_failure(ctl.api, error, Instant::now(), PhaseTimings::default())
                .await;
            return;
        }
        let r = match ctl.api {
            "OffsetCommit" => reaction::offset_commit(ctl.code),
            _ => reaction::heartbeat(ctl.code),
        };
        match r {
            Reaction::Rejoin => {
                self.rejoin.get_or_insert(RebalanceCause::MemberJoined);
            }
            Reaction::ResetMemberAndRejoin => {
                self.set_state(MemberState::Unjoined);
                self.lose_all().await;
                self.member_id.clear();
                self.generation = consumer_protocol::NO_GENERATION;
                self.publish();
                self.rejoin = Some(RebalanceCause::SessionTimeout);
            }
            Reaction::ResetGenerationAndRejoin => {
                self.set_state(MemberState::Unjoined);
                self.lose_all().await;
                self.generation = consumer_protocol::NO_GENERATION;
                self.publish();
                self.rejoin = Some(RebalanceCause::Fenced);
            }
            Reaction::Fenced => self.on_fenced().await,
            Reaction::Fatal => {
                self.fatal(ctl.api, ctl.code, Instant::now(), PhaseTimings::default())
                    .await
            }
            _ => {}
        }
    }

    /// The part of the topics whose change makes the leader rejoin: partition counts, and with
    /// `client.rack` set the replicas' racks too (Java's leader compares its metadata snapshots
    /// so, the racks only when it has a rack itself).
    fn rejoin_snapshot(&self, topics: PartitionsPerTopic) -> PartitionsPerTopic {
        if self.config.client_rack.is_some() {
            topics
        } else {
            topics.without_racks()
        }
    }

    /// The leader's check after `metadata_changed()`: rejoin if partition counts (or, with
    /// `client.rack`, replica racks) moved.
    async fn check_metadata(&mut self) {
        if !self.is_leader() || self.state != MemberState::Stable {
            return;
        }
        let Some(before) = self.assigned_topics.clone() else {
            return;
        };
        let topics: Vec<String> = self.group_topics.iter().cloned().collect();
        let transport = self.transport.clone();
        let Some(Ok(now)) = self
            .serve(
                async move { transport.partitions_per_topic(&topics).await },
                true,
            )
            .await
        else {
            return;
        };
        if self.rejoin_snapshot(now) != before {
            self.rejoin.get_or_insert(RebalanceCause::MetadataChange);
        }
    }

    /// Close or leave: revoke (or lose) everything, stop heartbeating, LeaveGroup if due and if
    /// time is left, end; all of it by the ending's deadline.
    async fn finish(&mut self, ending: Ending) {
        self.closing_by = Some(ending.deadline);
        let parts: Vec<TopicPartition> = self.owned.iter().cloned().collect();
        if !parts.is_empty() {
            if self.state.has_generation() {
                self.call_listener(
                    Callback::Revoked(self.strategies.rebalance_protocol()),
                    parts,
                )
                .await;
            } else {
                self.call_listener(Callback::Lost, parts).await;
            }
            self.owned.clear();
        }
        self.heartbeat.send_replace(None);
        let send_leave = (ending.force_leave || self.config.leave_on_close())
            && !self.member_id.is_empty()
            && self.state != MemberState::Fenced;
        let error = if send_leave {
            self.leave_group_by(ending.deadline).await.err()
        } else {
            None
        };
        if let Some(e) = &error {
            tracing::warn!(group = %self.config.group_id, error = %e, "LeaveGroup on close failed; the coordinator drops the member after its session timeout");
        }
        self.state = MemberState::Closed;
        self.publish();
        self.events.emit(GroupEventKind::Left {
            sent_leave_group: send_leave,
            error: error.as_ref().map(ToString::to_string),
        });
        if let Some(reply) = ending.reply {
            let _ = reply.send(match error {
                Some(e) => Err(e),
                None => Ok(()),
            });
        }
    }

    /// LeaveGroup (one retry, as the table says) by `deadline`; not sent when no time is left.
    async fn leave_group_by(&mut self, deadline: Instant) -> Result<()> {
        let budget = deadline.saturating_duration_since(Instant::now());
        let group = self.config.group_id.clone();
        let out_of_time = move || Error::DeadlineExceeded {
            api: "LeaveGroup",
            group,
            after: budget,
            last: None,
        };
        if budget.is_zero() {
            return Err(out_of_time());
        }
        match timeout_at(deadline, self.leave_group()).await {
            Ok(result) => result,
            Err(_) => Err(out_of_time()),
        }
    }

    async fn leave_group(&mut self) -> Result<()> {
        let send = || {
            let (config, member_id) = (Arc::clone(&self.config), self.member_id.clone());
            let answer = self
                .transport
                .call_coordinator(&self.config.group_id, move |version| {
                    requests::leave_group(version, &config, member_id)
                });
            async move { answer.await.map(|response| leave_code(&response)) }
        };
        let refused = |code| Error::Broker {
            api: "LeaveGroup",
            code,
            message: None,
        };
        leave::with_retry(
            &*self.transport,
            &self.config,
            reaction::leave_group,
            send,
            refused,
        )
        .await
    }
}

/// The code of a LeaveGroup answer: the top level's, else the first member's that is not NONE.
fn leave_code(response: &LeaveGroupResponse) -> ErrorCode {
    let top = ErrorCode::from_i16(response.error_code);
    if !top.is_ok() {
        return top;
    }
    response
        .members
        .iter()
        .map(|m| ErrorCode::from_i16(m.error_code))
        .find(|c| !c.is_ok())
        .unwrap_or(ErrorCode::None)
}
