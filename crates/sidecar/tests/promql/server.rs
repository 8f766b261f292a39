//! A real Prometheus server (Debian's `prometheus`, installed by `scripts/setup`) for the
//! dashboard check: it scrapes one sidecar with the target labels a Prometheus Operator
//! PodMonitor gives (`job="<namespace>/<podmonitor>"`, `namespace`, `pod`, `container`,
//! `endpoint`), loads rule files, and answers instant queries.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const PROMETHEUS: &str = "/usr/bin/prometheus";

/// The labels of a target, as the Operator would set them for the example's pods.
pub const TARGET_LABELS: &[(&str, &str)] = &[
    ("namespace", "orders"),
    ("container", "sidecar"),
    ("endpoint", "metrics"),
];
/// The sidecar is scraped as two members (two targets, one per pod name), so a query whose
/// vector matching only works with one series per metric fails here as it would in production.
pub const PODS: &[&str] = &["orders-consumer-0", "orders-consumer-1"];
/// The Operator's job name for the example's PodMonitor.
pub const JOB: &str = "orders/orders-consumer";

/// Killed, and its directory removed, on drop.
pub struct Prometheus {
    child: Child,
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl Prometheus {
    /// Scrapes `target` (as each of [`PODS`]) every second and evaluates `rule_files` every second.
    pub fn start(target: SocketAddr, rule_files: &[PathBuf]) -> Prometheus {
        assert!(
            Path::new(PROMETHEUS).exists(),
            "{PROMETHEUS} is missing: run scripts/setup (apt-get install prometheus)"
        );
        let dir = std::env::temp_dir().join(mooring_testkit::unique("dashboards-prometheus"));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let labels: String = TARGET_LABELS
            .iter()
            .map(|(k, v)| format!("          {k}: \"{v}\"\n"))
            .collect();
        let targets: String = PODS
            .iter()
            .map(|pod| {
                format!("      - targets: ['{target}']\n        labels:\n          pod: \"{pod}\"\n{labels}")
            })
            .collect();
        let rules: String = rule_files
            .iter()
            .map(|p| format!("  - \"{}\"\n", p.display()))
            .collect();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files:\n{rules}scrape_configs:\n  - job_name: \"{JOB}\"\n    static_configs:\n{targets}"
            ),
        )
        .unwrap();
        let addr = free_port();
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

    /// The server's log (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    /// GET `path` of the HTTP API: the parsed JSON, or None while the server is not up.
    pub async fn api(&self, path: &str) -> Option<serde_json::Value> {
        // HTTP/1.0: Go answers larger bodies chunked to HTTP/1.1, and this reader is plain.
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut stream = tokio::net::TcpStream::connect(self.addr).await.ok()?;
        let head = format!("GET {path} HTTP/1.0\r\nHost: {}\r\n\r\n", self.addr);
        stream.write_all(head.as_bytes()).await.ok()?;
        let mut out = Vec::new();
        stream.read_to_end(&mut out).await.ok()?;
        let text = String::from_utf8_lossy(&out);
        let (_, body) = text.split_once("\r\n\r\n")?;
        serde_json::from_str(body).ok()
    }

    /// An instant query: Ok(result) or Err(the server's error).
    pub async fn query(&self, promql: &str) -> Result<Vec<serde_json::Value>, String> {
        let v = self
            .api(&format!("/api/v1/query?query={}", encode(promql)))
            .await
            .ok_or_else(|| "no answer".to_string())?;
        if v["status"] == "success" {
            let data = &v["data"];
            Ok(match data["resultType"].as_str() {
                Some("vector") | Some("matrix") => {
                    data["result"].as_array().cloned().unwrap_or_default()
                }
                _ => vec![data["result"].clone()],
            })
        } else {
            Err(format!("{}: {}", v["errorType"], v["error"]))
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A free port below the ephemeral range (24000..27000), so no client socket takes it meanwhile.
fn free_port() -> SocketAddr {
    let seed = std::process::id() as u16;
    for i in 0..3000u16 {
        let port = 24000 + (seed.wrapping_add(i.wrapping_mul(7))) % 3000;
        if let Ok(l) = TcpListener::bind(("127.0.0.1", port)) {
            return l.local_addr().unwrap();
        }
    }
    panic!("no free port in 24000..27000");
}

fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' | b'-' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
