//! Reading what each request's end says: the session's part (`Session::answered`), then the
//! share-partitions' records (to the ledger and the workers), the verdicts' answers (counted,
//! renewals rescheduled), and the error table's reactions (module docs).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use mooring_client::Error as ClientError;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::share_fetch::AcquiredRecords;
use mooring_wire::messages::{
    Message, ShareAcknowledgeRequest, ShareAcknowledgeResponse, ShareFetchRequest,
    ShareFetchResponse,
};
use mooring_wire::primitives::Uuid;
use tokio::time::Instant;

use super::{Answer, Ended, Kind, ShareFetcher};
use crate::error::ConsumerError;
use crate::processing::ConsumerRecord;
use crate::share::ack::{Acknowledge, PartitionAcks};
use crate::share::events::ShareEvent;
use crate::share::records::{acquired, check_ranges};
use crate::share::session::{Answered, Sent, SessionOutcome};
use crate::TopicPartition;

impl ShareFetcher {
    /// A request's end.
    pub(super) fn finished(&mut self, f: Ended) {
        if let Some(version) = f.version {
            self.renews.insert(f.node, version >= 2);
        }
        let code = match &f.result {
            Ok(Answer::Fetch(r)) => ErrorCode::from_i16(r.error_code),
            Ok(Answer::Acknowledge(r)) => ErrorCode::from_i16(r.error_code),
            Err(_) => ErrorCode::None,
        };
        let answered = match &f.result {
            Ok(_) => Answered::Code(code),
            Err(_) => Answered::Lost,
        };
        let session = self.sessions.entry(f.node).or_default();
        let outcome = session.answered(&f.sent, answered);
        if f.sent.closes {
            self.sessions.remove(&f.node);
        }
        match (outcome, f.result) {
            (SessionOutcome::Taken, Ok(Answer::Fetch(r))) => self.fetched(f.node, &f.sent, f.at, r),
            (SessionOutcome::Taken, Ok(Answer::Acknowledge(r))) => {
                self.acknowledged(f.node, &f.sent, f.at, r)
            }
            (_, Err(error)) => self.request_failed(f.node, f.kind, &f.sent, error),
            (SessionOutcome::StartOver | SessionOutcome::Refused(_), Ok(answer)) => {
                let message = match answer {
                    Answer::Fetch(r) => r.error_message,
                    Answer::Acknowledge(r) => r.error_message,
                };
                self.refused(f.node, &f.sent, code, message);
            }
        }
    }

    /// The request got no answer.
    fn request_failed(&mut self, node: i32, kind: Kind, sent: &Sent, error: ClientError) {
        self.verdicts_lost(sent, ErrorCode::UnknownServerError);
        if let ClientError::UnsupportedVersion { api, broker } = &error {
            if *api == ShareFetchRequest::NAME || *api == ShareAcknowledgeRequest::NAME {
                self.shared
                    .fail(ConsumerError::Client(ClientError::ShareGroupsUnsupported {
                        group: self.shared.config.group.group_id.clone(),
                        reason: format!("{broker} does not offer {api} v1 or later (ApiVersions)"),
                    }));
                return;
            }
        }
        if error.is_fatal() {
            self.shared.fail(error.into());
            return;
        }
        tracing::info!(node, ?kind, %error, "share request failed; the session starts over");
        self.back_off(node);
    }

    /// The request was refused as a whole.
    fn refused(&mut self, node: i32, sent: &Sent, code: ErrorCode, message: Option<String>) {
        self.verdicts_lost(sent, code);
        if matches!(
            code,
            ErrorCode::GroupAuthorizationFailed | ErrorCode::TopicAuthorizationFailed
        ) {
            let group = self.shared.config.group.group_id.clone();
            let topics: Vec<String> = self.assigned.iter().map(|tp| tp.topic.clone()).collect();
            let principal = self.shared.fetch_client.config().principal();
            let error = ClientError::from_code(
                "ShareFetch",
                code,
                message,
                &group,
                || topics,
                || principal,
            );
            self.shared.fail(error.into());
            return;
        }
        tracing::info!(node, %code, ?message, "share request refused");
        if !matches!(
            code,
            ErrorCode::ShareSessionNotFound
                | ErrorCode::InvalidShareSessionEpoch
                | ErrorCode::ShareSessionLimitReached
        ) {
            self.back_off(node);
        }
    }

    fn back_off(&mut self, node: i32) {
        self.backoff.insert(
            node,
            Instant::now() + self.shared.config.client.retry_backoff,
        );
        self.refresh_wanted = true;
    }

