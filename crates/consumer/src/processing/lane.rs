//! One partition's lane, as the rest of the engine sees it: the gauges its task publishes
//! (committable offset, window, buffered records and bytes, running record and its start time,
//! backpressure) as atomics, and the submit side that accepts fetched records and sends them to
//! the task a whole batch at a time.
//!
//! Who writes what: the submitter adds to the window, the buffered count and the buffered bytes,
//! and may pause; the lane task takes away from them as records start and finish, publishes the
//! committable offset, and may resume. Each count only grows on one side and shrinks on the
//! other, so a submitter's check against a bound is never too lax. A close (revoke, loss,
//! shutdown) sets a bit in the same word as the buffered count, so the records discarded are
//! counted exactly once: those the task had not claimed when the bit was set.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mooring_wire::records::Record;
use tokio::sync::{mpsc, OwnedSemaphorePermit};

use super::context::{lock, Context};
use super::record::record_size;
use super::{
    FetchedRecords, OverdueHandler, PartitionMetrics, ProcessingConfig, ProcessingEvent,
    SubmitError, Submitted,
};
use crate::TopicPartition;

/// The committable offset before anything was accepted.
const NO_OFFSET: i64 = i64::MIN;
const CLOSED: u64 = 1 << 63;

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

    /// Whether a record of `size` bytes fits: below both bounds, or an empty buffer (a record
    /// larger than the byte bound must still get through).
    fn fits(&self, window: usize, buffered: u64, bytes: usize, size: usize) -> bool {
        window < self.max_records && (buffered == 0 || bytes.saturating_add(size) <= self.max_bytes)
    }
}

/// A fetched batch on its way to the lane task. `permit` is set when the submit started the
/// first record (a concurrency permit taken for it while the lane was idle).
#[derive(Debug)]
pub(crate) struct Msg {
    pub(crate) fetched: FetchedRecords,
    pub(crate) permit: Option<OwnedSemaphorePermit>,
}

/// The lane's published state.
#[derive(Debug)]
pub(crate) struct LaneState {
    pub(crate) tp: TopicPartition,
    pub(crate) topic: Arc<str>,
    bounds: Bounds,
    committable: AtomicI64,
    /// Records accepted and not yet committable.
    window: AtomicUsize,
    /// `CLOSED` and the records accepted and not started.
    queued: AtomicU64,
    /// Bytes of the records accepted and not started.
    bytes: AtomicUsize,
    /// Handlers of this lane running now.
    in_flight: AtomicUsize,
    paused: AtomicBool,
    /// Serializes pause/resume transitions, so each is decided and reported once.
    transition: Mutex<()>,
    /// The start (lane timestamp) of the oldest running record, 0 when none runs.
    started_at: AtomicU64,
    running_offset: AtomicI64,
    /// The last record the watchdog reported.
    reported_offset: AtomicI64,
    /// When a handler of the lane last started or finished.
    pub(crate) last_progress: AtomicU64,
}

impl LaneState {
    pub(crate) fn new(tp: TopicPartition, bounds: Bounds) -> Self {
        LaneState {
            topic: Arc::from(tp.topic.as_str()),
            tp,
            bounds,
            committable: AtomicI64::new(NO_OFFSET),
            window: AtomicUsize::new(0),
            queued: AtomicU64::new(0),
            bytes: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            paused: AtomicBool::new(false),
            transition: Mutex::new(()),
            started_at: AtomicU64::new(0),
            running_offset: AtomicI64::new(NO_OFFSET),
            reported_offset: AtomicI64::new(NO_OFFSET),
            last_progress: AtomicU64::new(0),
        }
    }

    pub(crate) fn committable(&self) -> Option<i64> {
        let c = self.committable.load(Ordering::Acquire);
        (c != NO_OFFSET).then_some(c)
    }

    pub(crate) fn publish_committable(&self, offset: Option<i64>) {
        if let Some(c) = offset {
            self.committable.store(c, Ordering::Release);
        }
    }

    pub(crate) fn is_paused(&self) -> bool {
        self.paused.load(Ordering::Acquire)
    }

    pub(crate) fn buffered_records(&self) -> usize {
        usize::try_from(self.queued.load(Ordering::Acquire) & !CLOSED).unwrap_or(usize::MAX)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.queued.load(Ordering::Acquire) & CLOSED != 0
    }

    /// Closes the lane: nothing more starts. Returns the records discarded (accepted, not
    /// claimed by the task).
    pub(crate) fn close(&self) -> usize {
        let before = self.queued.fetch_or(CLOSED, Ordering::AcqRel);
        usize::try_from(before & !CLOSED).unwrap_or(usize::MAX)
    }

    /// The task takes one buffered record to start it; `false` once closed.
    pub(crate) fn claim(&self) -> bool {
        let mut q = self.queued.load(Ordering::Acquire);
        loop {
            if q & CLOSED != 0 {
                return false;
            }
            if q == 0 {
                return true;
            }
            match self
                .queued
                .compare_exchange_weak(q, q - 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(now) => q = now,
            }
        }
    }

