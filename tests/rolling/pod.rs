//! One pod: the consumer (`orders-demo`) and its sidecar (`mooring-sidecar`) as processes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::rollout::Run;
use super::{
    binaries, http_get, json, metric_sum, terminate, wait_until, GRACE, SESSION_TIMEOUT_MS,
};

/// The group protocol a pod's consumer speaks (`group.protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Protocol {
    Classic,
    Consumer,
}

/// One pod: the consumer and its sidecar, and where their output goes.
pub(crate) struct Pod {
    pub(crate) ordinal: usize,
    pub(crate) port: u16,
    member: Option<Child>,
    sidecar: Option<Child>,
    dir: PathBuf,
    /// Lives so far (each start is one).
    lives: u32,
    /// The group protocol of the running life.
    pub(crate) protocol: Protocol,
}

impl Pod {
    /// A pod not started yet, its sidecar on `port`, its files in `dir`.
    pub(crate) fn new(ordinal: usize, port: u16, dir: &Path) -> Pod {
        Pod {
            ordinal,
            port,
            member: None,
            sidecar: None,
            dir: dir.to_path_buf(),
            lives: 0,
            protocol: Protocol::Classic,
        }
    }

    /// A second process of this pod (a surge's new pod: the same name, so the same instance id),
    /// its sidecar on `port`; its lives go on counting from this one's, so no file is shared.
    pub(crate) fn twin(&self, port: u16) -> Pod {
        let mut twin = Pod::new(self.ordinal, port, &self.dir);
        twin.lives = self.lives;
        twin
    }
}

impl Pod {
    pub(crate) fn name(&self) -> String {
        format!("member-{}", self.ordinal)
    }

    /// Where this life of the pod's consumer writes what it processed (one file per life, so
    /// a surge's two processes of one pod never share a file).
    fn records(&self) -> PathBuf {
        self.dir
            .join(format!("records-{}-{}.txt", self.ordinal, self.lives))
    }

    fn log(&self, what: &str) -> PathBuf {
        self.dir
            .join(format!("{what}-{}-{}.txt", self.ordinal, self.lives))
    }

