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
//!
//! This file holds the task's state and loop; each phase is a file of its own: [`join`] (the
//! rebalance and JoinGroup), [`sync`] (assignment and SyncGroup), [`callbacks`] (the listener),
//! [`failures`] (the reactions), [`control`] (between rebalances) and [`leave`] (the end).

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mooring_client::error::Error;
use mooring_client::TopicPartition;
use mooring_wire::consumer_protocol;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, sleep_until, Instant};

use super::heartbeat::HeartbeatTarget;
use super::protocol::Strategies;
use crate::assignor::{PartitionsPerTopic, RebalanceProtocol};
use crate::command::{Command, Ending};
use crate::config::{GroupConfig, GroupProtocol};
use crate::control::Control;
use crate::events::{EventSink, RebalanceCause};
use crate::listener::RebalanceListener;
use crate::offsets::InvalidatedSlot;
use crate::state::{MemberSnapshot, MemberState};
use crate::transport::GroupTransport;

mod callbacks;
mod control;
mod failures;
mod join;
mod leave;
mod sync;

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
            share_state: None,
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
            share_state: None,
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

    async fn backoff(&mut self, after: Duration) -> bool {
        self.serve(sleep(after), true).await.is_some()
    }
}
