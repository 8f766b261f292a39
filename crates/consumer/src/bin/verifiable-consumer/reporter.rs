//! The reporter: handlers park their records with it and wait; it takes what is parked as one
//! "poll", prints it (`records_consumed`, `record_data`), commits exactly what it printed
//! (`offsets_committed`) and only then lets the handlers finish. The rebalance listener shares its
//! view of the partitions owned, so a report and a rebalance callback never interleave and
//! nothing is reported between `partitions_revoked` and `partitions_assigned`.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerRebalanceListener, ShutdownHandle, TopicPartition};
use tokio::sync::{mpsc, oneshot, watch};

use crate::events::{print_partitions, CommitData, OffsetsCommitted, RecordsConsumed, Summary};
use crate::lines::{now_millis, print_json, text, RecordData};

/// The error a handler returns for a record that will not be reported (past `--max-messages`,
/// or still parked when a shutdown met a rebalance): under the `stop` failure policy nothing at
/// or past it is committed. A run that ends with it ended cleanly.
pub const NOT_REPORTED: &str = "verifiable-consumer: record not reported";

/// A record whose handler waits for the reporter.
pub struct Parked {
    pub record: ConsumerRecord,
    pub done: oneshot::Sender<Result<(), String>>,
}

/// What the reporter and the rebalance listener share; held (briefly, never across a commit by
/// the listener) so a report and a rebalance callback never interleave.
#[derive(Default)]
struct Membership {
    /// Partitions owned, as the printed callbacks said.
    owned: BTreeSet<TopicPartition>,
    /// Records reported so far.
    consumed: u64,
}

pub struct Shared {
    membership: tokio::sync::Mutex<Membership>,
    /// True between `partitions_revoked` (or a loss) and the next `partitions_assigned`.
    rebalancing: watch::Sender<bool>,
}

impl Shared {
    /// Nothing owned, nothing reported, no rebalance under way.
    pub fn new() -> Shared {
        let (rebalancing, _) = watch::channel(false);
        Shared {
            membership: tokio::sync::Mutex::new(Membership::default()),
            rebalancing,
        }
    }
}

pub struct Listener {
    pub shared: Arc<Shared>,
}

impl ConsumerRebalanceListener for Listener {
    async fn assigned(&self, partitions: Vec<TopicPartition>) {
        let mut membership = self.shared.membership.lock().await;
        print_partitions("partitions_assigned", &partitions);
        membership.owned.extend(partitions);
        self.shared.rebalancing.send_replace(false);
    }

    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        let mut membership = self.shared.membership.lock().await;
        print_partitions("partitions_revoked", &partitions);
        for tp in &partitions {
            membership.owned.remove(tp);
        }
        self.shared.rebalancing.send_replace(true);
    }

    // As Java's default `onPartitionsLost`: reported as revoked.
    async fn lost(&self, partitions: Vec<TopicPartition>) {
        self.revoked(partitions).await;
    }
}

pub struct Reporter {
    pub consumer: Consumer,
    pub shared: Arc<Shared>,
    pub shutdown: ShutdownHandle,
    pub parked: mpsc::UnboundedReceiver<Parked>,
    pub verbose: bool,
    pub commit: bool,
    pub max_messages: Option<u64>,
    pub delay: Duration,
    pub max_batch: usize,
}

impl Reporter {
    pub async fn run(mut self) {
        while let Some(first) = self.parked.recv().await {
            let mut batch = vec![first];
            // Handlers started together are queued behind this task: let them park too.
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
            while batch.len() < self.max_batch {
                match self.parked.try_recv() {
                    Ok(parked) => batch.push(parked),
                    Err(_) => break,
                }
            }
            if !self.delay.is_zero() {
                tokio::time::sleep(self.delay).await;
            }
            self.report(batch).await;
        }
    }

    /// Waits for the end of a rebalance (or a shutdown), then holds the membership.
    async fn settled(&self) -> Option<tokio::sync::MutexGuard<'_, Membership>> {
        let mut rebalancing = self.shared.rebalancing.subscribe();
        loop {
            if *rebalancing.borrow_and_update() {
                if self.shutdown.is_shutdown() {
                    return None;
                }
                tokio::select! {
                    _ = rebalancing.changed() => {}
                    _ = tokio::time::sleep(Duration::from_millis(100)) => {}
                }
                continue;
            }
            let membership = self.shared.membership.lock().await;
            if !*self.shared.rebalancing.borrow() {
                return Some(membership);
            }
        }
    }

    async fn report(&self, batch: Vec<Parked>) {
        let Some(mut membership) = self.settled().await else {
            for parked in batch {
                let _ = parked.done.send(Err(NOT_REPORTED.into()));
            }
            return;
        };
        let mut by_partition: BTreeMap<TopicPartition, Vec<Parked>> = BTreeMap::new();
        for parked in batch {
            let tp = parked.record.topic_partition();
            if membership.owned.contains(&tp) {
                by_partition.entry(tp).or_default().push(parked);
            } else {
                // Lost meanwhile: the partition is gone from the runtime, nothing to report.
                let _ = parked.done.send(Ok(()));
            }
        }
        let mut summaries = Vec::new();
        let mut commits = BTreeMap::new();
        let mut reported: Vec<Parked> = Vec::new();
        let mut refused: Vec<Parked> = Vec::new();
        for (tp, mut records) in by_partition {
            records.sort_by_key(|p| p.record.offset());
            let room = self
                .max_messages
                .map_or(usize::MAX, |max| {
                    max.saturating_sub(membership.consumed) as usize
                })
                .min(records.len());
            refused.extend(records.drain(room..));
            let (Some(first), Some(last)) = (records.first(), records.last()) else {
                continue;
            };
            let (min_offset, max_offset) = (first.record.offset(), last.record.offset());
            summaries.push(Summary {
                topic: tp.topic.to_string(),
                partition: tp.partition,
                count: records.len() as u64,
                min_offset,
                max_offset,
            });
            if self.verbose {
                for parked in &records {
                    let record = &parked.record;
                    print_json(&RecordData {
                        timestamp: now_millis(),
                        name: "record_data",
                        key: text(record.key()),
                        value: text(record.value()),
                        topic: record.topic().to_owned(),
                        partition: record.partition(),
                        offset: record.offset(),
                    });
                }
            }
            membership.consumed += records.len() as u64;
            commits.insert(tp, max_offset + 1);
            reported.extend(records);
        }
        if !summaries.is_empty() {
            print_json(&RecordsConsumed {
                timestamp: now_millis(),
                name: "records_consumed",
                count: summaries.iter().map(|s| s.count).sum(),
                partitions: summaries,
            });
        }
        if self.commit && !commits.is_empty() {
            let (offsets, error) = match self.consumer.commit_offsets(commits.clone()).await {
                Ok(committed) => (committed, None),
                Err(e) => (commits, Some(e.to_string())),
            };
            print_json(&OffsetsCommitted {
                timestamp: now_millis(),
                name: "offsets_committed",
                offsets: offsets
                    .iter()
                    .map(|(tp, offset)| CommitData {
                        topic: tp.topic.to_string(),
                        partition: tp.partition,
                        offset: *offset,
                    })
                    .collect(),
                success: error.is_none(),
                error,
            });
        }
        for parked in reported {
            let _ = parked.done.send(Ok(()));
        }
        for parked in refused {
            let _ = parked.done.send(Err(NOT_REPORTED.into()));
        }
        if self
            .max_messages
            .is_some_and(|max| membership.consumed >= max)
        {
            self.shutdown.shutdown();
        }
    }
}
