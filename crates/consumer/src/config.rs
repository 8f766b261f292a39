//! The consumer's configuration, from Kafka's own property names, so a Java or librdkafka consumer
//! config can be brought as is.
//!
//! Four tables make up the valid keys: the network client's ([`CLIENT_KEYS`], parsed by
//! [`ClientConfig::set`]), the group member's ([`GROUP_KEYS`], parsed by
//! [`GroupConfig::from_properties`]), the consumer's own ([`CONSUMER_KEYS`], below) and the
//! telemetry exporter's ([`TELEMETRY_KEYS`]). A key in
//! none of them is an error naming the nearest valid key; an ill-typed value is an error naming the
//! key and the expected type.
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `enable.auto.commit` | `true` | commit the engine's committable offsets every `auto.commit.interval.ms` |
//! | `auto.commit.interval.ms` | 5000 | period of auto-commits |
//! | `auto.offset.reset` | `latest` | `earliest`, `latest` or `none` (a typed error naming the partitions) |
//! | `isolation.level` | `read_uncommitted` | or `read_committed`: stop at the last stable offset, drop aborted transactions |
//! | `fetch.min.bytes` | 1 | the broker waits for this much data ... |
//! | `fetch.max.wait.ms` | 500 | ... or this long |
//! | `fetch.max.bytes` | 52428800 | the most bytes one Fetch response carries |
//! | `max.partition.fetch.bytes` | 1048576 | the most bytes per partition in one Fetch response |
//! | `mooring.memory.max.bytes` | 8388608 | the most bytes of record data the consumer holds: responses being read, records waiting for a handler and records in the handlers' hands, together ([`FetchConfig::memory_max_bytes`]) |
//! | `max.poll.interval.ms` | 300000 | rebalance timeout and the handler watchdog's limit |
//! | `mooring.concurrency` | 16 | handlers running at once |
//! | `mooring.ordering` | `partition` | `partition`, `key` or `none` ([`ProcessingOrder`]) |
//! | `mooring.buffer.max.records` | 1000 | per partition, records accepted and not yet committable |
//! | `mooring.buffer.max.bytes` | 4194304 | per partition, bytes buffered and not yet started |
//! | `mooring.batch.max.records` | 500 | the most records in one batch of `Consumer::run_batch` (record handlers ignore it) |
//! | `mooring.failure.policy` | `stop` | `stop`, `skip`, or `retry:N:MS:stop` / `retry:N:MS:skip` (N retries from MS ms back-off; [`FailurePolicy`]) |
//! | `mooring.shutdown.timeout.ms` | 30000 | the whole shutdown's bound: running handlers get until a quarter is left, then the final commit and the close share the rest |
//! | `mooring.revoke.timeout.ms` | 30000 | how long a revoke waits for the handlers of revoked partitions (the whole revoke, commit and listener included, ends a little before `max.poll.interval.ms` less two heartbeats) |
//! | `enable.metrics.push` | `true` | push client metrics to brokers that subscribe to them (KIP-714); `false`: never ask |
//! | `mooring.telemetry.*` | off | the sidecar exporter's keys ([`TelemetryConfig`], [`TELEMETRY_KEYS`]) |
//!
//! The group member's keys are in [`GroupConfig`]'s module docs; these choose the group protocol:
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `group.protocol` | `classic` | `classic` (JoinGroup/SyncGroup, the assignor runs in the group's leader) or `consumer` (KIP-848: ConsumerGroupHeartbeat, the broker assigns, rebalances are incremental) |
//! | `group.remote.assignor` | none: the broker's first `group.consumer.assignors` (`uniform`) | `consumer` only: the broker-side assignor, `uniform` or `range`; refused with `classic` |
//! | `mooring.unreleased.instance.timeout.ms` | 600000 | `consumer` only: how long a static member whose `group.instance.id` is still held by the process it replaces (UNRELEASED_INSTANCE_ID) keeps retrying before it fails |
//!
//! As in Java's `ConsumerConfig`, `group.protocol=consumer` refuses `partition.assignment.strategy`,
//! `session.timeout.ms` and `heartbeat.interval.ms` when they are given (the broker assigns and sets
//! the session timeout and heartbeat interval: `group.consumer.session.timeout.ms` and
//! `group.consumer.heartbeat.interval.ms`, or the group's `consumer.session.timeout.ms` and
//! `consumer.heartbeat.interval.ms`), and `classic` refuses `group.remote.assignor`: the error
//! ([`ConsumerError::Config`]) names the key. `max.poll.interval.ms` is the rebalance timeout
//! under both. A pattern subscription is matched by the broker under `consumer`, by the consumer
//! under `classic` ([`Consumer::subscribe_pattern`](crate::Consumer::subscribe_pattern)).
//!
//! `group.id` is optional: without it only `assign` works and commits are refused.

use std::time::Duration;

use mooring_client::config::{key, unknown_key_error, KeySpec, ValueKind, BOOL, CLIENT_KEYS};
use mooring_client::ClientConfig;
pub use mooring_group::config::GROUP_KEYS;
use mooring_group::GroupConfig;

use crate::error::ConsumerError;
use crate::processing::{FailurePolicy, OnFailure, ProcessingConfig, ProcessingOrder};
use crate::subscription::OffsetResetStrategy;
use crate::telemetry::{TelemetryConfig, TELEMETRY_KEYS};

/// `isolation.level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IsolationLevel {
    /// Every record, including those of open and aborted transactions (Java's default).
    #[default]
    ReadUncommitted,
    /// Records up to the last stable offset, without those of aborted transactions.
    ReadCommitted,
}

