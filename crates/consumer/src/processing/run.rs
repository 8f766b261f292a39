//! The lane task: one long-lived Tokio task per partition, fed whole fetched batches, that
//! awaits the handler inline. It owns the partition's [`OffsetTracker`] and its waiting records,
//! and publishes what others read (committable offset, window, running record) in its
//! [`LaneState`].
//!
//! - Ordering `Partition`: one record at a time, in offset order, awaited in the task itself.
//! - Orderings `Key` and `None`: the lane drives up to `concurrency` handlers of its own at once
//!   (a `FuturesUnordered`, no task per record); with `Key` a key's records run one at a time in
//!   offset order and keys take turns ([`KeyQueue`]).
//! - A batch handler ([`Batches`](super::Batches)): ordering `Partition`, one batch at a time, of
//!   what the lane has queued (the `batches` module).
//!
//! Each running record holds a permit of the global bound. A lane keeps its permit from one
//! record to the next, and gives it back when it goes idle or when another lane waits for one
//! (the semaphore is FIFO, so lanes take turns). Counts go to the shared stats every
//! [`FLUSH_EVERY`] records and whenever the lane goes idle, halts or ends.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::mpsc;

use super::context::{Context, Stats};
use super::lane::{LaneState, Msg};
use super::queue::{Inbox, Item, KeyQueue};
use super::record::record_size;
use super::task::{self, Outcome};
use super::{
    ConsumerRecord, Dispatch, FailureAction, HandlerFailure, OffsetTracker, ProcessingEvent,
    ProcessingOrder,
};
use crate::TopicPartition;

mod batches;

/// Records (finished) between two flushes of a busy lane's counts.
const FLUSH_EVERY: u32 = 256;

/// A lane task's own state.
pub(crate) struct Lane<H: Dispatch> {
    ctx: Arc<Context<H>>,
    state: Arc<LaneState>,
    rx: mpsc::UnboundedReceiver<Msg>,
    rx_open: bool,
    tracker: OffsetTracker,
    inbox: Inbox,
    /// Permits of the global bound this lane holds.
    held: usize,
    /// Records of this lane that may run at once.
    limit: usize,
    stats: Stats,
    since_flush: u32,
    /// When the last record ended, if the lane has awaited nothing else since: the next start.
    clock: Option<u64>,
}

impl<H: Dispatch> Lane<H> {
    pub(crate) fn new(
        ctx: Arc<Context<H>>,
        state: Arc<LaneState>,
        rx: mpsc::UnboundedReceiver<Msg>,
    ) -> Self {
        let limit = match ctx.config.ordering {
            ProcessingOrder::Partition => 1,
            ProcessingOrder::Key | ProcessingOrder::None => ctx.config.concurrency,
        };
        Lane {
            ctx,
            state,
            rx,
            rx_open: true,
            tracker: OffsetTracker::new(),
            inbox: Inbox::default(),
            held: 0,
            limit,
            stats: Stats::default(),
            since_flush: 0,
            clock: None,
        }
    }

    /// The task's body; ends when the lane is closed (after its running handlers) or when the
    /// engine is gone (after its buffered records).
    pub(crate) async fn run(self) {
        if H::BATCHES {
            return batches::run_batches(self).await;
        }
        match self.ctx.config.ordering {
            ProcessingOrder::Partition => run_ordered(self).await,
            ProcessingOrder::Key => run_concurrent(self, true).await,
            ProcessingOrder::None => run_concurrent(self, false).await,
        }
    }

    fn absorb(&mut self, msg: Msg) {
        for r in &msg.fetched.records {
            if let Err(e) = self.tracker.track(r.offset) {
                // The submit side refuses such batches; tracked or not, the commit cannot pass
                // an unfinished offset below it.
                tracing::error!(partition = %self.state.tp, error = %e, "record out of order in its lane");
            }
        }
        self.state.publish_committable(self.tracker.committable());
        let prestarted = msg.permit.is_some();
        if let Some(p) = msg.permit {
            p.forget();
            self.held += 1;
        }
        self.inbox.push(msg.fetched, prestarted);
    }

    /// Waits for the next batch; `false` once the channel is closed.
    async fn recv(&mut self) -> bool {
        self.clock = None;
        if !self.rx_open {
            return false;
        }
        match self.rx.recv().await {
            Some(m) => {
                self.absorb(m);
                true
            }
            None => {
                self.rx_open = false;
                false
            }
        }
    }

    fn flush(&mut self) {
        if !self.stats.is_empty() {
            self.ctx.add_stats(&self.stats);
            self.stats = Stats::default();
        }
        self.since_flush = 0;
    }

    fn release(&mut self, n: usize) {
        let n = n.min(self.held);
        self.held -= n;
        self.ctx.release(n);
    }

