//! What the member waits on after reconciling: a reconciliation done whose acknowledgement the
//! coordinator has not answered yet (the target it reconciles towards is
//! [`Target`](crate::by_topic_id::Target), as the share member's).

use mooring_client::TopicPartition;
use tokio::time::Instant;

use crate::events::ReconcileTimings;

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
