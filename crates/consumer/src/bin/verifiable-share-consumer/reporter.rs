//! The reporter and the acknowledgement ledger.
//!
//! The [`Reporter`] takes what the share consumer's stream has ready as one "poll" (at most
//! `max.poll.records` deliveries), prints it (`record_data` under `--verbose`, then
//! `records_consumed`), and gives each record its verdict: accept, or the `--ack-pattern`'s
//! entry for its offset. Each verdict is written into the [`Acks`] ledger before it is given, so
//! the broker's answer always finds it. Under `--acknowledgement-mode sync` the next poll waits
//! for the broker's answers to this one's verdicts, as Java's `commitSync` does. Once the
//! consumer is stopping (a signal, `--max-messages` reached) nothing more is reported: deliveries
//! still coming are released unreported, as Java's tool polls no more.
//!
//! [`Acks::follow`] reads the consumer's event stream and prints `offsets_acknowledged` for each
//! answer the broker gave to the reporter's verdicts: one line per share-partition and outcome,
//! `success` false with the error when the broker refused them, or when the record's lock had run
//! out before its verdict (the consumer does not send it then: the broker has handed the record
//! to another member). Answers to what the consumer did by itself (renewing locks, releasing what
//! it acquired and never handed out, giving back gaps) are not the tool's acknowledgements and
//! are not printed, as Java's callback never sees them.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures_util::FutureExt;
use mooring_consumer::share::{
    Acknowledge, ShareDelivery, ShareEvent, ShareEvents, ShareRecordStream,
};
use mooring_consumer::{ShutdownHandle, TopicPartition};
use mooring_wire::error_code::ErrorCode;
use tokio::sync::{oneshot, Notify};
use tokio::time::Instant;

use crate::args::{AckMode, AckPattern, AckType};
use crate::events::{OffsetsAcknowledged, PartitionOffsets, RecordsConsumed};
use crate::lines::{now_millis, print_json, text, RecordData};

/// How long a `sync` poll waits for the answers to its verdicts (Java's `commitSync` without a
/// timeout waits `default.api.timeout.ms`, 60 s).
const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// The error of a verdict the consumer did not send because the record's lock had run out.
const LOCK_EXPIRED: &str = "the record's acquisition lock ran out before its acknowledgement: \
                            not sent, the broker hands the record to another member";

/// Verdicts given and not yet answered, and the acknowledgements counted for `--max-messages`.
pub struct Acks {
    state: Mutex<Ledger>,
    answered: Notify,
    pattern: bool,
    max_messages: Option<u64>,
    shutdown: ShutdownHandle,
}

#[derive(Default)]
struct Ledger {
    pending: HashMap<(TopicPartition, i64), AckType>,
    /// Records whose acknowledgement the broker took.
    acknowledged: u64,
}

/// One `offsets_acknowledged` line being gathered: a share-partition's offsets of one outcome.
struct Line {
    partition: TopicPartition,
    error: Option<String>,
    offsets: Vec<(i64, AckType)>,
}

impl Acks {
    pub fn new(pattern: bool, max_messages: Option<u64>, shutdown: ShutdownHandle) -> Acks {
        Acks {
            state: Mutex::new(Ledger::default()),
            answered: Notify::new(),
            pattern,
            max_messages,
            shutdown,
        }
    }