impl IsolationLevel {
    /// The wire value of the Fetch and ListOffsets `isolation_level` field.
    pub fn wire(self) -> i8 {
        match self {
            IsolationLevel::ReadUncommitted => 0,
            IsolationLevel::ReadCommitted => 1,
        }
    }
}

/// The consumer runtime's own keys.
pub const CONSUMER_KEYS: &[KeySpec] = &[
    key("enable.auto.commit", BOOL, "true"),
    key("auto.commit.interval.ms", ValueKind::Millis, "5000"),
    key(
        "auto.offset.reset",
        ValueKind::OneOf(&["earliest", "latest", "none"]),
        "latest",
    ),
    key(
        "isolation.level",
        ValueKind::OneOf(&["read_uncommitted", "read_committed"]),
        "read_uncommitted",
    ),
    key("fetch.min.bytes", ValueKind::PositiveInt, "1"),
    key("fetch.max.wait.ms", ValueKind::Millis, "500"),
    key("fetch.max.bytes", ValueKind::PositiveInt, "52428800"),
    key(
        "max.partition.fetch.bytes",
        ValueKind::PositiveInt,
        "1048576",
    ),
    key(
        "mooring.memory.max.bytes",
        ValueKind::PositiveInt,
        "8388608",
    ),
    key("mooring.concurrency", ValueKind::PositiveInt, "16"),
    key(
        "mooring.ordering",
        ValueKind::OneOf(&["partition", "key", "none"]),
        "partition",
    ),
    key("mooring.buffer.max.records", ValueKind::PositiveInt, "1000"),
    key(
        "mooring.buffer.max.bytes",
        ValueKind::PositiveInt,
        "4194304",
    ),
    key("mooring.batch.max.records", ValueKind::PositiveInt, "500"),
    key("mooring.failure.policy", ValueKind::String, "stop"),
    key("mooring.shutdown.timeout.ms", ValueKind::Millis, "30000"),
    key("mooring.revoke.timeout.ms", ValueKind::Millis, "30000"),
    key("enable.metrics.push", BOOL, "true"),
];

/// Every valid key name, for "did you mean".
fn all_keys() -> impl Iterator<Item = &'static str> {
    CLIENT_KEYS
        .iter()
        .chain(GROUP_KEYS)
        .chain(CONSUMER_KEYS)
        .chain(TELEMETRY_KEYS)
        .map(|k| k.name)
}

/// Fetch settings (`fetch.*`, `max.partition.fetch.bytes`, `isolation.level`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FetchConfig {
    /// `fetch.min.bytes`.
    pub min_bytes: i32,
    /// `fetch.max.wait.ms`.
    pub max_wait: Duration,
    /// `fetch.max.bytes`.
    pub max_bytes: i32,
    /// `max.partition.fetch.bytes`.
    pub max_partition_bytes: i32,
    /// `isolation.level`.
    pub isolation_level: IsolationLevel,
    /// `mooring.memory.max.bytes`: the budget for record data held, from the response bytes
    /// being read to the records the handlers still hold (decompressed batches included). A
    /// Fetch asks for no more than the budget has room for, and none is sent while it is full;
    /// a record stays counted until it is dropped. The budget can be passed by one response: the
    /// broker sends the first batch whole even when it is larger than asked for (so a record
    /// larger than the budget is still consumed), and a compressed response grows when its
    /// batches are decompressed.
    pub memory_max_bytes: usize,
}

