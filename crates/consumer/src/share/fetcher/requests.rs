//! What each broker's session sends next: the close's verdicts and session closes, renewals, a
//! fetch, verdicts alone, or the close of a session nothing is fetched or held from any more; one
//! request per session at a time, each on a task of its own.

use std::collections::BTreeSet;

use mooring_wire::messages::{ShareAcknowledgeRequest, ShareFetchRequest};
use tokio::time::Instant;

use super::{Answer, Ended, Kind, Request, ShareFetcher};
use crate::share::ack::Acknowledge;
use crate::share::session::{FetchLimits, Sent};
use crate::TopicPartition;

impl ShareFetcher {
    /// Sends what each broker's session is due, one request per session at a time.
    pub(super) fn send_requests(&mut self) {
        let now = Instant::now();
        let fetch = self.may_fetch();
        self.release_unfinished_on_close();
        let mut nodes: BTreeSet<i32> = self.sessions.keys().copied().collect();
        nodes.extend(self.leaders.values().copied());
        nodes.retain(|node| {
            self.backoff.get(node).is_none_or(|until| *until <= now)
                && self.sessions.get(node).is_none_or(|s| !s.in_flight)
        });
        if nodes.is_empty() {
            return;
        }
        let member_id = self.member.borrow().member_id.clone();
        for node in nodes {
            let wanted: BTreeSet<TopicPartition> = self
                .leaders
                .iter()
                .filter(|(tp, n)| **n == node && self.assigned.contains(*tp))
                .map(|(tp, _)| tp.clone())
                .collect();
            self.send_one(node, &member_id, &wanted, fetch);
        }
    }

    /// Once closing, every record still held without a verdict is released: queued ones never
    /// ran, and the handlers of the others were given up at the shutdown's bound.
    fn release_unfinished_on_close(&mut self) {
        let Some(closing) = self.closing.as_mut() else {
            return;
        };
        if closing.released {
            return;
        }
        closing.released = true;
        let held: Vec<TopicPartition> = self.ledger.partitions().cloned().collect();
        for tp in held {
            let held = self.ledger.take_partition(&tp);
            let Some(node) = self.leaders.get(&tp) else {
                continue;
            };
            let acks = self
                .sessions
                .entry(*node)
                .or_default()
                .verdicts_for(&tp, Instant::now());
            for (offset, record) in held {
                acks.add_for(offset, Acknowledge::Release, record.delivery_count);
            }
        }
    }

    fn send_one(
        &mut self,
        node: i32,
        member_id: &str,
        wanted: &BTreeSet<TopicPartition>,
        fetch: bool,
    ) {
        let config = &self.shared.config;
        let group = config.group.group_id.clone();
        let renews = self.renews.get(&node).copied().unwrap_or(false);
        let closing = self.closing.is_some();
        let max_bytes = i32::try_from(self.room_for_fetch())
            .unwrap_or(i32::MAX)
            .min(config.fetch.max_bytes);
        let holds = self.ledger_node_holds(node);
        let now = Instant::now();
        let linger = config.fetch.max_wait;
        let batch = usize::try_from(config.max_poll_records).unwrap_or(usize::MAX);
        let session = self.sessions.entry(node).or_default();
        let fetch_limits = |max_bytes: i32, wait: bool| FetchLimits {
            max_wait_ms: if wait {
                i32::try_from(config.fetch.max_wait.as_millis()).unwrap_or(i32::MAX)
            } else {
                0
            },
            min_bytes: if wait { config.fetch.min_bytes } else { 0 },
            max_bytes,
            max_records: if wait { config.max_poll_records } else { 0 },
            acquire_mode: config.acquire_mode.wire(),
        };
        let request = if closing {
            if session.has_acks() && session.is_open() {
                session
                    .acknowledge(&group, member_id, &self.ids, false)
                    .map(|(r, s)| (Request::Acknowledge(r), s))
            } else {
                session
                    .close(&group, member_id, &self.ids)
                    .map(|(r, s)| (Request::Acknowledge(r), s))
            }
        } else if renews && session.has_renewals() && session.is_open() {
            session
                .acknowledge(&group, member_id, &self.ids, true)
                .map(|(r, s)| (Request::Acknowledge(r), s))
        } else if fetch && !wanted.is_empty() {
            session
                .fetch(
                    &group,
                    member_id,
                    wanted,
                    &self.ids,
                    fetch_limits(max_bytes, true),
                )
                .map(|(r, s)| (Request::Fetch(r), s))
        } else if session.has_acks() && session.verdicts_due(now, linger, batch) {
            match session.acknowledge(&group, member_id, &self.ids, false) {
                Some((r, s)) => Some((Request::Acknowledge(r), s)),
                // No session open: a fetch that waits for nothing opens one with the verdicts.
                None => session
                    .fetch(&group, member_id, wanted, &self.ids, fetch_limits(0, false))
                    .map(|(r, s)| (Request::Fetch(r), s)),
            }
        } else if session.is_open() && wanted.is_empty() && !holds {
            // Nothing fetched or held here any more: close the session.
            session
                .close(&group, member_id, &self.ids)
                .map(|(r, s)| (Request::Acknowledge(r), s))
        } else {
            None
        };
        if let Some((request, sent)) = request {
            self.spawn(node, request, sent);
        }
    }

    fn ledger_node_holds(&self, node: i32) -> bool {
        self.ledger
            .partitions()
            .any(|tp| self.leaders.get(tp) == Some(&node))
    }

    /// What one fetch may ask for: the budget's room, shared with the fetches in flight.
    fn room_for_fetch(&self) -> usize {
        let in_flight = self.sessions.values().filter(|s| s.in_flight).count() + 1;
        self.room() / in_flight
    }

    fn spawn(&mut self, node: i32, request: Request, sent: Sent) {
        let client = self.shared.fetch_client.clone();
        let at = Instant::now();
        let kind = match request {
            Request::Fetch(_) => Kind::Fetch,
            Request::Acknowledge(_) => Kind::Acknowledge,
        };
        self.in_flight.spawn(async move {
            let mut version = None;
            let result = async {
                let conn = client.connection(node).await?;
                match request {
                    Request::Fetch(mut r) => {
                        let v = conn.version::<ShareFetchRequest>()?;
                        version = Some(v);
                        if v < 2 {
                            r.share_acquire_mode = 0;
                        }
                        conn.send_at(&r, v).await.map(Answer::Fetch)
                    }
                    Request::Acknowledge(r) => {
                        let v = conn.version::<ShareAcknowledgeRequest>()?;
                        version = Some(v);
                        conn.send_at(&r, v).await.map(Answer::Acknowledge)
                    }
                }
            }
            .await;
            Ended {
                node,
                kind,
                sent,
                at,
                version,
                result,
            }
        });
    }
}
