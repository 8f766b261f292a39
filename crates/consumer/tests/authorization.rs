//! Authorization failures are fatal and said once, on a cluster of its own whose brokers enforce
//! ACLs (`scripts/kafka start --authorizer`: KRaft's StandardAuthorizer, nothing allowed without
//! an ACL; the admin's PLAINTEXT listener sets them with Kafka's AclCommand). User alice, over
//! SASL:
//!
//! - with no ACL: GROUP_AUTHORIZATION_FAILED (FindCoordinator) ends `run` at once, naming group
//!   and principal;
//! - with READ on the group and nothing on the topic: TOPIC_AUTHORIZATION_FAILED (the topic's
//!   metadata) ends `run`, naming topic and principal;
//! - with READ on the group and DESCRIBE (not READ) on the topic: it joins and is assigned the
//!   partition, and Fetch's TOPIC_AUTHORIZATION_FAILED ends `run`;
//! - with READ on both: it consumes every record (the control case).
//!
//! Each failure: `run` returns within a few seconds (no retry loop), one error line, no password.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod auth_support;
mod common;

use std::time::Duration;

use auth_support::{ended_promptly, said_once_without, Logs};
use mooring_client::error::Resource;
use mooring_client::Error as ClientError;
use mooring_consumer::{Consumer, ConsumerError};
use mooring_testkit::{unique, Cluster};
use mooring_wire::error_code::ErrorCode;

/// The authorizer cluster's port base, taken by no other test: this is
/// `Cluster::dedicated("authz", 1, 24000)` with `--authorizer` (the literal, for whoever greps
/// the port bases in use).
const PORT_BASE: u16 = 24000;
const RECORDS: u64 = 50;

/// Alice's consumer of `topic` in `group`, over SASL (SCRAM-SHA-512).
fn alice(cluster: &Cluster, group: &str, topic: &str) -> Consumer {
    let c = common::consumer(
        cluster,
        group,
        &[
            ("bootstrap.servers", cluster.var("MOORING_BOOTSTRAP_SASL")),
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            ("sasl.username", cluster.var("MOORING_SASL_USER")),
            ("sasl.password", cluster.var("MOORING_SASL_PASSWORD")),
        ],
    );
    c.subscribe([topic.to_string()]).unwrap();
    c
}

/// Alice's consumer ends promptly, said once, without the password; returns the error.
async fn refused(cluster: &Cluster, group: &str, topic: &str) -> ConsumerError {
    let (logs, _guard) = Logs::capture();
    let c = alice(cluster, group, topic);
    let error = ended_promptly(&c, &logs).await;
    said_once_without(&logs, &error, &[cluster.var("MOORING_SASL_PASSWORD")]);
    error
}

#[tokio::test]
async fn authorization_refused_is_fatal_once_and_granted_consumes() {
    let cluster = Cluster::dedicated_with("authz", 1, PORT_BASE, &["--authorizer"]);
    assert_eq!(cluster.var("MOORING_KAFKA_AUTHORIZER"), "1");
    let topic = unique("authz-topic");
    cluster.create_topic(&topic, 2);
    assert_eq!(cluster.produce_verifiable(&topic, RECORDS, 0, &[]), RECORDS);

    // No ACL at all: the group and the topic are both refused, and whichever the consumer asks
    // for first ends it (the member's FindCoordinator needs DESCRIBE on the group; the metadata
    // of the subscribed topic, looked up meanwhile, DESCRIBE on the topic).
    let group = unique("authz-none");
    let error = refused(&cluster, &group, &topic).await;
    match &error {
        ConsumerError::Client(ClientError::Authorization {
            resource,
            principal,
            code,
            ..
        }) => {
            assert_eq!(*resource, Resource::Group(group.clone()));
            assert_eq!(principal, "User:alice");
            assert_eq!(*code, ErrorCode::GroupAuthorizationFailed);
            assert_eq!(error.kind(), "group_authorization");
        }
        ConsumerError::TopicAuthorizationFailed { topics, principal } => {
            assert_eq!(topics, std::slice::from_ref(&topic));
            assert_eq!(principal, "User:alice");
            assert_eq!(error.kind(), "topic_authorization");
        }
        other => panic!("{other:?}"),
    }

    // The group, not the topic: the topic's metadata is refused.
    let group = unique("authz-group-only");
    cluster.allow_user("Read", "--group", &group);
    let error = refused(&cluster, &group, &topic).await;
    assert!(
        matches!(&error, ConsumerError::TopicAuthorizationFailed { topics, principal }
            if *topics == [topic.clone()] && principal == "User:alice"),
        "{error:?}"
    );

    // The topic described but not readable: assigned, then refused by Fetch.
    let group = unique("authz-describe-only");
    cluster.allow_user("Read", "--group", &group);
    cluster.allow_user("Describe", "--topic", &topic);
    let error = refused(&cluster, &group, &topic).await;
    assert!(
        matches!(&error, ConsumerError::TopicAuthorizationFailed { topics, .. }
            if *topics == [topic.clone()]),
        "{error:?}"
    );

    // Both granted: every record consumed, a clean end.
    let group = unique("authz-granted");
    cluster.allow_user("Read", "--group", &group);
    cluster.allow_user("Read", "--topic", &topic);
    let c = alice(&cluster, &group, &topic);
    let seen = common::Seen::default();
    let run = common::spawn_run(&c, &seen, Duration::ZERO);
    common::wait_until(
        "every record consumed with the ACLs granted",
        Duration::from_secs(60),
        || seen.distinct() as u64 == RECORDS,
    )
    .await;
    common::stop(&c, run).await.unwrap();
}
