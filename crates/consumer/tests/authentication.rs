//! Authentication failures are fatal and said once (real broker, its SASL_PLAINTEXT and SSL
//! listeners): a wrong password (PLAIN, SCRAM), a mechanism the broker does not enable, a TLS
//! handshake whose certificate check fails (no CA, a host name the certificate does not name).
//! Each ends `run` within a few seconds with one typed error naming broker, mechanism and
//! principal, written once as an error line; no secret is in the error or in any log line.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod auth_support;
mod common;

use std::time::Instant;

use auth_support::{client_error, ended_promptly, said_once_without, Logs, DEADLINE, PROMPTLY};
use mooring_client::config::SaslMechanism;
use mooring_client::Error as ClientError;
use mooring_consumer::{Consumer, ConsumerConfig, ConsumerError};
use mooring_testkit::{unique, Cluster};
use mooring_wire::error_code::ErrorCode;

const WRONG_PASSWORD: &str = "not-alices-secret-7f3a";

/// Runs a consumer of a fresh topic with `extra` properties until `run` ends; asserts it ended
/// within [`PROMPTLY`] with an error, said in exactly one error line, and that neither the error
/// nor any log line holds one of `secrets`. Returns the error.
async fn fatal_once(cluster: &Cluster, extra: &[(&str, &str)], secrets: &[&str]) -> ConsumerError {
    let (logs, _guard) = Logs::capture();
    let topic = unique("auth-topic");
    cluster.create_topic(&topic, 1);
    let c = common::consumer(cluster, &unique("auth-g"), extra);
    c.subscribe([topic.clone()]).unwrap();
    let error = ended_promptly(&c, &logs).await;
    said_once_without(&logs, &error, secrets);
    error
}

fn sasl<'a>(
    cluster: &'a Cluster,
    mechanism: &'a str,
    password: &'a str,
) -> Vec<(&'a str, &'a str)> {
    vec![
        ("bootstrap.servers", cluster.var("MOORING_BOOTSTRAP_SASL")),
        ("security.protocol", "SASL_PLAINTEXT"),
        ("sasl.mechanism", mechanism),
        ("sasl.username", cluster.var("MOORING_SASL_USER")),
        ("sasl.password", password),
    ]
}

#[tokio::test]
async fn a_wrong_plain_password_ends_run_at_once() {
    let cluster = Cluster::shared();
    wrong_password(&cluster, "PLAIN").await;
}

#[tokio::test]
async fn a_wrong_scram_sha_256_password_ends_run_at_once() {
    let cluster = Cluster::shared();
    wrong_password(&cluster, "SCRAM-SHA-256").await;
}

#[tokio::test]
async fn a_wrong_scram_sha_512_password_ends_run_at_once() {
    let cluster = Cluster::shared();
    wrong_password(&cluster, "SCRAM-SHA-512").await;
}

/// A wrong password for `mechanism`: SASL_AUTHENTICATION_FAILED with the broker's message.
async fn wrong_password(cluster: &Cluster, mechanism: &str) {
    let error = fatal_once(
        cluster,
        &sasl(cluster, mechanism, WRONG_PASSWORD),
        &[WRONG_PASSWORD],
    )
    .await;
    let ClientError::Authentication {
        broker,
        mechanism: said,
        principal,
        code,
        message,
    } = client_error(&error)
    else {
        panic!("{error:?}")
    };
    assert_eq!(said, mechanism);
    assert_eq!(principal, "User:alice");
    assert_eq!(*code, ErrorCode::SaslAuthenticationFailed);
    assert!(
        broker.contains(cluster.var("MOORING_BOOTSTRAP_SASL")),
        "{broker}"
    );
    assert!(message.contains("SASL_AUTHENTICATION_FAILED"), "{message}");
    assert!(error.is_fatal());
    assert_eq!(error.kind(), "authentication");
}