    /// The task takes `n` buffered records at once to start them as one batch; `false` (and
    /// nothing taken) once closed.
    pub(crate) fn claim_many(&self, n: usize) -> bool {
        let n = n as u64;
        let mut q = self.queued.load(Ordering::Acquire);
        loop {
            if q & CLOSED != 0 {
                return false;
            }
            match self.queued.compare_exchange_weak(
                q,
                q.saturating_sub(n),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => q = now,
            }
        }
    }

    /// A record of `size` buffered bytes (0 if the submit started it) left the buffer.
    pub(crate) fn unbuffered(&self, size: usize) {
        if size > 0 {
            self.bytes.fetch_sub(size, Ordering::AcqRel);
        }
    }

    /// The lane's only running record (or batch, from `offset`) started at `now`.
    pub(crate) fn started(&self, offset: i64, now: u64) {
        self.in_flight.store(1, Ordering::Release);
        self.running_offset.store(offset, Ordering::Relaxed);
        self.started_at.store(now, Ordering::Release);
        self.last_progress.store(now, Ordering::Relaxed);
    }

    /// The oldest running record now (or none).
    pub(crate) fn set_oldest(&self, oldest: Option<(i64, u64)>, running: usize) {
        self.in_flight.store(running, Ordering::Release);
        match oldest {
            Some((offset, start)) => {
                self.running_offset.store(offset, Ordering::Relaxed);
                self.started_at.store(start, Ordering::Release);
            }
            None => self.started_at.store(0, Ordering::Release),
        }
    }

    /// `n` records left the window (finished, with nothing unfinished below them).
    pub(crate) fn window_popped(&self, n: usize) {
        if n > 0 {
            self.window.fetch_sub(n, Ordering::AcqRel);
        }
    }

    /// Resumes fetching once the window and the bytes are at or below the low watermarks.
    pub(crate) fn check_resume<H>(&self, ctx: &Context<H>) {
        if !self.paused.load(Ordering::Relaxed) {
            return;
        }
        let _t = lock(&self.transition);
        let window_records = self.window.load(Ordering::Acquire);
        let buffered_bytes = self.bytes.load(Ordering::Acquire);
        if self.paused.load(Ordering::Acquire)
            && !self.is_closed()
            && window_records <= self.bounds.resume_records
            && buffered_bytes <= self.bounds.resume_bytes
        {
            self.paused.store(false, Ordering::Release);
            ctx.emit(ProcessingEvent::BackpressureResume {
                partition: self.tp.clone(),
                window_records,
                buffered_bytes,
            });
            ctx.backpressure.changed();
        }
    }

    /// Pauses fetching once the window or the bytes reach their bound.
    fn check_pause<H>(&self, ctx: &Context<H>) {
        if self.paused.load(Ordering::Acquire) {
            return;
        }
        let _t = lock(&self.transition);
        let window_records = self.window.load(Ordering::Acquire);
        let buffered_bytes = self.bytes.load(Ordering::Acquire);
        if !self.paused.load(Ordering::Acquire)
            && !self.is_closed()
            && (window_records >= self.bounds.max_records
                || buffered_bytes >= self.bounds.max_bytes)
        {
            self.paused.store(true, Ordering::Release);
            ctx.emit(ProcessingEvent::BackpressurePause {
                partition: self.tp.clone(),
                window_records,
                buffered_bytes,
            });
            ctx.backpressure.changed();
        }
    }

    /// The running record and how long it has run, if one runs.
    fn running<H>(&self, now: u64) -> Option<(i64, Duration)> {
        let start = self.started_at.load(Ordering::Acquire);
        (start != 0).then(|| {
            let offset = self.running_offset.load(Ordering::Relaxed);
            (offset, Context::<H>::between(start, now))
        })
    }

    /// The oldest running record, if past `max.poll.interval.ms`.
    pub(crate) fn overdue<H>(&self, ctx: &Context<H>, now: u64) -> Option<OverdueHandler> {
        let (offset, elapsed) = self.running::<H>(now)?;
        (elapsed >= ctx.config.max_poll_interval).then(|| OverdueHandler {
            partition: self.tp.clone(),
            offset,
            elapsed,
        })
    }

    /// Reports the oldest running record once when it passes `max.poll.interval.ms`. Returns
    /// when to look at the lane again (a lane timestamp), if a record runs: when that record
    /// comes due, or `recheck` from `now` once it is overdue (a record the lane does not show
    /// meanwhile, with orderings `Key` and `None`, may come due before it ends).
    pub(crate) fn scan_overdue<H>(
        &self,
        ctx: &Context<H>,
        now: u64,
        recheck: Duration,
    ) -> Option<u64> {
        let (offset, elapsed) = self.running::<H>(now)?;
        let limit = ctx.config.max_poll_interval;
        if elapsed < limit {
            return Some(now.saturating_add(nanos(limit - elapsed)));
        }
        if self.reported_offset.swap(offset, Ordering::AcqRel) != offset {
            ctx.poll_interval_exceeded.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(partition = %self.tp, offset, ?elapsed, "record handler exceeded max.poll.interval.ms");
            ctx.emit(ProcessingEvent::PollIntervalExceeded {
                partition: self.tp.clone(),
                offset,
                elapsed,
            });
        }
        Some(now.saturating_add(nanos(recheck)))
    }

