//! A scripted `GroupTransport`: queued responses per API, every request recorded with how it was
//! sent (connection and timeout); timeouts are recorded, not enforced. Each request is encoded at
//! the version it was built for, as a connection would (a field the version lacks is
//! `Error::Encode`); an API marked unsupported fails as a broker without it does
//! (`Error::UnsupportedVersion`, before anything is built).
//! An API with nothing queued answers Heartbeat/LeaveGroup/DescribeGroups with a success,
//! ConsumerGroupHeartbeat as a coordinator with nothing new to say (the epoch asked with, a new
//! one with an empty assignment for a join, the leave epoch for a leave), and leaves every other
//! request pending (as a coordinator holding a JoinGroup would).

use std::any::Any;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicI16, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mooring_wire::consumer_protocol::{Assignment, Subscription, TopicPartitions};
use mooring_wire::messages::consumer_group_heartbeat::Assignment as HeartbeatAssignment;
use mooring_wire::messages::join_group::JoinGroupResponseMember;
use mooring_wire::messages::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, DescribeGroupsResponse,
    HeartbeatResponse, JoinGroupResponse, LeaveGroupResponse, Message, Request,
    ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, SyncGroupResponse,
};

use mooring_wire::primitives::Uuid;

use crate::assignor::{Assignor, MemberSubscription, PartitionsPerTopic, RebalanceProtocol};
use crate::transport::GroupTransport;
use mooring_client::error::{Error, Result};
use mooring_client::CoordinatorCall;

/// The principal the fake reports.
pub(crate) const PRINCIPAL: &str = "User:test";

/// The `request.timeout.ms` the fake reports.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

/// One scripted answer.
pub(crate) enum Scripted {
    Respond(Box<dyn Any + Send>),
    /// Answered once the gate is opened (a coordinator holding the request).
    Held(Arc<tokio::sync::Notify>, Box<dyn Any + Send>),
    Fail(Error),
    /// No answer, ever (a broker that went away without closing the connection).
    Hang,
}

#[derive(Default)]
struct Inner {
    queues: HashMap<i16, VecDeque<Scripted>>,
    requests: Vec<(i16, tokio::time::Instant, Box<dyn Any + Send>)>,
    /// How each request was sent, by API key, in order.
    calls: Vec<(i16, CoordinatorCall)>,
    topics: PartitionsPerTopic,
}

pub(crate) struct Fake {
    inner: Mutex<Inner>,
    pub(crate) forgets: AtomicUsize,
    /// The version OffsetCommit and OffsetFetch are built at (10, as Kafka 4.4 negotiates, unless
    /// a test sets 9, as a 3.x broker).
    pub(crate) offsets_version: AtomicI16,
    /// `topic_ids` calls, and how many of them asked for a refresh.
    pub(crate) id_lookups: AtomicUsize,
    pub(crate) id_refreshes: AtomicUsize,
    /// `topic_names` calls.
    pub(crate) name_lookups: AtomicUsize,
    /// How long each `topic_names` call takes to answer (a slow metadata look-up).
    name_lookup_delay: Mutex<std::time::Duration>,
    /// The version each API is built at, where a test sets one (else the highest).
    versions: Mutex<HashMap<i16, i16>>,
    /// APIs the "broker" does not offer.
    unsupported: Mutex<BTreeSet<i16>>,
    /// The member epoch the last successful ConsumerGroupHeartbeat answer gave.
    pub(crate) last_epoch: AtomicI32,
    /// The heartbeat interval unscripted ConsumerGroupHeartbeat answers give.
    pub(crate) heartbeat_interval_ms: AtomicI32,
}

impl Default for Fake {
    fn default() -> Self {
        Fake {
            inner: Mutex::default(),
            forgets: AtomicUsize::new(0),
            offsets_version: AtomicI16::new(10),
            id_lookups: AtomicUsize::new(0),
            id_refreshes: AtomicUsize::new(0),
            name_lookups: AtomicUsize::new(0),
            name_lookup_delay: Mutex::default(),
            versions: Mutex::default(),
            unsupported: Mutex::default(),
            last_epoch: AtomicI32::new(0),
            heartbeat_interval_ms: AtomicI32::new(1000),
        }
    }
}

