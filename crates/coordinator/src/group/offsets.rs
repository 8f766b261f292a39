//! Offset commit and fetch for the member (OffsetCommit carries generation, member id and
//! `group.instance.id`; OffsetFetch asks for stable offsets, KIP-447, v7+).
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
//! name the generation the member still holds.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::offset_commit::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use mooring_wire::messages::offset_fetch::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopic, OffsetFetchRequestTopics,
};
use mooring_wire::messages::{OffsetCommitRequest, OffsetFetchRequest};
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep, timeout, Instant};

use super::config::GroupConfig;
use super::control::Control;
use super::events::{EventSink, GroupEventKind};
use super::reaction::{self, Reaction};
use super::state::{MemberSnapshot, MemberState, TopicPartition};
use crate::error::{Error, Result};
use crate::transport::GroupTransport;

/// One partition's offset as the request builder needs it: index, offset, epoch, metadata.
type PartitionOffset = (i32, i64, Option<i32>, Option<String>);

/// An offset to commit, or a committed one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetAndMetadata {
    /// The next offset to read.
    pub offset: i64,
    /// The leader epoch of the last record read, if known (KIP-320).
    pub leader_epoch: Option<i32>,
    /// Free-form metadata stored with the offset.
    pub metadata: Option<String>,
}

impl OffsetAndMetadata {
    /// An offset without epoch or metadata.
    pub fn new(offset: i64) -> Self {
        OffsetAndMetadata {
            offset,
            leader_epoch: None,
            metadata: None,
        }
    }
}

/// What commits and fetches share with the member task.
#[derive(Debug)]
pub(crate) struct Shared<T> {
    pub(crate) transport: Arc<T>,
    pub(crate) config: Arc<GroupConfig>,
    pub(crate) snapshot: watch::Receiver<MemberSnapshot>,
    pub(crate) control: mpsc::Sender<Control>,
    pub(crate) events: EventSink,
}

fn broker(api: &'static str, code: ErrorCode, message: impl Into<String>) -> Error {
    Error::Broker {
        api,
        code,
        message: Some(message.into()),
    }
}

