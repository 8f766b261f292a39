//! The sidecar's listeners against clients that hold connections: idle ones, ones that send a
//! request line and then a byte a second, idle keep-alive ones, and ones that never finish a
//! body. Real sockets on
//! both listeners. The probes must keep answering within a kubelet probe's default one-second
//! timeout, every held connection must be closed by the server within the header-read timeout,
//! a listener never holds more connections than its cap, and a request whose body never ends
//! gets 408 at the request timeout. A telemetry POST without the ingest credential (when one is
//! configured) is refused and changes nothing.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{get, member, metric, ndjson, request, sidecar};
use mooring_sidecar::SidecarConfig;
use mooring_telemetry_schema::Event;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinSet;

/// A kubelet probe's default `timeoutSeconds`.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// Opens `n` connections to `addr`, in turn: one sends nothing, one sends a request line and
/// then a header byte a second, one sends a whole keep-alive request, reads the answer and then
/// sends nothing more. Each task ends when the server closes its socket and returns how long
/// after opening that was.
async fn hold(addr: SocketAddr, n: usize) -> JoinSet<Duration> {
    let mut held = JoinSet::new();
    for i in 0..n {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let opened = Instant::now();
        held.spawn(async move {
            let trickle = i % 3 == 1;
            let first: &[u8] = match i % 3 {
                0 => b"",
                1 => b"GET /healthz HTTP/1.1\r\n",
                _ => b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n",
            };
            if stream.write_all(first).await.is_err() {
                return opened.elapsed();
            }
            let mut buf = [0u8; 64];
            loop {
                tokio::select! {
                    read = stream.read(&mut buf) => {
                        if !matches!(read, Ok(n) if n > 0) {
                            break;
                        }
                    }
                    _ = tokio::time::sleep(Duration::from_secs(1)), if trickle => {
                        if stream.write_all(b"X").await.is_err() {
                            break;
                        }
                    }
                }
            }
            opened.elapsed()
        });
    }
    held
}

/// `/healthz` answered, and how long it took.
async fn probe(addr: SocketAddr) -> Duration {
    let started = Instant::now();
    let (status, body) = tokio::time::timeout(Duration::from_secs(30), get(addr, "/healthz"))
        .await
        .unwrap();
    assert!(status == 200 || status == 503, "{status}: {body}");
    started.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_connections_leave_the_probes_answering_and_are_closed_at_the_header_timeout() {
    // The defaults: a 5 s header-read timeout and 1,024 connections per listener.
    let s = sidecar("\"metrics.listen\" = \"127.0.0.1:0\"\n").await;
    for addr in [s.addr, s.metrics_addr.unwrap()] {
        let mut held = hold(addr, 500).await;
        // Every probe is answered; the quickest of three within a probe's timeout (one may
        // lose a race to the machine's load, three do not unless the listener is blocked).
        let mut quickest = Duration::MAX;
        for _ in 0..3 {
            quickest = quickest.min(probe(addr).await);
        }
        assert!(
            quickest < PROBE_TIMEOUT,
            "{addr}: /healthz took {quickest:?}"
        );
        // The 5 s header timeout, with room for a loaded machine: what fails is a connection
        // the listener never closes.
        let deadline = Duration::from_secs(5 + 5);
        while let Some(open_for) = tokio::time::timeout(deadline * 2, held.join_next())
            .await
            .unwrap()
        {
            let open_for = open_for.unwrap();
            assert!(
                open_for < deadline,
                "{addr}: a held connection stayed open {open_for:?}"
            );
        }
    }
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_at_its_connection_cap_serves_the_next_client_once_one_is_closed() {
    let s = sidecar("\"http.max.connections\" = 8\n\"http.header.read.timeout.ms\" = 1500\n").await;
    let held_at = Instant::now();
    let mut held = hold(s.addr, 8).await;
    // The ninth waits: the listener accepts no more until the header timeout closes one.
    let took = probe(s.addr).await;
    assert!(
        took >= Duration::from_millis(1000) && took < Duration::from_secs(6),
        "the ninth client was answered after {took:?}"
    );
    assert!(held_at.elapsed() >= Duration::from_millis(1400));
    while held.join_next().await.is_some() {}
    assert!(probe(s.addr).await < PROBE_TIMEOUT);
    s.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_never_ends_gets_408_at_the_request_timeout() {
    let s = sidecar("\"http.request.timeout.ms\" = 1500\n").await;
    let mut stream = TcpStream::connect(s.addr).await.unwrap();
    let started = Instant::now();
    stream
        .write_all(
            b"POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"schema\":",
        )
        .await
        .unwrap();
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut out))
        .await
        .unwrap()
        .unwrap();
    let took = started.elapsed();
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        took >= Duration::from_millis(1400) && took < Duration::from_secs(6),
        "408 after {took:?}"
    );
    // Nothing of the cut-off body was applied.
    let (_, metrics) = get(s.addr, "/metrics").await;
    assert!(
        !metrics.contains("mooring_telemetry_events_received_total{"),
        "{metrics}"
    );
    s.shutdown().await;
}

/// A fresh directory under the system's temporary one.
fn scratch_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(mooring_testkit::unique("sidecar-credential"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fatal() -> Event {
    Event::FatalError {
        kind: "authentication".into(),
        message: "forged".into(),
    }
}

#[tokio::test]
async fn a_post_without_the_ingest_credential_changes_nothing() {
    use std::os::unix::fs::PermissionsExt;

    let dir = scratch_dir();
    let file = dir.join("ingest.token");
    let config = format!("\"ingest.token.file\" = \"{}\"\n", file.display());
    let s = sidecar(&config).await;
    // The sidecar made the file: one random token, for its owner only.
    let token = std::fs::read_to_string(&file).unwrap();
    assert_eq!(token.len(), 64, "{token}");
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let body = ndjson(&member(), 0, &[fatal()]);
    for headers in [vec![], vec![("Authorization", "Bearer wrong")]] {
        let (status, _) = request(s.addr, "POST", "/v1/events", &headers, &body).await;
        assert_eq!(status, 401);
    }
    let (_, metrics) = get(s.addr, "/metrics").await;
    assert_eq!(
        metric(&metrics, "mooring_telemetry_requests_refused_total"),
        Some(2.0)
    );
    assert!(
        !metrics.contains("mooring_consumer_fatal_error{"),
        "{metrics}"
    );
    let (_, ready) = get(s.addr, "/readyz").await;
    assert!(!ready.contains("forged"), "{ready}");

    let bearer = format!("Bearer {token}");
    let (status, _) = request(
        s.addr,
        "POST",
        "/v1/events",
        &[("Authorization", &bearer)],
        &body,
    )
    .await;
    assert_eq!(status, 202);
    let (_, ready) = get(s.addr, "/readyz").await;
    assert!(ready.contains("forged"), "{ready}");
    s.shutdown().await;

    // A sidecar restarted beside the running consumer keeps its credential.
    let s = sidecar(&config).await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), token);
    let (status, _) = request(
        s.addr,
        "POST",
        "/v1/events",
        &[("Authorization", &bearer)],
        &ndjson(&member(), 1, &[fatal()]),
    )
    .await;
    assert_eq!(status, 202);
    s.shutdown().await;
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_listener_off_loopback_needs_the_ingest_credential() {
    let err = SidecarConfig::from_toml("listen = \"0.0.0.0:9464\"\n").unwrap_err();
    assert!(err.to_string().contains("ingest.token.file"), "{err}");
    SidecarConfig::from_toml(
        "listen = \"0.0.0.0:9464\"\n\"ingest.token.file\" = \"/run/mooring/ingest.token\"\n",
    )
    .unwrap();
}
