//! The sidecar's configuration: a file (TOML or YAML) plus environment overrides, read with the
//! `config` crate and checked against one key table.
//!
//! Keys are flat, dotted names. The Kafka part uses Kafka's own property names (every key of
//! [`CLIENT_KEYS`] plus `group.id`), so a Java or librdkafka config can be brought along; the
//! sidecar's own keys are in [`SIDECAR_KEYS`]. An unknown key is an error naming the nearest valid
//! one; an ill-typed value is an error naming the key.
//!
//! Environment: `MOORING_SIDECAR_` + the key with `.` written `__`, e.g.
//! `MOORING_SIDECAR_BOOTSTRAP__SERVERS`, `MOORING_SIDECAR_ALERTS__REBALANCES__WARNING`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mooring_client::config::{nearest_key, Secret, ValueKind, CLIENT_KEYS};
use mooring_client::ClientConfig;

use crate::alerts::{AlertKind, Threshold};

/// Why the configuration was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file or the environment could not be read.
    #[error("reading the configuration: {0}")]
    Source(String),
    /// A key no table knows.
    #[error("unknown configuration key `{key}`{}", .nearest.as_ref().map(|n| format!("; did you mean `{n}`?")).unwrap_or_default())]
    UnknownKey {
        /// The key.
        key: String,
        /// The nearest valid key, if one is close.
        nearest: Option<String>,
    },
    /// A value of the wrong type.
    #[error("configuration key `{key}`: {message}")]
    Invalid {
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
}

/// How a sidecar key's value is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `host:port`.
    Addr,
    /// `host:port`, or empty for none.
    OptionalAddr,
    /// Milliseconds.
    Millis,
    /// A non-negative integer.
    Count,
    /// A number.
    Number,
    /// A secret (shown redacted).
    Secret,
    /// PromQL label matchers without braces (`job="x",pod=~"y.*"`).
    Selector,
    /// A file's path, or empty for none.
    Path,
}

/// One key of the sidecar's own table.
#[derive(Debug, Clone, Copy)]
pub struct SidecarKey {
    /// The key.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// The default (empty: none).
    pub default: &'static str,
    /// What it does.
    pub doc: &'static str,
}

const fn k(name: &'static str, kind: Kind, default: &'static str, doc: &'static str) -> SidecarKey {
    SidecarKey {
        name,
        kind,
        default,
        doc,
    }
}

