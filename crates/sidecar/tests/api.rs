//! The sidecar without a broker: ingestion → metrics, alert levels, the rule file, configuration
//! errors and redaction, the debug token, bad requests.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;

use std::time::Duration;

use common::{alert_entry, get, get_json, level, metric, post_events, request, sidecar};
use mooring_sidecar::SidecarConfig;
use mooring_telemetry_schema::{Event, Phases, RebalanceCause, TopicPartition};

fn p(n: i32) -> TopicPartition {
    TopicPartition {
        topic: "t".into(),
        partition: n,
    }
}

/// One whole rebalance as a member reports it.
fn rebalance(
    cause: RebalanceCause,
    generation_before: i32,
    assignment: Vec<TopicPartition>,
) -> Vec<Event> {
    vec![
        Event::RebalanceStarted {
            cause,
            generation: generation_before,
            protocol: "eager".into(),
        },
        Event::Joined {
            generation: generation_before + 1,
            member_id: "m-1".into(),
            leader: true,
            protocol_name: "range".into(),
            join_seconds: 0.2,
        },
        Event::Synced {
            generation: generation_before + 1,
            sync_seconds: 0.05,
        },
        Event::PartitionsAssigned {
            added: assignment.clone(),
            assignment,
            duration_seconds: 0.01,
            timed_out: false,
        },
        Event::RebalanceCompleted {
            generation: generation_before + 1,
            total_seconds: 0.3,
            phases: Phases {
                join_seconds: 0.2,
                sync_seconds: 0.05,
                ..Phases::default()
            },
        },
    ]
}

