//! The network client: bootstrap, a connection pool by node id, cached metadata, the coordinator
//! of each group (FindCoordinator), and general `send_to` / `send_any` for other callers. It is
//! the real transport of the group member (`mooring_group::GroupTransport`).
//!
//! FindCoordinator (KIP-699) is sent batched (`coordinator_keys`) from v4 and with a single `key`
//! before. NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE and COORDINATOR_LOAD_IN_PROGRESS are retried
//! with back-off (`retry.backoff.ms` up to `retry.backoff.max.ms`, KIP-580) until
//! `default.api.timeout.ms`; a lost connection to a coordinator forgets it, so the next call
//! rediscovers it. Metadata is refreshed when asked, when older than `metadata.max.age.ms`, and
//! after a connection failure.
//!
//! A group's coordinator gets two connections (see [`crate::conn::ConnectionKind`]): JoinGroup and SyncGroup
//! go on a group connection of their own, with the timeout the member gives each
//! ([`CoordinatorCall`]), because the coordinator may hold them for the rebalance timeout and a
//! broker answers a connection's requests one at a time, in order. Everything else for the group
//! (OffsetCommit, OffsetFetch, Heartbeat, LeaveGroup, DescribeGroups) goes on the general
//! connection to that broker with `request.timeout.ms`, so a held or timed-out JoinGroup neither
//! delays nor closes it. That is one connection more per member than one per broker.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::Request;
use mooring_wire::primitives::Uuid;
use tokio::sync::watch;

use crate::config::ClientConfig;
use crate::conn::{Backoff, ConnectOptions, Connection, ConnectionKind, FrameMemory, Pool};
use crate::error::{Error, Result};
use crate::metadata::Metadata;
use crate::requests;
use crate::topic::PartitionsPerTopic;

/// How one request goes to a group's coordinator: on which of the two connections to it, and how
/// long its answer may take. The default is the general connection and `request.timeout.ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CoordinatorCall {
    /// [`ConnectionKind::Group`] for JoinGroup and SyncGroup, [`ConnectionKind::General`] for everything else.
    pub connection: ConnectionKind,
    /// How long the answer may take; `None`: `request.timeout.ms`.
    pub timeout: Option<Duration>,
}

impl CoordinatorCall {
    /// A JoinGroup or SyncGroup: on the group connection, answered within `timeout`. If it times
    /// out, only the group connection is closed.
    pub fn group(timeout: Duration) -> CoordinatorCall {
        CoordinatorCall {
            connection: ConnectionKind::Group,
            timeout: Some(timeout),
        }
    }
}

struct ClientInner {
    config: ClientConfig,
    pool: Pool,
    retry: Backoff,
    /// node id → `host:port`, from metadata and FindCoordinator answers.
    addresses: Mutex<HashMap<i32, String>>,
    metadata: watch::Sender<Arc<Metadata>>,
    metadata_stale: AtomicBool,
    /// group → coordinator node id.
    coordinators: Mutex<HashMap<String, i32>>,
}

/// A Kafka network client; cheap to clone (clones share connections and caches).
#[derive(Clone)]
pub struct Client {
    inner: Arc<ClientInner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("bootstrap_servers", &self.inner.config.bootstrap_servers)
            .field("client_id", &self.inner.config.client_id)
            .finish_non_exhaustive()
    }
}

/// The coordinator's node, or the broker's error for it (GROUP_AUTHORIZATION_FAILED: the
/// typed [`Error::Authorization`] naming the group and `principal`).
fn coordinator_from(
    response: &mooring_wire::messages::FindCoordinatorResponse,
    group: &str,
    principal: impl FnOnce() -> String,
) -> Result<(i32, String)> {
    let (code, message, node, host, port) =
        match response.coordinators.iter().find(|c| c.key == group) {
            Some(c) => (c.error_code, &c.error_message, c.node_id, &c.host, c.port),
            None => (
                response.error_code,
                &response.error_message,
                response.node_id,
                &response.host,
                response.port,
            ),
        };
    match ErrorCode::from(code) {
        ErrorCode::None if node >= 0 => {
            let address = if host.contains(':') {
                format!("[{host}]:{port}")
            } else {
                format!("{host}:{port}")
            };
            Ok((node, address))
        }
        ErrorCode::None => Err(Error::Broker {
            api: "FindCoordinator",
            code: ErrorCode::CoordinatorNotAvailable,
            message: Some(format!("no coordinator for group {group}")),
        }),
        code => Err(Error::from_code(
            "FindCoordinator",
            code,
            message.clone(),
            group,
            Vec::new,
            principal,
        )),
    }
}

