//! Spawning a member and the handle the runtime holds.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::{timeout_at, Instant};

use super::classic::heartbeat;
use super::classic::member::ClassicMember;
use super::classic::protocol::Strategies;
use super::command::Command;
use super::config::{GroupConfig, GroupProtocol};
use super::consumer::member::ConsumerMember;
use super::events::{EventReceiver, EventSink};
use super::listener::RebalanceListener;
use super::offsets::{CommitState, InvalidatedSlot};
use super::share::member::ShareMember;
use super::state::MemberSnapshot;
use crate::assignor::Assignor;
use crate::transport::GroupTransport;
use mooring_client::error::{Error, Result};
use mooring_client::OffsetAndMetadata;
use mooring_client::TopicPartition;

/// Starts group members.
#[derive(Debug)]
pub struct GroupMember;

impl GroupMember {
    /// Spawns the member task (and its heartbeat task) on the current tokio runtime, with the
    /// assignors named by `partition.assignment.strategy`. Nothing is sent before `subscribe`.
    ///
    /// ```no_run
    /// # async fn demo<T: mooring_group::GroupTransport>(transport: std::sync::Arc<T>) -> mooring_client::Result<()> {
    /// use mooring_group::{GroupConfig, GroupMember, NoopListener};
    ///
    /// let config = GroupConfig::from_properties([
    ///     ("group.id", "orders"),
    ///     ("partition.assignment.strategy", "cooperative-sticky"),
    /// ])?;
    /// let member = GroupMember::spawn(transport, config, NoopListener)?;
    /// let mut events = member.take_events().expect("first take");
    /// member.subscribe(["orders"]).await?;
    /// while let Some(event) = events.recv().await {
    ///     println!("{event:?}");
    /// }
    /// member.close().await?;
    /// # Ok(()) }
    /// ```
    pub fn spawn<T: GroupTransport, L: RebalanceListener>(
        transport: Arc<T>,
        config: GroupConfig,
        listener: L,
    ) -> Result<GroupHandle<T>> {
        match config.protocol {
            GroupProtocol::Consumer => Self::start_consumer(transport, config, listener),
            GroupProtocol::Share => Self::start_share(transport, config, listener),
            GroupProtocol::Classic => {
                let strategies = Strategies::by_names(&config.assignment_strategies)?;
                Self::start(transport, config, listener, strategies)
            }
        }
    }

    /// Like [`spawn`](Self::spawn) with explicit assignors (in preference order), e.g. a custom
    /// assignor; `partition.assignment.strategy` is ignored.
    pub fn spawn_with_assignors<T: GroupTransport, L: RebalanceListener>(
        transport: Arc<T>,
        config: GroupConfig,
        listener: L,
        assignors: Vec<Arc<dyn Assignor>>,
    ) -> Result<GroupHandle<T>> {
        if config.protocol != GroupProtocol::Classic {
            return Err(Error::Config {
                key: "group.protocol".into(),
                message: "client-side assignors run only with group.protocol=classic; the \
                          consumer protocol's and a share group's broker assigns"
                    .into(),
            });
        }
        let strategies = Strategies::new(assignors)?;
        Self::start(transport, config, listener, strategies)
    }

    fn start<T: GroupTransport, L: RebalanceListener>(
        transport: Arc<T>,
        config: GroupConfig,
        listener: L,
        strategies: Strategies,
    ) -> Result<GroupHandle<T>> {
        config.validate()?;
        let config = Arc::new(config);
        let (events, event_rx) = EventSink::channel(config.event_capacity);
        let (command_tx, command_rx) = mpsc::channel(32);
        let (control_tx, control_rx) = mpsc::channel(16);
        let (heartbeat_tx, heartbeat_rx) = watch::channel(None);
        let (snapshot_tx, snapshot_rx) = watch::channel(ClassicMember::<T, L>::initial_snapshot(
            &config,
            strategies.rebalance_protocol(),
        ));
        tokio::spawn(heartbeat::run(
            transport.clone(),
            config.clone(),
            heartbeat_rx,
            control_tx.clone(),
            events.clone(),
        ));
        let invalidated = InvalidatedSlot::default();
        let member = ClassicMember::new(
            transport.clone(),
            Arc::new(listener),
            config.clone(),
            strategies,
            command_rx,
            control_rx,
            heartbeat_tx,
            snapshot_tx,
            events.clone(),
            invalidated.clone(),
        );
        tokio::spawn(member.run());
        Ok(GroupHandle {
            commands: command_tx,
            shared: Arc::new(CommitState {
                transport,
                config,
                snapshot: snapshot_rx,
                control: control_tx,
                events,
                invalidated,
            }),
            event_rx: Arc::new(Mutex::new(Some(event_rx))),
        })
    }
}

