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
    loop {
        let current = loop {
            if let Some(t) = target.borrow_and_update().clone() {
                break t;
            }
            if target.changed().await.is_err() {
                return;
            }
        };
        let mut next = Instant::now() + config.heartbeat_interval;
        let mut rebalance_reported = false;
        loop {
            tokio::select! {
                changed = target.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    break;
                }
                _ = sleep_until(next) => {}
            }
            let started = Instant::now();
            let member_id = current.member_id.clone();
            let generation = current.generation;
            let result = transport
                .call_coordinator(&config.group_id, |version| {
                    requests::heartbeat(version, &config, generation, member_id)
                })
                .await;
            let latency = started.elapsed();
            let code = match result {
                Ok(response) => ErrorCode::from_i16(response.error_code),
                Err(e) if e.is_fatal() => {
                    events.emit(GroupEventKind::Heartbeat {
                        generation,
                        latency,
                        error: Some(e.to_string()),
                    });
                    let _ = control
                        .send(Control {
                            api: "Heartbeat",
                            generation,
                            member_id: current.member_id.clone(),
                            code: crate::reaction::failed_code(&e),
                            failure: Some(e),
                        })
                        .await;
                    if target.changed().await.is_err() {
                        return;
                    }
                    break;
                }
                Err(e) => {
                    events.emit(GroupEventKind::Heartbeat {
                        generation,
                        latency,
                        error: Some(e.to_string()),
                    });
                    transport.forget_coordinator(&config.group_id);
                    next = Instant::now() + config.retry_backoff;
                    continue;
                }
            };
            events.emit(GroupEventKind::Heartbeat {
                generation,
                latency,
                error: (!code.is_ok()).then(|| code.to_string()),
            });
            match reaction::heartbeat(code) {
                Reaction::Proceed => next = started + config.heartbeat_interval,
                Reaction::Rejoin => {
                    if !rebalance_reported {
                        rebalance_reported = true;
                        let _ = control
                            .send(Control {
                                api: "Heartbeat",
                                generation,
                                member_id: current.member_id.clone(),
                                code,
                                failure: None,
                            })
                            .await;
                    }
                    next = started + config.heartbeat_interval;
                }
                Reaction::RetryAfterBackoff => next = Instant::now() + config.retry_backoff,
                Reaction::Rediscover => {
                    transport.forget_coordinator(&config.group_id);
                    next = Instant::now() + config.retry_backoff;
                }
                _ => {
                    let _ = control
                        .send(Control {
                            api: "Heartbeat",
                            generation,
                            member_id: current.member_id.clone(),
                            code,
                            failure: None,
                        })
                        .await;
                    if target.changed().await.is_err() {
                        return;
                    }
                    break;
                }
            }
        }
    }
}
