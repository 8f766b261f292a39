//! The public share consumer ([`ShareConsumer`]) and what `run` wires together: the share member
//! (on its own client, so heartbeats never queue behind a long-polling ShareFetch), the fetcher,
//! the workers, and the shutdown that ends them in order.
//!
//! What `run` starts lives in a task of its own: dropping the `run` future (a `select!` that took
//! another branch) asks for shutdown, and that task still winds down as a shutdown does (verdicts
//! sent, sessions closed, the member left), within `mooring.shutdown.timeout.ms`.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use mooring_client::Client;
use mooring_group::{GroupHandle, GroupMember, MemberSnapshot, MemberState, RebalanceListener};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinSet;
use tokio::time::{timeout_at, Instant};

use super::config::ShareConsumerConfig;
use super::dispatch::{Handled, Process, Workers};
use super::events::{ShareEvent, ShareEvents};
use super::fetcher::{Input, ShareFetcher};
use super::queue::RecordQueue;
use super::shared::ShareShared;
use super::stats::ShareStats;
use super::stream::{self, ShareRecordStream};
use crate::error::ConsumerError;
use crate::processing::Handler;
use crate::shutdown::{ShutdownHandle, Stop};
use crate::telemetry::fatal::FATAL_EXPORT_WAIT;
use crate::TopicPartition;

struct Inner {
    shared: Arc<ShareShared>,
    events: Mutex<Option<ShareEvents>>,
    /// The member's own client.
    group_client: Arc<Client>,
    topics: Mutex<BTreeSet<String>>,
    /// The member, while `run` runs.
    member: Mutex<Option<GroupHandle<Client>>>,
    started: AtomicBool,
}

/// A share-group consumer (KIP-932): queue semantics. The members of a share group fetch from the
/// same partitions; the broker hands each record to one member under an acquisition lock, and
/// this consumer acknowledges each record on its own: accepted when its handler returns `Ok`,
/// released (delivered again, to any member) or rejected (poison, archived) when it fails.
/// Cheap to clone: clones share the consumer.
///
/// Per-key or per-partition order is **not** a share group's promise: records of one partition
/// are spread over the group's members, and run here on `mooring.concurrency` handlers at once,
/// over all records. Use a consumer group ([`Consumer`](crate::Consumer)) where order matters.
///
/// ```no_run
/// use mooring_consumer::processing::ConsumerRecord;
/// use mooring_consumer::share::{RejectRecord, ShareConsumer, ShareConsumerConfig};
///
/// async fn handle(record: ConsumerRecord) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
///     // Poison (a record no retry can mend) says so; any other error releases the record,
///     // delivered again until the group's share.delivery.count.limit archives it.
///     let order = record.value().ok_or_else(|| RejectRecord::new("no value"))?;
///     println!("{} (delivery {:?})", String::from_utf8_lossy(order), record.delivery_count());
///     Ok(())
/// }
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let config = ShareConsumerConfig::from_properties([
///     ("bootstrap.servers", "localhost:9092"),
///     ("group.id", "order-workers"),
///     ("mooring.concurrency", "64"),
/// ])?;
/// let consumer = ShareConsumer::new(config)?;
/// consumer.subscribe(["orders"])?;
/// consumer.shutdown_handle().on_signals();
/// consumer.run(handle).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ShareConsumer {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ShareConsumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShareConsumer")
            .field("group", &self.inner.shared.config.group.group_id)
            .field("topics", &self.subscription())
            .finish_non_exhaustive()
    }
}

impl ShareConsumer {
    /// A share consumer for `config`. Nothing is sent before [`run`](Self::run).
    pub fn new(config: ShareConsumerConfig) -> Result<ShareConsumer, ConsumerError> {
        let group_client = Arc::new(Client::new(config.client.clone())?);
        let (shared, events) = ShareShared::new(config)?;
        Ok(ShareConsumer {
            inner: Arc::new(Inner {
                shared: Arc::new(shared),
                events: Mutex::new(Some(events)),
                group_client,
                topics: Mutex::new(BTreeSet::new()),
                member: Mutex::new(None),
                started: AtomicBool::new(false),
            }),
        })
    }

