//! The telemetry exporters running beside a consumer, and whether one of them has delivered the
//! consumer's fatal error: `run` gives them a moment to before it returns the error (a process
//! exiting on it would otherwise take the line with it).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::watch;

/// How long `run`, ending on a fatal error, waits at most for an exporter to deliver it.
pub(crate) const FATAL_EXPORT_WAIT: Duration = Duration::from_secs(1);

#[derive(Debug)]
pub(crate) struct FatalDelivery {
    exporters: AtomicUsize,
    exported: watch::Sender<bool>,
}

impl Default for FatalDelivery {
    fn default() -> Self {
        FatalDelivery {
            exporters: AtomicUsize::new(0),
            exported: watch::Sender::new(false),
        }
    }
}

impl FatalDelivery {
    /// An exporter started (`true`) or stopped (`false`).
    pub(crate) fn attached(&self, attached: bool) {
        if attached {
            self.exporters.fetch_add(1, Ordering::SeqCst);
        } else {
            self.exporters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// An exporter delivered the fatal error to its sidecar.
    pub(crate) fn exported(&self) {
        self.exported.send_replace(true);
    }

    /// Waits until an exporter has delivered the fatal error, at most `bound`; at once without an
    /// exporter (the sidecar learns of the stop from what `run` returns being logged, and from
    /// the exporter's own shutdown flush).
    pub(crate) async fn wait(&self, bound: Duration) {
        if self.exporters.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut exported = self.exported.subscribe();
        let _ = tokio::time::timeout(bound, exported.wait_for(|done| *done)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn without_an_exporter_nothing_waits_and_with_one_the_wait_ends_at_delivery() {
        let delivery = FatalDelivery::default();
        let started = tokio::time::Instant::now();
        delivery.wait(Duration::from_secs(5)).await;
        assert_eq!(started.elapsed(), Duration::ZERO);
        delivery.attached(true);
        delivery.wait(Duration::from_secs(5)).await;
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(5),
            "undelivered: the bound"
        );
        delivery.exported();
        delivery.wait(Duration::from_secs(5)).await;
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(5),
            "delivered: at once"
        );
    }
}