/// The id the fake gives topic `name` (every topic with a known partition count has one).
pub(crate) fn topic_id(name: &str) -> Uuid {
    let mut bytes = [0u8; 16];
    for (b, c) in bytes.iter_mut().zip(name.bytes()) {
        *b = c;
    }
    bytes[15] = 1;
    Uuid(bytes)
}

impl std::fmt::Debug for Fake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Fake")
    }
}

#[allow(clippy::unwrap_used)]
impl Fake {
    pub(crate) fn new() -> Arc<Fake> {
        Arc::new(Fake::default())
    }

    pub(crate) fn push<R: Message + Send + 'static>(&self, response: R) {
        self.push_scripted(R::API_KEY, Scripted::Respond(Box::new(response)));
    }

    /// Queues `response`, answered only after `gate` is notified.
    pub(crate) fn push_held<R: Message + Send + 'static>(
        &self,
        response: R,
        gate: Arc<tokio::sync::Notify>,
    ) {
        self.push_scripted(R::API_KEY, Scripted::Held(gate, Box::new(response)));
    }

    pub(crate) fn push_error(&self, api_key: i16, error: Error) {
        self.push_scripted(api_key, Scripted::Fail(error));
    }

    /// The next request of API `api_key` is never answered.
    pub(crate) fn push_hang(&self, api_key: i16) {
        self.push_scripted(api_key, Scripted::Hang);
    }

    fn push_scripted(&self, key: i16, s: Scripted) {
        self.inner
            .lock()
            .unwrap()
            .queues
            .entry(key)
            .or_default()
            .push_back(s);
    }

    /// Requests of API `key` are built (and encoded) at `version`.
    pub(crate) fn set_version(&self, key: i16, version: i16) {
        self.versions.lock().unwrap().insert(key, version);
    }

    /// The "broker" does not offer API `key` at all.
    pub(crate) fn set_unsupported(&self, key: i16) {
        self.unsupported.lock().unwrap().insert(key);
    }

    fn version_of<R: Request>(&self) -> Result<i16> {
        if self.unsupported.lock().unwrap().contains(&R::API_KEY) {
            return Err(Error::UnsupportedVersion {
                api: R::NAME,
                broker: "node 1 (fake)".into(),
            });
        }
        let set = self.versions.lock().unwrap().get(&R::API_KEY).copied();
        Ok(set.unwrap_or(if R::API_KEY == 8 || R::API_KEY == 9 {
            self.offsets_version.load(Ordering::SeqCst)
        } else {
            R::MAX_VERSION
        }))
    }

    /// What a coordinator with nothing new to say answers `request`.
    fn default_heartbeat(
        &self,
        request: &ConsumerGroupHeartbeatRequest,
    ) -> ConsumerGroupHeartbeatResponse {
        let last = self.last_epoch.load(Ordering::SeqCst);
        let epoch = match request.member_epoch {
            e if e < 0 => e,
            0 => last + 1,
            e => e.max(last),
        };
        if epoch > 0 {
            self.last_epoch.store(epoch, Ordering::SeqCst);
        }
        ConsumerGroupHeartbeatResponse {
            member_id: Some(request.member_id.clone()),
            member_epoch: epoch,
            heartbeat_interval_ms: self.heartbeat_interval_ms.load(Ordering::SeqCst),
            assignment: (request.member_epoch == 0).then(HeartbeatAssignment::default),
            ..Default::default()
        }
    }

    /// What a share coordinator with nothing new to say answers `request`: the epoch it sent
    /// (the next one when joining), no assignment change.
    fn default_share_heartbeat(
        &self,
        request: &ShareGroupHeartbeatRequest,
    ) -> ShareGroupHeartbeatResponse {
        let epoch = match request.member_epoch {
            0 => self.last_epoch.load(Ordering::SeqCst) + 1,
            e => e,
        };
        ShareGroupHeartbeatResponse {
            member_id: Some(request.member_id.clone()),
            member_epoch: epoch,
            heartbeat_interval_ms: self.heartbeat_interval_ms.load(Ordering::SeqCst),
            ..Default::default()
        }
    }

    /// `topic` has `count` partitions, with no replica racks.
    /// Each `topic_names` call answers only after `delay`.
    pub(crate) fn delay_name_lookups(&self, delay: std::time::Duration) {
        *self.name_lookup_delay.lock().unwrap() = delay;
    }

    pub(crate) fn set_partitions(&self, topic: &str, count: i32) {
        let count = usize::try_from(count).unwrap();
        self.set_replica_racks(topic, &vec![&[][..]; count]);
    }

    /// `topic` has a partition per entry, each with its replicas' racks.
    pub(crate) fn set_replica_racks(&self, topic: &str, racks: &[&[&str]]) {
        let racks = racks
            .iter()
            .map(|r| r.iter().map(|s| (*s).to_owned()).collect::<BTreeSet<_>>())
            .collect();
        self.inner.lock().unwrap().topics.insert(topic, racks);
    }

    /// Every recorded request of type `R`, in order.
    pub(crate) fn requests<R: Clone + 'static>(&self) -> Vec<R> {
        self.inner
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter_map(|(_, _, r)| r.downcast_ref::<R>().cloned())
            .collect()
    }

    /// When each request of API `key` was sent.
    pub(crate) fn times(&self, key: i16) -> Vec<tokio::time::Instant> {
        self.inner
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter(|(k, _, _)| *k == key)
            .map(|(_, t, _)| *t)
            .collect()
    }

    /// How each request of API `key` was sent (connection, timeout), in order.
    pub(crate) fn calls(&self, key: i16) -> Vec<CoordinatorCall> {
        self.inner
            .lock()
            .unwrap()
            .calls
            .iter()
            .filter(|(k, _)| *k == key)
            .map(|(_, c)| *c)
            .collect()
    }

    pub(crate) fn count(&self, key: i16) -> usize {
        self.keys().iter().filter(|k| **k == key).count()
    }

    /// API keys of every request, in order (heartbeats included).
    pub(crate) fn keys(&self) -> Vec<i16> {
        self.inner
            .lock()
            .unwrap()
            .requests
            .iter()
            .map(|(k, _, _)| *k)
            .collect()
    }
}