/// The sidecar's own keys (the Kafka ones are [`CLIENT_KEYS`] and `group.id`).
pub const SIDECAR_KEYS: &[SidecarKey] = &[
    k(
        "listen",
        Kind::Addr,
        "127.0.0.1:9464",
        "ingest, health, metrics and debug API",
    ),
    k(
        "metrics.listen",
        Kind::OptionalAddr,
        "",
        "a second listener for /metrics, /healthz, /readyz only (e.g. 0.0.0.0:9465)",
    ),
    k(
        "debug.token",
        Kind::Secret,
        "",
        "bearer token the /debug/* and /alerts endpoints require (empty: none)",
    ),
    k(
        "ingest.token.file",
        Kind::Path,
        "",
        "the telemetry ingest's credential, shared with the consumer (mooring.telemetry.token.file); made when absent; empty: none, allowed only on a loopback listen",
    ),
    k(
        "http.header.read.timeout.ms",
        Kind::Millis,
        "5000",
        "a request's headers must arrive within this, and a keep-alive connection may idle this long; then the listener closes it",
    ),
    k(
        "http.request.timeout.ms",
        Kind::Millis,
        "10000",
        "a request's body and answer within this, else 408",
    ),
    k(
        "http.max.connections",
        Kind::Count,
        "1024",
        "open connections per listener; at the cap it accepts no more until one closes",
    ),
    k(
        "watch.interval.ms",
        Kind::Millis,
        "10000",
        "DescribeGroups/OffsetFetch/ListOffsets interval",
    ),
    k(
        "rebalances.history",
        Kind::Count,
        "50",
        "rebalances kept for /debug/rebalances",
    ),
    k(
        "lag.max.partitions",
        Kind::Count,
        "1000",
        "most partitions exported with lag series",
    ),
    k(
        "lag.status.window",
        Kind::Count,
        "10",
        "commits kept per partition for its lag status (Burrow's intervals), 1 to 100",
    ),
    k(
        "lag.status.min.distance.ms",
        Kind::Millis,
        "1000",
        "a commit closer than this to the last one kept replaces it (Burrow's min-distance)",
    ),
    k(
        "lag.status.allowed.lag",
        Kind::Count,
        "0",
        "a lag up to this many records counts as caught up (Burrow: 0)",
    ),
    k(
        "lag.status.lookback.ms",
        Kind::Millis,
        "600000",
        "how far back __consumer_offsets is read at start, to fill the commit windows",
    ),
    k(
        "scaling.drain.target.ms",
        Kind::Millis,
        "60000",
        "the scaling signal asks for the replicas that drain the lag within this time, 1 s or more",
    ),
    k(
        "scaling.min.replicas",
        Kind::Count,
        "1",
        "the fewest replicas the scaling signal asks for",
    ),
    k(
        "scaling.max.replicas",
        Kind::Count,
        "0",
        "the most replicas the scaling signal asks for (0: the partition count caps, nothing for a share group)",
    ),
    k(
        "scaling.scale.down.hold.ms",
        Kind::Millis,
        "300000",
        "a lower replica count is the scaling signal only once it held this long",
    ),
    k(
        "scaling.rate.window.ms",
        Kind::Millis,
        "60000",
        "the window the scaling signal's produce and consume rates are measured over",
    ),
    k(
        "scaling.static.pause.ms",
        Kind::Millis,
        "45000",
        "how long a scaled-down static member's partitions wait before they move (its session.timeout.ms: it sends no leave), priced into a scale-down",
    ),
    k(
        "health.stale.ms",
        Kind::Millis,
        "60000",
        "consumer silent longer than this: not live",
    ),
    k(
        "causes.stall.ms",
        Kind::Millis,
        "10000",
        "a member that left after its partitions' commits stood still this long while records waited counts as session_timeout",
    ),
    k(
        "rules.scrape.selector",
        Kind::Selector,
        r#"job=~".+/(.+-)?consumer",container="sidecar""#,
        "PromQL label matchers of the sidecars' scrape targets, for the MooringSidecarDown/Absent rules (default: the PodMonitor of deploy/kubernetes)",
    ),
    k(
        "alerts.rebalances.window.ms",
        Kind::Millis,
        "86400000",
        "rolling window of the rebalance count",
    ),
    k(
        "alerts.rebalances.warning",
        Kind::Number,
        "3",
        "rebalances in the window: warning from",
    ),
    k(
        "alerts.rebalances.critical",
        Kind::Number,
        "10",
        "rebalances in the window: critical above",
    ),
    k(
        "alerts.rebalance_duration_seconds.warning",
        Kind::Number,
        "30",
        "last/ongoing rebalance duration: warning from",
    ),
    k(
        "alerts.rebalance_duration_seconds.critical",
        Kind::Number,
        "120",
        "last/ongoing rebalance duration: critical above",
    ),
    k(
        "alerts.lag_records.warning",
        Kind::Number,
        "10000",
        "largest partition lag in records: warning from",
    ),
    k(
        "alerts.lag_records.critical",
        Kind::Number,
        "100000",
        "largest partition lag in records: critical above",
    ),
    k(
        "alerts.lag_seconds.warning",
        Kind::Number,
        "60",
        "largest estimated time lag: warning from",
    ),
    k(
        "alerts.lag_seconds.critical",
        Kind::Number,
        "300",
        "largest estimated time lag: critical above",
    ),
    k(
        "alerts.poll_stall_seconds.warning",
        Kind::Number,
        "60",
        "poll loop without progress while work waits: warning from",
    ),
    k(
        "alerts.poll_stall_seconds.critical",
        Kind::Number,
        "300",
        "poll loop without progress while work waits: critical above",
    ),
    k(
        "alerts.fenced.window.ms",
        Kind::Millis,
        "86400000",
        "rolling window of the fencing count",
    ),
    k(
        "alerts.fenced.warning",
        Kind::Number,
        "1",
        "fencings in the window: warning from",
    ),
    k(
        "alerts.fenced.critical",
        Kind::Number,
        "0",
        "fencings in the window: critical above",
    ),
    k(
        "alerts.instance_id_unreleased_seconds.warning",
        Kind::Number,
        "60",
        "consumer protocol: a static member waiting this long for its group.instance.id (held by the process it replaces): warning from",
    ),
    k(
        "alerts.instance_id_unreleased_seconds.critical",
        Kind::Number,
        "300",
        "the same wait: critical above (the member gives up after mooring.unreleased.instance.timeout.ms, 600 s by default)",
    ),
    k(
        "alerts.share_rejected.window.ms",
        Kind::Millis,
        "3600000",
        "share groups: rolling window of the poison count (records rejected)",
    ),
    k(
        "alerts.share_rejected.warning",
        Kind::Number,
        "1",
        "share groups: records rejected as poison in the window: warning from",
    ),
    k(
        "alerts.share_rejected.critical",
        Kind::Number,
        "100",
        "share groups: records rejected as poison in the window: critical above",
    ),
    k(
        "alerts.share_archived.window.ms",
        Kind::Millis,
        "3600000",
        "share groups: rolling window of the count of records archived after share.delivery.count.limit deliveries",
    ),
    k(
        "alerts.share_archived.warning",
        Kind::Number,
        "1",
        "share groups: records archived after the delivery limit in the window: warning from",
    ),
    k(
        "alerts.share_archived.critical",
        Kind::Number,
        "100",
        "share groups: records archived after the delivery limit in the window: critical above",
    ),
    k(
        "alerts.share_lock_expired.window.ms",
        Kind::Millis,
        "3600000",
        "share groups: rolling window of the count of acquisition locks that ran out before a verdict",
    ),
    k(
        "alerts.share_lock_expired.warning",
        Kind::Number,
        "10",
        "share groups: locks that ran out before a verdict in the window: warning from",
    ),
    k(
        "alerts.share_lock_expired.critical",
        Kind::Number,
        "100",
        "share groups: locks that ran out before a verdict in the window: critical above",
    ),
];

