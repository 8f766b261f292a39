//! One share session with one broker (KIP-932), as Java's `ShareSessionHandler` keeps it, sans
//! I/O: the epoch of the next request (0 opens a session, then 1, 2, … wrapping to 1, -1 closes
//! it), the share-partitions the broker fetches in it, and the verdicts waiting to go.
//!
//! - A ShareFetch opening a session lists every share-partition to fetch; later ones list only
//!   what was added (and what carries verdicts), and forget what was dropped.
//! - Verdicts ride on the next ShareFetch. When no fetch is due (the member holds as many records
//!   as it may), they wait for one until the oldest has waited `fetch.max.wait.ms` (what a fetch
//!   in flight would make it wait too) or `max.poll.records` of them wait, then go in a
//!   ShareAcknowledge of their own ([`Session::verdicts_due`]); shutting down, they go at once. Renewals go in a
//!   ShareAcknowledge (`IsRenewAck`, v2 and later), never in a fetch: Java's client sends a renewing
//!   fetch with every limit at 0, which fetches nothing either.
//! - Requests of one session go one at a time, each answered before the next is built.
//! - An answer without error moves the epoch on and the session holds what the request said.
//!   SHARE_SESSION_NOT_FOUND, INVALID_SHARE_SESSION_EPOCH, SHARE_SESSION_LIMIT_REACHED and a
//!   request that got no answer start it over (epoch 0: the broker closes the old one and opens a
//!   new one); any other top-level error moves the epoch on, as Java's does (the broker counted
//!   the request).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::share_acknowledge::{
    AcknowledgePartition, AcknowledgeTopic, AcknowledgementBatch as AckBatchWire,
};
use mooring_wire::messages::share_fetch::{
    AcknowledgementBatch, FetchPartition, FetchTopic, ForgottenTopic,
};
use mooring_wire::messages::{ShareAcknowledgeRequest, ShareFetchRequest};
use mooring_wire::primitives::Uuid;
use tokio::time::Instant;

use super::ack::{AckBatch, Acknowledge, PartitionAcks};
use crate::TopicPartition;

/// The epoch that closes a session.
const FINAL_EPOCH: i32 = -1;

/// What a ShareFetch asks for besides its share-partitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FetchLimits {
    pub max_wait_ms: i32,
    pub min_bytes: i32,
    pub max_bytes: i32,
    pub max_records: i32,
    /// `share.acquire.mode`: 0 batch-optimized, 1 record-limit (v2 and later).
    pub acquire_mode: i8,
}

/// What one request of the session carried, to read its answer by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    pub epoch: i32,
    /// The verdicts it carried, by share-partition.
    pub acks: BTreeMap<TopicPartition, PartitionAcks>,
    /// What the session holds once it is answered.
    pub session: BTreeSet<TopicPartition>,
    /// It closes the session.
    pub closes: bool,
}

/// How a request of the session ended, for the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answered {
    /// Answered with this top-level code.
    Code(ErrorCode),
    /// No answer (transport failure, timeout).
    Lost,
}

/// The session's part of what an answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionOutcome {
    /// The request was taken: read its share-partitions.
    Taken,
    /// The session starts over; the request's verdicts were not taken.
    StartOver,
    /// Refused as a whole with this code; the request's verdicts were not taken.
    Refused(ErrorCode),
}

/// Names a share-partition by topic id.
pub(crate) type TopicIds = BTreeMap<String, Uuid>;

/// One broker's share session.
#[derive(Debug, Default)]
pub(crate) struct Session {
    epoch: i32,
    in_session: BTreeSet<TopicPartition>,
    acks: BTreeMap<TopicPartition, PartitionAcks>,
    /// When the oldest verdict waiting was queued.
    waiting_since: Option<Instant>,
    /// A request is on its way.
    pub in_flight: bool,
}

fn next_epoch(epoch: i32) -> i32 {
    match epoch {
        e if e < 0 => FINAL_EPOCH,
        i32::MAX => 1,
        e => e + 1,
    }
}