#[tokio::test]
async fn events_become_metrics_by_cause_with_histograms() {
    let s = sidecar("").await;
    let mut events = rebalance(RebalanceCause::MemberJoined, -1, vec![p(0), p(1)]);
    // Someone joins: this member keeps less. Then they leave: it gets everything back.
    events.extend(rebalance(RebalanceCause::MemberJoined, 1, vec![p(0)]));
    events.extend(rebalance(RebalanceCause::MemberJoined, 2, vec![p(0), p(1)]));
    events.extend(rebalance(
        RebalanceCause::MetadataChange,
        3,
        vec![p(0), p(1)],
    ));
    let (status, body) = post_events(s.addr, &events).await;
    assert_eq!(status, 202, "{body}");
    let (_, text) = get(s.addr, "/metrics").await;
    assert_eq!(
        metric(&text, "mooring_rebalances_total{cause=\"member_joined\"}"),
        Some(2.0)
    );
    assert_eq!(
        metric(&text, "mooring_rebalances_total{cause=\"member_left\"}"),
        Some(1.0)
    );
    assert_eq!(
        metric(&text, "mooring_rebalances_total{cause=\"metadata_change\"}"),
        Some(1.0)
    );
    assert_eq!(
        metric(&text, "mooring_rebalances_total{cause=\"unknown\"}"),
        Some(0.0)
    );
    assert_eq!(
        metric(&text, "mooring_rebalance_duration_seconds_count"),
        Some(4.0)
    );
    assert_eq!(
        metric(
            &text,
            "mooring_rebalance_duration_seconds_bucket{le=\"0.5\"}"
        ),
        Some(4.0)
    );
    assert_eq!(
        metric(&text, "mooring_join_duration_seconds_count"),
        Some(4.0)
    );
    assert_eq!(metric(&text, "mooring_assigned_partitions"), Some(2.0));
    assert_eq!(metric(&text, "mooring_group_generation"), Some(4.0));
    // The timeline, in order, with phase timings and partitions.
    let r = get_json(s.addr, "/debug/rebalances").await;
    let list = r["rebalances"].as_array().unwrap();
    let causes: Vec<&str> = list.iter().map(|x| x["cause"].as_str().unwrap()).collect();
    assert_eq!(
        causes,
        [
            "member_joined",
            "member_joined",
            "member_left",
            "metadata_change"
        ]
    );
    assert_eq!(list[1]["phases"]["join_seconds"].as_f64(), Some(0.2));
    assert_eq!(list[1]["assignment"].as_array().unwrap().len(), 1);
    let r = get_json(s.addr, "/debug/rebalances?limit=1").await;
    assert_eq!(r["rebalances"].as_array().unwrap().len(), 1);
    // Ready: joined, stable, assigned.
    assert_eq!(get(s.addr, "/readyz").await.0, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn dropped_events_are_counted_once() {
    let s = sidecar("").await;
    let dropped = |total| Event::EventsDropped {
        dropped_total: total,
        dropped_since_last: total,
    };
    post_events(s.addr, &[dropped(5)]).await;
    post_events(s.addr, &[dropped(5), dropped(12)]).await;
    let (_, text) = get(s.addr, "/metrics").await;
    assert_eq!(
        metric(&text, "mooring_telemetry_events_dropped_total"),
        Some(12.0)
    );
    s.shutdown().await;
}

#[tokio::test]
async fn rebalance_alert_moves_ok_warning_critical_and_back() {
    let s = sidecar("[alerts.rebalances]\n\"window.ms\" = 1500\nwarning = 2\ncritical = 3\n").await;
    let one = |g| rebalance(RebalanceCause::MemberJoined, g, vec![p(0)]);
    assert_eq!(level(&get_json(s.addr, "/alerts").await, "rebalances"), 0);
    post_events(s.addr, &one(-1)).await;
    assert_eq!(level(&get_json(s.addr, "/alerts").await, "rebalances"), 0);
    post_events(s.addr, &one(1)).await;
    let a = get_json(s.addr, "/alerts").await;
    assert_eq!(level(&a, "rebalances"), 1);
    post_events(s.addr, &one(2)).await;
    assert_eq!(level(&get_json(s.addr, "/alerts").await, "rebalances"), 1);
    post_events(s.addr, &one(3)).await;
    let a = get_json(s.addr, "/alerts").await;
    assert_eq!(level(&a, "rebalances"), 2);
    let entry = alert_entry(&a, "rebalances");
    assert_eq!(
        entry["value"].as_f64(),
        Some(4.0),
        "the value that tripped it"
    );
    let (_, text) = get(s.addr, "/metrics").await;
    assert_eq!(
        metric(&text, "mooring_alert_level{alert=\"rebalances\"}"),
        Some(2.0)
    );
    // The window rolls past them: ok again.
    tokio::time::sleep(Duration::from_millis(1700)).await;
    assert_eq!(level(&get_json(s.addr, "/alerts").await, "rebalances"), 0);
    s.shutdown().await;
}

#[test]
fn rules_parse_and_carry_the_configured_numbers() {
    let config =
        SidecarConfig::from_toml("[alerts.rebalances]\nwarning = 4\ncritical = 12\n").unwrap();
    let rules = mooring_sidecar::rules::render(&config);
    assert!(rules.contains("(increase(mooring_rebalances_total[1d])))) > 12"));
    assert!(rules.contains("(increase(mooring_rebalances_total[1d])))) >= 4 <= 12"));
    let path = std::env::temp_dir().join(format!("mooring-rules-{}.yml", std::process::id()));
    std::fs::write(&path, &rules).unwrap();
    // Debian's `prometheus` package (scripts/setup installs it) ships promtool.
    let out = std::process::Command::new("promtool")
        .arg("check")
        .arg("rules")
        .arg(&path)
        .output()
        .expect("promtool (apt-get install -y prometheus; scripts/setup does)");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn an_unknown_key_names_the_nearest() {
    let e = SidecarConfig::from_toml("\"bootstrap.server\" = \"x:1\"\n").unwrap_err();
    assert!(
        e.to_string().contains("did you mean `bootstrap.servers`"),
        "{e}"
    );
    let e = SidecarConfig::from_toml("[alerts.rebalances]\nwarnin = 3\n").unwrap_err();
    assert!(
        e.to_string()
            .contains("did you mean `alerts.rebalances.warning`"),
        "{e}"
    );
    let e = SidecarConfig::from_toml("\"watch.interval.ms\" = \"soon\"\n").unwrap_err();
    assert!(e.to_string().contains("watch.interval.ms"), "{e}");
}

#[tokio::test]
async fn debug_config_never_shows_the_sasl_password() {
    let s = sidecar(
        "\"bootstrap.servers\" = \"127.0.0.1:1\"\n\"group.id\" = \"g\"\n\"security.protocol\" = \"SASL_PLAINTEXT\"\n\"sasl.mechanism\" = \"PLAIN\"\n\"sasl.username\" = \"alice\"\n\"sasl.password\" = \"alice-secret\"\n",
    )
    .await;
    let (status, body) = get(s.addr, "/debug/config").await;
    assert_eq!(status, 200);
    assert!(!body.contains("alice-secret"), "{body}");
    assert!(body.contains("[redacted]"));
    assert!(body.contains("alice"));
    s.shutdown().await;
}

#[tokio::test]
async fn debug_endpoints_and_alerts_require_the_token_when_set() {
    let s = sidecar("\"debug.token\" = \"s3cret\"\n").await;
    // The token never shows in the configuration's Debug form (logs, panics).
    assert!(!format!("{:?}", s.app.config).contains("s3cret"));
    for path in [
        "/alerts",
        "/debug/group",
        "/debug/rebalances",
        "/debug/partitions",
        "/debug/config",
    ] {
        assert_eq!(get(s.addr, path).await.0, 401, "{path}");
        let (status, _) = request(
            s.addr,
            "GET",
            path,
            &[("Authorization", "Bearer wrong")],
            b"",
        )
        .await;
        assert_eq!(status, 401, "{path}");
        let (status, body) = request(
            s.addr,
            "GET",
            path,
            &[("Authorization", "Bearer s3cret")],
            b"",
        )
        .await;
        assert_eq!(status, 200, "{path}");
        assert!(!body.contains("s3cret"), "{path}: {body}");
    }
    // Probes and metrics stay open.
    assert_eq!(get(s.addr, "/metrics").await.0, 200);
    s.shutdown().await;
}

#[tokio::test]
async fn bad_requests_get_a_4xx() {
    let s = sidecar("").await;
    assert_eq!(get(s.addr, "/debug/rebalances?limit=abc").await.0, 400);
    assert_eq!(get(s.addr, "/debug/rebalances?limit=0").await.0, 400);
    assert_eq!(get(s.addr, "/nope").await.0, 404);
    assert_eq!(get(s.addr, "/v1/events").await.0, 405);
    let (status, _) = request(s.addr, "POST", "/v1/events", &[], b"{not json}\n").await;
    assert_eq!(status, 400);
    // Not ready before anything arrived.
    assert_eq!(get(s.addr, "/readyz").await.0, 503);
    // The sidecar still answers.
    assert_eq!(get(s.addr, "/healthz").await.0, 200);
    s.shutdown().await;
}

/// The sidecar has started (`/startupz`, the native sidecar's startup probe, which holds the
/// consumer back) only once its broker watch has looked at the group: a consumer that joined
/// first would be judged without the group as it was before (a static member's rejoin would
/// count as a rebalance). A look that fails, or never ends, still ends the wait within the
/// watch's bound, so a broker outage never keeps the consumer from starting.
#[tokio::test]
async fn startup_waits_for_the_first_look_at_the_group_and_no_longer() {
    // A "broker" that takes connections and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let s = sidecar(&format!(
        "\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"g\"\n\"watch.interval.ms\" = 1000\n",
        silent.local_addr().unwrap()
    ))
    .await;
    let (status, body) = get(s.addr, "/startupz").await;
    assert_eq!(
        status, 503,
        "started before the group was looked at: {body}"
    );
    assert_eq!(get(s.addr, "/healthz").await.0, 200, "alive all the same");
    let begun = std::time::Instant::now();
    let body = loop {
        let (status, body) = get(s.addr, "/startupz").await;
        if status == 200 {
            break body;
        }
        assert!(
            begun.elapsed() < Duration::from_secs(15),
            "still not started: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["started"], true, "{body}");
    assert!(
        body["watch_error"].is_string(),
        "the failed look is shown: {body}"
    );
}

#[tokio::test]
async fn a_sidecar_that_watches_no_group_has_started_at_once() {
    let s = sidecar("").await;
    let (status, body) = get(s.addr, "/startupz").await;
    assert_eq!(status, 200, "{body}");
}
