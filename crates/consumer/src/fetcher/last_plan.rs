//! What the fetch loop's last plan was made from, so that a wake by a deadline alone (`woken`
//! false: `wakeups.rs`) can tell that planning again could send nothing and skip it.
//!
//! Planning goes over every assigned partition (the engine's backpressure, the subscription,
//! leaders, sizes). What changes a plan comes with a wake of its own (an answer, a seek, a pause
//! or resume, a rebalance, positions found, the engine's backpressure changing), with new
//! metadata, or with time (a partition's back-off or its read replica's lease ending, a broker's
//! back-off ending). So on a deadline with nothing else going on, the last plan stands if it was
//! made from the same metadata snapshot and assignment, no partition's back-off or lease has
//! ended since, and every broker it wanted still waits on its Fetch: nothing could be sent to
//! them. A broker not waiting (backed off, say) makes it plan.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use mooring_client::metadata::Metadata;
use tokio::time::Instant;

use super::session::PartitionRequest;
use super::Fetcher;
use crate::processing::Dispatch;
use crate::TopicPartition;

/// The inputs of the last plan and the brokers it wanted.
pub(crate) struct LastPlan {
    pub(crate) metadata: Arc<Metadata>,
    pub(crate) assignment_epoch: u64,
    /// The brokers with partitions to fetch in it.
    pub(crate) nodes: BTreeSet<i32>,
    /// The first partition back-off or read replica lease to end after it (a partition to list
    /// again, or to move to its leader).
    pub(crate) backoff_ends: Option<Instant>,
}

impl LastPlan {
    /// Whether planning again now could only send nothing (see the module docs); `busy`: the
    /// brokers with a Fetch in flight.
    pub(crate) fn stands(
        &self,
        metadata: &Arc<Metadata>,
        assignment_epoch: u64,
        busy: &BTreeSet<i32>,
        now: Instant,
    ) -> bool {
        Arc::ptr_eq(&self.metadata, metadata)
            && self.assignment_epoch == assignment_epoch
            && self.backoff_ends.is_none_or(|t| now < t)
            && !self.nodes.is_empty()
            && self.nodes.is_subset(busy)
    }
}

impl<H: Dispatch> Fetcher<H> {
    /// The partitions to fetch now, by leader ([`plan`](Self::plan)), or `None` on a deadline
    /// (`woken` false: nothing but the timer ran the loop) while the last plan stands: every
    /// broker it wanted waits on its Fetch, nothing changed (see the module docs).
    pub(super) fn plan_round(
        &mut self,
        metadata: &Arc<Metadata>,
        now: Instant,
        woken: bool,
    ) -> Option<BTreeMap<i32, BTreeMap<TopicPartition, PartitionRequest>>> {
        let epoch = self.shared.assignment_epoch();
        if !woken
            && self
                .last_plan
                .as_ref()
                .is_some_and(|last| last.stands(metadata, epoch, &self.busy, now))
        {
            return None;
        }
        let by_leader = self.plan(metadata, now);
        self.last_plan = Some(LastPlan {
            metadata: Arc::clone(metadata),
            assignment_epoch: epoch,
            nodes: by_leader.keys().copied().collect(),
            backoff_ends: self.next_expiry(now),
        });
        Some(by_leader)
    }
}
