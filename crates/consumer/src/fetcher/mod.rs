//! The fetcher: moves records from each partition's leader (or the replica it names) to the
//! processing engine.
//!
//! - **Who is fetched**: only [`SubscriptionState::fetchable_partitions`] — assigned, with a
//!   position, paused neither by the user nor by the engine (its level-triggered
//!   `unfetchable_partitions`, synced whenever the loop plans, which the engine wakes on every
//!   change: backpressure, and partitions a revoke is stopping, whose records it would refuse).
//!   The loop plans only when woken by a change or a deadline (`wakeups.rs`), not on a
//!   periodic tick.
//! - **Where**: partitions are grouped by their leader from metadata, or by the replica their
//!   leader named for `client.rack` while its lease lasts (KIP-392, `replica.rs`, with its own
//!   reaction table); at most one Fetch is in flight per broker. The fetcher has its own
//!   `Client` (own connections): the broker answers a connection's requests in order, and a
//!   long-polling Fetch must not hold up heartbeats.
//! - **Sessions** (KIP-227): one incremental fetch session per broker (`session.rs`); topic ids from
//!   Fetch v13 (`request.rs`).
//! - **Limits**: `fetch.min.bytes`, `fetch.max.wait.ms`, `fetch.max.bytes`,
//!   `max.partition.fetch.bytes`. All record data held is bounded by `mooring.memory.max.bytes`
//!   (the fetch client's `FrameMemory` counts every response frame and decompressed batch until
//!   its last record is dropped): a request's `max_bytes` is the room left beside the frames
//!   alive and the requests in flight, at most half the budget (one answer is handled while the
//!   next is fetched) or its share among more than two brokers to fetch from, and no request
//!   goes while the budget is full (a release wakes the loop); brokers take turns for the room
//!   (`sizes.rs`). A compressed batch is decompressed only while the budget has room (an
//!   answer's first one also when the rest held leaves room), the rest of the answer fetched
//!   again once there is: a few KiB that inflate to 64 MiB a batch never hold more than the
//!   budget plus one batch per extraction worker (`records::Inflation`). Within it the engine's
//!   per-partition buffers are bounded (records that do not fit are handed back and fetched again
//!   later). So that a
//!   response rarely brings more than the engine takes, each partition asks for at most what its
//!   buffer surely has room for after a backpressure pause ends (`mooring.buffer.max.*` minus
//!   the resume levels; records counted at the wire size last seen for the partition), never more
//!   than `max.partition.fetch.bytes`: fetching 1 MiB into a buffer with room for half of it
//!   fetched every other record twice and kept more response bytes alive.
//! - **Extraction** (CRC, decompression, record decoding) of an answer of 64 KiB or more runs off
//!   the loop, its partitions side by side on a thread per core (`extracting.rs`), each handed
//!   on as soon as it is extracted; its broker gets the next request once every partition of the
//!   answer was. Records whose partition was sought, revoked or paused meanwhile are dropped, as
//!   a stale answer is.
//! - **Positions**: records go to the engine with `submit`; the position moves past the last
//!   record accepted, or to the first record handed back. A response whose fetch offset is no
//!   longer the partition's position (a seek, a revoke) is dropped. Records of a partition paused
//!   while the fetch was in flight are dropped too (fetched again after `resume`).
//! - **Errors**: one partition's error stays that partition's (`partition_errors.rs`; table
//!   below). A partition in back-off is left out of the next requests, so the incremental session
//!   forgets it (the broker would go on fetching a partition merely left unlisted) and lists it
//!   anew when the back-off ends; the broker's other partitions are fetched at once. A request
//!   this client cannot encode ends `run` with the error (it would fail the same way on every
//!   retry; see `ConsumerError::is_fatal`).
//! - **Isolation**: `read_committed` fetches up to the last stable offset and drops records of
//!   aborted transactions; control batches are never shown (`records.rs`).
//! - **Offset initialisation** for new partitions and pending resets (`positions.rs`).
//!
//! # Error table
//!
//! Reactions to a Fetch's errors, as Java's fetcher has them (its `poll` raises what is fatal
//! here; ours ends `run` with the typed [`ConsumerError`], said once). "Back off the partition":
//! not fetched for `retry.backoff.ms`, doubling with each failure in a row up to
//! `retry.backoff.max.ms`, reset by an answer read without error; a `FetchError` event names the
//! partition.
//!
//! | scope | error | reaction |
//! |---|---|---|
//! | request | transport error (connect, I/O, timeout, decode), any top-level error code but the two below | back off the broker for `retry.backoff.ms`; its session starts over; metadata refresh; `FetchError` event without a partition |
//! | request | FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH | the session starts over with a full request, at once |
//! | partition | NONE | records to the engine; back-off and corrupt streak end |
//! | partition | NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH (KIP-320: the leader epoch travels in every request), LEADER_NOT_AVAILABLE, REPLICA_NOT_AVAILABLE, KAFKA_STORAGE_ERROR, OFFSET_NOT_AVAILABLE, FETCH_SESSION_TOPIC_ID_ERROR, UNKNOWN_SERVER_ERROR, a code this client does not know, any other retriable code | back off the partition; metadata refresh |
//! | partition | leader unknown in metadata (no fetch sent) | back off the partition; metadata refresh |
//! | partition | UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION, INCONSISTENT_TOPIC_ID | back off the partition; the broker's session starts over (it may name the topic by a stale id); metadata refresh. Topic still listed: retried as above |
//! | topic | an assigned topic not listed by a refresh (deleted, or never created) | `TopicUnavailable` event, once; its partitions are not fetched. In a group the member rejoins on the metadata change and the partitions are revoked; assigned by hand they stay assigned, the topic is looked up again every `metadata.max.age.ms`, and fetched again once listed |
//! | partition | OFFSET_OUT_OF_RANGE | reset by `auto.offset.reset`; `none`: [`ConsumerError::OffsetOutOfRange`] |
//! | partition | any error but TOPIC_AUTHORIZATION_FAILED from a replica the leader named (not the leader) | back to the leader at once, which decides: never a reset, never a back-off (`replica.rs`) |
//! | partition | a batch failing its CRC-32C or its decoding, or whose offsets cannot be right (before the position, out of order, at or past the high watermark: a base offset, outside the CRC, changed in flight) | fetched again from the same offset after a back-off (a byte flipped in flight); the third fresh fetch in a row failing at that offset: [`ConsumerError::CorruptRecords`] naming partition and offset; no record is ever skipped |
//! | partition, topic | TOPIC_AUTHORIZATION_FAILED (in Fetch, in the refreshed metadata, in the ListOffsets or OffsetFetch of offset initialisation) | [`ConsumerError::TopicAuthorizationFailed`] naming every such topic of the answer and the principal: fatal, `run` ends with it, said once |
//! | request | authentication or TLS refused ([`Error::Authentication`](mooring_client::Error::Authentication), [`Error::Tls`](mooring_client::Error::Tls): the client connects no more) | fatal: `run` ends with it, said once |
//! | partition | any other, not retriable (UNSUPPORTED_COMPRESSION_TYPE, ...) | fetched again from the same offset after a back-off (Kafka checksums no error code: one may be a byte flipped in flight); the third fresh fetch in a row at that offset without a readable answer: [`ConsumerError::FetchFailed`] naming partition and code |
//!
//! [`SubscriptionState::fetchable_partitions`]: crate::subscription::SubscriptionState::fetchable_partitions

