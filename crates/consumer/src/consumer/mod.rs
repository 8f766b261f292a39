//! The public consumer ([`Consumer`]) and what `run` wires together: the group member and its
//! rebalance listener, commits, the record stream, shutdown. What a user needs to know (an
//! example; how commits, rebalances and the pause rule behave) is in the crate docs, from the
//! crate's README.

mod commit;
mod listener;
mod rebalance;
mod run;
mod stream;
mod tasks;

pub use listener::ConsumerRebalanceListener;
pub use stream::{Delivery, RecordStream};

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use mooring_client::conn::FrameMemory;
use mooring_client::Client;
use mooring_group::{GroupHandle, GroupProtocol, MemberSnapshot};

use crate::config::ConsumerConfig;
use crate::error::ConsumerError;
use mooring_group::EventSink;

use crate::events::ConsumerEvents;
use crate::fetcher::FetchStats;
use crate::processing::{BatchHandler, Batches, Handler, ProcessingOrder};
use crate::shared::Shared;
use crate::shutdown::{ShutdownHandle, Stop};
use crate::subscription::{SubscriptionMode, SubscriptionState};
use crate::TopicPartition;
use commit::{commit_offsets, CommitLock, EngineOps};
use listener::ErasedListener;

/// What exists while `run` runs.
#[derive(Clone)]
struct Running {
    member: Option<GroupHandle<Client>>,
    engine: Arc<dyn EngineOps>,
}

struct Inner {
    shared: Arc<Shared>,
    /// The group member's own client (the fetcher's is in `shared`).
    group_client: Option<Arc<Client>>,
    listener: Mutex<Option<Arc<dyn ErasedListener>>>,
    events: Mutex<Option<ConsumerEvents>>,
    running: Mutex<Option<Running>>,
    commits: Arc<CommitLock>,
    started: std::sync::atomic::AtomicBool,
}

impl Inner {
    fn listener(&self) -> Option<Arc<dyn ErasedListener>> {
        self.listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn running(&self) -> Option<Running> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_running(&self, running: Option<Running>) {
        *self.running.lock().unwrap_or_else(PoisonError::into_inner) = running;
    }
}

/// A Kafka consumer. Cheap to clone: clones share the consumer, so one task can `run` it while
/// others pause, seek, commit or shut it down.
#[derive(Clone)]
pub struct Consumer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field(
                "group",
                &self.inner.shared.config.group.as_ref().map(|g| &g.group_id),
            )
            .field("mode", &self.inner.shared.subs().mode())
            .finish_non_exhaustive()
    }
}