    /// The verdicts a request carried were not taken (`code`: the request's refusal, or
    /// UNKNOWN_SERVER_ERROR for no answer).
    fn verdicts_lost(&mut self, sent: &Sent, code: ErrorCode) {
        for (tp, acks) in &sent.acks {
            self.acks_answered(tp, acks, code, Instant::now(), None);
        }
    }

    /// The share-partition name of an answer's topic id.
    fn name_of(&self, id: Uuid) -> Option<String> {
        self.ids
            .iter()
            .find(|(_, known)| **known == id)
            .map(|(name, _)| name.clone())
    }

    fn fetched(&mut self, node: i32, sent: &Sent, at: Instant, response: ShareFetchResponse) {
        if response.acquisition_lock_timeout_ms > 0 {
            self.lock =
                Duration::from_millis(response.acquisition_lock_timeout_ms.unsigned_abs().into());
        }
        let mut answered: BTreeSet<TopicPartition> = BTreeSet::new();
        for topic in response.responses {
            let Some(name) = self.name_of(topic.topic_id) else {
                continue;
            };
            let name: Arc<str> = Arc::from(name.as_str());
            for p in topic.partitions {
                let tp = TopicPartition::new(&*name, p.partition_index);
                answered.insert(tp.clone());
                if let Some(acks) = sent.acks.get(&tp) {
                    self.acks_answered(
                        &tp,
                        acks,
                        ErrorCode::from_i16(p.acknowledge_error_code),
                        at,
                        None,
                    );
                }
                match ErrorCode::from_i16(p.error_code) {
                    ErrorCode::None => {
                        self.take_records(node, &tp, &name, p.records, &p.acquired_records, at)
                    }
                    ErrorCode::NotLeaderOrFollower | ErrorCode::FencedLeaderEpoch => {
                        self.leader_moved(&tp, p.current_leader.leader_id)
                    }
                    ErrorCode::TopicAuthorizationFailed => {
                        let principal = self.shared.fetch_client.config().principal();
                        self.shared.fail(ConsumerError::TopicAuthorizationFailed {
                            topics: vec![tp.topic.clone()],
                            principal,
                        });
                    }
                    code => {
                        tracing::info!(partition = %tp, %code, "share fetch error; fetching it again after the back-off");
                        self.back_off(node);
                    }
                }
            }
        }
        // Verdicts for share-partitions the answer did not list were taken with the request.
        for (tp, acks) in &sent.acks {
            if !answered.contains(tp) {
                self.acks_answered(tp, acks, ErrorCode::None, at, None);
            }
        }
    }

    fn acknowledged(
        &mut self,
        _node: i32,
        sent: &Sent,
        at: Instant,
        response: ShareAcknowledgeResponse,
    ) {
        let lock = (response.acquisition_lock_timeout_ms > 0).then(|| {
            Duration::from_millis(response.acquisition_lock_timeout_ms.unsigned_abs().into())
        });
        let mut answered: BTreeSet<TopicPartition> = BTreeSet::new();
        for topic in response.responses {
            let Some(name) = self.name_of(topic.topic_id) else {
                continue;
            };
            for p in topic.partitions {
                let tp = TopicPartition::new(name.clone(), p.partition_index);
                answered.insert(tp.clone());
                if let Some(acks) = sent.acks.get(&tp) {
                    self.acks_answered(&tp, acks, ErrorCode::from_i16(p.error_code), at, lock);
                }
                if matches!(
                    ErrorCode::from_i16(p.error_code),
                    ErrorCode::NotLeaderOrFollower | ErrorCode::FencedLeaderEpoch
                ) {
                    self.leader_moved(&tp, p.current_leader.leader_id);
                }
            }
        }
        for (tp, acks) in &sent.acks {
            if !answered.contains(tp) {
                self.acks_answered(tp, acks, ErrorCode::None, at, lock);
            }
        }
    }

