//! franz-go's `kfake`, a Kafka broker written by others, as a second broker for fault injection
//! (never instead of Kafka): the Go program in `tests/kfake` runs it on loopback ports and takes
//! injection commands on stdin; [`Kfake`] builds that program (once per test run, offline, from
//! the Go modules `scripts/setup` fetched), starts one per test, and records every request and
//! response it reports, so a test can check what a client did after an injected error.
//!
//! - [`Kfake::fault`]: the next N requests of an API get an error code ([`Fault`]: at the top
//!   level or per group/partition, optionally only a given member's, or a given member epoch's).
//! - [`Kfake::stall`]: the next N requests of an API wait before the broker handles them (only
//!   their connection waits).
//! - [`Kfake::drop_responses`]: the next N responses of an API are cut mid-frame and their
//!   connection closed (the broker has applied the request);
//!   [`Kfake::drop_fetch_responses_with_records`] only those carrying records.
//! - [`Kfake::produce`] (acks=all; returns the acknowledged offsets), [`Kfake::commit`].
//! - [`Kfake::observed`], [`Kfake::wait_for`]: what the clients sent and got ([`Observed`]).
//!
//! The process is killed when the [`Kfake`] is dropped, and exits by itself when its stdin
//! closes, so it never outlives a test process that died. A test that cannot build or start it
//! fails with a message saying why; it never passes silently.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

/// How long a command may take to be answered.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the program may take to report its brokers.
const START_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a test waits for another test process to build the program.
const BUILD_WAIT: Duration = Duration::from_secs(300);

/// What to start.
#[derive(Debug, Clone)]
pub struct KfakeConfig {
    /// Brokers (1 unless a test needs more).
    pub brokers: u8,
    /// Topics to seed: (name, partitions).
    pub topics: Vec<(String, u32)>,
    /// `group.min.session.timeout.ms` (kfake's default, Kafka's 6 s, is lowered so tests can use
    /// short sessions).
    pub min_session_timeout_ms: u32,
    /// Broker configs kfake takes (`-broker-config key=value`), e.g.
    /// `group.consumer.heartbeat.interval.ms` for consumer-protocol groups.
    pub broker_configs: Vec<(String, String)>,
}

impl KfakeConfig {
    /// One broker with `topics`.
    pub fn new<S: Into<String>>(topics: impl IntoIterator<Item = (S, u32)>) -> Self {
        KfakeConfig {
            brokers: 1,
            topics: topics.into_iter().map(|(t, p)| (t.into(), p)).collect(),
            min_session_timeout_ms: 100,
            broker_configs: Vec::new(),
        }
    }

    /// With broker config `key` set to `value`.
    pub fn broker_config(mut self, key: &str, value: &str) -> Self {
        self.broker_configs.push((key.to_owned(), value.to_owned()));
        self
    }
}

/// An error to inject: the next `count` requests of `api` matching the selectors get `error`.
#[derive(Debug, Clone)]
pub struct Fault {
    api: i16,
    error: i16,
    count: u32,
    top_level: bool,
    group: Option<String>,
    member: Option<String>,
    topic: Option<String>,
    partitions: Vec<i32>,
    epoch: Option<i32>,
}

impl Fault {
    /// Requests of API key `api` get error code `error` (once unless [`Fault::count`]).
    pub fn new(api: i16, error: i16) -> Self {
        Fault {
            api,
            error,
            count: 1,
            top_level: false,
            group: None,
            member: None,
            topic: None,
            partitions: Vec::new(),
            epoch: None,
        }
    }

    /// How many requests get the error.
    pub fn count(mut self, count: u32) -> Self {
        self.count = count;
        self
    }

    /// Set the response's top-level error code instead of its groups' or partitions' (for APIs
    /// whose response has both).
    pub fn top_level(mut self) -> Self {
        self.top_level = true;
        self
    }

    /// Only requests for this group.
    pub fn group(mut self, group: &str) -> Self {
        self.group = Some(group.to_owned());
        self
    }

    /// Only requests carrying this member id.
    pub fn member(mut self, member_id: &str) -> Self {
        self.member = Some(member_id.to_owned());
        self
    }

    /// Only ConsumerGroupHeartbeat requests carrying this member epoch (-1 or -2: a leave).
    pub fn epoch(mut self, epoch: i32) -> Self {
        self.epoch = Some(epoch);
        self
    }

