//! The share consumer's configuration, from Kafka's own property names: a Java
//! `KafkaShareConsumer` config can be brought as is.
//!
//! Valid keys: the network client's ([`CLIENT_KEYS`]), the telemetry exporter's
//! ([`TELEMETRY_KEYS`]), and [`SHARE_CONSUMER_KEYS`]:
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `group.id` | (required) | the share group |
//! | `share.acknowledgement.mode` | `implicit` | `implicit` or `explicit`, as Java's; see [`AcknowledgementMode`] |
//! | `share.acquire.mode` | `batch_optimized` | `batch_optimized` (a fetch may bring more than `max.poll.records` to keep whole batches) or `record_limit` (never more; brokers with ShareFetch v2, Kafka 4.2+) |
//! | `max.poll.records` | 500 | the most records one ShareFetch acquires (its `MaxRecords` and `BatchSize`) |
//! | `fetch.min.bytes`, `fetch.max.wait.ms`, `fetch.max.bytes` | 1, 500, 52428800 | as the consumer's |
//! | `max.partition.fetch.bytes` | 1048576 | accepted for Java's configs; a ShareFetch has no per-partition limit |
//! | `max.poll.interval.ms` | 300000 | how long a record may be held: its lock is renewed until then, and then left to run out (the broker hands the record to another member) |
//! | `mooring.memory.max.bytes` | 8388608 | the record data the consumer holds, as the consumer's: no ShareFetch goes while it is full |
//! | `mooring.concurrency` | 16 | handlers running at once, over all records (a share group promises no order) |
//! | `mooring.buffer.max.records` | 1000 | the most records held (acquired and not yet acknowledged): a ShareFetch goes once a poll's worth (`max.poll.records`, at most half of it) fits beside those held |
//! | `mooring.failure.policy` | `release` | what a handler's error does to its record: `release` (delivered again, to any member, until the group's `share.delivery.count.limit` archives it) or `reject` (archived at once); an error that is a [`RejectRecord`](super::RejectRecord) or a [`ReleaseRecord`](super::ReleaseRecord) says it itself |
//! | `mooring.share.lock.renewal` | `true` | renew a running record's acquisition lock (KIP-1222, Kafka 4.2+) at half its duration |
//! | `mooring.shutdown.timeout.ms` | 30000 | the whole shutdown's bound |
//! | `retry.backoff.ms`, `client.rack`, `mooring.events.capacity` | | the group member's, as the consumer's |
//!
//! The keys Java's `ShareConsumerConfig` refuses are refused naming the key (`auto.offset.reset`,
//! `enable.auto.commit`, `group.instance.id`, `isolation.level`, `partition.assignment.strategy`,
//! `interceptor.classes`, `session.timeout.ms`, `heartbeat.interval.ms`, `group.protocol`,
//! `group.remote.assignor`: the share group's own configs say where it starts, its isolation
//! level, its session timeout and heartbeat interval), and so are the consumer's keys that have
//! no meaning for a share group (commits, ordering, revokes, static membership).

use std::time::Duration;

use mooring_client::config::{key, unknown_key_error, KeySpec, ValueKind, BOOL, CLIENT_KEYS};
use mooring_client::ClientConfig;
use mooring_group::{GroupConfig, GroupProtocol};

use crate::config::{boolean, millis, positive, positive_i32, FetchConfig};
use crate::error::ConsumerError;
use crate::telemetry::{TelemetryConfig, TELEMETRY_KEYS};

/// `share.acknowledgement.mode`.
///
/// Java's two modes say who acknowledges: in `implicit` the consumer accepts every record the
/// application polled; in `explicit` the application acknowledges each one. Mooring acknowledges
/// each record on its own in both: [`ShareConsumer::run`](super::ShareConsumer::run) from the
/// handler's result, [`ShareConsumer::stream`](super::ShareConsumer::stream) by the
/// [`ShareDelivery`](super::ShareDelivery)'s `accept`, `release` or `reject`. A delivery dropped
/// without one is released, never accepted, in both modes (a `?` or a panic in the loop loses
/// nothing); under `explicit` that is an application error, and each such drop is also logged as
/// a warning naming the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AcknowledgementMode {
    /// Java's default.
    #[default]
    Implicit,
    /// Every delivery must be acknowledged by the application.
    Explicit,
}