/// What each listener allows a client (the `http.*` keys).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// A request's headers must arrive within this from the connection's opening or from the
    /// previous answer (so it also bounds a keep-alive connection's idle time).
    pub header_read_timeout: Duration,
    /// A request's body and its answer within this, else 408.
    pub request_timeout: Duration,
    /// Open connections per listener.
    pub max_connections: usize,
}

/// The Kafka key the sidecar reads besides the client's.
pub const GROUP_ID: &str = "group.id";

/// The parsed configuration.
#[derive(Debug, Clone)]
pub struct SidecarConfig {
    /// The main listener.
    pub listen: SocketAddr,
    /// The optional metrics/health listener.
    pub metrics_listen: Option<SocketAddr>,
    /// The bearer token of `/debug/*` and `/alerts`.
    pub debug_token: Option<Secret>,
    /// The file holding the credential `POST /v1/events` requires (`ingest.token.file`).
    pub ingest_token_file: Option<PathBuf>,
    /// Both listeners' timeouts and connection cap.
    pub http: HttpLimits,
    /// The group to watch from the broker (none: no watching).
    pub group_id: Option<String>,
    /// The Kafka client (when `bootstrap.servers` is set).
    pub client: Option<ClientConfig>,
    /// The broker watch interval.
    pub watch_interval: Duration,
    /// Rebalances kept for `/debug/rebalances`.
    pub rebalance_history: usize,
    /// The cap on lag series.
    pub lag_max_partitions: usize,
    /// How commit windows are kept and judged.
    pub lag_status: crate::lag_status::StatusConfig,
    /// The scaling signal's settings.
    pub scaling: crate::scaling::ScalingConfig,
    /// Consumer silence (or a consumer loop without an iteration) that fails liveness.
    pub health_stale: Duration,
    /// How long a departed member's commits must have stood still while records waited for
    /// its departure to count as `session_timeout` (see `state::classify`).
    pub causes_stall: Duration,
    /// The label matchers of the sidecars' `up` series (`rules.scrape.selector`).
    pub rules_scrape_selector: String,
    /// Alert thresholds, one per kind.
    pub alerts: BTreeMap<AlertKind, Threshold>,
    /// Every key and value, secrets redacted (for `/debug/config`).
    pub redacted: BTreeMap<String, String>,
}

