//! The group member's configuration, read from Kafka's own property names so a Java or
//! librdkafka consumer config can be brought as is.
//!
//! | property | default | meaning |
//! |---|---|---|
//! | `group.id` | (required) | the group |
//! | `group.instance.id` | none | static membership (KIP-345) |
//! | `session.timeout.ms` | 45000 | the coordinator drops a member silent this long (KIP-735 default) |
//! | `heartbeat.interval.ms` | 3000 | time between heartbeats |
//! | `max.poll.interval.ms` | 300000 | sent as the rebalance timeout (KIP-62); less two heartbeat intervals, the bound of a listener call ([`GroupConfig::listener_timeout`]); it times JoinGroup and SyncGroup ([`GroupConfig::join_timeout`]) |
//! | `partition.assignment.strategy` | `cooperative-sticky` | ordered protocol list; the default is cooperative (KIP-429), where Java's `range,cooperative-sticky` is eager (see below) |
//! | `retry.backoff.ms` | 100 | pause before retrying a retriable failure |
//! | `client.rack` | none | sent in the Subscription (v3, KIP-881) |
//! | `mooring.fenced.policy` | `stop` | `stop`, or `retry` / `retry:<ms>` (see [`FencedPolicy`]) |
//! | `mooring.leave.group.on.close` | `true` dynamic, `false` static | send LeaveGroup on close |
//! | `mooring.commit.retries` | 5 | attempts of a commit or offset fetch on retriable errors |
//! | `mooring.events.capacity` | 1024 | capacity of the event channel (events are dropped, and counted, when full) |
//! | `group.protocol` | `classic` | `classic` (JoinGroup/SyncGroup, client-side assignors) or `consumer` (KIP-848: ConsumerGroupHeartbeat, the broker assigns) |
//! | `group.remote.assignor` | none (the broker's default, `uniform`) | `consumer` only: the broker-side assignor, `uniform` or `range` |
//! | `mooring.unreleased.instance.timeout.ms` | 600000 | `consumer` only: how long a static member retries UNRELEASED_INSTANCE_ID (its `group.instance.id` still held by the process it replaces) before it fails; Kubernetes' default rollout deadline |
//!
//! The default is `cooperative-sticky` alone, so a rebalance revokes only the partitions that
//! move. Java's default, `range,cooperative-sticky`, is eager: the rebalance protocol is
//! cooperative only if every listed assignor supports it, and the broker picks `range`, the first
//! choice. A group shares a protocol only if every member lists it: librdkafka's default
//! (`range,roundrobin`) has none in common with `cooperative-sticky`, and the broker answers
//! INCONSISTENT_GROUP_PROTOCOL to whichever joins second. Set `cooperative-sticky` on the
//! librdkafka members, or `range,cooperative-sticky` on these (eager, then).
//!
//! The two protocols take different keys, as Java's `ConsumerConfig` checks them (the keys given
//! with a non-blank value, defaults aside):
//! - `group.protocol=consumer`: the broker assigns partitions and sets the session timeout and
//!   heartbeat interval (`group.consumer.session.timeout.ms`, `group.consumer.heartbeat.interval.ms`,
//!   or the group's own `consumer.*` configs), so `partition.assignment.strategy`,
//!   `heartbeat.interval.ms` and `session.timeout.ms` are refused, the error naming the first
//!   given (in that order) and listing every one;
//! - `group.protocol=classic`: `group.remote.assignor` is refused.
//!
//! Java class names are accepted in `partition.assignment.strategy`
//! (`org.apache.kafka.clients.consumer.RangeAssignor` → `range`, ...). Keys this module does not
//! know are ignored: they belong to other layers (the `config` crate rejects unknown keys).

use std::time::Duration;

use mooring_client::config::{key, KeySpec, ValueKind, BOOL};
use mooring_client::error::{Error, Result};

