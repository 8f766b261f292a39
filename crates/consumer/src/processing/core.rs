//! The engine's bookkeeping, free of I/O and tasks: partitions and their lanes, the ready queue of
//! lanes waiting for a concurrency slot, the running handlers, counters. Every method runs under
//! the engine's mutex and returns the records to start; the engine spawns them after unlocking.
//!
//! Scheduling: a lane that can start a record is put once at the back of `ready`; `pump` starts
//! records from the front while fewer than `concurrency` handlers run. Partitions and keys take
//! turns (FIFO), so one busy partition cannot starve the others. Entries are validated when
//! popped: a stopped or dropped partition's lanes are skipped.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use mooring_wire::records::Record;
use tokio::time::Instant;

use super::events::EventSink;
use super::partition::{Bounds, Ended, LaneKey, PartitionQueue};
use super::{
    BatchInfo, ConsumerRecord, FailureAction, HandlerError, HandlerFailure, LatencyHistogram,
    OverdueHandler, PartitionMetrics, ProcessingConfig, ProcessingEvent, ProcessingMetrics,
    StopReport, SubmitError, Submitted,
};
use crate::TopicPartition;

/// One incarnation of a partition in the engine: a partition dropped and added again gets a new
/// id, so late completions of the old one cannot touch the new state.
pub(crate) type PartitionId = u64;
pub(crate) type TaskId = u64;

/// A record to hand to the handler.
#[derive(Debug)]
pub(crate) struct Start {
    pub(crate) task: TaskId,
    pub(crate) record: ConsumerRecord,
}

/// How a handler task ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    Succeeded,
    /// Failed and skipped (policy `Skip`).
    Skipped {
        error: HandlerError,
        attempts: u32,
    },
    /// Failed; dispatch stops (policy `Stop`).
    Failed {
        error: HandlerError,
        attempts: u32,
    },
    /// The task was dropped before finishing (runtime shutdown), or the record could not be
    /// handed to the application (its stream was gone): not finished, no policy, and nothing
    /// more starts on the back of it.
    Cancelled,
    /// Handed to the application and given up unprocessed (a stream delivery dropped without
    /// `ack` or `fail`): the offset is abandoned for good (no commit passes it), no policy; the
    /// slot is free and later records of the partition go on.
    Abandoned,
}

#[derive(Debug)]
struct Running {
    partition: PartitionId,
    lane: LaneKey,
    topic: Arc<str>,
    partition_index: i32,
    offset: i64,
    started: Instant,
    overdue_reported: bool,
}

impl Running {
    fn tp(&self) -> TopicPartition {
        TopicPartition::new(&*self.topic, self.partition_index)
    }
}

#[derive(Debug, Default)]
struct Counters {
    completed: u64,
    failed: u64,
    skipped: u64,
    retries: u64,
    poll_interval_exceeded: u64,
    discarded: u64,
    abandoned: u64,
}

#[derive(Debug)]
pub(crate) struct Core {
    config: ProcessingConfig,
    bounds: Bounds,
    partitions: HashMap<PartitionId, PartitionQueue>,
    index: HashMap<TopicPartition, PartitionId>,
    next_partition: PartitionId,
    ready: VecDeque<(PartitionId, LaneKey)>,
    running: HashMap<TaskId, Running>,
    next_task: TaskId,
    max_in_flight_observed: usize,
    failure: Option<HandlerFailure>,
    closed: bool,
    counters: Counters,
    latency: LatencyHistogram,
    last_progress: Instant,
    events: EventSink,
}