impl SidecarConfig {
    /// Reads `file` (if any; TOML or YAML by extension) and the environment.
    pub fn load(file: Option<&Path>) -> Result<SidecarConfig, ConfigError> {
        let mut builder = config::Config::builder();
        if let Some(path) = file {
            builder = builder.add_source(config::File::from(path));
        }
        builder = builder.add_source(
            config::Environment::with_prefix("MOORING_SIDECAR")
                .prefix_separator("_")
                .separator("__"),
        );
        Self::from_builder(builder)
    }

    /// Reads a TOML document (no environment): for tests and `--config -`.
    pub fn from_toml(text: &str) -> Result<SidecarConfig, ConfigError> {
        let builder = config::Config::builder()
            .add_source(config::File::from_str(text, config::FileFormat::Toml));
        Self::from_builder(builder)
    }

    fn from_builder(
        builder: config::ConfigBuilder<config::builder::DefaultState>,
    ) -> Result<SidecarConfig, ConfigError> {
        let built = builder
            .build()
            .map_err(|e| ConfigError::Source(e.to_string()))?;
        let table = built
            .try_deserialize::<std::collections::HashMap<String, config::Value>>()
            .map_err(|e| ConfigError::Source(e.to_string()))?;
        let mut flat = BTreeMap::new();
        for (key, value) in table {
            flatten(&key, value, &mut flat);
        }
        Self::from_flat(flat)
    }

    /// Builds from flat `key → value` pairs.
    pub fn from_flat(flat: BTreeMap<String, String>) -> Result<SidecarConfig, ConfigError> {
        let ByTable {
            ours,
            kafka,
            group_id,
            redacted,
        } = ByTable::from_flat(flat)?;
        let client = kafka_client(kafka)?;
        let alerts = alert_thresholds(&ours)?;
        let listen = addr("listen", &ours.get("listen"))?;
        let ingest_token_file = ingest_token_file(&ours, listen)?;
        Ok(SidecarConfig {
            listen,
            metrics_listen: match ours.get("metrics.listen").as_str() {
                "" => None,
                v => Some(addr("metrics.listen", v)?),
            },
            debug_token: Some(ours.get("debug.token"))
                .filter(|t| !t.is_empty())
                .map(Secret::from),
            ingest_token_file,
            http: http_limits(&ours)?,
            group_id,
            client,
            watch_interval: millis("watch.interval.ms", &ours.get("watch.interval.ms"))?,
            rebalance_history: count("rebalances.history", &ours.get("rebalances.history"))?.max(1),
            lag_max_partitions: count("lag.max.partitions", &ours.get("lag.max.partitions"))?,
            lag_status: lag_status(&ours)?,
            scaling: scaling(&ours)?,
            health_stale: millis("health.stale.ms", &ours.get("health.stale.ms"))?,
            causes_stall: millis("causes.stall.ms", &ours.get("causes.stall.ms"))?,
            rules_scrape_selector: selector(
                "rules.scrape.selector",
                &ours.get("rules.scrape.selector"),
            )?,
            alerts,
            redacted,
        })
    }

    /// The threshold of one alert (every kind has one).
    pub fn threshold(&self, kind: AlertKind) -> Threshold {
        self.alerts.get(&kind).copied().unwrap_or_default()
    }
}

/// Every valid key: ours, `group.id` and the Kafka client's.
pub fn all_keys() -> impl Iterator<Item = &'static str> {
    SIDECAR_KEYS
        .iter()
        .map(|s| s.name)
        .chain(std::iter::once(GROUP_ID))
        .chain(CLIENT_KEYS.iter().map(|s| s.name))
}