/// The group member's keys ([`GroupConfig::from_properties`] reads them; the consumer's
/// config names them too).
pub const GROUP_KEYS: &[KeySpec] = &[
    key("group.id", ValueKind::String, ""),
    key("group.instance.id", ValueKind::String, ""),
    key("session.timeout.ms", ValueKind::Millis, "45000"),
    key("heartbeat.interval.ms", ValueKind::Millis, "3000"),
    key("max.poll.interval.ms", ValueKind::Millis, "300000"),
    key(
        "partition.assignment.strategy",
        ValueKind::List,
        "cooperative-sticky",
    ),
    key("mooring.fenced.policy", ValueKind::String, "stop"),
    key("mooring.leave.group.on.close", BOOL, ""),
    key("mooring.commit.retries", ValueKind::PositiveInt, "5"),
    key("mooring.events.capacity", ValueKind::PositiveInt, "1024"),
    key(
        "group.protocol",
        ValueKind::OneOf(&["classic", "consumer"]),
        "classic",
    ),
    key("group.remote.assignor", ValueKind::String, ""),
    key(
        "mooring.unreleased.instance.timeout.ms",
        ValueKind::Millis,
        "600000",
    ),
];

/// What a member does after FENCED_INSTANCE_ID (KIP-345: another process joined with this
/// member's `group.instance.id`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FencedPolicy {
    /// Stay out of the group until the application subscribes again or closes.
    Stop,
    /// Try again after a back-off that is never shorter than the session timeout and doubles with
    /// every fencing. Before rejoining the member asks the coordinator (DescribeGroups) whether a
    /// member holding the instance id is still there: a dead twin has expired by then (its session
    /// timed out), a live twin has not, and keeps the id — the two never take it in turns.
    RetryAfter(Duration),
}

impl FencedPolicy {
    /// The wait before the `attempt`-th retry (1-based): `max(base, session) * 2^(attempt-1)`,
    /// capped at one hour.
    pub fn backoff(&self, session_timeout: Duration, attempt: u32) -> Option<Duration> {
        match *self {
            FencedPolicy::Stop => None,
            FencedPolicy::RetryAfter(base) => {
                let floor = base.max(session_timeout);
                let factor = 1u32 << attempt.saturating_sub(1).min(16);
                Some(floor.saturating_mul(factor).min(Duration::from_secs(3600)))
            }
        }
    }
}

/// `group.protocol`: which group protocol the member speaks.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum GroupProtocol {
    /// JoinGroup → SyncGroup → Heartbeat → LeaveGroup, assignments computed by the group's leader.
    #[default]
    Classic,
    /// KIP-848: ConsumerGroupHeartbeat, assignments computed by the broker.
    Consumer,
    /// KIP-932's share group: ShareGroupHeartbeat, the broker assigns share-partitions, which
    /// several members consume at once; records are acknowledged one by one, no offsets are
    /// committed. Set by `mooring_consumer::ShareConsumer`'s config, never by `group.protocol`
    /// (Java refuses that key in a share consumer's config too).
    Share,
}

impl GroupProtocol {
    /// The property value (`classic`, `consumer`).
    pub fn as_str(self) -> &'static str {
        match self {
            GroupProtocol::Classic => "classic",
            GroupProtocol::Consumer => "consumer",
            GroupProtocol::Share => "share",
        }
    }
}

/// The group member's configuration.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GroupConfig {
    /// `group.id`.
    pub group_id: String,
    /// `group.instance.id` (static membership).
    pub group_instance_id: Option<String>,
    /// `session.timeout.ms`.
    pub session_timeout: Duration,
    /// `heartbeat.interval.ms`.
    pub heartbeat_interval: Duration,
    /// `max.poll.interval.ms`: the rebalance timeout sent in JoinGroup.
    pub rebalance_timeout: Duration,
    /// `partition.assignment.strategy`: protocol names in preference order.
    pub assignment_strategies: Vec<String>,
    /// `retry.backoff.ms`.
    pub retry_backoff: Duration,
    /// `client.rack`.
    pub client_rack: Option<String>,
    /// `mooring.fenced.policy`.
    pub fenced_policy: FencedPolicy,
    /// `mooring.leave.group.on.close`; `None` means "dynamic members leave, static ones stay".
    pub leave_group_on_close: Option<bool>,
    /// `mooring.commit.retries`.
    pub commit_retries: u32,
    /// `mooring.events.capacity`.
    pub event_capacity: usize,
    /// `group.protocol`.
    pub protocol: GroupProtocol,
    /// `group.remote.assignor` (`consumer` protocol only); `None` lets the broker choose.
    pub remote_assignor: Option<String>,
    /// `mooring.unreleased.instance.timeout.ms` (`consumer` protocol only).
    pub unreleased_instance_timeout: Duration,
}

