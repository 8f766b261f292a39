//! A real Prometheus server (Debian's `prometheus`, installed by `scripts/setup`) on a free port
//! below the ephemeral range, with its own storage: it scrapes the given targets every second,
//! evaluates the given rule files every second, and answers instant queries over its HTTP API.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const PROMETHEUS: &str = "/usr/bin/prometheus";

/// One scrape target: the address and the labels Prometheus attaches to its series.
pub struct Target<'a> {
    pub addr: SocketAddr,
    pub labels: Vec<(&'a str, &'a str)>,
}

/// Killed, and its directory removed, on drop.
pub struct Prometheus {
    child: Child,
    pub addr: SocketAddr,
    dir: PathBuf,
}

impl Prometheus {
    /// Scrapes every one of `targets` as job `job` every second and evaluates `rule_files` every
    /// second.
    pub fn start(job: &str, targets: &[Target], rule_files: &[PathBuf]) -> Prometheus {
        assert!(
            Path::new(PROMETHEUS).exists(),
            "{PROMETHEUS} is missing: run scripts/setup (it installs Debian's prometheus package: apt-get install prometheus)"
        );
        let dir = std::env::temp_dir().join(mooring_testkit::unique("prometheus"));
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let targets: String = targets
            .iter()
            .map(|t| {
                let mut s = format!("      - targets: ['{}']\n", t.addr);
                if !t.labels.is_empty() {
                    s.push_str("        labels:\n");
                    for (k, v) in &t.labels {
                        s.push_str(&format!("          {k}: \"{v}\"\n"));
                    }
                }
                s
            })
            .collect();
        let rules: String = if rule_files.is_empty() {
            String::new()
        } else {
            std::iter::once("rule_files:\n".to_string())
                .chain(
                    rule_files
                        .iter()
                        .map(|p| format!("  - \"{}\"\n", p.display())),
                )
                .collect()
        };
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n{rules}scrape_configs:\n  - job_name: \"{job}\"\n    static_configs:\n{targets}"
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

    /// The value of the first series of an instant vector query; None while there is none (or
    /// no answer).
    pub async fn value(&self, promql: &str) -> Option<f64> {
        self.query(promql).await.ok()?.first()?["value"][1]
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
