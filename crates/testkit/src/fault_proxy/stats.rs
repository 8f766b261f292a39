//! What a proxy counted: connections per listener and how each ended, frames and bytes each way,
//! rewritten responses, frames dropped while half-open, and every corrupted response with the
//! batch it hit. Tests read a [`Stats`] snapshot to check that a fault really happened, that the
//! client reconnected, and that nothing reached the broker around the proxy.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// One of the proxy's listeners.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Endpoint {
    /// The listener for the `n`th bootstrap server (0-based).
    Bootstrap(usize),
    /// The listener for broker node `id`, made when a response first named the node.
    Node(i32),
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Endpoint::Bootstrap(n) => write!(f, "bootstrap {n}"),
            Endpoint::Node(id) => write!(f, "node {id}"),
        }
    }
}

/// How a relayed connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionEnd {
    /// The client closed it.
    ClientClosed,
    /// The broker closed it.
    BrokerClosed,
    /// The proxy reset it (RST to both sides).
    Reset,
    /// A read or write failed.
    Io(String),
    /// A response naming brokers could not be rewritten; the connection was closed instead.
    RewriteFailed(String),
    /// The broker could not be reached.
    UpstreamUnreachable(String),
}

/// One connection a client made to the proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionStats {
    /// The proxy's number for it, in order of acceptance (also its RNG stream).
    pub id: u64,
    /// The listener it came in on.
    pub endpoint: Endpoint,
    /// Bytes written to the client.
    pub bytes_to_client: u64,
    /// Bytes written to the broker.
    pub bytes_to_broker: u64,
    /// `None` while open.
    pub ended: Option<ConnectionEnd>,
}

/// The batch a corrupted Fetch response's flipped byte fell in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptedBatch {
    /// The topic's name (resolved from its id when the proxy saw it in a Metadata response).
    pub topic: String,
    pub partition: i32,
    /// The batch's base offset.
    pub base_offset: i64,
}

/// One corrupted response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorruptedResponse {
    /// The connection it went to.
    pub connection: u64,
    /// The API key and version of the request it answered.
    pub api_key: i16,
    pub api_version: i16,
    pub correlation_id: i32,
    /// The index of the flipped byte in the frame (size prefix included).
    pub byte: usize,
    /// What the byte was XORed with.
    pub mask: u8,
    /// For a Fetch record corruption: the batch.
    pub batch: Option<CorruptedBatch>,
}

/// A snapshot of what a proxy counted.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Connections accepted, per listener.
    pub accepted: BTreeMap<Endpoint, u64>,
    /// The connections in order of acceptance: every one still open, and the latest ended ones,
    /// [`Stats::KEPT`] in all (a long run forgets the oldest ended ones).
    pub connections: Vec<ConnectionStats>,
    /// Frames relayed to brokers and to clients.
    pub frames_to_broker: u64,
    pub frames_to_client: u64,
    /// Frames dropped because the proxy was half-open when they came.
    pub dropped_half_open: u64,
    /// Frames delayed by a latency fault, and the delay they were given in total.
    pub delayed: u64,
    pub added_delay: Duration,
    /// Responses whose broker addresses were rewritten.
    pub rewritten: u64,
    /// Responses that named brokers but could not be rewritten (their connections were closed):
    /// the first [`Stats::KEPT`].
    pub rewrite_errors: Vec<String>,
    /// Reset episodes (each resets every connection open at the time).
    pub reset_episodes: u64,
    /// Corrupted responses, in order: the first [`Stats::KEPT`].
    pub corrupted: Vec<CorruptedResponse>,
    /// Entries past those bounds not kept (connections, rewrite errors, corruptions).
    pub forgotten: u64,
}

impl Stats {
    /// The most entries each list keeps.
    pub const KEPT: usize = 4096;

    /// Appends to one of the lists while it has fewer than [`Stats::KEPT`] entries.
    pub(crate) fn keep<T>(list: &mut Vec<T>, forgotten: &mut u64, item: T) {
        if list.len() < Self::KEPT {
            list.push(item);
        } else {
            *forgotten += 1;
        }
    }

    /// A new connection (ids count up); past [`Stats::KEPT`] the oldest ended one is forgotten.
    pub(crate) fn opened(&mut self, connection: ConnectionStats) {
        self.connections.push(connection);
        if self.connections.len() > Self::KEPT {
            if let Some(i) = self.connections.iter().position(|c| c.ended.is_some()) {
                self.connections.remove(i);
                self.forgotten += 1;
            }
        }
    }

    /// Connections accepted on every listener.
    pub fn accepted_total(&self) -> u64 {
        self.accepted.values().sum()
    }

    /// Connections that ended with `end`.
    pub fn ended_with(&self, end: &ConnectionEnd) -> usize {
        self.connections
            .iter()
            .filter(|c| c.ended.as_ref() == Some(end))
            .count()
    }

    /// Connections still open.
    pub fn open(&self) -> usize {
        self.connections
            .iter()
            .filter(|c| c.ended.is_none())
            .count()
    }

    pub(crate) fn connection(&mut self, id: u64) -> Option<&mut ConnectionStats> {
        // Ids are handed out in order and kept in order.
        let index = self.connections.binary_search_by_key(&id, |c| c.id).ok()?;
        self.connections.get_mut(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection(id: u64) -> ConnectionStats {
        ConnectionStats {
            id,
            endpoint: Endpoint::Bootstrap(0),
            bytes_to_client: 0,
            bytes_to_broker: 0,
            ended: None,
        }
    }

    #[test]
    fn the_lists_stay_within_their_bound_and_count_what_they_forget() {
        let mut stats = Stats::default();
        let n = 3 * Stats::KEPT as u64;
        for id in 0..n {
            stats.opened(connection(id));
            if id >= 10 {
                if let Some(c) = stats.connection(id) {
                    c.ended = Some(ConnectionEnd::Reset);
                }
            }
        }
        assert_eq!(stats.connections.len(), Stats::KEPT);
        assert_eq!(stats.open(), 10, "open ones are never forgotten");
        assert!(stats.connection(0).is_some() && stats.connection(9).is_some());
        assert!(stats.connection(10).is_none(), "the oldest ended one was");
        assert!(stats.connection(n - 1).is_some());
        assert_eq!(stats.forgotten, n - Stats::KEPT as u64);
        let mut forgotten = stats.forgotten;
        for i in 0..Stats::KEPT + 10 {
            Stats::keep(&mut stats.rewrite_errors, &mut forgotten, i.to_string());
        }
        assert_eq!(stats.rewrite_errors.len(), Stats::KEPT);
        assert_eq!(forgotten, stats.forgotten + 10);
    }
}