/// The flat pairs split by the table that knows their key (ours, `group.id`, the Kafka client's),
/// and every pair as `/debug/config` shows it.
struct ByTable {
    ours: Ours,
    /// The Kafka client's keys, for [`ClientConfig::from_properties`].
    kafka: Vec<(String, String)>,
    /// `group.id` (none when absent or empty).
    group_id: Option<String>,
    /// Every key given, and every sidecar key not given with its default; secrets redacted.
    redacted: BTreeMap<String, String>,
}

impl ByTable {
    /// Splits `flat`; a key no table knows is an error naming the nearest valid one.
    fn from_flat(flat: BTreeMap<String, String>) -> Result<ByTable, ConfigError> {
        let mut by_table = ByTable {
            ours: Ours(BTreeMap::new()),
            kafka: Vec::new(),
            group_id: None,
            redacted: BTreeMap::new(),
        };
        for (key, value) in flat {
            if let Some(spec) = SIDECAR_KEYS.iter().find(|s| s.name == key) {
                let shown = if spec.kind == Kind::Secret {
                    redact(&value)
                } else {
                    value.clone()
                };
                by_table.redacted.insert(key, shown);
                by_table.ours.0.insert(spec.name, value);
            } else if key == GROUP_ID {
                by_table.redacted.insert(key, value.clone());
                by_table.group_id = Some(value).filter(|v| !v.is_empty());
            } else if let Some(spec) = CLIENT_KEYS.iter().find(|s| s.name == key) {
                let shown = if matches!(spec.kind, ValueKind::Password) {
                    redact(&value)
                } else {
                    value.clone()
                };
                by_table.redacted.insert(key.clone(), shown);
                by_table.kafka.push((key, value));
            } else {
                let nearest = nearest_key(&key, all_keys()).map(str::to_string);
                return Err(ConfigError::UnknownKey { key, nearest });
            }
        }
        for spec in SIDECAR_KEYS {
            if !by_table.ours.0.contains_key(spec.name) {
                by_table
                    .redacted
                    .insert(spec.name.to_string(), spec.default.to_string());
            }
        }
        Ok(by_table)
    }
}

/// The sidecar's own keys that were given, with their values as given.
struct Ours(BTreeMap<&'static str, String>);

impl Ours {
    /// The value of the sidecar key `name`: as given, else its default (empty for a key without
    /// one).
    fn get(&self, name: &str) -> String {
        self.0.get(name).cloned().unwrap_or_else(|| {
            SIDECAR_KEYS
                .iter()
                .find(|s| s.name == name)
                .map(|s| s.default.to_string())
                .unwrap_or_default()
        })
    }
}

/// The Kafka client, when `bootstrap.servers` is among the Kafka keys; Kafka keys without it are
/// an error naming the first of them.
fn kafka_client(kafka: Vec<(String, String)>) -> Result<Option<ClientConfig>, ConfigError> {
    if kafka.iter().any(|(k, _)| k == "bootstrap.servers") {
        Ok(Some(ClientConfig::from_properties(kafka).map_err(|e| {
            ConfigError::Invalid {
                key: "kafka".into(),
                message: e.to_string(),
            }
        })?))
    } else if let Some((key, _)) = kafka.first() {
        Err(ConfigError::Invalid {
            key: key.clone(),
            message: "Kafka settings need `bootstrap.servers`".into(),
        })
    } else {
        Ok(None)
    }
}

/// Every alert kind's threshold (`alerts.<kind>.warning`, `.critical`, and `.window.ms` for a
/// windowed kind), in [`AlertKind::ALL`]'s order.
fn alert_thresholds(ours: &Ours) -> Result<BTreeMap<AlertKind, Threshold>, ConfigError> {
    let mut alerts = BTreeMap::new();
    for kind in AlertKind::ALL {
        let name = kind.as_str();
        let key = |field: &str| format!("alerts.{name}.{field}");
        let warning = number(&key("warning"), &ours.get(&key("warning")))?;
        let critical = number(&key("critical"), &ours.get(&key("critical")))?;
        let window = match kind.windowed() {
            true => Some(millis(&key("window.ms"), &ours.get(&key("window.ms")))?),
            false => None,
        };
        alerts.insert(
            kind,
            Threshold {
                warning,
                critical,
                window,
            },
        );
    }
    Ok(alerts)
}

/// `ingest.token.file` (none when empty), which a `listen` off the loopback requires: the
/// telemetry ingest must not be open to the network without a credential.
fn ingest_token_file(ours: &Ours, listen: SocketAddr) -> Result<Option<PathBuf>, ConfigError> {
    let file = Some(ours.get("ingest.token.file"))
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    if !listen.ip().is_loopback() && file.is_none() {
        return Err(invalid(
            "ingest.token.file",
            format!("`listen` is {listen}, not a loopback address: the telemetry ingest needs a credential there"),
        ));
    }
    Ok(file)
}

/// The `http.*` keys.
fn http_limits(ours: &Ours) -> Result<HttpLimits, ConfigError> {
    Ok(HttpLimits {
        header_read_timeout: millis(
            "http.header.read.timeout.ms",
            &ours.get("http.header.read.timeout.ms"),
        )?,
        request_timeout: millis(
            "http.request.timeout.ms",
            &ours.get("http.request.timeout.ms"),
        )?,
        max_connections: count("http.max.connections", &ours.get("http.max.connections"))?.max(1),
    })
}

fn redact(value: &str) -> String {
    if value.is_empty() {
        String::new()
    } else {
        "[redacted]".to_string()
    }
}

fn invalid(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_string(),
        message: message.into(),
    }
}

