//! The application's rebalance listener: async `assigned`, `revoked` and `lost`, called by the
//! consumer after it has done its own part (see Rebalances in the crate docs).
//! Each call is awaited, bounded by the member's rebalance timeout (`max.poll.interval.ms`);
//! heartbeats go on meanwhile.

use std::future::Future;
use std::pin::Pin;

use crate::TopicPartition;

/// Rebalance callbacks for the application. Every method has a default that does nothing, except
/// `lost`, which calls `revoked` as Java's `onPartitionsLost` does.
///
/// ```
/// use mooring_consumer::{ConsumerRebalanceListener, TopicPartition};
///
/// struct Log;
///
/// impl ConsumerRebalanceListener for Log {
///     async fn assigned(&self, partitions: Vec<TopicPartition>) {
///         println!("assigned {partitions:?}");
///     }
///     async fn revoked(&self, partitions: Vec<TopicPartition>) {
///         println!("revoked {partitions:?} (their finished work is committed already)");
///     }
/// }
/// ```
pub trait ConsumerRebalanceListener: Send + Sync + 'static {
    /// Partitions newly assigned (cooperative and the `consumer` protocol: only the new ones;
    /// eager: all). Their positions
    /// are initialised already when the committed offsets could be fetched in time; a `seek`
    /// here overrides them.
    fn assigned(&self, partitions: Vec<TopicPartition>) -> impl Future<Output = ()> + Send {
        let _ = partitions;
        async {}
    }

    /// Partitions taken away (cooperative and the `consumer` protocol: only those moving). Their
    /// in-flight handlers have
    /// finished (or the revoke timeout passed) and what finished is committed.
    fn revoked(&self, partitions: Vec<TopicPartition>) -> impl Future<Output = ()> + Send {
        let _ = partitions;
        async {}
    }

    /// Partitions lost without a commit (the generation is gone, or the member epoch fenced;
    /// someone else may own them now).
    fn lost(&self, partitions: Vec<TopicPartition>) -> impl Future<Output = ()> + Send {
        self.revoked(partitions)
    }
}

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
