//! A lane with a batch handler: ordering `Partition`, one batch at a time. A batch is what the
//! lane has queued when the call starts (every batch submitted so far is taken in first), from
//! the oldest record on, at most `max_batch_records`, in offset order: contiguous in what was
//! fetched, so consecutive batches leave no record out. It holds one permit of the global bound
//! however many records it has, is watched from its start (its first offset is the one the
//! watchdog reports), and its records are finished together: the committable offset passes the
//! batch only when its handler succeeded (or the policy skipped it).

use std::sync::Arc;

use tokio::sync::mpsc::error::TryRecvError;

use super::{Lane, Next, Ran};
use crate::processing::queue::Item;
use crate::processing::record::record_size;
use crate::processing::task;
use crate::processing::{Batch, Dispatch};
use crate::TopicPartition;

/// The lane's loop: the same steps as a record lane's (`run_ordered`), a batch at each.
pub(super) async fn run_batches<H: Dispatch>(mut lane: Lane<H>) {
    let tp = Arc::new(lane.state.tp.clone());
    let cap = lane.ctx.config.max_batch_records.max(1);
    loop {
        // Records their submits started hold permits of their own: the batch needs one more.
        match lane.before_call(lane.inbox.prestarted()).await {
            Next::Call => {}
            Next::Again => continue,
            Next::End => return,
        }
        lane.absorb_ready();
        let items = lane.take_batch(cap);
        if items.is_empty() {
            // Closed, or halted since the look above.
            if !lane.state.is_closed() && lane.ctx.is_halted() {
                lane.halt().await;
            }
            return;
        }
        lane.run_batch(items, &tp).await;
        lane.absorb_ready();
        // Records their submits started keep their permits until they run.
        let more = !lane.inbox.is_empty();
        lane.yield_permits(lane.inbox.prestarted(), more);
    }
}

impl<H: Dispatch> Lane<H> {
    /// Takes in the batches already sent, so a batch is everything queued when it starts.
    fn absorb_ready(&mut self) {
        while self.rx_open {
            match self.rx.try_recv() {
                Ok(m) => self.absorb(m),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => self.rx_open = false,
            }
        }
    }

    /// The next batch's records, claimed from the buffer: up to `cap` from the oldest. Closed or
    /// halted since: only a record its submit started (nothing else may start).
    fn take_batch(&mut self, cap: usize) -> Vec<Item> {
        let (mut n, prestarted) = self.inbox.peek(cap);
        let claimed =
            n == prestarted || (!self.ctx.is_halted() && self.state.claim_many(n - prestarted));
        if !claimed {
            n = usize::from(self.inbox.next_is_prestarted());
        }
        let mut items = Vec::with_capacity(n);
        for _ in 0..n {
            match self.inbox.pop() {
                Some(item) => items.push(item),
                None => break,
            }
        }
        items
    }

    /// Runs one batch in the task itself, holding one permit.
    async fn run_batch(&mut self, items: Vec<Item>, tp: &Arc<TopicPartition>) {
        // Several submits may each have started a record: one permit is the batch's, and those
        // started records still waiting (past the cap) keep theirs.
        let keep = 1 + self.inbox.prestarted();
        if self.held > keep {
            self.release(self.held - keep);
        }
        let bytes: usize = items
            .iter()
            .filter(|i| !i.prestarted)
            .map(|i| record_size(&i.record))
            .sum();
        let records: Vec<_> = items.into_iter().map(|i| self.record(i)).collect();
        let Some(batch) = Batch::of_lane(Arc::clone(tp), records) else {
            return;
        };
        let ran = Ran {
            first: batch.first_offset(),
            last: batch.last_offset(),
            records: batch.len() as u64,
        };
        let start = self.clock.take().unwrap_or_else(|| self.ctx.now_ns());
        self.state.unbuffered(bytes);
        self.state.started(ran.first, start);
        self.state.check_resume(&self.ctx);
        let outcome = task::run(&self.ctx, &self.state.tp, batch).await;
        let end = self.ctx.now_ns();
        self.clock = Some(end);
        self.finish(ran, outcome, start, end);
    }
}
