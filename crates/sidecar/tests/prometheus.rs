//! A real Prometheus server (Debian's `prometheus`, installed by `scripts/setup`) scrapes the
//! sidecar every second while real rebalances happen on the shared broker (a member joins, a
//! second one joins and leaves cleanly), and PromQL over Prometheus' HTTP API returns exactly
//! the rebalances the test caused, in total and by cause.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{get, request, sidecar};
use mooring_consumer::processing::ConsumerRecord;
use mooring_testkit::{unique, Cluster};
use support::{consumer, eventually, exporter, rebalances, run, stop};

const PROMETHEUS: &str = "/usr/bin/prometheus";

/// A Prometheus server on a free port below the ephemeral range, with its own storage; killed
/// (and its directory removed) on drop.
struct Prometheus {
    child: Child,
    addr: SocketAddr,
    dir: PathBuf,
}

impl Prometheus {
    fn start(target: SocketAddr) -> Prometheus {
        assert!(
            Path::new(PROMETHEUS).exists(),
            "{PROMETHEUS} is missing: run scripts/setup (it installs Debian's prometheus package: apt-get install prometheus)"
        );
        let dir = std::env::temp_dir().join(unique("sidecar-prometheus"));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: mooring-sidecar\n    static_configs:\n      - targets: ['{target}']\n"
            ),
        )
        .unwrap();
        let addr = free_port_below_ephemeral();
        let child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(
                std::fs::File::create(dir.join("prometheus.log")).unwrap(),
            ))
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {PROMETHEUS}: {e}"));
        Prometheus { child, addr, dir }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    /// An instant query; the JSON `data.result`.
    async fn query(&self, promql: &str) -> Option<serde_json::Value> {
        let path = format!("/api/v1/query?query={}", encode(promql));
        let stream = tokio::net::TcpStream::connect(self.addr).await.ok()?;
        drop(stream);
        let (status, body) = request(self.addr, "GET", &path, &[], b"").await;
        if status != 200 {
            return None;
        }
        let v: serde_json::Value = serde_json::from_str(&body).ok()?;
        (v["status"] == "success").then(|| v["data"]["result"].clone())
    }

    /// The single value of a scalar-like vector query.
    async fn value(&self, promql: &str) -> Option<f64> {
        let result = self.query(promql).await?;
        result.as_array()?.first()?["value"][1]
            .as_str()?
            .parse()
            .ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn free_port_below_ephemeral() -> SocketAddr {
    let seed = std::process::id() as u16;
    for i in 0..2000u16 {
        let port = 21000 + (seed.wrapping_add(i.wrapping_mul(7))) % 10000;
        if let Ok(l) = TcpListener::bind(("127.0.0.1", port)) {
            return l.local_addr().unwrap();
        }
    }
    panic!("no free port in 21000..31000");
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn prometheus_scrapes_the_rebalances_the_test_caused() {
    let cluster = Cluster::shared();
    let topic = unique("sidecar-prom");
    let group = unique("sidecar-prom-g");
    cluster.create_topic(&topic, 4);
    let s = sidecar(&format!(
        "\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{group}\"\n\"watch.interval.ms\" = 250\n",
        cluster.bootstrap()
    ))
    .await;
    let addr = s.addr;
    let prometheus = Prometheus::start(addr);
    eventually(
        "Prometheus scrapes the sidecar",
        Duration::from_secs(30),
        || async { prometheus.value("up{job=\"mooring-sidecar\"}").await == Some(1.0) },
    )
    .await;

    let a = consumer(&cluster, &group, &topic, &[]);
    let export = exporter(&a, addr);
    let handler = |_r: ConsumerRecord| async { Ok::<(), String>(()) };
    let run_a = run(&a, handler);
    eventually("the first join", Duration::from_secs(30), || async {
        rebalances(addr, "member_joined").await == 1.0 && get(addr, "/readyz").await.0 == 200
    })
    .await;
    let b = consumer(&cluster, &group, &topic, &[]);
    let run_b = run(&b, handler);
    eventually("the second join", Duration::from_secs(30), || async {
        rebalances(addr, "member_joined").await == 2.0 && get(addr, "/readyz").await.0 == 200
    })
    .await;
    stop(&b, run_b).await;
    eventually("the leave", Duration::from_secs(30), || async {
        rebalances(addr, "member_left").await == 1.0 && get(addr, "/readyz").await.0 == 200
    })
    .await;
    cluster.produce_perf(&topic, 20, 10);

    let waited = std::time::Instant::now();
    eventually(
        "PromQL sees three rebalances",
        Duration::from_secs(20),
        || async { prometheus.value("sum(mooring_rebalances_total)").await == Some(3.0) },
    )
    .await;
    eprintln!(
        "Prometheus had the count {:?} after the last rebalance",
        waited.elapsed()
    );
    let by_cause = prometheus
        .query("sum by (cause) (mooring_rebalances_total) > 0")
        .await
        .unwrap();
    let mut seen: Vec<(String, f64)> = by_cause
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["metric"]["cause"].as_str().unwrap().to_string(),
                r["value"][1].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    seen.sort_by(|x, y| x.0.cmp(&y.0));
    assert_eq!(
        seen,
        [
            ("member_joined".to_string(), 2.0),
            ("member_left".to_string(), 1.0)
        ],
        "{}",
        prometheus.log()
    );
    assert_eq!(
        prometheus
            .value("sum(mooring_rebalance_duration_seconds_count)")
            .await,
        Some(3.0)
    );
    eventually(
        "the handler histogram is scraped",
        Duration::from_secs(10),
        || async {
            prometheus
                .value("sum(mooring_handler_duration_seconds_count)")
                .await
                .is_some_and(|n| n >= 20.0)
        },
    )
    .await;

    stop(&a, run_a).await;
    export.shutdown().await;
    drop(prometheus);
    s.shutdown().await;
    cluster.delete_topic(&topic);
}