impl Client {
    /// A client for `config`. No connection is made yet (the first request bootstraps), but TLS
    /// files are read and the config is checked, so those errors come here.
    pub fn new(config: ClientConfig) -> Result<Client> {
        Client::build(config, None)
    }

    /// A client whose connections read response frames of [`LARGE_FRAME`] bytes and more into
    /// `memory`, which then counts them for as long as any slice of them is alive: the fetcher's
    /// byte budget.
    ///
    /// [`LARGE_FRAME`]: crate::conn::memory::LARGE_FRAME
    pub fn with_frame_memory(config: ClientConfig, memory: Arc<FrameMemory>) -> Result<Client> {
        Client::build(config, Some(memory))
    }

    fn build(config: ClientConfig, memory: Option<Arc<FrameMemory>>) -> Result<Client> {
        config.validate()?;
        let mut opts = ConnectOptions::from_config(&config)?;
        opts.settings.frame_memory = memory;
        let reconnect = Backoff {
            base: config.reconnect_backoff,
            max: config.reconnect_backoff_max,
        };
        let retry = Backoff {
            base: config.retry_backoff,
            max: config.retry_backoff_max.max(config.retry_backoff),
        };
        let (metadata, _) = watch::channel(Arc::new(Metadata::default()));
        Ok(Client {
            inner: Arc::new(ClientInner {
                pool: Pool::new(opts, reconnect),
                retry,
                addresses: Mutex::new(HashMap::new()),
                metadata,
                metadata_stale: AtomicBool::new(true),
                coordinators: Mutex::new(HashMap::new()),
                config,
            }),
        })
    }

    /// A client that has bootstrapped: [`Client::new`], then a first metadata refresh.
    pub async fn connect(config: ClientConfig) -> Result<Client> {
        let client = Client::new(config)?;
        client.refresh_metadata().await?;
        Ok(client)
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.inner.config
    }

    /// The back-off between retries of a request: from `retry.backoff.ms`, doubling up to
    /// `retry.backoff.max.ms` (never below the former).
    pub(crate) fn retry_backoff(&self) -> Backoff {
        self.inner.retry
    }

    /// How many connection attempts this client started (each TCP connect counts).
    pub fn connection_attempts(&self) -> u64 {
        self.inner.pool.attempts()
    }

    // ---- connections -------------------------------------------------------------------------

    fn address_of(&self, node: i32) -> Option<String> {
        if let Some(address) = self
            .inner
            .addresses
            .lock()
            .ok()
            .and_then(|a| a.get(&node).cloned())
        {
            return Some(address);
        }
        self.cached_metadata()
            .brokers
            .get(&node)
            .map(|b| b.address())
    }

    /// The connection to broker `node_id`, connecting (after its back-off, if it failed lately) if
    /// needed. The node's address comes from metadata, which is refreshed once if it is unknown.
    pub async fn connection(&self, node_id: i32) -> Result<Connection> {
        let address = match self.address_of(node_id) {
            Some(a) => a,
            None => {
                self.refresh_metadata().await?;
                self.address_of(node_id)
                    .ok_or_else(|| Error::Disconnected {
                        broker: format!("node {node_id} (not in metadata)"),
                    })?
            }
        };
        let result = self.inner.pool.get(node_id, &address, true).await;
        if result.is_err() {
            self.inner.metadata_stale.store(true, Ordering::Relaxed);
        }
        result
    }

