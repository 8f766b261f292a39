//! The exporter's settings, and the consumer config keys (`mooring.telemetry.*`) that set them.
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `mooring.telemetry.enabled` | `false` | start the exporter from the config ([`TelemetryExporter::from_config`](super::TelemetryExporter::from_config)) |
//! | `mooring.telemetry.endpoint` | `http://127.0.0.1:9464/v1/events` | the sidecar's ingest URL (plain `http://`, a loopback host) |
//! | `mooring.telemetry.endpoint.allow.remote` | `false` | `true`: a host other than loopback is allowed (telemetry then crosses the network in plain text) |
//! | `mooring.telemetry.token.file` | (none) | the file holding the sidecar's ingest credential (its `ingest.token.file`), sent as `Authorization: Bearer` and read before each POST |
//! | `mooring.telemetry.buffer.events` | 10000 | events held while the sidecar is slow or away (the oldest are dropped past it, and counted) |
//! | `mooring.telemetry.batch.max.events` | 500 | most events in one POST |
//! | `mooring.telemetry.flush.interval.ms` | 200 | a batch goes out at least this often |
//! | `mooring.telemetry.request.timeout.ms` | 2000 | one POST, connect to status line |
//! | `mooring.telemetry.snapshot.interval.ms` | 5000 | how often a state snapshot is sent |
//! | `mooring.telemetry.retry.backoff.ms` | 250 | wait after a failed POST, doubling ... |
//! | `mooring.telemetry.retry.backoff.max.ms` | 5000 | ... up to this |
//!
//! Off by default: a consumer without a sidecar then runs no exporter task, opens no connection
//! and logs nothing about telemetry, and [`Consumer::events`](crate::Consumer::events) stays the
//! application's (the exporter takes that stream when it runs).

use std::path::PathBuf;
use std::time::Duration;

use mooring_client::config::{key, KeySpec, ValueKind, BOOL};

use super::http::Endpoint;
use crate::ConsumerError;

/// Where and how the exporter sends telemetry. [`ExporterConfig::new`] gives the defaults.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExporterConfig {
    /// The sidecar's ingest endpoint (plain `http://`, localhost).
    pub endpoint: String,
    /// Events held while the sidecar is slow or away; past it the oldest are dropped and counted.
    pub buffer_capacity: usize,
    /// Most events in one POST.
    pub batch_max: usize,
    /// A batch is sent at least this often when there is something to send.
    pub flush_interval: Duration,
    /// The whole POST (connect, write, status line) must finish within this.
    pub request_timeout: Duration,
    /// How often a [`Snapshot`](super::Snapshot) of the consumer's state is sent.
    pub snapshot_interval: Duration,
    /// After a failed POST, wait this long (doubling up to [`max_backoff`](Self::max_backoff)).
    pub backoff: Duration,
    /// The longest wait between attempts while the sidecar is away.
    pub max_backoff: Duration,
    /// Whether an endpoint off loopback is allowed (plain HTTP across the network).
    pub allow_remote: bool,
    /// The file holding the sidecar's ingest credential, read before each POST (the sidecar
    /// may make it after the consumer starts, or anew).
    pub token_file: Option<PathBuf>,
}

/// The sidecar's default ingest endpoint.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:9464/v1/events";

impl ExporterConfig {
    /// Defaults: 10 000 events buffered, batches of up to 500 every 200 ms, 2 s per POST, a
    /// snapshot every 5 s, back-off 250 ms doubling to 5 s.
    pub fn new(endpoint: impl Into<String>) -> Self {
        ExporterConfig {
            endpoint: endpoint.into(),
            buffer_capacity: 10_000,
            batch_max: 500,
            flush_interval: Duration::from_millis(200),
            request_timeout: Duration::from_secs(2),
            snapshot_interval: Duration::from_secs(5),
            backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(5),
            allow_remote: false,
            token_file: None,
        }
    }
}

impl Default for ExporterConfig {
    fn default() -> Self {
        ExporterConfig::new(DEFAULT_ENDPOINT)
    }
}

/// The `mooring.telemetry.*` keys of [`ConsumerConfig`](crate::ConsumerConfig).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct TelemetryConfig {
    /// `mooring.telemetry.enabled`.
    pub enabled: bool,
    /// The other keys.
    pub exporter: ExporterConfig,
}

