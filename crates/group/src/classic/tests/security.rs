//! Security failures stop the member once, with the typed error in its snapshot, wherever they
//! happen: an authentication refused while connecting for JoinGroup, GROUP_AUTHORIZATION_FAILED
//! from FindCoordinator (as the client types it), JoinGroup or Heartbeat. Nothing is retried.

use std::time::Duration;

use mooring_wire::error_code::ErrorCode as E;
use mooring_wire::messages::heartbeat::HeartbeatResponse;

use super::fake::{join_error, join_ok, sync_ok, PRINCIPAL};
use super::*;
use crate::MemberState;
use mooring_client::error::{Error, Resource};

const JOIN: i16 = 11;
const HEARTBEAT: i16 = 12;

/// Waits for `Failed(code)`, returns the failure it publishes, and checks that no request of
/// `api_key` follows for a while.
async fn stopped(s: &Setup, code: E, api_key: i16) -> Error {
    let snap = wait_state(&s.member, |x| x.state == MemberState::Failed(code)).await;
    let sent = s.fake.count(api_key);
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(s.fake.count(api_key), sent, "retried after {code}");
    assert_eq!(s.member.state().state, MemberState::Failed(code));
    snap.failure
        .as_deref()
        .cloned()
        .unwrap_or_else(|| panic!("no failure in the snapshot for {code}"))
}

#[tokio::test(start_paused = true)]
async fn an_authentication_failure_stops_the_member_once() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push_error(
        JOIN,
        Error::Authentication {
            broker: "bootstrap 127.0.0.1:19193".into(),
            mechanism: "SCRAM-SHA-512".into(),
            principal: PRINCIPAL.into(),
            code: E::SaslAuthenticationFailed,
            message: "SASL_AUTHENTICATION_FAILED (58): Authentication failed".into(),
        },
    );
    s.member.subscribe(["t"]).await.unwrap();
    let failure = stopped(&s, E::SaslAuthenticationFailed, JOIN).await;
    assert!(
        matches!(&failure, Error::Authentication { mechanism, .. } if mechanism == "SCRAM-SHA-512"),
        "{failure:?}"
    );
    assert_eq!(s.fake.count(JOIN), 1);
}

#[tokio::test(start_paused = true)]
async fn a_tls_certificate_refused_stops_the_member_once() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push_error(
        JOIN,
        Error::Tls {
            broker: "bootstrap localhost:19194".into(),
            principal: "User:ANONYMOUS".into(),
            message: "invalid peer certificate: NotValidForName".into(),
        },
    );
    s.member.subscribe(["t"]).await.unwrap();
    let failure = stopped(&s, E::SaslAuthenticationFailed, JOIN).await;
    assert!(matches!(failure, Error::Tls { .. }), "{failure:?}");
}

#[tokio::test(start_paused = true)]
async fn group_authorization_refused_by_find_coordinator_stops_the_member() {
    let s = start(config(None), RebalanceProtocol::Eager);
    // What the client makes of FindCoordinator's GROUP_AUTHORIZATION_FAILED.
    s.fake.push_error(
        JOIN,
        Error::Authorization {
            api: "FindCoordinator",
            resource: Resource::Group("g".into()),
            principal: PRINCIPAL.into(),
            code: E::GroupAuthorizationFailed,
        },
    );
    s.member.subscribe(["t"]).await.unwrap();
    let failure = stopped(&s, E::GroupAuthorizationFailed, JOIN).await;
    assert!(
        matches!(
            &failure,
            Error::Authorization {
                api: "FindCoordinator",
                ..
            }
        ),
        "{failure:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn group_authorization_refused_by_join_group_is_typed() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake
        .push(join_error(E::GroupAuthorizationFailed.code(), ""));
    s.member.subscribe(["t"]).await.unwrap();
    let failure = stopped(&s, E::GroupAuthorizationFailed, JOIN).await;
    match &failure {
        Error::Authorization {
            api,
            resource,
            principal,
            code,
        } => {
            assert_eq!(*api, "JoinGroup");
            assert_eq!(*resource, Resource::Group("g".into()));
            assert_eq!(principal, PRINCIPAL);
            assert_eq!(*code, E::GroupAuthorizationFailed);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        failure.to_string(),
        "JoinGroup: User:test is not authorized for group g (GROUP_AUTHORIZATION_FAILED (30))"
    );
}

#[tokio::test(start_paused = true)]
async fn group_authorization_refused_by_heartbeat_stops_heartbeats() {
    let s = start(config(None), RebalanceProtocol::Eager);
    s.fake.push(join_ok(1, "m1", "other", "range"));
    s.fake.push(sync_ok(&[("t", &[0])]));
    s.fake.push(HeartbeatResponse {
        error_code: E::GroupAuthorizationFailed.code(),
        ..Default::default()
    });
    s.member.subscribe(["t"]).await.unwrap();
    let failure = stopped(&s, E::GroupAuthorizationFailed, HEARTBEAT).await;
    assert!(
        matches!(
            &failure,
            Error::Authorization {
                api: "Heartbeat",
                ..
            }
        ),
        "{failure:?}"
    );
    assert!(s.listener.calls().iter().any(|(call, _)| *call == "lost"));
    assert_eq!(s.fake.count(JOIN), 1, "no rejoin");
}
