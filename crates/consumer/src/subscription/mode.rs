//! The three mutually exclusive subscription modes (Java's `SubscriptionType`) and what each one
//! holds: topic names, a pattern and the topics it currently matches, or nothing (manual assign
//! keeps its partitions in the assignment itself).

use std::collections::BTreeSet;
use std::fmt;

use regex::Regex;

use super::SubscriptionError;

/// How the consumer chose its partitions. Once set, only [`unsubscribe`] returns to `None`.
///
/// [`unsubscribe`]: super::SubscriptionState::unsubscribe
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubscriptionMode {
    /// Nothing subscribed or assigned yet (Java's `NONE`).
    None,
    /// `subscribe(topics)`: the group assigns partitions of these topics (`AUTO_TOPICS`).
    Topics,
    /// `subscribe_pattern(regex)`: the group assigns partitions of every matching topic,
    /// re-evaluated when metadata changes (`AUTO_PATTERN`).
    Pattern,
    /// `assign(partitions)`: exactly these partitions, no group membership (`USER_ASSIGNED`).
    ManualAssign,
}

impl SubscriptionMode {
    /// True for the modes whose partitions come from the group (topics and pattern).
    pub fn is_group_managed(self) -> bool {
        matches!(self, SubscriptionMode::Topics | SubscriptionMode::Pattern)
    }
}

impl fmt::Display for SubscriptionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SubscriptionMode::None => "none",
            SubscriptionMode::Topics => "topics",
            SubscriptionMode::Pattern => "pattern",
            SubscriptionMode::ManualAssign => "manual assign",
        })
    }
}

/// A subscription pattern: matched here against metadata (the classic protocol), or by the
/// broker (the `consumer` protocol, KIP-848's `SubscribedTopicRegex`).
#[derive(Debug, Clone)]
pub(crate) struct PatternSubscription {
    /// The pattern as the user wrote it.
    pub(crate) source: String,
    /// The same pattern anchored at both ends (Java's `Matcher.matches()` matches the whole
    /// name); `None` when the broker matches it, so every topic the group assigns is covered.
    pub(crate) anchored: Option<Regex>,
    /// The topics matched at the last [`update_pattern_matches`](super::SubscriptionState::update_pattern_matches)
    /// (always empty when the broker matches).
    pub(crate) matched: BTreeSet<String>,
}

impl PatternSubscription {
    /// A pattern matched here, with the `regex` crate.
    pub(crate) fn compile(source: &str) -> Result<Self, SubscriptionError> {
        let anchored = Regex::new(&format!("^(?:{source})$")).map_err(|e| {
            SubscriptionError::InvalidPattern {
                pattern: source.to_owned(),
                reason: e.to_string(),
            }
        })?;
        Ok(PatternSubscription {
            source: source.to_owned(),
            anchored: Some(anchored),
            matched: BTreeSet::new(),
        })
    }

    /// A pattern the broker matches (RE2/J syntax, which it checks: nothing is compiled here, so
    /// no pattern the broker takes is refused by another engine's syntax). Only an empty one is
    /// refused, as Java's `subscribe(SubscriptionPattern)` does.
    pub(crate) fn on_broker(source: &str) -> Result<Self, SubscriptionError> {
        if source.is_empty() {
            return Err(SubscriptionError::InvalidPattern {
                pattern: String::new(),
                reason: "the pattern to subscribe to cannot be empty".into(),
            });
        }
        Ok(PatternSubscription {
            source: source.to_owned(),
            anchored: None,
            matched: BTreeSet::new(),
        })
    }

    /// Whether the broker matches this pattern.
    pub(crate) fn on_the_broker(&self) -> bool {
        self.anchored.is_none()
    }

    pub(crate) fn matches(&self, topic: &str) -> bool {
        self.anchored.as_ref().is_none_or(|re| re.is_match(topic))
    }
}

/// What the consumer is subscribed to, one variant per mode.
#[derive(Debug, Clone, Default)]
pub(crate) enum Subscribed {
    #[default]
    None,
    Topics(BTreeSet<String>),
    Pattern(PatternSubscription),
    ManualAssign,
}

impl Subscribed {
    pub(crate) fn mode(&self) -> SubscriptionMode {
        match self {
            Subscribed::None => SubscriptionMode::None,
            Subscribed::Topics(_) => SubscriptionMode::Topics,
            Subscribed::Pattern(_) => SubscriptionMode::Pattern,
            Subscribed::ManualAssign => SubscriptionMode::ManualAssign,
        }
    }

    /// Whether a partition of `topic` may be assigned by the group in this mode.
    pub(crate) fn covers(&self, topic: &str) -> bool {
        match self {
            Subscribed::Topics(topics) => topics.contains(topic),
            Subscribed::Pattern(p) => p.matches(topic),
            Subscribed::None | Subscribed::ManualAssign => false,
        }
    }
}
