//! Subscription state: what the consumer subscribed to and where it stands in each assigned
//! partition (Java's `SubscriptionState`, as the seed article 第27篇 walks through it).
//!
//! # Modes
//! Three mutually exclusive modes ([`SubscriptionMode`]): `subscribe(topics)` (Java's
//! `AUTO_TOPICS`), `subscribe_pattern(regex)` (`AUTO_PATTERN`, re-evaluated with
//! [`SubscriptionState::update_pattern_matches`] whenever metadata changes; the pattern must match
//! the whole topic name) and `assign(partitions)` (`USER_ASSIGNED`, no group). Under the
//! `consumer` group protocol the broker matches the pattern
//! ([`SubscriptionState::subscribe_broker_pattern`], KIP-848's `SubscribedTopicRegex`): nothing
//! is matched here, and whatever the group assigns for it is accepted. Switching modes
//! without [`SubscriptionState::unsubscribe`] is [`SubscriptionError::ModeConflict`]; calling
//! `subscribe` or `assign` again in the same mode replaces the set. An empty list unsubscribes,
//! as in Java.
//!
//! # Per-partition state
//! Each assigned partition has a [`PartitionState`]: position (offset + leader epoch), committed
//! offset (+ metadata), high watermark, last stable offset, log start offset, the user's pause,
//! a separate backpressure pause driven by the processing engine, and a pending reset. It is
//! *fetchable* when assigned, paused by neither, and its position is known.
//!
//! # Positions and `auto.offset.reset`
//! A new partition starts *initializing* (no position, no reset). The runtime fetches committed
//! offsets ([`SubscriptionState::initializing_partitions`] →
//! [`SubscriptionState::apply_committed_offsets`]); partitions still without one get the
//! default strategy from [`SubscriptionState::reset_missing_positions`], which returns the
//! [`ListOffsetsRequest`] for the fetcher. With `none` that call fails with
//! [`SubscriptionError::NoOffsetForPartition`] naming every such partition.
//! `seek_to_beginning` / `seek_to_end` mark a reset pending the same way; `seek` sets the position
//! and cancels a pending reset, and an answer for a reset that was overtaken is dropped
//! ([`SubscriptionState::complete_reset`]).
//!
//! # The pause rule
//! **A pause holds while the partition stays assigned to this member; a partition that is revoked
//! (or lost) and later assigned again starts unpaused.** The pause is a flag in the partition's
//! state and the state lives exactly as long as the assignment:
//! - eager rebalance: every partition is revoked, so every pause ends, even for partitions the
//!   member gets back;
//! - cooperative rebalance (KIP-429): [`SubscriptionState::revoke`] removes only the moving
//!   partitions and [`SubscriptionState::assign_from_group`] keeps the state of a partition already
//!   assigned, so partitions that stay keep their pause, position and committed offset;
//! - pausing a topic ([`SubscriptionState::pause_topic`]) pauses the partitions of it assigned now.
//!   Following Java, partitions of that topic assigned later start unpaused.
//!
//! The backpressure pause follows the same lifetime but is only set and cleared by the processing
//! engine ([`SubscriptionState::set_paused_by_backpressure`]); `resume` does not clear it.
//!
//! # Assignment changes
//! Subscribing to fewer topics does not drop partitions at once (unlike the seed's older Java):
//! the state stays until the group revokes them, so the revoke path can still commit their finished
//! work; [`SubscriptionState::assigned_outside_subscription`] lists them for the member.

mod error;
mod mode;
mod offsets;
mod partition;
mod state;

#[cfg(test)]
mod tests;

pub use crate::TopicPartition;
pub use error::SubscriptionError;
pub use mode::SubscriptionMode;
pub use mooring_client::{OffsetAndMetadata, OffsetAndTimestamp, OffsetSpec};
pub use offsets::{
    FetchPosition, ListOffsetsPurpose, ListOffsetsRequest, OffsetResetStrategy,
    ParseResetStrategyError,
};
pub use partition::{PartitionFetchInfo, PartitionState};
pub use state::SubscriptionState;
