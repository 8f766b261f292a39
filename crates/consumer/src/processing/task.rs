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
/// process span (disabled, and free, without a subscriber), which ends before the outcome is
/// returned: whoever waits for the record to finish finds its span ended too.
pub(crate) async fn run<H: Handler>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    record: ConsumerRecord,
) -> Outcome {
    let span = spans::process_span(&record, &ctx.trace);
    let outcome = attempts(ctx, partition, record, &span)
        .instrument(span.clone())
        .await;
    drop(span);
    outcome
}

async fn attempts<H: Handler>(
    ctx: &Context<H>,
    partition: &TopicPartition,
    record: ConsumerRecord,
    span: &tracing::Span,
) -> Outcome {
    let policy = ctx.policy;
    let mut record = Some(record);
    let mut retry = 0u32;
    loop {
        let last_attempt = retry >= policy.max_retries;
        // Clone only while a retry may still need the record.
        let input = if last_attempt {
            record.take()
        } else {
            record.clone()
        };
        let Some(input) = input else {
            return Outcome::Cancelled;
        };
        let offset = input.offset();
        let result = AssertUnwindSafe(ctx.handler.handle(input))
            .catch_unwind()
            .await;
        let error: Box<dyn std::error::Error + Send + Sync> = match result {
            Ok(Ok(())) => {
                spans::record_outcome(span, retry + 1, None);
                return Outcome::Succeeded;
            }
            Ok(Err(e)) => e.into(),
            Err(_panic) => {
                let error: HandlerError = Arc::new(HandlerPanicked);
                spans::record_outcome(span, retry + 1, Some(&error));
                return failed(policy.then, error, retry + 1);
            }
        };
        match error.downcast_ref::<NotProcessed>() {
            Some(NotProcessed::Abandoned) => return Outcome::Abandoned,
            Some(NotProcessed::NotHandedOut) => return Outcome::Cancelled,
            None => {}
        }
        let error: HandlerError = Arc::from(error);
        if !last_attempt {
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
            continue;
        }
        spans::record_outcome(span, retry + 1, Some(&error));
        return failed(policy.then, error, retry + 1);
    }
}

fn failed(then: OnFailure, error: HandlerError, attempts: u32) -> Outcome {
    match then {
        OnFailure::Skip => Outcome::Skipped { error, attempts },
        OnFailure::Stop => Outcome::Failed { error, attempts },
    }
}
