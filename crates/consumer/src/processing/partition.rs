//! One partition inside the engine: its records waiting to start, split into ordering lanes, its
//! offset tracker, and the buffer accounting behind backpressure.
//!
//! A *lane* is a FIFO whose records run one at a time: the whole partition with
//! [`ProcessingOrder::Partition`], one key with [`ProcessingOrder::Key`]; with [`ProcessingOrder::None`] the single lane
//! has no in-flight limit. Key lanes are created on demand and removed when empty and idle, so a
//! partition holds at most one lane per key it has buffered or running.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use mooring_wire::records::Record;

use super::record::record_size;
use super::{BatchInfo, OffsetTracker, ProcessingConfig, ProcessingEvent, ProcessingOrder};
use crate::TopicPartition;

/// Identifies a lane inside its partition.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum LaneKey {
    /// The partition's single lane (orderings `Partition` and `None`).
    Whole,
    /// One key's lane (ordering `Key`); all null keys share one.
    Key(Option<Bytes>),
}

/// A record waiting in its lane, with its size and its batch's facts.
#[derive(Debug)]
struct Queued {
    record: Record,
    size: usize,
    batch: BatchInfo,
}

#[derive(Debug, Default)]
pub(crate) struct Lane {
    queue: VecDeque<Queued>,
    in_flight: usize,
    /// In the engine's ready queue already.
    pub(crate) scheduled: bool,
}

/// How a started record's run ended, for its offset in the tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Processed (or skipped by the failure policy): the offset is done.
    Done,
    /// Not finished (failed under policy `stop`, or cancelled): the offset stays pending.
    Unfinished,
    /// Given up unprocessed: the offset is abandoned for good.
    Abandoned,
}

/// The backpressure thresholds, copied from the config.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bounds {
    max_records: usize,
    max_bytes: usize,
    resume_records: usize,
    resume_bytes: usize,
}

impl Bounds {
    pub(crate) fn from_config(c: &ProcessingConfig) -> Self {
        Bounds {
            max_records: c.max_buffered_records,
            max_bytes: c.max_buffered_bytes,
            resume_records: c.resume_buffered_records,
            resume_bytes: c.resume_buffered_bytes,
        }
    }
}

/// What [`PartitionQueue::push`] did with a batch.
#[derive(Debug)]
pub(crate) struct Pushed {
    /// Lanes that became runnable.
    pub(crate) runnable: Vec<LaneKey>,
    /// Records that did not fit, in order.
    pub(crate) rejected: Vec<Record>,
}

#[derive(Debug)]
pub(crate) struct PartitionQueue {
    pub(crate) tp: TopicPartition,
    pub(crate) topic: Arc<str>,
    ordering: ProcessingOrder,
    bounds: Bounds,
    lanes: HashMap<LaneKey, Lane>,
    pub(crate) tracker: OffsetTracker,
    pub(crate) buffered_records: usize,
    pub(crate) buffered_bytes: usize,
    pub(crate) in_flight: usize,
    pub(crate) paused_by_backpressure: bool,
    /// Being stopped (revoke): nothing more starts.
    pub(crate) stopping: bool,
}

impl PartitionQueue {
    pub(crate) fn new(tp: TopicPartition, ordering: ProcessingOrder, bounds: Bounds) -> Self {
        PartitionQueue {
            topic: Arc::from(tp.topic.as_str()),
            tp,
            ordering,
            bounds,
            lanes: HashMap::new(),
            tracker: OffsetTracker::new(),
            buffered_records: 0,
            buffered_bytes: 0,
            in_flight: 0,
            paused_by_backpressure: false,
            stopping: false,
        }
    }

    fn lane_key(&self, record: &Record) -> LaneKey {
        match self.ordering {
            ProcessingOrder::Key => LaneKey::Key(record.key.clone()),
            ProcessingOrder::Partition | ProcessingOrder::None => LaneKey::Whole,
        }
    }

    fn lane_limit(&self) -> usize {
        match self.ordering {
            ProcessingOrder::None => usize::MAX,
            ProcessingOrder::Partition | ProcessingOrder::Key => 1,
        }
    }

    fn is_full(&self) -> bool {
        self.tracker.window_len() >= self.bounds.max_records
            || self.buffered_bytes >= self.bounds.max_bytes
    }

    /// Whether `size` more bytes fit: below both bounds, or an empty buffer (a record larger than
    /// the byte bound must still get through).
    fn fits(&self, size: usize) -> bool {
        if self.buffered_records == 0 && self.tracker.window_len() < self.bounds.max_records {
            return true;
        }
        self.tracker.window_len() < self.bounds.max_records
            && self.buffered_bytes.saturating_add(size) <= self.bounds.max_bytes
    }