mod extracting;
mod last_plan;
mod partition_errors;
pub(crate) mod positions;
pub(crate) mod records;
mod refresh;
mod replica;
pub(crate) mod request;
pub(crate) mod session;
mod sizes;
pub(crate) mod stats;
#[cfg(test)]
mod tests;
mod wakeups;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mooring_client::metadata::Metadata;
use mooring_client::{Client, Error as ClientError};
use mooring_group::GroupHandle;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::fetch::{FetchRequest, FetchResponse, PartitionData};
use mooring_wire::primitives::Uuid;
use mooring_wire::records::RecordsError;
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::config::IsolationLevel;
use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::processing::{Dispatch, ProcessingEngine, SubmitError};
use crate::shared::Shared;
use crate::subscription::{FetchPosition, OffsetResetStrategy, PartitionFetchInfo};
use crate::TopicPartition;
use extracting::{Done, Job};
use last_plan::LastPlan;
use partition_errors::{PartitionErrors, CORRUPT_FETCHES};
use records::Inflation;
use replica::ReadReplicas;
use session::{FetchSession, PartitionRequest, SessionRequest};
pub use stats::{BrokerFetchStats, FetchStats};

/// Why a partition's answer could not be read.
enum Unreadable {
    /// A batch failed its CRC or its decoding, or its offsets cannot be right.
    Records(RecordsError),
    /// A code Fetch cannot retry.
    Code(ErrorCode),
}