    /// Nothing to run: counts flushed, permits back, waiters of a drain told.
    fn go_idle(&mut self) {
        self.flush();
        self.release(self.held);
        self.state.set_oldest(None, 0);
        self.ctx.progress.notify();
    }

    /// A free permit, unless another lane is already waiting for one.
    fn try_acquire(&mut self) -> bool {
        if self.ctx.waiting.load(Ordering::Acquire) > 0 {
            return false;
        }
        match self.ctx.permits.try_acquire() {
            Ok(p) => {
                p.forget();
                self.held += 1;
                self.ctx.observe_in_flight();
                true
            }
            Err(_) => false,
        }
    }

    /// Takes a permit, waiting in line for one (taking batches meanwhile) if none is free.
    /// `false`: the lane was closed meanwhile.
    async fn acquire(&mut self) -> bool {
        if self.try_acquire() {
            return true;
        }
        self.flush();
        self.state.set_oldest(None, 0);
        self.clock = None;
        self.ctx.waiting.fetch_add(1, Ordering::SeqCst);
        let ctx = Arc::clone(&self.ctx);
        let got = loop {
            if self.state.is_closed() {
                break false;
            }
            tokio::select! {
                p = ctx.permits.acquire() => match p {
                    Ok(p) => {
                        p.forget();
                        break true;
                    }
                    Err(_) => break false,
                },
                m = self.rx.recv(), if self.rx_open => match m {
                    Some(m) => self.absorb(m),
                    None => self.rx_open = false,
                },
            }
        };
        self.ctx.waiting.fetch_sub(1, Ordering::SeqCst);
        if got {
            self.held += 1;
            self.ctx.observe_in_flight();
        }
        got
    }

    /// Halted by a failure: starts nothing more, and keeps taking batches (their offsets stay
    /// tracked, unfinished) until the lane is closed or the engine is gone.
    async fn halt(&mut self) {
        self.go_idle();
        while self.recv().await {
            self.release(self.held);
        }
    }

    fn record(&self, item: Item) -> ConsumerRecord {
        ConsumerRecord::new(
            Arc::clone(&self.state.topic),
            self.state.tp.partition,
            item.record,
        )
        .with_batch(item.batch)
    }

    /// Runs one record in the task itself (ordering `Partition`).
    async fn run_one(&mut self, item: Item) {
        let size = if item.prestarted {
            0
        } else {
            record_size(&item.record)
        };
        let offset = item.record.offset;
        let start = self.clock.take().unwrap_or_else(|| self.ctx.now_ns());
        self.state.unbuffered(size);
        self.state.started(offset, start);
        self.state.check_resume(&self.ctx);
        let record = self.record(item);
        let outcome = task::run(&self.ctx, &self.state.tp, record).await;
        let end = self.ctx.now_ns();
        self.clock = Some(end);
        self.finish(Ran::one(offset), outcome, start, end);
    }

    /// A handler's run ended: its offsets in the tracker, the counts, the events.
    fn finish(&mut self, ran: Ran, outcome: Outcome, start: u64, end: u64) {
        let latency = Context::<H>::between(start, end);
        let offset = ran.first;
        match outcome {
            Outcome::Succeeded => {
                self.stats.completed += ran.records;
                self.stats.latency.record(latency);
                self.complete(ran);
            }
            Outcome::Skipped { error, attempts } => {
                self.stats.failed += 1;
                self.stats.skipped += ran.records;
                self.stats.latency.record(latency);
                let partition = self.state.tp.clone();
                if H::BATCHES {
                    let (last, records) = (ran.last, ran.records);
                    tracing::warn!(%partition, offset, last, records, attempts, error = %error, "batch handler failed; the whole batch skipped");
                } else {
                    tracing::warn!(%partition, offset, attempts, error = %error, "record handler failed; record skipped");
                }
                self.ctx.emit(ProcessingEvent::HandlerFailed {
                    partition,
                    offset,
                    attempt: attempts.saturating_sub(1),
                    error,
                    action: FailureAction::Skip,
                });
                self.complete(ran);
            }
            Outcome::Failed { error, attempts } => {
                self.stats.failed += 1;
                self.stats.latency.record(latency);
                let partition = self.state.tp.clone();
                if H::BATCHES {
                    let (last, records) = (ran.last, ran.records);
                    tracing::error!(%partition, offset, last, records, attempts, error = %error, "batch handler failed; processing stopped, nothing of the batch committed");
                } else {
                    tracing::error!(%partition, offset, attempts, error = %error, "record handler failed; processing stopped");
                }
                self.ctx.emit(ProcessingEvent::HandlerFailed {
                    partition: partition.clone(),
                    offset,
                    attempt: attempts.saturating_sub(1),
                    error: Arc::clone(&error),
                    action: FailureAction::Stop,
                });
                self.flush();
                self.ctx.halt(HandlerFailure {
                    partition,
                    offset,
                    attempts,
                    error,
                });
            }
            Outcome::Cancelled => {}
            // Only the stream's record handler gives records up; a batch handler cannot, and a
            // batch's offsets would simply stay unfinished.
            Outcome::Abandoned => {
                self.stats.abandoned += ran.records;
                self.tracker.abandon(offset);
                let partition = self.state.tp.clone();
                tracing::warn!(%partition, offset, "record given up unprocessed (delivery dropped without ack); the partition's commits stop at it until it is fetched again");
                self.ctx
                    .emit(ProcessingEvent::RecordAbandoned { partition, offset });
            }
        }
        self.state.last_progress.store(end, Ordering::Relaxed);
        self.since_flush = self
            .since_flush
            .saturating_add(u32::try_from(ran.records).unwrap_or(u32::MAX));
        if self.since_flush >= FLUSH_EVERY {
            self.flush();
        }
    }

