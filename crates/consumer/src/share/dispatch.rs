//! Running handlers on acquired records: `mooring.concurrency` workers take records from one
//! [`RecordQueue`], in the order they were acquired, and each awaits the handler inline (no task
//! per record).
//! A share group promises no order, so any worker takes any record. Each record's verdict goes
//! back to the fetcher: `Ok` accepts; an error (or a panic) goes to the failure policy, unless it
//! says itself ([`RejectRecord`], [`ReleaseRecord`]).
//!
//! When the consumer stops, a worker finishes the record it runs and releases every record still
//! queued without running it (acquired but not started: another member can have it at once).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use tokio::sync::{mpsc, watch};

use super::ack::{Acknowledge, Verdict};
use super::config::ShareFailurePolicy;
use super::fetcher::Input;
use super::queue::RecordQueue;
use crate::processing::{ConsumerRecord, Handler};

type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A handler's error that rejects its record whatever the failure policy: poison, never to be
/// delivered again (archived, or sent to the group's dead-letter topic).
///
/// ```
/// use mooring_consumer::processing::ConsumerRecord;
/// use mooring_consumer::share::RejectRecord;
///
/// async fn handle(record: ConsumerRecord) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
///     let value = record.value().ok_or_else(|| RejectRecord::new("a tombstone is never valid"))?;
///     let _order: u64 = std::str::from_utf8(value)
///         .map_err(RejectRecord::new)?
///         .parse()
///         .map_err(RejectRecord::new)?;
///     Ok(())
/// }
/// ```
#[derive(Debug, thiserror::Error)]
#[error("rejected: {0}")]
pub struct RejectRecord(pub BoxError);

impl RejectRecord {
    /// Rejects for `error`.
    pub fn new(error: impl Into<BoxError>) -> Self {
        RejectRecord(error.into())
    }
}

/// A handler's error that releases its record whatever the failure policy: delivered again (to
/// any member), until the group's delivery limit archives it.
#[derive(Debug, thiserror::Error)]
#[error("released: {0}")]
pub struct ReleaseRecord(pub BoxError);

impl ReleaseRecord {
    /// Releases for `error`.
    pub fn new(error: impl Into<BoxError>) -> Self {
        ReleaseRecord(error.into())
    }
}

/// What a handler's error does to its record.
pub(crate) fn verdict_for(
    error: &(dyn std::error::Error + 'static),
    policy: ShareFailurePolicy,
) -> Acknowledge {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.is::<RejectRecord>() {
            return Acknowledge::Reject;
        }
        if e.is::<ReleaseRecord>() {
            return Acknowledge::Release;
        }
        cause = e.source();
    }
    match policy {
        ShareFailurePolicy::Release => Acknowledge::Release,
        ShareFailurePolicy::Reject => Acknowledge::Reject,
    }
}

/// What decides a record's verdict: the application's handler, or the stream's delivery.
pub(crate) trait Process: Send + Sync + 'static {
    fn process(&self, record: ConsumerRecord) -> impl Future<Output = Acknowledge> + Send;
}

/// A [`Handler`] under a failure policy: `Ok` accepts, an error or a panic goes to the policy.
pub(crate) struct Handled<H> {
    pub handler: H,
    pub policy: ShareFailurePolicy,
}

impl<H: Handler> Process for Handled<H> {
    async fn process(&self, record: ConsumerRecord) -> Acknowledge {
        let (topic, partition, offset) = (
            Arc::clone(record.shared_topic()),
            record.partition(),
            record.offset(),
        );
        match AssertUnwindSafe(self.handler.handle(record))
            .catch_unwind()
            .await
        {
            Ok(Ok(())) => Acknowledge::Accept,
            Ok(Err(error)) => {
                let error: BoxError = error.into();
                let ack = verdict_for(&*error, self.policy);
                tracing::warn!(%topic, partition, offset, %error, ?ack, "share record handler failed");
                ack
            }
            Err(_) => {
                tracing::error!(%topic, partition, offset, "share record handler panicked; releasing the record");
                Acknowledge::Release
            }
        }
    }
}

/// What the workers share: the queue of acquired records and where verdicts go.
pub(crate) struct Workers {
    pub queue: Arc<RecordQueue>,
    pub verdicts: mpsc::UnboundedSender<Input>,
    /// `true` once the consumer stops: queued records are released, not run.
    pub stop: watch::Receiver<bool>,
}

impl Workers {
    /// One worker: records until the queue closes, or until the consumer stops and the queue is
    /// empty (what was queued then is released without running).
    pub(crate) async fn run<P: Process>(self: Arc<Self>, process: Arc<P>) {
        let mut stop = self.stop.clone();
        loop {
            let next = if *stop.borrow() {
                self.queue.try_pop().map(|r| (r, true))
            } else if let Some(record) = self.queue.try_pop() {
                Some((record, false))
            } else {
                tokio::select! {
                    r = self.queue.pop() => r.map(|r| (r, false)),
                    _ = stop.wait_for(|s| *s) => continue,
                }
            };
            let Some((record, stopping)) = next else {
                return;
            };
            let (topic, partition, offset) = (
                Arc::clone(record.shared_topic()),
                record.partition(),
                record.offset(),
            );
            let delivery_count = record
                .delivery_count()
                .and_then(|n| i16::try_from(n).ok())
                .unwrap_or(0);
            let ack = if stopping {
                Acknowledge::Release
            } else {
                process.process(record).await
            };
            let _ = self.verdicts.send(Input::Verdict(Verdict {
                topic,
                partition,
                offset,
                delivery_count,
                ack,
            }));
            // A queued record is taken without awaiting anything: the worker spends tokio's task
            // budget so that, with handlers that finish at once, it still yields now and then to
            // the other tasks on its thread (the fetcher, the member's heartbeats).
            tokio::task::consume_budget().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("wrapped")]
    struct Wrapper(#[source] RejectRecord);

    #[test]
    fn an_error_that_says_its_verdict_wins_over_the_policy_even_as_a_cause() {
        let reject: BoxError = Box::new(RejectRecord::new("bad"));
        assert_eq!(
            verdict_for(&*reject, ShareFailurePolicy::Release),
            Acknowledge::Reject
        );
        let release: BoxError = Box::new(ReleaseRecord::new("later"));
        assert_eq!(
            verdict_for(&*release, ShareFailurePolicy::Reject),
            Acknowledge::Release
        );
        let wrapped: BoxError = Box::new(Wrapper(RejectRecord::new("bad")));
        assert_eq!(
            verdict_for(&*wrapped, ShareFailurePolicy::Release),
            Acknowledge::Reject
        );
        let plain: BoxError = "oops".into();
        assert_eq!(
            verdict_for(&*plain, ShareFailurePolicy::Release),
            Acknowledge::Release
        );
        assert_eq!(
            verdict_for(&*plain, ShareFailurePolicy::Reject),
            Acknowledge::Reject
        );
    }
}
