//! The `max.poll.interval.ms` watchdog on the processing side: a task that reads every lane's
//! running record and its start time (atomics the lane publishes) every period and reports each
//! record running longer than the limit once
//! ([`ProcessingEvent::PollIntervalExceeded`](super::ProcessingEvent::PollIntervalExceeded));
//! with several records of a lane running (orderings `Key`, `None`), the oldest one (the next
//! oldest is reported once that one ends). Lanes of partitions the engine no longer owns (a
//! revoke that timed out, a loss) are not watched: their handlers finish unobserved.
//! It calls `tick` with the time each period (the engine's, which holds itself weakly there) and
//! ends when `tick` says so: the engine is gone or shut down with nothing running.
//! The processing loop's liveness (time since a handler last started or finished) is in the
//! metrics for the health endpoint. A lane only waits with records pending for a concurrency
//! permit (which a running handler holds) or after a `Stop` failure, which is reported by itself ([`ProcessingEngine::failure`]).
//!
//! [`ProcessingEngine::failure`]: super::ProcessingEngine::failure

use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

/// Calls `tick` every `period` until it returns `false`.
pub(crate) async fn run(period: Duration, mut tick: impl FnMut(Instant) -> bool) {
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if !tick(Instant::now()) {
            return;
        }
    }
}
