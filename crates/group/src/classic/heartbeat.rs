//! Heartbeats on their own task and timer (KIP-62: liveness is separate from processing).
//!
//! The member task publishes what to heartbeat for (generation and member id) on a `watch`
//! channel: `None` while no generation is held or JoinGroup is in flight, `Some` in
//! COMPLETING_REBALANCE and STABLE. This task never waits on the member task or the application,
//! so a slow rebalance listener does not stop heartbeats. It reports every round trip as an event,
//! and hands errors bound to the generation to the member task (see the error table in the
//! [module docs](super)):
//! - REBALANCE_IN_PROGRESS: reported once per generation, heartbeats go on (the coordinator still
//!   counts them while the member finishes revoking, within the rebalance timeout);
//! - UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, FENCED_INSTANCE_ID and fatal codes: reported, then
//!   silent until the member publishes a new target;
//! - coordinator errors and transport failures: forget the coordinator and retry after
//!   `retry.backoff.ms`; transient codes: retry after `retry.backoff.ms`;
//! - a request that cannot be encoded ([`Error::is_fatal`](mooring_client::Error::is_fatal)): reported to
//!   the member task, which stops; never retried.

use std::sync::Arc;
use std::time::Duration;

use mooring_wire::error_code::ErrorCode;
use tokio::sync::{mpsc, watch};
use tokio::time::{sleep_until, Instant};

use crate::config::GroupConfig;
use crate::control::Control;
use crate::events::{EventSink, GroupEventKind};
use crate::reaction::{self, Reaction};
use crate::requests;
use crate::transport::GroupTransport;

/// What to heartbeat for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeartbeatTarget {
    pub(crate) generation: i32,
    pub(crate) member_id: String,
}

/// The heartbeat loop; ends when the member drops the target sender.
pub(crate) async fn run<T: GroupTransport>(
    transport: Arc<T>,
    config: Arc<GroupConfig>,
    mut target: watch::Receiver<Option<HeartbeatTarget>>,
    control: mpsc::Sender<Control>,
    events: EventSink,
) {
    let beats = Heartbeats {
        transport,
        config,
        control,
        events,
    };
    while let Some(current) = next_target(&mut target).await {
        if !beats.beat_for(&current, &mut target).await {
            return;
        }
    }
}

/// The next target the member publishes; `None` once it drops the sender.
async fn next_target(
    target: &mut watch::Receiver<Option<HeartbeatTarget>>,
) -> Option<HeartbeatTarget> {
    loop {
        if let Some(t) = target.borrow_and_update().clone() {
            return Some(t);
        }
        target.changed().await.ok()?;
    }
}

/// What the heartbeat task needs besides its target.
struct Heartbeats<T> {
    transport: Arc<T>,
    config: Arc<GroupConfig>,
    control: mpsc::Sender<Control>,
    events: EventSink,
}

/// What one heartbeat's answer says to do next.
enum After {
    /// Heartbeat again then.
    BeatAt(Instant),
    /// REBALANCE_IN_PROGRESS: tell the member (once a generation) and heartbeat again then.
    Rebalancing(Control, Instant),
    /// An error bound to the generation: tell the member, then wait for a new target.
    Stop(Control),
}

impl<T: GroupTransport> Heartbeats<T> {
    /// Heartbeats for `current` until the member publishes another target (`true`) or drops
    /// the sender (`false`).
    async fn beat_for(
        &self,
        current: &HeartbeatTarget,
        target: &mut watch::Receiver<Option<HeartbeatTarget>>,
    ) -> bool {
        let mut next = Instant::now() + self.config.heartbeat_interval;
        let mut rebalance_reported = false;
        loop {
            tokio::select! {
                changed = target.changed() => return changed.is_ok(),
                _ = sleep_until(next) => {}
            }
            match self.beat(current).await {
                After::BeatAt(at) => next = at,
                After::Rebalancing(control, at) => {
                    if !std::mem::replace(&mut rebalance_reported, true) {
                        let _ = self.control.send(control).await;
                    }
                    next = at;
                }
                After::Stop(control) => {
                    let _ = self.control.send(control).await;
                    return target.changed().await.is_ok();
                }
            }
        }
    }

    /// One heartbeat, reported as an event, and what its answer says to do next.
    async fn beat(&self, current: &HeartbeatTarget) -> After {
        let config = &self.config;
        let started = Instant::now();
        let (generation, member_id) = (current.generation, current.member_id.clone());
        let result = self
            .transport
            .call_coordinator(&config.group_id, |version| {
                requests::heartbeat(version, config, generation, member_id)
            })
            .await;
        let latency = started.elapsed();
        let control = |code, failure| Control {
            api: "Heartbeat",
            generation,
            member_id: current.member_id.clone(),
            code,
            failure,
        };
        let code = match result {
            Ok(response) => ErrorCode::from_i16(response.error_code),
            Err(e) => {
                self.report(generation, latency, Some(e.to_string()));
                if e.is_fatal() {
                    return After::Stop(control(reaction::failed_code(&e), Some(e)));
                }
                self.transport.forget_coordinator(&config.group_id);
                return After::BeatAt(Instant::now() + config.retry_backoff);
            }
        };
        self.report(
            generation,
            latency,
            (!code.is_ok()).then(|| code.to_string()),
        );
        match reaction::heartbeat(code) {
            Reaction::Proceed => After::BeatAt(started + config.heartbeat_interval),
            Reaction::Rejoin => {
                After::Rebalancing(control(code, None), started + config.heartbeat_interval)
            }
            Reaction::RetryAfterBackoff => After::BeatAt(Instant::now() + config.retry_backoff),
            Reaction::Rediscover => {
                self.transport.forget_coordinator(&config.group_id);
                After::BeatAt(Instant::now() + config.retry_backoff)
            }
            _ => After::Stop(control(code, None)),
        }
    }

    fn report(&self, generation: i32, latency: Duration, error: Option<String>) {
        self.events.emit(GroupEventKind::Heartbeat {
            generation,
            latency,
            error,
        });
    }
}