impl Default for FetchConfig {
    fn default() -> Self {
        FetchConfig {
            min_bytes: 1,
            max_wait: Duration::from_millis(500),
            max_bytes: 52_428_800,
            max_partition_bytes: 1_048_576,
            isolation_level: IsolationLevel::ReadUncommitted,
            memory_max_bytes: 8 << 20,
        }
    }
}

/// Everything [`Consumer::new`](crate::Consumer::new) needs.
///
/// ```
/// use std::time::Duration;
/// use mooring_consumer::{ConsumerConfig, IsolationLevel};
/// use mooring_consumer::processing::ProcessingOrder;
///
/// let config = ConsumerConfig::from_properties([
///     ("bootstrap.servers", "localhost:9092"),
///     ("group.id", "orders"),
///     ("auto.offset.reset", "earliest"),
///     ("isolation.level", "read_committed"),
///     ("mooring.concurrency", "64"),
///     ("mooring.ordering", "key"),
/// ])?;
/// assert_eq!(config.group.as_ref().map(|g| g.group_id.as_str()), Some("orders"));
/// assert_eq!(config.fetch.isolation_level, IsolationLevel::ReadCommitted);
/// assert_eq!(config.processing.concurrency, 64);
/// assert_eq!(config.processing.ordering, ProcessingOrder::Key);
/// assert_eq!(config.auto_commit_interval, Duration::from_secs(5));
///
/// // An unknown key names the nearest valid one.
/// let err = ConsumerConfig::from_properties([
///     ("bootstrap.servers", "localhost:9092"),
///     ("enable.auto.comit", "false"),
/// ])
/// .unwrap_err();
/// assert!(err.to_string().contains("enable.auto.commit"));
/// # Ok::<(), mooring_consumer::ConsumerError>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ConsumerConfig {
    /// The network client's settings (shared by the group member's and the fetcher's clients).
    pub client: ClientConfig,
    /// The group member's settings; `None` without `group.id` (manual assignment only).
    pub group: Option<GroupConfig>,
    /// `enable.auto.commit`.
    pub enable_auto_commit: bool,
    /// `auto.commit.interval.ms`.
    pub auto_commit_interval: Duration,
    /// `auto.offset.reset`.
    pub auto_offset_reset: OffsetResetStrategy,
    /// Fetch settings.
    pub fetch: FetchConfig,
    /// The processing engine's settings (`mooring.concurrency`, `mooring.ordering`, buffers,
    /// `mooring.batch.max.records`, `max.poll.interval.ms`, `mooring.failure.policy`).
    pub processing: ProcessingConfig,
    /// `mooring.shutdown.timeout.ms`.
    pub shutdown_timeout: Duration,
    /// `mooring.revoke.timeout.ms`.
    pub revoke_timeout: Duration,
    /// `enable.metrics.push`: push client metrics to brokers that subscribe to them (KIP-714).
    pub enable_metrics_push: bool,
    /// `mooring.telemetry.*`: whether and how to export telemetry to the sidecar
    /// ([`TelemetryExporter::from_config`](crate::telemetry::TelemetryExporter::from_config)).
    pub telemetry: TelemetryConfig,
}

impl ConsumerConfig {
    /// Defaults (Java's where Java has the setting) with these bootstrap servers, no group.
    pub fn new(bootstrap_servers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        ConsumerConfig {
            client: ClientConfig::new(bootstrap_servers),
            group: None,
            enable_auto_commit: true,
            auto_commit_interval: Duration::from_millis(5000),
            auto_offset_reset: OffsetResetStrategy::Latest,
            fetch: FetchConfig::default(),
            processing: ProcessingConfig::default(),
            shutdown_timeout: Duration::from_secs(30),
            revoke_timeout: Duration::from_secs(30),
            enable_metrics_push: true,
            telemetry: TelemetryConfig::default(),
        }
    }

