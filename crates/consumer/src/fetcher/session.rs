//! Incremental fetch sessions (KIP-227), one per broker: the client's side of Java's
//! `FetchSessionHandler`.
//!
//! The first request of a session is *full* (session id 0, epoch 0: "create a session") and lists
//! every partition. If the broker answers with a session id, later requests are *incremental*
//! (that id, epoch 1, 2, ...): they list only partitions that are new or whose fetch offset, leader
//! epoch or byte limit changed, and name in `forgotten_topics_data` the partitions to drop. The
//! broker keeps fetching every partition of the session, so a partition that must not be fetched
//! (paused, backpressured, revoked, moved to another leader) is forgotten, not merely left out.
//!
//! Answers: a session id of 0 after a full request means the broker keeps no session (every
//! request stays full); after an incremental one it means the broker closed the session. Errors
//! FETCH_SESSION_ID_NOT_FOUND and INVALID_FETCH_SESSION_EPOCH, a failed request, and any
//! top-level error reset the session: the next request is full again.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::TopicPartition;

/// What the fetcher wants fetched from one partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionRequest {
    /// The next offset to fetch (the partition's position).
    pub fetch_offset: i64,
    /// The leader epoch the fetcher believes current (KIP-320), -1 when unknown.
    pub current_leader_epoch: i32,
    /// `max.partition.fetch.bytes`.
    pub max_bytes: i32,
}

/// The partitions one request lists and forgets, with the session fields to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionRequest {
    /// `session_id` field.
    pub session_id: i32,
    /// `session_epoch` field.
    pub session_epoch: i32,
    /// Partitions to list in `topics`.
    pub to_send: BTreeMap<TopicPartition, PartitionRequest>,
    /// Partitions to list in `forgotten_topics_data` (incremental requests only).
    pub to_forget: Vec<TopicPartition>,
    /// Every partition of the session after this request: what the broker will answer for.
    pub session: BTreeMap<TopicPartition, PartitionRequest>,
}

impl SessionRequest {
    /// Whether this request is full (creates or forgoes a session).
    pub fn is_full(&self) -> bool {
        self.session_epoch == INITIAL_EPOCH || self.session_epoch == FINAL_EPOCH
    }
}

/// Epoch of a full request that asks for a new session.
const INITIAL_EPOCH: i32 = 0;
/// Epoch that closes a session (or, with id 0, asks for a sessionless full fetch).
const FINAL_EPOCH: i32 = -1;

/// One broker's fetch session.
#[derive(Debug, Clone, Default)]
pub(crate) struct FetchSession {
    /// 0: no session; the next request is full.
    id: i32,
    /// The epoch of the next incremental request.
    next_epoch: i32,
    /// The partitions the broker holds in the session (as last sent).
    partitions: BTreeMap<TopicPartition, PartitionRequest>,
    /// A request is in flight: its plan becomes the session once answered. Shared with the
    /// request being sent (a plan lists every partition of the session: no copy of it).
    pending: Option<Arc<SessionRequest>>,
}

impl FetchSession {
    /// The session id, 0 when none.
    #[cfg(test)]
    pub fn id(&self) -> i32 {
        self.id
    }

    /// The fetch offset the broker uses for `tp` in the last request sent (what a response's
    /// records start from).
    pub fn sent(&self, tp: &TopicPartition) -> Option<PartitionRequest> {
        self.pending
            .as_ref()
            .and_then(|p| p.session.get(tp).copied())
            .or_else(|| self.partitions.get(tp).copied())
    }

