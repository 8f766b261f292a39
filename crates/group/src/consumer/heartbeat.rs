//! What each ConsumerGroupHeartbeat says, as Java's `HeartbeatState` decides it: a full
//! heartbeat when joining (epoch 0) and after a heartbeat that failed or went unanswered (the
//! coordinator may not have seen the last one), else only the fields that changed since the last
//! one sent; the member's identity (group, member id, epoch and, for a static member, instance
//! id) always. KIP-848 makes this matter: the coordinator reads a field that is present as a
//! change, so a heartbeat repeating an old subscription or an outdated list of owned partitions
//! would undo the member's own progress.
//!
//! Also here: the back-off of a static member waiting for its instance id.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use mooring_wire::primitives::Uuid;

use crate::config::GroupConfig;
use crate::requests::{millis, HeartbeatFields};

/// What the member subscribes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TopicSelection {
    /// Topic names.
    Topics(BTreeSet<String>),
    /// A broker-side regular expression (RE2/J, KIP-848's `SubscribedTopicRegex`).
    Regex(String),
}

impl TopicSelection {
    /// The topic names subscribed by name (none for a regex).
    pub(crate) fn topics(&self) -> BTreeSet<String> {
        match self {
            TopicSelection::Topics(topics) => topics.clone(),
            TopicSelection::Regex(_) => BTreeSet::new(),
        }
    }

    fn regex(&self) -> Option<&str> {
        match self {
            TopicSelection::Topics(_) => None,
            TopicSelection::Regex(regex) => Some(regex),
        }
    }
}

/// Partitions by topic id, as heartbeats carry them.
pub(crate) type OwnedById = BTreeMap<Uuid, BTreeSet<i32>>;

/// What the member wants the coordinator to know in its next heartbeat.
#[derive(Debug)]
pub(crate) struct Wanted<'a> {
    pub(crate) member_id: &'a str,
    pub(crate) epoch: i32,
    /// Every field, whatever was sent before (joining).
    pub(crate) full: bool,
    pub(crate) subscription: Option<&'a TopicSelection>,
    pub(crate) owned: &'a OwnedById,
    /// A reconciliation ended: say the owned partitions even if the last heartbeat said the
    /// same set (the acknowledgement the coordinator waits for).
    pub(crate) acknowledge: bool,
}

/// The fields the last heartbeat sent (`None`: not sent since the last reset).
#[derive(Debug, Default)]
pub(crate) struct SentFields {
    rebalance_timeout_ms: Option<i32>,
    topics: Option<BTreeSet<String>>,
    regex: Option<String>,
    server_assignor: Option<String>,
    owned: Option<OwnedById>,
    rack: bool,
}

impl SentFields {
    /// Forgets what was sent: the next heartbeat is full. After a failed or timed-out heartbeat
    /// (the coordinator may not have read it), and when (re)joining.
    pub(crate) fn reset(&mut self) {
        *self = SentFields::default();
    }

    /// The next heartbeat's fields, remembered as sent.
    pub(crate) fn build(&mut self, config: &GroupConfig, wanted: &Wanted<'_>) -> HeartbeatFields {
        if wanted.full {
            self.reset();
        }
        let mut fields = HeartbeatFields {
            member_id: wanted.member_id.to_owned(),
            member_epoch: wanted.epoch,
            instance_id: config.group_instance_id.clone(),
            rebalance_timeout_ms: -1,
            ..Default::default()
        };
        if !self.rack {
            fields.rack_id = config.client_rack.clone();
            self.rack = true;
        }
        let timeout = millis(config.rebalance_timeout);
        if self.rebalance_timeout_ms != Some(timeout) {
            fields.rebalance_timeout_ms = timeout;
            self.rebalance_timeout_ms = Some(timeout);
        }
        if let Some(subscription) = wanted.subscription {
            let topics = subscription.topics();
            if self.topics.as_ref() != Some(&topics) {
                fields.subscribed_topic_names = Some(topics.iter().cloned().collect());
                self.topics = Some(topics);
            }
            let regex = subscription.regex().map(str::to_owned);
            if regex != self.regex {
                // An empty regex removes the one sent before.
                fields.subscribed_topic_regex = Some(regex.clone().unwrap_or_default());
                self.regex = regex;
            }
        }
        if let Some(assignor) = &config.remote_assignor {
            if self.server_assignor.as_ref() != Some(assignor) {
                fields.server_assignor = Some(assignor.clone());
                self.server_assignor = Some(assignor.clone());
            }
        }
        // Joining, the coordinator wants an empty list: the member owns nothing yet.
        let empty = OwnedById::new();
        let owned = if wanted.epoch == 0 {
            &empty
        } else {
            wanted.owned
        };
        if wanted.acknowledge || self.owned.as_ref() != Some(owned) {
            fields.topic_partitions = Some(
                owned
                    .iter()
                    .map(|(id, partitions)| (*id, partitions.iter().copied().collect()))
                    .collect(),
            );
            self.owned = Some(owned.clone());
        }
        fields
    }
}