/// What a one-task member's constructor gets: the transport, its config, the commands the handle
/// sends, where it publishes its snapshot, and where its events go.
type OneTaskParts<T> = (
    Arc<T>,
    Arc<GroupConfig>,
    mpsc::Receiver<Command>,
    watch::Sender<MemberSnapshot>,
    EventSink,
);

impl GroupMember {
    /// The `consumer`-protocol member (KIP-848): one task, heartbeats included; the handle's
    /// commit path is the classic member's.
    fn start_consumer<T: GroupTransport, L: RebalanceListener>(
        transport: Arc<T>,
        config: GroupConfig,
        listener: L,
    ) -> Result<GroupHandle<T>> {
        let snapshot = ConsumerMember::<T, L>::initial_snapshot(&config);
        Self::start_one_task(
            transport,
            config,
            snapshot,
            |(t, c, commands, s, events)| {
                ConsumerMember::new(t, Arc::new(listener), c, commands, s, events).run()
            },
        )
    }

    /// A share-group member (KIP-932): one task, heartbeats included. Its handle refuses
    /// commits: a share group's records are acknowledged, not committed.
    fn start_share<T: GroupTransport, L: RebalanceListener>(
        transport: Arc<T>,
        config: GroupConfig,
        listener: L,
    ) -> Result<GroupHandle<T>> {
        let snapshot = ShareMember::<T, L>::initial_snapshot();
        Self::start_one_task(
            transport,
            config,
            snapshot,
            |(t, c, commands, s, events)| {
                ShareMember::new(t, Arc::new(listener), c, commands, s, events).run()
            },
        )
    }

    /// Spawns a member that heartbeats from its own task (the consumer and share protocols).
    /// Their commit errors tell the member task nothing (its own heartbeat meets the same
    /// errors), so nobody reads the handle's control channel.
    fn start_one_task<T: GroupTransport, F: Future<Output = ()> + Send + 'static>(
        transport: Arc<T>,
        config: GroupConfig,
        snapshot: MemberSnapshot,
        member: impl FnOnce(OneTaskParts<T>) -> F,
    ) -> Result<GroupHandle<T>> {
        config.validate()?;
        let config = Arc::new(config);
        let (events, event_rx) = EventSink::channel(config.event_capacity);
        let (command_tx, command_rx) = mpsc::channel(32);
        let (control_tx, _) = mpsc::channel(1);
        let (snapshot_tx, snapshot_rx) = watch::channel(snapshot);
        tokio::spawn(member((
            transport.clone(),
            config.clone(),
            command_rx,
            snapshot_tx,
            events.clone(),
        )));
        Ok(GroupHandle {
            commands: command_tx,
            shared: Arc::new(CommitState {
                transport,
                config,
                snapshot: snapshot_rx,
                control: control_tx,
                events,
                invalidated: InvalidatedSlot::default(),
            }),
            event_rx: Arc::new(Mutex::new(Some(event_rx))),
        })
    }
}

/// The handle to a running member. Cheap to clone; the member closes (as configured, within the
/// rebalance timeout) when every handle is dropped. Whatever the member calls back into (its
/// rebalance listener) must hold a [`WeakGroupHandle`] instead: a handle owned by the member's own
/// listener would keep it alive for ever.
#[derive(Debug)]
pub struct GroupHandle<T> {
    commands: mpsc::Sender<Command>,
    shared: Arc<CommitState<T>>,
    event_rx: Arc<Mutex<Option<EventReceiver>>>,
}