    /// Builds a config from Kafka properties (see the module docs for the keys).
    pub fn from_properties<K, V>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, ConsumerError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut config = ConsumerConfig::new(Vec::<String>::new());
        let mut group_props: Vec<(String, String)> = Vec::new();
        for (k, v) in props {
            let (k, v) = (k.as_ref(), v.as_ref());
            if let Some(spec) = CONSUMER_KEYS.iter().find(|s| s.name == k) {
                config.set_consumer_key(spec, v)?;
                continue;
            }
            if config.telemetry.set(k, v)? {
                continue;
            }
            let client_key = config.client.set(k, v)?;
            let group_key = GROUP_KEYS.iter().any(|s| s.name == k);
            // retry.backoff.ms and client.rack matter to both the client and the member.
            if group_key || matches!(k, "retry.backoff.ms" | "client.rack") {
                group_props.push((k.to_owned(), v.to_owned()));
            }
            if k == "max.poll.interval.ms" {
                config.processing.max_poll_interval = millis(k, v)?;
            }
            if !client_key && !group_key {
                return Err(unknown_key_error(k, all_keys()).into());
            }
        }
        config.client.validate()?;
        if group_props
            .iter()
            .any(|(k, v)| k == "group.id" && !v.is_empty())
        {
            config.group = Some(GroupConfig::from_properties(
                group_props.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            )?);
        }
        config.processing.validate()?;
        config.telemetry.validate()?;
        Ok(config)
    }

    fn set_consumer_key(&mut self, spec: &KeySpec, value: &str) -> Result<(), ConsumerError> {
        let v = value.trim();
        let k = spec.name;
        match k {
            "enable.auto.commit" => self.enable_auto_commit = boolean(spec, v)?,
            "enable.metrics.push" => self.enable_metrics_push = boolean(spec, v)?,
            "auto.commit.interval.ms" => self.auto_commit_interval = millis(k, v)?,
            "auto.offset.reset" => {
                self.auto_offset_reset = v.parse().map_err(|_| ill_typed(spec, v))?
            }
            "isolation.level" => {
                self.fetch.isolation_level = match v {
                    "read_uncommitted" => IsolationLevel::ReadUncommitted,
                    "read_committed" => IsolationLevel::ReadCommitted,
                    _ => return Err(ill_typed(spec, v)),
                }
            }
            "fetch.min.bytes" => self.fetch.min_bytes = positive_i32(spec, v)?,
            "fetch.max.wait.ms" => self.fetch.max_wait = millis(k, v)?,
            "fetch.max.bytes" => self.fetch.max_bytes = positive_i32(spec, v)?,
            "max.partition.fetch.bytes" => self.fetch.max_partition_bytes = positive_i32(spec, v)?,
            "mooring.memory.max.bytes" => self.fetch.memory_max_bytes = positive(spec, v)?,
            "mooring.concurrency" => self.processing.concurrency = positive(spec, v)?,
            "mooring.ordering" => {
                self.processing.ordering = match v {
                    "partition" => ProcessingOrder::Partition,
                    "key" => ProcessingOrder::Key,
                    "none" => ProcessingOrder::None,
                    _ => return Err(ill_typed(spec, v)),
                }
            }
            "mooring.buffer.max.records" => {
                let n = positive(spec, v)?;
                self.processing.max_buffered_records = n;
                self.processing.resume_buffered_records = n / 2;
            }
            "mooring.buffer.max.bytes" => {
                let n = positive(spec, v)?;
                self.processing.max_buffered_bytes = n;
                self.processing.resume_buffered_bytes = n / 2;
            }
            "mooring.batch.max.records" => self.processing.max_batch_records = positive(spec, v)?,
            "mooring.failure.policy" => {
                self.processing.failure_policy =
                    failure_policy(v).ok_or_else(|| ill_typed(spec, v))?
            }
            "mooring.shutdown.timeout.ms" => self.shutdown_timeout = millis(k, v)?,
            "mooring.revoke.timeout.ms" => self.revoke_timeout = millis(k, v)?,
            other => {
                return Err(ConsumerError::Config {
                    key: other.into(),
                    message: "key is listed but not handled (a bug)".into(),
                })
            }
        }
        Ok(())
    }
}

pub(crate) fn ill_typed(spec: &KeySpec, value: &str) -> ConsumerError {
    ConsumerError::Config {
        key: spec.name.into(),
        message: format!("`{value}` is not {}", spec.kind),
    }
}

pub(crate) fn millis(key: &str, value: &str) -> Result<Duration, ConsumerError> {
    value
        .trim()
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| ConsumerError::Config {
            key: key.into(),
            message: format!("`{value}` is not a non-negative integer (milliseconds)"),
        })
}