/// The fields of a leave heartbeat: the member's identity and the leave epoch, nothing else.
pub(crate) fn leave_fields(config: &GroupConfig, member_id: &str, epoch: i32) -> HeartbeatFields {
    HeartbeatFields {
        member_id: member_id.to_owned(),
        member_epoch: epoch,
        instance_id: config.group_instance_id.clone(),
        rebalance_timeout_ms: -1,
        ..Default::default()
    }
}

/// The wait before the `attempt`-th (1-based) retry of a static member whose instance id is
/// still held: `retry.backoff.ms` doubling with every attempt, capped at `cap` (the heartbeat
/// interval, at most 5 s), and never below `retry.backoff.ms`.
pub(crate) fn unreleased_backoff(retry_backoff: Duration, cap: Duration, attempt: u32) -> Duration {
    let cap = cap.min(Duration::from_secs(5)).max(retry_backoff);
    let factor = 1u32 << attempt.saturating_sub(1).min(16);
    retry_backoff.saturating_mul(factor).min(cap)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn config() -> GroupConfig {
        let mut c = GroupConfig::new("g");
        c.group_instance_id = Some("pod-0".into());
        c.client_rack = Some("rack-a".into());
        c.remote_assignor = Some("range".into());
        c.rebalance_timeout = Duration::from_secs(30);
        c
    }

    #[test]
    fn a_join_says_everything_and_a_steady_heartbeat_only_its_identity() {
        let config = config();
        let mut sent = SentFields::default();
        let topics = TopicSelection::Topics(BTreeSet::from(["b".to_string(), "a".to_string()]));
        let owned = OwnedById::from([(Uuid([1; 16]), BTreeSet::from([0]))]);
        let join = sent.build(
            &config,
            &Wanted {
                member_id: "m",
                epoch: 0,
                full: true,
                subscription: Some(&topics),
                owned: &owned,
                acknowledge: false,
            },
        );
        assert_eq!(join.member_epoch, 0);
        assert_eq!(join.instance_id.as_deref(), Some("pod-0"));
        assert_eq!(join.rack_id.as_deref(), Some("rack-a"));
        assert_eq!(join.rebalance_timeout_ms, 30_000);
        assert_eq!(
            join.subscribed_topic_names,
            Some(vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(join.subscribed_topic_regex, None);
        assert_eq!(join.server_assignor.as_deref(), Some("range"));
        assert_eq!(
            join.topic_partitions,
            Some(Vec::new()),
            "joining owns nothing"
        );
        let steady = Wanted {
            member_id: "m",
            epoch: 3,
            full: false,
            subscription: Some(&topics),
            owned: &OwnedById::new(),
            acknowledge: false,
        };
        let next = sent.build(&config, &steady);
        assert_eq!(
            next,
            leave_fields(&config, "m", 3),
            "nothing changed, nothing said"
        );
        let ack = sent.build(
            &config,
            &Wanted {
                acknowledge: true,
                ..steady
            },
        );
        assert_eq!(ack.topic_partitions, Some(Vec::new()), "an acknowledgement");
        sent.reset();
        let after_failure = sent.build(&config, &steady);
        assert_eq!(after_failure.rebalance_timeout_ms, 30_000);
        assert!(after_failure.subscribed_topic_names.is_some());
        assert!(after_failure.topic_partitions.is_some());
        assert!(after_failure.rack_id.is_some());
    }

    #[test]
    fn a_regex_replaces_names_and_is_removed_with_an_empty_string() {
        let config = GroupConfig::new("g");
        let mut sent = SentFields::default();
        let regex = TopicSelection::Regex("orders-.*".into());
        let owned = OwnedById::new();
        let wanted = |subscription, full| Wanted {
            member_id: "m",
            epoch: if full { 0 } else { 2 },
            full,
            subscription: Some(subscription),
            owned: &owned,
            acknowledge: false,
        };
        let join = sent.build(&config, &wanted(&regex, true));
        assert_eq!(join.subscribed_topic_regex.as_deref(), Some("orders-.*"));
        assert_eq!(join.subscribed_topic_names, Some(Vec::new()));
        let topics = TopicSelection::Topics(BTreeSet::from(["t".to_string()]));
        let switched = sent.build(&config, &wanted(&topics, false));
        assert_eq!(switched.subscribed_topic_regex.as_deref(), Some(""));
        assert_eq!(switched.subscribed_topic_names, Some(vec!["t".to_string()]));
    }

    #[test]
    fn the_unreleased_back_off_doubles_up_to_its_cap() {
        let retry = Duration::from_millis(100);
        let cap = Duration::from_secs(3);
        let waits: Vec<u128> = (1..=7)
            .map(|a| unreleased_backoff(retry, cap, a).as_millis())
            .collect();
        assert_eq!(waits, [100, 200, 400, 800, 1600, 3000, 3000]);
        assert_eq!(
            unreleased_backoff(retry, Duration::from_secs(60), 20),
            Duration::from_secs(5)
        );
    }
}
