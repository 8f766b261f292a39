//! The fetcher: moves records from each partition's leader to the processing engine.
//!
//! - **Who is fetched**: only [`SubscriptionState::fetchable_partitions`] — assigned, with a
//!   position, paused neither by the user nor by backpressure (the engine's level-triggered
//!   `backpressured_partitions`, synced every round).
//! - **Where**: partitions are grouped by their leader from metadata; at most one Fetch is in
//!   flight per broker. The fetcher has its own `Client` (own connections): the broker answers a
//!   connection's requests in order, and a long-polling Fetch must not hold up heartbeats.
//! - **Sessions** (KIP-227): one incremental fetch session per broker (`session.rs`); topic ids from
//!   Fetch v13 (`request.rs`).
//! - **Limits**: `fetch.min.bytes`, `fetch.max.wait.ms`, `fetch.max.bytes`,
//!   `max.partition.fetch.bytes`. Prefetching is bounded in bytes: one response per broker
//!   (≤ `fetch.max.bytes`) is being handled at a time, and the engine's per-partition buffers are
//!   bounded (records that do not fit are handed back and fetched again later). So that a
//!   response rarely brings more than the engine takes, each partition asks for at most what its
//!   buffer surely has room for after a backpressure pause ends (`mooring.buffer.max.*` minus
//!   the resume levels; records counted at the wire size last seen for the partition), never more
//!   than `max.partition.fetch.bytes`: fetching 1 MiB into a buffer with room for half of it
//!   fetched every other record twice and kept more response bytes alive.
//! - **Positions**: records go to the engine with `submit`; the position moves past the last
//!   record accepted, or to the first record handed back. A response whose fetch offset is no
//!   longer the partition's position (a seek, a revoke) is dropped. Records of a partition paused
//!   while the fetch was in flight are dropped too (fetched again after `resume`).
//! - **Errors**: NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, unknown topic
//!   or id, leader or replica not available, storage errors → metadata refresh and a full fetch
//!   after `retry.backoff.ms` (KIP-320: the current leader epoch travels in every request);
//!   OFFSET_OUT_OF_RANGE → reset by `auto.offset.reset` (`none`: a typed error);
//!   FETCH_SESSION_ID_NOT_FOUND / INVALID_FETCH_SESSION_EPOCH → a new session.
//! - **Isolation**: `read_committed` fetches up to the last stable offset and drops records of
//!   aborted transactions; control batches are never shown (`records.rs`).
//! - **Offset initialisation** for new partitions and pending resets (`positions.rs`).
//!
//! [`SubscriptionState::fetchable_partitions`]: crate::subscription::SubscriptionState::fetchable_partitions

pub(crate) mod positions;
pub(crate) mod records;
pub(crate) mod request;
pub(crate) mod session;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use mooring_coordinator::group::GroupHandle;
use mooring_coordinator::{Client, Error as ClientError};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::fetch::{FetchRequest, FetchResponse, PartitionData};
use mooring_wire::primitives::Uuid;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::config::IsolationLevel;
use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::processing::{Handler, ProcessingEngine, SubmitError};
use crate::shared::Shared;
use crate::subscription::{FetchPosition, OffsetResetStrategy, PartitionFetchInfo};
use crate::TopicPartition;
use session::{FetchSession, PartitionRequest};

/// How often the loop looks again when nothing wakes it (pause/backpressure are level-triggered).
const IDLE_TICK: Duration = Duration::from_millis(100);

/// Per-partition fetch sizes below `max.partition.fetch.bytes` are multiples of this, so the
/// limit stays the same from one request to the next (a change re-lists the partition in the
/// fetch session).
const FETCH_SIZE_GRAIN: usize = 64 * 1024;

/// One finished Fetch.
struct Outcome {
    node: i32,
    /// Topic ids sent, to map an answer's ids back to names (v13+).
    names: HashMap<Uuid, String>,
    result: Result<FetchResponse, ClientError>,
}