    fn ledger(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A verdict about to be given.
    fn expect(&self, tp: TopicPartition, offset: i64, verdict: AckType) {
        self.ledger().pending.insert((tp, offset), verdict);
    }

    fn any_pending(&self, keys: &[(TopicPartition, i64)]) -> bool {
        let ledger = self.ledger();
        keys.iter().any(|key| ledger.pending.contains_key(key))
    }

    /// Waits until none of `keys` waits for an answer, the consumer stops, or `SYNC_TIMEOUT`.
    async fn wait_answered(&self, keys: &[(TopicPartition, i64)]) {
        let deadline = Instant::now() + SYNC_TIMEOUT;
        loop {
            let notified = self.answered.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !self.any_pending(keys) || self.shutdown.is_shutdown() || Instant::now() >= deadline
            {
                return;
            }
            // The shutdown handle cannot be awaited: look again now and then.
            let _ = tokio::time::timeout(Duration::from_millis(100), notified).await;
        }
    }

    /// Prints an `offsets_acknowledged` line for each answer to the reporter's verdicts, until
    /// `done` fires; then prints what is already queued and returns.
    pub async fn follow(self: Arc<Self>, mut events: ShareEvents, mut done: oneshot::Receiver<()>) {
        loop {
            tokio::select! {
                biased;
                event = events.recv() => match event {
                    Some(event) => {
                        let mut batch = vec![event];
                        while let Ok(more) = events.try_recv() {
                            batch.push(more);
                        }
                        self.answered_events(batch);
                    }
                    None => return,
                },
                _ = &mut done => {
                    let mut batch = Vec::new();
                    while let Ok(more) = events.try_recv() {
                        batch.push(more);
                    }
                    self.answered_events(batch);
                    return;
                }
            }
        }
    }

    /// The events read at once: their answers gathered by share-partition and outcome, in the
    /// order they came, then printed.
    fn answered_events(&self, events: Vec<ShareEvent>) {
        let mut lines: Vec<Line> = Vec::new();
        {
            let mut ledger = self.ledger();
            for event in events {
                let (partition, offsets, error) = match event {
                    ShareEvent::Acknowledged {
                        partition,
                        acknowledge,
                        offsets,
                        error,
                    } => {
                        if !matches!(
                            acknowledge,
                            Acknowledge::Accept | Acknowledge::Release | Acknowledge::Reject
                        ) {
                            continue;
                        }
                        (
                            partition,
                            offsets,
                            error.map(|code: ErrorCode| code.to_string()),
                        )
                    }
                    ShareEvent::LockExpired {
                        partition, offset, ..
                    } => (partition, vec![offset], Some(LOCK_EXPIRED.to_owned())),
                    ShareEvent::Group(event) => {
                        tracing::info!(?event, "share member");
                        continue;
                    }
                    _ => continue,
                };
                let ours: Vec<(i64, AckType)> = offsets
                    .into_iter()
                    .filter_map(|offset| {
                        ledger
                            .pending
                            .remove(&(partition.clone(), offset))
                            .map(|verdict| (offset, verdict))
                    })
                    .collect();
                if ours.is_empty() {
                    continue;
                }
                match lines
                    .iter_mut()
                    .find(|l| l.partition == partition && l.error == error)
                {
                    Some(line) => line.offsets.extend(ours),
                    None => lines.push(Line {
                        partition,
                        error,
                        offsets: ours,
                    }),
                }
            }
            for line in &lines {
                if line.error.is_none() {
                    ledger.acknowledged += line.offsets.len() as u64;
                }
            }
            if self
                .max_messages
                .is_some_and(|max| ledger.acknowledged >= max)
            {
                self.shutdown.shutdown();
            }
        }
        for line in lines {
            self.print(line);
        }
        self.answered.notify_waiters();
    }

    fn print(&self, mut line: Line) {
        line.offsets.sort_unstable();
        let count = line.offsets.len() as u64;
        let success = line.error.is_none();
        let ack_type_counts = (self.pattern && success).then(|| {
            let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
            for (_, verdict) in &line.offsets {
                *counts.entry(verdict.java_name()).or_default() += 1;
            }
            counts
        });
        print_json(&OffsetsAcknowledged {
            timestamp: now_millis(),
            name: "offsets_acknowledged",
            count,
            partitions: vec![PartitionOffsets {
                topic: line.partition.topic.to_string(),
                partition: line.partition.partition,
                count,
                offsets: line.offsets.iter().map(|(o, _)| *o).collect(),
            }],
            success,
            error: line.error,
            ack_type_counts,
        });
    }
}

pub struct Reporter {
    pub records: ShareRecordStream,
    pub acks: Arc<Acks>,
    pub shutdown: ShutdownHandle,
    pub verbose: bool,
    pub mode: AckMode,
    pub pattern: AckPattern,
    pub max_batch: usize,
}

impl Reporter {
    /// Reports until the stream ends (the consumer stopped).
    pub async fn run(mut self) {
        while let Some(first) = self.records.next().await {
            if self.shutdown.is_shutdown() {
                first.release();
                continue;
            }
            let mut batch = vec![first];
            // Records acquired together are still on their way through the workers: let them
            // come, so one answer is one report, as one poll is.
            for _ in 0..4 {
                tokio::task::yield_now().await;
            }
            while batch.len() < self.max_batch {
                match self.records.next().now_or_never() {
                    Some(Some(delivery)) => batch.push(delivery),
                    _ => break,
                }
            }
            let given = self.report(batch);
            if self.mode == AckMode::Sync {
                self.acks.wait_answered(&given).await;
            }
        }
    }

    /// Prints one poll and gives its verdicts; returns the records given one.
    fn report(&self, batch: Vec<ShareDelivery>) -> Vec<(TopicPartition, i64)> {
        let mut by_partition: BTreeMap<TopicPartition, Vec<ShareDelivery>> = BTreeMap::new();
        for delivery in batch {
            by_partition
                .entry(delivery.record().topic_partition())
                .or_default()
                .push(delivery);
        }
        let mut summaries = Vec::new();
        for (tp, deliveries) in &mut by_partition {
            deliveries.sort_by_key(|d| d.record().offset());
            let offsets: Vec<i64> = deliveries.iter().map(|d| d.record().offset()).collect();
            summaries.push(PartitionOffsets {
                topic: tp.topic.to_string(),
                partition: tp.partition,
                count: offsets.len() as u64,
                offsets,
            });
            if self.verbose {
                for delivery in deliveries.iter() {
                    let record = delivery.record();
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
        }
        print_json(&RecordsConsumed {
            timestamp: now_millis(),
            name: "records_consumed",
            count: summaries.iter().map(|s| s.count).sum(),
            partitions: summaries,
        });
        let mut given = Vec::new();
        for (tp, deliveries) in by_partition {
            for delivery in deliveries {
                let offset = delivery.record().offset();
                let verdict = self.pattern.verdict(offset);
                self.acks.expect(tp.clone(), offset, verdict);
                given.push((tp.clone(), offset));
                match verdict {
                    AckType::Accept => delivery.accept(),
                    AckType::Release => delivery.release(),
                    AckType::Reject => delivery.reject(),
                }
            }
        }
        given
    }
}
