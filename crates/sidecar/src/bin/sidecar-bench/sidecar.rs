//! The `mooring-sidecar` under test, run as a child process of its own (so its RSS and CPU are
//! its own): started with a config file in a temporary directory, found by the address it says
//! it listens on, and stopped on drop whatever happens to the run.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::Error;

/// A `mooring-sidecar` child process; stopped (SIGTERM, then SIGKILL) on drop.
pub struct Sidecar {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
    _dir: TempDir,
}

impl Sidecar {
    /// Starts `binary` with `settings` (TOML `key = value` lines, listen on an ephemeral port) and
    /// waits for its "listening on ADDR" line.
    pub fn start(binary: &Path, settings: &[(&str, String)]) -> Result<Sidecar, Error> {
        let dir = TempDir::new("sidecar-bench")?;
        let config = dir.0.join("sidecar.toml");
        let mut text = String::from("listen = \"127.0.0.1:0\"\n");
        for (k, v) in settings {
            text.push_str(&format!("\"{k}\" = \"{v}\"\n"));
        }
        std::fs::write(&config, text)?;
        let mut cmd = Command::new(binary);
        cmd.arg("--config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, _) in std::env::vars() {
            if k.starts_with("MOORING_SIDECAR_") {
                cmd.env_remove(k);
            }
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stderr = child.stderr.take().ok_or("no stderr pipe")?;
        let (tx, rx) = std::sync::mpsc::channel();
        // Reads the address, then keeps draining (and echoing) so the pipe never fills.
        std::thread::spawn(move || {
            use std::io::BufRead;
            let mut tx = Some(tx);
            for line in std::io::BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                match line.strip_prefix("mooring-sidecar: listening on ") {
                    Some(a) if tx.is_some() => {
                        if let Some(tx) = tx.take() {
                            let _ = tx.send(a.trim().to_string());
                        }
                    }
                    _ => eprintln!("  [sidecar] {line}"),
                }
            }
        });
        let mut sidecar = Sidecar {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            _dir: dir,
        };
        let addr = rx
            .recv_timeout(Duration::from_secs(20))
            .map_err(|_| "the sidecar did not say where it listens within 20 s")?;
        sidecar.addr = addr
            .parse()
            .map_err(|e| format!("the sidecar's address {addr:?}: {e}"))?;
        Ok(sidecar)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.stop();
        }
    }
}

/// A temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(prefix: &str) -> std::io::Result<TempDir> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
