//! The member task: one task owns the state ([`ConsumerMemberState`]) and everything it acts on —
//! the member epoch, the target assignment, the owned partitions, the heartbeat timer and the
//! one heartbeat in flight. Its loop ([`ConsumerMember::run`]) does at most one of the slow things
//! at a time (the [`chores`] that answers and commands hand it: give up partitions through the
//! listener's `lost`, go stale, unsubscribe; then reconcile, or end) and in between, and while it
//! awaits any of them, keeps serving its duties in one `select!` ([`ConsumerMember::turn`]):
//! commands from the handle, the heartbeat timer, the heartbeat's answer. So heartbeats keep flowing while a listener call or a metadata look-up runs, and every
//! answer is handled by synchronous code that only records what must happen next.
//!
//! It ends when closed or left, or when every [`GroupHandle`](crate::GroupHandle) is gone
//! (a close as configured, within the rebalance timeout).

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mooring_client::error::{Error, Result};
use mooring_client::TopicPartition;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::ConsumerGroupHeartbeatResponse;
use mooring_wire::primitives::Uuid;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep_until, Instant};

use self::chores::{Chore, Chores};
use crate::assignor::RebalanceProtocol;
use crate::by_topic_id::Target;
use crate::command::{listener_until, Command, Ending};
use crate::config::{GroupConfig, GroupProtocol};
use crate::consumer::heartbeat::{OwnedById, SentFields, TopicSelection};
use crate::consumer::target::Reconciliation;
use crate::events::{EventSink, GroupEventKind, PhaseTimings, RebalanceCause};
use crate::listener::RebalanceListener;
use crate::member_id::new_member_id;
use crate::state::{ConsumerMemberState, MemberSnapshot, MemberState};
use crate::transport::GroupTransport;

mod answers;
mod chores;
mod leave;
mod reconcile;

/// A heartbeat's answer, as the transport gives it.
type Answer = Result<ConsumerGroupHeartbeatResponse>;

/// The heartbeat in flight.
struct InFlight {
    answer: Pin<Box<dyn Future<Output = Answer> + Send>>,
    sent: Sent,
}

/// What a heartbeat in flight was sent with.
#[derive(Debug, Clone, Copy)]
struct Sent {
    at: Instant,
    epoch: i32,
    /// It carried the owned partitions after a reconciliation (the acknowledgement).
    acknowledges: bool,
    /// The membership it was sent in (see [`ConsumerMember::incarnation`]).
    incarnation: u64,
}

/// Heartbeat timing and what the last one said.
#[derive(Default)]
struct Beat {
    sent: SentFields,
    /// The broker's `heartbeat_interval_ms` (`heartbeat.interval.ms` until it has said).
    interval: Duration,
    /// When the next regular heartbeat is due.
    next_at: Option<Instant>,
    /// Send the next heartbeat at once (joining, a subscription change).
    urgent: bool,
    /// No heartbeat before this (the back-off after a failed one).
    backoff_until: Option<Instant>,
    /// The reconciliation's acknowledgement is due in the next heartbeat (sent at once).
    ack_due: bool,
    in_flight: Option<InFlight>,
}

/// A rebalance as this member sees it, from its start (a join, or a new target assignment) to
/// the answer to its acknowledgement.
#[derive(Debug)]
struct Run {
    started: Instant,
    phases: PhaseTimings,
}

/// A static member refused its instance id (UNRELEASED_INSTANCE_ID) since `since`.
#[derive(Debug, Clone, Copy)]
struct Unreleased {
    since: Instant,
    attempts: u32,
}

pub(crate) struct ConsumerMember<T, L> {
    transport: Arc<T>,
    listener: Arc<L>,
    config: Arc<GroupConfig>,
    commands: mpsc::Receiver<Command>,
    snapshot: watch::Sender<MemberSnapshot>,
    events: EventSink,