    pub(crate) fn metrics(&self) -> PartitionMetrics {
        PartitionMetrics {
            partition: self.tp.clone(),
            buffered_records: self.buffered_records(),
            buffered_bytes: self.bytes.load(Ordering::Acquire),
            in_flight: self.in_flight.load(Ordering::Acquire),
            window_records: self.window.load(Ordering::Acquire),
            committable: self.committable(),
            paused_by_backpressure: self.is_paused(),
        }
    }

    /// Whether the lane is idle: nothing buffered, nothing running.
    fn is_idle(&self) -> bool {
        self.queued.load(Ordering::Acquire) & !CLOSED == 0
            && self.in_flight.load(Ordering::Acquire) == 0
    }
}

/// The submitting side of a lane: the channel to its task and the last offset accepted.
#[derive(Debug)]
struct SubmitSide {
    tx: mpsc::UnboundedSender<Msg>,
    last: Option<i64>,
}

/// A lane in the engine's table.
#[derive(Debug)]
pub(crate) struct LaneHandle {
    pub(crate) id: u64,
    pub(crate) state: Arc<LaneState>,
    pub(crate) join: tokio::task::JoinHandle<()>,
    submit: Mutex<SubmitSide>,
}

impl LaneHandle {
    pub(crate) fn new(
        id: u64,
        state: Arc<LaneState>,
        tx: mpsc::UnboundedSender<Msg>,
        join: tokio::task::JoinHandle<()>,
    ) -> Self {
        LaneHandle {
            id,
            state,
            join,
            submit: Mutex::new(SubmitSide { tx, last: None }),
        }
    }

    /// Accepts the prefix of `records` that fits and sends it to the task in one message. If the
    /// lane is idle and a concurrency permit is free, the first record starts now (its permit
    /// goes with the batch, and its bytes are not buffered), so a record that starts at once
    /// never causes a pause.
    pub(crate) fn submit<H>(
        &self,
        ctx: &Context<H>,
        fetched: FetchedRecords,
    ) -> Result<Submitted, SubmitError> {
        let FetchedRecords {
            mut records,
            batches,
        } = fetched;
        let mut side = lock(&self.submit);
        check_increasing(&self.state.tp, side.last, &records)?;
        let st = &self.state;
        let permit = (!records.is_empty()
            && st.is_idle()
            && !ctx.is_halted()
            && ctx.waiting.load(Ordering::Acquire) == 0)
            .then(|| Arc::clone(&ctx.permits).try_acquire_owned().ok())
            .flatten();
        let window = st.window.load(Ordering::Acquire);
        let mut buffered = st.queued.load(Ordering::Acquire) & !CLOSED;
        let mut bytes = st.bytes.load(Ordering::Acquire);
        let (mut accepted, mut added_bytes) = (0usize, 0usize);
        for r in &records {
            let size = record_size(r);
            if !st.bounds.fits(window + accepted, buffered, bytes, size) {
                break;
            }
            if accepted > 0 || permit.is_none() {
                buffered += 1;
                bytes += size;
                added_bytes += size;
            }
            accepted += 1;
        }
        let rejected = records.split_off(accepted);
        let (Some(first), Some(last)) = (records.first(), records.last()) else {
            return Ok(Submitted {
                accepted: 0,
                rejected,
                paused_by_backpressure: st.is_paused(),
            });
        };
        let (first, last) = (first.offset, last.offset);
        let started = usize::from(permit.is_some());
        let _ =
            st.committable
                .compare_exchange(NO_OFFSET, first, Ordering::AcqRel, Ordering::Acquire);
        st.window.fetch_add(accepted, Ordering::AcqRel);
        st.bytes.fetch_add(added_bytes, Ordering::AcqRel);
        st.queued
            .fetch_add((accepted - started) as u64, Ordering::AcqRel);
        if started > 0 {
            ctx.observe_in_flight();
        }
        let msg = Msg {
            fetched: FetchedRecords { records, batches },
            permit,
        };
        if side.tx.send(msg).is_err() {
            // The lane's task is gone (its runtime is shutting down): nothing can run.
            return Err(SubmitError::UnknownPartition(st.tp.clone()));
        }
        side.last = Some(last);
        drop(side);
        st.check_pause(ctx);
        Ok(Submitted {
            accepted,
            rejected,
            paused_by_backpressure: st.is_paused(),
        })
    }
}

/// A duration in nanoseconds, as lane timestamps count (saturating).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// All-or-nothing: every offset above the last accepted one and above the one before it.
fn check_increasing(
    tp: &TopicPartition,
    mut last: Option<i64>,
    records: &[Record],
) -> Result<(), SubmitError> {
    for r in records {
        if let Some(l) = last.filter(|&l| r.offset <= l) {
            return Err(SubmitError::OffsetNotIncreasing {
                partition: tp.clone(),
                offset: r.offset,
                last: l,
            });
        }
        last = Some(r.offset);
    }
    Ok(())
}
