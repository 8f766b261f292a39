//! How a member ends: when every handle is gone although its listener refers back to it (weakly),
//! and within the deadline of a close or a commit, whatever the listener or the coordinator does.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mooring_wire::error_code::ErrorCode as E;
use mooring_wire::messages::offset_commit::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use mooring_wire::messages::OffsetCommitResponse;
use tokio::time::Instant;

use super::fake::{join_ok, sync_ok, topic_id, DealAssignor, Fake};
use super::*;
use crate::{MemberState, OffsetAndMetadata, WeakGroupHandle};
use mooring_client::error::Error;

const HEARTBEAT: i16 = 12;
const LEAVE: i16 = 13;
const OFFSET_COMMIT: i16 = 8;

/// A listener that refers back to its member, as the consumer's does (to commit on revoke).
#[derive(Default)]
struct BackRef {
    member: OnceLock<WeakGroupHandle<Fake>>,
    /// Per `revoked` call: whether the member could still be reached.
    revoked: Mutex<Vec<(Vec<TopicPartition>, bool)>>,
}

impl RebalanceListener for Arc<BackRef> {
    async fn revoked(&self, p: Vec<TopicPartition>) {
        let reachable = self
            .member
            .get()
            .and_then(WeakGroupHandle::upgrade)
            .is_some();
        self.revoked.lock().unwrap().push((p, reachable));
    }
    async fn assigned(&self, _: Vec<TopicPartition>) {}
    async fn lost(&self, _: Vec<TopicPartition>) {}
}

/// A stable member (generation 1, owning `t-0`) whose listener holds a weak handle to it.
async fn stable_with_back_ref(
    instance: Option<&str>,
) -> (Arc<Fake>, GroupHandle<Fake>, Arc<BackRef>) {
    let fake = Fake::new();
    fake.set_partitions("t", 4);
    let listener = Arc::new(BackRef::default());
    let member = GroupMember::spawn_with_assignors(
        fake.clone(),
        config(instance),
        listener.clone(),
        vec![DealAssignor::new("range", RebalanceProtocol::Eager) as Arc<dyn Assignor>],
    )
    .unwrap();
    let _ = listener.member.set(member.downgrade());
    fake.push(join_ok(1, "m1", "other", "range"));
    fake.push(sync_ok(&[("t", &[0])]));
    member.subscribe(["t"]).await.unwrap();
    wait_state(&member, |x| x.state == MemberState::Stable).await;
    (fake, member, listener)
}

/// Heartbeats stop: none in the 10 s after `since`.
async fn heartbeats_stopped(fake: &Fake) {
    let before = fake.count(HEARTBEAT);
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(fake.count(HEARTBEAT), before, "heartbeats went on");
}

#[tokio::test(start_paused = true)]
async fn dropping_every_handle_ends_a_member_its_listener_refers_back_to() {
    let (fake, member, listener) = stable_with_back_ref(None).await;
    let weak = member.downgrade();
    let state = member.watch_state();
    drop(member);
    wait_until(|| fake.count(LEAVE) == 1).await;
    assert_eq!(state.borrow().state, MemberState::Closed);
    assert!(weak.upgrade().is_none(), "the member is unreachable");
    assert_eq!(
        *listener.revoked.lock().unwrap(),
        vec![(vec![tp("t", 0)], false)],
        "revoked on close; no handle left to upgrade to"
    );
    heartbeats_stopped(&fake).await;
}

#[tokio::test(start_paused = true)]
async fn dropping_every_handle_stops_a_static_member_without_leave_group() {
    let (fake, member, _listener) = stable_with_back_ref(Some("i-1")).await;
    let mut state = member.watch_state();
    drop(member);
    let closed = timeout(
        Duration::from_secs(60),
        state.wait_for(|s| s.state == MemberState::Closed),
    )
    .await;
    assert!(matches!(closed, Ok(Ok(_))), "the member closed");
    assert_eq!(fake.count(LEAVE), 0, "a static member stays in the group");
    heartbeats_stopped(&fake).await;
}

