//! How the engine tells the tasks that wait on it that something changed, so that none of them
//! has to look again every few milliseconds: an idle consumer of many partitions then wakes only
//! for what happens.
//!
//! - [`BackpressureChanges`]: a lane crossed its pause or resume level, or partitions began or
//!   ended being stopped by a revoke: the fetcher (the one waiter) plans again.
//! - [`WatchdogWake`]: the `max.poll.interval.ms` watchdog sleeps while no handler runs and is
//!   woken by the first one to start (and by a shutdown or the engine's drop, to end).
//! - the handler failure that halts dispatching wakes whoever waits for it
//!   ([`ProcessingEngine::failed`](super::ProcessingEngine::failed)).

use std::sync::atomic::{fence, AtomicBool, Ordering};

use tokio::sync::futures::Notified;
use tokio::sync::Notify;

/// Changes to the set of partitions the fetcher must not fetch ([`unfetchable_partitions`]):
/// a wake-up for one waiter. A change while nobody waits is kept for the next wait
/// (`Notify::notify_one`), so none is missed.
///
/// [`unfetchable_partitions`]: super::ProcessingEngine::unfetchable_partitions
#[derive(Debug, Default)]
pub(crate) struct BackpressureChanges {
    notify: Notify,
}

impl BackpressureChanges {
    pub(crate) fn changed(&self) {
        self.notify.notify_one();
    }

    /// Completes at the next change (at once if one came since the last wait ended).
    pub(crate) fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }
}

/// The watchdog's wake-up. While no handler runs it raises `idle` and sleeps; a handler taking a
/// permit lowers it and wakes it. Both sides put a full fence between their write and their read
/// (the flag, the permits out), so either the starter sees the flag or the watchdog sees the
/// permit: a start is never slept through.
#[derive(Debug, Default)]
pub(crate) struct WatchdogWake {
    idle: AtomicBool,
    notify: Notify,
}

impl WatchdogWake {
    /// A handler took a concurrency permit: wakes the watchdog if it sleeps for want of one.
    /// Costs a fence and a load when it is awake.
    pub(crate) fn handler_started(&self) {
        fence(Ordering::SeqCst);
        if self.idle.load(Ordering::Relaxed) && self.idle.swap(false, Ordering::AcqRel) {
            self.notify.notify_one();
        }
    }

    /// Whether the watchdog may sleep until a handler starts: `running()` (any permit out)
    /// read after the flag is raised says no handler runs. Otherwise the flag is lowered again.
    pub(crate) fn sleep_unless(&self, running: impl Fn() -> bool) -> bool {
        self.idle.store(true, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if running() {
            self.idle.store(false, Ordering::Release);
            return false;
        }
        true
    }

    /// Wakes the watchdog to look again (a shutdown, the engine dropped).
    pub(crate) fn wake(&self) {
        self.notify.notify_one();
    }

    pub(crate) fn notified(&self) -> Notified<'_> {
        self.notify.notified()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn a_backpressure_change_with_nobody_waiting_is_kept_for_the_next_wait() {
        let changes = BackpressureChanges::default();
        changes.changed();
        tokio::time::timeout(Duration::from_secs(1), changes.notified())
            .await
            .expect("the change made before the wait wakes it");
        assert!(
            tokio::time::timeout(Duration::from_millis(50), changes.notified())
                .await
                .is_err(),
            "no change since: the wait goes on"
        );
    }

    #[tokio::test]
    async fn a_start_wakes_the_sleeping_watchdog_once() {
        let wake = Arc::new(WatchdogWake::default());
        assert!(wake.sleep_unless(|| false));
        let waiting = {
            let wake = Arc::clone(&wake);
            tokio::spawn(async move { wake.notified().await })
        };
        wake.handler_started();
        tokio::time::timeout(Duration::from_secs(1), waiting)
            .await
            .expect("woken by the start")
            .expect("task");
        // Awake now: a second start does not wake it again.
        wake.handler_started();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), wake.notified())
                .await
                .is_err(),
            "only the first start after it slept wakes it"
        );
    }

    #[test]
    fn the_watchdog_does_not_sleep_while_a_handler_runs() {
        let wake = WatchdogWake::default();
        assert!(!wake.sleep_unless(|| true));
        // The flag is down again: a start does not store a wake-up.
        wake.handler_started();
        assert!(!wake.idle.load(Ordering::Acquire));
    }
}