impl GroupConfig {
    /// Defaults for `group_id`: Java's, except `partition.assignment.strategy`, which is
    /// `cooperative-sticky` (cooperative rebalancing) where Java's is eager.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mooring_group::GroupConfig;
    ///
    /// let config = GroupConfig::new("orders");
    /// assert_eq!(config.session_timeout, Duration::from_secs(45));
    /// assert_eq!(config.assignment_strategies, ["cooperative-sticky"]);
    /// ```
    pub fn new(group_id: impl Into<String>) -> Self {
        GroupConfig {
            group_id: group_id.into(),
            group_instance_id: None,
            session_timeout: Duration::from_millis(45_000),
            heartbeat_interval: Duration::from_millis(3_000),
            rebalance_timeout: Duration::from_millis(300_000),
            assignment_strategies: vec!["cooperative-sticky".into()],
            retry_backoff: Duration::from_millis(100),
            client_rack: None,
            fenced_policy: FencedPolicy::Stop,
            leave_group_on_close: None,
            commit_retries: 5,
            event_capacity: 1024,
            protocol: GroupProtocol::Classic,
            remote_assignor: None,
            unreleased_instance_timeout: Duration::from_millis(600_000),
        }
    }

    /// Reads Kafka property names (see the module docs); unknown keys are ignored.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mooring_group::{FencedPolicy, GroupConfig};
    ///
    /// let config = GroupConfig::from_properties([
    ///     ("group.id", "orders"),
    ///     ("group.instance.id", "orders-0"),
    ///     ("session.timeout.ms", "6000"),
    ///     ("partition.assignment.strategy", "cooperative-sticky"),
    ///     ("mooring.fenced.policy", "retry:30000"),
    ///     ("bootstrap.servers", "localhost:9092"),
    /// ])
    /// .unwrap();
    /// assert_eq!(config.group_instance_id.as_deref(), Some("orders-0"));
    /// assert_eq!(config.fenced_policy, FencedPolicy::RetryAfter(Duration::from_secs(30)));
    /// assert!(!config.leave_on_close());
    /// ```
    pub fn from_properties<'a>(
        props: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self> {
        let mut config = GroupConfig::new("");
        let mut group_id = None;
        let mut given: Vec<&'a str> = Vec::new();
        for (key, value) in props {
            let value = value.trim();
            if !value.is_empty() && !given.contains(&key) {
                given.push(key);
            }
            match key {
                "group.id" => group_id = Some(value.to_owned()),
                "group.instance.id" => {
                    config.group_instance_id = (!value.is_empty()).then(|| value.to_owned())
                }
                "session.timeout.ms" => config.session_timeout = millis(key, value)?,
                "heartbeat.interval.ms" => config.heartbeat_interval = millis(key, value)?,
                "max.poll.interval.ms" => config.rebalance_timeout = millis(key, value)?,
                "retry.backoff.ms" => config.retry_backoff = millis(key, value)?,
                "client.rack" => config.client_rack = (!value.is_empty()).then(|| value.to_owned()),
                "partition.assignment.strategy" => {
                    config.assignment_strategies = value
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(strategy_name)
                        .collect();
                }
                "mooring.fenced.policy" => config.fenced_policy = fenced_policy(key, value)?,
                "mooring.leave.group.on.close" => {
                    config.leave_group_on_close = Some(match value {
                        "true" => true,
                        "false" => false,
                        _ => return Err(invalid(key, "expected true or false")),
                    })
                }
                "mooring.commit.retries" => {
                    config.commit_retries = value
                        .parse()
                        .map_err(|_| invalid(key, "expected a count"))?
                }
                "mooring.events.capacity" => {
                    config.event_capacity = value
                        .parse()
                        .map_err(|_| invalid(key, "expected a count"))?
                }
                "group.protocol" => {
                    config.protocol = match value.to_ascii_lowercase().as_str() {
                        "classic" => GroupProtocol::Classic,
                        "consumer" => GroupProtocol::Consumer,
                        _ => return Err(invalid(key, "expected classic or consumer")),
                    }
                }
                "group.remote.assignor" => {
                    config.remote_assignor = (!value.is_empty()).then(|| value.to_owned())
                }
                "mooring.unreleased.instance.timeout.ms" => {
                    config.unreleased_instance_timeout = millis(key, value)?
                }
                _ => {}
            }
        }
        config.group_id = group_id.ok_or_else(|| invalid("group.id", "required"))?;
        config.check_protocol_keys(&given)?;
        config.validate()?;
        Ok(config)
    }

