//! Commits: the processing engine's committable offsets (never past an unfinished record) of the
//! partitions this member still owns, only where they are above the offset committed before
//! (commits only move forward: after a seek backwards the committed offset stays until processing
//! passes it again). Commits are serialized (an async mutex, held across the OffsetCommit on
//! purpose), so an older offset can never land after a newer one.
//!
//! Every commit has a bound, its wait for the one before included: `default.api.timeout.ms` for
//! the application's and auto-commits (as Java's `commitSync`), what is left of the revoke or of
//! the shutdown for theirs. A commit past its bound fails with `DeadlineExceeded`; a revoke or a
//! shutdown reports the offsets it could not commit ([`ConsumerEvent::OffsetsNotCommitted`]).

use std::collections::BTreeMap;
use std::time::Duration;

use mooring_client::Client;
use mooring_group::{GroupHandle, OffsetAndMetadata};
use tokio::time::{timeout_at, Instant};
use tracing::Instrument;

use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::otel::spans;
use crate::processing::{Dispatch, ProcessingEngine};
use crate::shared::Shared;
use crate::TopicPartition;

/// The engine seen through what commits and manual assignment need, without its handler type.
pub(crate) trait EngineOps: Send + Sync + 'static {
    fn committable(&self) -> BTreeMap<TopicPartition, i64>;
    fn add(&self, partitions: Vec<TopicPartition>);
    fn drop_partitions(&self, partitions: Vec<TopicPartition>);
    /// The engine's metrics (for the telemetry exporter's snapshots).
    fn metrics(&self) -> crate::processing::ProcessingMetrics;
}

impl<H: Dispatch> EngineOps for ProcessingEngine<H> {
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

/// Offsets a commit did not commit, and why.
#[derive(Debug)]
pub(crate) struct NotCommitted {
    /// Per partition, the offset that was to be committed.
    pub(crate) offsets: BTreeMap<TopicPartition, i64>,
    pub(crate) error: ConsumerError,
}

impl From<NotCommitted> for ConsumerError {
    fn from(failed: NotCommitted) -> Self {
        failed.error
    }
}

/// Of `offsets`, those of partitions still assigned and above their last commit (forward only: a
/// snapshot taken before a revoke's newer commit must not move the committed offset back).
fn to_commit(
    shared: &Shared,
    offsets: &BTreeMap<TopicPartition, i64>,
) -> BTreeMap<TopicPartition, i64> {
    let subs = shared.subs();
    offsets
        .iter()
        .filter(|(tp, offset)| {
            subs.partition(tp)
                .is_some_and(|s| s.committed().is_none_or(|c| c.offset < **offset))
        })
        .map(|(tp, offset)| (tp.clone(), *offset))
        .collect()
}

/// Commits `offsets` for the partitions still assigned whose committed offset is lower, within
/// `limit`: the wait for an earlier commit included, so a commit stuck on an unreachable broker
/// holds up the next one only until that one's own bound. Nothing to commit: nothing is waited
/// for.
pub(crate) async fn commit_offsets(
    shared: &Shared,
    member: &GroupHandle<Client>,
    lock: &CommitLock,
    offsets: BTreeMap<TopicPartition, i64>,
    limit: Duration,
) -> Result<(), NotCommitted> {
    let deadline = Instant::now() + limit;
    if to_commit(shared, &offsets).is_empty() {
        return Ok(());
    }
    let Ok(_serial) = timeout_at(deadline, lock.lock()).await else {
        return Err(NotCommitted {
            offsets: to_commit(shared, &offsets),
            error: ConsumerError::Client(mooring_client::Error::DeadlineExceeded {
                api: "OffsetCommit",
                group: group_id(shared),
                after: limit,
                last: None,
            }),
        });
    };
    let todo = to_commit(shared, &offsets);
    if todo.is_empty() {
        return Ok(());
    }
    let group = shared.config.group.as_ref().map(|g| g.group_id.as_str());
    let span = spans::commit_span(group, todo.len());
    let result = member
        .commit_within(
            todo.iter()
                .map(|(tp, o)| (tp.clone(), OffsetAndMetadata::new(*o)))
                .collect(),
            deadline.saturating_duration_since(Instant::now()),
        )
        .instrument(span.clone())
        .await;
    spans::commit_outcome(&span, result.as_ref().err().map(|e| e as _));
    if let Err(e) = result {
        let error = ConsumerError::from(e);
        if error.is_fatal() {
            // Auto-commit and revokes would otherwise try again forever.
            shared.fail(error.clone());
        }
        return Err(NotCommitted {
            offsets: todo,
            error,
        });
    }
    let mut subs = shared.subs();
    for (tp, offset) in todo {
        subs.set_committed(&tp, OffsetAndMetadata::new(offset));
    }
    Ok(())
}

fn group_id(shared: &Shared) -> String {
    shared
        .config
        .group
        .as_ref()
        .map(|g| g.group_id.clone())
        .unwrap_or_default()
}

/// Reports offsets a revoke or the shutdown could not commit: once, as an event naming them and
/// as a warning. The records before them were processed; the next owner processes them again.
pub(crate) fn report_not_committed(shared: &Shared, during: &'static str, failed: NotCommitted) {
    let list = failed
        .offsets
        .iter()
        .map(|(tp, offset)| format!("{tp}@{offset}"))
        .collect::<Vec<_>>()
        .join(", ");
    tracing::warn!(during, offsets = %list, error = %failed.error, "offsets not committed; the next owner processes the records since the last commit again");
    shared.emit(ConsumerEvent::OffsetsNotCommitted {
        during,
        offsets: failed.offsets,
        error: failed.error.to_string(),
    });
}

impl super::Consumer {
    /// Commits these offsets (per partition, the next offset to read), as Java's
    /// `commitSync(offsets)`, within `default.api.timeout.ms` (then it fails with
    /// `DeadlineExceeded`): the caller vouches that the records before them are processed, which
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
        commit_offsets(
            shared,
            &member,
            &self.inner.commits,
            offsets.clone(),
            shared.config.client.default_api_timeout,
        )
        .await?;
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