impl Session {
    /// Whether the broker has a session open for this member.
    pub(crate) fn is_open(&self) -> bool {
        self.epoch > 0
    }

    /// Verdicts wait to be sent.
    pub(crate) fn has_acks(&self) -> bool {
        self.acks.values().any(|a| !a.is_empty())
    }

    /// Renewals wait to be sent.
    pub(crate) fn has_renewals(&self) -> bool {
        self.acks.values().any(PartitionAcks::renews)
    }

    /// The final verdicts waiting for `tp`, to add to at `now`.
    pub(crate) fn verdicts_for(&mut self, tp: &TopicPartition, now: Instant) -> &mut PartitionAcks {
        self.waiting_since.get_or_insert(now);
        self.partition_acks(tp)
    }

    /// Queues the renewal of `offset`'s lock.
    pub(crate) fn renew(&mut self, tp: &TopicPartition, offset: i64) {
        self.partition_acks(tp).add(offset, Acknowledge::Renew);
    }

    fn partition_acks(&mut self, tp: &TopicPartition) -> &mut PartitionAcks {
        // The key is cloned once per share-partition, not once per verdict.
        if !self.acks.contains_key(tp) {
            self.acks.insert(tp.clone(), PartitionAcks::default());
        }
        self.acks.get_mut(tp).expect("inserted above")
    }

    /// The verdicts waiting, taken out (the share-partition left this broker: they cannot be
    /// sent elsewhere).
    pub(crate) fn take_acks(&mut self, tp: &TopicPartition) -> Option<PartitionAcks> {
        let taken = self.acks.remove(tp).filter(|a| !a.is_empty());
        self.forget_wait_if_no_finals();
        taken
    }

    /// Whether the final verdicts waiting should go now, without a fetch to carry them: the
    /// oldest has waited `linger`, or `batch` of them wait.
    pub(crate) fn verdicts_due(&self, now: Instant, linger: Duration, batch: usize) -> bool {
        self.verdicts_due_at(linger).is_some_and(|at| now >= at)
            || self.acks.values().map(PartitionAcks::finals).sum::<usize>() >= batch
    }

    /// When the final verdicts waiting are due by age (`None`: none wait).
    pub(crate) fn verdicts_due_at(&self, linger: Duration) -> Option<Instant> {
        self.waiting_since
            .filter(|_| self.acks.values().any(|a| a.finals() > 0))
            .map(|since| since + linger)
    }

    fn forget_wait_if_no_finals(&mut self) {
        if self.acks.values().all(|a| a.finals() == 0) {
            self.waiting_since = None;
        }
    }

