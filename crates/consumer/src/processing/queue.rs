//! A lane task's records waiting to start, local to the task (no lock): the batches as they
//! arrived ([`Inbox`]), and for ordering `Key` the records by key ([`KeyQueue`]): same key one at
//! a time in offset order, keys taking turns (FIFO) for the lane's slots. A key holds an entry
//! only while it has records waiting or running.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use mooring_wire::records::Record;

use super::{BatchInfo, FetchedBatch, FetchedRecords};

/// A record to start, with its batch's facts. `prestarted`: the submit started it (its permit
/// came with its batch), so it is not counted as buffered.
#[derive(Debug)]
pub(crate) struct Item {
    pub(crate) record: Record,
    pub(crate) batch: BatchInfo,
    pub(crate) prestarted: bool,
}

/// One received batch, consumed from the front.
#[derive(Debug)]
struct Cursor {
    records: std::vec::IntoIter<Record>,
    batches: Vec<FetchedBatch>,
    next_batch: usize,
    prestarted: bool,
}

/// Received batches, in order.
#[derive(Debug, Default)]
pub(crate) struct Inbox {
    batches: VecDeque<Cursor>,
}

impl Inbox {
    pub(crate) fn push(&mut self, fetched: FetchedRecords, prestarted: bool) {
        let FetchedRecords { records, batches } = fetched;
        if !records.is_empty() {
            self.batches.push_back(Cursor {
                records: records.into_iter(),
                batches,
                next_batch: 0,
                prestarted,
            });
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.batches.is_empty()
    }

    /// The next record was started by its submit.
    pub(crate) fn next_is_prestarted(&self) -> bool {
        self.batches.front().is_some_and(|c| c.prestarted)
    }

    /// Records waiting that their submit started (each holds a permit of its own).
    pub(crate) fn prestarted(&self) -> usize {
        self.batches.iter().filter(|c| c.prestarted).count()
    }

    /// Of the next `max` records (or fewer, if fewer wait): how many there are, and how many of
    /// them their submit started.
    pub(crate) fn peek(&self, max: usize) -> (usize, usize) {
        let (mut n, mut prestarted) = (0, 0);
        for c in &self.batches {
            if n == max {
                break;
            }
            let k = c.records.len().min(max - n);
            n += k;
            prestarted += usize::from(c.prestarted && k > 0);
        }
        (n, prestarted)
    }

    pub(crate) fn pop(&mut self) -> Option<Item> {
        let cursor = self.batches.front_mut()?;
        let record = cursor.records.next()?;
        let prestarted = std::mem::take(&mut cursor.prestarted);
        while cursor
            .batches
            .get(cursor.next_batch)
            .is_some_and(|b| b.last_offset < record.offset)
        {
            cursor.next_batch += 1;
        }
        let batch = cursor
            .batches
            .get(cursor.next_batch)
            .map_or_else(BatchInfo::default, |b| b.info);
        if cursor.records.len() == 0 {
            self.batches.pop_front();
        }
        Some(Item {
            record,
            batch,
            prestarted,
        })
    }

    /// Drops everything; returns how many of the records dropped had been started by their
    /// submit (the others were counted as buffered).
    pub(crate) fn clear(&mut self) -> usize {
        let n = self.batches.iter().filter(|c| c.prestarted).count();
        self.batches.clear();
        n
    }
}

#[derive(Debug, Default)]
struct KeyLane {
    queue: VecDeque<Item>,
    running: bool,
}

/// Records by key: a key's records start one at a time, in offset order.
#[derive(Debug, Default)]
pub(crate) struct KeyQueue {
    keys: HashMap<Option<Bytes>, KeyLane>,
    /// Keys with records waiting and none running, in the order they became so.
    ready: VecDeque<Option<Bytes>>,
    waiting: usize,
}

impl KeyQueue {
    pub(crate) fn push(&mut self, item: Item) {
        let key = item.record.key.clone();
        let lane = self.keys.entry(key.clone()).or_default();
        lane.queue.push_back(item);
        self.waiting += 1;
        if !lane.running && lane.queue.len() == 1 {
            self.ready.push_back(key);
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.waiting == 0
    }

    /// A record can start (its key runs nothing).
    pub(crate) fn has_startable(&self) -> bool {
        !self.ready.is_empty()
    }

    pub(crate) fn next_is_prestarted(&self) -> bool {
        self.ready
            .front()
            .and_then(|k| self.keys.get(k))
            .and_then(|l| l.queue.front())
            .is_some_and(|i| i.prestarted)
    }

    /// Takes the next startable record; its key runs until [`finish`](Self::finish).
    pub(crate) fn pop(&mut self) -> Option<Item> {
        let key = self.ready.pop_front()?;
        let lane = self.keys.get_mut(&key)?;
        let item = lane.queue.pop_front()?;
        lane.running = true;
        self.waiting -= 1;
        Some(item)
    }

    /// The running record of `key` ended.
    pub(crate) fn finish(&mut self, key: &Option<Bytes>) {
        let Some(lane) = self.keys.get_mut(key) else {
            return;
        };
        lane.running = false;
        if lane.queue.is_empty() {
            self.keys.remove(key);
        } else {
            self.ready.push_back(key.clone());
        }
    }

    /// Drops every waiting record; returns how many had been started by their submit.
    pub(crate) fn clear(&mut self) -> usize {
        let n = self
            .keys
            .values()
            .flat_map(|l| l.queue.iter())
            .filter(|i| i.prestarted)
            .count();
        self.keys.retain(|_, l| {
            l.queue.clear();
            l.running
        });
        self.ready.clear();
        self.waiting = 0;
        n
    }
}