/// The telemetry keys (part of the consumer's key table).
pub const TELEMETRY_KEYS: &[KeySpec] = &[
    key("mooring.telemetry.enabled", BOOL, "false"),
    key(
        "mooring.telemetry.endpoint",
        ValueKind::String,
        DEFAULT_ENDPOINT,
    ),
    key("mooring.telemetry.endpoint.allow.remote", BOOL, "false"),
    key("mooring.telemetry.token.file", ValueKind::String, ""),
    key(
        "mooring.telemetry.buffer.events",
        ValueKind::PositiveInt,
        "10000",
    ),
    key(
        "mooring.telemetry.batch.max.events",
        ValueKind::PositiveInt,
        "500",
    ),
    key(
        "mooring.telemetry.flush.interval.ms",
        ValueKind::Millis,
        "200",
    ),
    key(
        "mooring.telemetry.request.timeout.ms",
        ValueKind::Millis,
        "2000",
    ),
    key(
        "mooring.telemetry.snapshot.interval.ms",
        ValueKind::Millis,
        "5000",
    ),
    key(
        "mooring.telemetry.retry.backoff.ms",
        ValueKind::Millis,
        "250",
    ),
    key(
        "mooring.telemetry.retry.backoff.max.ms",
        ValueKind::Millis,
        "5000",
    ),
];

