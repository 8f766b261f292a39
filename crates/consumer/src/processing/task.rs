//! Runs one call's work inside its lane, a record or a batch ([`Unit`]): attempts, back-off
//! between retries, the outcome. A panicking handler is caught here (the lane goes on) and is a
//! failure under the configured policy. A handler of this crate may say the record was not
//! processed ([`NotProcessed`]): that is no failure, and goes around the policy (no retry, no
//! skip).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt;
use tracing::Instrument;

use super::context::{Context, Stats};
use super::dispatch::BoxError;
use super::handler::NotProcessed;
use super::spans::{self, TraceInfo};
use super::{
    Batch, ConsumerRecord, Dispatch, FailureAction, HandlerError, HandlerPanicked, OnFailure,
    ProcessingEvent,
};
use crate::TopicPartition;

/// What one call of the handler gets: a record, or a batch. Cloned for each attempt but the last
/// (a record's clone shares its bytes, a batch's its records).
pub(crate) trait Unit: Clone + Send + Sized {
    /// The handler's call on it.
    fn call<H: Dispatch>(self, handler: &H) -> impl Future<Output = Result<(), BoxError>> + Send;
    /// Its process span.
    fn span(&self, trace: &TraceInfo) -> tracing::Span;
    /// Its (first) offset, for the retry event.
    fn offset(&self) -> i64;
    /// Says a retry in the log.
    fn log_retry(
        &self,
        partition: &TopicPartition,
        retry: u32,
        error: &HandlerError,
        after: Duration,
    );
}

impl Unit for ConsumerRecord {
    fn call<H: Dispatch>(self, handler: &H) -> impl Future<Output = Result<(), BoxError>> + Send {
        handler.call_record(self)
    }

    fn span(&self, trace: &TraceInfo) -> tracing::Span {
        spans::process_span(self, trace)
    }

    fn offset(&self) -> i64 {
        ConsumerRecord::offset(self)
    }

    fn log_retry(
        &self,
        partition: &TopicPartition,
        retry: u32,
        error: &HandlerError,
        after: Duration,
    ) {
        let offset = self.offset();
        tracing::warn!(%partition, offset, attempt = retry, error = %error, ?after, "record handler failed; retrying");
    }
}

impl Unit for Batch {
    fn call<H: Dispatch>(self, handler: &H) -> impl Future<Output = Result<(), BoxError>> + Send {
        handler.call_batch(self)
    }

    fn span(&self, trace: &TraceInfo) -> tracing::Span {
        spans::batch_span(self, trace)
    }

    fn offset(&self) -> i64 {
        self.first_offset()
    }

    fn log_retry(
        &self,
        partition: &TopicPartition,
        retry: u32,
        error: &HandlerError,
        after: Duration,
    ) {
        let (first, last, records) = (self.first_offset(), self.last_offset(), self.len());
        tracing::warn!(%partition, first, last, records, attempt = retry, error = %error, ?after, "batch handler failed; retrying the whole batch");
    }
}

/// How a record's run ended.
#[derive(Debug)]
pub(crate) enum Outcome {
    Succeeded,
    /// Failed and skipped (policy `Skip`).
    Skipped {
        error: HandlerError,
        attempts: u32,
    },
    /// Failed; dispatch stops (policy `Stop`).
    Failed {
        error: HandlerError,
        attempts: u32,
    },
    /// The record could not be handed to the application (its stream was gone): not finished,
    /// no policy.
    Cancelled,
    /// Handed to the application and given up unprocessed (a stream delivery dropped without
    /// `ack` or `fail`): the offset is abandoned for good (no commit passes it), no policy.
    Abandoned,
}

/// Runs the handler for `unit` (a record or a batch) under the failure policy. The attempts run
/// inside its process span (disabled, and free, without a subscriber: then the attempts are not
/// wrapped in it at all), which ends before the outcome is returned: whoever waits for the work
/// to finish finds its span ended too.
pub(crate) async fn run<H: Dispatch, U: Unit>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    unit: U,
) -> Outcome {
    let span = unit.span(&ctx.trace);
    let outcome = if span.is_disabled() {
        attempts(ctx, partition, unit, &span).await
    } else {
        attempts(ctx, partition, unit, &span)
            .instrument(span.clone())
            .await
    };
    drop(span);
    outcome
}

/// How one call of the handler ended.
enum HandlerCall {
    Done,
    NotProcessed(Outcome),
    Failed(HandlerError),
    Panicked,
}

/// One call of the handler; a panic is caught.
async fn attempt<H: Dispatch, U: Unit>(ctx: &Context<H>, unit: U) -> HandlerCall {
    match AssertUnwindSafe(unit.call(&ctx.handler))
        .catch_unwind()
        .await
    {
        Ok(Ok(())) => HandlerCall::Done,
        Ok(Err(error)) => match error.downcast_ref::<NotProcessed>() {
            Some(NotProcessed::Abandoned) => HandlerCall::NotProcessed(Outcome::Abandoned),
            Some(NotProcessed::NotHandedOut) => HandlerCall::NotProcessed(Outcome::Cancelled),
            None => HandlerCall::Failed(Arc::from(error)),
        },
        Err(_panic) => HandlerCall::Panicked,
    }
}

/// The first attempt in place; retries (and their back-off timer) in a boxed future of their
/// own, so a lane's future stays small for the records that need no retry.
async fn attempts<H: Dispatch, U: Unit>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    unit: U,
    span: &tracing::Span,
) -> Outcome {
    let policy = ctx.policy;
    if policy.max_retries > 0 {
        return Box::pin(with_retries(ctx, partition, unit, span)).await;
    }
    conclude(policy.then, attempt(ctx, unit).await, 1, span)
}

/// The outcome of a last attempt.
fn conclude(then: OnFailure, attempt: HandlerCall, attempts: u32, span: &tracing::Span) -> Outcome {
    match attempt {
        HandlerCall::Done => {
            spans::record_outcome(span, attempts, None);
            Outcome::Succeeded
        }
        HandlerCall::NotProcessed(outcome) => outcome,
        HandlerCall::Failed(error) => {
            spans::record_outcome(span, attempts, Some(&error));
            failed(then, error, attempts)
        }
        HandlerCall::Panicked => {
            let error: HandlerError = Arc::new(HandlerPanicked);
            spans::record_outcome(span, attempts, Some(&error));
            failed(then, error, attempts)
        }
    }
}

async fn with_retries<H: Dispatch, U: Unit>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    unit: U,
    span: &tracing::Span,
) -> Outcome {
    let policy = ctx.policy;
    let mut retry = 0u32;
    loop {
        if retry >= policy.max_retries {
            return conclude(policy.then, attempt(ctx, unit).await, retry + 1, span);
        }
        // A panic is not retried.
        let error = match attempt(ctx, unit.clone()).await {
            HandlerCall::Failed(error) => error,
            other => return conclude(policy.then, other, retry + 1, span),
        };
        let offset = unit.offset();
        let after = policy.backoff(retry);
        unit.log_retry(partition, retry, &error, after);
        ctx.add_stats(&Stats {
            failed: 1,
            retries: 1,
            ..Stats::default()
        });
        ctx.emit(ProcessingEvent::HandlerFailed {
            partition: partition.clone(),
            offset,
            attempt: retry,
            error,
            action: FailureAction::Retry { after },
        });
        tokio::time::sleep(after).await;
        retry += 1;
    }
}

fn failed(then: OnFailure, error: HandlerError, attempts: u32) -> Outcome {
    match then {
        OnFailure::Skip => Outcome::Skipped { error, attempts },
        OnFailure::Stop => Outcome::Failed { error, attempts },
    }
}