    /// Any usable connection: a live one if there is one, else each known broker and then each
    /// bootstrap server in turn (skipping those backing off, unless all are).
    pub async fn any_connection(&self) -> Result<Connection> {
        if let Some(fatal) = self.inner.pool.fatal() {
            return Err(fatal);
        }
        let live = self.inner.pool.live();
        if let Some((_, conn)) = live.iter().find(|(n, _)| *n >= 0).or(live.first()) {
            return Ok(conn.clone());
        }
        let mut candidates: Vec<(i32, String)> = self
            .cached_metadata()
            .brokers
            .values()
            .map(|b| (b.node_id, b.address()))
            .collect();
        for (i, server) in self.inner.config.bootstrap_servers.iter().enumerate() {
            let id = -1 - i32::try_from(i).unwrap_or(i32::MAX - 1);
            candidates.push((id, server.clone()));
        }
        let mut last = None;
        for wait in [false, true] {
            for (node, address) in &candidates {
                if !wait && self.inner.pool.in_backoff(*node) {
                    continue;
                }
                match self.inner.pool.get(*node, address, wait).await {
                    Ok(conn) => return Ok(conn),
                    Err(e) if e.is_retriable() => {
                        self.inner.metadata_stale.store(true, Ordering::Relaxed);
                        last = Some(e);
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Err(last.unwrap_or_else(|| Error::Disconnected {
            broker: "any broker (none known)".into(),
        }))
    }

    /// Sends a request to broker `node_id`, built for the version negotiated with it. Broker error
    /// codes in the response are the caller's to read.
    pub async fn send_to<R, F>(&self, node_id: i32, build: F) -> Result<R::Response>
    where
        R: Request,
        F: FnOnce(i16) -> R,
    {
        let conn = self.connection(node_id).await?;
        conn.call(build).await
    }

    /// Sends a request to any broker (see [`Client::any_connection`]); if that connection fails
    /// under it, tries once more on another. For requests that are safe to repeat.
    pub async fn send_any<R, F>(&self, build: F) -> Result<R::Response>
    where
        R: Request,
        F: Fn(i16) -> R,
    {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let conn = self.any_connection().await?;
            match conn.call(&build).await {
                Err(e)
                    if attempt < 2
                        && matches!(e, Error::Io { .. } | Error::Disconnected { .. }) =>
                {
                    self.inner.metadata_stale.store(true, Ordering::Relaxed);
                    continue;
                }
                other => return other,
            }
        }
    }

    // ---- metadata ----------------------------------------------------------------------------

    /// The last metadata fetched (empty before the first refresh).
    pub fn cached_metadata(&self) -> Arc<Metadata> {
        self.inner.metadata.borrow().clone()
    }

    /// Notified with every new snapshot (for pattern subscriptions).
    pub fn metadata_updates(&self) -> watch::Receiver<Arc<Metadata>> {
        self.inner.metadata.subscribe()
    }

    /// Metadata no older than `metadata.max.age.ms` (and refreshed after connection failures).
    pub async fn metadata(&self) -> Result<Arc<Metadata>> {
        let current = self.cached_metadata();
        let fresh = current
            .fetched_at
            .is_some_and(|t| t.elapsed() < self.inner.config.metadata_max_age);
        if fresh && !self.inner.metadata_stale.load(Ordering::Relaxed) {
            Ok(current)
        } else {
            self.refresh_metadata().await
        }
    }

    /// Starts a task that refreshes metadata every `metadata.max.age.ms`, so
    /// [`Client::metadata_updates`] subscribers (pattern subscriptions) see new topics without
    /// asking. It ends when the last clone of the client is dropped.
    pub fn spawn_metadata_refresher(&self) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.inner);
        let period = self.inner.config.metadata_max_age;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(period).await;
                let Some(inner) = weak.upgrade() else { return };
                let client = Client { inner };
                if let Err(error) = client.refresh_metadata().await {
                    tracing::warn!(%error, "periodic metadata refresh failed");
                }
            }
        })
    }

    /// Fetches metadata for every topic now.
    pub async fn refresh_metadata(&self) -> Result<Arc<Metadata>> {
        let response = self.send_any(|v| requests::metadata(v, None)).await?;
        let snapshot = Arc::new(Metadata::from_response(&response));
        self.install(Arc::clone(&snapshot));
        Ok(snapshot)
    }

    /// Fetches metadata for `topics` and merges it into the cached snapshot (brokers are replaced,
    /// other topics kept).
    pub async fn refresh_topics(&self, topics: &[String]) -> Result<Arc<Metadata>> {
        if topics.is_empty() {
            return self.metadata().await;
        }
        let response = self
            .send_any(|v| requests::metadata(v, Some(topics)))
            .await?;
        let fetched = Metadata::from_response(&response);
        let mut merged = (*self.cached_metadata()).clone();
        merged.brokers = fetched.brokers.clone();
        merged.cluster_id = fetched.cluster_id.clone();
        merged.controller_id = fetched.controller_id;
        for name in topics {
            merged.topics.remove(name);
        }
        merged.topics.extend(fetched.topics);
        if merged.fetched_at.is_none() {
            merged.fetched_at = fetched.fetched_at;
        }
        let snapshot = Arc::new(merged);
        self.install(Arc::clone(&snapshot));
        Ok(snapshot)
    }

    fn install(&self, snapshot: Arc<Metadata>) {
        if let Ok(mut addresses) = self.inner.addresses.lock() {
            for broker in snapshot.brokers.values() {
                addresses.insert(broker.node_id, broker.address());
            }
        }
        self.inner.metadata_stale.store(false, Ordering::Relaxed);
        self.inner.metadata.send_replace(snapshot);
    }

    /// Leader node id and leader epoch of a partition, from cached metadata.
    pub fn leader_for(&self, topic: &str, partition: i32) -> Option<(i32, i32)> {
        self.cached_metadata().leader_for(topic, partition)
    }

    /// Non-internal topics whose whole name matches `pattern`, from cached metadata.
    pub fn topics_matching(&self, pattern: &regex::Regex) -> Vec<String> {
        self.cached_metadata().topics_matching(pattern)
    }

    // ---- coordinators ------------------------------------------------------------------------

    /// The cached coordinator node of `group`, if known.
    pub fn cached_coordinator(&self, group: &str) -> Option<i32> {
        self.inner
            .coordinators
            .lock()
            .ok()
            .and_then(|c| c.get(group).copied())
    }

    /// Asks the cluster for the coordinator of `group` (retrying the retriable errors with back-off
    /// until `default.api.timeout.ms`) and caches it.
    pub async fn find_coordinator(&self, group: &str) -> Result<i32> {
        let deadline = Instant::now() + self.inner.config.default_api_timeout;
        let mut failures = 0;
        loop {
            let result = self
                .send_any(|v| requests::find_coordinator(v, group))
                .await
                .and_then(|response| {
                    coordinator_from(&response, group, || self.inner.config.principal())
                });
            match result {
                Ok((node, address)) => {
                    tracing::debug!(group, node, %address, "coordinator found");
                    if let Ok(mut addresses) = self.inner.addresses.lock() {
                        addresses.insert(node, address);
                    }
                    if let Ok(mut coordinators) = self.inner.coordinators.lock() {
                        coordinators.insert(group.to_string(), node);
                    }
                    return Ok(node);
                }
                Err(e) if e.is_retriable() && Instant::now() < deadline => {
                    failures += 1;
                    let delay = self.inner.retry.delay(failures);
                    tracing::debug!(group, error = %e, ?delay, "FindCoordinator: retrying");
                    tokio::time::sleep(delay).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Forgets the coordinator of `group`: the next call rediscovers it.
    pub fn forget_coordinator(&self, group: &str) {
        if let Ok(mut coordinators) = self.inner.coordinators.lock() {
            if coordinators.remove(group).is_some() {
                tracing::debug!(group, "coordinator forgotten");
            }
        }
    }

    /// The general connection to the coordinator of `group`, discovering it if needed; one
    /// rediscovery if the cached coordinator cannot be reached.
    pub async fn coordinator_connection(&self, group: &str) -> Result<Connection> {
        self.coordinator_connection_on(group, ConnectionKind::General)
            .await
    }

    /// As [`Client::coordinator_connection`], for the connection of `kind`.
    pub async fn coordinator_connection_on(
        &self,
        group: &str,
        kind: ConnectionKind,
    ) -> Result<Connection> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let node = match self.cached_coordinator(group) {
                Some(node) => node,
                None => self.find_coordinator(group).await?,
            };
            let result = match self.address_of(node) {
                Some(address) => self.inner.pool.get_on(node, kind, &address, true).await,
                None => Err(Error::Disconnected {
                    broker: format!("node {node} (address unknown)"),
                }),
            };
            match result {
                Ok(conn) => return Ok(conn),
                Err(e) => {
                    self.forget_coordinator(group);
                    self.inner.metadata_stale.store(true, Ordering::Relaxed);
                    if !(e.is_retriable() && attempt < 2) {
                        return Err(e);
                    }
                }
            }
        }
    }

    /// Sends a request to the coordinator of `group` at the version negotiated with it, on the
    /// general connection with `request.timeout.ms`. A connection failure or timeout forgets the
    /// coordinator. Broker error codes are the caller's.
    pub async fn call_coordinator<R, F>(&self, group: &str, build: F) -> Result<R::Response>
    where
        R: Request,
        F: FnOnce(i16) -> R,
    {
        self.call_coordinator_with(group, CoordinatorCall::default(), build)
            .await
    }

    /// As [`Client::call_coordinator`], on the connection and with the timeout `call` gives. A
    /// timeout closes only the connection the request was on.
    pub async fn call_coordinator_with<R, F>(
        &self,
        group: &str,
        call: CoordinatorCall,
        build: F,
    ) -> Result<R::Response>
    where
        R: Request,
        F: FnOnce(i16) -> R,
    {
        let conn = self
            .coordinator_connection_on(group, call.connection)
            .await?;
        let timeout = call.timeout.unwrap_or(self.inner.config.request_timeout);
        let result = conn.call_within(timeout, build).await;
        if let Err(Error::Io { .. } | Error::Disconnected { .. } | Error::Timeout { .. }) = &result
        {
            self.forget_coordinator(group);
        }
        result
    }

    /// Partition counts of `topics` from fresh metadata; topics that do not exist are absent.
    pub async fn partition_counts(&self, topics: &[String]) -> Result<BTreeMap<String, i32>> {
        let metadata = self.refresh_topics(topics).await?;
        Ok(topics
            .iter()
            .filter_map(|t| {
                let count = metadata.partition_count(t)?;
                (count > 0).then(|| (t.clone(), count))
            })
            .collect())
    }

    /// The partitions of `topics` with their replicas' racks, from fresh metadata (see
    /// [`Metadata::partitions_per_topic`]); topics that do not exist are absent.
    pub async fn partitions_per_topic(&self, topics: &[String]) -> Result<PartitionsPerTopic> {
        let metadata = self.refresh_topics(topics).await?;
        Ok(metadata.partitions_per_topic(topics))
    }

    /// Topic ids of `topics` (see `mooring_group::GroupTransport::topic_ids`): cached metadata, refreshed for
    /// `topics` when one of them is missing from it or when `refresh` is set.
    pub async fn topic_ids(
        &self,
        topics: &[String],
        refresh: bool,
    ) -> Result<BTreeMap<String, Uuid>> {
        let lookup = |metadata: &Metadata| -> BTreeMap<String, Uuid> {
            topics
                .iter()
                .filter_map(|t| metadata.topics.get(t).map(|info| (t.clone(), info.id)))
                .collect()
        };
        if !refresh {
            let cached = lookup(&self.cached_metadata());
            if topics.iter().all(|t| cached.contains_key(t)) {
                return Ok(cached);
            }
        }
        let metadata = self.refresh_topics(topics).await?;
        Ok(lookup(&metadata))
    }

    /// Topic names of `ids` (see `mooring_group::GroupTransport::topic_names`): cached metadata, refreshed
    /// (every topic: a Metadata request names topics, and these ids are what is not known yet)
    /// when one of them is missing from it or when `refresh` is set.
    pub async fn topic_names(&self, ids: &[Uuid], refresh: bool) -> Result<BTreeMap<Uuid, String>> {
        let lookup = |metadata: &Metadata| -> BTreeMap<Uuid, String> {
            metadata
                .topics
                .values()
                .filter(|info| !info.id.is_nil() && ids.contains(&info.id))
                .map(|info| (info.id, info.name.clone()))
                .collect()
        };
        if !refresh {
            let cached = lookup(&self.cached_metadata());
            if ids.iter().all(|id| cached.contains_key(id)) {
                return Ok(cached);
            }
        }
        let metadata = self.refresh_metadata().await?;
        Ok(lookup(&metadata))
    }

    /// The version of `R` negotiated with the coordinator of `group` (see
    /// `mooring_group::GroupTransport::coordinator_version`).
    pub async fn coordinator_version<R: Request>(&self, group: &str) -> Result<i16> {
        self.coordinator_connection(group).await?.version::<R>()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use mooring_wire::messages::find_coordinator::Coordinator;
    use mooring_wire::messages::FindCoordinatorResponse;

    #[test]
    fn coordinator_answers() {
        let batched = FindCoordinatorResponse {
            coordinators: vec![Coordinator {
                key: "g".into(),
                node_id: 2,
                host: "h".into(),
                port: 9,
                ..Default::default()
            }],
            ..Default::default()
        };
        let principal = || "User:alice".to_string();
        assert_eq!(
            coordinator_from(&batched, "g", principal).unwrap(),
            (2, "h:9".into())
        );
        let single = FindCoordinatorResponse {
            error_code: ErrorCode::CoordinatorNotAvailable.code(),
            node_id: -1,
            ..Default::default()
        };
        let err = coordinator_from(&single, "g", principal).unwrap_err();
        assert!(err.is_retriable(), "{err}");
        let denied = FindCoordinatorResponse {
            error_code: ErrorCode::GroupAuthorizationFailed.code(),
            ..Default::default()
        };
        let err = coordinator_from(&denied, "g", principal).unwrap_err();
        assert!(!err.is_retriable() && err.is_fatal(), "{err}");
        assert!(
            matches!(
                &err,
                Error::Authorization { api: "FindCoordinator", resource: crate::error::Resource::Group(g), principal, .. }
                    if g == "g" && principal == "User:alice"
            ),
            "{err:?}"
        );
    }
}
