//! What the member reconciles towards and what it waits on: the coordinator's target assignment,
//! and a reconciliation done whose acknowledgement the coordinator has not answered yet.

use std::collections::{BTreeMap, BTreeSet};

use mooring_client::TopicPartition;
use mooring_wire::primitives::Uuid;
use tokio::time::Instant;

use crate::events::ReconcileTimings;

/// A target assignment as the coordinator gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Bumped for every target that differs from the one before.
    pub(crate) seq: u64,
    /// The member epoch it came with.
    pub(crate) epoch: i32,
    pub(crate) partitions: BTreeMap<Uuid, BTreeSet<i32>>,
    pub(crate) received: Instant,
}

/// A reconciliation done, waiting for the coordinator to answer its acknowledgement.
#[derive(Debug, Clone)]
pub(crate) struct Reconciliation {
    pub(crate) epoch: i32,
    pub(crate) added: Vec<TopicPartition>,
    pub(crate) revoked: Vec<TopicPartition>,
    pub(crate) received: Instant,
    pub(crate) assigned_at: Instant,
    pub(crate) timings: ReconcileTimings,
}
