//! Runs one record's handler inside its lane: attempts, back-off between retries, the outcome.
//! A panicking handler is caught here (the lane goes on) and is a failure under the configured
//! policy. A handler of this crate may say the record was not processed ([`NotProcessed`]): that
//! is no failure, and goes around the policy (no retry, no skip).

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use tracing::Instrument;

use super::context::{Context, Stats};
use super::handler::NotProcessed;
use super::{
    ConsumerRecord, FailureAction, Handler, HandlerError, HandlerPanicked, OnFailure,
    ProcessingEvent,
};
use crate::otel::spans;
use crate::TopicPartition;

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

/// Runs the handler for `record` under the failure policy. The attempts run inside the record's
/// process span (disabled, and free, without a subscriber: then the attempts are not wrapped in
/// it at all), which ends before the outcome is returned: whoever waits for the record to finish
/// finds its span ended too.
pub(crate) async fn run<H: Handler>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    record: ConsumerRecord,
) -> Outcome {
    let span = spans::process_span(&record, &ctx.trace);
    let outcome = if span.is_disabled() {
        attempts(ctx, partition, record, &span).await
    } else {
        attempts(ctx, partition, record, &span)
            .instrument(span.clone())
            .await
    };
    drop(span);
    outcome
}

/// How one call of the handler ended.
enum Attempt {
    Done,
    NotProcessed(Outcome),
    Failed(HandlerError),
    Panicked,
}

/// One call of the handler; a panic is caught.
async fn attempt<H: Handler>(ctx: &Context<H>, record: ConsumerRecord) -> Attempt {
    match AssertUnwindSafe(ctx.handler.handle(record))
        .catch_unwind()
        .await
    {
        Ok(Ok(())) => Attempt::Done,
        Ok(Err(e)) => {
            let error: Box<dyn std::error::Error + Send + Sync> = e.into();
            match error.downcast_ref::<NotProcessed>() {
                Some(NotProcessed::Abandoned) => Attempt::NotProcessed(Outcome::Abandoned),
                Some(NotProcessed::NotHandedOut) => Attempt::NotProcessed(Outcome::Cancelled),
                None => Attempt::Failed(Arc::from(error)),
            }
        }
        Err(_panic) => Attempt::Panicked,
    }
}

/// The first attempt in place; retries (and their back-off timer) in a boxed future of their
/// own, so a lane's future stays small for the records that need no retry.
async fn attempts<H: Handler>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    record: ConsumerRecord,
    span: &tracing::Span,
) -> Outcome {
    let policy = ctx.policy;
    if policy.max_retries > 0 {
        return Box::pin(with_retries(ctx, partition, record, span)).await;
    }
    conclude(policy.then, attempt(ctx, record).await, 1, span)
}

/// The outcome of a last attempt.
fn conclude(then: OnFailure, attempt: Attempt, attempts: u32, span: &tracing::Span) -> Outcome {
    match attempt {
        Attempt::Done => {
            spans::record_outcome(span, attempts, None);
            Outcome::Succeeded
        }
        Attempt::NotProcessed(outcome) => outcome,
        Attempt::Failed(error) => {
            spans::record_outcome(span, attempts, Some(&error));
            failed(then, error, attempts)
        }
        Attempt::Panicked => {
            let error: HandlerError = Arc::new(HandlerPanicked);
            spans::record_outcome(span, attempts, Some(&error));
            failed(then, error, attempts)
        }
    }
}

async fn with_retries<H: Handler>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    record: ConsumerRecord,
    span: &tracing::Span,
) -> Outcome {
    let policy = ctx.policy;
    let mut retry = 0u32;
    loop {
        if retry >= policy.max_retries {
            return conclude(policy.then, attempt(ctx, record).await, retry + 1, span);
        }
        // A panic is not retried.
        let error = match attempt(ctx, record.clone()).await {
            Attempt::Failed(error) => error,
            other => return conclude(policy.then, other, retry + 1, span),
        };
        let offset = record.offset();
        let after = policy.backoff(retry);
        tracing::warn!(%partition, offset, attempt = retry, error = %error, ?after, "record handler failed; retrying");
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
