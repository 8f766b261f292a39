//! A consumer stopped on a fatal error is shown by its sidecar: the `fatal_error` line reaches it
//! before the consumer's `run` returns (the exporter sends it at once and `run` waits for it,
//! bounded), and the sidecar shows it in `/debug/group` (the member), `/readyz` (not ready, with
//! the error), `/healthz` (in the body; liveness stays progress) and
//! `mooring_consumer_fatal_error{kind}`, until a new consumer process reports. Two tests run a
//! consumer with a wrong SASL password against the shared real broker (the second through an
//! endpoint that answers 250 ms late: `run` still returns only once the line is taken); the
//! last posts the lines of three processes.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{get, get_json, metric, post_events, request, sidecar};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::ConsumerError;
use mooring_telemetry_schema::{Event, Snapshot};
use mooring_testkit::{unique, Cluster};
use support::{consumer, exporter, run};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

const WRONG_PASSWORD: &str = "not-alices-secret-sidecar-91c2";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_consumer_stopped_by_a_wrong_password_is_shown() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-fatal");
    cluster.create_topic(&topic, 1);
    let s = sidecar("").await;
    let addr = s.addr;
    let c = wrong_password_consumer(&cluster, &topic);
    let export = exporter(&c, addr);
    let started = Instant::now();
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        run(&c, |_r: ConsumerRecord| async { Ok::<(), String>(()) }),
    )
    .await
    .expect("run ends on the authentication failure")
    .unwrap();
    let took = started.elapsed();
    let error = result.unwrap_err();
    assert!(took < Duration::from_secs(5), "run took {took:?}");
    assert!(
        matches!(
            &error,
            ConsumerError::Client(mooring_client::Error::Authentication { .. })
        ),
        "{error:?}"
    );

    // Already there when `run` has returned: no wait, the exporter not yet shut down.
    let group = get_json(addr, "/debug/group").await;
    let fatal = &group["member"]["fatal_error"];
    assert_eq!(fatal["kind"], "authentication", "{group}");
    assert_eq!(fatal["message"], error.to_string());
    let (status, body) = get(addr, "/readyz").await;
    assert_eq!(status, 503, "{body}");
    let ready: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        ready["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p == "the consumer stopped on a fatal error"),
        "{ready}"
    );
    assert_eq!(ready["fatal_error"]["kind"], "authentication");
    let (_, health) = get(addr, "/healthz").await;
    let health: serde_json::Value = serde_json::from_str(&health).unwrap();
    assert_eq!(health["consumer_fatal_error"]["kind"], "authentication");
    let (_, text) = get(addr, "/metrics").await;
    assert_eq!(
        metric(
            &text,
            "mooring_consumer_fatal_error{kind=\"authentication\"}"
        ),
        Some(1.0),
        "{text}"
    );
    let everything = format!("{group} {body} {health} {text}");
    assert!(
        !everything.contains(WRONG_PASSWORD),
        "the password is shown"
    );
    assert!(everything.contains("User:alice"), "the principal is named");
    export.shutdown().await;
    s.shutdown().await;
}

/// The consumer of [`a_consumer_stopped_by_a_wrong_password_is_shown`], with a wrong password.
fn wrong_password_consumer(cluster: &Cluster, topic: &str) -> mooring_consumer::Consumer {
    consumer(
        cluster,
        &unique("sidecar-fatal-g"),
        topic,
        &[
            ("bootstrap.servers", cluster.var("MOORING_BOOTSTRAP_SASL")),
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "SCRAM-SHA-512"),
            ("sasl.username", cluster.var("MOORING_SASL_USER")),
            ("sasl.password", WRONG_PASSWORD),
        ],
    )
}

/// Set once the POST carrying the `fatal_error` line has been answered.
type Answered = Arc<AtomicBool>;

