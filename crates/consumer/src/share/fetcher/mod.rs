//! The share fetcher: one task that owns every share session (one per broker leading an assigned
//! share-partition), the ledger of held records, and the verdicts on their way. It acquires
//! records with ShareFetch, hands them to the workers, and sends each record's verdict back,
//! riding on the next ShareFetch to its broker or, when no fetch is due, in a ShareAcknowledge.
//!
//! - **When it fetches**: while the member is in the group, the broker leads an assigned
//!   share-partition, a poll's worth of records (`max.poll.records`, at most half the bound) fits
//!   under `mooring.buffer.max.records` beside those held, and the memory budget has room (a
//!   request's `MaxBytes` is the room left, at most `fetch.max.bytes`); at most one request is in
//!   flight per session. A release of memory, a verdict, an assignment wakes it.
//! - **Verdicts** ride on the next ShareFetch to their broker; while none is due they wait up to
//!   `fetch.max.wait.ms`, or until `max.poll.records` of them wait, then go in a ShareAcknowledge
//!   of their own (one request for many records, not one per record).
//! - **Renewals**: a held record's lock is renewed at half its duration (a ShareAcknowledge with
//!   `IsRenewAck`, brokers with ShareAcknowledge v2) until it has been held
//!   `max.poll.interval.ms`; the lock duration is the broker's `AcquisitionLockTimeoutMs`.
//! - **Late verdicts**: a verdict after the record's lock ran out is not sent (the broker has
//!   handed the record to another member; one stale offset would make it refuse the
//!   share-partition's whole batch) and counts as `lock_expired`.
//! - **Stopping** ([`Input::Close`]): no more fetching; every record still held without a verdict
//!   (queued, or its handler given up at the shutdown's bound) is released; the verdicts go, and
//!   each session is closed (epoch -1), by the deadline.
//!
//! # Error table
//!
//! | scope | error | reaction |
//! |---|---|---|
//! | request | SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED | the session starts over (epoch 0) at once; the verdicts it carried count as failed (the broker hands their records out again when their locks run out) |
//! | request | transport error | the session starts over after `retry.backoff.ms`; metadata refreshed; verdicts carried count as failed |
//! | request | the broker offers no ShareFetch v1 | fatal: [`Error::ShareGroupsUnsupported`](mooring_client::Error::ShareGroupsUnsupported) |
//! | request, partition | GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, authentication or TLS refused | fatal: `run` ends with the typed error, said once |
//! | request | any other | the broker is retried after `retry.backoff.ms`; verdicts carried count as failed |
//! | partition | NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH | fetched from the leader the answer names (or after a metadata refresh); the records held from the old leader are given up (the new leader hands them out again) |
//! | partition | UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_ID, any other | metadata refreshed; the share-partition is fetched again after `retry.backoff.ms` |
//! | partition, acknowledgement | INVALID_RECORD_STATE | the records' locks had run out at the broker: counted as `lock_expired` (renewals: `renewals_refused`) |
//! | partition, acknowledgement | any other | counted as `acknowledgements_failed` |
//! | partition | acquired ranges that cannot be right (`records.rs`) | nothing handed out; the records' locks run out and the broker hands them out again |

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use mooring_client::Error as ClientError;
use mooring_group::{MemberSnapshot, ShareMemberState};
use mooring_wire::messages::{
    ShareAcknowledgeRequest, ShareAcknowledgeResponse, ShareFetchRequest, ShareFetchResponse,
};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinSet;
use tokio::time::{sleep_until, Instant};

use super::ack::Verdict;
use super::events::ShareEvent;
use super::ledger::{Finished, Ledger};
use super::queue::RecordQueue;
use super::session::{Sent, Session, TopicIds};
use super::shared::ShareShared;
use crate::TopicPartition;

mod answers;
mod requests;
#[cfg(test)]
mod tests;

/// The lock duration assumed until a broker says its own (Kafka's default
/// `group.share.record.lock.duration.ms`).
const DEFAULT_LOCK: Duration = Duration::from_secs(30);