    /// Starts the sidecar, then the consumer once the sidecar has started (the native sidecar
    /// starts first in a pod, and its startup probe, `/startupz`, holds the consumer back until
    /// it has looked at the group).
    pub(crate) fn start(&mut self, run: &Run, protocol: Protocol) {
        self.lives += 1;
        let (member_bin, sidecar_bin) = binaries();
        let config = self.dir.join(format!("sidecar-{}.toml", self.ordinal));
        std::fs::write(
            &config,
            format!(
                "listen = \"127.0.0.1:{}\"\n\"bootstrap.servers\" = \"{}\"\n\"group.id\" = \"{}\"\n\
                 \"watch.interval.ms\" = 2000\n",
                self.port, run.bootstrap, run.group
            ),
        )
        .expect("sidecar config");
        let out = std::fs::File::create(self.log("sidecar")).expect("sidecar log");
        self.sidecar = Some(
            Command::new(sidecar_bin)
                .args(["--config", config.to_str().expect("utf-8 path")])
                .stdin(Stdio::null())
                .stdout(out.try_clone().expect("log"))
                .stderr(out)
                .spawn()
                .expect("start mooring-sidecar"),
        );
        let (name, port, log) = (self.name(), self.port, self.log("sidecar"));
        let sidecar = self.sidecar.as_mut().expect("just started");
        wait_until(
            &format!("{name}'s sidecar to start on {port}"),
            Duration::from_secs(20),
            || {
                // A sidecar that could not bind exits at once: never talk to another's.
                let exited = sidecar.try_wait().ok().flatten();
                assert!(
                    exited.is_none(),
                    "the sidecar on port {port} exited ({exited:?}): {}",
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
                http_get(port, "/startupz")
                    .filter(|(status, _)| *status == 200)
                    .map(|_| ())
            },
        );
        let out = std::fs::File::create(self.log("member")).expect("member log");
        let mut cmd = Command::new(member_bin);
        cmd.env("MOORING__BOOTSTRAP_SERVERS", &run.bootstrap)
            .env("MOORING__GROUP_ID", &run.group)
            .env("MOORING__DEMO_TOPIC", &run.topic)
            .env("MOORING__DEMO_OUTPUT", self.records())
            .env("MOORING__AUTO_COMMIT_INTERVAL_MS", "1000")
            .env("MOORING__MOORING_SHUTDOWN_TIMEOUT_MS", "10000")
            .env("MOORING__MOORING_TELEMETRY_ENABLED", "true")
            .env(
                "MOORING__MOORING_TELEMETRY_ENDPOINT",
                format!("http://127.0.0.1:{}/v1/events", self.port),
            )
            .env("MOORING__MOORING_TELEMETRY_SNAPSHOT_INTERVAL_MS", "1000")
            .env("RUST_LOG", "warn");
        match protocol {
            // The session and heartbeat timing of a consumer-protocol group is the broker's.
            Protocol::Consumer => {
                cmd.env("MOORING__GROUP_PROTOCOL", "consumer");
            }
            Protocol::Classic => {
                cmd.env(
                    "MOORING__SESSION_TIMEOUT_MS",
                    SESSION_TIMEOUT_MS.to_string(),
                )
                .env("MOORING__HEARTBEAT_INTERVAL_MS", "1000");
            }
        }
        self.protocol = protocol;
        if run.scenario.static_members {
            cmd.env("MOORING__GROUP_INSTANCE_ID", self.name());
        }
        self.member = Some(
            cmd.stdin(Stdio::null())
                .stdout(out.try_clone().expect("log"))
                .stderr(out)
                .spawn()
                .expect("start orders-demo"),
        );
    }

    /// Terminates the pod as the kubelet does with a native sidecar: SIGTERM to the consumer and
    /// its exit (within the grace period), then SIGTERM to the sidecar. Returns the consumer's
    /// time from SIGTERM to exit.
    pub(crate) fn stop(&mut self) -> Duration {
        let started = Instant::now();
        let mut member = self.member.take().expect("a running member");
        let (status, in_grace) = terminate(&mut member, GRACE);
        let took = started.elapsed();
        let log = std::fs::read_to_string(self.log("member")).unwrap_or_default();
        assert!(
            in_grace && status.success(),
            "{} did not stop cleanly on SIGTERM ({status}, within the grace: {in_grace}):\n{log}",
            self.name()
        );
        let mut sidecar = self.sidecar.take().expect("a running sidecar");
        let (status, in_grace) = terminate(&mut sidecar, GRACE);
        assert!(
            in_grace && status.success(),
            "{}'s sidecar did not stop cleanly on SIGTERM ({status})",
            self.name()
        );
        took
    }

    pub(crate) fn ready(&self) -> Option<serde_json::Value> {
        match json(self.port, "/readyz") {
            Some((200, body)) => Some(body),
            _ => None,
        }
    }

    /// The member's generation and member id as its sidecar knows them.
    pub(crate) fn generation(&self) -> i64 {
        let (_, body) = json(self.port, "/readyz").expect("the sidecar answers /readyz");
        body["generation"].as_i64().unwrap_or(-1)
    }

    pub(crate) fn rebalances(&self) -> u64 {
        metric_sum(self.port, "mooring_rebalances_total").expect("the sidecar answers /metrics")
    }

    /// How many times the member's listener was told of revoked partitions.
    pub(crate) fn revocations(&self) -> u64 {
        metric_sum(
            self.port,
            "mooring_partitions_revoked_duration_seconds_count",
        )
        .expect("the sidecar answers /metrics")
    }

    /// How many times the member was refused its instance id (UNRELEASED_INSTANCE_ID).
    pub(crate) fn instance_id_waits(&self) -> u64 {
        metric_sum(self.port, "mooring_instance_id_unreleased_attempts_total")
            .expect("the sidecar answers /metrics")
    }

    /// Whether the consumer process has exited (a crash, or a fatal error).
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.member
            .as_mut()
            .and_then(|m| m.try_wait().ok().flatten())
    }

    /// The member's own output, for a failure message.
    pub(crate) fn member_log(&self) -> String {
        std::fs::read_to_string(self.log("member")).unwrap_or_default()
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        for child in [self.member.as_mut(), self.sidecar.as_mut()]
            .into_iter()
            .flatten()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