impl Consumer {
    /// A consumer for `config`. Nothing is sent before [`run`](Self::run).
    pub fn new(config: ConsumerConfig) -> Result<Consumer, ConsumerError> {
        let memory = FrameMemory::new(config.fetch.memory_max_bytes);
        let fetch_client = Client::with_frame_memory(config.client.clone(), Arc::clone(&memory))?;
        let group_client = match &config.group {
            Some(_) => Some(Arc::new(Client::new(config.client.clone())?)),
            None => None,
        };
        let capacity = config
            .group
            .as_ref()
            .map_or(1024, |g| g.event_capacity.max(1024));
        let (sink, events) = EventSink::channel(capacity);
        let subs = SubscriptionState::new(config.auto_offset_reset);
        Ok(Consumer {
            inner: Arc::new(Inner {
                shared: Arc::new(Shared::new(config, subs, fetch_client, memory, sink)),
                group_client,
                listener: Mutex::new(None),
                events: Mutex::new(Some(events)),
                running: Mutex::new(None),
                commits: Arc::new(CommitLock::new(())),
                started: std::sync::atomic::AtomicBool::new(false),
            }),
        })
    }

    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    /// Subscribes to these topics (the group assigns their partitions). Calling it again replaces
    /// the set (and rejoins when running); an empty list unsubscribes. Mixing with
    /// `subscribe_pattern` or `assign` is an error.
    pub fn subscribe<I, S>(&self, topics: I) -> Result<(), ConsumerError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let changed = self.shared().subs().subscribe(topics)?;
        if changed {
            self.resubscribe();
        }
        Ok(())
    }

    /// Subscribes to every topic whose whole name matches `pattern`. Calling it again replaces
    /// the pattern; mixing with `subscribe` or `assign` is an error. Who matches depends on
    /// `group.protocol`:
    ///
    /// - `classic` (and without a group): the consumer, with the `regex` crate's syntax, against
    ///   the non-internal topics of the cluster metadata, re-evaluated on every metadata refresh
    ///   (`metadata.max.age.ms`); the member subscribes to the topics matched. The pattern is
    ///   anchored (`^(?:pattern)$`), so it must match the whole name, as Java's
    ///   `Pattern.matcher(topic).matches()`; an invalid one is refused here.
    /// - `consumer` (KIP-848): the broker, which compiles the pattern as RE2/J and matches it
    ///   against the whole name of every topic it knows, internal ones included (keep
    ///   `__consumer_offsets` out of the pattern), re-evaluating as topics come and go; the
    ///   consumer sends the pattern as given ([`GroupHandle::subscribe_regex`]) and takes whatever
    ///   partitions the broker assigns for it. Only an empty pattern is refused here; one the
    ///   broker cannot compile fails the member (INVALID_REGULAR_EXPRESSION).
    pub fn subscribe_pattern(&self, pattern: &str) -> Result<(), ConsumerError> {
        let on_broker = self.broker_matches_patterns();
        let changed = if on_broker {
            self.shared().subs().subscribe_broker_pattern(pattern)?
        } else {
            self.shared().subs().subscribe_pattern(pattern)?
        };
        if changed && on_broker {
            self.resubscribe_regex(pattern.to_owned());
        }
        Ok(())
    }

    /// Whether a pattern subscription is sent to the broker (`group.protocol=consumer`).
    fn broker_matches_patterns(&self) -> bool {
        self.shared()
            .config
            .group
            .as_ref()
            .is_some_and(|g| g.protocol == GroupProtocol::Consumer)
    }

    /// While running, sends the new pattern to the member.
    fn resubscribe_regex(&self, pattern: String) {
        let Some(member) = self.inner.running().and_then(|r| r.member) else {
            return;
        };
        tokio::spawn(async move {
            if let Err(e) = member.subscribe_regex(pattern).await {
                tracing::warn!(error = %e, "resubscribing to a pattern");
            }
        });
    }

    /// Assigns these partitions by hand (no group membership, no rebalances). Positions come from
    /// the group's committed offsets when `group.id` is set, else from `auto.offset.reset`.
    pub fn assign(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
    ) -> Result<(), ConsumerError> {
        self.shared().assignment_changed();
        let (before, after) = {
            let mut subs = self.shared().subs();
            let before: BTreeSet<TopicPartition> = subs.assigned_partitions().into_iter().collect();
            subs.assign(partitions)?;
            let after: BTreeSet<TopicPartition> = subs.assigned_partitions().into_iter().collect();
            (before, after)
        };
        if let Some(running) = self.inner.running() {
            running
                .engine
                .drop_partitions(before.difference(&after).cloned().collect());
            running
                .engine
                .add(after.difference(&before).cloned().collect());
        }
        self.shared().wake();
        Ok(())
    }

    fn resubscribe(&self) {
        let Some(member) = self.inner.running().and_then(|r| r.member) else {
            return;
        };
        let topics = self.shared().subs().subscribed_topics();
        tokio::spawn(async move {
            if let Err(e) = member.subscribe(topics).await {
                tracing::warn!(error = %e, "resubscribing");
            }
        });
    }

    /// Sets the application's rebalance listener; takes effect at the next [`run`](Self::run).
    pub fn set_rebalance_listener(&self, listener: impl ConsumerRebalanceListener) {
        *self
            .inner
            .listener
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(listener));
    }

    /// Runs the consumer: fetches, hands every record to `handler` (an async fn of a
    /// [`ConsumerRecord`](crate::processing::ConsumerRecord) returning `Result`), commits, and
    /// follows rebalances, until [`ShutdownHandle::shutdown`] or a fatal error. Then it drains the
    /// running handlers, commits what finished and closes the group member, all of it within
    /// `mooring.shutdown.timeout.ms` whatever the brokers do (see [`ShutdownHandle`]; what could
    /// not be committed in time is reported as
    /// [`ConsumerEvent::OffsetsNotCommitted`](crate::ConsumerEvent::OffsetsNotCommitted)). A
    /// consumer runs once.
    ///
    /// Returns the fatal error that stopped it, if any, said once (one error log line, one
    /// [`ConsumerEvent::FatalError`](crate::ConsumerEvent::FatalError)): an authentication or
    /// TLS handshake refused, a group or topics the principal may not read
    /// ([`ConsumerError::TopicAuthorizationFailed`]), [`ConsumerError::NoOffsetForPartition`],
    /// [`ConsumerError::OffsetOutOfRange`], [`ConsumerError::HandlerFailed`] (policy `stop`), a
    /// fenced static member, ... (the crate docs' "What `run` returns").
    ///
    /// # Dropping the future
    /// Dropping it before it returns (a `tokio::select!` that took another branch, an aborted
    /// task) stops the consumer as a shutdown would, without waiting: fetching stops at once, the
    /// background tasks end, [`member_state`](Self::member_state) is `None` from then on, and
    /// the rest of the shutdown — drain, commit, close — runs on the runtime in the background,
    /// bounded by `mooring.shutdown.timeout.ms`. So a dynamic member leaves the group (LeaveGroup)
    /// and a static member (`group.instance.id`) stops heartbeating and stays in the group, with
    /// its partitions, until its session times out (it sends LeaveGroup only with
    /// `mooring.leave.group.on.close=true`). The consumer cannot run again.
    pub async fn run<H: Handler>(&self, handler: H) -> Result<(), ConsumerError> {
        self.start()?;
        run::run(&self.inner, handler).await
    }

    /// Runs the consumer as [`run`](Self::run) does (the same lifecycle, result, shutdown,
    /// rebalance listener, watchdog, revoke bound, failure policy, backpressure and telemetry),
    /// handing `handler` a [`Batch`](crate::processing::Batch) at a time instead of a record: the
    /// records of one partition that its lane has queued when the call starts, in offset order,
    /// at most `mooring.batch.max.records` (default 500). Consecutive batches of a partition
    /// leave no record out (offsets skip only where the log has none, or past a forward `seek`).
    ///
    /// - One batch of a partition runs at a time; batches of different partitions run
    ///   concurrently, `mooring.concurrency` of them at most. `mooring.ordering` must be
    ///   `partition` (the default): anything else is a [`ConsumerError::Config`] naming it.
    /// - The batch is committed as one unit: `Ok` finishes every record of it (the committable
    ///   offset moves to [`last_offset`](crate::processing::Batch::last_offset) + 1 once the
    ///   batches before it finished); an error goes to `mooring.failure.policy` for the whole
    ///   batch: `retry` calls the handler again with the whole batch, `skip` skips all of it
    ///   (counted per record, reported as one failure at its first offset), `stop` ends `run`
    ///   with [`ConsumerError::HandlerFailed`] at the batch's first offset, and nothing of the
    ///   batch is committed.
    /// - `max.poll.interval.ms` counts from the batch's start; a revoke waits for the running
    ///   batch (`mooring.revoke.timeout.ms`), a shutdown drains it; a batch still running when
    ///   those bounds pass, or dropped unfinished, is not committed, and its records come again
    ///   to the partition's next owner.
    ///
    /// ```no_run
    /// use mooring_consumer::processing::Batch;
    /// use mooring_consumer::{Consumer, ConsumerConfig};
    ///
    /// # async fn example() -> Result<(), mooring_consumer::ConsumerError> {
    /// let consumer = Consumer::new(ConsumerConfig::from_properties([
    ///     ("bootstrap.servers", "localhost:9092"),
    ///     ("group.id", "loader"),
    ///     ("mooring.batch.max.records", "1000"),
    /// ])?)?;
    /// consumer.subscribe(["orders"])?;
    /// consumer
    ///     .run_batch(|batch: Batch| async move {
    ///         println!("{}: {} records", batch.partition(), batch.len());
    ///         Ok::<(), String>(())
    ///     })
    ///     .await
    /// # }
    /// ```
    pub async fn run_batch<B: BatchHandler>(&self, handler: B) -> Result<(), ConsumerError> {
        let ordering = self.shared().config.processing.ordering;
        if ordering != ProcessingOrder::Partition {
            return Err(ConsumerError::Config {
                key: "mooring.ordering".into(),
                message: format!(
                    "run_batch runs one batch of a partition at a time: only `partition` applies, not {}",
                    match ordering {
                        ProcessingOrder::Key => "`key`",
                        _ => "`none`",
                    }
                ),
            });
        }
        self.start()?;
        run::run(&self.inner, Batches(handler)).await
    }

    /// Marks the consumer started: it runs once.
    fn start(&self) -> Result<(), ConsumerError> {
        if self
            .inner
            .started
            .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return Err(ConsumerError::Running(
                "run was already called on this consumer",
            ));
        }
        Ok(())
    }

    /// Runs the consumer with the records as a stream instead of a handler: returns the stream
    /// and the future to drive (spawn it, or poll it alongside). Each record is a [`Delivery`]
    /// to [`ack`](Delivery::ack) or [`fail`](Delivery::fail); one dropped without either is not
    /// processed (never committed past, delivered again after a restart), and dropping the
    /// [`RecordStream`] shuts the consumer down. See [`Delivery`] and [`RecordStream`].
    pub fn stream(
        &self,
    ) -> (
        RecordStream,
        impl std::future::Future<Output = Result<(), ConsumerError>> + Send + 'static,
    ) {
        let (handler, records) = stream::channel(
            self.shared().config.processing.concurrency,
            self.shutdown_handle(),
        );
        let consumer = self.clone();
        (records, async move { consumer.run(handler).await })
    }

    /// Pauses these assigned partitions: nothing more is fetched (or handed out) until `resume`.
    /// Records already handed to the engine still finish.
    pub fn pause(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
    ) -> Result<(), ConsumerError> {
        self.shared().subs().pause(partitions)?;
        Ok(())
    }

    /// Resumes these assigned partitions.
    pub fn resume(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
    ) -> Result<(), ConsumerError> {
        self.shared().subs().resume(partitions)?;
        self.shared().wake();
        Ok(())
    }

    /// Pauses every partition of `topic` assigned now; returns them.
    pub fn pause_topic(&self, topic: &str) -> Vec<TopicPartition> {
        self.shared().subs().pause_topic(topic)
    }

    /// Resumes every partition of `topic` assigned now; returns them.
    pub fn resume_topic(&self, topic: &str) -> Vec<TopicPartition> {
        let resumed = self.shared().subs().resume_topic(topic);
        self.shared().wake();
        resumed
    }

    /// The partitions paused by the application.
    pub fn paused(&self) -> Vec<TopicPartition> {
        self.shared().subs().paused_partitions()
    }

    /// The partitions assigned now.
    pub fn assignment(&self) -> Vec<TopicPartition> {
        self.shared().subs().assigned_partitions()
    }

    /// Bytes of record data the consumer holds now: responses being read, records waiting for
    /// a handler or in its hands (until dropped), decompressed batches. Bounded by
    /// `mooring.memory.max.bytes` ([`FetchConfig::memory_max_bytes`](crate::FetchConfig)), which
    /// one answer may pass by one batch.
    pub fn memory_in_use(&self) -> usize {
        self.inner.shared.memory.in_use()
    }

    /// What the fetcher fetched from each broker since the consumer was created (record bytes
    /// and records, with the broker's rack), and the partitions a follower serves now: with
    /// `client.rack` set and brokers that choose replicas by rack (KIP-392), the share fetched
    /// outside the consumer's own rack.
    pub fn fetch_stats(&self) -> FetchStats {
        self.shared().fetch_stats.snapshot()
    }

    /// The client instance id a broker gave this consumer for its metrics push (KIP-714; Java's
    /// `clientInstanceId`), once one did: `None` with `enable.metrics.push=false`, against
    /// brokers without a client metrics receiver, and before the first subscription.
    pub fn client_instance_id(&self) -> Option<mooring_wire::primitives::Uuid> {
        self.shared().metrics_push.instance_id()
    }

    /// How many metrics pushes brokers accepted (the terminating one included).
    pub fn metrics_pushes(&self) -> u64 {
        self.shared().metrics_push.pushes()
    }

    /// The next offset to fetch of an assigned partition, once known.
    pub fn position(&self, partition: &TopicPartition) -> Option<i64> {
        self.shared().subs().position(partition).map(|p| p.offset)
    }

    /// The last committed offset known for an assigned partition.
    pub fn committed(&self, partition: &TopicPartition) -> Option<i64> {
        self.shared()
            .subs()
            .partition(partition)
            .and_then(|s| s.committed().map(|c| c.offset))
    }

    /// Moves the position of an assigned partition; the next fetch starts there. Records fetched
    /// before and not yet started are dropped when going backwards.
    pub fn seek(&self, partition: &TopicPartition, offset: i64) -> Result<(), ConsumerError> {
        self.shared().subs().seek(partition, offset)?;
        self.shared().wake();
        Ok(())
    }

    /// Moves these partitions (all assigned ones when empty) to the log start.
    pub fn seek_to_beginning(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
    ) -> Result<(), ConsumerError> {
        self.shared().subs().seek_to_beginning(partitions)?;
        self.shared().wake();
        Ok(())
    }

    /// Moves these partitions (all assigned ones when empty) to the log end.
    pub fn seek_to_end(
        &self,
        partitions: impl IntoIterator<Item = TopicPartition>,
    ) -> Result<(), ConsumerError> {
        self.shared().subs().seek_to_end(partitions)?;
        self.shared().wake();
        Ok(())
    }

    /// Commits, and waits for, the offsets of every record finished so far (never past an
    /// unfinished one) in the partitions this member owns, within `default.api.timeout.ms` (then
    /// it fails with `DeadlineExceeded`).
    pub async fn commit(&self) -> Result<(), ConsumerError> {
        let running = self
            .inner
            .running()
            .ok_or(ConsumerError::Running("the consumer is not running"))?;
        let member = running.member.ok_or(ConsumerError::NoGroup("commit"))?;
        if self.shared().subs().mode() == SubscriptionMode::ManualAssign {
            return Err(ConsumerError::NoGroup("commit with manual assignment"));
        }
        commit_offsets(
            self.shared(),
            &member,
            &self.inner.commits,
            running.engine.committable(),
            self.shared().config.client.default_api_timeout,
        )
        .await?;
        Ok(())
    }

    /// Starts a commit (as [`commit`](Self::commit)) without waiting; await the handle for its
    /// result, or drop it.
    pub fn commit_async(&self) -> tokio::task::JoinHandle<Result<(), ConsumerError>> {
        let consumer = self.clone();
        tokio::spawn(async move { consumer.commit().await })
    }

    /// A handle that stops the consumer (also on SIGTERM/SIGINT with
    /// [`ShutdownHandle::on_signals`]).
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            target: Arc::clone(&self.inner.shared) as Arc<dyn Stop>,
        }
    }

    /// The telemetry stream (once; later calls return `None`): the member's events, the engine's
    /// and the runtime's, as one [`ConsumerEvent`](crate::ConsumerEvent) enum.
    pub fn events(&self) -> Option<ConsumerEvents> {
        self.inner
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Telemetry events dropped because the stream was full.
    pub fn dropped_events(&self) -> u64 {
        self.shared().events.dropped()
    }

    /// What the telemetry exporter's snapshots read from inside: the shared runtime state and,
    /// while running, the processing engine's metrics.
    pub(crate) fn telemetry_view(
        &self,
    ) -> (Arc<Shared>, Option<crate::processing::ProcessingMetrics>) {
        let metrics = self.inner.running().map(|r| r.engine.metrics());
        (Arc::clone(&self.inner.shared), metrics)
    }

    /// The group member's state (member id, generation or member epoch, assignment, the group
    /// protocol and, under `consumer`, its own state), while running in a group.
    pub fn member_state(&self) -> Option<MemberSnapshot> {
        self.inner
            .running()
            .and_then(|r| r.member)
            .map(|m| m.state())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use super::*;
    use crate::processing::Batch;
    use crate::subscription::SubscriptionError;

    fn consumer_with(protocol: &str) -> Consumer {
        let config = ConsumerConfig::from_properties([
            ("bootstrap.servers", "127.0.0.1:9"),
            ("group.id", "g"),
            ("group.protocol", protocol),
        ])
        .unwrap();
        Consumer::new(config).unwrap()
    }

    /// Under the consumer protocol the pattern goes to the broker as written (RE2/J, which the
    /// `regex` crate does not fully take); under the classic one it is compiled here.
    #[test]
    fn who_matches_a_pattern_follows_the_group_protocol() {
        let quoted = r"\Qorders.\E.*";
        let classic = consumer_with("classic");
        assert!(matches!(
            classic.subscribe_pattern(quoted),
            Err(ConsumerError::Subscription(
                SubscriptionError::InvalidPattern { .. }
            ))
        ));
        classic.subscribe_pattern("orders-.*").unwrap();
        assert!(!classic.shared().subs().pattern_on_broker());

        let consumer = consumer_with("consumer");
        consumer.subscribe_pattern(quoted).unwrap();
        let subs = consumer.shared().subs();
        assert!(subs.pattern_on_broker());
        assert_eq!(subs.pattern(), Some(quoted));
        drop(subs);
        assert!(matches!(
            consumer.subscribe_pattern(""),
            Err(ConsumerError::Subscription(
                SubscriptionError::InvalidPattern { .. }
            ))
        ));
    }

    #[tokio::test]
    async fn run_batch_refuses_an_ordering_other_than_partition_naming_the_key() {
        for ordering in ["key", "none"] {
            let config = ConsumerConfig::from_properties([
                ("bootstrap.servers", "127.0.0.1:9"),
                ("group.id", "g"),
                ("mooring.ordering", ordering),
            ])
            .unwrap();
            let consumer = Consumer::new(config).unwrap();
            consumer.subscribe(["t"]).unwrap();
            let result = consumer
                .run_batch(|_: Batch| async { Ok::<(), String>(()) })
                .await;
            match result {
                Err(ConsumerError::Config { key, message }) => {
                    assert_eq!(key, "mooring.ordering");
                    assert!(message.contains(ordering), "{message}");
                }
                other => panic!("{ordering}: {other:?}"),
            }
        }
    }
}