/// The fetch loop; runs in the task that called `Consumer::run`.
pub(crate) struct Fetcher<H: Handler> {
    shared: Arc<Shared>,
    engine: ProcessingEngine<H>,
    member: Option<GroupHandle<Client>>,
    sessions: HashMap<i32, FetchSession>,
    in_flight: JoinSet<Outcome>,
    busy: BTreeSet<i32>,
    backoff_until: HashMap<i32, Instant>,
    refresh_metadata: bool,
    refresh_retry_at: Option<Instant>,
    positions_retry_at: Option<Instant>,
    positions_task: Option<tokio::task::JoinHandle<Result<(), ConsumerError>>>,
    /// Wire bytes per record in the partition's last answer with records.
    record_sizes: HashMap<TopicPartition, usize>,
}

impl<H: Handler> Fetcher<H> {
    pub(crate) fn new(
        shared: Arc<Shared>,
        engine: ProcessingEngine<H>,
        member: Option<GroupHandle<Client>>,
    ) -> Self {
        Fetcher {
            shared,
            engine,
            member,
            sessions: HashMap::new(),
            in_flight: JoinSet::new(),
            busy: BTreeSet::new(),
            backoff_until: HashMap::new(),
            refresh_metadata: true,
            refresh_retry_at: None,
            positions_retry_at: None,
            positions_task: None,
            record_sizes: HashMap::new(),
        }
    }

    /// The partition's `partition_max_bytes`: `max.partition.fetch.bytes`, lowered to the room
    /// its engine buffer has after a backpressure pause ends (in bytes, and in records at the
    /// partition's last seen record size), in multiples of [`FETCH_SIZE_GRAIN`]. The broker
    /// still sends a first batch larger than the limit whole (KIP-74).
    fn partition_max_bytes(&self, tp: &TopicPartition) -> i32 {
        let configured = usize::try_from(self.shared.config.fetch.max_partition_bytes).unwrap_or(0);
        let buffer = &self.shared.config.processing;
        let mut room = buffer
            .max_buffered_bytes
            .saturating_sub(buffer.resume_buffered_bytes);
        if let Some(size) = self.record_sizes.get(tp) {
            let records = buffer
                .max_buffered_records
                .saturating_sub(buffer.resume_buffered_records);
            room = room.min(records.saturating_mul(*size));
        }
        let limit = (room / FETCH_SIZE_GRAIN * FETCH_SIZE_GRAIN)
            .max(FETCH_SIZE_GRAIN)
            .min(configured);
        i32::try_from(limit).unwrap_or(i32::MAX)
    }

    fn retry_backoff(&self) -> Duration {
        self.shared.config.client.retry_backoff
    }

    /// Fetches until shutdown is requested (or a fatal error requests it). In-flight fetches are
    /// abandoned on return: their records were never handed out.
    pub(crate) async fn run(mut self) {
        let mut shutdown = self.shared.shutdown.subscribe();
        while !self.shared.is_shutting_down() {
            self.shared.loop_tick();
            self.initialize_positions();
            if self.refresh_metadata {
                self.refresh().await;
            }
            self.send_fetches();
            let wake = self.shared.wake.notified();
            tokio::select! {
                Some(joined) = self.in_flight.join_next(), if !self.in_flight.is_empty() => {
                    match joined {
                        Ok(outcome) => self.handle(outcome),
                        Err(e) => {
                            tracing::error!(error = %e, "fetch task failed");
                            // The node is unknown; free every node with nothing in flight.
                            if self.in_flight.is_empty() {
                                self.busy.clear();
                            }
                        }
                    }
                }
                joined = async {
                    match self.positions_task.as_mut() {
                        Some(task) => task.await,
                        None => std::future::pending().await,
                    }
                } => {
                    self.positions_task = None;
                    match joined {
                        Ok(result) => self.positions_done(result),
                        Err(e) => tracing::error!(error = %e, "offset initialisation task failed"),
                    }
                }
                _ = wake => {}
                _ = shutdown.changed() => {}
                _ = tokio::time::sleep(IDLE_TICK) => {}
            }
        }
        self.in_flight.abort_all();
        if let Some(task) = self.positions_task.take() {
            task.abort();
        }
    }

