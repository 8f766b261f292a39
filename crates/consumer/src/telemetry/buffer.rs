//! The exporter's bounded buffer: events wait here for the next POST. When it is full the oldest
//! event is dropped (the newest say more about the consumer's state now) and counted. Guarded by
//! a `std` mutex that is never held across an `.await`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use mooring_telemetry_schema::Envelope;

#[derive(Debug)]
pub(crate) struct Buffer {
    queue: Mutex<VecDeque<Envelope>>,
    capacity: usize,
    dropped: AtomicU64,
}

impl Buffer {
    pub(crate) fn new(capacity: usize) -> Self {
        Buffer {
            queue: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            dropped: AtomicU64::new(0),
        }
    }

    /// Appends; returns the length after.
    pub(crate) fn push(&self, envelope: Envelope) -> usize {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        while queue.len() >= self.capacity {
            queue.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        queue.push_back(envelope);
        queue.len()
    }

    /// Takes up to `max` of the oldest events.
    pub(crate) fn take(&self, max: usize) -> Vec<Envelope> {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        let n = queue.len().min(max);
        queue.drain(..n).collect()
    }

    /// Puts a batch that could not be sent back in front, dropping (and counting) what no longer
    /// fits.
    pub(crate) fn put_back(&self, batch: Vec<Envelope>) {
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        for envelope in batch.into_iter().rev() {
            if queue.len() >= self.capacity {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                continue;
            }
            queue.push_front(envelope);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Events this buffer dropped.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}