    fn complete(&mut self, ran: Ran) {
        let before = self.tracker.window_len();
        if ran.records == 1 {
            self.tracker.complete(ran.first);
        } else {
            self.tracker.complete_range(ran.first, ran.last);
        }
        let popped = before - self.tracker.window_len();
        if popped > 0 {
            self.state.publish_committable(self.tracker.committable());
            self.state.window_popped(popped);
            self.state.check_resume(&self.ctx);
        }
    }

    /// After a record: gives back the permits this lane cannot use now, and its permit too when
    /// another lane waits for one.
    fn yield_permits(&mut self, running: usize, can_start: bool) {
        let waiting = self.ctx.waiting.load(Ordering::Acquire) > 0;
        let keep = if waiting || !can_start {
            running
        } else {
            running + 1
        };
        if self.held > keep {
            self.release(self.held - keep);
        }
    }
}

impl<H: Dispatch> Drop for Lane<H> {
    /// The lane ends (or its task is dropped): what was started by a submit and never ran is
    /// discarded (the close counted the rest), the counts and the permits go back.
    fn drop(&mut self) {
        let mut discarded = self.inbox.clear();
        self.rx.close();
        while let Ok(m) = self.rx.try_recv() {
            discarded += usize::from(m.permit.is_some());
        }
        self.stats.discarded += discarded as u64;
        self.state.publish_committable(self.tracker.committable());
        self.flush();
        self.release(self.held);
        self.state.set_oldest(None, 0);
        self.ctx
            .lane_gone(self.state.last_progress.load(Ordering::Relaxed));
        self.ctx.progress.notify();
    }
}

/// What one handler call covered: a record, or a batch's records from `first` to `last`.
#[derive(Debug, Clone, Copy)]
struct Ran {
    first: i64,
    last: i64,
    records: u64,
}

impl Ran {
    fn one(offset: i64) -> Self {
        Ran {
            first: offset,
            last: offset,
            records: 1,
        }
    }
}

/// What an ordered lane does next, as [`Lane::before_call`] finds it.
enum Next {
    /// Call the handler.
    Call,
    /// Look again (work or a permit arrived).
    Again,
    /// The lane ends (closed, halted, or the engine is gone).
    End,
}

impl<H: Dispatch> Lane<H> {
    /// The steps before an ordered lane's next handler call: wait for work; then, unless the
    /// next record is one its submit started (it runs even if the lane closed since, as a
    /// running one would), end when closed or halted, and wait for a permit while the lane holds
    /// no more than the `reserved` ones of such started records.
    async fn before_call(&mut self, reserved: usize) -> Next {
        if self.inbox.is_empty() {
            self.go_idle();
            return if self.recv().await {
                Next::Again
            } else {
                Next::End
            };
        }
        if self.inbox.next_is_prestarted() {
            return Next::Call;
        }
        if self.state.is_closed() {
            return Next::End;
        }
        if self.ctx.is_halted() {
            self.halt().await;
            return Next::End;
        }
        if self.held <= reserved {
            return if self.acquire().await {
                Next::Again
            } else {
                Next::End
            };
        }
        Next::Call
    }
}

/// Ordering `Partition`: one record at a time, awaited here.
async fn run_ordered<H: Dispatch>(mut lane: Lane<H>) {
    loop {
        match lane.before_call(0).await {
            Next::Call => {}
            Next::Again => continue,
            Next::End => return,
        }
        if !lane.inbox.next_is_prestarted() && !lane.state.claim() {
            return;
        }
        let Some(item) = lane.inbox.pop() else {
            continue;
        };
        lane.run_one(item).await;
        let more = !lane.inbox.is_empty();
        lane.yield_permits(0, more);
    }
}

/// The records waiting in a concurrent lane: as they came (`None`), or by key (`Key`).
struct Waiting {
    keys: Option<KeyQueue>,
}

