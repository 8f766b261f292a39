//! In-flight bookkeeping of one connection: correlation id → the waiter of its response.
//!
//! An entry lives from just before its frame is written until its response arrives (or the
//! connection dies). A waiter that gave up (timeout, dropped future) keeps its entry: Kafka
//! answers every request in order, so the response still comes, is read whole and discarded, and
//! only then is the entry removed. A response whose correlation id has no entry therefore means the
//! stream is out of step, which is fatal to the connection (as in Java's `NetworkClient`).

use std::collections::HashMap;

use bytes::Bytes;
use tokio::sync::{oneshot, OwnedSemaphorePermit};

use crate::error::{Error, Result};

/// A waiter for one response.
#[derive(Debug)]
pub(crate) struct Waiter {
    /// The API name, for logs.
    pub api: &'static str,
    /// Where the response frame body goes.
    pub reply: oneshot::Sender<Result<Bytes>>,
    /// The in-flight slot this request holds until its response is read.
    pub _permit: Option<OwnedSemaphorePermit>,
}

/// What became of a response frame.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Delivered {
    /// Handed to its waiter.
    Handed,
    /// Its waiter had given up; the frame was dropped.
    Discarded(&'static str),
    /// No request has this correlation id.
    Unknown,
}

/// Correlation id → waiter.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    waiters: HashMap<i32, Waiter>,
}

impl Pending {
    /// Registers a waiter; `false` if the id is already in flight (the caller must not write).
    pub fn insert(&mut self, correlation_id: i32, waiter: Waiter) -> bool {
        if self.waiters.contains_key(&correlation_id) {
            return false;
        }
        self.waiters.insert(correlation_id, waiter);
        true
    }

    /// Hands a response frame body to the waiter of `correlation_id`, removing the entry.
    pub fn complete(&mut self, correlation_id: i32, frame: Bytes) -> Delivered {
        match self.waiters.remove(&correlation_id) {
            Some(waiter) => {
                let api = waiter.api;
                if waiter.reply.send(Ok(frame)).is_ok() {
                    Delivered::Handed
                } else {
                    Delivered::Discarded(api)
                }
            }
            None => Delivered::Unknown,
        }
    }

    /// Fails every waiter with (a clone of) `error`.
    pub fn fail_all(&mut self, error: &Error) {
        for (_, waiter) in self.waiters.drain() {
            let _ = waiter.reply.send(Err(error.clone()));
        }
    }

    /// How many requests are in flight.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.waiters.len()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn waiter() -> (Waiter, oneshot::Receiver<Result<Bytes>>) {
        let (reply, rx) = oneshot::channel();
        (
            Waiter {
                api: "Metadata",
                reply,
                _permit: None,
            },
            rx,
        )
    }

    #[test]
    fn responses_find_their_waiters_in_any_order() {
        let mut pending = Pending::default();
        let (w1, mut r1) = waiter();
        let (w2, mut r2) = waiter();
        assert!(pending.insert(1, w1));
        assert!(pending.insert(2, w2));
        assert_eq!(
            pending.complete(2, Bytes::from_static(b"two")),
            Delivered::Handed
        );
        assert_eq!(
            pending.complete(1, Bytes::from_static(b"one")),
            Delivered::Handed
        );
        assert_eq!(&r1.try_recv().unwrap().unwrap()[..], b"one");
        assert_eq!(&r2.try_recv().unwrap().unwrap()[..], b"two");
        assert_eq!(pending.len(), 0);
    }

    #[test]
    fn abandoned_waiter_is_discarded_and_removed() {
        let mut pending = Pending::default();
        let (w, rx) = waiter();
        assert!(pending.insert(7, w));
        drop(rx);
        assert_eq!(
            pending.complete(7, Bytes::new()),
            Delivered::Discarded("Metadata")
        );
        assert_eq!(pending.len(), 0);
        assert_eq!(pending.complete(7, Bytes::new()), Delivered::Unknown);
    }

    #[test]
    fn duplicate_ids_are_refused_and_failure_reaches_everyone() {
        let mut pending = Pending::default();
        let (w1, mut r1) = waiter();
        let (w2, _r2) = waiter();
        assert!(pending.insert(1, w1));
        assert!(!pending.insert(1, w2));
        pending.fail_all(&Error::Disconnected { broker: "b".into() });
        assert!(matches!(
            r1.try_recv().unwrap(),
            Err(Error::Disconnected { .. })
        ));
        assert_eq!(pending.len(), 0);
    }
}
