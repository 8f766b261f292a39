//! Unit tests of the `consumer`-protocol member with the scripted transport
//! ([`fake`](crate::classic::tests::fake)): one test per row of the error table (`rows`),
//! commits and offset fetches with the member epoch (`commits`), and joining, reconciling and
//! leaving (`lifecycle`). Time is paused (`start_paused`): waits are on conditions, tokio advances
//! the clock when every task idles.
#![allow(clippy::unwrap_used)]

mod commits;
mod lifecycle;
mod rows;

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::consumer_group_heartbeat::{Assignment, TopicPartitions};
use mooring_wire::messages::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};

use crate::classic::tests::fake::{topic_id, Fake};
use crate::classic::tests::{drain, wait_state, Recorder};
use crate::{
    ConsumerMemberState, EventReceiver, GroupConfig, GroupEvent, GroupEventKind, GroupHandle,
    GroupMember, GroupProtocol, MemberSnapshot, RebalanceListener, TopicPartition, WeakGroupHandle,
};

/// ConsumerGroupHeartbeat's API key.
pub(crate) const HEARTBEAT: i16 = 68;

pub(crate) fn config(instance: Option<&str>) -> GroupConfig {
    let mut c = GroupConfig::new("g");
    c.protocol = GroupProtocol::Consumer;
    c.group_instance_id = instance.map(str::to_owned);
    c.session_timeout = Duration::from_secs(6);
    c.heartbeat_interval = Duration::from_secs(1);
    c.rebalance_timeout = Duration::from_secs(30);
    c.retry_backoff = Duration::from_millis(100);
    c.client_rack = Some("rack-a".into());
    c
}

pub(crate) fn tp(t: &str, p: i32) -> TopicPartition {
    TopicPartition::new(t, p)
}

pub(crate) fn tps(t: &str, ps: &[i32]) -> Vec<TopicPartition> {
    ps.iter().map(|p| tp(t, *p)).collect()
}

pub(crate) struct Setup {
    pub(crate) fake: Arc<Fake>,
    pub(crate) member: GroupHandle<Fake>,
    pub(crate) listener: Arc<Recorder>,
    pub(crate) events: EventReceiver,
}

pub(crate) fn start(config: GroupConfig) -> Setup {
    start_with(config, Recorder::default())
}

pub(crate) fn start_with(config: GroupConfig, listener: Recorder) -> Setup {
    let fake = Fake::new();
    fake.set_partitions("t", 4);
    fake.set_partitions("u", 2);
    let listener = Arc::new(listener);
    let member = GroupMember::spawn(fake.clone(), config, listener.clone()).unwrap();
    let events = member.take_events().unwrap();
    Setup {
        fake,
        member,
        listener,
        events,
    }
}

/// A successful answer with `epoch` and, if given, a target assignment.
pub(crate) fn ok(
    epoch: i32,
    assignment: Option<&[(&str, &[i32])]>,
) -> ConsumerGroupHeartbeatResponse {
    ConsumerGroupHeartbeatResponse {
        member_epoch: epoch,
        heartbeat_interval_ms: 1000,
        assignment: assignment.map(|topics| Assignment {
            topic_partitions: topics
                .iter()
                .map(|(t, ps)| TopicPartitions {
                    topic_id: topic_id(t),
                    partitions: ps.to_vec(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// An error answer.
pub(crate) fn refused(code: ErrorCode) -> ConsumerGroupHeartbeatResponse {
    ConsumerGroupHeartbeatResponse {
        error_code: code.code(),
        error_message: Some(format!("{code}")),
        member_epoch: -1,
        ..Default::default()
    }
}

pub(crate) fn heartbeats(s: &Setup) -> Vec<ConsumerGroupHeartbeatRequest> {
    s.fake.requests::<ConsumerGroupHeartbeatRequest>()
}

/// The owned partitions a heartbeat says, by topic name.
pub(crate) fn said_owned(
    request: &ConsumerGroupHeartbeatRequest,
) -> Option<BTreeSet<TopicPartition>> {
    request.topic_partitions.as_ref().map(|topics| {
        topics
            .iter()
            .flat_map(|t| {
                let name = ["t", "u", "v"]
                    .into_iter()
                    .find(|n| topic_id(n) == t.topic_id)
                    .unwrap_or("?");
                t.partitions.iter().map(move |p| tp(name, *p))
            })
            .collect()
    })
}

/// Waits until the member is in `state` at `epoch` owning `owned`.
pub(crate) async fn wait_owning(
    s: &Setup,
    state: ConsumerMemberState,
    epoch: i32,
    owned: &[TopicPartition],
) -> MemberSnapshot {
    let owned: BTreeSet<TopicPartition> = owned.iter().cloned().collect();
    wait_state(&s.member, |x| {
        x.consumer_state == Some(state) && x.generation == epoch && x.assignment == owned
    })
    .await
}

/// Subscribes to `t` and reaches Stable at epoch 1 owning `t-0, t-1`, acknowledged.
pub(crate) async fn stable(s: &Setup) {
    s.fake.push(ok(1, Some(&[("t", &[0, 1])])));
    s.member.subscribe(["t"]).await.unwrap();
    wait_owning(s, ConsumerMemberState::Stable, 1, &tps("t", &[0, 1])).await;
}

pub(crate) fn kinds(events: &[GroupEvent]) -> Vec<&GroupEventKind> {
    events.iter().map(|e| &e.kind).collect()
}

/// Drains the events so far and names them.
pub(crate) fn names(events: &mut EventReceiver) -> Vec<&'static str> {
    drain(events)
        .iter()
        .filter_map(|e| {
            Some(match &e.kind {
                GroupEventKind::RebalanceStarted { .. } => "started",
                GroupEventKind::Joined { .. } => "joined",
                GroupEventKind::PartitionsRevoked { .. } => "revoked",
                GroupEventKind::PartitionsAssigned { .. } => "assigned",
                GroupEventKind::PartitionsLost { .. } => "lost",
                GroupEventKind::Reconciled { .. } => "reconciled",
                GroupEventKind::RebalanceCompleted { .. } => "completed",
                GroupEventKind::RebalanceFailed { .. } => "failed",
                GroupEventKind::InstanceIdUnreleased { .. } => "unreleased",
                GroupEventKind::Left { .. } => "left",
                _ => return None,
            })
        })
        .collect()
}

/// A listener that commits from inside `revoked`, as the runtime's does, through a weak handle.
#[derive(Default)]
pub(crate) struct Committer {
    pub(crate) member: OnceLock<WeakGroupHandle<Fake>>,
    pub(crate) results: Mutex<Vec<mooring_client::Result<()>>>,
}

impl RebalanceListener for Arc<Committer> {
    async fn revoked(&self, p: Vec<TopicPartition>) {
        let Some(member) = self.member.get().and_then(WeakGroupHandle::upgrade) else {
            return;
        };
        let offsets = p
            .into_iter()
            .map(|tp| (tp, crate::OffsetAndMetadata::new(7)))
            .collect();
        let result = member.commit(offsets).await;
        self.results.lock().unwrap().push(result);
    }
    async fn assigned(&self, _: Vec<TopicPartition>) {}
    async fn lost(&self, _: Vec<TopicPartition>) {}
}