impl TelemetryConfig {
    /// Sets one `mooring.telemetry.*` key; `Ok(false)` when `key` is not one of them.
    pub(crate) fn set(&mut self, key: &str, value: &str) -> Result<bool, ConsumerError> {
        let Some(spec) = TELEMETRY_KEYS.iter().find(|s| s.name == key) else {
            return Ok(false);
        };
        let v = value.trim();
        let bad = |expected: &str| ConsumerError::Config {
            key: spec.name.into(),
            message: format!("`{value}` is not {expected}"),
        };
        let positive = || match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(bad("a positive integer")),
        };
        // Zero would mean a busy loop (flush, snapshot, back-off) or no chance to answer (timeout).
        let millis = || match v.parse::<u64>() {
            Ok(n) if n > 0 => Ok(Duration::from_millis(n)),
            _ => Err(bad("a positive number of milliseconds")),
        };
        let boolean = || match v {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(bad("true or false")),
        };
        let e = &mut self.exporter;
        match spec.name {
            "mooring.telemetry.enabled" => self.enabled = boolean()?,
            "mooring.telemetry.endpoint.allow.remote" => e.allow_remote = boolean()?,
            "mooring.telemetry.token.file" => {
                e.token_file = Some(v).filter(|p| !p.is_empty()).map(PathBuf::from)
            }
            "mooring.telemetry.endpoint" => {
                Endpoint::parse(v).map_err(|m| ConsumerError::Config {
                    key: spec.name.into(),
                    message: m,
                })?;
                e.endpoint = v.to_owned();
            }
            "mooring.telemetry.buffer.events" => e.buffer_capacity = positive()?,
            "mooring.telemetry.batch.max.events" => e.batch_max = positive()?,
            "mooring.telemetry.flush.interval.ms" => e.flush_interval = millis()?,
            "mooring.telemetry.request.timeout.ms" => e.request_timeout = millis()?,
            "mooring.telemetry.snapshot.interval.ms" => e.snapshot_interval = millis()?,
            "mooring.telemetry.retry.backoff.ms" => e.backoff = millis()?,
            "mooring.telemetry.retry.backoff.max.ms" => e.max_backoff = millis()?,
            other => {
                return Err(ConsumerError::Config {
                    key: other.into(),
                    message: "key is listed but not handled (a bug)".into(),
                })
            }
        }
        Ok(true)
    }

    /// Checks what one key cannot: a batch fits in the buffer, the back-off range is ordered, the
    /// endpoint is on loopback unless a remote one is allowed.
    pub(crate) fn validate(&self) -> Result<(), ConsumerError> {
        let e = &self.exporter;
        Endpoint::checked(&e.endpoint, e.allow_remote).map_err(|m| ConsumerError::Config {
            key: "mooring.telemetry.endpoint".into(),
            message: m,
        })?;
        if e.batch_max > e.buffer_capacity {
            return Err(ConsumerError::Config {
                key: "mooring.telemetry.batch.max.events".into(),
                message: format!(
                    "{} is above mooring.telemetry.buffer.events ({})",
                    e.batch_max, e.buffer_capacity
                ),
            });
        }
        if e.backoff > e.max_backoff {
            return Err(ConsumerError::Config {
                key: "mooring.telemetry.retry.backoff.ms".into(),
                message: format!(
                    "{} ms is above mooring.telemetry.retry.backoff.max.ms ({} ms)",
                    e.backoff.as_millis(),
                    e.max_backoff.as_millis()
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(pairs: &[(&str, &str)]) -> Result<TelemetryConfig, ConsumerError> {
        let mut c = TelemetryConfig::default();
        for (k, v) in pairs {
            assert!(c.set(k, v)?, "{k} is a telemetry key");
        }
        c.validate()?;
        Ok(c)
    }

    #[test]
    fn every_key_sets_its_field() {
        let c = set(&[
            ("mooring.telemetry.enabled", "true"),
            (
                "mooring.telemetry.endpoint",
                "http://127.0.0.1:19464/v1/events",
            ),
            ("mooring.telemetry.buffer.events", "2000"),
            ("mooring.telemetry.batch.max.events", "100"),
            ("mooring.telemetry.flush.interval.ms", "50"),
            ("mooring.telemetry.request.timeout.ms", "700"),
            ("mooring.telemetry.snapshot.interval.ms", "1000"),
            ("mooring.telemetry.retry.backoff.ms", "100"),
            ("mooring.telemetry.retry.backoff.max.ms", "1000"),
            ("mooring.telemetry.token.file", "/run/mooring/ingest.token"),
        ])
        .expect("valid");
        assert!(c.enabled);
        let e = &c.exporter;
        assert_eq!(e.endpoint, "http://127.0.0.1:19464/v1/events");
        assert_eq!(e.buffer_capacity, 2000);
        assert_eq!(e.batch_max, 100);
        assert_eq!(e.flush_interval, Duration::from_millis(50));
        assert_eq!(e.request_timeout, Duration::from_millis(700));
        assert_eq!(e.snapshot_interval, Duration::from_secs(1));
        assert_eq!(e.backoff, Duration::from_millis(100));
        assert_eq!(e.max_backoff, Duration::from_secs(1));
        assert_eq!(
            e.token_file.as_deref(),
            Some(std::path::Path::new("/run/mooring/ingest.token"))
        );
    }

    #[test]
    fn an_endpoint_off_loopback_is_refused_unless_allowed() {
        for host in [
            "127.0.0.1:9464",
            "[::1]:9464",
            "localhost:9464",
            "127.1.2.3",
        ] {
            let url = format!("http://{host}/v1/events");
            set(&[("mooring.telemetry.endpoint", &url)]).expect(&url);
        }
        let remote = "http://10.0.0.7:9464/v1/events";
        let err = set(&[("mooring.telemetry.endpoint", remote)]).expect_err(remote);
        assert!(
            matches!(&err, ConsumerError::Config { key, .. } if key == "mooring.telemetry.endpoint"),
            "{err}"
        );
        assert!(err.to_string().contains("allow.remote"), "{err}");
        set(&[
            ("mooring.telemetry.endpoint", remote),
            ("mooring.telemetry.endpoint.allow.remote", "true"),
        ])
        .expect("allowed");
    }

    #[test]
    fn defaults_are_off_and_match_the_key_table() {
        let c = TelemetryConfig::default();
        assert!(!c.enabled);
        assert_eq!(c.exporter, ExporterConfig::default());
        // The table's defaults, applied as values, give the same config.
        let pairs: Vec<(&str, &str)> = TELEMETRY_KEYS.iter().map(|k| (k.name, k.default)).collect();
        assert_eq!(set(&pairs).expect("defaults are valid"), c);
    }

    #[test]
    fn bad_values_name_the_key() {
        for (key, value) in [
            ("mooring.telemetry.enabled", "yes"),
            (
                "mooring.telemetry.endpoint",
                "https://127.0.0.1:9464/v1/events",
            ),
            ("mooring.telemetry.endpoint", "127.0.0.1:9464"),
            ("mooring.telemetry.buffer.events", "0"),
            ("mooring.telemetry.buffer.events", "-5"),
            ("mooring.telemetry.snapshot.interval.ms", "0"),
            ("mooring.telemetry.request.timeout.ms", "soon"),
        ] {
            let err = set(&[(key, value)]).expect_err(value);
            assert!(
                matches!(&err, ConsumerError::Config { key: k, .. } if k == key),
                "{key}={value}: {err}"
            );
        }
        let err = set(&[
            ("mooring.telemetry.buffer.events", "10"),
            ("mooring.telemetry.batch.max.events", "500"),
        ])
        .expect_err("batch above buffer");
        assert!(err.to_string().contains("mooring.telemetry.buffer.events"));
        let err = set(&[("mooring.telemetry.retry.backoff.ms", "9000")]).expect_err("backoff");
        assert!(err.to_string().contains("retry.backoff.max.ms"));
    }

    #[test]
    fn other_keys_are_not_ours() {
        let mut c = TelemetryConfig::default();
        assert!(!c.set("mooring.concurrency", "4").expect("not ours"));
        assert!(!c.set("mooring.telemetry.enable", "true").expect("not ours"));
    }
}