fn addr(key: &str, value: &str) -> Result<SocketAddr, ConfigError> {
    value.parse().map_err(|_| {
        invalid(
            key,
            format!("`{value}` is not an address (host:port, an IP)"),
        )
    })
}

fn millis(key: &str, value: &str) -> Result<Duration, ConfigError> {
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| invalid(key, format!("`{value}` is not a number of milliseconds")))
}

fn selector(key: &str, value: &str) -> Result<String, ConfigError> {
    let v = value.trim();
    if v.is_empty() || v.contains(['{', '}']) {
        return Err(invalid(
            key,
            format!(
                "`{value}` is not PromQL label matchers without braces (job=\"x\",pod=~\"y.*\")"
            ),
        ));
    }
    Ok(v.to_string())
}

/// The `lag.status.*` keys.
fn lag_status(ours: &Ours) -> Result<crate::lag_status::StatusConfig, ConfigError> {
    let window = count("lag.status.window", &ours.get("lag.status.window"))?;
    if !(1..=100).contains(&window) {
        return Err(invalid(
            "lag.status.window",
            format!("{window} is not between 1 and 100"),
        ));
    }
    let ms = |key: &str| {
        millis(key, &ours.get(key)).map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    };
    Ok(crate::lag_status::StatusConfig {
        window,
        min_distance_ms: ms("lag.status.min.distance.ms")?,
        allowed_lag: i64::try_from(count(
            "lag.status.allowed.lag",
            &ours.get("lag.status.allowed.lag"),
        )?)
        .unwrap_or(i64::MAX),
        lookback_ms: ms("lag.status.lookback.ms")?,
    })
}

/// The `scaling.*` keys.
fn scaling(ours: &Ours) -> Result<crate::scaling::ScalingConfig, ConfigError> {
    let seconds = |key: &str| millis(key, &ours.get(key)).map(|d| d.as_secs_f64());
    let replicas = |key: &str| {
        let n = count(key, &ours.get(key))?;
        u32::try_from(n).map_err(|_| invalid(key, format!("{n} replicas is too many")))
    };
    let drain_target_seconds = seconds("scaling.drain.target.ms")?;
    if drain_target_seconds < 1.0 {
        return Err(invalid(
            "scaling.drain.target.ms",
            "the lag cannot drain in less than a second",
        ));
    }
    let min_replicas = replicas("scaling.min.replicas")?;
    let max_replicas = replicas("scaling.max.replicas")?;
    if max_replicas != 0 && max_replicas < min_replicas {
        return Err(invalid(
            "scaling.max.replicas",
            format!("{max_replicas} is below scaling.min.replicas ({min_replicas})"),
        ));
    }
    Ok(crate::scaling::ScalingConfig {
        drain_target_seconds,
        min_replicas,
        max_replicas,
        scale_down_hold_seconds: seconds("scaling.scale.down.hold.ms")?,
        rate_window_seconds: seconds("scaling.rate.window.ms")?.max(0.001),
        static_pause_seconds: seconds("scaling.static.pause.ms")?,
    })
}