    /// Starts offset initialisation in its own task when partitions need it, so a slow look-up
    /// (a leader not yet elected, a coordinator moving) never holds up fetching the others.
    fn initialize_positions(&mut self) {
        if self.positions_task.is_some()
            || self.positions_retry_at.is_some_and(|t| Instant::now() < t)
            || !positions::needed(&self.shared)
        {
            return;
        }
        let shared = Arc::clone(&self.shared);
        let member = self.member.clone();
        self.positions_task = Some(tokio::spawn(async move {
            positions::initialize(&shared, member.as_ref()).await
        }));
    }

    fn positions_done(&mut self, result: Result<(), ConsumerError>) {
        match result {
            Ok(()) => self.positions_retry_at = None,
            Err(e @ ConsumerError::NoOffsetForPartition { .. }) => self.shared.fail(e),
            Err(e) => {
                tracing::warn!(error = %e, "offset initialisation failed; retrying");
                self.refresh_metadata = true;
                self.positions_retry_at = Some(Instant::now() + self.retry_backoff());
            }
        }
        self.shared.wake();
    }

    async fn refresh(&mut self) {
        if self.refresh_retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        let topics: Vec<String> = self
            .shared
            .subs()
            .assigned_partitions()
            .into_iter()
            .map(|tp| tp.topic)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if topics.is_empty() {
            return;
        }
        match self.shared.fetch_client.refresh_topics(&topics).await {
            Ok(_) => {
                self.refresh_metadata = false;
                self.refresh_retry_at = None;
            }
            Err(e) => {
                tracing::warn!(error = %e, "metadata refresh for fetching failed");
                self.refresh_retry_at = Some(Instant::now() + self.retry_backoff());
            }
        }
    }

    /// Plans and sends one Fetch to every broker that leads a fetchable partition and has none in
    /// flight.
    fn send_fetches(&mut self) {
        let fetchable = {
            let mut subs = self.shared.subs();
            subs.sync_backpressure(&self.engine.backpressured_partitions());
            subs.fetchable_partitions()
                .into_iter()
                .filter_map(|tp| subs.position(&tp).map(|p| (tp, p)))
                .collect::<Vec<_>>()
        };
        let metadata = self.shared.fetch_client.cached_metadata();
        let mut by_leader: BTreeMap<i32, BTreeMap<TopicPartition, PartitionRequest>> =
            BTreeMap::new();
        for (tp, position) in fetchable {
            match metadata.leader_for(&tp.topic, tp.partition) {
                Some((leader, epoch)) if leader >= 0 => {
                    let max_bytes = self.partition_max_bytes(&tp);
                    by_leader.entry(leader).or_default().insert(
                        tp,
                        PartitionRequest {
                            fetch_offset: position.offset,
                            current_leader_epoch: epoch,
                            max_bytes,
                        },
                    );
                }
                _ => self.refresh_metadata = true,
            }
        }
        // Brokers that lead nothing fetchable any more: their session partitions are forgotten
        // with the next request there; meanwhile the broker may still answer for them, and those
        // answers are dropped (position or assignment check).
        let now = Instant::now();
        for (node, wanted) in by_leader {
            if self.busy.contains(&node) || self.backoff_until.get(&node).is_some_and(|t| now < *t)
            {
                continue;
            }
            let session = self.sessions.entry(node).or_default();
            let plan = session.build(wanted);
            // Every partition of the session, not only those listed: an incremental answer
            // carries any of them (by topic id from v13).
            let ids: BTreeMap<String, Uuid> = plan
                .session
                .keys()
                .chain(&plan.to_forget)
                .filter_map(|tp| {
                    metadata
                        .topics
                        .get(&tp.topic)
                        .map(|t| (tp.topic.clone(), t.id))
                })
                .collect();
            let names: HashMap<Uuid, String> =
                ids.iter().map(|(name, id)| (*id, name.clone())).collect();
            let client = self.shared.fetch_client.clone();
            let config = self.shared.config.fetch.clone();
            let rack = self
                .shared
                .config
                .client
                .client_rack
                .clone()
                .unwrap_or_default();
            self.busy.insert(node);
            self.in_flight.spawn(async move {
                let result = async {
                    let conn = client.connection(node).await?;
                    let version = conn.version::<FetchRequest>()?;
                    let request = request::build(version, &config, &plan, &ids, &rack).map_err(
                        |missing| ClientError::Broker {
                            api: "Fetch",
                            code: ErrorCode::UnknownTopicId,
                            message: Some(format!("no topic id known for {}", missing.0)),
                        },
                    )?;
                    conn.call(|_| request).await
                }
                .await;
                Outcome {
                    node,
                    names,
                    result,
                }
            });
        }
    }