impl<T: GroupTransport> Shared<T> {
    /// The member's state once it is not completing a rebalance (bounded by the rebalance timeout).
    async fn settled(&self) -> Result<MemberSnapshot> {
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
            MemberState::Fenced => Err(Error::FencedInstanceId {
                group: self.config.group_id.clone(),
                instance_id: self.config.group_instance_id.clone().unwrap_or_default(),
            }),
            _ if snap.generation < 0 || snap.member_id.is_empty() => Err(broker(
                "OffsetCommit",
                ErrorCode::UnknownMemberId,
                "the member is not part of an active group (it was removed or has not joined yet)",
            )),
            _ => Ok(snap),
        }
    }

    /// Commits `offsets` (see the module docs for generations and retries) and reports a Commit
    /// event with its latency.
    pub(crate) async fn commit(
        &self,
        offsets: BTreeMap<TopicPartition, OffsetAndMetadata>,
    ) -> Result<()> {
        let started = Instant::now();
        let count = offsets.len();
        let (generation, result) = self.commit_with_retries(offsets).await;
        self.events.emit(GroupEventKind::Commit {
            generation,
            latency: started.elapsed(),
            partitions: count,
            error: result.as_ref().err().map(ToString::to_string),
        });
        result
    }

    async fn commit_with_retries(
        &self,
        mut pending: BTreeMap<TopicPartition, OffsetAndMetadata>,
    ) -> (i32, Result<()>) {
        let mut attempts = 0u32;
        let mut generation = -1;
        if pending.is_empty() {
            return (generation, Ok(()));
        }
        loop {
            attempts += 1;
            let snap = match self.settled().await {
                Ok(s) => s,
                Err(e) => return (generation, Err(e)),
            };
            generation = snap.generation;
            let failed = match self.send_commit(&snap, &pending).await {
                Ok(failed) => failed,
                Err(e) if e.is_retriable() && attempts <= self.config.commit_retries => {
                    self.transport.forget_coordinator(&self.config.group_id);
                    sleep(self.config.retry_backoff).await;
                    continue;
                }
                Err(e) => return (generation, Err(e)),
            };
            let Some(&(_, code)) = failed.first() else {
                return (generation, Ok(()));
            };
            // The most severe reaction among the failed partitions decides.
            let reactions: Vec<Reaction> = failed
                .iter()
                .map(|(_, c)| reaction::offset_commit(*c))
                .collect();
            let pick = |r: Reaction| {
                failed
                    .iter()
                    .find(|(_, c)| reaction::offset_commit(*c) == r)
            };
            if let Some((_, c)) = pick(Reaction::Fenced) {
                self.tell_member(&snap, *c);
                return (
                    generation,
                    Err(Error::FencedInstanceId {
                        group: self.config.group_id.clone(),
                        instance_id: self.config.group_instance_id.clone().unwrap_or_default(),
                    }),
                );
            }
            if let Some((_, c)) = pick(Reaction::ResetMemberAndRejoin)
                .or_else(|| pick(Reaction::ResetGenerationAndRejoin))
            {
                self.tell_member(&snap, *c);
                return (
                    generation,
                    Err(broker(
                        "OffsetCommit",
                        *c,
                        format!("generation {generation} is no longer valid; the member rejoins"),
                    )),
                );
            }
            if let Some((_, c)) = pick(Reaction::Fatal) {
                return (generation, Err(broker("OffsetCommit", *c, "not retriable")));
            }
            if attempts > self.config.commit_retries {
                return (
                    generation,
                    Err(broker(
                        "OffsetCommit",
                        code,
                        format!("gave up after {attempts} attempts"),
                    )),
                );
            }
            let failed_set: BTreeSet<&TopicPartition> = failed.iter().map(|(tp, _)| tp).collect();
            pending.retain(|tp, _| failed_set.contains(tp));
            if reactions.contains(&Reaction::RetryAfterRebalance) {
                // Wait until the member is stable in a newer generation, then resend what it still owns.
                let mut rx = self.snapshot.clone();
                let waited = timeout(
                    self.config.rebalance_timeout,
                    rx.wait_for(|s| {
                        !matches!(
                            s.state,
                            MemberState::PreparingRebalance | MemberState::CompletingRebalance
                        ) && s.generation != generation
                    }),
                )
                .await;
                let now = match waited {
                    Ok(Ok(s)) => s.clone(),
                    Ok(Err(_)) => return (generation, Err(Error::Closed)),
                    Err(_) => {
                        return (
                            generation,
                            Err(broker(
                                "OffsetCommit",
                                ErrorCode::RebalanceInProgress,
                                "the rebalance did not complete within the rebalance timeout",
                            )),
                        )
                    }
                };
                let moved: Vec<String> = pending
                    .keys()
                    .filter(|tp| !now.assignment.contains(*tp))
                    .map(ToString::to_string)
                    .collect();
                if !moved.is_empty() {
                    return (
                        generation,
                        Err(broker(
                            "OffsetCommit",
                            ErrorCode::RebalanceInProgress,
                            format!("partitions revoked by the rebalance: {}", moved.join(", ")),
                        )),
                    );
                }
                continue;
            }
            if reactions.contains(&Reaction::Rediscover) {
                self.transport.forget_coordinator(&self.config.group_id);
            }
            sleep(self.config.retry_backoff).await;
        }
    }

    fn tell_member(&self, snap: &MemberSnapshot, code: ErrorCode) {
        let _ = self.control.try_send(Control {
            api: "OffsetCommit",
            generation: snap.generation,
            member_id: snap.member_id.clone(),
            code,
        });
    }

    /// One OffsetCommit; returns the partitions that failed with their codes.
    async fn send_commit(
        &self,
        snap: &MemberSnapshot,
        offsets: &BTreeMap<TopicPartition, OffsetAndMetadata>,
    ) -> Result<Vec<(TopicPartition, ErrorCode)>> {
        let mut topics: BTreeMap<&str, Vec<(i32, &OffsetAndMetadata)>> = BTreeMap::new();
        for (tp, om) in offsets {
            topics
                .entry(&tp.topic)
                .or_default()
                .push((tp.partition, om));
        }
        let group = self.config.group_id.clone();
        let instance = self.config.group_instance_id.clone();
        let member_id = snap.member_id.clone();
        let generation = snap.generation;
        let topics: Vec<(String, Vec<PartitionOffset>)> = topics
            .into_iter()
            .map(|(t, ps)| {
                (
                    t.to_owned(),
                    ps.into_iter()
                        .map(|(p, om)| (p, om.offset, om.leader_epoch, om.metadata.clone()))
                        .collect(),
                )
            })
            .collect();
        let response = self
            .transport
            .call_coordinator(&self.config.group_id, move |version| OffsetCommitRequest {
                group_id: group,
                generation_id_or_member_epoch: generation,
                member_id,
                group_instance_id: if version >= 7 { instance } else { None },
                topics: topics
                    .into_iter()
                    .map(|(name, ps)| OffsetCommitRequestTopic {
                        name,
                        partitions: ps
                            .into_iter()
                            .map(
                                |(p, offset, epoch, metadata)| OffsetCommitRequestPartition {
                                    partition_index: p,
                                    committed_offset: offset,
                                    committed_leader_epoch: if version >= 6 {
                                        epoch.unwrap_or(-1)
                                    } else {
                                        -1
                                    },
                                    committed_metadata: Some(metadata.unwrap_or_default()),
                                    ..Default::default()
                                },
                            )
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            })
            .await?;
        let mut failed = Vec::new();
        let mut answered = BTreeSet::new();
        for t in &response.topics {
            for p in &t.partitions {
                let tp = TopicPartition::new(t.name.clone(), p.partition_index);
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

    /// Committed offsets of `partitions` (`None`: nothing committed), asking for stable offsets.
    pub(crate) async fn committed(
        &self,
        partitions: BTreeSet<TopicPartition>,
    ) -> Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>> {
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let outcome = self.fetch_once(&partitions).await;
            let code = match outcome {
                Ok(Ok(found)) => return Ok(found),
                Ok(Err(code)) => code,
                Err(e) if e.is_retriable() && attempts <= self.config.commit_retries => {
                    self.transport.forget_coordinator(&self.config.group_id);
                    sleep(self.config.retry_backoff).await;
                    continue;
                }
                Err(e) => return Err(e),
            };
            match reaction::offset_fetch(code) {
                Reaction::RetryAfterBackoff if attempts <= self.config.commit_retries => {}
                Reaction::Rediscover if attempts <= self.config.commit_retries => {
                    self.transport.forget_coordinator(&self.config.group_id);
                }
                _ => {
                    return Err(broker(
                        "OffsetFetch",
                        code,
                        format!("after {attempts} attempts"),
                    ))
                }
            }
            sleep(self.config.retry_backoff).await;
        }
    }

    /// One OffsetFetch: the offsets, or the first error code (group level, then partition level).
    async fn fetch_once(
        &self,
        partitions: &BTreeSet<TopicPartition>,
    ) -> Result<Result<BTreeMap<TopicPartition, Option<OffsetAndMetadata>>, ErrorCode>> {
        let mut by_topic: BTreeMap<String, Vec<i32>> = BTreeMap::new();
        for tp in partitions {
            by_topic
                .entry(tp.topic.clone())
                .or_default()
                .push(tp.partition);
        }
        let group = self.config.group_id.clone();
        let response = self
            .transport
            .call_coordinator(&self.config.group_id, move |version| {
                if version >= 8 {
                    OffsetFetchRequest {
                        groups: vec![OffsetFetchRequestGroup {
                            group_id: group,
                            topics: Some(
                                by_topic
                                    .into_iter()
                                    .map(|(name, partition_indexes)| OffsetFetchRequestTopics {
                                        name,
                                        partition_indexes,
                                        ..Default::default()
                                    })
                                    .collect(),
                            ),
                            ..Default::default()
                        }],
                        require_stable: true,
                        ..Default::default()
                    }
                } else {
                    OffsetFetchRequest {
                        group_id: group,
                        topics: Some(
                            by_topic
                                .into_iter()
                                .map(|(name, partition_indexes)| OffsetFetchRequestTopic {
                                    name,
                                    partition_indexes,
                                    ..Default::default()
                                })
                                .collect(),
                        ),
                        require_stable: version >= 7,
                        ..Default::default()
                    }
                }
            })
            .await?;
        let mut found = BTreeMap::new();
        let mut record =
            |topic: &str, p: i32, offset: i64, epoch: i32, metadata: &Option<String>, code: i16| {
                let code = ErrorCode::from_i16(code);
                if !code.is_ok() {
                    return Some(code);
                }
                let value = (offset >= 0).then(|| OffsetAndMetadata {
                    offset,
                    leader_epoch: (epoch >= 0).then_some(epoch),
                    metadata: metadata.clone().filter(|m| !m.is_empty()),
                });
                found.insert(TopicPartition::new(topic, p), value);
                None
            };
        if let Some(g) = response.groups.first() {
            let code = ErrorCode::from_i16(g.error_code);
            if !code.is_ok() {
                return Ok(Err(code));
            }
            for t in &g.topics {
                for p in &t.partitions {
                    if let Some(code) = record(
                        &t.name,
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch,
                        &p.metadata,
                        p.error_code,
                    ) {
                        return Ok(Err(code));
                    }
                }
            }
        } else {
            let code = ErrorCode::from_i16(response.error_code);
            if !code.is_ok() {
                return Ok(Err(code));
            }
            for t in &response.topics {
                for p in &t.partitions {
                    if let Some(code) = record(
                        &t.name,
                        p.partition_index,
                        p.committed_offset,
                        p.committed_leader_epoch,
                        &p.metadata,
                        p.error_code,
                    ) {
                        return Ok(Err(code));
                    }
                }
            }
        }
        for tp in partitions {
            found.entry(tp.clone()).or_insert(None);
        }
        Ok(Ok(found))
    }
}