    /// Refuses the keys the configured protocol does not take, when given (see the module docs).
    fn check_protocol_keys(&self, given: &[&str]) -> Result<()> {
        let refused: &[&str] = match self.protocol {
            GroupProtocol::Classic => CLASSIC_UNSUPPORTED,
            GroupProtocol::Consumer => CONSUMER_UNSUPPORTED,
            GroupProtocol::Share => SHARE_UNSUPPORTED,
        };
        let set: Vec<&str> = refused
            .iter()
            .copied()
            .filter(|key| given.contains(key))
            .collect();
        match set.first() {
            None => Ok(()),
            Some(first) => Err(invalid(
                first,
                &format!(
                    "{} cannot be set when group.protocol={}{}",
                    set.join(", "),
                    self.protocol.as_str(),
                    match self.protocol {
                        GroupProtocol::Classic =>
                            " (the broker-side assignor is the consumer protocol's)",
                        GroupProtocol::Consumer =>
                            " (the broker assigns partitions and sets the session timeout and heartbeat interval)",
                        GroupProtocol::Share =>
                            " (the broker assigns share-partitions and sets the session timeout and heartbeat interval; a share group has no static members)",
                    }
                ),
            )),
        }
    }

    /// Checks the values against each other (as the broker and Java do).
    pub fn validate(&self) -> Result<()> {
        if self.group_id.is_empty() {
            return Err(invalid("group.id", "must not be empty"));
        }
        if self.protocol == GroupProtocol::Classic && self.assignment_strategies.is_empty() {
            return Err(invalid(
                "partition.assignment.strategy",
                "at least one strategy is required",
            ));
        }
        if self.heartbeat_interval >= self.session_timeout {
            return Err(invalid(
                "heartbeat.interval.ms",
                "must be lower than session.timeout.ms",
            ));
        }
        if self.heartbeat_interval.is_zero() {
            return Err(invalid("heartbeat.interval.ms", "must be positive"));
        }
        if self.event_capacity == 0 {
            return Err(invalid("mooring.events.capacity", "must be positive"));
        }
        if self.protocol == GroupProtocol::Classic && self.remote_assignor.is_some() {
            return Err(invalid(
                "group.remote.assignor",
                "group.remote.assignor cannot be set when group.protocol=classic",
            ));
        }
        if self.protocol == GroupProtocol::Share && self.group_instance_id.is_some() {
            return Err(invalid(
                "group.instance.id",
                "group.instance.id cannot be set when using a share group (it has no static members)",
            ));
        }
        Ok(())
    }

    /// How long a JoinGroup may wait for its answer: the rebalance timeout plus `request_timeout`
    /// (`request.timeout.ms`). The coordinator holds a JoinGroup until every known member has
    /// rejoined, for up to the group's rebalance timeout, so `request.timeout.ms` alone would fail
    /// a join that is merely waiting for a slow member (its revoke, say). The request timeout on
    /// top is the allowance for the round trip itself. Java waits max(`request.timeout.ms`,
    /// rebalance timeout + 5 s) (`AbstractCoordinator.sendJoinGroupRequest`), franz-go the
    /// rebalance timeout plus its request-timeout overhead (10 s by default); this is franz-go's
    /// shape with the configured request timeout as the overhead.
    pub fn join_timeout(&self, request_timeout: Duration) -> Duration {
        self.rebalance_timeout.saturating_add(request_timeout)
    }

    /// How long a SyncGroup may wait for its answer: the rebalance timeout, never less than
    /// `request_timeout`. The coordinator holds a follower's SyncGroup until the leader's arrives
    /// (the leader assigns in between) and gives up on missing SyncGroups after the rebalance
    /// timeout, so that bounds the wait. franz-go does the same; Java uses `request.timeout.ms`,
    /// which fails a follower whose leader takes longer to assign.
    pub fn sync_timeout(&self, request_timeout: Duration) -> Duration {
        self.rebalance_timeout.max(request_timeout)
    }