    fn node_failed(&mut self, node: i32, error: String, partition: Option<TopicPartition>) {
        if let Some(session) = self.sessions.get_mut(&node) {
            session.reset();
        }
        self.refresh_metadata = true;
        self.backoff_until
            .insert(node, Instant::now() + self.retry_backoff());
        self.shared.emit(ConsumerEvent::FetchError {
            node,
            partition,
            error,
        });
    }

    fn handle(&mut self, outcome: Outcome) {
        let node = outcome.node;
        self.busy.remove(&node);
        let response = match outcome.result {
            Ok(r) => r,
            Err(e) => {
                tracing::debug!(node, error = %e, "fetch failed");
                self.node_failed(node, e.to_string(), None);
                return;
            }
        };
        let code = ErrorCode::from(response.error_code);
        if code != ErrorCode::None {
            tracing::debug!(node, %code, "fetch session error");
            if let Some(session) = self.sessions.get_mut(&node) {
                session.reset();
            }
            if !matches!(
                code,
                ErrorCode::FetchSessionIdNotFound | ErrorCode::InvalidFetchSessionEpoch
            ) {
                self.node_failed(node, code.to_string(), None);
            }
            return;
        }
        let Some(session) = self.sessions.get_mut(&node) else {
            return;
        };
        // What each partition's records start from: the offset the broker holds for it, i.e. the
        // one last sent (incremental answers may cover partitions this request did not list).
        let mut answers: Vec<(TopicPartition, PartitionRequest, PartitionData)> = Vec::new();
        for topic in response.responses {
            let name = if topic.topic.is_empty() {
                match outcome.names.get(&topic.topic_id) {
                    Some(name) => name.clone(),
                    None => continue,
                }
            } else {
                topic.topic
            };
            for data in topic.partitions {
                let tp = TopicPartition::new(name.clone(), data.partition_index);
                if let Some(sent) = session.sent(&tp) {
                    answers.push((tp, sent, data));
                }
            }
        }
        session.handle_response(response.session_id);
        for (tp, sent, data) in answers {
            self.handle_partition(node, tp, sent, data);
        }
    }

    fn handle_partition(
        &mut self,
        node: i32,
        tp: TopicPartition,
        sent: PartitionRequest,
        data: PartitionData,
    ) {
        let code = ErrorCode::from(data.error_code);
        match code {
            ErrorCode::None => self.handle_records(tp, sent, data),
            ErrorCode::OffsetOutOfRange => {
                let mut subs = self.shared.subs();
                if subs.position(&tp).map(|p| p.offset) != Some(sent.fetch_offset) {
                    return;
                }
                let result = match subs.default_reset_strategy() {
                    OffsetResetStrategy::Earliest => subs.seek_to_beginning([tp.clone()]),
                    OffsetResetStrategy::Latest => subs.seek_to_end([tp.clone()]),
                    OffsetResetStrategy::None => {
                        drop(subs);
                        self.shared.fail(ConsumerError::OffsetOutOfRange {
                            partitions: vec![tp],
                        });
                        return;
                    }
                };
                if let Err(e) = result {
                    tracing::debug!(partition = %tp, error = %e, "reset after OFFSET_OUT_OF_RANGE");
                }
            }
            ErrorCode::NotLeaderOrFollower
            | ErrorCode::FencedLeaderEpoch
            | ErrorCode::UnknownLeaderEpoch
            | ErrorCode::UnknownTopicOrPartition
            | ErrorCode::UnknownTopicId
            | ErrorCode::InconsistentTopicId
            | ErrorCode::FetchSessionTopicIdError
            | ErrorCode::LeaderNotAvailable
            | ErrorCode::ReplicaNotAvailable
            | ErrorCode::KafkaStorageError
            | ErrorCode::OffsetNotAvailable => {
                tracing::debug!(partition = %tp, %code, "fetch: leader moved or not ready");
                self.node_failed(node, code.to_string(), Some(tp));
            }
            other => {
                tracing::warn!(partition = %tp, code = %other, "fetch: partition error");
                self.node_failed(node, other.to_string(), Some(tp));
            }
        }
    }