/// `share.acquire.mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AcquireMode {
    /// Whole batches: a fetch may acquire more than `max.poll.records`.
    #[default]
    BatchOptimized,
    /// At most `max.poll.records` per fetch (ShareFetch v2, Kafka 4.2+).
    RecordLimit,
}

impl AcquireMode {
    /// The wire value of `ShareAcquireMode`.
    pub fn wire(self) -> i8 {
        match self {
            AcquireMode::BatchOptimized => 0,
            AcquireMode::RecordLimit => 1,
        }
    }
}

/// What a handler's error does to its record when the error does not say itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ShareFailurePolicy {
    /// Delivered again (to any member), until the group's delivery limit archives it.
    #[default]
    Release,
    /// Archived at once (or sent to the group's dead-letter topic).
    Reject,
}

/// The share consumer's own keys.
pub const SHARE_CONSUMER_KEYS: &[KeySpec] = &[
    key("group.id", ValueKind::String, ""),
    key(
        "share.acknowledgement.mode",
        ValueKind::OneOf(&["implicit", "explicit"]),
        "implicit",
    ),
    key(
        "share.acquire.mode",
        ValueKind::OneOf(&["batch_optimized", "record_limit"]),
        "batch_optimized",
    ),
    key("max.poll.records", ValueKind::PositiveInt, "500"),
    key("max.poll.interval.ms", ValueKind::Millis, "300000"),
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
    key("mooring.buffer.max.records", ValueKind::PositiveInt, "1000"),
    key(
        "mooring.failure.policy",
        ValueKind::OneOf(&["release", "reject"]),
        "release",
    ),
    key("mooring.share.lock.renewal", BOOL, "true"),
    key("mooring.shutdown.timeout.ms", ValueKind::Millis, "30000"),
    key("mooring.events.capacity", ValueKind::PositiveInt, "1024"),
];

/// Keys that mean nothing to a share group, refused naming the key: Java's list first, then the
/// consumer's own.
const REFUSED: &[&str] = &[
    "auto.offset.reset",
    "enable.auto.commit",
    "group.instance.id",
    "isolation.level",
    "partition.assignment.strategy",
    "interceptor.classes",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "group.protocol",
    "group.remote.assignor",
    "auto.commit.interval.ms",
    "mooring.ordering",
    "mooring.buffer.max.bytes",
    "mooring.batch.max.records",
    "mooring.revoke.timeout.ms",
    "mooring.fenced.policy",
    "mooring.leave.group.on.close",
    "mooring.commit.retries",
    "mooring.unreleased.instance.timeout.ms",
];

/// Everything [`ShareConsumer::new`](super::ShareConsumer::new) needs.
///
/// ```
/// use mooring_consumer::share::{AcknowledgementMode, ShareConsumerConfig};
///
/// let config = ShareConsumerConfig::from_properties([
///     ("bootstrap.servers", "localhost:9092"),
///     ("group.id", "orders-workers"),
///     ("share.acknowledgement.mode", "explicit"),
///     ("mooring.concurrency", "64"),
/// ])?;
/// assert_eq!(config.acknowledgement_mode, AcknowledgementMode::Explicit);
/// assert_eq!(config.concurrency, 64);
///
/// // A key a share group has no use for is refused, named.
/// let err = ShareConsumerConfig::from_properties([
///     ("bootstrap.servers", "localhost:9092"),
///     ("group.id", "orders-workers"),
///     ("enable.auto.commit", "false"),
/// ])
/// .unwrap_err();
/// assert!(err.to_string().contains("enable.auto.commit"));
/// # Ok::<(), mooring_consumer::ConsumerError>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ShareConsumerConfig {
    /// The network client's settings (shared by the member's and the fetcher's clients).
    pub client: ClientConfig,
    /// The share member's settings (`group.protocol` is [`GroupProtocol::Share`]).
    pub group: GroupConfig,
    /// `share.acknowledgement.mode`.
    pub acknowledgement_mode: AcknowledgementMode,
    /// `share.acquire.mode`.
    pub acquire_mode: AcquireMode,
    /// `max.poll.records`.
    pub max_poll_records: i32,
    /// `fetch.*`, `max.partition.fetch.bytes`, `mooring.memory.max.bytes` (the isolation level is
    /// the group's `share.isolation.level`).
    pub fetch: FetchConfig,
    /// `mooring.concurrency`.
    pub concurrency: usize,
    /// `mooring.buffer.max.records`.
    pub max_held_records: usize,
    /// `max.poll.interval.ms`: the longest a record is held.
    pub max_poll_interval: Duration,
    /// `mooring.share.lock.renewal`.
    pub renew_locks: bool,
    /// `mooring.failure.policy`.
    pub failure_policy: ShareFailurePolicy,
    /// `mooring.shutdown.timeout.ms`.
    pub shutdown_timeout: Duration,
    /// `mooring.telemetry.*`.
    pub telemetry: TelemetryConfig,
}