impl Waiting {
    fn take_inbox(&mut self, inbox: &mut Inbox) {
        if let Some(keys) = &mut self.keys {
            while let Some(item) = inbox.pop() {
                keys.push(item);
            }
        }
    }

    fn is_empty(&self, inbox: &Inbox) -> bool {
        self.keys
            .as_ref()
            .map_or_else(|| inbox.is_empty(), KeyQueue::is_empty)
    }

    fn has_startable(&self, inbox: &Inbox) -> bool {
        self.keys
            .as_ref()
            .map_or_else(|| !inbox.is_empty(), KeyQueue::has_startable)
    }

    fn next_is_prestarted(&self, inbox: &Inbox) -> bool {
        self.keys
            .as_ref()
            .map_or_else(|| inbox.next_is_prestarted(), KeyQueue::next_is_prestarted)
    }

    fn pop(&mut self, inbox: &mut Inbox) -> Option<Item> {
        match &mut self.keys {
            Some(keys) => keys.pop(),
            None => inbox.pop(),
        }
    }

    /// The key a record runs under (none without key ordering).
    fn key_of(&self, item: &Item) -> Option<Bytes> {
        self.keys.as_ref().and(item.record.key.clone())
    }

    fn finish(&mut self, key: &Option<Bytes>) {
        if let Some(keys) = &mut self.keys {
            keys.finish(key);
        }
    }
}

async fn run_record<H: Dispatch>(
    ctx: &Context<H>,
    tp: &TopicPartition,
    record: ConsumerRecord,
    key: Option<Bytes>,
    start: u64,
) -> (i64, Option<Bytes>, u64, Outcome) {
    let offset = record.offset();
    (offset, key, start, task::run(ctx, tp, record).await)
}

/// Orderings `Key` and `None`: up to `concurrency` handlers of the lane at once.
async fn run_concurrent<H: Dispatch>(mut lane: Lane<H>, keyed: bool) {
    let ctx = Arc::clone(&lane.ctx);
    let state = Arc::clone(&lane.state);
    let mut waiting = Waiting {
        keys: keyed.then(KeyQueue::default),
    };
    let mut running = FuturesUnordered::new();
    // (offset, start) of each running record, for the watchdog's oldest.
    let mut starts: Vec<(i64, u64)> = Vec::new();
    loop {
        waiting.take_inbox(&mut lane.inbox);
        while running.len() < lane.limit && waiting.has_startable(&lane.inbox) {
            if !waiting.next_is_prestarted(&lane.inbox) {
                if state.is_closed() || ctx.is_halted() {
                    break;
                }
                let permit = lane.held > running.len() || lane.try_acquire();
                if !permit || !state.claim() {
                    break;
                }
            }
            let Some(item) = waiting.pop(&mut lane.inbox) else {
                break;
            };
            let size = if item.prestarted {
                0
            } else {
                record_size(&item.record)
            };
            let key = waiting.key_of(&item);
            let start = ctx.now_ns();
            starts.push((item.record.offset, start));
            state.unbuffered(size);
            state.check_resume(&ctx);
            running.push(run_record(&ctx, &state.tp, lane.record(item), key, start));
        }
        let oldest = starts.iter().min_by_key(|(_, s)| *s).copied();
        state.set_oldest(oldest, running.len());
        if running.is_empty() {
            if state.is_closed() && !waiting.next_is_prestarted(&lane.inbox) {
                break;
            }
            if waiting.is_empty(&lane.inbox) {
                lane.go_idle();
                if !lane.recv().await {
                    break;
                }
            } else if ctx.is_halted() {
                lane.halt().await;
                break;
            } else if !lane.acquire().await {
                break;
            }
            continue;
        }
        let want = running.len() < lane.limit
            && waiting.has_startable(&lane.inbox)
            && lane.held <= running.len()
            && !state.is_closed()
            && !ctx.is_halted();
        if want {
            ctx.waiting.fetch_add(1, Ordering::SeqCst);
        }
        tokio::select! {
            Some((offset, key, start, outcome)) = running.next() => {
                starts.retain(|(o, _)| *o != offset);
                waiting.finish(&key);
                lane.finish(Ran::one(offset), outcome, start, ctx.now_ns());
                let can_start = waiting.has_startable(&lane.inbox);
                lane.yield_permits(running.len(), can_start);
            }
            m = lane.rx.recv(), if lane.rx_open => match m {
                Some(m) => lane.absorb(m),
                None => lane.rx_open = false,
            },
            p = ctx.permits.acquire(), if want => {
                if let Ok(p) = p {
                    p.forget();
                    lane.held += 1;
                    ctx.observe_in_flight();
                }
            }
        }
        if want {
            ctx.waiting.fetch_sub(1, Ordering::SeqCst);
        }
    }
    if let Some(keys) = &mut waiting.keys {
        lane.stats.discarded += keys.clear() as u64;
    }
}