    /// Made up once (KIP-1082) and kept for the member's life, rejoins included.
    member_id: String,
    /// The member epoch the coordinator gave (0: none, joining).
    epoch: i32,
    state: ConsumerMemberState,
    closed: bool,
    subscription: Option<TopicSelection>,
    owned: BTreeSet<TopicPartition>,
    /// Topic ids of the owned topics (and of the topics the last reconciliation resolved).
    topic_ids: BTreeMap<String, Uuid>,
    /// The last target assignment the coordinator gave in this membership.
    target: Option<Target>,
    /// The sequence number of the target reconciled last (`None`: none since joining).
    applied: Option<u64>,
    next_seq: u64,
    /// Topic ids of the target no metadata could name yet, and when to look again.
    unresolved: BTreeSet<Uuid>,
    resolve_at: Option<Instant>,
    beat: Beat,
    /// The reconciliation waiting for its acknowledgement to be answered.
    unacked: Option<Reconciliation>,
    run: Option<Run>,
    /// Why the next rebalance starts, if the member knows (a subscription change).
    pending_cause: Option<RebalanceCause>,
    join_started: Option<Instant>,
    unreleased: Option<Unreleased>,
    /// Bumped whenever a membership ends (fenced, stale, fatal, left): answers and reconciliations
    /// of an older one are ignored.
    incarnation: u64,
    /// The slow work the loop owes before its next turn.
    chores: Chores,
    failure: Option<Arc<Error>>,
    failed_code: ErrorCode,
    commands_closed: bool,
    ending: Option<Ending>,
    /// The deadline of the close under way, which bounds its listener call.
    closing_by: Option<Instant>,
}

impl<T: GroupTransport, L: RebalanceListener> ConsumerMember<T, L> {
    pub(crate) fn new(
        transport: Arc<T>,
        listener: Arc<L>,
        config: Arc<GroupConfig>,
        commands: mpsc::Receiver<Command>,
        snapshot: watch::Sender<MemberSnapshot>,
        events: EventSink,
    ) -> Self {
        let interval = config.heartbeat_interval;
        let member = ConsumerMember {
            transport,
            listener,
            commands,
            snapshot,
            events,
            member_id: new_member_id(),
            epoch: 0,
            state: ConsumerMemberState::Unsubscribed,
            closed: false,
            subscription: None,
            owned: BTreeSet::new(),
            topic_ids: BTreeMap::new(),
            target: None,
            applied: None,
            next_seq: 0,
            unresolved: BTreeSet::new(),
            resolve_at: None,
            beat: Beat {
                interval,
                ..Beat::default()
            },
            unacked: None,
            run: None,
            pending_cause: None,
            join_started: None,
            unreleased: None,
            incarnation: 0,
            chores: Chores::default(),
            failure: None,
            failed_code: ErrorCode::None,
            commands_closed: false,
            ending: None,
            closing_by: None,
            config,
        };
        member.publish();
        member
    }

    /// The snapshot before the task has run: not subscribed.
    pub(crate) fn initial_snapshot(config: &GroupConfig) -> MemberSnapshot {
        MemberSnapshot {
            state: MemberState::Unjoined,
            member_id: String::new(),
            group_instance_id: config.group_instance_id.clone(),
            generation: -1,
            group_protocol: GroupProtocol::Consumer,
            consumer_state: Some(ConsumerMemberState::Unsubscribed),
            share_state: None,
            protocol_name: config.remote_assignor.clone(),
            rebalance_protocol: RebalanceProtocol::Cooperative,
            leader_id: None,
            assignment: BTreeSet::new(),
            subscription: BTreeSet::new(),
            failure: None,
        }
    }

    /// The classic state the runtime reads (the mapping documented on [`ConsumerMemberState`]).
    fn mapped_state(&self) -> MemberState {
        use ConsumerMemberState as S;
        if self.closed {
            return MemberState::Closed;
        }
        match self.state {
            S::Unsubscribed => MemberState::Unjoined,
            S::Joining | S::Fenced | S::InstanceIdUnreleased => MemberState::PreparingRebalance,
            S::Reconciling | S::Acknowledging => MemberState::CompletingRebalance,
            S::Stable | S::Stale | S::Leaving => MemberState::Stable,
            S::Fatal => MemberState::Failed(self.failed_code),
        }
    }

    pub(super) fn publish(&self) {
        self.snapshot.send_replace(MemberSnapshot {
            state: self.mapped_state(),
            member_id: self.member_id.clone(),
            group_instance_id: self.config.group_instance_id.clone(),
            generation: if self.epoch > 0 { self.epoch } else { -1 },
            group_protocol: GroupProtocol::Consumer,
            consumer_state: Some(self.state),
            share_state: None,
            protocol_name: self.config.remote_assignor.clone(),
            rebalance_protocol: RebalanceProtocol::Cooperative,
            leader_id: None,
            assignment: self.owned.clone(),
            subscription: self
                .subscription
                .as_ref()
                .map(TopicSelection::topics)
                .unwrap_or_default(),
            failure: self.failure.clone(),
        });
    }