impl ShareConsumerConfig {
    /// Builds a config from Kafka properties (see the module docs for the keys).
    pub fn from_properties<K, V>(
        props: impl IntoIterator<Item = (K, V)>,
    ) -> Result<Self, ConsumerError>
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        let mut config = ShareConsumerConfig::defaults();
        let mut group_props: Vec<(String, String)> = Vec::new();
        for (k, v) in props {
            let (k, v) = (k.as_ref(), v.as_ref());
            if REFUSED.contains(&k) {
                return Err(ConsumerError::Config {
                    key: k.into(),
                    message: format!("{k} cannot be set when using a share group"),
                });
            }
            if let Some(spec) = SHARE_CONSUMER_KEYS.iter().find(|s| s.name == k) {
                config.set(spec, v)?;
                if matches!(
                    k,
                    "group.id" | "max.poll.interval.ms" | "mooring.events.capacity"
                ) {
                    group_props.push((k.to_owned(), v.to_owned()));
                }
                continue;
            }
            if config.telemetry.set(k, v)? {
                continue;
            }
            if !config.client.set(k, v)? {
                return Err(unknown_key_error(k, all_keys()).into());
            }
            if matches!(k, "retry.backoff.ms" | "client.rack") {
                group_props.push((k.to_owned(), v.to_owned()));
            }
        }
        config.client.validate()?;
        if !group_props
            .iter()
            .any(|(k, v)| k == "group.id" && !v.trim().is_empty())
        {
            return Err(ConsumerError::Config {
                key: "group.id".into(),
                message: "a share consumer needs a share group".into(),
            });
        }
        let mut group = GroupConfig::from_properties(
            group_props.iter().map(|(k, v)| (k.as_str(), v.as_str())),
        )?;
        group.protocol = GroupProtocol::Share;
        group.validate()?;
        config.group = group;
        config.telemetry.validate()?;
        Ok(config)
    }

    fn defaults() -> Self {
        ShareConsumerConfig {
            client: ClientConfig::new(Vec::<String>::new()),
            group: GroupConfig::new(""),
            acknowledgement_mode: AcknowledgementMode::Implicit,
            acquire_mode: AcquireMode::BatchOptimized,
            max_poll_records: 500,
            fetch: FetchConfig::default(),
            concurrency: 16,
            max_held_records: 1000,
            max_poll_interval: Duration::from_millis(300_000),
            renew_locks: true,
            failure_policy: ShareFailurePolicy::Release,
            shutdown_timeout: Duration::from_secs(30),
            telemetry: TelemetryConfig::default(),
        }
    }

    fn set(&mut self, spec: &KeySpec, value: &str) -> Result<(), ConsumerError> {
        let v = value.trim();
        let k = spec.name;
        match k {
            // The member's: read by GroupConfig.
            "group.id" | "mooring.events.capacity" => {}
            "share.acknowledgement.mode" => {
                self.acknowledgement_mode = match v {
                    "explicit" => AcknowledgementMode::Explicit,
                    "implicit" => AcknowledgementMode::Implicit,
                    _ => return Err(crate::config::ill_typed(spec, value)),
                }
            }
            "share.acquire.mode" => {
                self.acquire_mode = match v {
                    "record_limit" => AcquireMode::RecordLimit,
                    "batch_optimized" => AcquireMode::BatchOptimized,
                    _ => return Err(crate::config::ill_typed(spec, value)),
                }
            }
            "max.poll.records" => self.max_poll_records = positive_i32(spec, v)?,
            "max.poll.interval.ms" => self.max_poll_interval = millis(k, v)?,
            "fetch.min.bytes" => self.fetch.min_bytes = positive_i32(spec, v)?,
            "fetch.max.wait.ms" => self.fetch.max_wait = millis(k, v)?,
            "fetch.max.bytes" => self.fetch.max_bytes = positive_i32(spec, v)?,
            "max.partition.fetch.bytes" => self.fetch.max_partition_bytes = positive_i32(spec, v)?,
            "mooring.memory.max.bytes" => self.fetch.memory_max_bytes = positive(spec, v)?,
            "mooring.concurrency" => self.concurrency = positive(spec, v)?,
            "mooring.buffer.max.records" => self.max_held_records = positive(spec, v)?,
            "mooring.failure.policy" => {
                self.failure_policy = match v {
                    "reject" => ShareFailurePolicy::Reject,
                    "release" => ShareFailurePolicy::Release,
                    _ => return Err(crate::config::ill_typed(spec, value)),
                }
            }
            "mooring.share.lock.renewal" => self.renew_locks = boolean(spec, v)?,
            "mooring.shutdown.timeout.ms" => self.shutdown_timeout = millis(k, v)?,
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

/// Every valid key name, for "did you mean".
fn all_keys() -> impl Iterator<Item = &'static str> {
    CLIENT_KEYS
        .iter()
        .chain(SHARE_CONSUMER_KEYS)
        .chain(TELEMETRY_KEYS)
        .map(|k| k.name)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(props: &[(&str, &str)]) -> Result<ShareConsumerConfig, ConsumerError> {
        let mut all = vec![("bootstrap.servers", "localhost:9092"), ("group.id", "g")];
        all.extend_from_slice(props);
        ShareConsumerConfig::from_properties(all)
    }

    #[test]
    fn javas_share_consumer_keys_are_read() {
        let c = parse(&[
            ("share.acknowledgement.mode", "explicit"),
            ("share.acquire.mode", "record_limit"),
            ("max.poll.records", "100"),
            ("max.poll.interval.ms", "60000"),
            ("fetch.max.wait.ms", "100"),
            ("max.partition.fetch.bytes", "65536"),
            ("client.rack", "rack-a"),
            ("retry.backoff.ms", "50"),
            ("mooring.failure.policy", "reject"),
            ("mooring.share.lock.renewal", "false"),
        ])
        .unwrap();
        assert_eq!(c.acknowledgement_mode, AcknowledgementMode::Explicit);
        assert_eq!(
            (c.acquire_mode, c.max_poll_records),
            (AcquireMode::RecordLimit, 100)
        );
        assert_eq!(c.max_poll_interval, Duration::from_secs(60));
        assert_eq!(c.fetch.max_wait, Duration::from_millis(100));
        assert_eq!(
            (c.failure_policy, c.renew_locks),
            (ShareFailurePolicy::Reject, false)
        );
        assert_eq!(c.group.protocol, GroupProtocol::Share);
        assert_eq!(c.group.group_id, "g");
        assert_eq!(c.group.client_rack.as_deref(), Some("rack-a"));
        assert_eq!(c.group.retry_backoff, Duration::from_millis(50));
        assert_eq!(c.group.rebalance_timeout, Duration::from_secs(60));
    }

    #[test]
    fn keys_a_share_group_has_no_use_for_are_refused_named_and_unknown_ones_say_the_nearest() {
        for key in REFUSED {
            let err = parse(&[(key, "1")]).unwrap_err();
            assert!(
                matches!(&err, ConsumerError::Config { key: k, .. } if k == key),
                "{key}: {err}"
            );
            assert!(err.to_string().contains("share group"), "{err}");
        }
        let err = parse(&[("share.acknowledgment.mode", "explicit")]).unwrap_err();
        assert!(
            err.to_string().contains("share.acknowledgement.mode"),
            "{err}"
        );
        let err = parse(&[("share.acknowledgement.mode", "auto")]).unwrap_err();
        assert!(
            matches!(&err, ConsumerError::Config { key, .. } if key == "share.acknowledgement.mode"),
            "{err}"
        );
        let err = ShareConsumerConfig::from_properties([("bootstrap.servers", "localhost:9092")])
            .unwrap_err();
        assert!(
            matches!(&err, ConsumerError::Config { key, .. } if key == "group.id"),
            "{err}"
        );
    }
}