    /// Only this topic's partitions (`partitions` empty: all of them).
    pub fn partitions(mut self, topic: &str, partitions: &[i32]) -> Self {
        self.topic = Some(topic.to_owned());
        self.partitions = partitions.to_vec();
        self
    }
}

/// One thing the program reported: a request read (`req`), a response written (`resp`), a
/// response cut (`dropped`), a request held (`stalled`, `resumed`).
#[derive(Debug, Clone)]
pub struct Observed {
    /// `req`, `resp`, `dropped`, `stalled` or `resumed`.
    pub kind: String,
    /// When, in microseconds since the Unix epoch (the broker's clock: this machine's).
    pub at_micros: i64,
    /// The API key.
    pub key: i16,
    /// The API's name, e.g. `Heartbeat`.
    pub api: String,
    /// Which connection (numbered by the program), 0 for `stalled`/`resumed`.
    pub conn: i64,
    /// The request's correlation id.
    pub corr: i64,
    /// The client id the request carried.
    pub client: String,
    /// Everything reported (see tests/kfake/observe.go for the fields per API).
    pub raw: Value,
}

impl Observed {
    fn parse(v: Value) -> Option<Observed> {
        let kind = v.get("ev")?.as_str()?.to_owned();
        Some(Observed {
            kind,
            at_micros: v.get("t").and_then(Value::as_i64).unwrap_or(0),
            key: v
                .get("key")
                .and_then(Value::as_i64)
                .and_then(|k| i16::try_from(k).ok())
                .unwrap_or(-1),
            api: v
                .get("api")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            conn: v.get("conn").and_then(Value::as_i64).unwrap_or(0),
            corr: v.get("corr").and_then(Value::as_i64).unwrap_or(-1),
            client: v
                .get("client")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            raw: v,
        })
    }

    /// When, as a `SystemTime`.
    pub fn at(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_micros(u64::try_from(self.at_micros).unwrap_or(0))
    }

    /// Whether this is a request (`req`) of API `key`.
    pub fn is_request(&self, key: i16) -> bool {
        self.kind == "req" && self.key == key
    }

    /// Whether this is a response written whole (`resp`) of API `key`.
    pub fn is_response(&self, key: i16) -> bool {
        self.kind == "resp" && self.key == key
    }

    /// The top-level error code of a response (`None` for APIs without one).
    pub fn error(&self) -> Option<i16> {
        self.int("err").and_then(|c| i16::try_from(c).ok())
    }

