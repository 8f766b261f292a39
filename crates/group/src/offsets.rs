//! Offset commit and fetch for the member (OffsetCommit carries generation, member id and
//! `group.instance.id`; OffsetFetch asks for stable offsets, KIP-447, v7+).
//!
//! From v10 (KIP-848) both name topics by id only. The ids come from the transport's metadata
//! ([`GroupTransport::topic_ids`]) before each request, whatever version is negotiated (cached, so
//! usually free), answers are mapped back to names by the ids sent, and UNKNOWN_TOPIC_ID retries
//! with the ids fetched afresh. The OffsetFetch request and answer shapes are the admin look-up's
//! (`mooring_client::admin`).
//!
//! Both run in the caller's task, not in the member task: a rebalance listener can commit what
//! finished from inside `revoked` while the member task awaits it. They read the member's state
//! from its `watch` snapshot and tell the member task about generation-bound errors through the
//! control channel.
//!
//! Generations follow the broker's rules (classic group coordinator): a commit with the current
//! generation is accepted while the group is Stable or PreparingRebalance, so commits keep working
//! during a cooperative rebalance (and during an eager revoke, before JoinGroup) for partitions
//! still owned; while the group completes a rebalance the broker answers REBALANCE_IN_PROGRESS, so
//! the commit waits (bounded by the rebalance timeout) until the member is stable in the new
//! generation and is sent again with it, for the partitions this member still owns — a partition
//! that moved away fails the commit rather than being committed by a member that no longer owns it.
//! ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID fail the commit; they make the member rejoin only if they
//! name the generation the member still holds. A commit started before the member task has reset
//! that generation and member id (or FENCED_INSTANCE_ID's) fails the same way without being sent,
//! and so does one while the member is unjoined (losing its partitions before it joins again).
//! Except for ILLEGAL_GENERATION answering a commit sent while the member's JoinGroup was in
//! flight: the join phase ended between the two (they go on separate connections), so it is
//! handled as REBALANCE_IN_PROGRESS.
//!
//! Every commit has a deadline (the rebalance timeout, or what a revoke or a shutdown has left):
//! the waits, the attempts and the back-offs between them all end with it, so a commit during a
//! broker outage fails in time with [`Error::DeadlineExceeded`] instead of retrying past its
//! caller's bound.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::primitives::Uuid;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, timeout, timeout_at, Instant};

use super::config::{GroupConfig, GroupProtocol};
use super::consumer::{self, commits};
use super::control::Control;
use super::events::{EventSink, GroupEventKind};
use super::reaction::{self, Reaction};
use super::state::{MemberSnapshot, MemberState};
use crate::requests::{self, CommitTarget, PartitionOffset};
use crate::transport::GroupTransport;
use mooring_client::admin::{offset_fetch_error, offset_fetch_rows};
use mooring_client::error::{Error, Result};
use mooring_client::{OffsetAndMetadata, TopicPartition};

/// How far a commit got, kept by its caller so a commit cut off by its deadline can still say
/// which generation it used and why its last attempt failed.
struct Progress {
    generation: i32,
    last: Option<Error>,
}

/// What commits and fetches share with the member task.
#[derive(Debug)]
pub(crate) struct CommitState<T> {
    pub(crate) transport: Arc<T>,
    pub(crate) config: Arc<GroupConfig>,
    pub(crate) snapshot: watch::Receiver<MemberSnapshot>,
    pub(crate) control: mpsc::Sender<Control>,
    pub(crate) events: EventSink,
    /// The last generation and member id a commit's answer invalidated (UNKNOWN_MEMBER_ID,
    /// ILLEGAL_GENERATION, FENCED_INSTANCE_ID), with the code. The member task resets them when
    /// it reads the control message, later; until then its snapshot still shows them, and a
    /// commit started meanwhile (the consumer's next one waits only for this one) must not be
    /// sent with them. The member empties it when it takes a JoinGroup's answer.
    pub(crate) invalidated: InvalidatedSlot,
}

