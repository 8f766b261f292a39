//! [`SubscriptionState`]: the subscription, the assignment and each assigned partition's state.
//! The rules it follows are in [the module docs](super).

use std::collections::{BTreeMap, BTreeSet};

use super::mode::{PatternSubscription, Subscribed};
use super::{
    FetchPosition, ListOffsetsPurpose, ListOffsetsRequest, OffsetAndMetadata, OffsetResetStrategy,
    PartitionFetchInfo, PartitionState, SubscriptionError, SubscriptionMode, TopicPartition,
};

/// The consumer's memory of what it subscribed to and where it is in every assigned partition.
///
/// ```
/// use mooring_consumer::subscription::{OffsetResetStrategy, SubscriptionError, SubscriptionMode, SubscriptionState};
/// use mooring_consumer::TopicPartition;
///
/// let mut subs = SubscriptionState::new(OffsetResetStrategy::Earliest);
/// subs.subscribe(["orders"])?;
/// // Mixing modes is a typed error.
/// assert_eq!(
///     subs.assign([TopicPartition::new("orders", 0)]),
///     Err(SubscriptionError::ModeConflict {
///         current: SubscriptionMode::Topics,
///         requested: SubscriptionMode::ManualAssign,
///     })
/// );
/// // The group hands us a partition; it starts without a position.
/// let tp = TopicPartition::new("orders", 0);
/// subs.assign_from_group([tp.clone()])?;
/// assert!(!subs.is_fetchable(&tp));
/// subs.seek(&tp, 10)?;
/// assert!(subs.is_fetchable(&tp));
/// subs.pause([tp.clone()])?;
/// assert!(!subs.is_fetchable(&tp));
/// # Ok::<(), SubscriptionError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct SubscriptionState {
    subscription: Subscribed,
    assignment: BTreeMap<TopicPartition, PartitionState>,
    default_reset: OffsetResetStrategy,
}

impl SubscriptionState {
    /// An empty state (mode `None`) with the configured `auto.offset.reset`.
    pub fn new(default_reset: OffsetResetStrategy) -> Self {
        SubscriptionState {
            subscription: Subscribed::None,
            assignment: BTreeMap::new(),
            default_reset,
        }
    }

    /// The mode in use.
    pub fn mode(&self) -> SubscriptionMode {
        self.subscription.mode()
    }

    /// The configured `auto.offset.reset`.
    pub fn default_reset_strategy(&self) -> OffsetResetStrategy {
        self.default_reset
    }

    fn set_mode(&self, requested: SubscriptionMode) -> Result<(), SubscriptionError> {
        let current = self.mode();
        if current == SubscriptionMode::None || current == requested {
            Ok(())
        } else {
            Err(SubscriptionError::ModeConflict { current, requested })
        }
    }