    fn handle_records(&mut self, tp: TopicPartition, sent: PartitionRequest, data: PartitionData) {
        let position = {
            let mut subs = self.shared.subs();
            subs.update_fetch_info(
                &tp,
                PartitionFetchInfo {
                    high_watermark: Some(data.high_watermark).filter(|o| *o >= 0),
                    last_stable_offset: Some(data.last_stable_offset).filter(|o| *o >= 0),
                    log_start_offset: Some(data.log_start_offset).filter(|o| *o >= 0),
                },
            );
            match subs.position(&tp) {
                // Stale (seek, revoke) or paused meanwhile: drop; fetched again from the position.
                Some(p) if p.offset == sent.fetch_offset && subs.is_fetchable(&tp) => p,
                _ => return,
            }
        };
        let Some(bytes) = data.records.filter(|b| !b.is_empty()) else {
            return;
        };
        let wire_bytes = bytes.len();
        let aborted = match self.shared.config.fetch.isolation_level {
            IsolationLevel::ReadCommitted => Some(data.aborted_transactions.unwrap_or_default()),
            IsolationLevel::ReadUncommitted => None,
        };
        let extracted = match records::extract(
            bytes,
            &tp.topic,
            tp.partition,
            position.offset,
            aborted.as_deref(),
        ) {
            Ok(e) => e,
            Err(source) => {
                self.shared.fail(ConsumerError::CorruptRecords {
                    partition: tp,
                    source: Box::new(source),
                });
                return;
            }
        };
        let mut next = FetchPosition {
            offset: extracted.next_offset,
            leader_epoch: extracted.leader_epoch.or(position.leader_epoch),
        };
        if !extracted.records.is_empty() {
            self.record_sizes
                .insert(tp.clone(), wire_bytes.div_ceil(extracted.records.len()));
            match self.submit(&tp, extracted.records) {
                Some(Some(first_rejected)) => {
                    next = FetchPosition {
                        offset: first_rejected,
                        leader_epoch: position.leader_epoch,
                    }
                }
                Some(None) => {}
                None => return,
            }
        }
        if next.offset == position.offset {
            return;
        }
        let mut subs = self.shared.subs();
        if subs.position(&tp) == Some(position) {
            if let Err(e) = subs.seek_to_position(&tp, next) {
                tracing::debug!(partition = %tp, error = %e, "position update");
            }
        }
    }

    /// Hands records to the engine. `Some(first rejected offset)`, `Some(None)` when all were
    /// accepted, `None` when nothing was taken (the position stays and they are fetched again).
    fn submit(
        &self,
        tp: &TopicPartition,
        records: Vec<mooring_wire::records::Record>,
    ) -> Option<Option<i64>> {
        match self.engine.submit(tp, records) {
            Ok(submitted) => Some(submitted.rejected.first().map(|r| r.offset)),
            Err(SubmitError::OffsetNotIncreasing { .. }) => {
                // A seek backwards: the engine starts the partition afresh, and the records are
                // fetched again from the position.
                let discarded = self.engine.drop_partitions([tp.clone()]);
                tracing::debug!(partition = %tp, discarded, "seek backwards: partition restarted");
                self.engine.add_partitions([tp.clone()]);
                None
            }
            Err(e) => {
                tracing::debug!(partition = %tp, error = %e, "records not submitted");
                None
            }
        }
    }
}