/// Where commits note the generation and member id a commit's answer invalidated (see
/// [`CommitState::invalidated`]), shared with the member task.
pub(crate) type InvalidatedSlot = Arc<std::sync::Mutex<Option<Invalidated>>>;

/// A generation and member id a commit's answer invalidated.
#[derive(Debug, Clone)]
pub(crate) struct Invalidated {
    generation: i32,
    member_id: String,
    code: ErrorCode,
}

fn broker(api: &'static str, code: ErrorCode, message: impl Into<String>) -> Error {
    Error::Broker {
        api,
        code,
        message: Some(message.into()),
    }
}

impl<T: GroupTransport> CommitState<T> {
    /// The member's state once it may commit: a classic member once it is not completing a
    /// rebalance (bounded by the rebalance timeout); a consumer-protocol member at once, if it
    /// holds an epoch.
    async fn settled(&self) -> Result<MemberSnapshot> {
        if self.snapshot.borrow().group_protocol == GroupProtocol::Consumer {
            let snap = self.snapshot.borrow().clone();
            return match commits::cannot_commit(&snap) {
                Some(error) => Err(error),
                None => Ok(snap),
            };
        }
        let mut rx = self.snapshot.clone();
        let waited = timeout(
            self.config.rebalance_timeout,
            rx.wait_for(|s| s.state != MemberState::CompletingRebalance),
        )
        .await;
        let snap = match waited {
            Ok(Ok(s)) => s.clone(),
            Ok(Err(_)) => return Err(Error::Closed),
            Err(_) => {
                return Err(broker(
                    "OffsetCommit",
                    ErrorCode::RebalanceInProgress,
                    "the rebalance did not complete within the rebalance timeout",
                ))
            }
        };
        match snap.state {
            MemberState::Closed => Err(Error::Closed),
            MemberState::Fenced => Err(self.fenced()),
            // Unjoined: between a reset (partitions being lost) and the next JoinGroup.
            MemberState::Unjoined => Err(broker(
                "OffsetCommit",
                ErrorCode::UnknownMemberId,
                "the member is not part of an active group (it was removed or has not joined yet)",
            )),
            _ if snap.generation < 0 || snap.member_id.is_empty() => Err(broker(
                "OffsetCommit",
                ErrorCode::UnknownMemberId,
                "the member is not part of an active group (it was removed or has not joined yet)",
            )),
            _ => match self.invalidated_identity(&snap) {
                Some(ErrorCode::FencedInstanceId) => Err(self.fenced()),
                Some(code) => Err(broker(
                    "OffsetCommit",
                    code,
                    format!(
                        "generation {} is no longer valid; the member rejoins",
                        snap.generation
                    ),
                )),
                None => Ok(snap),
            },
        }
    }

    /// The code that invalidated `snap`'s generation and member id, if a commit's answer did.
    fn invalidated_identity(&self, snap: &MemberSnapshot) -> Option<ErrorCode> {
        let invalidated = self.invalidated.lock().ok()?;
        invalidated
            .as_ref()
            .filter(|i| i.generation == snap.generation && i.member_id == snap.member_id)
            .map(|i| i.code)
    }

    fn fenced(&self) -> Error {
        Error::FencedInstanceId {
            group: self.config.group_id.clone(),
            instance_id: self.config.group_instance_id.clone().unwrap_or_default(),
        }
    }

    /// Commits `offsets` (see the module docs for generations and retries) within `limit`, and
    /// reports a Commit event with its latency. Past `limit` the attempt in flight is dropped (the
    /// transport's calls are cancellation-safe), no retry starts, and the error is
    /// [`Error::DeadlineExceeded`] with the last attempt's error.
    pub(crate) async fn commit(
        &self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
        limit: Duration,
    ) -> Result<()> {
        let started = Instant::now();
        let count = offsets.len();
        let mut progress = Progress {
            generation: -1,
            last: None,
        };
        let result = timeout_at(
            started + limit,
            self.commit_with_retries(offsets, &mut progress),
        )
        .await
        .unwrap_or_else(|_| {
            Err(Error::DeadlineExceeded {
                api: "OffsetCommit",
                group: self.config.group_id.clone(),
                after: limit,
                last: progress.last.take().map(Box::new),
            })
        });
        self.events.emit(GroupEventKind::Commit {
            generation: progress.generation,
            latency: started.elapsed(),
            partitions: count,
            error: result.as_ref().err().map(ToString::to_string),
        });
        result
    }

