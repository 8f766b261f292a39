//! Share groups (KIP-932): what a share consumer's `share_snapshot` lines say, and what the
//! sidecar makes of them.
//!
//! - **Counters.** The snapshot carries the consumer's cumulative counters (records acquired,
//!   accepted, released, rejected, lock renewals, locks that ran out before a verdict, delivery
//!   counts); the sidecar exposes the last ones as they are
//!   ([`ShareCounters`](counters::ShareCounters), a collector like
//!   `mooring_handler_duration_seconds`): no line per record crosses the wire, and a consumer
//!   restart is a counter reset to Prometheus. Nothing is exported before the first share
//!   snapshot, so a classic consumer's sidecar shows no share series.
//! - **Archived records.** The broker archives a released record instead of delivering it again
//!   once its delivery count reaches the group's `share.delivery.count.limit`; the consumer counts
//!   releases by the delivery count they happened at, and the broker watch reads the limit
//!   (DescribeConfigs on the group). `mooring_share_records_archived_total` is the releases at a
//!   delivery count at or above the limit: exported once the limit is known, and only while it is
//!   at most the consumer's bucket count (10, its last bucket being "10 or more"; Kafka caps the
//!   limit at 10 by default), since above it the last bucket would mix archived and redelivered
//!   records.
//! - **Windows.** The poison and lock-expiry alerts count over a rolling window, as the rebalance
//!   count does: each snapshot's increase is kept with its arrival time
//!   ([`CountWindow`], bounded by the window and by
//!   [`WINDOW_ENTRIES`](view::WINDOW_ENTRIES)).

pub mod counters;
pub mod view;

use std::time::Instant;

use mooring_telemetry_schema::{ShareSnapshot, SHARE_MEMBER_STATES};

use crate::app::App;
use crate::state::State;
use view::{archived, CountWindow};

/// A `share_snapshot` line: the member's state and epoch, the counters, the alert windows.
pub fn snapshot(app: &App, state: &mut State, snap: ShareSnapshot, now: Instant) {
    let m = &app.metrics;
    crate::reconcile::set_protocol(app, state, "share");
    for s in SHARE_MEMBER_STATES {
        m.share_member_state
            .with_label_values(&[s])
            .set(i64::from(snap.share_state.as_deref() == Some(s)));
    }
    m.member_epoch.set(i64::from(snap.member_epoch));
    m.assigned_partitions.set(snap.assignment.len() as i64);
    state.member.member_epoch = snap.member_epoch;
    let share = &mut state.share;
    share.rejected.observe(snap.rejected_total, now);
    share.lock_expired.observe(snap.lock_expired_total, now);
    share.archived_total = share
        .delivery_count_limit
        .and_then(|limit| archived(&snap.released_by_delivery, limit));
    if let Some(total) = share.archived_total {
        share.archived.observe(total, now);
    }
    m.share.set(&snap, share.archived_total);
    share.snapshot = Some(snap);
}

/// The broker watch read the group's `share.delivery.count.limit`.
pub fn set_delivery_count_limit(app: &App, state: &mut State, limit: Option<i32>) {
    app.metrics
        .share_delivery_count_limit
        .set(limit.map_or(-1, i64::from));
    let share = &mut state.share;
    if share.delivery_count_limit == limit {
        return;
    }
    share.delivery_count_limit = limit;
    // The archive count's meaning changed: a new baseline for its window.
    share.archived = CountWindow::default();
    share.archived_total = share
        .snapshot
        .as_ref()
        .zip(limit)
        .and_then(|(snap, limit)| archived(&snap.released_by_delivery, limit));
    if let (Some(snap), Some(total)) = (&share.snapshot, share.archived_total) {
        share.archived.observe(total, Instant::now());
        app.metrics.share.set(snap, Some(total));
    }
}
