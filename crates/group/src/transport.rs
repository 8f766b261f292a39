//! The seam between the group member and the network: what the member needs from a client.
//!
//! The real implementation is `mooring_client::Client` (connections, metadata, FindCoordinator);
//! unit tests of the member's state machine implement it with scripted responses, so every row of
//! the error table can be driven without a broker. Integration tests always use the real client
//! against the real broker.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use mooring_wire::messages::Request;
use mooring_wire::primitives::Uuid;

use mooring_client::error::Result;
use mooring_client::{Client, CoordinatorCall, PartitionsPerTopic};

/// Requests to a group's coordinator, and the topic metadata a group leader needs to assign.
pub trait GroupTransport: Send + Sync + 'static {
    /// Sends a request to the coordinator of `group` on the general connection, answered within
    /// `request.timeout.ms` (see [`GroupTransport::call_coordinator_with`]).
    fn call_coordinator<R, F>(
        &self,
        group: &str,
        build: F,
    ) -> impl Future<Output = Result<R::Response>> + Send
    where
        R: Request + Send + 'static,
        R::Response: Send + 'static,
        F: FnOnce(i16) -> R + Send,
    {
        self.call_coordinator_with(group, CoordinatorCall::default(), build)
    }

    /// Sends a request to the coordinator of `group` as `call` says, discovering the coordinator
    /// first (FindCoordinator) if it is not known. `build` is called with the version negotiated
    /// with that broker (the highest both sides support), so version-dependent fields are filled
    /// for the version that is sent. Broker error codes are NOT turned into `Err`: the caller
    /// reads them from the response.
    fn call_coordinator_with<R, F>(
        &self,
        group: &str,
        call: CoordinatorCall,
        build: F,
    ) -> impl Future<Output = Result<R::Response>> + Send
    where
        R: Request + Send + 'static,
        R::Response: Send + 'static,
        F: FnOnce(i16) -> R + Send;

    /// `request.timeout.ms`: what a request without a timeout of its own is allowed.
    fn request_timeout(&self) -> Duration;

    /// Who this client is to the broker's authorizer, for the errors that name it
    /// ([`ClientConfig::principal`](mooring_client::ClientConfig::principal)).
    fn principal(&self) -> String {
        "this client".into()
    }

    /// Forgets the coordinator of `group` (after NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE or a
    /// dead connection), so the next call rediscovers it.
    fn forget_coordinator(&self, group: &str);

    /// Partition counts of `topics` from fresh metadata; topics that do not exist are absent.
    fn partition_counts(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<BTreeMap<String, i32>>> + Send;

    /// What the group leader assigns, from fresh metadata: the partitions of `topics` with their
    /// replicas' racks ([`Metadata::partitions_per_topic`](mooring_client::metadata::Metadata::partitions_per_topic));
    /// topics that do not exist are absent.
    fn partitions_per_topic(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<PartitionsPerTopic>> + Send;

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

    /// Topic names of the topic ids `ids` (KIP-516), for assignments that name topics by id only
    /// (ConsumerGroupHeartbeat, KIP-848). Answered from cached metadata when every id is in it;
    /// metadata is fetched first when one is missing or when `refresh` is set. Ids of topics the
    /// cluster does not know (deleted, or not yet in this broker's metadata) are absent.
    fn topic_names(
        &self,
        ids: &[Uuid],
        refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<Uuid, String>>> + Send;

    /// The version of `R` negotiated with the coordinator of `group` (discovering and connecting
    /// to it if needed), for what must be known before sending: a `consumer`-protocol member's
    /// OffsetCommit must be v9 or later. [`Error::UnsupportedVersion`](mooring_client::Error::UnsupportedVersion)
    /// when the broker does not offer `R` at a version this client implements.
    fn coordinator_version<R>(&self, group: &str) -> impl Future<Output = Result<i16>> + Send
    where
        R: Request + Send + 'static;
}

impl GroupTransport for Client {
    fn call_coordinator_with<R, F>(
        &self,
        group: &str,
        call: CoordinatorCall,
        build: F,
    ) -> impl Future<Output = Result<R::Response>> + Send
    where
        R: Request + Send + 'static,
        R::Response: Send + 'static,
        F: FnOnce(i16) -> R + Send,
    {
        Client::call_coordinator_with(self, group, call, build)
    }

    fn principal(&self) -> String {
        self.config().principal()
    }

    fn request_timeout(&self) -> Duration {
        self.config().request_timeout
    }

    fn forget_coordinator(&self, group: &str) {
        Client::forget_coordinator(self, group)
    }

    fn partition_counts(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<BTreeMap<String, i32>>> + Send {
        Client::partition_counts(self, topics)
    }

    fn partitions_per_topic(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<PartitionsPerTopic>> + Send {
        Client::partitions_per_topic(self, topics)
    }

    fn topic_ids(
        &self,
        topics: &[String],
        refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<String, Uuid>>> + Send {
        Client::topic_ids(self, topics, refresh)
    }

    fn topic_names(
        &self,
        ids: &[Uuid],
        refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<Uuid, String>>> + Send {
        Client::topic_names(self, ids, refresh)
    }

    fn coordinator_version<R>(&self, group: &str) -> impl Future<Output = Result<i16>> + Send
    where
        R: Request + Send + 'static,
    {
        Client::coordinator_version::<R>(self, group)
    }
}
