//! The batch handler: an async function of a [`Batch`] (one partition's queued records, in
//! offset order) returning `Result`, for applications that write, index or acknowledge records
//! in bulk. Any `Fn(Batch) -> impl Future<Output = Result<(), E>>` is a batch handler; implement
//! the trait directly for one with state. The engine runs it in [`Batches`], beside the record
//! [`Handler`](super::Handler), on the same lanes.
//!
//! A batch is not a Kafka record batch: it may span several of those, and several fetches.

use std::future::Future;
use std::sync::Arc;

use super::ConsumerRecord;
use crate::TopicPartition;

/// The records of one partition handed to a [`BatchHandler`] in one call: those its lane had
/// queued when the call started, at most `mooring.batch.max.records`
/// ([`ProcessingConfig::max_batch_records`](super::ProcessingConfig::max_batch_records)), in
/// offset order. Never empty. Consecutive batches of a partition follow each other without a
/// record left out: the offsets skip only where the log has no record (compaction, transaction
/// markers, aborted transactions under `read_committed`) or where the application moved the
/// position forward with `seek` while records were queued.
///
/// Cloning is cheap (the records are shared); [`into_vec`](Self::into_vec) gives the records
/// without copying them when the batch is the only handle to them.
///
/// ```
/// use mooring_consumer::processing::{Batch, ConsumerRecord};
/// use mooring_consumer::TopicPartition;
/// use mooring_wire::records::Record;
///
/// let tp = TopicPartition::new("orders", 3);
/// let records = (10..13)
///     .map(|o| ConsumerRecord::new("orders".into(), 3, Record::new(o, 0, None, Some("v".into()))))
///     .collect();
/// let batch = Batch::new(tp.clone(), records)?;
/// assert_eq!(batch.partition(), &tp);
/// assert_eq!((batch.first_offset(), batch.last_offset(), batch.len()), (10, 12, 3));
/// assert_eq!(batch.iter().map(|r| r.offset()).collect::<Vec<_>>(), [10, 11, 12]);
/// assert_eq!(batch.into_vec().len(), 3);
///
/// // Not empty, one partition, increasing offsets.
/// assert!(Batch::new(tp, Vec::new()).is_err());
/// # Ok::<(), mooring_consumer::processing::InvalidBatch>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    partition: Arc<TopicPartition>,
    records: Arc<Vec<ConsumerRecord>>,
    first: i64,
    last: i64,
}

/// Why [`Batch::new`] refused its records.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidBatch {
    /// A batch has at least one record.
    #[error("a batch of {0} has no record")]
    Empty(TopicPartition),
    /// A record of another partition.
    #[error("record {topic}-{partition}@{offset} is not of {batch}")]
    OtherPartition {
        /// The batch's partition.
        batch: TopicPartition,
        /// The record's topic.
        topic: String,
        /// The record's partition.
        partition: i32,
        /// The record's offset.
        offset: i64,
    },
    /// Offsets must increase.
    #[error("offset {offset} of {partition} follows {previous}: offsets must increase")]
    NotIncreasing {
        /// The batch's partition.
        partition: TopicPartition,
        /// The offending offset.
        offset: i64,
        /// The offset before it.
        previous: i64,
    },
}

impl Batch {
    /// A batch of `records` of `partition`: not empty, all of that partition, offsets increasing
    /// (for an application's tests of its handler; the engine builds its own).
    pub fn new(
        partition: TopicPartition,
        records: Vec<ConsumerRecord>,
    ) -> Result<Batch, InvalidBatch> {
        let mut previous: Option<i64> = None;
        for r in &records {
            if r.topic() != partition.topic || r.partition() != partition.partition {
                return Err(InvalidBatch::OtherPartition {
                    batch: partition,
                    topic: r.topic().to_owned(),
                    partition: r.partition(),
                    offset: r.offset(),
                });
            }
            if let Some(p) = previous.filter(|&p| r.offset() <= p) {
                return Err(InvalidBatch::NotIncreasing {
                    partition,
                    offset: r.offset(),
                    previous: p,
                });
            }
            previous = Some(r.offset());
        }
        Batch::of_lane(Arc::new(partition.clone()), records).ok_or(InvalidBatch::Empty(partition))
    }

