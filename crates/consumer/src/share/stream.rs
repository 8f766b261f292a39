//! Share records as a pull-based stream: each record comes as a [`ShareDelivery`] from a
//! [`ShareRecordStream`] (a [`futures_core::Stream`], with an inherent
//! [`next`](ShareRecordStream::next) that needs no import). Behind it the workers hand each record
//! to the stream and wait for its verdict, so at most `mooring.concurrency` deliveries are out at
//! once, and their locks are renewed while they are.

use std::fmt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::sync::{mpsc, oneshot};

use super::ack::Acknowledge;
use super::config::AcknowledgementMode;
use super::dispatch::Process;
use crate::processing::ConsumerRecord;
use crate::shutdown::ShutdownHandle;

/// One record handed out by [`ShareConsumer::stream`](super::ShareConsumer::stream). A delivery
/// ends one of four ways:
///
/// - [`accept`](Self::accept): processed; never delivered again.
/// - [`release`](Self::release): not processed; delivered again (to any member) until the
///   group's `share.delivery.count.limit` archives it.
/// - [`reject`](Self::reject): poison; archived, never delivered again.
/// - dropped without any of them (a `?` or a panic in the loop): **released**, never accepted.
///   Under `share.acknowledgement.mode=explicit` this is an application error and is also logged.
///
/// While a delivery is out its acquisition lock is renewed, for at most `max.poll.interval.ms`.
#[must_use = "a delivery dropped without accept(), release() or reject() is released: it comes again"]
pub struct ShareDelivery {
    record: ConsumerRecord,
    verdict: Option<oneshot::Sender<Acknowledge>>,
}

impl fmt::Debug for ShareDelivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShareDelivery")
            .field("record", &self.record)
            .finish_non_exhaustive()
    }
}

impl ShareDelivery {
    /// The record (its [`delivery_count`](ConsumerRecord::delivery_count) says how many times
    /// it has been delivered).
    pub fn record(&self) -> &ConsumerRecord {
        &self.record
    }

    /// Processed: never delivered again.
    pub fn accept(mut self) {
        self.send(Acknowledge::Accept);
    }

    /// Not processed: delivered again, to any member.
    pub fn release(mut self) {
        self.send(Acknowledge::Release);
    }

    /// Poison: archived, never delivered again.
    pub fn reject(mut self) {
        self.send(Acknowledge::Reject);
    }

    fn send(&mut self, ack: Acknowledge) {
        if let Some(verdict) = self.verdict.take() {
            let _ = verdict.send(ack);
        }
    }
}

/// The receiving end of [`ShareConsumer::stream`](super::ShareConsumer::stream). Dropping it
/// stops the consumer, as [`ShutdownHandle::shutdown`] does: every delivery queued in it, and
/// every one the loop held and dropped with it, is released; the run future then returns.
///
/// ```no_run
/// # async fn demo(consumer: mooring_consumer::share::ShareConsumer) -> Result<(), Box<dyn std::error::Error>> {
/// let (mut records, run) = consumer.stream();
/// let running = tokio::spawn(run);
/// while let Some(delivery) = records.next().await {
///     match std::str::from_utf8(delivery.record().value().map_or(&[][..], |v| &v[..])) {
///         Ok(text) => {
///             println!("{text}");
///             delivery.accept();
///         }
///         Err(_) => delivery.reject(),
///     }
/// }
/// running.await??;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ShareRecordStream {
    rx: mpsc::Receiver<ShareDelivery>,
    shutdown: ShutdownHandle,
}

impl ShareRecordStream {
    /// The next record; `None` once the consumer has stopped.
    pub async fn next(&mut self) -> Option<ShareDelivery> {
        self.rx.recv().await
    }
}

impl futures_core::Stream for ShareRecordStream {
    type Item = ShareDelivery;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<ShareDelivery>> {
        self.rx.poll_recv(cx)
    }
}

impl Drop for ShareRecordStream {
    fn drop(&mut self) {
        if !self.shutdown.is_shutdown() {
            tracing::info!("share record stream dropped: stopping the share consumer");
            self.shutdown.shutdown();
        }
    }
}

/// The workers' side of the stream: each record goes out as a delivery, and its verdict comes
/// back (a dropped delivery, or a stream gone, is a release).
pub(crate) struct StreamFeed {
    tx: mpsc::Sender<ShareDelivery>,
    mode: AcknowledgementMode,
}

/// A stream of at most `capacity` deliveries queued, and the feed that fills it.
pub(crate) fn channel(
    capacity: usize,
    mode: AcknowledgementMode,
    shutdown: ShutdownHandle,
) -> (StreamFeed, ShareRecordStream) {
    let (tx, rx) = mpsc::channel(capacity.max(1));
    (StreamFeed { tx, mode }, ShareRecordStream { rx, shutdown })
}

impl Process for StreamFeed {
    async fn process(&self, record: ConsumerRecord) -> Acknowledge {
        let (tp, offset) = (record.topic_partition(), record.offset());
        let (verdict, answer) = oneshot::channel();
        let delivery = ShareDelivery {
            record,
            verdict: Some(verdict),
        };
        if self.tx.send(delivery).await.is_err() {
            return Acknowledge::Release;
        }
        match answer.await {
            Ok(ack) => ack,
            Err(_) => {
                if self.mode == AcknowledgementMode::Explicit {
                    tracing::warn!(partition = %tp, offset, "a share delivery was dropped without accept, release or reject (share.acknowledgement.mode=explicit); releasing it");
                }
                Acknowledge::Release
            }
        }
    }
}