/// How far the engine took one partition's records.
enum Handed {
    /// Every record.
    All,
    /// Those before this offset, the first the partition's buffer had no room for: the position
    /// moves there.
    Until(i64),
    /// None: the position stays and the records are fetched again.
    None,
}

/// One finished Fetch.
struct FinishedFetch {
    node: i32,
    /// Topic ids sent, to map an answer's ids back to names (v13+).
    names: HashMap<Uuid, String>,
    /// The partitions fetched there from a replica other than their leader (KIP-392): only a
    /// leader's errors are that partition's; a replica's send it back to its leader.
    from_replica: BTreeSet<TopicPartition>,
    result: Result<FetchResponse, ClientError>,
}

/// The fetch loop; runs in the task that called `Consumer::run`.
pub(crate) struct Fetcher<H: Dispatch> {
    shared: Arc<Shared>,
    engine: ProcessingEngine<H>,
    member: Option<GroupHandle<Client>>,
    sessions: HashMap<i32, FetchSession>,
    in_flight: JoinSet<FinishedFetch>,
    /// By broker, the partitions of its answer being extracted off the loop: it gets no new
    /// request until each was handed on (the positions move then).
    extracting: HashMap<i32, usize>,
    /// Where the extraction threads send each partition's extraction, by broker.
    extracted_tx: mpsc::UnboundedSender<(i32, Done)>,
    extracted_rx: mpsc::UnboundedReceiver<(i32, Done)>,
    /// Record bytes from which an answer is extracted off the loop.
    off_loop_from: usize,
    /// Brokers with a Fetch in flight or its answer being extracted.
    busy: BTreeSet<i32>,
    /// Brokers whose last request failed as a whole (transport, top-level error).
    backoff_until: HashMap<i32, Instant>,
    /// Partitions backed off, corrupt batches, unavailable topics.
    errors: PartitionErrors,
    /// The replica each partition is read from when not its leader (`replica.rs`).
    replicas: ReadReplicas,
    refresh_metadata: bool,
    refresh_retry_at: Option<Instant>,
    positions_retry_at: Option<Instant>,
    positions_task: Option<tokio::task::JoinHandle<Result<(), ConsumerError>>>,
    /// Wire bytes per record in the partition's last answer with records.
    record_sizes: HashMap<TopicPartition, usize>,
    /// The `fetch.max.bytes` of each request in flight, by broker: counted against the memory
    /// budget until its answer is in (and counted there).
    reserved: HashMap<i32, usize>,
    /// The last round left a broker unfetched for want of memory: a release wakes the loop.
    memory_full: bool,
    /// The broker the last request went to: the next round's turns start after it.
    last_admitted: i32,
    /// How much recent answers held while extracted, per byte of their wire size: their frame
    /// and, beside it until the last batch is extracted, their decompressed batches (1: not
    /// compressed). Requests ask for the budget's room divided by it, so that an answer fits the
    /// budget whole; a batch the budget has no room for is left, and fetched again later.
    expansion: f64,
    /// What the last plan was made from, to skip planning on a deadline that changed nothing.
    last_plan: Option<LastPlan>,
}

impl<H: Dispatch> Drop for Fetcher<H> {
    /// Dropped with `run` midway: the fetches in flight end with their `JoinSet`, and the offset
    /// look-up (which holds the group member) must not outlive the fetcher either.
    fn drop(&mut self) {
        if let Some(task) = self.positions_task.take() {
            task.abort();
        }
    }
}