#[tokio::test]
async fn a_mechanism_the_broker_does_not_enable_ends_run_at_once() {
    let cluster = Cluster::shared();
    let token = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.secret-signature-5d1e";
    let (logs, _guard) = Logs::capture();
    let topic = unique("auth-topic");
    cluster.create_topic(&topic, 1);
    // OAUTHBEARER needs a token provider, set in code.
    let props = common::props(
        &cluster,
        &unique("auth-g"),
        &sasl(&cluster, "PLAIN", "unused"),
    );
    let mut config = ConsumerConfig::from_properties(props).unwrap();
    config.client.sasl.mechanism = Some(SaslMechanism::OAuthBearer);
    let owned = token.to_string();
    config.client = config
        .client
        .with_token_provider(move || Ok(owned.as_str().into()));
    let c = Consumer::new(config).unwrap();
    c.subscribe([topic]).unwrap();
    let error = ended_promptly(&c, &logs).await;
    let ClientError::Authentication {
        mechanism,
        code,
        message,
        ..
    } = client_error(&error)
    else {
        panic!("{error:?}")
    };
    assert_eq!(mechanism, "OAUTHBEARER");
    assert_eq!(*code, ErrorCode::UnsupportedSaslMechanism);
    assert!(
        message.contains("PLAIN") && message.contains("SCRAM-SHA-512"),
        "names what the broker offers: {message}"
    );
    said_once_without(&logs, &error, &[token]);
}

#[tokio::test]
async fn tls_without_the_ca_ends_run_at_once() {
    let cluster = Cluster::shared();
    // The system's roots do not know the test CA.
    let error = fatal_once(
        &cluster,
        &[
            ("bootstrap.servers", cluster.var("MOORING_BOOTSTRAP_SSL")),
            ("security.protocol", "SSL"),
        ],
        &[],
    )
    .await;
    let ClientError::Tls {
        broker,
        principal,
        message,
    } = client_error(&error)
    else {
        panic!("{error:?}")
    };
    assert!(
        broker.contains(cluster.var("MOORING_BOOTSTRAP_SSL")),
        "{broker}"
    );
    assert_eq!(principal, "User:ANONYMOUS");
    assert!(message.contains("UnknownIssuer"), "{message}");
    assert_eq!(error.kind(), "tls");
}

#[tokio::test]
async fn tls_to_a_name_the_certificate_does_not_hold_ends_run_at_once() {
    let cluster = Cluster::shared();
    let port = cluster
        .var("MOORING_BOOTSTRAP_SSL")
        .rsplit(':')
        .next()
        .unwrap()
        .to_string();
    // The certificate names 127.0.0.1 only.
    let localhost = format!("localhost:{port}");
    let error = fatal_once(
        &cluster,
        &[
            ("bootstrap.servers", &localhost),
            ("security.protocol", "SSL"),
            ("ssl.ca.location", cluster.var("MOORING_SSL_CA")),
        ],
        &[],
    )
    .await;
    let ClientError::Tls { message, .. } = client_error(&error) else {
        panic!("{error:?}")
    };
    assert!(message.contains("not valid for name"), "{message}");
}

#[tokio::test]
async fn the_stream_ends_and_its_run_future_returns_the_error() {
    let cluster = Cluster::shared();
    let (logs, _guard) = Logs::capture();
    let topic = unique("auth-topic");
    cluster.create_topic(&topic, 1);
    let c = common::consumer(
        &cluster,
        &unique("auth-g"),
        &sasl(&cluster, "SCRAM-SHA-256", WRONG_PASSWORD),
    );
    c.subscribe([topic]).unwrap();
    let (mut records, run) = c.stream();
    let run = tokio::spawn(run);
    let started = Instant::now();
    let next = tokio::time::timeout(DEADLINE, records.next()).await;
    assert!(
        matches!(next, Ok(None)),
        "the stream ends (not a record, not a hang) within {DEADLINE:?}"
    );
    let error = tokio::time::timeout(DEADLINE, run)
        .await
        .expect("the run future ends")
        .unwrap()
        .unwrap_err();
    assert!(started.elapsed() < PROMPTLY, "{:?}", started.elapsed());
    assert!(
        matches!(client_error(&error), ClientError::Authentication { .. }),
        "{error:?}"
    );
    said_once_without(&logs, &error, &[WRONG_PASSWORD]);
}

#[tokio::test]
async fn sasl_to_a_listener_without_sasl_ends_run_at_once() {
    let cluster = Cluster::shared();
    // The PLAINTEXT listener answers SaslHandshake with ILLEGAL_SASL_STATE.
    let mut props = sasl(&cluster, "SCRAM-SHA-256", WRONG_PASSWORD);
    props[0] = ("bootstrap.servers", cluster.bootstrap());
    let error = fatal_once(&cluster, &props, &[WRONG_PASSWORD]).await;
    let ClientError::Authentication { code, .. } = client_error(&error) else {
        panic!("{error:?}")
    };
    assert_eq!(*code, ErrorCode::IllegalSaslState, "{error}");
}