    /// Subscribes to these topics (the share group assigns their share-partitions). Calling it
    /// again replaces the set; while running, the member says it in its next heartbeat. An empty
    /// list unsubscribes: the member leaves the group.
    pub fn subscribe<I, S>(&self, topics: I) -> Result<(), ConsumerError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let topics: BTreeSet<String> = topics.into_iter().map(Into::into).collect();
        if let Some(empty) = topics.iter().find(|t| t.trim().is_empty()) {
            return Err(ConsumerError::Config {
                key: "topics".into(),
                message: format!("`{empty}` is not a topic name"),
            });
        }
        *self
            .inner
            .topics
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = topics.clone();
        let member = self
            .inner
            .member
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(member) = member {
            tokio::spawn(async move {
                if let Err(error) = member.subscribe(topics).await {
                    tracing::warn!(%error, "share consumer: resubscribing");
                }
            });
        }
        Ok(())
    }

    /// The topics subscribed to.
    pub fn subscription(&self) -> BTreeSet<String> {
        self.inner
            .topics
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Runs the consumer: joins the share group, acquires records and hands each to `handler`
    /// (`mooring.concurrency` at once), and acknowledges each by its result, until shut down
    /// ([`shutdown_handle`](Self::shutdown_handle)). Returns `Ok(())` after a shutdown, or the
    /// fatal error that stopped it (a broker without share groups:
    /// [`Error::ShareGroupsUnsupported`](mooring_client::Error::ShareGroupsUnsupported); an
    /// authorization refused; ...). Runs once per consumer.
    ///
    /// Shutdown, within `mooring.shutdown.timeout.ms`: fetching stops; running handlers get until
    /// a quarter of the bound is left (past that they are dropped and their records released);
    /// records acquired and not started are released at once, so another member has them without
    /// waiting for their locks; the verdicts go, the share sessions close, the member leaves.
    pub async fn run<H: Handler>(&self, handler: H) -> Result<(), ConsumerError> {
        let policy = self.inner.shared.config.failure_policy;
        self.run_with(Arc::new(Handled { handler, policy })).await
    }

    /// Runs the consumer with the records as a stream of [`ShareDelivery`](super::ShareDelivery)s
    /// instead of a handler: returns the stream and the future to drive (spawn it, or poll it
    /// alongside). Dropping the stream shuts the consumer down.
    pub fn stream(
        &self,
    ) -> (
        ShareRecordStream,
        impl Future<Output = Result<(), ConsumerError>> + Send + 'static,
    ) {
        let config = &self.inner.shared.config;
        let (feed, records) = stream::channel(
            config.concurrency,
            config.acknowledgement_mode,
            self.shutdown_handle(),
        );
        let consumer = self.clone();
        (
            records,
            async move { consumer.run_with(Arc::new(feed)).await },
        )
    }

    /// A handle that stops the consumer (also on SIGTERM/SIGINT with
    /// [`ShutdownHandle::on_signals`]).
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        ShutdownHandle {
            target: Arc::clone(&self.inner.shared) as Arc<dyn Stop>,
        }
    }

    /// The configuration the consumer was made with.
    pub fn config(&self) -> &ShareConsumerConfig {
        &self.inner.shared.config
    }

    /// The consumer's counters: records acquired, accepted, released, rejected, renewals, locks
    /// that ran out before a verdict, delivery counts.
    pub fn stats(&self) -> ShareStats {
        self.inner.shared.counters.snapshot()
    }

    /// The event stream (once; later calls return `None`): the member's events and the
    /// runtime's, as one [`ShareEvent`] enum.
    pub fn events(&self) -> Option<ShareEvents> {
        self.inner
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Events dropped because the event stream was full (or nobody reads it).
    pub fn dropped_events(&self) -> u64 {
        self.inner.shared.events.dropped()
    }

    /// Whether a telemetry exporter delivered the fatal error (the exporter's part).
    pub(crate) fn fatal_delivery(&self) -> &crate::telemetry::fatal::FatalDelivery {
        &self.inner.shared.fatal_delivery
    }

    /// The share member's state while running (`None` before `run` and after it).
    pub fn member_state(&self) -> Option<MemberSnapshot> {
        self.inner
            .member
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(GroupHandle::state)
    }

    async fn run_with<P: Process>(&self, process: Arc<P>) -> Result<(), ConsumerError> {
        if self.inner.started.swap(true, Ordering::SeqCst) {
            return Err(ConsumerError::Running(
                "run was already called on this share consumer",
            ));
        }
        // Dropping this future asks for shutdown; the task winds down all the same.
        struct StopOnDrop(Arc<ShareShared>);
        impl Drop for StopOnDrop {
            fn drop(&mut self) {
                self.0.request_shutdown();
            }
        }
        let _stop = StopOnDrop(Arc::clone(&self.inner.shared));
        let inner = Arc::clone(&self.inner);
        match tokio::spawn(lifecycle(inner, process)).await {
            Ok(result) => result,
            Err(e) => Err(ConsumerError::Running(if e.is_panic() {
                "the share consumer's task panicked"
            } else {
                "the share consumer's task was cancelled"
            })),
        }
    }
}

/// The member's assignment changes, for the fetcher.
struct Assignments {
    inbox: mpsc::UnboundedSender<Input>,
}