#[allow(clippy::unwrap_used)]
impl GroupTransport for Fake {
    fn call_coordinator_with<R, F>(
        &self,
        _group: &str,
        call: CoordinatorCall,
        build: F,
    ) -> impl Future<Output = Result<R::Response>> + Send
    where
        R: Request + Send + 'static,
        R::Response: Send + 'static,
        F: FnOnce(i16) -> R + Send,
    {
        let prepared = self.version_of::<R>().and_then(|version| {
            let request = build(version);
            let mut buf = BytesMut::new();
            request
                .encode(&mut buf, version)
                .map(|()| request)
                .map_err(|source| Error::Encode {
                    api: R::NAME,
                    source,
                })
        });
        let request = match prepared {
            Ok(request) => request,
            Err(e) => return futures_ready(Err(e)),
        };
        let heartbeat = (&request as &dyn Any)
            .downcast_ref::<ConsumerGroupHeartbeatRequest>()
            .cloned();
        let share_heartbeat = (&request as &dyn Any)
            .downcast_ref::<ShareGroupHeartbeatRequest>()
            .cloned();
        let scripted = {
            let mut inner = self.inner.lock().unwrap();
            inner
                .requests
                .push((R::API_KEY, tokio::time::Instant::now(), Box::new(request)));
            inner.calls.push((R::API_KEY, call));
            inner
                .queues
                .get_mut(&R::API_KEY)
                .and_then(VecDeque::pop_front)
        };
        if let Some(Scripted::Respond(b) | Scripted::Held(_, b)) = &scripted {
            if let Some(r) = b.downcast_ref::<ConsumerGroupHeartbeatResponse>() {
                if r.error_code == 0 && r.member_epoch > 0 {
                    self.last_epoch.store(r.member_epoch, Ordering::SeqCst);
                }
            }
            if let Some(r) = b.downcast_ref::<ShareGroupHeartbeatResponse>() {
                if r.error_code == 0 && r.member_epoch > 0 {
                    self.last_epoch.store(r.member_epoch, Ordering::SeqCst);
                }
            }
        }
        let default_heartbeat = heartbeat
            .filter(|_| scripted.is_none())
            .map(|r| self.default_heartbeat(&r));
        let default_share_heartbeat = share_heartbeat
            .filter(|_| scripted.is_none())
            .map(|r| self.default_share_heartbeat(&r));
        Box::pin(async move {
            let take = |b: Box<dyn Any + Send>| -> R::Response {
                *b.downcast::<R::Response>()
                    .expect("scripted response of the right type")
            };
            match scripted {
                Some(Scripted::Respond(b)) => Ok(take(b)),
                Some(Scripted::Held(gate, b)) => {
                    gate.notified().await;
                    Ok(take(b))
                }
                Some(Scripted::Fail(e)) => Err(e),
                Some(Scripted::Hang) => std::future::pending().await,
                None => {
                    let default: Option<Box<dyn Any + Send>> = match R::API_KEY {
                        12 => Some(Box::new(HeartbeatResponse::default())),
                        13 => Some(Box::new(LeaveGroupResponse::default())),
                        15 => Some(Box::new(DescribeGroupsResponse::default())),
                        68 => default_heartbeat.map(|r| Box::new(r) as Box<dyn Any + Send>),
                        76 => default_share_heartbeat.map(|r| Box::new(r) as Box<dyn Any + Send>),
                        _ => None,
                    };
                    match default {
                        Some(b) => Ok(take(b)),
                        None => std::future::pending().await,
                    }
                }
            }
        })
    }