    pub(super) fn set_state(&mut self, state: ConsumerMemberState) {
        self.state = state;
        self.publish();
    }

    /// Whether the coordinator counts this member in the group with its epoch (commits work).
    pub(super) fn in_group(&self) -> bool {
        use ConsumerMemberState as S;
        self.epoch > 0 && matches!(self.state, S::Reconciling | S::Acknowledging | S::Stable)
    }

    /// The owned partitions by topic id, as heartbeats say them.
    pub(super) fn owned_by_id(&self) -> OwnedById {
        let mut out = OwnedById::new();
        for tp in &self.owned {
            if let Some(id) = self.topic_ids.get(&tp.topic) {
                out.entry(*id).or_default().insert(tp.partition);
            }
        }
        out
    }

    /// The task's body.
    pub(crate) async fn run(mut self) {
        loop {
            if let Some(ending) = self.ending.take() {
                self.finish(ending).await;
                return;
            }
            if let Some(chore) = self.chores.take() {
                self.perform(chore).await;
                continue;
            }
            if self.reconcile_due() {
                self.reconcile().await;
                continue;
            }
            self.turn().await;
        }
    }

    /// Does one chore a handler owed the loop.
    async fn perform(&mut self, chore: Chore) {
        match chore {
            Chore::Lose { rejoin } => self.give_up_partitions(rejoin).await,
            Chore::GoStale => self.go_stale().await,
            Chore::Unsubscribe => self.unsubscribe().await,
        }
    }

    /// One of the member's duties, whichever is ready first: a command, the heartbeat timer
    /// (send one), the heartbeat's answer, the time to look up unresolved topic ids again.
    /// Cancellation-safe: every branch's handler is synchronous.
    pub(super) async fn turn(&mut self) {
        let beat_at = self.beat_at();
        let resolve_at = self.resolve_at;
        let far = || Instant::now() + Duration::from_secs(86_400);
        tokio::select! {
            cmd = self.commands.recv(), if !self.commands_closed => self.record(cmd),
            (answer, sent) = answered(&mut self.beat.in_flight) => {
                self.beat.in_flight = None;
                self.on_answer(answer, sent);
            }
            () = sleep_until(beat_at.unwrap_or_else(far)), if beat_at.is_some() => self.send_heartbeat(),
            () = sleep_until(resolve_at.unwrap_or_else(far)), if resolve_at.is_some() => {}
        }
    }

    /// Awaits `fut` while serving the member's duties. Returns `None` if `interruptible` and the
    /// member is asked to end, or a membership ends meanwhile (the future is dropped: transport
    /// calls are cancellation-safe).
    pub(super) async fn serve<F: Future>(
        &mut self,
        fut: F,
        interruptible: bool,
    ) -> Option<F::Output> {
        let incarnation = self.incarnation;
        tokio::pin!(fut);
        loop {
            if interruptible && (self.ending.is_some() || self.incarnation != incarnation) {
                return None;
            }
            tokio::select! {
                out = &mut fut => return Some(out),
                () = self.turn() => {}
            }
        }
    }