impl RebalanceListener for Assignments {
    async fn assigned(&self, partitions: Vec<TopicPartition>) {
        let _ = self.inbox.send(Input::Assigned(partitions));
    }

    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        let _ = self.inbox.send(Input::Revoked(partitions));
    }

    async fn lost(&self, partitions: Vec<TopicPartition>) {
        let _ = self.inbox.send(Input::Revoked(partitions));
    }
}

async fn lifecycle<P: Process>(inner: Arc<Inner>, process: Arc<P>) -> Result<(), ConsumerError> {
    let shared = Arc::clone(&inner.shared);
    let config = &shared.config;
    let (inbox, inbox_rx) = mpsc::unbounded_channel();
    let records = Arc::new(RecordQueue::default());
    let member = GroupMember::spawn(
        Arc::clone(&inner.group_client),
        config.group.clone(),
        Assignments {
            inbox: inbox.clone(),
        },
    )?;
    *inner.member.lock().unwrap_or_else(PoisonError::into_inner) = Some(member.clone());
    let forward = member.take_events().map(|mut group_events| {
        let events = shared.events.clone();
        tokio::spawn(async move {
            while let Some(event) = group_events.recv().await {
                events.send(ShareEvent::Group(event));
            }
        })
    });
    let fetcher = ShareFetcher::new(
        Arc::clone(&shared),
        member.watch_state(),
        inbox_rx,
        Arc::clone(&records),
    );
    let mut fetcher = tokio::spawn(fetcher.run());
    let workers = Arc::new(Workers {
        queue: records,
        verdicts: inbox.clone(),
        stop: shared.shutdown.subscribe(),
    });
    let mut running = JoinSet::new();
    for _ in 0..config.concurrency {
        running.spawn(Arc::clone(&workers).run(Arc::clone(&process)));
    }
    let topics = inner
        .topics
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if topics.is_empty() {
        shared.fail(ConsumerError::NotSubscribed);
    } else if let Err(error) = member.subscribe(topics).await {
        shared.fail(error.into());
    }
    watch(&shared, &member).await;

    // Shutdown: handlers until a quarter of the bound is left, verdicts and sessions until half
    // of what is left then, the member's leave the rest.
    let bound = config.shutdown_timeout;
    let deadline = shared.shutdown_requested_at().unwrap_or_else(Instant::now) + bound;
    let handlers_by = deadline - bound / 4;
    let drained = timeout_at(handlers_by, async {
        while running.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            ?bound,
            "share handlers still running at the shutdown's bound: their records are released"
        );
        running.abort_all();
    }
    let sessions_by = Instant::now() + deadline.saturating_duration_since(Instant::now()) / 2;
    let (done, closed) = oneshot::channel();
    let _ = inbox.send(Input::Close {
        deadline: sessions_by,
        done,
    });
    if timeout_at(sessions_by, closed).await.is_err() {
        tracing::warn!("share sessions not closed in time");
    }
    if timeout_at(sessions_by + Duration::from_millis(100), &mut fetcher)
        .await
        .is_err()
    {
        fetcher.abort();
    }
    let left = deadline.saturating_duration_since(Instant::now());
    if let Err(error) = member.close_within(left).await {
        tracing::warn!(%error, "share member close");
    }
    *inner.member.lock().unwrap_or_else(PoisonError::into_inner) = None;
    drop(member);
    if let Some(forward) = forward {
        // The member's events end with the member: its last ones (the leave) are passed on.
        let _ = tokio::time::timeout(Duration::from_millis(100), forward).await;
    }
    match shared.fatal() {
        Some(error) => {
            // The sidecar should hear of it before the process exits on it, within what the
            // shutdown's bound has left (a second at most).
            let left = deadline.saturating_duration_since(Instant::now());
            shared
                .fatal_delivery
                .wait(left.min(FATAL_EXPORT_WAIT))
                .await;
            Err(error)
        }
        None => Ok(()),
    }
}

/// Waits until shutdown is requested, or the member fails (then the consumer fails with its
/// error).
async fn watch(shared: &ShareShared, member: &GroupHandle<Client>) {
    let mut stop = shared.shutdown.subscribe();
    let mut state = member.watch_state();
    loop {
        let failed = {
            let snapshot = state.borrow_and_update();
            match snapshot.state {
                MemberState::Failed(code) => Some(match &snapshot.failure {
                    Some(failure) => ConsumerError::from((**failure).clone()),
                    None => ConsumerError::from(mooring_client::Error::Broker {
                        api: "ShareGroupHeartbeat",
                        code,
                        message: Some("the share member stopped".into()),
                    }),
                }),
                _ => None,
            }
        };
        if let Some(error) = failed {
            shared.fail(error);
            return;
        }
        tokio::select! {
            _ = stop.wait_for(|s| *s) => return,
            changed = state.changed() => if changed.is_err() { return },
        }
    }
}