    /// Subscribes to these topics; the group assigns their partitions. Returns whether the topic
    /// set changed (the member must then rejoin). An empty list unsubscribes whatever the mode,
    /// as in Java.
    ///
    /// The assignment is not touched: partitions of topics no longer subscribed stay until the
    /// group revokes them ([`Self::assigned_outside_subscription`] lists them), so their finished
    /// work is still committed by the revoke path.
    pub fn subscribe<I, S>(&mut self, topics: I) -> Result<bool, SubscriptionError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let topics: BTreeSet<String> = topics.into_iter().map(Into::into).collect();
        if topics.is_empty() {
            let had = self.mode() != SubscriptionMode::None;
            self.unsubscribe();
            return Ok(had);
        }
        self.set_mode(SubscriptionMode::Topics)?;
        let changed = !matches!(&self.subscription, Subscribed::Topics(t) if *t == topics);
        self.subscription = Subscribed::Topics(topics);
        Ok(changed)
    }

    /// Subscribes to every topic whose whole name matches `pattern` (Java's
    /// `Pattern.matcher(topic).matches()`), matched here with the `regex` crate (the classic
    /// protocol). No topic matches until the first [`Self::update_pattern_matches`]. Returns
    /// whether the pattern changed.
    pub fn subscribe_pattern(&mut self, pattern: &str) -> Result<bool, SubscriptionError> {
        self.set_pattern(pattern, false)
    }

    /// Subscribes to the topics the broker matches `pattern` against (the `consumer` protocol:
    /// RE2/J, the whole name): nothing is matched here, and every partition the group assigns
    /// is accepted, whatever its topic. Returns whether the pattern changed.
    pub fn subscribe_broker_pattern(&mut self, pattern: &str) -> Result<bool, SubscriptionError> {
        self.set_pattern(pattern, true)
    }

    fn set_pattern(&mut self, pattern: &str, on_broker: bool) -> Result<bool, SubscriptionError> {
        self.set_mode(SubscriptionMode::Pattern)?;
        if let Subscribed::Pattern(p) = &self.subscription {
            if p.source == pattern && p.on_the_broker() == on_broker {
                return Ok(false);
            }
        }
        self.subscription = Subscribed::Pattern(if on_broker {
            PatternSubscription::on_broker(pattern)?
        } else {
            PatternSubscription::compile(pattern)?
        });
        Ok(true)
    }

    /// Whether the subscription is a pattern the broker matches
    /// ([`Self::subscribe_broker_pattern`]).
    pub fn pattern_on_broker(&self) -> bool {
        matches!(&self.subscription, Subscribed::Pattern(p) if p.on_the_broker())
    }

    /// Re-evaluates the pattern against the topics the cluster metadata lists (the caller leaves
    /// internal topics out, as `exclude.internal.topics` asks). Returns whether the matched set
    /// changed, i.e. whether the member must rejoin. Outside pattern mode, or for a pattern the
    /// broker matches: `false`.
    pub fn update_pattern_matches<I, S>(&mut self, all_topics: I) -> bool
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let Subscribed::Pattern(p) = &mut self.subscription else {
            return false;
        };
        if p.on_the_broker() {
            return false;
        }
        let matched: BTreeSet<String> = all_topics
            .into_iter()
            .filter(|t| p.matches(t.as_ref()))
            .map(|t| t.as_ref().to_owned())
            .collect();
        let changed = matched != p.matched;
        p.matched = matched;
        changed
    }

    /// The pattern in use, as given.
    pub fn pattern(&self) -> Option<&str> {
        match &self.subscription {
            Subscribed::Pattern(p) => Some(&p.source),
            _ => None,
        }
    }

    /// The topics the member asks the group for by name: the subscribed topics, or the topics the
    /// pattern matched last; empty in the other modes, and for a pattern the broker matches.
    pub fn subscribed_topics(&self) -> BTreeSet<String> {
        match &self.subscription {
            Subscribed::Topics(t) => t.clone(),
            Subscribed::Pattern(p) => p.matched.clone(),
            Subscribed::None | Subscribed::ManualAssign => BTreeSet::new(),
        }
    }

    /// Assigns exactly these partitions by hand (no group). Partitions kept from the previous
    /// manual assignment keep their state; the others are dropped. Returns whether the set
    /// changed. An empty list unsubscribes whatever the mode, as in Java.
    pub fn assign<I>(&mut self, partitions: I) -> Result<bool, SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        let wanted: BTreeSet<TopicPartition> = partitions.into_iter().collect();
        if wanted.is_empty() {
            let had = self.mode() != SubscriptionMode::None;
            self.unsubscribe();
            return Ok(had);
        }
        self.set_mode(SubscriptionMode::ManualAssign)?;
        self.subscription = Subscribed::ManualAssign;
        let changed = !self.assignment.keys().eq(wanted.iter());
        self.assignment.retain(|tp, _| wanted.contains(tp));
        for tp in wanted {
            self.assignment.entry(tp).or_default();
        }
        Ok(changed)
    }

    /// Clears the subscription and the assignment and returns to mode `None`. Returns the
    /// partitions that were assigned: the runtime revokes (and commits) them first.
    pub fn unsubscribe(&mut self) -> Vec<TopicPartition> {
        self.subscription = Subscribed::None;
        std::mem::take(&mut self.assignment).into_keys().collect()
    }

    /// Adds partitions the group assigned (eager: the whole new assignment after a full revoke;
    /// cooperative: the incremental additions). A partition already assigned keeps its state;
    /// a new one starts unknown and unpaused. All-or-nothing: every partition must belong to the
    /// subscription.
    pub fn assign_from_group<I>(&mut self, added: I) -> Result<(), SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        let current = self.mode();
        if !current.is_group_managed() {
            return Err(SubscriptionError::NotGroupManaged { current });
        }
        let added: BTreeSet<TopicPartition> = added.into_iter().collect();
        let outside: Vec<TopicPartition> = added
            .iter()
            .filter(|tp| !self.subscription.covers(&tp.topic))
            .cloned()
            .collect();
        if !outside.is_empty() {
            return Err(SubscriptionError::NotSubscribed {
                partitions: outside,
            });
        }
        for tp in added {
            self.assignment.entry(tp).or_default();
        }
        Ok(())
    }

    /// Removes revoked partitions with their state (pause flags included). Returns those that
    /// were assigned.
    pub fn revoke<'a, I>(&mut self, removed: I) -> Vec<TopicPartition>
    where
        I: IntoIterator<Item = &'a TopicPartition>,
    {
        removed
            .into_iter()
            .filter(|tp| self.assignment.remove(*tp).is_some())
            .cloned()
            .collect()
    }

    /// Removes every partition because the membership was lost (session timeout, fenced): the
    /// state goes as with a revoke, but the runtime must not commit. Returns what was assigned.
    pub fn lose_all(&mut self) -> Vec<TopicPartition> {
        std::mem::take(&mut self.assignment).into_keys().collect()
    }

    /// Assigned partitions whose topic the subscription no longer covers (after `subscribe` with
    /// fewer topics or a pattern update): the member revokes them at the next rebalance.
    pub fn assigned_outside_subscription(&self) -> Vec<TopicPartition> {
        if !self.mode().is_group_managed() {
            return Vec::new();
        }
        self.assignment
            .keys()
            .filter(|tp| !self.subscription.covers(&tp.topic))
            .cloned()
            .collect()
    }

    /// The assigned partitions, sorted.
    pub fn assigned_partitions(&self) -> Vec<TopicPartition> {
        self.assignment.keys().cloned().collect()
    }

    /// Whether this partition is assigned.
    pub fn is_assigned(&self, tp: &TopicPartition) -> bool {
        self.assignment.contains_key(tp)
    }

    /// The state of an assigned partition.
    pub fn partition(&self, tp: &TopicPartition) -> Option<&PartitionState> {
        self.assignment.get(tp)
    }

    /// Every assigned partition with its state, sorted.
    pub fn partitions(&self) -> impl Iterator<Item = (&TopicPartition, &PartitionState)> {
        self.assignment.iter()
    }

    fn require_assigned<'a>(
        &self,
        tps: impl IntoIterator<Item = &'a TopicPartition>,
    ) -> Result<(), SubscriptionError> {
        let missing: Vec<TopicPartition> = tps
            .into_iter()
            .filter(|tp| !self.assignment.contains_key(*tp))
            .cloned()
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(SubscriptionError::NotAssigned {
                partitions: missing,
            })
        }
    }

    fn state_mut(&mut self, tp: &TopicPartition) -> Result<&mut PartitionState, SubscriptionError> {
        self.assignment
            .get_mut(tp)
            .ok_or_else(|| SubscriptionError::NotAssigned {
                partitions: vec![tp.clone()],
            })
    }

    // ---- pause / resume -------------------------------------------------------------------

    /// Pauses these assigned partitions (all-or-nothing: an unassigned one is an error and nothing
    /// changes). The pause holds until `resume` or until the partition leaves the assignment.
    pub fn pause<I>(&mut self, partitions: I) -> Result<(), SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        self.set_paused(partitions, true)
    }

    /// Holds (`true`) or releases these assigned partitions from fetching while the application's
    /// `assigned` listener runs; partitions no longer assigned are skipped.
    pub(crate) fn hold_for_listener(&mut self, partitions: &[TopicPartition], held: bool) {
        for tp in partitions {
            if let Some(s) = self.assignment.get_mut(tp) {
                s.held_for_listener = held;
            }
        }
    }

    /// Resumes these assigned partitions (all-or-nothing, as [`Self::pause`]).
    pub fn resume<I>(&mut self, partitions: I) -> Result<(), SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        self.set_paused(partitions, false)
    }

    fn set_paused<I>(&mut self, partitions: I, paused: bool) -> Result<(), SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        let tps: Vec<TopicPartition> = partitions.into_iter().collect();
        self.require_assigned(&tps)?;
        for tp in &tps {
            if let Some(s) = self.assignment.get_mut(tp) {
                s.paused = paused;
            }
        }
        Ok(())
    }

    /// Pauses every partition of `topic` assigned now; returns them. As in Java, partitions of the
    /// topic assigned later start unpaused (a pause is a per-partition flag, not a topic rule).
    pub fn pause_topic(&mut self, topic: &str) -> Vec<TopicPartition> {
        self.set_topic_paused(topic, true)
    }

    /// Resumes every partition of `topic` assigned now; returns them.
    pub fn resume_topic(&mut self, topic: &str) -> Vec<TopicPartition> {
        self.set_topic_paused(topic, false)
    }

    fn set_topic_paused(&mut self, topic: &str, paused: bool) -> Vec<TopicPartition> {
        self.assignment
            .iter_mut()
            .filter(|(tp, _)| tp.topic == topic)
            .map(|(tp, s)| {
                s.paused = paused;
                tp.clone()
            })
            .collect()
    }

    /// The partitions paused by the user, sorted.
    pub fn paused_partitions(&self) -> Vec<TopicPartition> {
        self.assignment
            .iter()
            .filter(|(_, s)| s.paused)
            .map(|(tp, _)| tp.clone())
            .collect()
    }

    /// Sets the backpressure flag the processing engine drives (independent of the user's pause).
    /// Returns `false`, changing nothing, when the partition is no longer assigned: a late signal
    /// for a revoked partition is harmless.
    pub fn set_paused_by_backpressure(&mut self, tp: &TopicPartition, paused: bool) -> bool {
        match self.assignment.get_mut(tp) {
            Some(s) => {
                s.paused_by_backpressure = paused;
                true
            }
            None => false,
        }
    }

    /// Sets every assigned partition's backpressure flag from the set the processing engine
    /// reports (`ProcessingEngine::backpressured_partitions`): level-triggered, so a missed event
    /// cannot leave a partition paused. Partitions not assigned are ignored.
    pub fn sync_backpressure(&mut self, backpressured: &[TopicPartition]) {
        for (tp, s) in self.assignment.iter_mut() {
            s.paused_by_backpressure = backpressured.contains(tp);
        }
    }

    /// Whether the fetcher may fetch this partition: assigned, not paused by the user nor by
    /// backpressure, position known.
    pub fn is_fetchable(&self, tp: &TopicPartition) -> bool {
        self.assignment
            .get(tp)
            .is_some_and(PartitionState::is_fetchable)
    }

    /// The partitions the fetcher may fetch now, sorted.
    pub fn fetchable_partitions(&self) -> Vec<TopicPartition> {
        self.assignment
            .iter()
            .filter(|(_, s)| s.is_fetchable())
            .map(|(tp, _)| tp.clone())
            .collect()
    }

    // ---- positions ------------------------------------------------------------------------

    /// The next offset to fetch for an assigned partition, once known.
    pub fn position(&self, tp: &TopicPartition) -> Option<FetchPosition> {
        self.assignment.get(tp).and_then(|s| s.position)
    }

    /// Moves the position to `offset` (Java's `seek`), cancelling a pending reset.
    pub fn seek(&mut self, tp: &TopicPartition, offset: i64) -> Result<(), SubscriptionError> {
        self.seek_to_position(tp, FetchPosition::new(offset))
    }

    /// Moves the position, with a leader epoch, cancelling a pending reset. The fetcher also uses
    /// it to advance the position past the records it handed out.
    pub fn seek_to_position(
        &mut self,
        tp: &TopicPartition,
        position: FetchPosition,
    ) -> Result<(), SubscriptionError> {
        if position.offset < 0 {
            return Err(SubscriptionError::InvalidOffset {
                partition: tp.clone(),
                offset: position.offset,
            });
        }
        self.state_mut(tp)?.seek(position);
        Ok(())
    }

    /// Marks these partitions (all assigned ones when empty, as Java) for a reset to the log
    /// start; the position is unknown until the fetcher resolves it.
    pub fn seek_to_beginning<I>(&mut self, partitions: I) -> Result<(), SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        self.request_reset(partitions, OffsetResetStrategy::Earliest)
    }

    /// Marks these partitions (all assigned ones when empty) for a reset to the log end.
    pub fn seek_to_end<I>(&mut self, partitions: I) -> Result<(), SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        self.request_reset(partitions, OffsetResetStrategy::Latest)
    }

    fn request_reset<I>(
        &mut self,
        partitions: I,
        strategy: OffsetResetStrategy,
    ) -> Result<(), SubscriptionError>
    where
        I: IntoIterator<Item = TopicPartition>,
    {
        let mut tps: Vec<TopicPartition> = partitions.into_iter().collect();
        if tps.is_empty() {
            tps = self.assigned_partitions();
        }
        self.require_assigned(&tps)?;
        for tp in &tps {
            if let Some(s) = self.assignment.get_mut(tp) {
                s.request_reset(strategy);
            }
        }
        Ok(())
    }

    /// Records a committed offset learnt from OffsetFetch or from our own successful commit.
    /// Ignored (returns `false`) for a partition no longer assigned.
    pub fn set_committed(&mut self, tp: &TopicPartition, committed: OffsetAndMetadata) -> bool {
        match self.assignment.get_mut(tp) {
            Some(s) => {
                s.committed = Some(committed);
                true
            }
            None => false,
        }
    }

    /// The partitions that need their committed offset fetched before they can start: assigned,
    /// no position and no reset pending.
    pub fn initializing_partitions(&self) -> Vec<TopicPartition> {
        self.assignment
            .iter()
            .filter(|(_, s)| s.is_initializing())
            .map(|(tp, _)| tp.clone())
            .collect()
    }

    /// Applies an OffsetFetch answer: each initializing partition with a committed offset starts
    /// from it. `None` entries (no offset committed) are left for [`Self::reset_missing_positions`].
    pub fn apply_committed_offsets<I>(&mut self, fetched: I)
    where
        I: IntoIterator<Item = (TopicPartition, Option<OffsetAndMetadata>)>,
    {
        for (tp, committed) in fetched {
            let Some(s) = self.assignment.get_mut(&tp) else {
                continue;
            };
            if let Some(c) = committed {
                if s.is_initializing() {
                    s.position = Some(FetchPosition::from(&c));
                }
                s.committed = Some(c);
            }
        }
    }

    /// Gives every still-initializing partition the default reset strategy and returns the
    /// ListOffsets look-up for all pending resets. With `auto.offset.reset=none` any initializing
    /// partition is an error naming all of them (and nothing changes).
    pub fn reset_missing_positions(&mut self) -> Result<ListOffsetsRequest, SubscriptionError> {
        let initializing = self.initializing_partitions();
        if !initializing.is_empty() {
            if self.default_reset == OffsetResetStrategy::None {
                return Err(SubscriptionError::NoOffsetForPartition {
                    partitions: initializing,
                });
            }
            for tp in &initializing {
                if let Some(s) = self.assignment.get_mut(tp) {
                    s.reset_pending = Some(self.default_reset);
                }
            }
        }
        Ok(self.pending_resets())
    }

    /// The ListOffsets look-up resolving every pending reset (earliest → -2, latest → -1).
    pub fn pending_resets(&self) -> ListOffsetsRequest {
        ListOffsetsRequest {
            purpose: ListOffsetsPurpose::Reset,
            partitions: self
                .assignment
                .iter()
                .filter_map(|(tp, s)| {
                    let spec = s.reset_pending?.offset_spec()?;
                    Some((tp.clone(), spec))
                })
                .collect(),
        }
    }

    /// Applies a ListOffsets answer to a pending reset. Applied only if the partition is still
    /// assigned and still waiting for a reset with the same strategy (a seek or another reset in
    /// between wins, as Java's `maybeSeekUnvalidated`). Returns whether it was applied.
    pub fn complete_reset(
        &mut self,
        tp: &TopicPartition,
        strategy: OffsetResetStrategy,
        position: FetchPosition,
    ) -> bool {
        match self.assignment.get_mut(tp) {
            Some(s) if s.reset_pending == Some(strategy) && position.offset >= 0 => {
                s.seek(position);
                true
            }
            _ => false,
        }
    }

    /// Records the watermarks a fetch response reported. Ignored for unassigned partitions.
    pub fn update_fetch_info(&mut self, tp: &TopicPartition, info: PartitionFetchInfo) -> bool {
        let Some(s) = self.assignment.get_mut(tp) else {
            return false;
        };
        if let Some(hw) = info.high_watermark {
            s.high_watermark = Some(hw);
        }
        if let Some(lso) = info.last_stable_offset {
            s.last_stable_offset = Some(lso);
        }
        if let Some(lso) = info.log_start_offset {
            s.log_start_offset = Some(lso);
        }
        true
    }
}
