//! The `max.poll.interval.ms` watchdog on the processing side: a task that looks at the running
//! handlers every period and reports each one running longer than the limit once
//! ([`ProcessingEvent::PollIntervalExceeded`](super::ProcessingEvent::PollIntervalExceeded)).
//! It holds the engine weakly and ends when the engine is gone or shut down with nothing running.
//! The processing loop's liveness (time since a handler last started or finished) is in the
//! metrics for the health endpoint. Dispatch has no loop of its own to stall: records start when
//! they are submitted or when a handler finishes, so pending work without a running handler only
//! happens after a `Stop` failure, which is reported by itself ([`ProcessingEngine::failure`]).
//!
//! [`ProcessingEngine::failure`]: super::ProcessingEngine::failure

use std::sync::Weak;
use std::time::Duration;

use tokio::time::{Instant, MissedTickBehavior};

use super::engine::Shared;
use super::Handler;

pub(crate) async fn run<H: Handler>(shared: Weak<Shared<H>>, period: Duration) {
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        if !shared.watchdog_tick(Instant::now()) {
            return;
        }
    }
}