    /// The next ShareFetch: fetching `wanted` (what is not in the session is added, what is in it
    /// and not wanted forgotten), carrying every verdict but renewals. `None` when a share-partition
    /// to name has no known topic id.
    pub(crate) fn fetch(
        &mut self,
        group: &str,
        member_id: &str,
        wanted: &BTreeSet<TopicPartition>,
        ids: &TopicIds,
        limits: FetchLimits,
    ) -> Option<(ShareFetchRequest, Sent)> {
        let acks = self.take_final_acks();
        let (added, forgotten): (Vec<&TopicPartition>, Vec<&TopicPartition>) = if self.epoch == 0 {
            (wanted.iter().collect(), Vec::new())
        } else {
            (
                wanted.difference(&self.in_session).collect(),
                self.in_session.difference(wanted).collect(),
            )
        };
        let mut topics: BTreeMap<Uuid, BTreeMap<i32, Vec<AcknowledgementBatch>>> = BTreeMap::new();
        for tp in &added {
            topics
                .entry(*ids.get(&tp.topic)?)
                .or_default()
                .entry(tp.partition)
                .or_default();
        }
        for (tp, partition_acks) in &acks {
            let batches = partition_acks.batches().into_iter().map(fetch_batch);
            topics
                .entry(*ids.get(&tp.topic)?)
                .or_default()
                .entry(tp.partition)
                .or_default()
                .extend(batches);
        }
        // Verdicts for a share-partition no longer fetched are sent, then it is forgotten.
        let mut forget: BTreeSet<&TopicPartition> = forgotten.iter().copied().collect();
        forget.extend(acks.keys().filter(|tp| !wanted.contains(*tp)));
        let mut forgotten_topics: BTreeMap<Uuid, Vec<i32>> = BTreeMap::new();
        for tp in forget {
            forgotten_topics
                .entry(*ids.get(&tp.topic)?)
                .or_default()
                .push(tp.partition);
        }
        let request = ShareFetchRequest {
            group_id: Some(group.to_owned()),
            member_id: Some(member_id.to_owned()),
            share_session_epoch: self.epoch,
            max_wait_ms: limits.max_wait_ms,
            min_bytes: limits.min_bytes,
            max_bytes: limits.max_bytes,
            max_records: limits.max_records,
            batch_size: limits.max_records,
            share_acquire_mode: limits.acquire_mode,
            topics: topics
                .into_iter()
                .map(|(topic_id, partitions)| FetchTopic {
                    topic_id,
                    partitions: partitions
                        .into_iter()
                        .map(
                            |(partition_index, acknowledgement_batches)| FetchPartition {
                                partition_index,
                                acknowledgement_batches,
                                ..Default::default()
                            },
                        )
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            forgotten_topics_data: forgotten_topics
                .into_iter()
                .map(|(topic_id, partitions)| ForgottenTopic {
                    topic_id,
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        self.in_flight = true;
        let sent = Sent {
            epoch: self.epoch,
            acks,
            session: wanted.clone(),
            closes: false,
        };
        Some((request, sent))
    }

    /// A ShareAcknowledge with every verdict waiting (renewals included when `renew`, the
    /// version negotiated having `IsRenewAck`); `None` when no session is open (a fetch opens
    /// one) or nothing is to be sent.
    pub(crate) fn acknowledge(
        &mut self,
        group: &str,
        member_id: &str,
        ids: &TopicIds,
        renew: bool,
    ) -> Option<(ShareAcknowledgeRequest, Sent)> {
        if !self.is_open() {
            return None;
        }
        let acks = if renew {
            self.waiting_since = None;
            std::mem::take(&mut self.acks)
        } else {
            self.take_final_acks()
        };
        let acks: BTreeMap<_, _> = acks.into_iter().filter(|(_, a)| !a.is_empty()).collect();
        if acks.is_empty() {
            return None;
        }
        let request = self.acknowledge_request(group, member_id, ids, &acks, self.epoch)?;
        self.in_flight = true;
        let sent = Sent {
            epoch: self.epoch,
            acks,
            session: self.in_session.clone(),
            closes: false,
        };
        Some((request, sent))
    }

    /// The ShareAcknowledge that closes the session (epoch -1), with every final verdict
    /// waiting; `None` when no session is open.
    pub(crate) fn close(
        &mut self,
        group: &str,
        member_id: &str,
        ids: &TopicIds,
    ) -> Option<(ShareAcknowledgeRequest, Sent)> {
        if !self.is_open() {
            return None;
        }
        let acks = self.take_final_acks();
        let request = self.acknowledge_request(group, member_id, ids, &acks, FINAL_EPOCH)?;
        self.in_flight = true;
        let sent = Sent {
            epoch: FINAL_EPOCH,
            acks,
            session: BTreeSet::new(),
            closes: true,
        };
        Some((request, sent))
    }

    fn acknowledge_request(
        &self,
        group: &str,
        member_id: &str,
        ids: &TopicIds,
        acks: &BTreeMap<TopicPartition, PartitionAcks>,
        epoch: i32,
    ) -> Option<ShareAcknowledgeRequest> {
        let mut topics: BTreeMap<Uuid, Vec<AcknowledgePartition>> = BTreeMap::new();
        for (tp, partition_acks) in acks {
            topics
                .entry(*ids.get(&tp.topic)?)
                .or_default()
                .push(AcknowledgePartition {
                    partition_index: tp.partition,
                    acknowledgement_batches: partition_acks
                        .batches()
                        .into_iter()
                        .map(acknowledge_batch)
                        .collect(),
                    ..Default::default()
                });
        }
        Some(ShareAcknowledgeRequest {
            group_id: Some(group.to_owned()),
            member_id: Some(member_id.to_owned()),
            share_session_epoch: epoch,
            is_renew_ack: acks.values().any(PartitionAcks::renews),
            topics: topics
                .into_iter()
                .map(|(topic_id, partitions)| AcknowledgeTopic {
                    topic_id,
                    partitions,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        })
    }

    /// The final verdicts waiting, taken out; renewals stay.
    fn take_final_acks(&mut self) -> BTreeMap<TopicPartition, PartitionAcks> {
        let mut out = BTreeMap::new();
        for (tp, partition_acks) in &mut self.acks {
            let taken = partition_acks.take_finals();
            if !taken.is_empty() {
                out.insert(tp.clone(), taken);
            }
        }
        self.acks.retain(|_, a| !a.is_empty());
        self.waiting_since = None;
        out
    }

    /// The request `sent` ended as `answered`: the session's epoch and share-partitions follow.
    pub(crate) fn answered(&mut self, sent: &Sent, answered: Answered) -> SessionOutcome {
        self.in_flight = false;
        match answered {
            Answered::Code(ErrorCode::None) => {
                if sent.closes {
                    *self = Session::default();
                } else {
                    self.epoch = next_epoch(sent.epoch);
                    self.in_session = sent.session.clone();
                }
                SessionOutcome::Taken
            }
            Answered::Code(
                ErrorCode::ShareSessionNotFound
                | ErrorCode::InvalidShareSessionEpoch
                | ErrorCode::ShareSessionLimitReached,
            )
            | Answered::Lost => {
                self.epoch = 0;
                self.in_session.clear();
                SessionOutcome::StartOver
            }
            Answered::Code(code) => {
                self.epoch = next_epoch(sent.epoch);
                SessionOutcome::Refused(code)
            }
        }
    }
}

fn fetch_batch(b: AckBatch) -> AcknowledgementBatch {
    AcknowledgementBatch {
        first_offset: b.first,
        last_offset: b.last,
        acknowledge_types: b.types,
        ..Default::default()
    }
}

fn acknowledge_batch(b: AckBatch) -> AckBatchWire {
    AckBatchWire {
        first_offset: b.first,
        last_offset: b.last,
        acknowledge_types: b.types,
        ..Default::default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::share::ack::Acknowledge;

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    fn ids() -> TopicIds {
        BTreeMap::from([("t".to_string(), Uuid([7; 16]))])
    }

    const LIMITS: FetchLimits = FetchLimits {
        max_wait_ms: 500,
        min_bytes: 1,
        max_bytes: 1 << 20,
        max_records: 500,
        acquire_mode: 0,
    };

    fn listed(r: &ShareFetchRequest) -> Vec<(i32, usize)> {
        r.topics
            .iter()
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (p.partition_index, p.acknowledgement_batches.len()))
            })
            .collect()
    }

    #[test]
    fn a_session_opens_with_everything_then_lists_only_changes_and_forgets_what_is_dropped() {
        let mut s = Session::default();
        let wanted = BTreeSet::from([tp(0), tp(1)]);
        let (r, sent) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
        assert_eq!(
            (r.share_session_epoch, listed(&r)),
            (0, vec![(0, 0), (1, 0)])
        );
        assert_eq!((r.max_records, r.batch_size), (500, 500));
        assert_eq!(
            s.answered(&sent, Answered::Code(ErrorCode::None)),
            SessionOutcome::Taken
        );
        assert!(s.is_open());
        // Nothing changed: an incremental fetch lists nothing.
        let (r, sent) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
        assert_eq!((r.share_session_epoch, listed(&r)), (1, vec![]));
        s.answered(&sent, Answered::Code(ErrorCode::None));
        // t-1 dropped, t-2 added, a verdict for t-0.
        s.verdicts_for(&tp(0), Instant::now())
            .add(4, Acknowledge::Accept);
        let wanted = BTreeSet::from([tp(0), tp(2)]);
        let (r, sent) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
        assert_eq!(r.share_session_epoch, 2);
        assert_eq!(listed(&r), vec![(0, 1), (2, 0)]);
        assert_eq!(r.forgotten_topics_data[0].partitions, vec![1]);
        assert_eq!(sent.acks[&tp(0)].len(), 1);
        assert!(!s.has_acks(), "the verdicts went with the fetch");
    }

    #[test]
    fn session_errors_and_lost_requests_start_over_and_other_codes_move_the_epoch_on() {
        for (answered, outcome, epoch) in [
            (
                Answered::Code(ErrorCode::ShareSessionNotFound),
                SessionOutcome::StartOver,
                0,
            ),
            (
                Answered::Code(ErrorCode::InvalidShareSessionEpoch),
                SessionOutcome::StartOver,
                0,
            ),
            (
                Answered::Code(ErrorCode::ShareSessionLimitReached),
                SessionOutcome::StartOver,
                0,
            ),
            (Answered::Lost, SessionOutcome::StartOver, 0),
            (
                Answered::Code(ErrorCode::UnknownServerError),
                SessionOutcome::Refused(ErrorCode::UnknownServerError),
                2,
            ),
        ] {
            let mut s = Session::default();
            let wanted = BTreeSet::from([tp(0)]);
            let (_, sent) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
            s.answered(&sent, Answered::Code(ErrorCode::None));
            let (_, sent) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
            assert_eq!(s.answered(&sent, answered), outcome);
            assert_eq!(s.epoch, epoch, "{answered:?}");
            let (r, _) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
            assert_eq!(listed(&r).len(), usize::from(epoch == 0), "{answered:?}");
        }
    }

    #[test]
    fn renewals_go_only_in_an_acknowledge_that_says_so_and_the_close_carries_final_verdicts() {
        let mut s = Session::default();
        s.verdicts_for(&tp(0), Instant::now())
            .add(1, Acknowledge::Accept);
        assert!(
            s.acknowledge("g", "m", &ids(), true).is_none(),
            "no session open yet"
        );
        let wanted = BTreeSet::from([tp(0)]);
        let (r, sent) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
        assert_eq!(listed(&r), vec![(0, 1)], "opened with the verdict");
        s.answered(&sent, Answered::Code(ErrorCode::None));
        s.renew(&tp(0), 2);
        s.verdicts_for(&tp(0), Instant::now())
            .add(3, Acknowledge::Release);
        let (r, sent) = s.fetch("g", "m", &wanted, &ids(), LIMITS).unwrap();
        assert!(!r.is_renew_ack);
        assert_eq!(
            sent.acks[&tp(0)].iter().collect::<Vec<_>>(),
            [(3, Acknowledge::Release, 0)]
        );
        assert!(s.has_renewals());
        s.answered(&sent, Answered::Code(ErrorCode::None));
        assert!(s.acknowledge("g", "m", &ids(), false).is_none());
        let (r, sent) = s.acknowledge("g", "m", &ids(), true).unwrap();
        assert!(r.is_renew_ack);
        assert_eq!(
            r.topics[0].partitions[0].acknowledgement_batches[0].acknowledge_types,
            vec![4]
        );
        s.answered(&sent, Answered::Code(ErrorCode::None));
        s.verdicts_for(&tp(0), Instant::now())
            .add(5, Acknowledge::Accept);
        let (r, sent) = s.close("g", "m", &ids()).unwrap();
        assert_eq!(r.share_session_epoch, -1);
        assert!(!r.is_renew_ack);
        s.answered(&sent, Answered::Code(ErrorCode::None));
        assert!(!s.is_open());
    }
}
