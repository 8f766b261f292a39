//! When the fetch loop must look again with nothing waking it. Everything else that changes a
//! plan wakes the loop itself: an answer, the offset look-up ending, a seek, a pause or resume,
//! a rebalance (`Shared::wake`), the engine's backpressure (`ProcessingEngine::backpressure_changed`),
//! memory released while the budget was full. What is left is time: a partition's back-off or its
//! read replica's lease ending, a broker's back-off ending, a failed metadata refresh or offset
//! look-up due again, a topic not listed due to be looked up again; and, at the latest,
//! [`LIVENESS_TICK`] after the last iteration, so that the loop's liveness figure
//! (`Shared::loop_progress`, the sidecar's `consumer_loop_stale_seconds`) tells a stuck runtime
//! from a quiet one. An idle consumer whose brokers long-poll its Fetches (every
//! `fetch.max.wait.ms`, 500 ms by default) wakes for their answers alone.

use std::time::Duration;

use tokio::time::Instant;

use super::Fetcher;
use crate::processing::Dispatch;

/// The longest the loop goes without an iteration: a deadline that plans nothing while the last
/// plan stands (`last_plan.rs`). Far below the sidecar's `health.stale.ms` (60 s by default).
pub(super) const LIVENESS_TICK: Duration = Duration::from_secs(1);

impl<H: Dispatch> Fetcher<H> {
    /// The earliest time after `now` at which something the loop waits for comes due, or the
    /// liveness tick.
    pub(super) fn next_deadline(&self, now: Instant) -> Instant {
        let retries = [
            self.next_expiry(now),
            self.refresh_retry_at,
            self.positions_retry_at,
            self.errors.next_recheck(),
        ];
        retries
            .into_iter()
            .flatten()
            .chain(self.backoff_until.values().copied())
            .filter(|t| *t > now)
            .fold(now + LIVENESS_TICK, Instant::min)
    }
}