/// What the fetcher is told.
#[derive(Debug)]
pub(crate) enum Input {
    Verdict(Verdict),
    /// The member was assigned these share-partitions.
    Assigned(Vec<TopicPartition>),
    /// The member no longer holds these (revoked, or lost with its membership).
    Revoked(Vec<TopicPartition>),
    /// Stop (see the module docs); `done` is answered once every session is closed or
    /// `deadline` has passed.
    Close {
        deadline: Instant,
        done: oneshot::Sender<()>,
    },
}

/// Which request a session sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Fetch,
    Acknowledge,
}

/// One request's end, back from its task.
struct Ended {
    node: i32,
    kind: Kind,
    sent: Sent,
    at: Instant,
    /// The version the request went at.
    version: Option<i16>,
    result: Result<Answer, ClientError>,
}

enum Answer {
    Fetch(ShareFetchResponse),
    Acknowledge(ShareAcknowledgeResponse),
}

/// A close under way.
struct Closing {
    deadline: Instant,
    done: Option<oneshot::Sender<()>>,
    /// The records held without a verdict have been released.
    released: bool,
}

pub(crate) struct ShareFetcher {
    shared: Arc<ShareShared>,
    member: watch::Receiver<MemberSnapshot>,
    inbox: mpsc::UnboundedReceiver<Input>,
    records: Arc<RecordQueue>,
    sessions: BTreeMap<i32, Session>,
    assigned: BTreeSet<TopicPartition>,
    /// The broker each share-partition is fetched from (and its verdicts sent to).
    leaders: BTreeMap<TopicPartition, i32>,
    ids: TopicIds,
    ledger: Ledger,
    in_flight: JoinSet<Ended>,
    backoff: BTreeMap<i32, Instant>,
    lock: Duration,
    /// Whether each broker takes renewals (ShareAcknowledge v2), once known.
    renews: BTreeMap<i32, bool>,
    refresh: Option<tokio::task::JoinHandle<()>>,
    refresh_wanted: bool,
    closing: Option<Closing>,
    /// The key [`verdict`](Self::verdict) names a share-partition by, kept to reuse its string.
    verdict_key: TopicPartition,
}

impl ShareFetcher {
    pub(crate) fn new(
        shared: Arc<ShareShared>,
        member: watch::Receiver<MemberSnapshot>,
        inbox: mpsc::UnboundedReceiver<Input>,
        records: Arc<RecordQueue>,
    ) -> Self {
        ShareFetcher {
            shared,
            member,
            inbox,
            records,
            sessions: BTreeMap::new(),
            assigned: BTreeSet::new(),
            leaders: BTreeMap::new(),
            ids: TopicIds::new(),
            ledger: Ledger::default(),
            in_flight: JoinSet::new(),
            backoff: BTreeMap::new(),
            lock: DEFAULT_LOCK,
            renews: BTreeMap::new(),
            refresh: None,
            refresh_wanted: false,
            closing: None,
            verdict_key: TopicPartition::new(String::new(), 0),
        }
    }

    /// Fetches until closed (or until every sender of its inbox is gone).
    pub(crate) async fn run(mut self) {
        loop {
            self.route();
            self.maybe_refresh();
            self.send_requests();
            if self.closed() {
                break;
            }
            let far = Instant::now() + Duration::from_secs(3600);
            let renewal = self.ledger.next_renewal();
            let backoff = self.backoff.values().min().copied();
            let deadline = self.closing.as_ref().map(|c| c.deadline);
            let memory_full = self.room() == 0;
            let verdicts_due = self.verdicts_due_at();
            tokio::select! {
                input = self.inbox.recv() => match input {
                    Some(input) => {
                        self.take(input);
                        while let Ok(more) = self.inbox.try_recv() {
                            self.take(more);
                        }
                    }
                    None => break,
                },
                Some(joined) = self.in_flight.join_next(), if !self.in_flight.is_empty() => {
                    if let Ok(finished) = joined {
                        self.finished(finished);
                    }
                }
                () = sleep_until(renewal.unwrap_or(far)), if renewal.is_some() => self.queue_renewals(),
                () = sleep_until(backoff.unwrap_or(far)), if backoff.is_some() => {
                    let now = Instant::now();
                    self.backoff.retain(|_, until| *until > now);
                }
                () = sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {}
                () = sleep_until(verdicts_due.unwrap_or(far)), if verdicts_due.is_some() => {}
                () = self.shared.memory.released(), if memory_full => {}
                changed = self.member.changed() => if changed.is_err() { self.member_gone(); },
                () = async {
                    match self.refresh.as_mut() {
                        Some(task) => { let _ = task.await; }
                        None => std::future::pending().await,
                    }
                } => self.refresh = None,
            }
        }
        self.in_flight.abort_all();
        if let Some(task) = self.refresh.take() {
            task.abort();
        }
        if let Some(done) = self.closing.as_mut().and_then(|c| c.done.take()) {
            let _ = done.send(());
        }
    }