impl<H: Dispatch> Fetcher<H> {
    pub(crate) fn new(
        shared: Arc<Shared>,
        engine: ProcessingEngine<H>,
        member: Option<GroupHandle<Client>>,
    ) -> Self {
        let errors = PartitionErrors::new(
            shared.config.client.retry_backoff,
            shared.config.client.retry_backoff_max,
        );
        let client = &shared.config.client;
        let replicas = ReadReplicas::new(
            client.metadata_max_age,
            client.retry_backoff,
            client.retry_backoff_max,
        );
        let (extracted_tx, extracted_rx) = mpsc::unbounded_channel();
        Fetcher {
            shared,
            engine,
            member,
            sessions: HashMap::new(),
            in_flight: JoinSet::new(),
            extracting: HashMap::new(),
            extracted_tx,
            extracted_rx,
            off_loop_from: extracting::OFF_LOOP_FROM,
            busy: BTreeSet::new(),
            backoff_until: HashMap::new(),
            errors,
            replicas,
            refresh_metadata: true,
            refresh_retry_at: None,
            positions_retry_at: None,
            positions_task: None,
            record_sizes: HashMap::new(),
            reserved: HashMap::new(),
            memory_full: false,
            last_admitted: -1,
            expansion: 1.0,
            last_plan: None,
        }
    }

    fn retry_backoff(&self) -> Duration {
        self.shared.config.client.retry_backoff
    }

    /// Fetches until shutdown is requested (or a fatal error requests it). In-flight fetches are
    /// abandoned on return: their records were never handed out.
    pub(crate) async fn run(mut self) {
        let mut shutdown = self.shared.shutdown.subscribe();
        // Whether something else than a deadline (`wakeups.rs`) ran this iteration.
        let mut woken = true;
        while !self.shared.is_shutting_down() {
            self.shared.loop_tick();
            self.initialize_positions(woken);
            if self.refresh_metadata || self.errors.recheck_due(Instant::now()) {
                self.refresh().await;
            }
            self.send_fetches(woken);
            woken = true;
            let wake = self.shared.wake.notified();
            let backpressure = self.engine.backpressure_changed();
            let due = tokio::time::sleep_until(self.next_deadline(Instant::now()));
            tokio::select! {
                Some(joined) = self.in_flight.join_next(), if !self.in_flight.is_empty() => {
                    match joined {
                        Ok(outcome) => self.handle(outcome),
                        Err(e) => {
                            tracing::error!(error = %e, "fetch task failed");
                            // The node is unknown; free every node with nothing in flight.
                            if self.in_flight.is_empty() {
                                let extracting = &self.extracting;
                                self.busy.retain(|node| extracting.contains_key(node));
                                self.reserved.clear();
                            }
                        }
                    }
                }
                Some((node, done)) = self.extracted_rx.recv(), if !self.extracting.is_empty() => {
                    self.extraction_done(node, done);
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
                _ = backpressure => {}
                _ = self.shared.memory.released(), if self.memory_full => {}
                _ = shutdown.changed() => {}
                () = due => woken = false,
            }
        }
        self.in_flight.abort_all();
        if let Some(task) = self.positions_task.take() {
            task.abort();
        }
    }

    /// Starts offset initialisation in its own task when partitions need it, so a slow look-up
    /// (a leader not yet elected, a coordinator moving) never holds up fetching the others. A
    /// wake by a deadline alone (`woken` false) looks only when a failed look-up's retry is due: a partition
    /// comes to need a position with a wake (assignment, seek to the beginning or end, an answer
    /// out of range), and looking goes over every assigned partition.
    fn initialize_positions(&mut self, woken: bool) {
        if self.positions_task.is_some()
            || (!woken && self.positions_retry_at.is_none())
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
            Err(e) if e.is_fatal() => self.shared.fail(e),
            Err(e) => {
                tracing::warn!(error = %e, "offset initialisation failed; retrying");
                self.refresh_metadata = true;
                self.positions_retry_at = Some(Instant::now() + self.retry_backoff());
            }
        }
        self.shared.wake();
    }

