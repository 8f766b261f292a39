//! The share member task: one task owns the state ([`ShareMemberState`]) and everything it acts
//! on — the member epoch, the assignment the coordinator gave, the owned share-partitions, the
//! heartbeat timer and the one heartbeat in flight. Its loop ([`ShareMember::run`]) does at most
//! one slow thing at a time (end; give the partitions up through `lost` after fencing; leave after
//! an empty subscription; take a new assignment) and in between, and while it awaits any of them,
//! serves its duties in one `select!` ([`ShareMember::turn`]): commands from the handle, the
//! heartbeat timer, the heartbeat's answer. Every answer is handled by synchronous code that only
//! records what must happen next.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use mooring_client::error::{Error, Result};
use mooring_client::TopicPartition;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::ShareGroupHeartbeatResponse;
use mooring_wire::primitives::Uuid;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep_until, Instant};

use crate::assignor::RebalanceProtocol;
use crate::by_topic_id::Target;
use crate::command::{listener_until, Command, Ending};
use crate::config::{GroupConfig, GroupProtocol};
use crate::events::{EventSink, GroupEventKind, PhaseTimings, RebalanceCause};
use crate::listener::{Callback, RebalanceListener};
use crate::member_id::new_member_id;
use crate::share::heartbeat::SentFields;
use crate::state::{MemberSnapshot, MemberState, ShareMemberState};
use crate::transport::GroupTransport;

mod answers;
mod assignment;
mod leave;

/// A heartbeat's answer, as the transport gives it.
type Answer = Result<ShareGroupHeartbeatResponse>;

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
    /// The membership it was sent in (see [`ShareMember::incarnation`]).
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
    in_flight: Option<InFlight>,
}

/// A rebalance as this member sees it, from its start (a join, or a new assignment) to the
/// assignment taken.
#[derive(Debug)]
struct Run {
    started: Instant,
    phases: PhaseTimings,
}

pub(crate) struct ShareMember<T, L> {
    transport: Arc<T>,
    listener: Arc<L>,
    config: Arc<GroupConfig>,
    commands: mpsc::Receiver<Command>,
    snapshot: watch::Sender<MemberSnapshot>,
    events: EventSink,

    /// Made up once and kept for the member's life, rejoins included.
    member_id: String,
    /// The member epoch the coordinator gave (0: none, joining).
    epoch: i32,
    state: ShareMemberState,
    closed: bool,
    subscription: Option<BTreeSet<String>>,
    owned: BTreeSet<TopicPartition>,
    /// Topic ids of the owned topics.
    topic_ids: BTreeMap<String, Uuid>,
    target: Option<Target>,
    /// The sequence number of the target taken last (`None`: none since joining).
    applied: Option<u64>,
    next_seq: u64,
    /// Topic ids of the target no metadata could name yet, and when to look again.
    unresolved: BTreeSet<Uuid>,
    resolve_at: Option<Instant>,
    beat: Beat,
    run: Option<Run>,
    /// Why the next rebalance starts, if the member knows (a subscription change).
    pending_cause: Option<RebalanceCause>,
    join_started: Option<Instant>,
    /// The membership is gone: give every partition up through `lost`, then rejoin for this
    /// cause (`None`: stay out).
    lose: Option<Option<RebalanceCause>>,
    /// An empty subscription: leave the group and stay out.
    unsubscribe_due: bool,
    /// Bumped whenever a membership ends (fenced, fatal, left): answers and assignments of an
    /// older one are ignored.
    incarnation: u64,
    failure: Option<Arc<Error>>,
    failed_code: ErrorCode,
    commands_closed: bool,
    ending: Option<Ending>,
    /// The deadline of the close under way, which bounds its listener call.
    closing_by: Option<Instant>,
}

