//! The application's rebalance listener ([`ConsumerRebalanceListener`], the group's
//! `RebalanceListener`): async `assigned`, `revoked` and `lost`, called by the consumer after it
//! has done its own part (see Rebalances in the crate docs): `assigned` once the positions are
//! initialised (when the committed offsets could be fetched in time; a `seek` there overrides
//! them), `revoked` once the partitions' in-flight handlers have finished (or the revoke timeout
//! passed) and what finished is committed. Each call is awaited, bounded by the member's
//! rebalance timeout (`max.poll.interval.ms`); heartbeats go on meanwhile.
//!
//! ```
//! use mooring_consumer::{ConsumerRebalanceListener, TopicPartition};
//!
//! struct Log;
//!
//! impl ConsumerRebalanceListener for Log {
//!     async fn revoked(&self, partitions: Vec<TopicPartition>) {
//!         println!("revoked {partitions:?} (their finished work is committed already)");
//!     }
//! }
//! ```

use std::future::Future;
use std::pin::Pin;

pub use mooring_group::RebalanceListener as ConsumerRebalanceListener;

use crate::TopicPartition;

type BoxFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// The object-safe form the consumer stores.
pub(crate) trait ErasedListener: Send + Sync + 'static {
    fn assigned(&self, partitions: Vec<TopicPartition>) -> BoxFuture<'_>;
    fn revoked(&self, partitions: Vec<TopicPartition>) -> BoxFuture<'_>;
    fn lost(&self, partitions: Vec<TopicPartition>) -> BoxFuture<'_>;
}

impl<L: ConsumerRebalanceListener> ErasedListener for L {
    fn assigned(&self, partitions: Vec<TopicPartition>) -> BoxFuture<'_> {
        Box::pin(ConsumerRebalanceListener::assigned(self, partitions))
    }
    fn revoked(&self, partitions: Vec<TopicPartition>) -> BoxFuture<'_> {
        Box::pin(ConsumerRebalanceListener::revoked(self, partitions))
    }
    fn lost(&self, partitions: Vec<TopicPartition>) -> BoxFuture<'_> {
        Box::pin(ConsumerRebalanceListener::lost(self, partitions))
    }
}
