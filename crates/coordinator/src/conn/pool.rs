//! One connection per broker, made on demand and remade after it dies, with exponential back-off
//! between failed attempts per broker (`reconnect.backoff.ms` doubling up to
//! `reconnect.backoff.max.ms`, with jitter).
//!
//! Concurrent callers share one connection attempt: the first starts it on its own task (so a
//! caller that is cancelled does not abandon it) and everyone waits on a watch channel; no lock is
//! held across an await. An authentication failure is fatal for the whole pool: it is remembered
//! and returned to every later caller without connecting again, until the client is rebuilt (as
//! Java's `AuthenticationException`: new connections with the same credentials would only fail
//! again, and a reconnect storm can lock the account).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::sync::watch;

use super::backoff::Backoff;
use super::connection::Connection;
use super::{connect, ConnectOptions};
use crate::error::{Error, Result};

type Outcome = Option<Result<Connection>>;

#[derive(Debug)]
enum SlotState {
    Idle,
    Connecting(watch::Receiver<Outcome>),
    Connected(Connection),
}

#[derive(Debug)]
struct Slot {
    address: String,
    state: SlotState,
    /// Consecutive failed attempts.
    failures: u32,
    retry_at: Option<Instant>,
    last_error: Option<Error>,
    /// Bumped per attempt, so a stale attempt's outcome is ignored.
    attempt: u64,
}

impl Slot {
    fn new(address: &str) -> Slot {
        Slot {
            address: address.to_string(),
            state: SlotState::Idle,
            failures: 0,
            retry_at: None,
            last_error: None,
            attempt: 0,
        }
    }
}

#[derive(Debug)]
struct PoolInner {
    slots: Mutex<HashMap<i32, Slot>>,
    fatal: Mutex<Option<Error>>,
    opts: ConnectOptions,
    backoff: Backoff,
    attempts: AtomicU64,
}

/// Connections by node id (bootstrap addresses get negative ids).
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    inner: Arc<PoolInner>,
}

enum Next {
    Ready(Connection),
    Fail(Error),
    Sleep(Instant),
    Wait(watch::Receiver<Outcome>),
}

/// How a node is named in errors and logs.
pub(crate) fn broker_label(node: i32, address: &str) -> String {
    if node < 0 {
        format!("bootstrap {address}")
    } else {
        format!("node {node} ({address})")
    }
}

impl Pool {
    pub fn new(opts: ConnectOptions, backoff: Backoff) -> Pool {
        Pool {
            inner: Arc::new(PoolInner {
                slots: Mutex::new(HashMap::new()),
                fatal: Mutex::new(None),
                opts,
                backoff,
                attempts: AtomicU64::new(0),
            }),
        }
    }

    /// How many connection attempts were started (for tests and metrics).
    pub fn attempts(&self) -> u64 {
        self.inner.attempts.load(Ordering::Relaxed)
    }

    /// The fatal (authentication) error, if one happened.
    pub fn fatal(&self) -> Option<Error> {
        self.inner.fatal.lock().ok().and_then(|f| f.clone())
    }

    /// Live connections, by node id.
    pub fn live(&self) -> Vec<(i32, Connection)> {
        let Ok(slots) = self.inner.slots.lock() else {
            return Vec::new();
        };
        let mut live: Vec<(i32, Connection)> = slots
            .iter()
            .filter_map(|(node, slot)| match &slot.state {
                SlotState::Connected(c) if c.is_usable() => Some((*node, c.clone())),
                _ => None,
            })
            .collect();
        live.sort_by_key(|(node, _)| *node);
        live
    }

    /// Whether `node` failed recently and is waiting out its back-off.
    pub fn in_backoff(&self, node: i32) -> bool {
        let Ok(slots) = self.inner.slots.lock() else {
            return false;
        };
        slots.get(&node).is_some_and(|slot| {
            matches!(slot.state, SlotState::Idle)
                && slot.retry_at.is_some_and(|t| t > Instant::now())
        })
    }

    /// The connection to `node` at `address`, connecting if needed. If the node is backing off
    /// after a failure, waits the back-off out when `wait_backoff`, else fails with the last error.
    pub async fn get(&self, node: i32, address: &str, wait_backoff: bool) -> Result<Connection> {
        loop {
            if let Some(fatal) = self.fatal() {
                return Err(fatal);
            }
            match self.next(node, address, wait_backoff)? {
                Next::Ready(conn) => return Ok(conn),
                Next::Fail(error) => return Err(error),
                Next::Sleep(until) => tokio::time::sleep_until(until.into()).await,
                Next::Wait(mut rx) => {
                    let outcome = match rx.wait_for(Option::is_some).await {
                        Ok(value) => value.clone(),
                        Err(_) => None,
                    };
                    return match outcome {
                        Some(result) => result,
                        None => Err(Error::Disconnected {
                            broker: broker_label(node, address),
                        }),
                    };
                }
            }
        }
    }

    fn next(&self, node: i32, address: &str, wait_backoff: bool) -> Result<Next> {
        let mut slots = self.inner.slots.lock().map_err(|_| Error::Closed)?;
        let slot = slots.entry(node).or_insert_with(|| Slot::new(address));
        if slot.address != address {
            // The broker moved (new metadata): forget the old connection and its failures.
            *slot = Slot::new(address);
        }
        match &slot.state {
            SlotState::Connected(conn) if conn.is_usable() => return Ok(Next::Ready(conn.clone())),
            SlotState::Connecting(rx) => return Ok(Next::Wait(rx.clone())),
            _ => {}
        }
        if let Some(retry_at) = slot.retry_at {
            if retry_at > Instant::now() {
                if !wait_backoff {
                    return Ok(Next::Fail(slot.last_error.clone().unwrap_or_else(|| {
                        Error::Disconnected {
                            broker: broker_label(node, address),
                        }
                    })));
                }
                return Ok(Next::Sleep(retry_at));
            }
        }
        let (tx, rx) = watch::channel(None);
        slot.attempt += 1;
        let attempt = slot.attempt;
        slot.state = SlotState::Connecting(rx.clone());
        drop(slots);

        self.inner.attempts.fetch_add(1, Ordering::Relaxed);
        let inner = Arc::clone(&self.inner);
        let address = address.to_string();
        tokio::spawn(async move {
            let label = broker_label(node, &address);
            tracing::debug!(broker = %label, "connecting");
            let result = connect(&address, label.clone(), &inner.opts).await;
            if let Err(error) = &result {
                tracing::warn!(broker = %label, %error, "connection failed");
                if matches!(error, Error::Authentication { .. }) {
                    if let Ok(mut fatal) = inner.fatal.lock() {
                        fatal.get_or_insert_with(|| error.clone());
                    }
                }
            }
            if let Ok(mut slots) = inner.slots.lock() {
                if let Some(slot) = slots.get_mut(&node).filter(|s| s.attempt == attempt) {
                    match &result {
                        Ok(conn) => {
                            slot.state = SlotState::Connected(conn.clone());
                            slot.failures = 0;
                            slot.retry_at = None;
                            slot.last_error = None;
                        }
                        Err(error) => {
                            slot.state = SlotState::Idle;
                            slot.failures = slot.failures.saturating_add(1);
                            slot.retry_at =
                                Some(Instant::now() + inner.backoff.delay(slot.failures));
                            slot.last_error = Some(error.clone());
                        }
                    }
                }
            }
            let _ = tx.send(Some(result));
        });
        Ok(Next::Wait(rx))
    }
}