impl<T: GroupTransport, L: RebalanceListener> ShareMember<T, L> {
    pub(crate) fn new(
        transport: Arc<T>,
        listener: Arc<L>,
        config: Arc<GroupConfig>,
        commands: mpsc::Receiver<Command>,
        snapshot: watch::Sender<MemberSnapshot>,
        events: EventSink,
    ) -> Self {
        let interval = config.heartbeat_interval;
        let member = ShareMember {
            transport,
            listener,
            commands,
            snapshot,
            events,
            member_id: new_member_id(),
            epoch: 0,
            state: ShareMemberState::Unsubscribed,
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
            run: None,
            pending_cause: None,
            join_started: None,
            lose: None,
            unsubscribe_due: false,
            incarnation: 0,
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
    pub(crate) fn initial_snapshot() -> MemberSnapshot {
        MemberSnapshot {
            state: MemberState::Unjoined,
            member_id: String::new(),
            group_instance_id: None,
            generation: -1,
            group_protocol: GroupProtocol::Share,
            consumer_state: None,
            share_state: Some(ShareMemberState::Unsubscribed),
            protocol_name: None,
            rebalance_protocol: RebalanceProtocol::Cooperative,
            leader_id: None,
            assignment: BTreeSet::new(),
            subscription: BTreeSet::new(),
            failure: None,
        }
    }

    /// The classic state the runtime reads (the mapping documented on [`ShareMemberState`]).
    fn mapped_state(&self) -> MemberState {
        use ShareMemberState as S;
        if self.closed {
            return MemberState::Closed;
        }
        match self.state {
            S::Unsubscribed => MemberState::Unjoined,
            S::Joining | S::Fenced => MemberState::PreparingRebalance,
            S::Reconciling => MemberState::CompletingRebalance,
            S::Stable | S::Leaving => MemberState::Stable,
            S::Fatal => MemberState::Failed(self.failed_code),
        }
    }

    fn publish(&self) {
        self.snapshot.send_replace(MemberSnapshot {
            state: self.mapped_state(),
            member_id: self.member_id.clone(),
            generation: if self.epoch > 0 { self.epoch } else { -1 },
            share_state: Some(self.state),
            assignment: self.owned.clone(),
            subscription: self.subscription.clone().unwrap_or_default(),
            failure: self.failure.clone(),
            ..Self::initial_snapshot()
        });
    }

    fn set_state(&mut self, state: ShareMemberState) {
        self.state = state;
        self.publish();
    }

    /// The task's body.
    pub(crate) async fn run(mut self) {
        loop {
            if let Some(ending) = self.ending.take() {
                self.finish(ending).await;
                return;
            }
            if let Some(rejoin) = self.lose.take() {
                self.give_up_partitions(rejoin).await;
                continue;
            }
            if std::mem::take(&mut self.unsubscribe_due) {
                self.unsubscribe().await;
                continue;
            }
            if self.reconcile_due() {
                self.reconcile().await;
                continue;
            }
            self.turn().await;
        }
    }

    /// One of the member's duties, whichever is ready first: a command, the heartbeat timer
    /// (send one), the heartbeat's answer, the time to look up unresolved topic ids again.
    /// Cancellation-safe: every branch's handler is synchronous.
    async fn turn(&mut self) {
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

    /// Awaits `fut` while serving the member's duties; `None` if the member is asked to end or
    /// its membership ends meanwhile (the future is dropped: transport calls are
    /// cancellation-safe).
    async fn serve<F: Future>(&mut self, fut: F) -> Option<F::Output> {
        let incarnation = self.incarnation;
        tokio::pin!(fut);
        loop {
            if self.ending.is_some() || self.incarnation != incarnation {
                return None;
            }
            tokio::select! {
                out = &mut fut => return Some(out),
                () = self.turn() => {}
            }
        }
    }

    /// One listener call while serving the member's duties, bounded by the listener timeout or
    /// the deadline of a close (pending, arriving meanwhile, or under way), with its event.
    async fn call_listener(&mut self, kind: Callback, partitions: Vec<TopicPartition>) -> Duration {
        let (under_way, call) = kind.start(Arc::clone(&self.listener), partitions);
        let bound = Instant::now() + self.config.listener_timeout();
        let timed_out = {
            tokio::pin!(call);
            loop {
                let until = listener_until(bound, self.ending.as_ref(), self.closing_by);
                tokio::select! {
                    () = &mut call => break false,
                    () = self.turn() => {}
                    () = sleep_until(until) => break true,
                }
            }
        };
        under_way.finish(&self.config.group_id, &self.owned, timed_out, &self.events)
    }

    fn record(&mut self, cmd: Option<Command>) {
        match cmd {
            None => {
                // Every handle is gone: close.
                self.commands_closed = true;
                if self.ending.is_none() {
                    self.ending = Some(Ending::handles_gone(self.config.rebalance_timeout));
                }
            }
            Some(Command::Subscribe(topics)) => self.subscribe(topics),
            Some(Command::MetadataChanged) => {
                // The coordinator follows partition counts itself; new metadata may name a topic
                // id the member could not resolve yet.
                if !self.unresolved.is_empty() {
                    self.resolve_at = Some(Instant::now());
                }
            }
            // A share member's records are locked one by one, not its partitions: a stuck
            // handler lets its record's lock expire and the record goes to another member, so
            // the member stays. The handle refuses a regex (share groups subscribe by name).
            Some(Command::PollIntervalExceeded | Command::SubscribeRegex(_)) => {}
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
    fn subscribe(&mut self, topics: BTreeSet<String>) {
        use ShareMemberState as S;
        if topics.is_empty() {
            self.subscription = None;
            self.unsubscribe_due = true;
            self.publish();
            return;
        }
        self.unsubscribe_due = false;
        let changed = self.subscription.as_ref() != Some(&topics);
        self.subscription = Some(topics);
        match self.state {
            S::Unsubscribed => self.join(RebalanceCause::MemberJoined),
            S::Fatal => {
                self.failure = None;
                self.failed_code = ErrorCode::None;
                self.join(RebalanceCause::MemberJoined);
            }
            S::Joining | S::Reconciling | S::Stable if changed => {
                self.beat.urgent = true;
                self.pending_cause = Some(RebalanceCause::SubscriptionChange);
                self.publish();
            }
            // Fenced: the rejoin says it.
            _ => self.publish(),
        }
    }

    /// (Re)joins at epoch 0 with the same member id: a full heartbeat at once.
    fn join(&mut self, cause: RebalanceCause) {
        self.epoch = 0;
        self.target = None;
        self.applied = None;
        self.unresolved.clear();
        self.resolve_at = None;
        self.beat.sent.reset();
        self.beat.urgent = true;
        self.join_started = Some(Instant::now());
        self.start_run(cause);
        self.set_state(ShareMemberState::Joining);
    }

    /// Starts a rebalance (event `RebalanceStarted`) unless one is under way.
    fn start_run(&mut self, cause: RebalanceCause) {
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
    fn fail_run(&mut self, error: String, code: Option<ErrorCode>) {
        if let Some(run) = self.run.take() {
            self.events.emit(GroupEventKind::RebalanceFailed {
                error,
                code,
                total: run.started.elapsed(),
                phases: run.phases,
            });
        }
    }

    /// When the next heartbeat goes (`None`: none now, or one is in flight). A join or a
    /// subscription change goes at once, but never inside a failure's back-off.
    fn beat_at(&self) -> Option<Instant> {
        use ShareMemberState as S;
        let wanted = self.subscription.is_some()
            && self.lose.is_none()
            && matches!(self.state, S::Joining | S::Reconciling | S::Stable);
        if self.beat.in_flight.is_some() || !wanted {
            return None;
        }
        let now = Instant::now();
        let at = if self.beat.urgent {
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