    /// The bound of one rebalance-listener call: the rebalance timeout less two heartbeat
    /// intervals, never below half of it. An eager member learns of a rebalance from a heartbeat
    /// (up to an interval after it began) and must send JoinGroup before the coordinator's
    /// rebalance timeout ends, or the coordinator drops it from the group; the second interval
    /// is the JoinGroup's own margin.
    ///
    /// ```
    /// use std::time::Duration;
    /// use mooring_group::GroupConfig;
    ///
    /// let config = GroupConfig::from_properties([
    ///     ("group.id", "orders"),
    ///     ("max.poll.interval.ms", "12000"),
    ///     ("heartbeat.interval.ms", "1000"),
    /// ])
    /// .unwrap();
    /// assert_eq!(config.listener_timeout(), Duration::from_secs(10));
    /// ```
    pub fn listener_timeout(&self) -> Duration {
        self.rebalance_timeout
            .saturating_sub(self.heartbeat_interval * 2)
            .max(self.rebalance_timeout / 2)
    }

    /// Whether close sends LeaveGroup: as configured, else only for dynamic members (KIP-345).
    pub fn leave_on_close(&self) -> bool {
        self.leave_group_on_close
            .unwrap_or(self.group_instance_id.is_none())
    }
}

/// The keys Java's `ConsumerConfig` refuses under `group.protocol=classic`, in its order.
const CLASSIC_UNSUPPORTED: &[&str] = &["group.remote.assignor"];

/// The keys Java's `ConsumerConfig` refuses under `group.protocol=consumer`, in its order.
const CONSUMER_UNSUPPORTED: &[&str] = &[
    "partition.assignment.strategy",
    "heartbeat.interval.ms",
    "session.timeout.ms",
];

/// The group keys Java's `ShareConsumerConfig` refuses, in its order.
const SHARE_UNSUPPORTED: &[&str] = &[
    "group.instance.id",
    "partition.assignment.strategy",
    "session.timeout.ms",
    "heartbeat.interval.ms",
    "group.protocol",
    "group.remote.assignor",
];

fn invalid(key: &str, message: &str) -> Error {
    Error::Config {
        key: key.to_owned(),
        message: message.to_owned(),
    }
}

fn millis(key: &str, value: &str) -> Result<Duration> {
    value
        .parse::<u64>()
        .map(Duration::from_millis)
        .map_err(|_| invalid(key, &format!("expected milliseconds, got {value:?}")))
}

fn fenced_policy(key: &str, value: &str) -> Result<FencedPolicy> {
    match value {
        "stop" => Ok(FencedPolicy::Stop),
        "retry" => Ok(FencedPolicy::RetryAfter(Duration::ZERO)),
        _ => match value.strip_prefix("retry:") {
            Some(ms) => Ok(FencedPolicy::RetryAfter(millis(key, ms)?)),
            None => Err(invalid(key, "expected stop, retry or retry:<ms>")),
        },
    }
}