    /// The error codes of a response's groups or partitions that are not 0:
    /// (topic or group, partition or -1, code).
    pub fn entity_errors(&self) -> Vec<(String, i32, i16)> {
        self.raw
            .get("errs")
            .and_then(Value::as_array)
            .map(|rows| {
                rows.iter()
                    .filter_map(|row| {
                        Some((
                            row.get(0)?.as_str()?.to_owned(),
                            i32::try_from(row.get(1)?.as_i64()?).ok()?,
                            i16::try_from(row.get(2)?.as_i64()?).ok()?,
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether the response carried `code`, at the top level or for a group or partition.
    pub fn carries(&self, code: i16) -> bool {
        self.error() == Some(code) || self.entity_errors().iter().any(|(_, _, c)| *c == code)
    }

    /// The member id a group request (or a JoinGroup response) carried.
    pub fn member(&self) -> Option<&str> {
        self.raw.get("member").and_then(Value::as_str)
    }

    /// The generation a Heartbeat, SyncGroup or OffsetCommit request (or a JoinGroup response)
    /// carried.
    pub fn generation(&self) -> Option<i32> {
        self.int("gen").and_then(|g| i32::try_from(g).ok())
    }

    /// An integer field.
    pub fn int(&self, field: &str) -> Option<i64> {
        self.raw.get(field).and_then(Value::as_i64)
    }

    /// A field's rows of `[topic, partition, ...]` as (topic, partition, the rest).
    pub fn rows(&self, field: &str) -> Vec<(String, i32, Vec<i64>)> {
        self.raw
            .get(field)
            .and_then(Value::as_array)
            .map(|rows| {
                rows.iter()
                    .filter_map(|row| {
                        let row = row.as_array()?;
                        let topic = row.first()?.as_str()?.to_owned();
                        let partition = i32::try_from(row.get(1)?.as_i64()?).ok()?;
                        let rest = row.iter().skip(2).filter_map(Value::as_i64).collect();
                        Some((topic, partition, rest))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[derive(Debug, Default)]
struct State {
    observed: Vec<Observed>,
    replies: HashMap<u64, Value>,
    /// Set once stdout closed: the program is gone.
    ended: bool,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    stderr: Mutex<String>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running `tests/kfake` program: one kfake cluster for one test.
#[derive(Debug)]
pub struct Kfake {
    child: Child,
    stdin: Mutex<Option<ChildStdin>>,
    shared: Arc<Shared>,
    next_id: AtomicU64,
    brokers: Vec<String>,
}

impl Kfake {
    /// Builds the program if needed and starts it. Panics (failing the test) with the reason if
    /// it cannot.
    pub fn start(config: KfakeConfig) -> Kfake {
        let binary = binary();
        let mut command = Command::new(&binary);
        command
            .arg("-brokers")
            .arg(config.brokers.to_string())
            .arg("-min-session-ms")
            .arg(config.min_session_timeout_ms.to_string());
        for (topic, partitions) in &config.topics {
            command.arg("-topic").arg(format!("{topic}:{partitions}"));
        }
        for (key, value) in &config.broker_configs {
            command.arg("-broker-config").arg(format!("{key}={value}"));
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start {}: {e}", binary.display()));
        let shared = Arc::new(Shared::default());
        let stdout = child.stdout.take().map(BufReader::new);
        let stderr = child.stderr.take();
        let reader = shared.clone();
        std::thread::spawn(move || {
            if let Some(stdout) = stdout {
                for line in stdout.lines() {
                    let Ok(line) = line else { break };
                    let Ok(value) = serde_json::from_str::<Value>(&line) else {
                        continue;
                    };
                    let mut state = reader.lock();
                    if value.get("ev").and_then(Value::as_str) == Some("reply") {
                        let id = value.get("id").and_then(Value::as_u64).unwrap_or(0);
                        state.replies.insert(id, value);
                    } else if let Some(o) = Observed::parse(value) {
                        state.observed.push(o);
                    }
                    drop(state);
                    reader.changed.notify_all();
                }
            }
            reader.lock().ended = true;
            reader.changed.notify_all();
        });
        let errors = shared.clone();
        std::thread::spawn(move || {
            if let Some(mut stderr) = stderr {
                let mut text = String::new();
                let _ = stderr.read_to_string(&mut text);
                errors
                    .stderr
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push_str(&text);
            }
        });
        let stdin = child.stdin.take();
        let mut kfake = Kfake {
            child,
            stdin: Mutex::new(stdin),
            shared,
            next_id: AtomicU64::new(1),
            brokers: Vec::new(),
        };
        let ready = kfake.wait_observed("the ready line", START_TIMEOUT, |o| o.kind == "ready");
        kfake.brokers = ready
            .raw
            .get("brokers")
            .and_then(Value::as_array)
            .map(|b| {
                b.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        assert!(!kfake.brokers.is_empty(), "kfake reported no brokers");
        kfake
    }

    /// `bootstrap.servers` for a client.
    pub fn bootstrap(&self) -> String {
        self.brokers.join(",")
    }

    /// Injects `fault`.
    #[track_caller]
    pub fn fault(&self, fault: Fault) {
        let mut cmd = json!({
            "cmd": "fault",
            "key": fault.api,
            "err": fault.error,
            "count": fault.count,
            "top_level": fault.top_level,
            "partitions": fault.partitions,
        });
        if let Some(g) = fault.group {
            cmd["group"] = json!(g);
        }
        if let Some(m) = fault.member {
            cmd["member"] = json!(m);
        }
        if let Some(e) = fault.epoch {
            cmd["epoch"] = json!(e);
        }
        if let Some(t) = fault.topic {
            cmd["topic"] = json!(t);
        }
        self.command(cmd);
    }

    /// The next `count` requests of API `api` (of `member`, if given) wait `pause` before the
    /// broker handles them; only their connection waits.
    #[track_caller]
    pub fn stall(&self, api: i16, pause: Duration, count: u32, member: Option<&str>) {
        let mut cmd = json!({
            "cmd": "stall",
            "key": api,
            "ms": u64::try_from(pause.as_millis()).unwrap_or(u64::MAX),
            "count": count,
        });
        if let Some(m) = member {
            cmd["member"] = json!(m);
        }
        self.command(cmd);
    }

    /// The next `count` responses of API `api` are cut mid-frame and their connection closed.
    #[track_caller]
    pub fn drop_responses(&self, api: i16, count: u32) {
        self.command(json!({"cmd": "drop", "key": api, "count": count}));
    }

    /// The next `count` Fetch responses that carry records are cut mid-frame and their
    /// connection closed.
    #[track_caller]
    pub fn drop_fetch_responses_with_records(&self, fetch_api: i16, count: u32) {
        self.command(
            json!({"cmd": "drop", "key": fetch_api, "count": count, "with_records": true}),
        );
    }

    /// Produces `count` records to `topic`-`partition` with acks=all; returns the acknowledged
    /// offsets.
    #[track_caller]
    pub fn produce(&self, topic: &str, partition: i32, count: u32) -> Vec<i64> {
        let reply = self.command(json!({
            "cmd": "produce", "topic": topic, "partition": partition, "count": count,
        }));
        reply
            .get("offsets")
            .and_then(Value::as_array)
            .map(|o| o.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default()
    }

    /// Commits `offset` for `topic`-`partition` in `group`, a group with no members (generation
    /// -1), as an admin tool would.
    #[track_caller]
    pub fn commit(&self, group: &str, topic: &str, partition: i32, offset: i64) {
        self.command(json!({
            "cmd": "commit", "group": group, "topic": topic, "partition": partition, "offset": offset,
        }));
    }

    /// Sets dynamic configs of `group` (kfake's `SetGroupConfigs`), before or after it exists:
    /// e.g. `share.auto.offset.reset=earliest` for a share group.
    pub fn set_group_config(&self, group: &str, configs: &[(&str, &str)]) {
        let configs: serde_json::Map<String, Value> = configs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), json!(v)))
            .collect();
        self.command(json!({ "cmd": "group_config", "group": group, "configs": configs }));
    }

    /// Everything reported so far, in order.
    pub fn observed(&self) -> Vec<Observed> {
        self.shared.lock().observed.clone()
    }

    /// Waits until something reported matches `pred` and returns the first such; panics with
    /// `what` (and the program's stderr if it ended) after `timeout`.
    #[track_caller]
    pub fn wait_for(
        &self,
        what: &str,
        timeout: Duration,
        pred: impl FnMut(&Observed) -> bool,
    ) -> Observed {
        self.wait_observed(what, timeout, pred)
    }

    #[track_caller]
    fn wait_observed(
        &self,
        what: &str,
        timeout: Duration,
        mut pred: impl FnMut(&Observed) -> bool,
    ) -> Observed {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if let Some(o) = state.observed.iter().find(|o| pred(o)) {
                return o.clone();
            }
            if state.ended {
                drop(state);
                panic!(
                    "kfake ended before {what}:\n{}",
                    self.stderr_text().trim_end()
                );
            }
            let now = Instant::now();
            if now >= deadline {
                drop(state);
                panic!("timed out after {timeout:?} waiting for kfake to report {what}");
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    fn stderr_text(&self) -> String {
        self.shared
            .stderr
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Sends one command and waits for its reply; panics if it failed.
    #[track_caller]
    fn command(&self, mut cmd: Value) -> Value {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        cmd["id"] = json!(id);
        {
            let mut stdin = self.stdin.lock().unwrap_or_else(|p| p.into_inner());
            let Some(pipe) = stdin.as_mut() else {
                panic!("kfake's stdin is closed");
            };
            let line = format!("{cmd}\n");
            if let Err(e) = pipe.write_all(line.as_bytes()).and_then(|()| pipe.flush()) {
                panic!(
                    "could not send {cmd} to kfake ({e}):\n{}",
                    self.stderr_text()
                );
            }
        }
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        let mut state = self.shared.lock();
        loop {
            if let Some(reply) = state.replies.remove(&id) {
                if let Some(error) = reply.get("error").and_then(Value::as_str) {
                    panic!("kfake command {cmd} failed: {error}");
                }
                return reply;
            }
            let now = Instant::now();
            if state.ended || now >= deadline {
                drop(state);
                panic!(
                    "kfake did not answer {cmd}:\n{}",
                    self.stderr_text().trim_end()
                );
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

impl Drop for Kfake {
    fn drop(&mut self) {
        // Closing stdin ends the program; the kill makes sure.
        self.stdin.lock().unwrap_or_else(|p| p.into_inner()).take();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tests/kfake` in this work tree.
fn source_dir() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/kfake");
    dir.canonicalize().unwrap_or(dir)
}

/// The built program, building it first if no build of these sources exists. The build goes to
/// `$MOORING_CACHE/kfake/<hash of the sources>/`; of test processes starting at once, one builds
/// (holding a lock directory) while the others wait for it.
fn binary() -> PathBuf {
    let source = source_dir();
    let hash = sources_hash(&source);
    let dir = cache_dir().join("kfake").join(format!("{hash:016x}"));
    let binary = dir.join("mooring-kfake");
    if binary.exists() {
        return binary;
    }
    std::fs::create_dir_all(&dir)
        .unwrap_or_else(|e| panic!("could not create {}: {e}", dir.display()));
    let lock = dir.join("building");
    let waited_since = Instant::now();
    loop {
        if binary.exists() {
            return binary;
        }
        match std::fs::create_dir(&lock) {
            Ok(()) => break,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                // Another test process is building; a lock older than the wait is left over
                // from a build that died.
                let stale = std::fs::metadata(&lock)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > BUILD_WAIT);
                if stale {
                    let _ = std::fs::remove_dir(&lock);
                } else if waited_since.elapsed() > BUILD_WAIT {
                    panic!(
                        "waited {BUILD_WAIT:?} for another test to build {}",
                        binary.display()
                    );
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("could not create {}: {e}", lock.display()),
        }
    }
    let result = build(&source, &dir, &binary);
    let _ = std::fs::remove_dir(&lock);
    if let Err(why) = result {
        panic!("{why}");
    }
    binary
}

/// `$MOORING_CACHE`, else `~/.cache/mooring` (where `scripts/setup` keeps what the tests need).
fn cache_dir() -> PathBuf {
    std::env::var_os("MOORING_CACHE")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/mooring")))
        .unwrap_or_else(|| std::env::temp_dir().join("mooring-cache"))
}

/// `go build` offline (the modules are in the module cache since `scripts/setup`), to a temporary
/// name renamed into place, so no test ever runs a half-written binary.
fn build(source: &Path, dir: &Path, binary: &Path) -> Result<(), String> {
    let partial = dir.join(format!("mooring-kfake.{}.partial", std::process::id()));
    let out = Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&partial)
        .arg(".")
        .current_dir(source)
        .env("GOFLAGS", "-mod=readonly")
        .env("GOPROXY", "off")
        .env("GOTOOLCHAIN", "local")
        .env("GOWORK", "off")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            format!(
                "could not run `go build` for {} ({e}): the kfake fault tests need Go; \
                 see scripts/setup",
                source.display()
            )
        })?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&partial);
        return Err(format!(
            "`go build` of {} failed (its Go modules are fetched by scripts/setup; run it once \
             with network access):\n{}",
            source.display(),
            String::from_utf8_lossy(&out.stderr).trim_end()
        ));
    }
    std::fs::rename(&partial, binary).map_err(|e| {
        format!(
            "could not move {} to {}: {e}",
            partial.display(),
            binary.display()
        )
    })
}

/// FNV-1a over the names and contents of the program's source files (a stable hash: the cache
/// directory must be the same in every test process).
fn sources_hash(source: &Path) -> u64 {
    let mut files: Vec<PathBuf> = std::fs::read_dir(source)
        .unwrap_or_else(|e| panic!("could not read {}: {e}", source.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "go")
                || p.file_name()
                    .is_some_and(|n| n == "go.mod" || n == "go.sum")
        })
        .collect();
    files.sort();
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for b in bytes {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in &files {
        feed(
            file.file_name()
                .map(|n| n.as_encoded_bytes())
                .unwrap_or(b""),
        );
        let bytes = std::fs::read(file)
            .unwrap_or_else(|e| panic!("could not read {}: {e}", file.display()));
        feed(&bytes);
    }
    hash
}