pub(crate) fn boolean(spec: &KeySpec, value: &str) -> Result<bool, ConsumerError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(ill_typed(spec, value)),
    }
}

pub(crate) fn positive(spec: &KeySpec, value: &str) -> Result<usize, ConsumerError> {
    match value.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(ill_typed(spec, value)),
    }
}

pub(crate) fn positive_i32(spec: &KeySpec, value: &str) -> Result<i32, ConsumerError> {
    match value.parse::<i32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(ill_typed(spec, value)),
    }
}

/// `stop`, `skip`, or `retry:<retries>:<initial backoff ms>:<stop|skip>`.
fn failure_policy(value: &str) -> Option<FailurePolicy> {
    match value {
        "stop" => return Some(FailurePolicy::stop()),
        "skip" => return Some(FailurePolicy::skip()),
        _ => {}
    }
    let mut parts = value.strip_prefix("retry:")?.split(':');
    let retries = parts.next()?.parse().ok()?;
    let backoff = Duration::from_millis(parts.next()?.parse().ok()?);
    let then = match parts.next()? {
        "stop" => OnFailure::Stop,
        "skip" => OnFailure::Skip,
        _ => return None,
    };
    parts
        .next()
        .is_none()
        .then(|| FailurePolicy::retry(retries, backoff, then))
}

#[cfg(test)]
mod tests {
    use mooring_group::GroupProtocol;

    use super::*;

    fn parse(props: &[(&str, &str)]) -> Result<ConsumerConfig, ConsumerError> {
        let mut all = vec![("bootstrap.servers", "localhost:9092")];
        all.extend_from_slice(props);
        ConsumerConfig::from_properties(all)
    }

    #[test]
    fn consumer_group_and_client_keys_are_all_accepted() {
        let c = parse(&[
            ("group.id", "g"),
            ("group.instance.id", "g-1"),
            ("session.timeout.ms", "6000"),
            ("heartbeat.interval.ms", "1000"),
            ("max.poll.interval.ms", "20000"),
            ("partition.assignment.strategy", "cooperative-sticky"),
            ("retry.backoff.ms", "50"),
            ("enable.auto.commit", "false"),
            ("auto.offset.reset", "none"),
            ("fetch.max.wait.ms", "100"),
            ("max.partition.fetch.bytes", "65536"),
            ("mooring.failure.policy", "retry:3:10:skip"),
            ("mooring.buffer.max.records", "10"),
        ])
        .expect("valid");
        let group = c.group.expect("group");
        assert_eq!(group.session_timeout, Duration::from_secs(6));
        assert_eq!(group.retry_backoff, Duration::from_millis(50));
        assert_eq!(c.client.retry_backoff, Duration::from_millis(50));
        assert_eq!(c.processing.max_poll_interval, Duration::from_secs(20));
        assert!(!c.enable_auto_commit);
        assert_eq!(c.auto_offset_reset, OffsetResetStrategy::None);
        assert_eq!(c.fetch.max_partition_bytes, 65536);
        assert_eq!(
            c.processing.failure_policy,
            FailurePolicy::retry(3, Duration::from_millis(10), OnFailure::Skip)
        );
        assert_eq!(c.processing.resume_buffered_records, 5);
    }

    #[test]
    fn unknown_keys_name_the_nearest_valid_key() {
        let err = parse(&[("fetch.max.wait", "100")]).expect_err("unknown");
        let text = err.to_string();
        assert!(text.contains("fetch.max.wait.ms"), "{text}");
        let err = parse(&[("mooring.concurency", "4")]).expect_err("unknown");
        assert!(err.to_string().contains("mooring.concurrency"), "{err}");
    }

    #[test]
    fn ill_typed_values_name_the_key() {
        let err = parse(&[("isolation.level", "committed")]).expect_err("bad");
        assert!(
            matches!(&err, ConsumerError::Config { key, .. } if key == "isolation.level"),
            "{err}"
        );
        let err = parse(&[("mooring.concurrency", "0")]).expect_err("bad");
        assert!(matches!(&err, ConsumerError::Config { key, .. } if key == "mooring.concurrency"));
    }