    fn request_timeout(&self) -> Duration {
        REQUEST_TIMEOUT
    }

    fn principal(&self) -> String {
        PRINCIPAL.into()
    }

    fn forget_coordinator(&self, _group: &str) {
        self.forgets.fetch_add(1, Ordering::SeqCst);
    }

    fn partition_counts(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<BTreeMap<String, i32>>> + Send {
        let counts = self.inner.lock().unwrap().topics.counts();
        let out = topics
            .iter()
            .filter_map(|t| counts.get(t).map(|c| (t.clone(), *c)))
            .collect();
        async move { Ok(out) }
    }

    fn topic_names(
        &self,
        ids: &[Uuid],
        _refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<Uuid, String>>> + Send {
        self.name_lookups.fetch_add(1, Ordering::SeqCst);
        let counts = self.inner.lock().unwrap().topics.counts();
        let out = counts
            .keys()
            .map(|t| (topic_id(t), t.clone()))
            .filter(|(id, _)| ids.contains(id))
            .collect();
        let delay = *self.name_lookup_delay.lock().unwrap();
        async move {
            tokio::time::sleep(delay).await;
            Ok(out)
        }
    }

    fn coordinator_version<R>(&self, _group: &str) -> impl Future<Output = Result<i16>> + Send
    where
        R: Request + Send + 'static,
    {
        let version = self.version_of::<R>();
        async move { version }
    }

    fn partitions_per_topic(
        &self,
        topics: &[String],
    ) -> impl Future<Output = Result<PartitionsPerTopic>> + Send {
        let all = self.inner.lock().unwrap().topics.clone();
        let mut out = PartitionsPerTopic::new();
        for (topic, racks) in all.iter().filter(|(t, _)| topics.iter().any(|x| x == t)) {
            out.insert(topic, racks.to_vec());
        }
        async move { Ok(out) }
    }

    fn topic_ids(
        &self,
        topics: &[String],
        refresh: bool,
    ) -> impl Future<Output = Result<BTreeMap<String, Uuid>>> + Send {
        self.id_lookups.fetch_add(1, Ordering::SeqCst);
        if refresh {
            self.id_refreshes.fetch_add(1, Ordering::SeqCst);
        }
        let counts = self.inner.lock().unwrap().topics.counts();
        let out = topics
            .iter()
            .filter(|t| counts.contains_key(*t))
            .map(|t| (t.clone(), topic_id(t)))
            .collect();
        async move { Ok(out) }
    }
}

/// An answer that is ready at once.
fn futures_ready<T: Send + 'static>(value: T) -> Pin<Box<dyn Future<Output = T> + Send>> {
    Box::pin(std::future::ready(value))
}

/// A test assignor: deals every partition of every subscribed topic round-robin over the members
/// sorted by id; counts its calls and keeps the topics it was given.
#[derive(Debug)]
pub(crate) struct DealAssignor {
    pub(crate) name: &'static str,
    pub(crate) protocol: RebalanceProtocol,
    pub(crate) calls: AtomicUsize,
    pub(crate) given: Mutex<Vec<PartitionsPerTopic>>,
}

impl DealAssignor {
    pub(crate) fn new(name: &'static str, protocol: RebalanceProtocol) -> Arc<DealAssignor> {
        Arc::new(DealAssignor {
            name,
            protocol,
            calls: AtomicUsize::new(0),
            given: Mutex::default(),
        })
    }
}

impl Assignor for DealAssignor {
    fn name(&self) -> &'static str {
        self.name
    }
    fn protocol(&self) -> RebalanceProtocol {
        self.protocol
    }
    fn subscription_user_data(&self, _: &[TopicPartitions], _: i32) -> Option<Bytes> {
        Some(Bytes::from_static(self.name.as_bytes()))
    }
    fn assign(
        &self,
        partitions_per_topic: &PartitionsPerTopic,
        members: &[MemberSubscription],
    ) -> BTreeMap<String, Assignment> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.given
            .lock()
            .unwrap()
            .push(partitions_per_topic.clone());
        let mut ids: Vec<&str> = members.iter().map(|m| m.member_id.as_str()).collect();
        ids.sort();
        let mut out: BTreeMap<String, BTreeMap<String, Vec<i32>>> = BTreeMap::new();
        let mut i = 0;
        for (topic, n) in partitions_per_topic.counts() {
            for p in 0..n {
                let id = ids[i % ids.len()];
                out.entry(id.into())
                    .or_default()
                    .entry(topic.clone())
                    .or_default()
                    .push(p);
                i += 1;
            }
        }
        members
            .iter()
            .map(|m| {
                let parts = out.remove(&m.member_id).unwrap_or_default();
                (
                    m.member_id.clone(),
                    Assignment {
                        partitions: parts
                            .into_iter()
                            .map(|(t, ps)| TopicPartitions::new(t, ps))
                            .collect(),
                        user_data: None,
                    },
                )
            })
            .collect()
    }
}