impl<T> Clone for GroupHandle<T> {
    fn clone(&self) -> Self {
        GroupHandle {
            commands: self.commands.clone(),
            shared: self.shared.clone(),
            event_rx: self.event_rx.clone(),
        }
    }
}

/// A handle that does not keep the member alive: for back-references from what the member owns
/// (its rebalance listener), which would otherwise form a cycle. [`upgrade`](Self::upgrade) it
/// for each use; it fails once every [`GroupHandle`] is gone and the member is closing.
#[derive(Debug)]
pub struct WeakGroupHandle<T> {
    commands: mpsc::WeakSender<Command>,
    shared: Weak<CommitState<T>>,
    event_rx: Weak<Mutex<Option<EventReceiver>>>,
}

impl<T> Clone for WeakGroupHandle<T> {
    fn clone(&self) -> Self {
        WeakGroupHandle {
            commands: self.commands.clone(),
            shared: self.shared.clone(),
            event_rx: self.event_rx.clone(),
        }
    }
}

impl<T> WeakGroupHandle<T> {
    /// A handle, while some [`GroupHandle`] still exists; hold it only as long as one call.
    pub fn upgrade(&self) -> Option<GroupHandle<T>> {
        Some(GroupHandle {
            commands: self.commands.upgrade()?,
            shared: self.shared.upgrade()?,
            event_rx: self.event_rx.upgrade()?,
        })
    }
}

impl<T> GroupHandle<T> {
    /// A weak handle to the same member (see [`WeakGroupHandle`]).
    pub fn downgrade(&self) -> WeakGroupHandle<T> {
        WeakGroupHandle {
            commands: self.commands.downgrade(),
            shared: Arc::downgrade(&self.shared),
            event_rx: Arc::downgrade(&self.event_rx),
        }
    }
}

impl<T: GroupTransport> GroupHandle<T> {
    async fn send(&self, command: Command) -> Result<()> {
        self.commands.send(command).await.map_err(|_| Error::Closed)
    }

    /// Sends an ending command and waits for its reply, both by `deadline`.
    async fn end(
        &self,
        api: &'static str,
        limit: Duration,
        command: impl FnOnce(oneshot::Sender<Result<()>>, Instant) -> Command,
    ) -> Result<()> {
        let deadline = Instant::now() + limit;
        let (tx, rx) = oneshot::channel();
        let ended = timeout_at(deadline, async {
            self.send(command(tx, deadline)).await?;
            rx.await.map_err(|_| Error::Closed)?
        })
        .await;
        ended.unwrap_or_else(|_| {
            Err(Error::DeadlineExceeded {
                api,
                group: self.shared.config.group_id.clone(),
                after: limit,
                last: None,
            })
        })
    }

