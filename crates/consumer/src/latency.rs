//! Request latencies summed up over a window: the count, the total and the largest since the
//! window was last taken. The fetcher times its Fetch requests into one; the group member's
//! commit events (timed by the member) go into another. The client metrics pushed to brokers
//! take each window once per push and report its average and maximum, as Java's `fetch-latency-avg/max` and `commit-latency-avg/max` do
//! over their sample windows. A short lock, never held across an `.await`.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

/// What one window saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LatencySummary {
    /// Requests timed.
    pub(crate) count: u64,
    /// Their latencies added up.
    pub(crate) total: Duration,
    /// The longest.
    pub(crate) max: Duration,
}

impl LatencySummary {
    /// The average latency, `None` when nothing was timed.
    pub(crate) fn avg(&self) -> Option<Duration> {
        let count = u32::try_from(self.count).ok().filter(|c| *c > 0)?;
        Some(self.total / count)
    }
}

/// The current window (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct LatencyWindow {
    inner: Mutex<LatencySummary>,
}

impl LatencyWindow {
    /// One request took `latency`.
    pub(crate) fn record(&self, latency: Duration) {
        let mut w = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        w.count = w.count.saturating_add(1);
        w.total = w.total.saturating_add(latency);
        w.max = w.max.max(latency);
    }

    /// The window so far; a new one starts.
    pub(crate) fn take(&self) -> LatencySummary {
        std::mem::take(&mut *self.inner.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_holds_count_average_and_max_until_taken() {
        let w = LatencyWindow::default();
        assert_eq!(w.take().avg(), None);
        w.record(Duration::from_millis(10));
        w.record(Duration::from_millis(30));
        let s = w.take();
        assert_eq!(
            (s.count, s.avg(), s.max),
            (
                2,
                Some(Duration::from_millis(20)),
                Duration::from_millis(30)
            )
        );
        assert_eq!(w.take(), LatencySummary::default());
    }
}