    /// The partitions of the session that the next request for `wanted` forgets (none when it
    /// is full: a full request forgets by omission).
    pub fn forgets<'a>(
        &'a self,
        wanted: &'a BTreeMap<TopicPartition, PartitionRequest>,
    ) -> impl Iterator<Item = &'a TopicPartition> + 'a {
        let incremental = self.id != 0;
        self.partitions
            .keys()
            .filter(move |tp| incremental && !wanted.contains_key(*tp))
    }

    /// Plans the next request for `wanted` (every partition to fetch from this broker).
    pub fn build(
        &mut self,
        wanted: BTreeMap<TopicPartition, PartitionRequest>,
    ) -> Arc<SessionRequest> {
        let request = if self.id == 0 {
            SessionRequest {
                session_id: 0,
                session_epoch: INITIAL_EPOCH,
                to_send: wanted.clone(),
                to_forget: Vec::new(),
                session: wanted,
            }
        } else {
            let to_send = wanted
                .iter()
                .filter(|(tp, req)| self.partitions.get(*tp) != Some(*req))
                .map(|(tp, req)| (tp.clone(), *req))
                .collect();
            let to_forget = self.forgets(&wanted).cloned().collect();
            SessionRequest {
                session_id: self.id,
                session_epoch: self.next_epoch,
                to_send,
                to_forget,
                session: wanted,
            }
        };
        let request = Arc::new(request);
        self.pending = Some(Arc::clone(&request));
        request
    }

    /// The broker answered without a top-level error, with this session id.
    pub fn handle_response(&mut self, response_session_id: i32) {
        let Some(sent) = self.pending.take() else {
            return;
        };
        if response_session_id == 0 {
            // No session (full request) or the broker closed it (incremental): full again.
            self.reset();
            return;
        }
        if sent.is_full() || response_session_id != self.id {
            self.id = response_session_id;
            self.next_epoch = 1;
        } else {
            // Epochs wrap to 1, never to 0 (INITIAL) or -1 (FINAL).
            self.next_epoch = if self.next_epoch == i32::MAX {
                1
            } else {
                self.next_epoch + 1
            };
        }
        // The request is sent by now, so the plan is seldom still shared.
        self.partitions =
            Arc::try_unwrap(sent).map_or_else(|sent| sent.session.clone(), |sent| sent.session);
    }

    /// The request failed or the broker refused the session: start over with a full request.
    pub fn reset(&mut self) {
        *self = FetchSession::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(offset: i64) -> PartitionRequest {
        PartitionRequest {
            fetch_offset: offset,
            current_leader_epoch: 0,
            max_bytes: 1024,
        }
    }

    fn tp(p: i32) -> TopicPartition {
        TopicPartition::new("t", p)
    }

    #[test]
    fn first_request_is_full_then_incremental_with_only_changes() {
        let mut s = FetchSession::default();
        let r = s.build(BTreeMap::from([(tp(0), req(0)), (tp(1), req(0))]));
        assert_eq!((r.session_id, r.session_epoch), (0, 0));
        assert_eq!(r.to_send.len(), 2);
        s.handle_response(77);
        assert_eq!(s.id(), 77);

        // Partition 0 advanced, partition 1 did not: only 0 is sent.
        let r = s.build(BTreeMap::from([(tp(0), req(5)), (tp(1), req(0))]));
        assert_eq!((r.session_id, r.session_epoch), (77, 1));
        assert_eq!(r.to_send.keys().collect::<Vec<_>>(), [&tp(0)]);
        assert!(r.to_forget.is_empty());
        assert_eq!(s.sent(&tp(0)).map(|p| p.fetch_offset), Some(5));
        s.handle_response(77);

        // Partition 1 paused: forgotten; a new partition 2 is sent.
        let r = s.build(BTreeMap::from([(tp(0), req(5)), (tp(2), req(3))]));
        assert_eq!(r.session_epoch, 2);
        assert_eq!(r.to_send.keys().collect::<Vec<_>>(), [&tp(2)]);
        assert_eq!(r.to_forget, [tp(1)]);
        s.handle_response(77);
        assert_eq!(s.sent(&tp(1)), None);
    }

    #[test]
    fn errors_and_closed_sessions_go_back_to_full_requests() {
        let mut s = FetchSession::default();
        s.build(BTreeMap::from([(tp(0), req(0))]));
        s.handle_response(9);
        s.build(BTreeMap::from([(tp(0), req(1))]));
        s.reset(); // e.g. FETCH_SESSION_ID_NOT_FOUND
        let r = s.build(BTreeMap::from([(tp(0), req(1))]));
        assert_eq!((r.session_id, r.session_epoch), (0, 0));
        assert!(r.is_full());

        // A broker without sessions answers 0: every request stays full.
        s.handle_response(0);
        let r = s.build(BTreeMap::from([(tp(0), req(2))]));
        assert!(r.is_full());
        assert_eq!(r.to_send.len(), 1);
    }

    #[test]
    fn epochs_wrap_to_one() {
        let mut s = FetchSession::default();
        s.build(BTreeMap::new());
        s.handle_response(5);
        s.next_epoch = i32::MAX;
        let r = s.build(BTreeMap::new());
        assert_eq!(r.session_epoch, i32::MAX);
        s.handle_response(5);
        assert_eq!(s.build(BTreeMap::new()).session_epoch, 1);
    }
}