    fn take(&mut self, input: Input) {
        match input {
            Input::Verdict(v) => self.verdict(v),
            Input::Assigned(tps) => self.assigned.extend(tps),
            Input::Revoked(tps) => {
                for tp in tps {
                    self.assigned.remove(&tp);
                }
            }
            Input::Close { deadline, done } => {
                self.closing = Some(Closing {
                    deadline,
                    done: Some(done),
                    released: false,
                });
            }
        }
    }

    /// A record's verdict: queued for its broker if its lock still holds.
    fn verdict(&mut self, v: Verdict) {
        // The share-partition named in a key whose string is reused, verdict after verdict.
        let mut tp =
            std::mem::replace(&mut self.verdict_key, TopicPartition::new(String::new(), 0));
        tp.topic.clear();
        tp.topic.push_str(&v.topic);
        tp.partition = v.partition;
        let counters = &self.shared.counters;
        let now = Instant::now();
        match self.ledger.finish(&tp, v.offset, v.delivery_count, now) {
            Finished::InTime(_) => match self.leaders.get(&tp) {
                Some(node) => self
                    .sessions
                    .entry(*node)
                    .or_default()
                    .verdicts_for(&tp, now)
                    .add_for(v.offset, v.ack, v.delivery_count),
                None => counters.acknowledgements_failed(1),
            },
            Finished::LockExpired(_) => self.lock_expired(tp.clone(), v.offset, v.delivery_count),
            // Counted when this member was handed the record again.
            Finished::Superseded => {}
            Finished::Unknown => {}
        }
        self.verdict_key = tp;
    }

    /// The lock of the `delivery_count`-th delivery of `offset` ran out before its verdict: the
    /// broker has handed the record out again (to another member, or to this one).
    fn lock_expired(&self, tp: TopicPartition, offset: i64, delivery_count: i16) {
        tracing::info!(partition = %tp, offset, delivery_count, "a share record's lock ran out before its verdict; the broker has handed it out again");
        self.shared.counters.lock_expired(1);
        self.shared.events.send(ShareEvent::LockExpired {
            partition: tp,
            offset,
            delivery_count: delivery_count.unsigned_abs(),
        });
    }

    /// The member's client is gone: nothing more can be fetched or acknowledged.
    fn member_gone(&mut self) {
        if self.closing.is_none() {
            let (done, _) = oneshot::channel();
            self.closing = Some(Closing {
                deadline: Instant::now(),
                done: Some(done),
                released: true,
            });
        }
    }

    /// Finds each assigned share-partition's leader and topic id in the metadata; what is
    /// missing asks for a refresh.
    fn route(&mut self) {
        let metadata = self.shared.fetch_client.cached_metadata();
        for tp in &self.assigned {
            match (
                metadata.leader_for(&tp.topic, tp.partition),
                metadata.topics.get(&tp.topic),
            ) {
                (Some((leader, _)), Some(topic)) if !topic.id.is_nil() => {
                    if self.ids.get(&tp.topic) != Some(&topic.id) {
                        self.ids.insert(tp.topic.clone(), topic.id);
                    }
                    if self.leaders.get(tp) != Some(&leader) && !self.ledger_holds(tp) {
                        self.leaders.insert(tp.clone(), leader);
                    }
                }
                _ => self.refresh_wanted = true,
            }
        }
        // Forget where share-partitions no longer assigned and no longer held are fetched (this
        // runs on every turn of the loop: nothing is built unless one is unassigned).
        if self.leaders.keys().all(|tp| self.assigned.contains(tp)) {
            return;
        }
        let held: BTreeSet<TopicPartition> = self.ledger.partitions().cloned().collect();
        let assigned = &self.assigned;
        self.leaders
            .retain(|tp, _| assigned.contains(tp) || held.contains(tp));
    }