/// Java's assignor class names to protocol names; protocol names pass through.
fn strategy_name(value: &str) -> String {
    match value.rsplit('.').next().unwrap_or(value) {
        "RangeAssignor" => "range".into(),
        "RoundRobinAssignor" => "roundrobin".into(),
        "StickyAssignor" => "sticky".into(),
        "CooperativeStickyAssignor" => "cooperative-sticky".into(),
        _ => value.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_class_names_map_to_protocols() {
        let c = GroupConfig::from_properties([
            ("group.id", "g"),
            (
                "partition.assignment.strategy",
                "org.apache.kafka.clients.consumer.RangeAssignor, org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
            ),
        ])
        .expect("valid");
        assert_eq!(c.assignment_strategies, ["range", "cooperative-sticky"]);
        assert!(c.leave_on_close());
    }

    #[test]
    fn the_default_strategy_rebalances_cooperatively() {
        let c = GroupConfig::from_properties([("group.id", "g")]).expect("valid");
        assert_eq!(c.assignment_strategies, ["cooperative-sticky"]);
        let strategies = crate::classic::protocol::Strategies::by_names(&c.assignment_strategies)
            .expect("known assignors");
        assert_eq!(
            strategies.rebalance_protocol(),
            crate::assignor::RebalanceProtocol::Cooperative
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = GroupConfig::from_properties([("group.id", "g"), ("session.timeout.ms", "x")])
            .expect_err("invalid");
        assert!(matches!(e, Error::Config { key, .. } if key == "session.timeout.ms"));
        let e = GroupConfig::from_properties([("session.timeout.ms", "6000")]).expect_err("no id");
        assert!(matches!(e, Error::Config { key, .. } if key == "group.id"));
    }

    fn config_error(props: &[(&str, &str)]) -> (String, String) {
        match GroupConfig::from_properties(props.iter().copied()) {
            Err(Error::Config { key, message }) => (key, message),
            other => panic!("{props:?}: expected a config error, got {other:?}"),
        }
    }

    #[test]
    fn the_consumer_protocol_refuses_each_classic_only_key_by_name() {
        for key in [
            "partition.assignment.strategy",
            "heartbeat.interval.ms",
            "session.timeout.ms",
        ] {
            let value = if key == "partition.assignment.strategy" {
                "range"
            } else {
                "1000"
            };
            let (named, message) = config_error(&[
                ("group.id", "g"),
                ("group.protocol", "consumer"),
                (key, value),
            ]);
            assert_eq!(named, key);
            assert!(
                message.contains(&format!("{key} cannot be set when group.protocol=consumer")),
                "{message}"
            );
        }
    }

    #[test]
    fn the_consumer_protocol_names_every_classic_only_key_given() {
        let (key, message) = config_error(&[
            ("group.id", "g"),
            ("session.timeout.ms", "6000"),
            ("group.protocol", "CONSUMER"),
            ("partition.assignment.strategy", "cooperative-sticky"),
        ]);
        assert_eq!(key, "partition.assignment.strategy", "Java's order");
        assert!(
            message.starts_with("partition.assignment.strategy, session.timeout.ms cannot be set"),
            "{message}"
        );
    }

    #[test]
    fn the_consumer_protocol_takes_blank_classic_keys_and_its_own() {
        let c = GroupConfig::from_properties([
            ("group.id", "g"),
            ("group.protocol", "consumer"),
            ("partition.assignment.strategy", " "),
            ("group.remote.assignor", "range"),
            ("max.poll.interval.ms", "20000"),
            ("group.instance.id", "g-1"),
        ])
        .expect("valid");
        assert_eq!(c.protocol, GroupProtocol::Consumer);
        assert_eq!(c.remote_assignor.as_deref(), Some("range"));
        assert_eq!(c.rebalance_timeout, Duration::from_secs(20));
    }

    #[test]
    fn the_classic_protocol_refuses_a_remote_assignor_by_name() {
        for protocol in [None, Some("classic")] {
            let mut props = vec![("group.id", "g"), ("group.remote.assignor", "uniform")];
            props.extend(protocol.map(|p| ("group.protocol", p)));
            let (key, message) = config_error(&props);
            assert_eq!(key, "group.remote.assignor");
            assert!(
                message.contains("group.remote.assignor cannot be set when group.protocol=classic"),
                "{message}"
            );
        }
        // Blank is not set, as in Java.
        let c = GroupConfig::from_properties([("group.id", "g"), ("group.remote.assignor", "")])
            .expect("valid");
        assert_eq!(c.remote_assignor, None);
        // Built in code rather than from properties: `validate` refuses it too.
        let mut c = GroupConfig::new("g");
        c.remote_assignor = Some("range".into());
        assert!(
            matches!(c.validate(), Err(Error::Config { key, .. }) if key == "group.remote.assignor")
        );
        c.protocol = GroupProtocol::Consumer;
        c.validate().expect("consumer takes it");
    }

    #[test]
    fn join_and_sync_are_timed_by_the_rebalance_timeout() {
        let mut c = GroupConfig::new("g");
        c.rebalance_timeout = Duration::from_secs(300);
        let request = Duration::from_secs(30);
        assert_eq!(c.join_timeout(request), Duration::from_secs(330));
        assert_eq!(c.sync_timeout(request), Duration::from_secs(300));
        c.rebalance_timeout = Duration::from_secs(10);
        assert_eq!(
            c.sync_timeout(request),
            request,
            "never below the request timeout"
        );
    }

    #[test]
    fn fenced_backoff_grows_and_is_at_least_the_session_timeout() {
        let p = FencedPolicy::RetryAfter(Duration::from_secs(1));
        let s = Duration::from_secs(10);
        assert_eq!(p.backoff(s, 1), Some(Duration::from_secs(10)));
        assert_eq!(p.backoff(s, 2), Some(Duration::from_secs(20)));
        assert_eq!(p.backoff(s, 3), Some(Duration::from_secs(40)));
        assert_eq!(p.backoff(s, 40), Some(Duration::from_secs(3600)));
        assert_eq!(FencedPolicy::Stop.backoff(s, 1), None);
    }
}