#[tokio::test(start_paused = true)]
async fn close_within_ends_by_its_deadline_while_the_listener_hangs() {
    let listener = Recorder {
        revoke_delay: Duration::from_secs(3600),
        ..Default::default()
    };
    let mut s = start_with(
        config(None),
        vec![DealAssignor::new("range", RebalanceProtocol::Eager)],
        listener,
    );
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    let started = Instant::now();
    let result = s.member.close_within(Duration::from_secs(2)).await;
    assert!(started.elapsed() <= Duration::from_secs(2));
    assert!(
        matches!(result, Err(Error::DeadlineExceeded { .. })),
        "{result:?}"
    );
    wait_state(&s.member, |x| x.state == MemberState::Closed).await;
    assert_eq!(s.fake.count(LEAVE), 0, "no time was left for LeaveGroup");
    let events = drain(&mut s.events);
    assert!(kinds(&events).iter().any(|k| matches!(
        k,
        GroupEventKind::PartitionsRevoked {
            timed_out: true,
            ..
        }
    )));
    assert!(kinds(&events).iter().any(|k| matches!(
        k,
        GroupEventKind::Left {
            sent_leave_group: true,
            error: Some(_)
        }
    )));
}

#[tokio::test(start_paused = true)]
async fn close_within_bounds_a_leave_group_never_answered() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.fake.push_hang(LEAVE);
    let started = Instant::now();
    let result = s.member.close_within(Duration::from_secs(5)).await;
    assert_eq!(started.elapsed(), Duration::from_secs(5));
    assert!(
        matches!(result, Err(Error::DeadlineExceeded { .. })),
        "{result:?}"
    );
    assert_eq!(s.fake.count(LEAVE), 1);
    wait_state(&s.member, |x| x.state == MemberState::Closed).await;
}

fn commit_answer(code: E) -> OffsetCommitResponse {
    OffsetCommitResponse {
        topics: vec![OffsetCommitResponseTopic {
            topic_id: topic_id("t"),
            partitions: vec![OffsetCommitResponsePartition {
                partition_index: 0,
                error_code: code.code(),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn one_offset() -> BTreeMap<TopicPartition, OffsetAndMetadata> {
    BTreeMap::from([(tp("t", 0), OffsetAndMetadata::new(7))])
}

#[tokio::test(start_paused = true)]
async fn commit_within_gives_up_on_an_answer_that_never_comes() {
    let mut s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    s.fake.push_hang(OFFSET_COMMIT);
    let started = Instant::now();
    let result = s
        .member
        .commit_within(one_offset(), Duration::from_secs(3))
        .await;
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    assert!(
        matches!(
            &result,
            Err(Error::DeadlineExceeded {
                api: "OffsetCommit",
                last: None,
                ..
            })
        ),
        "{result:?}"
    );
    assert!(kinds(&drain(&mut s.events))
        .iter()
        .any(|k| matches!(k, GroupEventKind::Commit { error: Some(_), .. })));
}

#[tokio::test(start_paused = true)]
async fn commit_retries_stop_at_the_deadline_and_name_the_last_error() {
    let mut c = config(None);
    c.commit_retries = 100;
    c.retry_backoff = Duration::from_secs(1);
    let s = start(c, RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    for _ in 0..20 {
        s.fake.push(commit_answer(E::CoordinatorLoadInProgress));
    }
    let started = Instant::now();
    let result = s
        .member
        .commit_within(one_offset(), Duration::from_millis(2500))
        .await;
    assert_eq!(started.elapsed(), Duration::from_millis(2500));
    match result {
        Err(Error::DeadlineExceeded {
            last: Some(last), ..
        }) => assert!(
            matches!(
                *last,
                Error::Broker {
                    code: E::CoordinatorLoadInProgress,
                    ..
                }
            ),
            "{last:?}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(s.fake.count(OFFSET_COMMIT), 3, "attempts at 0, 1 and 2 s");
}
