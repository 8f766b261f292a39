//! Offset initialisation: partitions without a position start from the group's committed offset
//! (OffsetFetch through the member), the rest by `auto.offset.reset` — earliest or latest through
//! ListOffsets to each partition's leader (at the configured isolation level), `none` a typed
//! error naming every such partition. Pending resets (`seek_to_beginning`, `seek_to_end`,
//! OFFSET_OUT_OF_RANGE) are resolved the same way. An answer overtaken by a seek is dropped
//! (`SubscriptionState::complete_reset`).

use std::collections::BTreeMap;

use mooring_client::Client;
use mooring_group::GroupHandle;

use crate::config::IsolationLevel;
use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::shared::Shared;
use crate::subscription::{FetchPosition, OffsetResetStrategy, OffsetSpec, SubscriptionError};
use crate::TopicPartition;

/// Whether any partition waits for a committed offset or a reset.
pub(crate) fn needed(shared: &Shared) -> bool {
    let subs = shared.subs();
    let needed = subs
        .partitions()
        .any(|(_, s)| s.is_initializing() || s.reset_pending().is_some());
    needed
}

/// Gives every partition that has none a position (see the module docs).
pub(crate) async fn initialize(
    shared: &Shared,
    member: Option<&GroupHandle<Client>>,
) -> Result<(), ConsumerError> {
    let initializing = shared.subs().initializing_partitions();
    if let (false, Some(member)) = (initializing.is_empty(), member) {
        let epoch = shared.assignment_epoch();
        let found = member.committed(initializing.iter().cloned()).await?;
        let found = found
            .into_iter()
            .map(|(tp, committed)| (tp, committed.filter(|c| c.offset >= 0)));
        let mut subs = shared.subs();
        // A rebalance in between may have committed newer offsets: look again next round.
        if shared.assignment_epoch() != epoch {
            return Ok(());
        }
        subs.apply_committed_offsets(found);
    }
    let request = shared
        .subs()
        .reset_missing_positions()
        .map_err(|e| match e {
            SubscriptionError::NoOffsetForPartition { partitions } => {
                ConsumerError::NoOffsetForPartition { partitions }
            }
            other => ConsumerError::Subscription(other),
        })?;
    let mut by_strategy: BTreeMap<u8, (OffsetResetStrategy, OffsetSpec, Vec<TopicPartition>)> =
        BTreeMap::new();
    for (tp, spec) in request.partitions {
        let (key, strategy) = match spec {
            OffsetSpec::Earliest => (0, OffsetResetStrategy::Earliest),
            OffsetSpec::Latest => (1, OffsetResetStrategy::Latest),
            // Resets never ask by time.
            OffsetSpec::Timestamp(_) => continue,
        };
        by_strategy
            .entry(key)
            .or_insert_with(|| (strategy, spec, Vec::new()))
            .2
            .push(tp);
    }
    let read_committed = shared.config.fetch.isolation_level == IsolationLevel::ReadCommitted;
    for (_, (strategy, spec, partitions)) in by_strategy {
        let listed = shared
            .fetch_client
            .list_offsets_with(&partitions, spec, read_committed)
            .await?;
        for (tp, offset) in listed {
            let mut position = FetchPosition::new(offset.offset);
            if let Some(epoch) = offset.leader_epoch {
                position = position.with_leader_epoch(epoch);
            }
            if shared.subs().complete_reset(&tp, strategy, position) {
                tracing::debug!(partition = %tp, %strategy, offset = offset.offset, "offset reset");
                shared.emit(ConsumerEvent::OffsetReset {
                    partition: tp,
                    strategy,
                    offset: offset.offset,
                });
            }
        }
    }
    Ok(())
}
