//! What the lanes call: every record [`Handler`] (one record per call) and a [`BatchHandler`]
//! wrapped in [`Batches`] (a partition's queued records per call). The engine is generic over
//! this sealed trait, so both kinds of handler share the lanes, the concurrency bound, the
//! buffers, the watchdog and the commit tracking, and the per-record path compiles to what it
//! would be without batches (which one a lane runs is a constant of the handler type).

use std::future::Future;

use futures_util::TryFutureExt;

use super::{Batch, BatchHandler, Batches, ConsumerRecord, Handler};

/// A handler's error once it leaves the handler.
pub(crate) type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

mod sealed {
    pub trait Sealed {}
}

/// What a [`ProcessingEngine`](super::ProcessingEngine) runs: any [`Handler`], or a
/// [`BatchHandler`] in [`Batches`]. Sealed: implement one of those two instead.
pub trait Dispatch: sealed::Sealed + Send + Sync + 'static {
    /// Whether the lanes hand out batches instead of records.
    #[doc(hidden)]
    const BATCHES: bool;

    /// Calls the record handler (never called when `BATCHES`).
    #[doc(hidden)]
    fn call_record(
        &self,
        record: ConsumerRecord,
    ) -> impl Future<Output = Result<(), BoxError>> + Send;

    /// Calls the batch handler (never called unless `BATCHES`).
    #[doc(hidden)]
    fn call_batch(&self, batch: Batch) -> impl Future<Output = Result<(), BoxError>> + Send;
}

/// The error of a call of the wrong kind, which no lane makes: a record handler is never given a
/// batch, nor a batch handler a record.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("a {0} handler was called with the wrong kind of work")]
struct WrongKind(&'static str);

impl<H: Handler> sealed::Sealed for H {}

impl<H: Handler> Dispatch for H {
    const BATCHES: bool = false;

    fn call_record(
        &self,
        record: ConsumerRecord,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        self.handle(record).map_err(Into::into)
    }

    fn call_batch(&self, _batch: Batch) -> impl Future<Output = Result<(), BoxError>> + Send {
        std::future::ready(Err(WrongKind("record").into()))
    }
}

impl<B: BatchHandler> sealed::Sealed for Batches<B> {}

impl<B: BatchHandler> Dispatch for Batches<B> {
    const BATCHES: bool = true;

    fn call_record(
        &self,
        _record: ConsumerRecord,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        std::future::ready(Err(WrongKind("batch").into()))
    }

    fn call_batch(&self, batch: Batch) -> impl Future<Output = Result<(), BoxError>> + Send {
        self.0.handle(batch).map_err(Into::into)
    }
}