    /// A lane's batch: records of its partition in offset order, as the lane queued them.
    pub(crate) fn of_lane(
        partition: Arc<TopicPartition>,
        records: Vec<ConsumerRecord>,
    ) -> Option<Batch> {
        let first = records.first()?.offset();
        let last = records.last()?.offset();
        Some(Batch {
            partition,
            records: Arc::new(records),
            first,
            last,
        })
    }

    /// The partition the records are of.
    pub fn partition(&self) -> &TopicPartition {
        &self.partition
    }

    /// The records, in offset order.
    pub fn records(&self) -> &[ConsumerRecord] {
        &self.records
    }

    /// The records, in offset order.
    pub fn iter(&self) -> std::slice::Iter<'_, ConsumerRecord> {
        self.records.iter()
    }

    /// The records by value (copied only if a clone of the batch still shares them).
    pub fn into_vec(self) -> Vec<ConsumerRecord> {
        Arc::try_unwrap(self.records).unwrap_or_else(|shared| (*shared).clone())
    }

    /// How many records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Always `false`: a batch has at least one record.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The offset of the first record.
    pub fn first_offset(&self) -> i64 {
        self.first
    }

    /// The offset of the last record: once the batch succeeds (and the batches before it did),
    /// the partition's committable offset is this + 1.
    pub fn last_offset(&self) -> i64 {
        self.last
    }
}

impl<'a> IntoIterator for &'a Batch {
    type Item = &'a ConsumerRecord;
    type IntoIter = std::slice::Iter<'a, ConsumerRecord>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl IntoIterator for Batch {
    type Item = ConsumerRecord;
    type IntoIter = std::vec::IntoIter<ConsumerRecord>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

/// Processes one [`Batch`]: a partition's queued records, committed as one unit. Called from the
/// partition's lane, one batch of a partition at a time, up to the configured concurrency
/// (`mooring.concurrency` counts running batches) over all partitions.
///
/// ```
/// use mooring_consumer::processing::{Batch, BatchHandler};
///
/// /// Writes each batch in one statement.
/// struct Loader;
///
/// impl BatchHandler for Loader {
///     type Error = std::io::Error;
///
///     async fn handle(&self, batch: Batch) -> Result<(), Self::Error> {
///         let rows: Vec<_> = batch.iter().filter_map(|r| r.value().cloned()).collect();
///         println!("{}: {} rows up to {}", batch.partition(), rows.len(), batch.last_offset());
///         Ok(())
///     }
/// }
///
/// // A closure works too; `String` errors convert.
/// fn assert_batch_handler<B: BatchHandler>(_: B) {}
/// assert_batch_handler(|batch: Batch| async move {
///     if batch.iter().any(|r| r.value().is_none()) {
///         return Err(format!("a tombstone in {}..={}", batch.first_offset(), batch.last_offset()));
///     }
///     Ok(())
/// });
/// assert_batch_handler(Loader);
/// ```
pub trait BatchHandler: Send + Sync + 'static {
    /// The handler's error; anything convertible into a boxed error (including `String`).
    type Error: Into<Box<dyn std::error::Error + Send + Sync + 'static>> + Send + 'static;

    /// Processes one batch. `Ok` marks every record of it finished (the partition's committable
    /// offset moves past the batch once the batches before it finished); `Err` goes to the
    /// [`FailurePolicy`](super::FailurePolicy), for the whole batch.
    fn handle(&self, batch: Batch) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

impl<F, Fut, E> BatchHandler for F
where
    F: Fn(Batch) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), E>> + Send,
    E: Into<Box<dyn std::error::Error + Send + Sync + 'static>> + Send + 'static,
{
    type Error = E;

    fn handle(&self, batch: Batch) -> impl Future<Output = Result<(), E>> + Send {
        self(batch)
    }
}

/// A [`BatchHandler`] as the engine runs it: `ProcessingEngine::new(config, Batches(handler))`
/// hands each lane's queued records to `handler` a batch at a time
/// ([`Consumer::run_batch`](crate::Consumer::run_batch) does this). Ordering must be
/// [`ProcessingOrder::Partition`](super::ProcessingOrder::Partition): one batch of a partition
/// runs at a time.
#[derive(Debug, Clone, Copy, Default)]
pub struct Batches<B>(pub B);