    /// The partitions to fetch now, by the node to fetch them from (their leader, or the replica
    /// it named: `replica.rs`): fetchable (assigned, positioned, not paused), not backed off, of
    /// a topic not gone. A partition whose leader is unknown is backed off until metadata is
    /// refreshed.
    fn plan(
        &mut self,
        metadata: &Metadata,
        now: Instant,
    ) -> BTreeMap<i32, BTreeMap<TopicPartition, PartitionRequest>> {
        let fetchable = {
            let mut subs = self.shared.subs();
            subs.sync_backpressure(&self.engine.unfetchable_partitions());
            if !self.errors.is_empty() || !self.replicas.is_empty() {
                let assigned = subs.assigned_partitions().into_iter().collect();
                self.errors.retain(&assigned);
                self.replicas.retain(&assigned);
            }
            subs.fetchable_partitions()
                .into_iter()
                .filter(|tp| {
                    !self.errors.is_unavailable(&tp.topic) && !self.errors.is_backed_off(tp, now)
                })
                .filter_map(|tp| subs.position(&tp).map(|p| (tp, p)))
                .collect::<Vec<_>>()
        };
        let mut by_node: BTreeMap<i32, BTreeMap<TopicPartition, PartitionRequest>> =
            BTreeMap::new();
        for (tp, position) in fetchable {
            match metadata.leader_for(&tp.topic, tp.partition) {
                Some((leader, epoch)) if leader >= 0 => {
                    let node = self.read_from(&tp, leader, metadata, now);
                    let max_bytes = self.partition_max_bytes(&tp);
                    by_node.entry(node).or_default().insert(
                        tp,
                        PartitionRequest {
                            fetch_offset: position.offset,
                            current_leader_epoch: epoch,
                            max_bytes,
                        },
                    );
                }
                _ => {
                    self.errors.back_off(&tp, now);
                    self.refresh_metadata = true;
                }
            }
        }
        self.publish_followers();
        by_node
    }

    /// Plans `node`'s next request for `wanted`, with the topic ids it names: every partition of
    /// the session, not only those listed (an incremental answer carries any of them, by topic
    /// id from v13). A partition to forget whose topic metadata no longer lists (deleted) cannot
    /// be named by id: the session starts over with a full request, which forgets by omission.
    fn session_plan(
        &mut self,
        node: i32,
        wanted: BTreeMap<TopicPartition, PartitionRequest>,
        metadata: &Metadata,
    ) -> (Arc<SessionRequest>, BTreeMap<String, Uuid>) {
        let session = self.sessions.entry(node).or_default();
        if session
            .forgets(&wanted)
            .any(|tp| !metadata.topics.contains_key(&tp.topic))
        {
            session.reset();
        }
        let plan = session.build(wanted);
        // Each topic's name once (a plan lists partitions, most of them of a few topics).
        let mut ids = BTreeMap::new();
        for tp in plan.session.keys().chain(&plan.to_forget) {
            if !ids.contains_key(&tp.topic) {
                if let Some(t) = metadata.topics.get(&tp.topic) {
                    ids.insert(tp.topic.clone(), t.id);
                }
            }
        }
        (plan, ids)
    }