    #[test]
    fn batch_max_records_is_a_positive_count() {
        assert_eq!(parse(&[]).expect("valid").processing.max_batch_records, 500);
        let c = parse(&[("mooring.batch.max.records", "64")]).expect("valid");
        assert_eq!(c.processing.max_batch_records, 64);
        for bad in ["0", "-1", "many"] {
            let err = parse(&[("mooring.batch.max.records", bad)]).expect_err("bad");
            assert!(
                matches!(&err, ConsumerError::Config { key, .. } if key == "mooring.batch.max.records"),
                "{bad}: {err}"
            );
        }
        let err = parse(&[("mooring.batch.max.record", "5")]).expect_err("unknown");
        assert!(
            err.to_string().contains("mooring.batch.max.records"),
            "{err}"
        );
    }

    #[test]
    fn telemetry_keys_are_consumer_keys() {
        let c = parse(&[]).expect("valid");
        assert!(!c.telemetry.enabled, "off unless asked for");
        let c = parse(&[
            ("mooring.telemetry.enabled", "true"),
            (
                "mooring.telemetry.endpoint",
                "http://127.0.0.1:19500/v1/events",
            ),
            ("mooring.telemetry.buffer.events", "5000"),
            ("mooring.telemetry.snapshot.interval.ms", "1000"),
        ])
        .expect("valid");
        assert!(c.telemetry.enabled);
        assert_eq!(
            c.telemetry.exporter.endpoint,
            "http://127.0.0.1:19500/v1/events"
        );
        assert_eq!(c.telemetry.exporter.buffer_capacity, 5000);
        assert_eq!(
            c.telemetry.exporter.snapshot_interval,
            Duration::from_secs(1)
        );
        let err = parse(&[("mooring.telemetry.enable", "true")]).expect_err("unknown");
        assert!(
            err.to_string().contains("mooring.telemetry.enabled"),
            "{err}"
        );
        let err = parse(&[("mooring.telemetry.endpoint", "localhost:9464")]).expect_err("bad");
        assert!(
            matches!(&err, ConsumerError::Config { key, .. } if key == "mooring.telemetry.endpoint"),
            "{err}"
        );
    }

    #[test]
    fn the_consumer_protocol_refuses_classic_only_keys_naming_them() {
        for (key, value) in [
            ("partition.assignment.strategy", "cooperative-sticky"),
            ("session.timeout.ms", "6000"),
            ("heartbeat.interval.ms", "1000"),
        ] {
            let err = parse(&[
                ("group.id", "g"),
                ("group.protocol", "consumer"),
                (key, value),
            ])
            .expect_err("classic only");
            match &err {
                ConsumerError::Config {
                    key: named,
                    message,
                } => {
                    assert_eq!(named, key);
                    assert!(message.contains("group.protocol=consumer"), "{message}");
                }
                other => panic!("{key}: {other:?}"),
            }
            assert!(err.to_string().contains(key), "{err}");
        }
        let c = parse(&[
            ("group.id", "g"),
            ("group.protocol", "consumer"),
            ("group.remote.assignor", "uniform"),
            ("mooring.unreleased.instance.timeout.ms", "30000"),
            ("max.poll.interval.ms", "20000"),
        ])
        .expect("valid");
        let group = c.group.expect("group");
        assert_eq!(group.protocol, GroupProtocol::Consumer);
        assert_eq!(group.remote_assignor.as_deref(), Some("uniform"));
        assert_eq!(group.unreleased_instance_timeout, Duration::from_secs(30));
        assert_eq!(group.rebalance_timeout, Duration::from_secs(20));
    }

    #[test]
    fn the_classic_protocol_refuses_a_remote_assignor_naming_it() {
        for props in [
            vec![("group.id", "g"), ("group.remote.assignor", "range")],
            vec![
                ("group.id", "g"),
                ("group.protocol", "classic"),
                ("group.remote.assignor", "range"),
            ],
        ] {
            let err = parse(&props).expect_err("consumer only");
            assert!(
                matches!(&err, ConsumerError::Config { key, .. } if key == "group.remote.assignor"),
                "{err}"
            );
        }
        let err = parse(&[("group.id", "g"), ("group.protocol", "next")]).expect_err("bad");
        assert!(
            matches!(&err, ConsumerError::Config { key, .. } if key == "group.protocol"),
            "{err}"
        );
    }

    #[test]
    fn no_group_id_means_no_group() {
        let c = parse(&[("auto.offset.reset", "earliest")]).expect("valid");
        assert!(c.group.is_none());
    }
}