    /// Accepts the prefix of `records` that fits. The caller has checked offsets increase.
    /// `batches` (each batch's last offset and facts, in offset order) gives each record its
    /// batch's facts; records past them get [`BatchInfo::default`].
    pub(crate) fn push(&mut self, records: Vec<Record>, batches: &[(i64, BatchInfo)]) -> Pushed {
        let mut runnable = Vec::new();
        let mut rejected = Vec::new();
        let limit = self.lane_limit();
        let mut batches = batches.iter().peekable();
        let mut records = records.into_iter();
        for record in records.by_ref() {
            let size = record_size(&record);
            if !self.fits(size) || self.tracker.track(record.offset).is_err() {
                rejected.push(record);
                break;
            }
            while batches.next_if(|(last, _)| *last < record.offset).is_some() {}
            let batch = batches.peek().map_or_else(BatchInfo::default, |(_, b)| *b);
            let key = self.lane_key(&record);
            let lane = self.lanes.entry(key.clone()).or_default();
            lane.queue.push_back(Queued {
                record,
                size,
                batch,
            });
            self.buffered_records += 1;
            self.buffered_bytes += size;
            if !lane.scheduled && lane.in_flight < limit && !self.stopping {
                lane.scheduled = true;
                runnable.push(key);
            }
        }
        rejected.extend(records);
        Pushed { runnable, rejected }
    }

    /// Takes the next record of a runnable lane; `None` if the lane cannot run (stale entry).
    /// Clears the lane's `scheduled` flag; [`Self::lane_runnable`] says whether to queue it again.
    pub(crate) fn start_next(&mut self, key: &LaneKey) -> Option<(Record, BatchInfo)> {
        let limit = self.lane_limit();
        let stopping = self.stopping;
        let lane = self.lanes.get_mut(key)?;
        lane.scheduled = false;
        if stopping || lane.in_flight >= limit {
            return None;
        }
        let Queued {
            record,
            size,
            batch,
        } = lane.queue.pop_front()?;
        lane.in_flight += 1;
        self.in_flight += 1;
        self.buffered_records -= 1;
        self.buffered_bytes -= size;
        Some((record, batch))
    }

    /// If the lane can start another record and is not queued, marks it queued and returns true.
    pub(crate) fn schedule_if_runnable(&mut self, key: &LaneKey) -> bool {
        let limit = self.lane_limit();
        if self.stopping {
            return false;
        }
        match self.lanes.get_mut(key) {
            Some(lane) if !lane.scheduled && lane.in_flight < limit && !lane.queue.is_empty() => {
                lane.scheduled = true;
                true
            }
            _ => false,
        }
    }

    /// A record of `key` stopped running, as `end` says. Removes the lane if it is empty and
    /// idle.
    pub(crate) fn finish(&mut self, key: &LaneKey, offset: i64, end: Ended) {
        self.in_flight = self.in_flight.saturating_sub(1);
        match end {
            Ended::Done => {
                self.tracker.complete(offset);
            }
            Ended::Unfinished => {}
            Ended::Abandoned => {
                self.tracker.abandon(offset);
            }
        }
        if let Some(lane) = self.lanes.get_mut(key) {
            lane.in_flight = lane.in_flight.saturating_sub(1);
            if lane.in_flight == 0 && lane.queue.is_empty() && !lane.scheduled {
                self.lanes.remove(key);
            }
        }
    }

    /// Discards every record not started (their offsets stay unfinished in the tracker, so the
    /// committable offset never passes them). Returns how many.
    pub(crate) fn discard_buffered(&mut self) -> usize {
        let n = self.buffered_records;
        self.lanes.retain(|_, lane| {
            lane.queue.clear();
            lane.scheduled = false;
            lane.in_flight > 0
        });
        self.buffered_records = 0;
        self.buffered_bytes = 0;
        n
    }

    /// Re-evaluates backpressure after a change; returns the event to emit on a transition.
    /// A stopping partition changes no state the fetcher still cares about.
    pub(crate) fn check_backpressure(&mut self) -> Option<ProcessingEvent> {
        if self.stopping {
            return None;
        }
        let window_records = self.tracker.window_len();
        let buffered_bytes = self.buffered_bytes;
        if !self.paused_by_backpressure && self.is_full() {
            self.paused_by_backpressure = true;
            return Some(ProcessingEvent::BackpressurePause {
                partition: self.tp.clone(),
                window_records,
                buffered_bytes,
            });
        }
        if self.paused_by_backpressure
            && window_records <= self.bounds.resume_records
            && buffered_bytes <= self.bounds.resume_bytes
        {
            self.paused_by_backpressure = false;
            return Some(ProcessingEvent::BackpressureResume {
                partition: self.tp.clone(),
                window_records,
                buffered_bytes,
            });
        }
        None
    }
}
