//! Unit tests of the member with a scripted transport ([`fake`]): every row of the error table,
//! KIP-394, KIP-345, KIP-429 and heartbeats during a slow listener. Time is paused
//! (`start_paused`): waits are on conditions, tokio advances the clock when every task idles.
#![allow(clippy::unwrap_used, clippy::let_and_return)]

pub(crate) mod fake;
mod lifecycle;
mod local_failures;
mod rows;
mod scenarios;
mod security;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::timeout;

use self::fake::{DealAssignor, Fake};
use crate::assignor::{Assignor, RebalanceProtocol};
use crate::{
    GroupConfig, GroupEvent, GroupEventKind, GroupHandle, GroupMember, MemberSnapshot,
    RebalanceListener, TopicPartition,
};

/// Records listener calls; `revoke_delay` makes `revoked` slow.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    pub(crate) calls: Mutex<Vec<(&'static str, Vec<TopicPartition>)>>,
    pub(crate) revoke_delay: Duration,
}

impl Recorder {
    pub(crate) fn calls(&self) -> Vec<(&'static str, Vec<TopicPartition>)> {
        self.calls.lock().unwrap().clone()
    }
}

impl RebalanceListener for Arc<Recorder> {
    async fn revoked(&self, p: Vec<TopicPartition>) {
        self.calls.lock().unwrap().push(("revoked", p));
        tokio::time::sleep(self.revoke_delay).await;
    }
    async fn assigned(&self, p: Vec<TopicPartition>) {
        self.calls.lock().unwrap().push(("assigned", p));
    }
    async fn lost(&self, p: Vec<TopicPartition>) {
        self.calls.lock().unwrap().push(("lost", p));
    }
}

pub(crate) fn config(instance: Option<&str>) -> GroupConfig {
    let mut c = GroupConfig::new("g");
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

pub(crate) struct Setup {
    pub(crate) fake: Arc<Fake>,
    pub(crate) member: GroupHandle<Fake>,
    pub(crate) listener: Arc<Recorder>,
    pub(crate) events: crate::EventReceiver,
}

pub(crate) fn start(config: GroupConfig, protocol: RebalanceProtocol) -> Setup {
    start_with(
        config,
        vec![DealAssignor::new(
            if protocol == RebalanceProtocol::Eager {
                "range"
            } else {
                "cooperative-sticky"
            },
            protocol,
        )],
        Recorder::default(),
    )
}

pub(crate) fn start_with(
    config: GroupConfig,
    assignors: Vec<Arc<DealAssignor>>,
    listener: Recorder,
) -> Setup {
    let fake = Fake::new();
    fake.set_partitions("t", 4);
    let listener = Arc::new(listener);
    let assignors: Vec<Arc<dyn Assignor>> = assignors
        .into_iter()
        .map(|a| a as Arc<dyn Assignor>)
        .collect();
    let member =
        GroupMember::spawn_with_assignors(fake.clone(), config, listener.clone(), assignors)
            .unwrap();
    let events = member.take_events().unwrap();
    Setup {
        fake,
        member,
        listener,
        events,
    }
}

/// Waits (bounded, in paused time) until the member's state satisfies `pred`.
pub(crate) async fn wait_state(
    member: &GroupHandle<Fake>,
    pred: impl Fn(&MemberSnapshot) -> bool,
) -> MemberSnapshot {
    let mut rx = member.watch_state();
    let r = timeout(Duration::from_secs(600), rx.wait_for(|s| pred(s))).await;
    let snap = r
        .expect("state reached in time")
        .expect("member alive")
        .clone();
    snap
}

/// Waits until `pred` holds for the fake (polling in paused time).
pub(crate) async fn wait_until(pred: impl Fn() -> bool) {
    for _ in 0..10_000 {
        if pred() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("condition not reached");
}

/// Drains the events received so far.
pub(crate) fn drain(events: &mut crate::EventReceiver) -> Vec<GroupEvent> {
    let mut out = Vec::new();
    while let Ok(e) = events.try_recv() {
        out.push(e);
    }
    out
}

pub(crate) fn kinds(events: &[GroupEvent]) -> Vec<&GroupEventKind> {
    events.iter().map(|e| &e.kind).collect()
}
