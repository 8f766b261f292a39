//! Records as a pull-based stream, for applications that prefer a loop to a handler: each record
//! comes as a [`Delivery`]; it counts as finished (committable once the records before it are)
//! when it is acknowledged or dropped, and as failed (the failure policy applies) with
//! [`Delivery::fail`]. Ordering and the bound on records out at once are the engine's:
//! `mooring.ordering` and `mooring.concurrency` deliveries at most.
//!
//! ```no_run
//! # async fn demo(consumer: mooring_consumer::Consumer) -> Result<(), mooring_consumer::ConsumerError> {
//! let (mut records, run) = consumer.stream();
//! let running = tokio::spawn(run);
//! while let Some(delivery) = records.next().await {
//!     println!("{}", delivery.record().offset());
//!     delivery.ack();
//! }
//! running.await.expect("run task")?;
//! # Ok(()) }
//! ```

use std::fmt;

use tokio::sync::{mpsc, oneshot};

use crate::processing::{ConsumerRecord, Handler};

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// One record handed out by [`Consumer::stream`](super::Consumer::stream).
pub struct Delivery {
    record: ConsumerRecord,
    done: Option<oneshot::Sender<Result<(), BoxError>>>,
}

impl fmt::Debug for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Delivery")
            .field("record", &self.record)
            .finish_non_exhaustive()
    }
}

impl Delivery {
    /// The record.
    pub fn record(&self) -> &ConsumerRecord {
        &self.record
    }

    /// Marks the record finished (dropping the delivery does the same).
    pub fn ack(mut self) {
        self.finish(Ok(()));
    }

    /// Marks the record failed: the failure policy (`mooring.failure.policy`) decides what
    /// follows; under `stop` nothing past it is committed and `run` ends with the error.
    pub fn fail(mut self, error: impl Into<BoxError>) {
        self.finish(Err(error.into()));
    }

    fn finish(&mut self, result: Result<(), BoxError>) {
        if let Some(done) = self.done.take() {
            let _ = done.send(result);
        }
    }
}

impl Drop for Delivery {
    fn drop(&mut self) {
        self.finish(Ok(()));
    }
}

/// The receiving end of [`Consumer::stream`](super::Consumer::stream).
#[derive(Debug)]
pub struct RecordStream {
    rx: mpsc::Receiver<Delivery>,
}

impl RecordStream {
    /// The next record; `None` once the consumer has stopped.
    pub async fn next(&mut self) -> Option<Delivery> {
        self.rx.recv().await
    }
}

/// The handler behind a stream: hands each record out and waits for its acknowledgement.
pub(crate) struct StreamHandler {
    tx: mpsc::Sender<Delivery>,
}

pub(crate) fn channel(capacity: usize) -> (StreamHandler, RecordStream) {
    let (tx, rx) = mpsc::channel(capacity.max(1));
    (StreamHandler { tx }, RecordStream { rx })
}

impl Handler for StreamHandler {
    type Error = BoxError;

    async fn handle(&self, record: ConsumerRecord) -> Result<(), BoxError> {
        let (done, finished) = oneshot::channel();
        self.tx
            .send(Delivery {
                record,
                done: Some(done),
            })
            .await
            .map_err(|_| BoxError::from("the record stream was dropped"))?;
        finished.await.unwrap_or(Ok(()))
    }
}