    fn ledger_holds(&self, tp: &TopicPartition) -> bool {
        self.ledger.partitions().any(|held| held == tp)
    }

    fn maybe_refresh(&mut self) {
        if !self.refresh_wanted || self.refresh.is_some() {
            return;
        }
        self.refresh_wanted = false;
        let client = self.shared.fetch_client.clone();
        let topics: Vec<String> = self
            .assigned
            .iter()
            .map(|tp| tp.topic.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let backoff = self.shared.config.client.retry_backoff;
        self.refresh = Some(tokio::spawn(async move {
            if let Err(error) = client.refresh_topics(&topics).await {
                tracing::info!(%error, "share fetcher: metadata refresh failed");
                tokio::time::sleep(backoff).await;
            }
        }));
    }

    /// The memory budget's room for a response.
    fn room(&self) -> usize {
        let memory = &self.shared.memory;
        memory.limit().saturating_sub(memory.in_use())
    }

    /// Whether records may be fetched now: in the group, below the held bound, with memory.
    fn may_fetch(&self) -> bool {
        let snapshot = self.member.borrow();
        self.closing.is_none()
            && !self.shared.is_shutting_down()
            && snapshot.generation > 0
            && matches!(
                snapshot.share_state,
                Some(ShareMemberState::Stable | ShareMemberState::Reconciling)
            )
            && self.ledger.len() + self.poll_room() <= self.shared.config.max_held_records
            && self.room() > 0
    }

    /// The room under `mooring.buffer.max.records` a fetch waits for: a poll's worth
    /// (`max.poll.records`, at most half the bound), so that each ShareFetch may acquire many
    /// records and carries the verdicts of many.
    fn poll_room(&self) -> usize {
        let config = &self.shared.config;
        usize::try_from(config.max_poll_records)
            .unwrap_or(usize::MAX)
            .min(config.max_held_records / 2)
            .max(1)
    }

    /// When the verdicts waiting in a session that could send them fall due by age.
    fn verdicts_due_at(&self) -> Option<Instant> {
        let linger = self.shared.config.fetch.max_wait;
        self.sessions
            .iter()
            .filter(|(node, s)| !s.in_flight && !self.backoff.contains_key(*node))
            .filter_map(|(_, s)| s.verdicts_due_at(linger))
            .min()
    }

    /// Whether a close has ended: nothing in flight, every session closed (or the deadline past).
    fn closed(&self) -> bool {
        let Some(closing) = &self.closing else {
            return false;
        };
        let past = Instant::now() >= closing.deadline;
        past || (self.in_flight.is_empty() && self.sessions.values().all(|s| !s.is_open()))
    }

    /// Queues the renewals now due, where the broker takes them.
    fn queue_renewals(&mut self) {
        let now = Instant::now();
        let max_hold = self.shared.config.max_poll_interval;
        let (due, given_up) = self.ledger.renewals_due(now, max_hold);
        let counters = &self.shared.counters;
        if given_up > 0 {
            tracing::warn!(
                records = given_up,
                ?max_hold,
                "share records held for max.poll.interval.ms: their locks are left to run out"
            );
            counters.renewals_given_up(given_up as u64);
        }
        if !self.shared.config.renew_locks || self.closing.is_some() {
            return;
        }
        for (tp, offset) in due {
            let Some(node) = self.leaders.get(&tp).copied() else {
                continue;
            };
            if self.renews.get(&node) == Some(&false) {
                counters.renewals_refused(1);
                continue;
            }
            self.sessions.entry(node).or_default().renew(&tp, offset);
        }
    }
}

impl Drop for ShareFetcher {
    /// Whatever ends the fetcher (a close, its task aborted), the workers waiting for records end.
    fn drop(&mut self) {
        self.records.close();
    }
}

/// A request a session sends.
enum Request {
    Fetch(ShareFetchRequest),
    Acknowledge(ShareAcknowledgeRequest),
}