    /// The broker's answer to a share-partition's verdicts (`code`), sent at `at`.
    fn acks_answered(
        &mut self,
        tp: &TopicPartition,
        acks: &PartitionAcks,
        code: ErrorCode,
        at: Instant,
        lock: Option<Duration>,
    ) {
        let mut by_kind: BTreeMap<Acknowledge, Vec<i64>> = BTreeMap::new();
        for (offset, ack, _) in acks.iter() {
            by_kind.entry(ack).or_default().push(offset);
        }
        let renewals = by_kind
            .get(&Acknowledge::Renew)
            .cloned()
            .unwrap_or_default();
        let finals = by_kind
            .iter()
            .filter(|(a, _)| a.is_final())
            .map(|(_, o)| o.len() as u64)
            .sum();
        let counters = &self.shared.counters;
        match code {
            ErrorCode::None => {
                for (ack, offsets) in &by_kind {
                    counters.acknowledged(*ack, offsets.len() as u64);
                }
                for delivery_count in acks.released() {
                    counters.released_at(delivery_count);
                }
                let lock = lock.unwrap_or(self.lock);
                self.ledger.renewed(tp, &renewals, at, Some(lock));
            }
            ErrorCode::InvalidRecordState => {
                tracing::info!(partition = %tp, "the broker refused verdicts: a record's lock had run out");
                counters.lock_expired(finals);
                counters.renewals_refused(renewals.len() as u64);
                self.ledger.renewed(tp, &renewals, at, None);
            }
            code => {
                tracing::info!(partition = %tp, %code, "verdicts not taken");
                counters.acknowledgements_failed(finals);
                counters.renewals_refused(renewals.len() as u64);
                self.ledger.renewed(tp, &renewals, at, None);
            }
        }
        let error = (code != ErrorCode::None).then_some(code);
        for (acknowledge, offsets) in by_kind {
            self.shared.events.send(ShareEvent::Acknowledged {
                partition: tp.clone(),
                acknowledge,
                offsets,
                error,
            });
        }
    }

    /// NOT_LEADER_OR_FOLLOWER: fetched from the leader named (or after a refresh); what was held
    /// from the old one is given up, its verdicts with it.
    fn leader_moved(&mut self, tp: &TopicPartition, leader: i32) {
        let given_up = self.ledger.take_partition(tp).len();
        let lost = self
            .leaders
            .get(tp)
            .and_then(|node| self.sessions.get_mut(node))
            .and_then(|s| s.take_acks(tp))
            .map_or(0, |a| a.len());
        self.shared
            .counters
            .acknowledgements_failed((given_up + lost) as u64);
        if leader >= 0 {
            self.leaders.insert(tp.clone(), leader);
        } else {
            self.leaders.remove(tp);
        }
        self.refresh_wanted = true;
    }

    /// One share-partition's acquired records: to the ledger and the workers; gaps and
    /// unreadable offsets to the verdicts.
    pub(super) fn take_records(
        &mut self,
        node: i32,
        tp: &TopicPartition,
        topic: &Arc<str>,
        bytes: Option<bytes::Bytes>,
        ranges: &[AcquiredRecords],
        at: Instant,
    ) {
        if ranges.is_empty() {
            return;
        }
        if let Err(e) = check_ranges(ranges) {
            tracing::warn!(partition = %tp, error = %e, "a share fetch answer cannot be right; its records are left to their locks");
            return;
        }
        let got = acquired(bytes, ranges, topic, tp.partition, &self.shared.memory);
        if let Some(error) = &got.error {
            tracing::warn!(partition = %tp, %error, "unreadable share records are released");
        }
        // Their verdicts go to the broker that acquired them, whatever the member was assigned
        // meanwhile (a share-partition revoked while this fetch was in flight is no longer
        // routed by `route`).
        self.leaders.entry(tp.clone()).or_insert(node);
        let counters = &self.shared.counters;
        let superseded = self.ledger.acquire(
            tp,
            got.records
                .iter()
                .map(|r| (r.record.offset, r.delivery_count)),
            at,
            self.lock,
        );
        for (offset, delivery_count) in superseded {
            self.lock_expired(tp.clone(), offset, delivery_count);
        }
        if !got.gaps.is_empty() || !got.unreadable.is_empty() {
            let session = self.sessions.entry(node).or_default();
            let acks = session.verdicts_for(tp, Instant::now());
            for &(first, last, delivery_count) in &got.gaps {
                acks.add_range(first, last, Acknowledge::Gap, delivery_count);
            }
            for &(first, last, delivery_count) in &got.unreadable {
                acks.add_range(first, last, Acknowledge::Release, delivery_count);
            }
        }
        let topic = Arc::clone(topic);
        self.records.push(got.records.into_iter().map(|r| {
            counters.acquired(r.delivery_count);
            ConsumerRecord::new(Arc::clone(&topic), tp.partition, r.record)
                .with_batch(r.batch)
                .with_delivery_count(r.delivery_count)
        }));
    }
}