/// A JoinGroup response.
pub(crate) fn join_ok(
    generation: i32,
    member_id: &str,
    leader: &str,
    protocol: &str,
) -> JoinGroupResponse {
    JoinGroupResponse {
        generation_id: generation,
        protocol_type: Some("consumer".into()),
        protocol_name: Some(protocol.into()),
        leader: leader.into(),
        member_id: member_id.into(),
        ..Default::default()
    }
}

pub(crate) fn join_error(code: i16, member_id: &str) -> JoinGroupResponse {
    JoinGroupResponse {
        error_code: code,
        generation_id: -1,
        protocol_name: None,
        member_id: member_id.into(),
        ..Default::default()
    }
}

#[allow(clippy::unwrap_used)]
pub(crate) fn member(id: &str, topics: &[&str]) -> JoinGroupResponseMember {
    let s = Subscription {
        topics: topics.iter().map(|t| t.to_string()).collect(),
        ..Default::default()
    };
    let mut buf = BytesMut::new();
    s.encode(3, &mut buf).unwrap();
    JoinGroupResponseMember {
        member_id: id.into(),
        metadata: buf.freeze(),
        ..Default::default()
    }
}

#[allow(clippy::unwrap_used)]
pub(crate) fn sync_ok(partitions: &[(&str, &[i32])]) -> SyncGroupResponse {
    let a = Assignment {
        partitions: partitions
            .iter()
            .map(|(t, ps)| TopicPartitions::new(*t, ps.to_vec()))
            .collect(),
        user_data: None,
    };
    let mut buf = BytesMut::new();
    a.encode(3, &mut buf).unwrap();
    SyncGroupResponse {
        protocol_type: Some("consumer".into()),
        assignment: buf.freeze(),
        ..Default::default()
    }
}

pub(crate) fn sync_error(code: i16) -> SyncGroupResponse {
    SyncGroupResponse {
        error_code: code,
        ..Default::default()
    }
}