    async fn commit_with_retries(
        &self,
        mut pending: BTreeMap<TopicPartition, OffsetAndMetadata>,
        progress: &mut Progress,
    ) -> Result<()> {
        let mut attempts = 0u32;
        let mut refresh_ids = false;
        if pending.is_empty() {
            return Ok(());
        }
        loop {
            attempts += 1;
            let snap = self.settled().await?;
            progress.generation = snap.generation;
            let sent = self.send_commit(&snap, &pending, refresh_ids).await;
            refresh_ids = false;
            let failed = match sent {
                Ok(failed) => failed,
                Err(e) if e.is_retriable() && attempts <= self.config.commit_retries => {
                    self.transport.forget_coordinator(&self.config.group_id);
                    progress.last = Some(e);
                    sleep(self.config.retry_backoff).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let Some(&(_, code)) = failed.first() else {
                return Ok(());
            };
            if let Some(error) = self.refusal(&failed, &snap) {
                return Err(error);
            }
            if attempts > self.config.commit_retries {
                return Err(broker(
                    "OffsetCommit",
                    code,
                    format!("gave up after {attempts} attempts"),
                ));
            }
            progress.last = Some(broker("OffsetCommit", code, format!("attempt {attempts}")));
            // v10 names topics by id: an id the broker does not know may be stale (re-created topic).
            refresh_ids = failed.iter().any(|(_, c)| *c == ErrorCode::UnknownTopicId);
            let failed_set: BTreeSet<&TopicPartition> = failed.iter().map(|(tp, _)| tp).collect();
            pending.retain(|tp, _| failed_set.contains(tp));
            let reactions: Vec<Reaction> = failed
                .iter()
                .map(|(_, c)| commit_reaction(*c, &snap))
                .collect();
            if reactions.contains(&Reaction::RetryAfterRebalance) {
                self.await_new_identity(&snap, &pending).await?;
                continue;
            }
            if reactions.contains(&Reaction::Rediscover) {
                self.transport.forget_coordinator(&self.config.group_id);
            }
            sleep(self.config.retry_backoff).await;
        }
    }

    /// The error that ends a commit whose partitions `failed` as they did, if one does: the most
    /// severe reaction among them decides.
    fn refusal(
        &self,
        failed: &[(TopicPartition, ErrorCode)],
        snap: &MemberSnapshot,
    ) -> Option<Error> {
        let pick = |r: Reaction| failed.iter().find(|(_, c)| commit_reaction(*c, snap) == r);
        if let Some((_, c)) = pick(Reaction::Fenced) {
            self.tell_member(snap, *c);
            return Some(self.fenced());
        }
        if let Some((_, c)) = pick(Reaction::ResetMemberAndRejoin)
            .or_else(|| pick(Reaction::ResetGenerationAndRejoin))
        {
            self.tell_member(snap, *c);
            return Some(broker(
                "OffsetCommit",
                *c,
                format!(
                    "generation {} is no longer valid; the member rejoins",
                    snap.generation
                ),
            ));
        }
        if let Some((_, c)) = pick(Reaction::FailMemberGone) {
            return Some(commits::member_gone("OffsetCommit", *c, snap));
        }
        let (_, c) = pick(Reaction::Fatal)?;
        // An authorization refused names the topics refused with it (or the group).
        let refused = || {
            failed
                .iter()
                .filter(|(_, code)| code == c)
                .map(|(tp, _)| tp.topic.clone())
                .collect()
        };
        Some(Error::from_code(
            "OffsetCommit",
            *c,
            Some("not retriable".into()),
            &self.config.group_id,
            refused,
            || self.transport.principal(),
        ))
    }

    /// Waits (≤ the rebalance timeout) until the member holds a newer generation or epoch than
    /// the one `sent` carried (a classic member: stable in it); fails naming the `pending`
    /// partitions it no longer owns then.
    async fn await_new_identity(
        &self,
        sent: &MemberSnapshot,
        pending: &BTreeMap<TopicPartition, OffsetAndMetadata>,
    ) -> Result<()> {
        let now = self.next_identity(sent, "OffsetCommit").await?;
        let moved: Vec<String> = pending
            .keys()
            .filter(|tp| !now.assignment.contains(*tp))
            .map(ToString::to_string)
            .collect();
        if moved.is_empty() {
            return Ok(());
        }
        Err(broker(
            "OffsetCommit",
            commit_wait_code(sent),
            format!("partitions revoked by the rebalance: {}", moved.join(", ")),
        ))
    }

    /// The member's state once its generation or epoch has moved on from `sent`'s (bounded by
    /// the rebalance timeout).
    async fn next_identity(
        &self,
        sent: &MemberSnapshot,
        api: &'static str,
    ) -> Result<MemberSnapshot> {
        let generation = sent.generation;
        let mut rx = self.snapshot.clone();
        let waited = timeout(
            self.config.rebalance_timeout,
            rx.wait_for(|s| {
                s.generation != generation
                    && (s.group_protocol == GroupProtocol::Consumer
                        || !matches!(
                            s.state,
                            MemberState::PreparingRebalance | MemberState::CompletingRebalance
                        ))
            }),
        )
        .await;
        match waited {
            Ok(Ok(s)) => Ok(s.clone()),
            Ok(Err(_)) => Err(Error::Closed),
            Err(_) => Err(broker(
                api,
                commit_wait_code(sent),
                match sent.group_protocol {
                    GroupProtocol::Classic => {
                        "the rebalance did not complete within the rebalance timeout"
                    }
                    GroupProtocol::Consumer | GroupProtocol::Share => {
                        "no newer member epoch within the rebalance timeout"
                    }
                },
            )),
        }
    }

    /// Tells the member task that `code` invalidated the generation and member id of `snap`, and
    /// remembers them as invalid for the commits that start before the member has reset them.
    fn tell_member(&self, snap: &MemberSnapshot, code: ErrorCode) {
        if let Ok(mut invalidated) = self.invalidated.lock() {
            *invalidated = Some(Invalidated {
                generation: snap.generation,
                member_id: snap.member_id.clone(),
                code,
            });
        }
        let _ = self.control.try_send(Control {
            api: "OffsetCommit",
            generation: snap.generation,
            member_id: snap.member_id.clone(),
            code,
            failure: None,
        });
    }

    /// One OffsetCommit; returns the partitions that failed with their codes. `refresh_ids`: fetch
    /// the topics' ids afresh (after UNKNOWN_TOPIC_ID).
    async fn send_commit(
        &self,
        snap: &MemberSnapshot,
        offsets: &BTreeMap<TopicPartition, OffsetAndMetadata>,
        refresh_ids: bool,
    ) -> Result<Vec<(TopicPartition, ErrorCode)>> {
        let mut topics: BTreeMap<String, Vec<PartitionOffset>> = BTreeMap::new();
        for (tp, om) in offsets {
            topics.entry(tp.topic.clone()).or_default().push((
                tp.partition,
                om.offset,
                om.leader_epoch,
                om.metadata.clone(),
            ));
        }
        if snap.group_protocol == GroupProtocol::Consumer {
            commits::check_commit_version(&*self.transport, &self.config.group_id).await?;
        }
        let names: Vec<String> = topics.keys().cloned().collect();
        let ids = self.transport.topic_ids(&names, refresh_ids).await?;
        let names_by_id = names_by_id(&ids);
        let commit = CommitTarget {
            group: self.config.group_id.clone(),
            generation: snap.generation,
            member_id: snap.member_id.clone(),
            instance: self.config.group_instance_id.clone(),
        };
        let response = self
            .transport
            .call_coordinator(&self.config.group_id, move |version| {
                requests::offset_commit(version, &commit, &topics, &ids)
            })
            .await?;
        let mut failed = Vec::new();
        let mut answered = BTreeSet::new();
        for t in &response.topics {
            let Some(name) = topic_name(&t.name, t.topic_id, &names_by_id) else {
                continue; // an id we did not send: its partitions count as unanswered below
            };
            for p in &t.partitions {
                let tp = TopicPartition::new(name.clone(), p.partition_index);
                let code = ErrorCode::from_i16(p.error_code);
                answered.insert(tp.clone());
                if !code.is_ok() {
                    failed.push((tp, code));
                }
            }
        }
        for tp in offsets.keys() {
            if !answered.contains(tp) {
                failed.push((tp.clone(), ErrorCode::UnknownServerError));
            }
        }
        Ok(failed)
    }

    /// Committed offsets of `partitions` (`None`: nothing committed), asking for stable offsets;
    /// a consumer-protocol member asks as itself (member id and epoch) while it holds an epoch.
    pub(crate) async fn committed(
        &self,
        partitions: BTreeSet<TopicPartition>,
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>> {
        let mut attempts = 0u32;
        let mut refresh_ids = false;
        loop {
            attempts += 1;
            let snap = self.snapshot.borrow().clone();
            let consumer = snap.group_protocol == GroupProtocol::Consumer;
            let member = if consumer {
                commits::fetch_identity(&snap)
            } else {
                None
            };
            let outcome = self.fetch_once(&partitions, refresh_ids, member).await;
            refresh_ids = matches!(outcome, Ok(Err((ErrorCode::UnknownTopicId, _))));
            let (code, topics) = match outcome {
                Ok(Ok(found)) => return Ok(found),
                Ok(Err(failed)) => failed,
                Err(e) if e.is_retriable() && attempts <= self.config.commit_retries => {
                    self.transport.forget_coordinator(&self.config.group_id);
                    sleep(self.config.retry_backoff).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let reaction = if consumer {
                consumer::reaction::offset_fetch(code)
            } else {
                reaction::offset_fetch(code)
            };
            let retry = attempts <= self.config.commit_retries;
            match reaction {
                // A newer epoch than the one asked with: ask again with it.
                Reaction::RetryAfterRebalance if retry => {
                    self.next_identity(&snap, "OffsetFetch").await?;
                    continue;
                }
                Reaction::RetryAfterBackoff if retry => {}
                Reaction::Rediscover if retry => {
                    self.transport.forget_coordinator(&self.config.group_id);
                }
                Reaction::FailMemberGone => {
                    return Err(commits::member_gone("OffsetFetch", code, &snap))
                }
                _ => {
                    return Err(Error::from_code(
                        "OffsetFetch",
                        code,
                        Some(format!("after {attempts} attempts")),
                        &self.config.group_id,
                        || topics,
                        || self.transport.principal(),
                    ))
                }
            }
            sleep(self.config.retry_backoff).await;
        }
    }

    /// One OffsetFetch: the offsets, or the first error code (group level, then partition level)
    /// with the topics that got it (none for the group's). `refresh_ids`: fetch the topics' ids
    /// afresh (after UNKNOWN_TOPIC_ID).
    async fn fetch_once(
        &self,
        partitions: &BTreeSet<TopicPartition>,
        refresh_ids: bool,
        member: Option<(String, i32)>,
    ) -> Result<Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>, (ErrorCode, Vec<String>)>>
    {
        let mut by_topic: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for tp in partitions {
            by_topic
                .entry(tp.topic.clone())
                .or_default()
                .push(tp.partition);
        }
        let names: Vec<String> = by_topic.keys().cloned().collect();
        let ids = self.transport.topic_ids(&names, refresh_ids).await?;
        let names_by_id = names_by_id(&ids);
        let group = self.config.group_id.clone();
        let response = self
            .transport
            .call_coordinator(&self.config.group_id, move |version| {
                let member = member.as_ref().map(|(id, epoch)| (id.as_str(), *epoch));
                requests::offset_fetch_as_member(version, &group, Some(&by_topic), &ids, member)
            })
            .await?;
        let code = ErrorCode::from_i16(offset_fetch_error(&response, &self.config.group_id));
        if !code.is_ok() {
            return Ok(Err((code, Vec::new())));
        }
        let mut found = BTreeMap::new();
        let mut failed: Option<(ErrorCode, Vec<String>)> = None;
        for row in offset_fetch_rows(response, &self.config.group_id) {
            let code = ErrorCode::from_i16(row.code);
            let name = topic_name(&row.name, row.id, &names_by_id);
            if !code.is_ok() {
                match &mut failed {
                    None => failed = Some((code, name.into_iter().collect())),
                    Some((first, topics)) if *first == code => topics.extend(name),
                    Some(_) => {}
                }
                continue;
            }
            let Some(name) = name else {
                continue;
            };
            let value = (row.offset >= 0).then(|| OffsetAndMetadata {
                offset: row.offset,
                leader_epoch: (row.leader_epoch >= 0).then_some(row.leader_epoch),
                metadata: row.metadata.unwrap_or_default(),
            });
            found.insert(TopicPartition::new(name, row.partition), value);
        }
        if let Some(failed) = failed {
            return Ok(Err(failed));
        }
        for tp in partitions {
            found.entry(tp.clone()).or_insert(None);
        }
        Ok(Ok(found))
    }
}

/// Topic names by id, for answers that name topics by id only (v10+).
/// The reaction to a commit's error `code`, for a commit sent with the member's state `sent_with`.
/// A commit sent while the member's JoinGroup was in flight can reach the coordinator after the
/// join phase ended, in the new generation (commits and JoinGroup go on separate connections):
/// its ILLEGAL_GENERATION says the generation moved on under it, not that the member was fenced
/// (its own JoinGroup's answer says that), so it waits for the new generation as
/// REBALANCE_IN_PROGRESS does.
/// A consumer-protocol member's commits follow the `consumer` table
/// ([`consumer::reaction::offset_commit`](super::consumer::reaction::offset_commit)).
fn commit_reaction(code: ErrorCode, sent_with: &MemberSnapshot) -> Reaction {
    if sent_with.group_protocol == GroupProtocol::Consumer {
        consumer::reaction::offset_commit(code)
    } else if code == ErrorCode::IllegalGeneration
        && sent_with.state == MemberState::PreparingRebalance
    {
        Reaction::RetryAfterRebalance
    } else {
        reaction::offset_commit(code)
    }
}

/// The code a commit waiting for the member's next generation (or epoch) fails with.
fn commit_wait_code(sent_with: &MemberSnapshot) -> ErrorCode {
    match sent_with.group_protocol {
        GroupProtocol::Classic => ErrorCode::RebalanceInProgress,
        GroupProtocol::Consumer | GroupProtocol::Share => ErrorCode::StaleMemberEpoch,
    }
}

fn names_by_id(ids: &BTreeMap<String, Uuid>) -> BTreeMap<Uuid, String> {
    ids.iter()
        .filter(|(_, id)| !id.is_nil())
        .map(|(name, id)| (*id, name.clone()))
        .collect()
}

/// The topic an answer names: its name (up to v9), else the name of its id among those sent.
fn topic_name(name: &str, id: Uuid, names_by_id: &BTreeMap<Uuid, String>) -> Option<String> {
    if !name.is_empty() {
        Some(name.to_owned())
    } else {
        names_by_id.get(&id).cloned()
    }
}

#[cfg(test)]
mod request_tests {
    use super::*;

    #[test]
    fn answers_are_mapped_back_to_names() {
        let ids = BTreeMap::from([("t".to_string(), Uuid([7; 16])), ("u".into(), Uuid::NIL)]);
        let by_id = names_by_id(&ids);
        assert_eq!(by_id.len(), 1);
        assert_eq!(topic_name("", Uuid([7; 16]), &by_id).as_deref(), Some("t"));
        assert_eq!(topic_name("x", Uuid::NIL, &by_id).as_deref(), Some("x"));
        assert_eq!(topic_name("", Uuid([8; 16]), &by_id), None);
    }
}
