//! Commits: the processing engine's committable offsets (never past an unfinished record) of the
//! partitions this member still owns, only where they are above the offset committed before
//! (commits only move forward: after a seek backwards the committed offset stays until processing
//! passes it again). Commits
//! are serialized (an async mutex, held across the OffsetCommit on purpose), so an older offset
//! can never land after a newer one.

use std::collections::BTreeMap;

use mooring_coordinator::group::{GroupHandle, OffsetAndMetadata};
use mooring_coordinator::Client;
use tracing::Instrument;

use crate::error::ConsumerError;
use crate::otel::spans;
use crate::processing::{Handler, ProcessingEngine};
use crate::shared::Shared;
use crate::subscription::CommittedOffset;
use crate::TopicPartition;

/// The engine seen through what commits and manual assignment need, without its handler type.
pub(crate) trait EngineOps: Send + Sync + 'static {
    fn committable(&self) -> BTreeMap<TopicPartition, i64>;
    fn add(&self, partitions: Vec<TopicPartition>);
    fn drop_partitions(&self, partitions: Vec<TopicPartition>);
    /// The engine's metrics (for the telemetry exporter's snapshots).
    fn metrics(&self) -> crate::processing::ProcessingMetrics;
}

impl<H: Handler> EngineOps for ProcessingEngine<H> {
    fn committable(&self) -> BTreeMap<TopicPartition, i64> {
        self.committable_offsets()
    }
    fn add(&self, partitions: Vec<TopicPartition>) {
        self.add_partitions(partitions);
    }
    fn drop_partitions(&self, partitions: Vec<TopicPartition>) {
        ProcessingEngine::drop_partitions(self, partitions);
    }
    fn metrics(&self) -> crate::processing::ProcessingMetrics {
        ProcessingEngine::metrics(self)
    }
}

/// Serializes commits.
pub(crate) type CommitLock = tokio::sync::Mutex<()>;

/// Commits `offsets` for the partitions still assigned whose committed offset differs.
pub(crate) async fn commit_offsets(
    shared: &Shared,
    member: &GroupHandle<Client>,
    lock: &CommitLock,
    offsets: BTreeMap<TopicPartition, i64>,
) -> Result<(), ConsumerError> {
    let _serial = lock.lock().await;
    let todo: BTreeMap<TopicPartition, i64> = {
        let subs = shared.subs();
        offsets
            .into_iter()
            .filter(|(tp, offset)| {
                // Forward only: a snapshot taken before a revoke's (newer) commit must not
                // move the committed offset back.
                subs.partition(tp)
                    .is_some_and(|s| s.committed().is_none_or(|c| c.offset < *offset))
            })
            .collect()
    };
    if todo.is_empty() {
        return Ok(());
    }
    let group = shared.config.group.as_ref().map(|g| g.group_id.as_str());
    let span = spans::commit_span(group, todo.len());
    let result = member
        .commit(
            todo.iter()
                .map(|(tp, o)| (tp.clone().into(), OffsetAndMetadata::new(*o)))
                .collect(),
        )
        .instrument(span.clone())
        .await;
    spans::commit_outcome(&span, result.as_ref().err().map(|e| e as _));
    let result = result.map_err(ConsumerError::from);
    if let Err(e) = &result {
        if e.is_fatal() {
            // Auto-commit and revokes would otherwise try again forever.
            shared.fail(e.clone());
        }
    }
    result?;
    let mut subs = shared.subs();
    for (tp, offset) in todo {
        subs.set_committed(&tp, CommittedOffset::new(offset));
    }
    Ok(())
}

impl super::Consumer {
    /// Commits these offsets (per partition, the next offset to read), as Java's
    /// `commitSync(offsets)`: the caller vouches that the records before them are processed, which
    /// [`commit`](super::Consumer::commit) checks for itself. Only partitions still assigned, and
    /// offsets above their last commit, are sent. Returns the given offsets that are committed
    /// now (leaving out the partitions no longer assigned).
    pub async fn commit_offsets(
        &self,
        offsets: impl IntoIterator<Item = (TopicPartition, i64)>,
    ) -> Result<BTreeMap<TopicPartition, i64>, ConsumerError> {
        let running = self
            .inner
            .running()
            .ok_or(ConsumerError::Running("the consumer is not running"))?;
        let member = running.member.ok_or(ConsumerError::NoGroup("commit"))?;
        let shared = &self.inner.shared;
        if shared.subs().mode() == crate::subscription::SubscriptionMode::ManualAssign {
            return Err(ConsumerError::NoGroup("commit with manual assignment"));
        }
        let offsets: BTreeMap<TopicPartition, i64> = offsets.into_iter().collect();
        commit_offsets(shared, &member, &self.inner.commits, offsets.clone()).await?;
        let subs = shared.subs();
        Ok(offsets
            .into_iter()
            .filter(|(tp, offset)| {
                subs.partition(tp)
                    .and_then(|s| s.committed())
                    .is_some_and(|c| c.offset == *offset)
            })
            .collect())
    }
}
