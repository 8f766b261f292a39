//! The Tokio task that runs one record's handler: attempts, back-off between retries, the final
//! outcome reported to the engine. A drop guard reports the outcome even when the handler panics
//! (a failure, under the configured policy) or the task is dropped unfinished (not finished: the
//! offset stays uncommitted), so a slot or an ordering lane is never leaked. A handler of this
//! crate may say the record was not processed ([`NotProcessed`]): that is no failure, and goes
//! around the policy (no retry, no skip).

use std::sync::Arc;

use tracing::Instrument;

use super::core::{Outcome, Start, TaskId};
use super::engine::Shared;
use super::handler::NotProcessed;
use super::{Handler, HandlerError, HandlerPanicked, OnFailure};
use crate::otel::spans;

struct CompletionGuard<H: Handler> {
    shared: Arc<Shared<H>>,
    task: TaskId,
    attempts: u32,
    done: bool,
}

impl<H: Handler> CompletionGuard<H> {
    fn finish(mut self, outcome: Outcome) {
        self.done = true;
        self.shared.complete(self.task, outcome);
    }
}

impl<H: Handler> Drop for CompletionGuard<H> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let outcome = if std::thread::panicking() {
            let error: HandlerError = Arc::new(HandlerPanicked);
            let attempts = self.attempts;
            match self.shared.policy().then {
                OnFailure::Skip => Outcome::Skipped { error, attempts },
                OnFailure::Stop => Outcome::Failed { error, attempts },
            }
        } else {
            Outcome::Cancelled
        };
        self.shared.complete(self.task, outcome);
    }
}

/// Runs the handler for `start.record` under the failure policy, then reports the outcome. The
/// attempts run inside the record's process span (disabled, and free, without a subscriber),
/// which ends before the outcome is reported: whoever waits for the record to finish (a drain,
/// a shutdown, then the exporter's flush) finds its span ended too.
pub(crate) async fn run<H: Handler>(shared: Arc<Shared<H>>, start: Start) {
    let mut guard = CompletionGuard {
        shared: Arc::clone(&shared),
        task: start.task,
        attempts: 0,
        done: false,
    };
    let span = spans::process_span(&start.record, shared.trace());
    let outcome = attempts(&shared, start, &mut guard, &span)
        .instrument(span.clone())
        .await;
    drop(span);
    guard.finish(outcome);
}

async fn attempts<H: Handler>(
    shared: &Shared<H>,
    start: Start,
    guard: &mut CompletionGuard<H>,
    span: &tracing::Span,
) -> Outcome {
    let policy = shared.policy();
    let mut record = Some(start.record);
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
        guard.attempts = retry + 1;
        match shared.handler().handle(input).await {
            Ok(()) => {
                spans::record_outcome(span, retry + 1, None);
                return Outcome::Succeeded;
            }
            Err(e) => {
                let error: Box<dyn std::error::Error + Send + Sync> = e.into();
                match error.downcast_ref::<NotProcessed>() {
                    Some(NotProcessed::Abandoned) => return Outcome::Abandoned,
                    Some(NotProcessed::NotHandedOut) => return Outcome::Cancelled,
                    None => {}
                }
                let error: HandlerError = Arc::from(error);
                if !last_attempt {
                    let after = policy.backoff(retry);
                    shared.retrying(start.task, retry, error, after);
                    tokio::time::sleep(after).await;
                    retry += 1;
                    continue;
                }
                let attempts = retry + 1;
                spans::record_outcome(span, attempts, Some(&error));
                return match policy.then {
                    OnFailure::Skip => Outcome::Skipped { error, attempts },
                    OnFailure::Stop => Outcome::Failed { error, attempts },
                };
            }
        }
    }
}