    /// Awaits a listener call while serving the member's duties, until it returns (`true`) or
    /// its bound passes (`false`; the call is dropped): the listener timeout, or the deadline of
    /// a close (pending, arriving meanwhile, or under way) when that comes first.
    pub(super) async fn await_listener(&mut self, call: impl Future<Output = ()>) -> bool {
        let bound = Instant::now() + self.config.listener_timeout();
        tokio::pin!(call);
        loop {
            let until = listener_until(bound, self.ending.as_ref(), self.closing_by);
            tokio::select! {
                () = &mut call => return true,
                () = self.turn() => {}
                () = sleep_until(until) => return false,
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
            Some(Command::Subscribe(topics)) => self.subscribe(TopicSelection::Topics(topics)),
            Some(Command::SubscribeRegex(regex)) => self.subscribe(TopicSelection::Regex(regex)),
            Some(Command::MetadataChanged) => {
                // The coordinator follows partition counts itself; new metadata may name a topic
                // id the member could not resolve yet.
                if !self.unresolved.is_empty() {
                    self.resolve_at = Some(Instant::now());
                }
            }
            Some(Command::PollIntervalExceeded) => {
                if self.in_group() {
                    self.chores.owe(Chore::GoStale);
                }
            }
            Some(Command::Leave { reply, deadline }) => {
                self.ending = Some(Ending::leave(reply, deadline));
            }
            Some(Command::Close { reply, deadline }) => {
                self.ending = Some(Ending::close(reply, deadline));
            }
        }
    }

    /// A new subscription: join if not in the group (or after a fatal error), else say it in the
    /// next heartbeat, at once. An empty one leaves the group.
    fn subscribe(&mut self, subscription: TopicSelection) {
        use ConsumerMemberState as S;
        let empty = match &subscription {
            TopicSelection::Topics(topics) => topics.is_empty(),
            TopicSelection::Regex(regex) => regex.is_empty(),
        };
        if empty {
            self.subscription = None;
            self.chores.owe(Chore::Unsubscribe);
            self.publish();
            return;
        }
        self.chores.cancel(Chore::Unsubscribe);
        let changed = self.subscription.as_ref() != Some(&subscription);
        self.subscription = Some(subscription);
        match self.state {
            S::Unsubscribed => self.join(RebalanceCause::MemberJoined),
            S::Fatal => {
                self.failure = None;
                self.failed_code = ErrorCode::None;
                self.join(RebalanceCause::MemberJoined);
            }
            S::Reconciling | S::Acknowledging | S::Stable | S::Joining if changed => {
                self.beat.urgent = true;
                self.pending_cause = Some(RebalanceCause::SubscriptionChange);
                self.publish();
            }
            // Fenced, stale or waiting for the instance id: the rejoin says it.
            _ => self.publish(),
        }
    }

    /// (Re)joins at epoch 0, with the same member id: a full heartbeat at once.
    pub(super) fn join(&mut self, cause: RebalanceCause) {
        self.forget_epoch();
        self.beat.urgent = true;
        self.join_started = Some(Instant::now());
        self.start_run(cause);
        self.set_state(ConsumerMemberState::Joining);
    }

    /// Back to epoch 0: no target, nothing reconciled or waiting for its acknowledgement, and the
    /// next heartbeat full (the coordinator knows nothing the last ones said).
    fn forget_epoch(&mut self) {
        self.epoch = 0;
        self.target = None;
        self.applied = None;
        self.unresolved.clear();
        self.resolve_at = None;
        self.unacked = None;
        self.beat.ack_due = false;
        self.beat.sent.reset();
    }

    /// Starts a rebalance (event `RebalanceStarted`) unless one is under way.
    pub(super) fn start_run(&mut self, cause: RebalanceCause) {
        if self.run.is_some() {
            return;
        }
        self.events.emit(GroupEventKind::RebalanceStarted {
            cause,
            generation: if self.epoch > 0 { self.epoch } else { -1 },
            protocol: RebalanceProtocol::Cooperative,
        });
        self.run = Some(Run {
            started: Instant::now(),
            phases: PhaseTimings::default(),
        });
    }

    /// The rebalance under way failed (event `RebalanceFailed`), if one is.
    pub(super) fn fail_run(&mut self, error: String, code: Option<ErrorCode>) {
        if let Some(run) = self.run.take() {
            self.events.emit(GroupEventKind::RebalanceFailed {
                error,
                code,
                total: run.started.elapsed(),
                phases: run.phases,
            });
        }
    }

    /// Whether heartbeats go out in this state.
    fn heartbeat_wanted(&self) -> bool {
        use ConsumerMemberState as S;
        self.subscription.is_some()
            && !self.chores.hold_heartbeats()
            && matches!(
                self.state,
                S::Joining
                    | S::Reconciling
                    | S::Acknowledging
                    | S::Stable
                    | S::InstanceIdUnreleased
            )
    }

    /// When the next heartbeat goes (`None`: none now, or one is in flight). An acknowledgement
    /// or a subscription change goes at once, but never inside a failure's back-off.
    fn beat_at(&self) -> Option<Instant> {
        if self.beat.in_flight.is_some() || !self.heartbeat_wanted() {
            return None;
        }
        let now = Instant::now();
        let at = if self.beat.urgent || self.beat.ack_due {
            now
        } else {
            self.beat.next_at.unwrap_or(now)
        };
        Some(self.beat.backoff_until.map_or(at, |b| at.max(b)))
    }
}

/// The answer of the heartbeat in flight, with what it was sent with; pending while none is.
async fn answered(in_flight: &mut Option<InFlight>) -> (Answer, Sent) {
    match in_flight {
        Some(f) => {
            let answer = f.answer.as_mut().await;
            (answer, f.sent)
        }
        None => std::future::pending().await,
    }
}
