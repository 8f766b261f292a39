//! The `max.poll.interval.ms` watchdog on the processing side: a task that reads every lane's
//! running record and its start time (atomics the lane publishes) and reports each record
//! running longer than the limit once
//! ([`ProcessingEvent::PollIntervalExceeded`](super::ProcessingEvent::PollIntervalExceeded));
//! with several records of a lane running (orderings `Key`, `None`), the oldest one (the next
//! oldest is reported once that one ends). Lanes of partitions the engine no longer owns (a
//! revoke that timed out, a loss) are not watched: their handlers finish unobserved.
//!
//! It wakes only when it has something to look at: with no handler running it sleeps until one
//! starts (`signals.rs`); with handlers running, until the earliest of their deadlines (a handler
//! that starts later has a later one). Only while a lane's record is already overdue, or handlers
//! run that no lane shows yet, does it look again every period
//! ([`ProcessingConfig::effective_watchdog_interval`](super::ProcessingConfig::effective_watchdog_interval)),
//! as each lane shows its oldest record only. An idle consumer's watchdog never wakes.
//!
//! It calls `scan` with the time (the engine's, which holds itself weakly there) and ends when
//! `scan` says so: the engine is gone or shut down with nothing running (both wake it).
//! The processing loop's liveness (time since a handler last started or finished) is in the
//! metrics for the health endpoint. A lane only waits with records pending for a concurrency
//! permit (which a running handler holds) or after a `Stop` failure, which is reported by itself ([`ProcessingEngine::failure`]).
//!
//! [`ProcessingEngine::failure`]: super::ProcessingEngine::failure

use std::sync::Arc;

use tokio::time::Instant;

use super::signals::WatchdogWake;

/// What the watchdog does after a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Scans again at this time, or sooner if woken.
    At(Instant),
    /// No handler runs: sleeps until woken (a start, a shutdown, the engine dropped).
    Idle,
    /// Ends.
    Stop,
}

/// Calls `scan` whenever it asked to be called again, until it returns [`Next::Stop`].
pub(crate) async fn run(wake: Arc<WatchdogWake>, mut scan: impl FnMut(Instant) -> Next) {
    loop {
        // Listening before the scan: a wake between the scan and the sleep is not lost.
        let notified = wake.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        match scan(Instant::now()) {
            Next::Stop => return,
            Next::Idle => notified.await,
            Next::At(at) => tokio::select! {
                () = tokio::time::sleep_until(at) => {}
                () = notified => {}
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn idle_it_does_not_scan_until_woken() {
        let wake = Arc::new(WatchdogWake::default());
        let scans = Arc::new(AtomicUsize::new(0));
        let task = {
            let (wake, scans) = (Arc::clone(&wake), Arc::clone(&scans));
            tokio::spawn(run(wake, move |_| {
                match scans.fetch_add(1, Ordering::SeqCst) {
                    0 => Next::Idle,
                    _ => Next::Stop,
                }
            }))
        };
        tokio::time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(scans.load(Ordering::SeqCst), 1, "an hour idle, one scan");
        wake.wake();
        tokio::time::timeout(Duration::from_secs(1), task)
            .await
            .expect("woken, it scans and stops")
            .expect("task");
        assert_eq!(scans.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn it_scans_again_at_the_time_asked() {
        let wake = Arc::new(WatchdogWake::default());
        let start = Instant::now();
        let times = Arc::new(std::sync::Mutex::new(Vec::new()));
        let task = {
            let times = Arc::clone(&times);
            tokio::spawn(run(wake, move |now| {
                let mut t = times.lock().unwrap();
                t.push(now - start);
                if t.len() < 3 {
                    Next::At(now + Duration::from_secs(7))
                } else {
                    Next::Stop
                }
            }))
        };
        task.await.expect("task");
        let t = times.lock().unwrap();
        assert_eq!(
            *t,
            vec![
                Duration::ZERO,
                Duration::from_secs(7),
                Duration::from_secs(14)
            ]
        );
    }
}
