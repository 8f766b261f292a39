//! Helpers of the sidecar's tests: a sidecar on port 0, a tiny HTTP client, telemetry lines.

#![allow(dead_code, clippy::unwrap_used)] // each test binary uses part of it; a failed unwrap fails the test

use std::net::SocketAddr;

use mooring_sidecar::{Running, SidecarConfig};
use mooring_telemetry_schema::{Envelope, Event, MemberIdentity};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A sidecar on 127.0.0.1:0 (unless `extra` sets `listen`) with `extra` TOML.
pub async fn sidecar(extra: &str) -> Running {
    let text = if extra.starts_with("listen =") {
        extra.to_string()
    } else {
        format!("listen = \"127.0.0.1:0\"\n{extra}")
    };
    mooring_sidecar::start(SidecarConfig::from_toml(&text).unwrap())
        .await
        .unwrap()
}

/// One HTTP/1.1 exchange: (status, body).
pub async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body).await.unwrap();
    let mut out = Vec::new();
    stream.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

pub async fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    request(addr, "GET", path, &[], b"").await
}

pub async fn get_json(addr: SocketAddr, path: &str) -> serde_json::Value {
    let (status, body) = get(addr, path).await;
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// The member the test lines come from (a classic one, as an exporter before the `consumer`
/// protocol wrote it: no `group_protocol`).
pub fn member() -> MemberIdentity {
    MemberIdentity {
        group: "g".into(),
        member_id: "m-1".into(),
        instance_id: None,
        client_id: "test".into(),
        group_protocol: None,
    }
}

/// POSTs envelopes as NDJSON.
pub async fn post_events(addr: SocketAddr, events: &[Event]) -> (u16, String) {
    post_events_as(addr, &member(), 0, events).await
}

/// POSTs envelopes from `member`, numbered from `first_seq`, as NDJSON.
pub async fn post_events_as(
    addr: SocketAddr,
    member: &MemberIdentity,
    first_seq: u64,
    events: &[Event],
) -> (u16, String) {
    request(
        addr,
        "POST",
        "/v1/events",
        &[("Content-Type", "application/x-ndjson")],
        &ndjson(member, first_seq, events),
    )
    .await
}

/// Envelopes from `member`, numbered from `first_seq`, as NDJSON.
pub fn ndjson(member: &MemberIdentity, first_seq: u64, events: &[Event]) -> Vec<u8> {
    let mut body = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let seq = first_seq + i as u64;
        let envelope = Envelope {
            schema: 1,
            seq,
            ts_ms: 1_764_000_000_000 + seq,
            member: member.clone(),
            event: event.clone(),
        };
        serde_json::to_writer(&mut body, &envelope).unwrap();
        body.push(b'\n');
    }
    body
}

/// The value of one sample line of `/metrics` (`name{labels}` exactly as printed).
pub fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines().filter(|l| !l.starts_with('#')).find_map(|l| {
        let (name, value) = l.rsplit_once(' ')?;
        (name == series).then(|| value.parse().ok())?
    })
}

/// The entry of alert `name` in an `/alerts` body.
pub fn alert_entry<'a>(alerts: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    alerts["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["alert"] == name)
        .unwrap()
}

/// The level of alert `name` in an `/alerts` body.
pub fn level(alerts: &serde_json::Value, name: &str) -> i64 {
    alert_entry(alerts, name)["level"].as_i64().unwrap()
}
