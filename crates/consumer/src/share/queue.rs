//! The queue between the fetcher and the workers. The fetcher puts an answer's records in at once;
//! a worker takes one record at a time and, while any are queued, takes the next without waiting
//! on a lock or waking another task: a worker sleeps only when the queue is empty, and an answer
//! wakes the sleeping ones once. (A channel receiver shared behind an async lock would wake a task
//! for every record.)

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use tokio::sync::Notify;

use crate::processing::ConsumerRecord;

#[derive(Debug, Default)]
pub(crate) struct RecordQueue {
    queued: Mutex<Queued>,
    ready: Notify,
}

#[derive(Debug, Default)]
struct Queued {
    records: VecDeque<ConsumerRecord>,
    /// Nothing more will be put in (the fetcher ended).
    closed: bool,
}

impl RecordQueue {
    /// Queues `records` behind those already queued, in their order.
    pub(crate) fn push(&self, records: impl IntoIterator<Item = ConsumerRecord>) {
        let added = {
            let mut queued = self.lock();
            let before = queued.records.len();
            queued.records.extend(records);
            queued.records.len() > before
        };
        if added {
            self.ready.notify_waiters();
        }
    }

    /// No more records come: workers waiting on an empty queue end.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_waiters();
    }

    /// The next record, if one is queued.
    pub(crate) fn try_pop(&self) -> Option<ConsumerRecord> {
        self.lock().records.pop_front()
    }

    /// The next record, once one is queued; `None` once the queue is closed and empty.
    pub(crate) async fn pop(&self) -> Option<ConsumerRecord> {
        // While records are queued, no waiter is registered (that takes the Notify's own lock).
        if let Some(record) = self.try_pop() {
            return Some(record);
        }
        loop {
            // Registered before the queue is looked at, so a push in between still wakes it.
            let notified = self.ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut queued = self.lock();
                if let Some(record) = queued.records.pop_front() {
                    return Some(record);
                }
                if queued.closed {
                    return None;
                }
            }
            notified.await;
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queued> {
        self.queued.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use mooring_wire::records::Record;

    fn record(offset: i64) -> ConsumerRecord {
        ConsumerRecord::new(Arc::from("t"), 0, Record::new(offset, 0, None, None))
    }

    #[tokio::test]
    async fn workers_waiting_on_an_empty_queue_take_what_one_push_brings_in_order() {
        let queue = Arc::new(RecordQueue::default());
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let queue = Arc::clone(&queue);
                tokio::spawn(async move { queue.pop().await.map(|r| r.offset()) })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(20)).await;
        queue.push((0..3).map(record));
        let mut got = Vec::new();
        for task in waiting {
            got.push(
                tokio::time::timeout(Duration::from_secs(5), task)
                    .await
                    .unwrap()
                    .unwrap(),
            );
        }
        got.sort();
        assert_eq!(got, vec![Some(0), Some(1), Some(2)]);
        assert!(queue.try_pop().is_none());
    }

    #[tokio::test]
    async fn a_closed_queue_gives_what_it_holds_then_ends_its_waiters() {
        let queue = Arc::new(RecordQueue::default());
        queue.push([record(7)]);
        queue.close();
        assert_eq!(queue.pop().await.map(|r| r.offset()), Some(7));
        assert!(queue.pop().await.is_none());

        let empty = Arc::new(RecordQueue::default());
        let waiter = {
            let empty = Arc::clone(&empty);
            tokio::spawn(async move { empty.pop().await.is_none() })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        empty.close();
        assert!(tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap());
    }
}
