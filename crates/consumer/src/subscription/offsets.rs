//! Offsets as the subscription state stores them: the fetch position (offset plus the leader epoch
//! it was read under, KIP-320), the reset strategy
//! (`auto.offset.reset`), and the ListOffsets look-ups the fetcher sends to resolve resets and
//! `offsets_for_times`.

use std::collections::BTreeMap;
use std::fmt;

use mooring_client::{OffsetAndMetadata, OffsetSpec};

use super::TopicPartition;

/// What to do for a partition that has no usable position: Kafka's `auto.offset.reset`.
///
/// ```
/// use mooring_consumer::subscription::OffsetResetStrategy;
///
/// assert_eq!("earliest".parse::<OffsetResetStrategy>(), Ok(OffsetResetStrategy::Earliest));
/// assert_eq!(OffsetResetStrategy::default(), OffsetResetStrategy::Latest);
/// assert!("smallest".parse::<OffsetResetStrategy>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OffsetResetStrategy {
    /// Start from the log start offset.
    Earliest,
    /// Start from the log end offset (Java's default).
    #[default]
    Latest,
    /// Do not reset: a partition without a committed offset is an error
    /// ([`SubscriptionError::NoOffsetForPartition`](super::SubscriptionError::NoOffsetForPartition)).
    None,
}

impl OffsetResetStrategy {
    /// The property value, as in `auto.offset.reset`.
    pub fn as_str(self) -> &'static str {
        match self {
            OffsetResetStrategy::Earliest => "earliest",
            OffsetResetStrategy::Latest => "latest",
            OffsetResetStrategy::None => "none",
        }
    }

    /// The ListOffsets timestamp that resolves this strategy, `None` for [`Self::None`].
    pub fn offset_spec(self) -> Option<OffsetSpec> {
        match self {
            OffsetResetStrategy::Earliest => Some(OffsetSpec::Earliest),
            OffsetResetStrategy::Latest => Some(OffsetSpec::Latest),
            OffsetResetStrategy::None => None,
        }
    }
}

impl fmt::Display for OffsetResetStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing an `auto.offset.reset` value: it carries the value given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid auto.offset.reset value {0:?}: expected earliest, latest or none")]
pub struct ParseResetStrategyError(pub String);

impl std::str::FromStr for OffsetResetStrategy {
    type Err = ParseResetStrategyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "earliest" => Ok(OffsetResetStrategy::Earliest),
            "latest" => Ok(OffsetResetStrategy::Latest),
            "none" => Ok(OffsetResetStrategy::None),
            other => Err(ParseResetStrategyError(other.to_owned())),
        }
    }
}

/// The next offset to fetch and the leader epoch of the record before it (KIP-320), when known.
///
/// ```
/// use mooring_consumer::subscription::FetchPosition;
///
/// let p = FetchPosition::new(42).with_leader_epoch(7);
/// assert_eq!((p.offset, p.leader_epoch), (42, Some(7)));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FetchPosition {
    /// The offset of the next record to fetch.
    pub offset: i64,
    /// The leader epoch the previous record was written under, if known.
    pub leader_epoch: Option<i32>,
}

impl FetchPosition {
    /// A position without a known leader epoch.
    pub fn new(offset: i64) -> Self {
        FetchPosition {
            offset,
            leader_epoch: None,
        }
    }

    /// The same position with a leader epoch.
    pub fn with_leader_epoch(mut self, epoch: i32) -> Self {
        self.leader_epoch = Some(epoch);
        self
    }
}

/// The fetch position a commit resumes from.
impl From<&OffsetAndMetadata> for FetchPosition {
    fn from(committed: &OffsetAndMetadata) -> Self {
        FetchPosition {
            offset: committed.offset,
            leader_epoch: committed.leader_epoch,
        }
    }
}

/// Why a ListOffsets look-up is made: the answer is applied differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListOffsetsPurpose {
    /// Resolve pending resets: the answer becomes the position through
    /// [`SubscriptionState::complete_reset`](super::SubscriptionState::complete_reset).
    Reset,
    /// Answer the user's `offsets_for_times`: the answer goes back to the user, positions unchanged.
    OffsetsForTimes,
}

/// A ListOffsets look-up for the fetcher to send, one spec per partition.
///
/// ```
/// use mooring_consumer::subscription::{ListOffsetsPurpose, ListOffsetsRequest, OffsetSpec};
/// use mooring_consumer::TopicPartition;
///
/// let req = ListOffsetsRequest::offsets_for_times([(TopicPartition::new("t", 0), 1_000)]);
/// assert_eq!(req.purpose, ListOffsetsPurpose::OffsetsForTimes);
/// assert_eq!(req.partitions[&TopicPartition::new("t", 0)], OffsetSpec::Timestamp(1_000));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListOffsetsRequest {
    /// Why the look-up is made.
    pub purpose: ListOffsetsPurpose,
    /// What to look up, per partition.
    pub partitions: BTreeMap<TopicPartition, OffsetSpec>,
}

impl ListOffsetsRequest {
    /// Java's `offsetsForTimes`: for each partition, the earliest offset whose timestamp is at or
    /// after the given milliseconds since the epoch.
    pub fn offsets_for_times(timestamps: impl IntoIterator<Item = (TopicPartition, i64)>) -> Self {
        ListOffsetsRequest {
            purpose: ListOffsetsPurpose::OffsetsForTimes,
            partitions: timestamps
                .into_iter()
                .map(|(tp, ts)| (tp, OffsetSpec::Timestamp(ts)))
                .collect(),
        }
    }

    /// True when there is nothing to look up.
    pub fn is_empty(&self) -> bool {
        self.partitions.is_empty()
    }
}