/// An endpoint in front of the sidecar at `sidecar` that answers each POST `delay` late (after
/// handing it on): a sidecar slow to accept. Returns its address, and the flag it sets once it
/// has answered the POST with the `fatal_error` line.
async fn slow_endpoint(
    sidecar: std::net::SocketAddr,
    delay: Duration,
) -> (std::net::SocketAddr, Answered) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answered = Answered::default();
    let flag = Arc::clone(&answered);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let flag = Arc::clone(&flag);
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 8192];
                // Head, then as many body bytes as Content-Length says.
                let body = loop {
                    let Ok(n) = stream.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    let Some((head, body)) = text.split_once("\r\n\r\n") else {
                        continue;
                    };
                    let length = head
                        .lines()
                        .find_map(|l| {
                            let (k, v) = l.split_once(':')?;
                            k.eq_ignore_ascii_case("content-length")
                                .then(|| v.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    if body.len() >= length {
                        break body.as_bytes()[..length].to_vec();
                    }
                };
                let headers = [("Content-Type", "application/x-ndjson")];
                let (status, _) = request(sidecar, "POST", "/v1/events", &headers, &body).await;
                tokio::time::sleep(delay).await;
                let answer = format!(
                    "HTTP/1.1 {status} Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                );
                if stream.write_all(answer.as_bytes()).await.is_ok()
                    && String::from_utf8_lossy(&body).contains("\"type\":\"fatal_error\"")
                {
                    flag.store(true, Ordering::SeqCst);
                }
            });
        }
    });
    (addr, answered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_waits_for_a_slow_sidecar_to_take_the_fatal_error() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-fatal-slow");
    cluster.create_topic(&topic, 1);
    let s = sidecar("").await;
    let (slow, answered) = slow_endpoint(s.addr, Duration::from_millis(250)).await;
    let c = wrong_password_consumer(&cluster, &topic);
    let export = exporter(&c, slow);
    let result = tokio::time::timeout(
        Duration::from_secs(15),
        run(&c, |_r: ConsumerRecord| async { Ok::<(), String>(()) }),
    )
    .await
    .expect("run ends on the authentication failure")
    .unwrap();
    assert!(result.is_err());
    // The POST with the line was answered (250 ms late) before `run` returned: `run` waited
    // for it, within its bound.
    assert!(
        answered.load(Ordering::SeqCst),
        "run returned before the sidecar took the fatal error"
    );
    let group = get_json(s.addr, "/debug/group").await;
    assert_eq!(group["member"]["fatal_error"]["kind"], "authentication");
    export.shutdown().await;
    s.shutdown().await;
}

#[tokio::test]
async fn a_new_consumer_process_clears_the_fatal_error() {
    let s = sidecar("").await;
    let addr = s.addr;
    // The first process: a snapshot, then its fatal error (seq 0 and 1).
    let (status, _) = post_events(
        addr,
        &[
            Event::Snapshot(Snapshot::default()),
            Event::FatalError {
                kind: "group_authorization".into(),
                message: "JoinGroup: User:alice is not authorized for group g (GROUP_AUTHORIZATION_FAILED (30))".into(),
            },
        ],
    )
    .await;
    assert_eq!(status, 202);
    let (_, text) = get(addr, "/metrics").await;
    let series = "mooring_consumer_fatal_error{kind=\"group_authorization\"}";
    assert_eq!(metric(&text, series), Some(1.0));
    assert_eq!(get(addr, "/readyz").await.0, 503);
    // A second process (numbering from 0 again), stopped on a kind this sidecar does not know:
    // counted as `other`, so the label set stays closed; the first one's is cleared.
    post_events(
        addr,
        &[
            Event::Snapshot(Snapshot::default()),
            Event::Snapshot(Snapshot::default()),
            Event::FatalError {
                kind: "some_new_kind".into(),
                message: "x".into(),
            },
        ],
    )
    .await;
    let (_, text) = get(addr, "/metrics").await;
    assert_eq!(
        metric(&text, series),
        Some(0.0),
        "one fatal error at a time"
    );
    assert_eq!(
        metric(&text, "mooring_consumer_fatal_error{kind=\"other\"}"),
        Some(1.0)
    );
    assert!(!text.contains("some_new_kind"));

    // A third process, running: its first line clears the second's error.
    post_events(addr, &[Event::Snapshot(Snapshot::default())]).await;
    let group = get_json(addr, "/debug/group").await;
    assert!(group["member"]["fatal_error"].is_null(), "{group}");
    let (_, text) = get(addr, "/metrics").await;
    assert_eq!(
        metric(&text, "mooring_consumer_fatal_error{kind=\"other\"}"),
        Some(0.0)
    );
    s.shutdown().await;
}