    /// Subscribes to `topics` (replacing the previous subscription); the first call joins the
    /// group, later changes rejoin.
    pub async fn subscribe<I, S>(&self, topics: I) -> Result<()>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.send(Command::Subscribe(
            topics.into_iter().map(Into::into).collect(),
        ))
        .await
    }

    /// Subscribes to the topics matching `regex`, matched by the broker (`consumer` protocol
    /// only, KIP-848's `SubscribedTopicRegex`): RE2/J syntax, matched against the whole topic
    /// name, re-evaluated by the broker as topics come and go. A classic member refuses it with
    /// [`Error::Config`] naming `group.protocol`: under the classic protocol the consumer matches
    /// its pattern against metadata itself and subscribes the topics.
    pub async fn subscribe_regex(&self, regex: impl Into<String>) -> Result<()> {
        if self.shared.config.protocol != GroupProtocol::Consumer {
            return Err(Error::Config {
                key: "group.protocol".into(),
                message: "a broker-side regex subscription needs group.protocol=consumer \
                          (share groups subscribe by topic name)"
                    .into(),
            });
        }
        self.send(Command::SubscribeRegex(regex.into())).await
    }

    /// Commits offsets with the member's generation (see [`super::offsets`]), retrying within the
    /// rebalance timeout.
    pub async fn commit(&self, offsets: BTreeMap<TopicPartition, OffsetAndMetadata>) -> Result<()> {
        self.commit_within(offsets, self.shared.config.rebalance_timeout)
            .await
    }

    /// Commits as [`commit`](Self::commit), giving up when `limit` has passed: the attempt in
    /// flight is abandoned, no retry starts, and the error is [`Error::DeadlineExceeded`] (with
    /// the last attempt's error, if one failed). For commits bounded by a revoke or a shutdown.
    pub async fn commit_within(
        &self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
        limit: Duration,
    ) -> Result<()> {
        self.refuse_share("OffsetCommit")?;
        self.shared.commit(offsets, limit).await
    }

    /// A share group commits no offsets (its records are acknowledged one by one): commits and
    /// committed-offset look-ups are refused with [`Error::Config`] naming `group.id`.
    fn refuse_share(&self, api: &str) -> Result<()> {
        if self.shared.config.protocol != GroupProtocol::Share {
            return Ok(());
        }
        Err(Error::Config {
            key: "group.id".into(),
            message: format!(
                "{} is a share group: its records are acknowledged, it has no offsets ({api})",
                self.shared.config.group_id
            ),
        })
    }

    /// Committed offsets (stable ones: KIP-447 `require_stable`); `None` when nothing is committed.
    pub async fn committed(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>> {
        self.refuse_share("OffsetFetch")?;
        self.shared
            .committed(partitions.into_iter().collect())
            .await
    }

    /// The partitions owned now.
    pub fn assignment(&self) -> BTreeSet<TopicPartition> {
        self.shared.snapshot.borrow().assignment.clone()
    }

    /// ClassicMember id, generation, state, protocol, leader, assignment.
    pub fn state(&self) -> MemberSnapshot {
        self.shared.snapshot.borrow().clone()
    }

    /// A receiver that sees every state change (for waiting on a state).
    pub fn watch_state(&self) -> watch::Receiver<MemberSnapshot> {
        self.shared.snapshot.clone()
    }

    /// Topic metadata changed: the leader compares partition counts with those it assigned and
    /// rejoins if they moved.
    pub async fn metadata_changed(&self) -> Result<()> {
        self.send(Command::MetadataChanged).await
    }

    /// The processing loop missed `max.poll.interval.ms`: the member rejoins so the group can
    /// rebalance around it.
    pub async fn poll_interval_exceeded(&self) -> Result<()> {
        self.send(Command::PollIntervalExceeded).await
    }

    /// Leaves the group (LeaveGroup is sent, static member or not) and ends the member, within
    /// the rebalance timeout (as [`close_within`](Self::close_within)).
    pub async fn leave(&self) -> Result<()> {
        let limit = self.shared.config.rebalance_timeout;
        self.end("LeaveGroup", limit, |reply, deadline| Command::Leave {
            reply,
            deadline,
        })
        .await
    }

    /// Closes the member within the rebalance timeout (see [`close_within`](Self::close_within)).
    pub async fn close(&self) -> Result<()> {
        self.close_within(self.shared.config.rebalance_timeout)
            .await
    }

    /// Closes the member: revokes its partitions through the listener, sends LeaveGroup only if
    /// `mooring.leave.group.on.close` says so (default: dynamic members yes, static members no,
    /// KIP-345), and ends it; heartbeats stop before the LeaveGroup. All of it within `limit`: the
    /// listener gets at most what is left of it, LeaveGroup what the listener left (none left:
    /// not sent, and the coordinator drops the member after its session timeout). Past `limit`
    /// the member ends anyway and this returns [`Error::DeadlineExceeded`].
    pub async fn close_within(&self, limit: Duration) -> Result<()> {
        self.end("close", limit, |reply, deadline| Command::Close {
            reply,
            deadline,
        })
        .await
    }

    /// The event receiver (once; later calls return `None`).
    pub fn take_events(&self) -> Option<EventReceiver> {
        self.event_rx.lock().ok().and_then(|mut rx| rx.take())
    }

    /// Events dropped because the event channel was full.
    pub fn dropped_events(&self) -> u64 {
        self.shared.events.dropped()
    }
}
