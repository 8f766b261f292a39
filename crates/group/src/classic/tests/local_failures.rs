//! A request this client cannot encode ([`Error::is_fatal`]) stops the member once, with the
//! error in its snapshot, wherever it happens (JoinGroup, SyncGroup, Heartbeat): no retry loop.

use std::time::Duration;

use mooring_wire::error_code::ErrorCode as E;
use mooring_wire::EncodeError;

use super::fake::{join_ok, sync_ok};
use super::*;
use crate::MemberState;
use mooring_client::error::Error;

const JOIN: i16 = 11;
const HEARTBEAT: i16 = 12;
const SYNC: i16 = 14;

fn unencodable(api: &'static str) -> Error {
    Error::Encode {
        api,
        source: EncodeError::FieldNotAtVersion {
            api,
            version: 4,
            field: "some_field",
        },
    }
}

/// Waits for the member to stop, checks the failure it publishes, then that nothing more of
/// `api_key` is sent for a while (no retry loop).
async fn stops_once_with(s: &Setup, api_key: i16, api: &str) {
    let snap = wait_state(&s.member, |x| {
        x.state == MemberState::Failed(E::UnsupportedVersion)
    })
    .await;
    match snap.failure.as_deref() {
        Some(Error::Encode { api: failed, .. }) => assert_eq!(*failed, api),
        other => panic!("expected the encoding failure in the snapshot, got {other:?}"),
    }
    let sent = s.fake.count(api_key);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(s.fake.count(api_key), sent, "{api} was retried");
    assert_eq!(
        s.member.state().state,
        MemberState::Failed(E::UnsupportedVersion)
    );
}

#[tokio::test(start_paused = true)]
async fn an_unencodable_join_stops_the_member() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push_error(JOIN, unencodable("JoinGroupRequest"));
    s.member.subscribe(["t"]).await.unwrap();
    stops_once_with(&s, JOIN, "JoinGroupRequest").await;
    assert_eq!(s.fake.count(JOIN), 1);
    // A new subscribe tries again, and the failure is gone with it.
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.member.subscribe(["t"]).await.unwrap();
    let snap = wait_state(&s.member, |x| x.state == MemberState::Stable).await;
    assert!(snap.failure.is_none());
}

#[tokio::test(start_paused = true)]
async fn an_unencodable_sync_stops_the_member() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push_error(SYNC, unencodable("SyncGroupRequest"));
    s.member.subscribe(["t"]).await.unwrap();
    stops_once_with(&s, SYNC, "SyncGroupRequest").await;
    assert_eq!(s.fake.count(JOIN), 1);
}

#[tokio::test(start_paused = true)]
async fn an_unencodable_heartbeat_stops_the_member() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0, 1])]));
    s.fake
        .push_error(HEARTBEAT, unencodable("HeartbeatRequest"));
    s.member.subscribe(["t"]).await.unwrap();
    stops_once_with(&s, HEARTBEAT, "HeartbeatRequest").await;
    assert_eq!(s.fake.count(HEARTBEAT), 1);
    // Its partitions are lost: the generation is of no use any more.
    assert!(s.listener.calls().iter().any(|(call, _)| *call == "lost"));
}