fn count(key: &str, value: &str) -> Result<usize, ConfigError> {
    value
        .trim()
        .parse::<usize>()
        .map_err(|_| invalid(key, format!("`{value}` is not a non-negative integer")))
}

fn number(key: &str, value: &str) -> Result<f64, ConfigError> {
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(invalid(
            key,
            format!("`{value}` is not a non-negative number"),
        )),
    }
}

/// Flattens nested tables into dotted keys; arrays become comma-separated lists.
fn flatten(prefix: &str, value: config::Value, out: &mut BTreeMap<String, String>) {
    match value.kind {
        config::ValueKind::Table(table) => {
            for (key, value) in table {
                flatten(&format!("{prefix}.{key}"), value, out);
            }
        }
        config::ValueKind::Array(items) => {
            let parts: Vec<String> = items.into_iter().map(|v| scalar(v.kind)).collect();
            out.insert(prefix.to_string(), parts.join(","));
        }
        kind => {
            out.insert(prefix.to_string(), scalar(kind));
        }
    }
}

fn scalar(kind: config::ValueKind) -> String {
    match kind {
        config::ValueKind::Nil => String::new(),
        config::ValueKind::Boolean(b) => b.to_string(),
        config::ValueKind::I64(v) => v.to_string(),
        config::ValueKind::I128(v) => v.to_string(),
        config::ValueKind::U64(v) => v.to_string(),
        config::ValueKind::U128(v) => v.to_string(),
        config::ValueKind::Float(v) => v.to_string(),
        config::ValueKind::String(s) => s,
        other => format!("{other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_seeds() {
        let c = SidecarConfig::from_toml("").expect("empty is valid");
        let t = c.threshold(AlertKind::Rebalances);
        assert_eq!((t.warning, t.critical), (3.0, 10.0));
        assert_eq!(t.window, Some(Duration::from_secs(86_400)));
        assert!(c.client.is_none());
        assert_eq!(c.listen.to_string(), "127.0.0.1:9464");
    }

    #[test]
    fn nested_and_dotted_keys_agree() {
        let c = SidecarConfig::from_toml(
            "\"bootstrap.servers\" = \"127.0.0.1:19192\"\n\"group.id\" = \"g\"\n[alerts.rebalances]\nwarning = 5\n",
        )
        .expect("valid");
        assert_eq!(c.threshold(AlertKind::Rebalances).warning, 5.0);
        assert_eq!(c.group_id.as_deref(), Some("g"));
        assert!(c.client.is_some());
    }

    #[test]
    fn scaling_keys_have_their_defaults_and_refuse_what_cannot_work() {
        let c = SidecarConfig::from_toml("").expect("empty is valid");
        assert_eq!(c.scaling.drain_target_seconds, 60.0);
        assert_eq!((c.scaling.min_replicas, c.scaling.max_replicas), (1, 0));
        assert_eq!(c.scaling.scale_down_hold_seconds, 300.0);
        let refused = |toml: &str, key: &str, says: &str| match SidecarConfig::from_toml(toml) {
            Err(ConfigError::Invalid { key: k, message }) => {
                assert_eq!(k, key);
                assert!(message.contains(says), "{message}");
            }
            other => panic!("{toml}: {other:?}"),
        };
        refused(
            "\"scaling.drain.target.ms\" = 500",
            "scaling.drain.target.ms",
            "less than a second",
        );
        refused(
            "\"scaling.min.replicas\" = 3\n\"scaling.max.replicas\" = 2",
            "scaling.max.replicas",
            "below scaling.min.replicas",
        );
        refused(
            "\"scaling.max.replicas\" = -1",
            "scaling.max.replicas",
            "not a non-negative integer",
        );
    }
}