    /// Plans and sends one Fetch to every broker that leads a partition to fetch and has none in
    /// flight nor a back-off running, while the memory budget has room; on a deadline alone
    /// (`woken` false) nothing while the last plan stands. Planning looks at every assigned
    /// partition, so it is skipped when no request could go (every broker busy or backed off,
    /// or the budget full): with 1,000 partitions, planning on every wake of the loop took a
    /// sixth of the consumer's CPU.
    fn send_fetches(&mut self, woken: bool) {
        let metadata = self.shared.fetch_client.cached_metadata();
        let now = Instant::now();
        self.memory_full = self.request_max_bytes(1).is_none();
        let broker_free = metadata.brokers.keys().any(|node| {
            !self.busy.contains(node) && self.backoff_until.get(node).is_none_or(|t| now >= *t)
        });
        if self.memory_full || !broker_free {
            return;
        }
        let Some(by_node) = self.plan_round(&metadata, now, woken) else {
            return;
        };
        // Brokers with nothing to fetch any more: their session partitions are forgotten with
        // the next request there; meanwhile the broker may still answer for them, and those
        // answers are dropped (position or assignment check).
        for (node, wanted, max_bytes) in self.admit(by_node, now) {
            let rack = self.rack_for(wanted.keys(), now);
            let from_replica = self.replicas.served_by(node, wanted.keys());
            let (plan, ids) = self.session_plan(node, wanted, &metadata);
            let names: HashMap<Uuid, String> =
                ids.iter().map(|(name, id)| (*id, name.clone())).collect();
            let client = self.shared.fetch_client.clone();
            let shared = Arc::clone(&self.shared);
            let mut config = self.shared.config.fetch.clone();
            config.max_bytes = max_bytes;
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
                    let sent = Instant::now();
                    let answer = conn.send_at(&request, version).await;
                    shared.fetch_latency.record(sent.elapsed());
                    answer
                }
                .await;
                FinishedFetch {
                    node,
                    names,
                    from_replica,
                    result,
                }
            });
        }
    }

    /// The whole request failed (transport, top-level error): the broker is backed off and its
    /// session starts over.
    fn node_failed(&mut self, node: i32, error: String) {
        if let Some(session) = self.sessions.get_mut(&node) {
            session.reset();
        }
        self.replica_node_failed(node);
        self.refresh_metadata = true;
        self.backoff_until
            .insert(node, Instant::now() + self.retry_backoff());
        self.shared.emit(ConsumerEvent::FetchError {
            node,
            partition: None,
            error,
        });
    }

    /// One partition's answer failed: that partition alone is backed off (the broker's others
    /// are fetched on at once), and metadata refreshed when the error may mean it moved.
    fn partition_failed(&mut self, node: i32, tp: TopicPartition, error: String, refresh: bool) {
        let backoff = self.errors.back_off(&tp, Instant::now());
        tracing::debug!(partition = %tp, node, %error, ?backoff, "fetch: partition backed off");
        self.refresh_metadata |= refresh;
        self.shared.emit(ConsumerEvent::FetchError {
            node,
            partition: Some(tp),
            error,
        });
    }

    fn handle(&mut self, outcome: FinishedFetch) {
        let node = outcome.node;
        self.busy.remove(&node);
        self.reserved.remove(&node);
        let response = match outcome.result {
            Ok(r) => r,
            Err(e) if e.is_fatal() => {
                self.shared.fail(e.into());
                return;
            }
            Err(e) => {
                tracing::debug!(node, error = %e, "fetch failed");
                self.node_failed(node, e.to_string());
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
                self.node_failed(node, code.to_string());
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
        let mut unauthorized = BTreeSet::new();
        let mut record_bytes = 0;
        let answer = answers
            .iter()
            .map(|(_, _, data)| data.records.as_ref().map_or(0, Bytes::len))
            .sum();
        let mut jobs = Vec::new();
        for (tp, sent, data) in answers {
            if ErrorCode::from(data.error_code) == ErrorCode::TopicAuthorizationFailed {
                unauthorized.insert(tp.topic);
                continue;
            }
            record_bytes += data.records.as_ref().map_or(0, |b| b.len() as u64);
            let from_replica = outcome.from_replica.contains(&tp);
            jobs.extend(self.handle_partition(node, tp, sent, data, from_replica));
        }
        if !unauthorized.is_empty() {
            self.shared.fail(ConsumerError::TopicAuthorizationFailed {
                topics: unauthorized.into_iter().collect(),
                principal: self.shared.config.client.principal(),
            });
        }
        if record_bytes > 0 {
            self.count_fetched(node, record_bytes, 0);
        }
        let inflation = Arc::new(Inflation::new(&self.shared.memory, answer));
        let mut jobs = jobs;
        let bytes: usize = jobs.iter().map(|job| job.bytes.len()).sum();
        if !jobs.is_empty() && bytes >= self.off_loop_from {
            let count = jobs.len();
            match extracting::off_loop(jobs, &inflation, node, &self.extracted_tx) {
                Ok(()) => {
                    self.extracting.insert(node, count);
                    self.busy.insert(node);
                    return;
                }
                Err(back) => jobs = back,
            }
        }
        for job in jobs {
            let done = job.run(&inflation);
            self.handle_extracted(node, done);
        }
    }

    /// One partition of `node`'s answer was extracted off the loop: handed on; the broker may be
    /// fetched from again once its last partition is.
    fn extraction_done(&mut self, node: i32, done: Done) {
        self.handle_extracted(node, done);
        if let Some(left) = self.extracting.get_mut(&node) {
            *left -= 1;
            if *left == 0 {
                self.extracting.remove(&node);
                self.busy.remove(&node);
            }
        }
    }

    /// Counts what `node` brought, for [`FetchStats`].
    fn count_fetched(&self, node: i32, record_bytes: u64, records: u64) {
        let metadata = self.shared.fetch_client.cached_metadata();
        let rack = metadata.brokers.get(&node).and_then(|b| b.rack.as_deref());
        self.shared
            .fetch_stats
            .fetched(node, rack, record_bytes, records);
    }

    /// One partition's answer (TOPIC_AUTHORIZATION_FAILED is handled for the whole response);
    /// `from_replica`: fetched from a replica other than its leader, whose errors send the
    /// partition back to the leader (`replica.rs`). Returns the records to extract, if any.
    fn handle_partition(
        &mut self,
        node: i32,
        tp: TopicPartition,
        sent: PartitionRequest,
        data: PartitionData,
        from_replica: bool,
    ) -> Option<Job> {
        let code = ErrorCode::from(data.error_code);
        if code == ErrorCode::None {
            self.replica_answered(node, &tp, from_replica, data.preferred_read_replica);
            return self.handle_records(tp, sent, data);
        }
        if from_replica {
            self.replica_failed(node, tp, code);
            return None;
        }
        match code {
            ErrorCode::OffsetOutOfRange => self.reset_out_of_range(tp, sent),
            ErrorCode::UnknownTopicId
            | ErrorCode::UnknownTopicOrPartition
            | ErrorCode::InconsistentTopicId => {
                // Deleted, or re-created under a new id: the broker's session may name it by an
                // id it no longer knows, so the next request there is full.
                self.errors.topic_unknown(&tp.topic, code);
                if let Some(session) = self.sessions.get_mut(&node) {
                    session.reset();
                }
                self.partition_failed(node, tp, code.to_string(), true);
            }
            ErrorCode::NotLeaderOrFollower
            | ErrorCode::FencedLeaderEpoch
            | ErrorCode::UnknownLeaderEpoch
            | ErrorCode::FetchSessionTopicIdError
            | ErrorCode::LeaderNotAvailable
            | ErrorCode::ReplicaNotAvailable
            | ErrorCode::KafkaStorageError
            | ErrorCode::OffsetNotAvailable
            // A code this client does not know (a newer broker's) is what Java reads as
            // UNKNOWN_SERVER_ERROR: warned about and retried, never fatal.
            | ErrorCode::UnknownServerError
            | ErrorCode::Unknown(_) => {
                self.partition_failed(node, tp, code.to_string(), true);
            }
            other if other.is_retriable() => {
                tracing::warn!(partition = %tp, code = %other, "fetch: partition error");
                self.partition_failed(node, tp, other.to_string(), true);
            }
            // Kafka checksums nothing outside the record batches: one such answer may be a byte
            // flipped in flight.
            other => self.unreadable(node, tp, sent.fetch_offset, Unreadable::Code(other)),
        }
        None
    }

    /// OFFSET_OUT_OF_RANGE: reset by `auto.offset.reset` (`none`: fatal), unless a seek moved the
    /// position meanwhile.
    fn reset_out_of_range(&mut self, tp: TopicPartition, sent: PartitionRequest) {
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
        drop(subs);
        self.errors.succeeded(&tp);
        if let Err(e) = result {
            tracing::debug!(partition = %tp, error = %e, "reset after OFFSET_OUT_OF_RANGE");
        }
    }

    /// Records of one answer without error, to extract: `None` when there are none, or they are
    /// stale (the position moved or the partition was paused while they were fetched).
    fn handle_records(
        &mut self,
        tp: TopicPartition,
        sent: PartitionRequest,
        data: PartitionData,
    ) -> Option<Job> {
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
                _ => return None,
            }
        };
        let Some(bytes) = data.records.filter(|b| !b.is_empty()) else {
            self.errors.succeeded(&tp);
            return None;
        };
        let aborted = match self.shared.config.fetch.isolation_level {
            IsolationLevel::ReadCommitted => Some(data.aborted_transactions.unwrap_or_default()),
            IsolationLevel::ReadUncommitted => None,
        };
        // The broker answers below the high watermark (the last stable offset under
        // read_committed); -1 when it did not say.
        let end = match aborted {
            Some(_) if data.last_stable_offset >= 0 => data.last_stable_offset,
            _ => data.high_watermark,
        };
        let window = records::OffsetWindow {
            position: position.offset,
            end: (end >= 0).then_some(end),
        };
        Some(Job {
            tp,
            position,
            bytes,
            window,
            aborted,
        })
    }

    /// One partition's extracted records to the engine, unless the position moved or the
    /// partition was paused while they were extracted.
    fn handle_extracted(&mut self, node: i32, done: Done) {
        let read = self.hand_on(node, done);
        if read > 0 {
            self.count_fetched(node, 0, read as u64);
        }
    }

    /// [`handle_extracted`](Self::handle_extracted), returning how many records were read.
    fn hand_on(&mut self, node: i32, done: Done) -> usize {
        let Done {
            tp,
            position,
            wire_bytes,
            result,
        } = done;
        {
            let subs = self.shared.subs();
            if subs.position(&tp).map(|p| p.offset) != Some(position.offset)
                || !subs.is_fetchable(&tp)
            {
                return 0;
            }
        }
        let extracted = match result {
            Some(Ok(e)) => e,
            Some(Err(source)) => {
                self.unreadable(node, tp, position.offset, Unreadable::Records(source));
                return 0;
            }
            None => return 0,
        };
        self.errors.succeeded(&tp);
        let read = extracted.fetched.records.len();
        let mut next = FetchPosition {
            offset: extracted.next_offset,
            leader_epoch: extracted.leader_epoch.or(position.leader_epoch),
        };
        // The compressed response is freed once extracted: the records hold the decompressed
        // batches. An answer partly left for later says nothing of the ratio.
        if extracted.deferred {
            tracing::debug!(partition = %tp, next = extracted.next_offset, "fetch: batches left until the memory budget has room");
        } else {
            // Held while extracted: the frame, and what its batches decompress to beside it.
            let held = wire_bytes + extracted.decompressed;
            let expansion = (held as f64 / wire_bytes as f64).clamp(1.0, 17.0);
            self.expansion = 0.75 * self.expansion + 0.25 * expansion;
        }
        if !extracted.fetched.records.is_empty() {
            self.record_sizes.insert(
                tp.clone(),
                wire_bytes.div_ceil(extracted.fetched.records.len()),
            );
            match self.submit(&tp, extracted.fetched) {
                Handed::Until(first_rejected) => {
                    next = FetchPosition {
                        offset: first_rejected,
                        leader_epoch: position.leader_epoch,
                    }
                }
                Handed::All => {}
                Handed::None => return read,
            }
        }
        if next.offset == position.offset {
            return read;
        }
        let mut subs = self.shared.subs();
        if subs.position(&tp) == Some(position) {
            if let Err(e) = subs.seek_to_position(&tp, next) {
                tracing::debug!(partition = %tp, error = %e, "position update");
            }
        }
        read
    }

    /// No readable answer at `offset`: fetched again from there after a back-off (a byte flipped
    /// in flight), fatal after [`CORRUPT_FETCHES`] fresh fetches in a row failed there.
    fn unreadable(&mut self, node: i32, tp: TopicPartition, offset: i64, why: Unreadable) {
        let fetches = self.errors.corrupt(&tp, offset);
        if fetches < CORRUPT_FETCHES {
            let what = match &why {
                Unreadable::Records(source) => format!("corrupt records ({source})"),
                Unreadable::Code(code) => code.to_string(),
            };
            tracing::warn!(partition = %tp, offset, fetches, error = %what, "fetch: no readable answer; fetching again");
            let error = format!("{what} at offset {offset} (fetch {fetches} of {CORRUPT_FETCHES})");
            self.partition_failed(node, tp, error, false);
            return;
        }
        self.shared.fail(match why {
            Unreadable::Records(source) => ConsumerError::CorruptRecords {
                partition: tp,
                offset,
                fetches,
                source: Box::new(source),
            },
            Unreadable::Code(code) => ConsumerError::FetchFailed {
                partition: tp,
                code,
            },
        });
    }

    /// Hands records to the engine (see [`Handed`]).
    fn submit(&self, tp: &TopicPartition, fetched: crate::processing::FetchedRecords) -> Handed {
        match self.engine.submit_fetched(tp, fetched) {
            Ok(submitted) => match submitted.rejected.first() {
                Some(r) => Handed::Until(r.offset),
                None => Handed::All,
            },
            Err(SubmitError::OffsetNotIncreasing { .. }) => {
                // A seek backwards: the engine starts the partition afresh, and the records are
                // fetched again from the position.
                let discarded = self.engine.drop_partitions([tp.clone()]);
                tracing::debug!(partition = %tp, discarded, "seek backwards: partition restarted");
                self.engine.add_partitions([tp.clone()]);
                Handed::None
            }
            Err(e) => {
                tracing::debug!(partition = %tp, error = %e, "records not submitted");
                Handed::None
            }
        }
    }
}
