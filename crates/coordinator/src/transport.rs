//! The seam between the group member and the network: what the member needs from a client.
//!
//! The real implementation is the crate's `Client` (connections, metadata, FindCoordinator);
//! unit tests of the member's state machine implement it with scripted responses, so every row of
//! the error table can be driven without a broker. Integration tests always use the real client
//! against the real broker.

use std::collections::BTreeMap;
use std::future::Future;

use mooring_wire::messages::Request;
use mooring_wire::primitives::Uuid;

use crate::error::Result;

/// Requests to a group's coordinator, and the topic metadata a group leader needs to assign.
pub trait GroupTransport: Send + Sync + 'static {
    /// Sends a request to the coordinator of `group`, discovering it first (FindCoordinator) if it
    /// is not known. `build` is called with the version negotiated with that broker (the highest
    /// both sides support), so version-dependent fields are filled for the version that is sent.
    /// Broker error codes are NOT turned into `Err`: the caller reads them from the response.
    fn call_coordinator<R, F>(
        &self,
        group: &str,
        build: F,
    ) -> impl Future<Output = Result<R::Response>> + Send
    where
        R: Request + Send + 'static,
        R::Response: Send + 'static,
        F: FnOnce(i16) -> R + Send;

    /// Forgets the coordinator of `group` (after NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a
    /// dead connection), so the next call rediscovers it.
    fn forget_coordinator(&self, group: &str);

    /// Partition counts of `topics` from fresh metadata; topics that do not exist are absent.
    fn partition_counts(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<BTreeMap<String, i32>>> + Send;

    /// Topic ids (KIP-516) of `topics`, for the requests that name topics by id only
    /// (OffsetCommit and OffsetFetch v10+, KIP-848). Answered from cached metadata when every
    /// topic is in it; metadata for `topics` is fetched first when one is missing or when
    /// `refresh` is set (after UNKNOWN_TOPIC_ID: the topic may have been re-created under a new
    /// id). Topics that do not exist are absent; a topic of a broker without ids maps to
    /// [`Uuid::NIL`] (such a broker never negotiates the id-only versions).
    fn topic_ids(
        &self,
        topics: &[String],
        refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<String, Uuid>>> + Send;
}