impl Core {
    pub(crate) fn new(config: ProcessingConfig, events: EventSink, now: Instant) -> Self {
        Core {
            bounds: Bounds::from_config(&config),
            config,
            partitions: HashMap::new(),
            index: HashMap::new(),
            next_partition: 0,
            ready: VecDeque::new(),
            running: HashMap::new(),
            next_task: 0,
            max_in_flight_observed: 0,
            failure: None,
            closed: false,
            counters: Counters::default(),
            latency: LatencyHistogram::default(),
            last_progress: now,
            events,
        }
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    pub(crate) fn failure(&self) -> Option<&HandlerFailure> {
        self.failure.as_ref()
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.running.len()
    }

    /// Adds partitions; one already present (and not being stopped) keeps its state.
    pub(crate) fn add(&mut self, tps: impl IntoIterator<Item = TopicPartition>) {
        if self.closed {
            return;
        }
        for tp in tps {
            let live = self
                .index
                .get(&tp)
                .and_then(|pid| self.partitions.get(pid))
                .is_some_and(|pq| !pq.stopping);
            if live {
                continue;
            }
            let pid = self.next_partition;
            self.next_partition += 1;
            let pq = PartitionQueue::new(tp.clone(), self.config.ordering, self.bounds);
            self.partitions.insert(pid, pq);
            self.index.insert(tp, pid);
        }
    }

    fn live_partition(&self, tp: &TopicPartition) -> Option<PartitionId> {
        let pid = *self.index.get(tp)?;
        self.partitions
            .get(&pid)
            .filter(|pq| !pq.stopping)
            .map(|_| pid)
    }

    /// Accepts records, starts what can start, then re-evaluates the partition's backpressure
    /// (after the starts, so a record that starts at once never causes a pause).
    pub(crate) fn submit(
        &mut self,
        tp: &TopicPartition,
        records: Vec<Record>,
        batches: &[(i64, BatchInfo)],
        now: Instant,
    ) -> Result<(Submitted, Vec<Start>), SubmitError> {
        if self.closed {
            return Err(SubmitError::Closed);
        }
        let pid = self
            .live_partition(tp)
            .ok_or_else(|| SubmitError::UnknownPartition(tp.clone()))?;
        let pq = self
            .partitions
            .get_mut(&pid)
            .ok_or_else(|| SubmitError::UnknownPartition(tp.clone()))?;
        // All-or-nothing offset check before anything is accepted.
        let mut last = pq.tracker.last_tracked();
        for r in &records {
            if let Some(l) = last {
                if r.offset <= l {
                    return Err(SubmitError::OffsetNotIncreasing {
                        partition: tp.clone(),
                        offset: r.offset,
                        last: l,
                    });
                }
            }
            last = Some(r.offset);
        }
        let total = records.len();
        let pushed = pq.push(records, batches);
        for key in pushed.runnable {
            self.ready.push_back((pid, key));
        }
        let starts = self.pump(now);
        let mut paused = false;
        if let Some(pq) = self.partitions.get_mut(&pid) {
            if let Some(e) = pq.check_backpressure() {
                self.events.emit(e);
            }
            paused = pq.paused_by_backpressure;
        }
        let submitted = Submitted {
            accepted: total - pushed.rejected.len(),
            rejected: pushed.rejected,
            paused_by_backpressure: paused,
        };
        Ok((submitted, starts))
    }

    /// Starts records while slots are free.
    pub(crate) fn pump(&mut self, now: Instant) -> Vec<Start> {
        let mut starts = Vec::new();
        if self.closed || self.failure.is_some() {
            return starts;
        }
        while self.running.len() < self.config.concurrency {
            let Some((pid, key)) = self.ready.pop_front() else {
                break;
            };
            let Some(pq) = self.partitions.get_mut(&pid) else {
                continue;
            };
            let Some((record, batch)) = pq.start_next(&key) else {
                continue;
            };
            let event = pq.check_backpressure();
            let again = pq.schedule_if_runnable(&key);
            let task = self.next_task;
            self.next_task += 1;
            self.running.insert(
                task,
                Running {
                    partition: pid,
                    lane: key.clone(),
                    topic: Arc::clone(&pq.topic),
                    partition_index: pq.tp.partition,
                    offset: record.offset,
                    started: now,
                    overdue_reported: false,
                },
            );
            starts.push(Start {
                task,
                record: ConsumerRecord::new(Arc::clone(&pq.topic), pq.tp.partition, record)
                    .with_batch(batch),
            });
            if again {
                self.ready.push_back((pid, key));
            }
            if let Some(e) = event {
                self.events.emit(e);
            }
        }
        if !starts.is_empty() {
            self.last_progress = now;
            self.max_in_flight_observed = self.max_in_flight_observed.max(self.running.len());
        }
        starts
    }

    /// A handler failed and will be retried after `after`.
    pub(crate) fn retrying(
        &mut self,
        task: TaskId,
        attempt: u32,
        error: HandlerError,
        after: Duration,
    ) {
        self.counters.failed += 1;
        self.counters.retries += 1;
        if let Some(run) = self.running.get(&task) {
            tracing::warn!(partition = %run.tp(), offset = run.offset, attempt, error = %error, ?after, "record handler failed; retrying");
            self.events.emit(ProcessingEvent::HandlerFailed {
                partition: run.tp(),
                offset: run.offset,
                attempt,
                error,
                action: FailureAction::Retry { after },
            });
        }
    }

    /// A handler task ended; returns the records to start next.
    pub(crate) fn complete(&mut self, task: TaskId, outcome: Outcome, now: Instant) -> Vec<Start> {
        let Some(run) = self.running.remove(&task) else {
            return Vec::new();
        };
        let cancelled = matches!(outcome, Outcome::Cancelled);
        let end = match outcome {
            Outcome::Succeeded => {
                self.counters.completed += 1;
                self.latency.record(now - run.started);
                Ended::Done
            }
            Outcome::Skipped { error, attempts } => {
                self.counters.failed += 1;
                self.counters.skipped += 1;
                self.latency.record(now - run.started);
                tracing::warn!(partition = %run.tp(), offset = run.offset, attempts, error = %error, "record handler failed; record skipped");
                self.events.emit(ProcessingEvent::HandlerFailed {
                    partition: run.tp(),
                    offset: run.offset,
                    attempt: attempts.saturating_sub(1),
                    error,
                    action: FailureAction::Skip,
                });
                Ended::Done
            }
            Outcome::Failed { error, attempts } => {
                self.counters.failed += 1;
                self.latency.record(now - run.started);
                tracing::error!(partition = %run.tp(), offset = run.offset, attempts, error = %error, "record handler failed; processing stopped");
                self.events.emit(ProcessingEvent::HandlerFailed {
                    partition: run.tp(),
                    offset: run.offset,
                    attempt: attempts.saturating_sub(1),
                    error: Arc::clone(&error),
                    action: FailureAction::Stop,
                });
                if self.failure.is_none() {
                    self.failure = Some(HandlerFailure {
                        partition: run.tp(),
                        offset: run.offset,
                        attempts,
                        error,
                    });
                }
                Ended::Unfinished
            }
            Outcome::Cancelled => Ended::Unfinished,
            Outcome::Abandoned => {
                self.abandoned(&run);
                Ended::Abandoned
            }
        };
        self.last_progress = now;
        if let Some(pq) = self.partitions.get_mut(&run.partition) {
            pq.finish(&run.lane, run.offset, end);
            if pq.schedule_if_runnable(&run.lane) {
                self.ready.push_back((run.partition, run.lane));
            }
            if let Some(e) = pq.check_backpressure() {
                self.events.emit(e);
            }
        }
        if cancelled {
            // The runtime is dropping tasks: start nothing more on it.
            return Vec::new();
        }
        self.pump(now)
    }

    /// Counts and reports an abandoned record: its partition's commits stop at it from now on.
    fn abandoned(&mut self, run: &Running) {
        self.counters.abandoned += 1;
        tracing::warn!(partition = %run.tp(), offset = run.offset, "record given up unprocessed (delivery dropped without ack); the partition's commits stop at it until it is fetched again");
        self.events.emit(ProcessingEvent::RecordAbandoned {
            partition: run.tp(),
            offset: run.offset,
        });
    }

    /// Marks partitions as stopping and discards their unstarted records. Returns the ids to wait
    /// for (partitions not present are left out).
    pub(crate) fn begin_stop(
        &mut self,
        tps: impl IntoIterator<Item = TopicPartition>,
    ) -> Vec<PartitionId> {
        let mut pids = Vec::new();
        for tp in tps {
            let Some(&pid) = self.index.get(&tp) else {
                continue;
            };
            if let Some(pq) = self.partitions.get_mut(&pid) {
                pq.stopping = true;
                self.counters.discarded += pq.discard_buffered() as u64;
                pids.push(pid);
            }
        }
        pids
    }

    /// Every partition, for shutdown; also closes the engine.
    pub(crate) fn begin_shutdown(&mut self) -> Vec<PartitionId> {
        self.closed = true;
        let all: Vec<TopicPartition> = self.index.keys().cloned().collect();
        self.begin_stop(all)
    }

    /// Nothing buffered and nothing running (or dispatch halted and nothing running).
    pub(crate) fn is_drained(&self) -> bool {
        self.running.is_empty()
            && (self.failure.is_some()
                || self.partitions.values().all(|pq| pq.buffered_records == 0))
    }

    /// Handlers still running for these partitions.
    pub(crate) fn in_flight_of(&self, pids: &[PartitionId]) -> usize {
        pids.iter()
            .filter_map(|pid| self.partitions.get(pid))
            .map(|pq| pq.in_flight)
            .sum()
    }

    /// Removes stopped partitions and reports what they may commit.
    pub(crate) fn finish_stop(&mut self, pids: &[PartitionId]) -> StopReport {
        let mut report = StopReport::default();
        for pid in pids {
            let Some(pq) = self.partitions.remove(pid) else {
                continue;
            };
            if self.index.get(&pq.tp) == Some(pid) {
                self.index.remove(&pq.tp);
            }
            if pq.in_flight > 0 {
                report.timed_out.push(pq.tp.clone());
            }
            if let Some(c) = pq.tracker.committable() {
                report.committable.insert(pq.tp, c);
            }
        }
        report.timed_out.sort();
        report
    }

    /// Forgets partitions at once (lost): nothing to commit. Returns the records discarded.
    pub(crate) fn drop_partitions(
        &mut self,
        tps: impl IntoIterator<Item = TopicPartition>,
    ) -> usize {
        let mut discarded = 0;
        for tp in tps {
            if let Some(pid) = self.index.remove(&tp) {
                if let Some(mut pq) = self.partitions.remove(&pid) {
                    discarded += pq.discard_buffered();
                }
            }
        }
        self.counters.discarded += discarded as u64;
        discarded
    }

    pub(crate) fn committable(&self) -> BTreeMap<TopicPartition, i64> {
        self.partitions
            .values()
            .filter(|pq| !pq.stopping)
            .filter_map(|pq| Some((pq.tp.clone(), pq.tracker.committable()?)))
            .collect()
    }

    pub(crate) fn committable_of(&self, tp: &TopicPartition) -> Option<i64> {
        let pid = self.live_partition(tp)?;
        self.partitions.get(&pid)?.tracker.committable()
    }

    pub(crate) fn backpressured(&self) -> Vec<TopicPartition> {
        let mut v: Vec<TopicPartition> = self
            .partitions
            .values()
            .filter(|pq| pq.paused_by_backpressure && !pq.stopping)
            .map(|pq| pq.tp.clone())
            .collect();
        v.sort();
        v
    }

    /// Partitions being stopped (a revoke waiting for their handlers): their records are refused.
    pub(crate) fn stopping(&self) -> Vec<TopicPartition> {
        let mut v: Vec<TopicPartition> = self
            .partitions
            .values()
            .filter(|pq| pq.stopping)
            .map(|pq| pq.tp.clone())
            .collect();
        v.sort();
        v
    }

    /// Reports handlers that passed the limit for the first time.
    pub(crate) fn scan_overdue(&mut self, now: Instant) {
        let limit = self.config.max_poll_interval;
        for run in self.running.values_mut() {
            let elapsed = now - run.started;
            if elapsed >= limit && !run.overdue_reported {
                run.overdue_reported = true;
                self.counters.poll_interval_exceeded += 1;
                tracing::warn!(partition = %run.tp(), offset = run.offset, ?elapsed, "record handler exceeded max.poll.interval.ms");
                self.events.emit(ProcessingEvent::PollIntervalExceeded {
                    partition: run.tp(),
                    offset: run.offset,
                    elapsed,
                });
            }
        }
    }

    pub(crate) fn metrics(&self, now: Instant) -> ProcessingMetrics {
        let mut partitions: Vec<PartitionMetrics> = self
            .partitions
            .values()
            .filter(|pq| !pq.stopping)
            .map(|pq| PartitionMetrics {
                partition: pq.tp.clone(),
                buffered_records: pq.buffered_records,
                buffered_bytes: pq.buffered_bytes,
                in_flight: pq.in_flight,
                window_records: pq.tracker.window_len(),
                committable: pq.tracker.committable(),
                paused_by_backpressure: pq.paused_by_backpressure,
            })
            .collect();
        partitions.sort_by(|a, b| a.partition.cmp(&b.partition));
        let limit = self.config.max_poll_interval;
        let mut overdue: Vec<OverdueHandler> = self
            .running
            .values()
            .filter(|r| now - r.started >= limit)
            .map(|r| OverdueHandler {
                partition: r.tp(),
                offset: r.offset,
                elapsed: now - r.started,
            })
            .collect();
        overdue.sort_by(|a, b| (&a.partition, a.offset).cmp(&(&b.partition, b.offset)));
        ProcessingMetrics {
            in_flight: self.running.len(),
            concurrency: self.config.concurrency,
            max_in_flight_observed: self.max_in_flight_observed,
            partitions,
            handler_latency: self.latency.clone(),
            completed_total: self.counters.completed,
            failed_total: self.counters.failed,
            skipped_total: self.counters.skipped,
            retries_total: self.counters.retries,
            poll_interval_exceeded_total: self.counters.poll_interval_exceeded,
            events_dropped_total: self.events.dropped(),
            discarded_total: self.counters.discarded,
            abandoned_total: self.counters.abandoned,
            since_last_progress: now - self.last_progress,
            overdue,
            halted: self.failure.is_some(),
        }
    }
}
