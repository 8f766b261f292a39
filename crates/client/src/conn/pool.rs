//! One connection per broker, made on demand and remade after it dies, with exponential back-off
//! between failed attempts per broker (`reconnect.backoff.ms` doubling up to
//! `reconnect.backoff.max.ms`, with jitter).
//!
//! A group's coordinator gets a second connection, the [`ConnectionKind::Group`] one, for JoinGroup and
//! SyncGroup only (as franz-go's `cxnGroup`). A Kafka broker reads a connection's next request
//! only once it has answered the one before, and the coordinator holds a JoinGroup until every
//! member has rejoined (up to the rebalance timeout) and a follower's SyncGroup until the leader's
//! arrives: on a shared connection every OffsetCommit, OffsetFetch and Heartbeat queued behind
//! them would wait as long, and the timeout of a held request would close the connection under
//! them. The cost is one more connection per member, to its coordinator, opened at the first
//! JoinGroup; each kind has its own back-off.
//!
//! Concurrent callers share one connection attempt: the first starts it on its own task (so a
//! caller that is cancelled does not abandon it) and everyone waits on a watch channel; no lock is
//! held across an await. A security failure of a connection (SASL refused, a TLS certificate that
//! does not verify: [`Error::is_fatal`]) is fatal for the whole pool: it is remembered and
//! returned to every later caller without connecting again, until the client is rebuilt (as
//! Java's `AuthenticationException`: new connections with the same credentials would only fail
//! again, and a reconnect storm can lock the account). It is logged once, as a warning: whoever
//! gets it says it (the consumer ends with it, as one error).

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

/// Which of a broker's connections a request goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ConnectionKind {
    /// Every request but JoinGroup and SyncGroup.
    #[default]
    General,
    /// JoinGroup and SyncGroup, which the coordinator may hold for the rebalance timeout.
    Group,
}

#[derive(Debug)]
struct PoolInner {
    slots: Mutex<HashMap<(i32, ConnectionKind), Slot>>,
    fatal: Mutex<Option<Error>>,
    opts: ConnectOptions,
    backoff: Backoff,
    attempts: AtomicU64,
}

/// Connections by node id (bootstrap addresses get negative ids) and kind.
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

/// How a node's connection of `kind` is named in errors and logs.
fn connection_label(node: i32, address: &str, kind: ConnectionKind) -> String {
    match kind {
        ConnectionKind::General => broker_label(node, address),
        ConnectionKind::Group => format!("{}, group connection", broker_label(node, address)),
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

    /// The fatal (authentication, TLS) error, if one happened.
    pub fn fatal(&self) -> Option<Error> {
        self.inner.fatal.lock().ok().and_then(|f| f.clone())
    }

    /// Live general connections, by node id.
    pub fn live(&self) -> Vec<(i32, Connection)> {
        let Ok(slots) = self.inner.slots.lock() else {
            return Vec::new();
        };
        let mut live: Vec<(i32, Connection)> = slots
            .iter()
            .filter_map(|((node, kind), slot)| match &slot.state {
                SlotState::Connected(c) if *kind == ConnectionKind::General && c.is_usable() => {
                    Some((*node, c.clone()))
                }
                _ => None,
            })
            .collect();
        live.sort_by_key(|(node, _)| *node);
        live
    }

    /// Whether `node`'s general connection failed recently and is waiting out its back-off.
    pub fn in_backoff(&self, node: i32) -> bool {
        let Ok(slots) = self.inner.slots.lock() else {
            return false;
        };
        slots
            .get(&(node, ConnectionKind::General))
            .is_some_and(|slot| {
                matches!(slot.state, SlotState::Idle)
                    && slot.retry_at.is_some_and(|t| t > Instant::now())
            })
    }

    /// The general connection to `node` at `address`, connecting if needed. If the node is
    /// backing off after a failure, waits the back-off out when `wait_backoff`, else fails with
    /// the last error.
    pub async fn get(&self, node: i32, address: &str, wait_backoff: bool) -> Result<Connection> {
        self.get_on(node, ConnectionKind::General, address, wait_backoff)
            .await
    }

    /// As [`Pool::get`], for the connection to `node` of `kind`.
    pub async fn get_on(
        &self,
        node: i32,
        kind: ConnectionKind,
        address: &str,
        wait_backoff: bool,
    ) -> Result<Connection> {
        loop {
            if let Some(fatal) = self.fatal() {
                return Err(fatal);
            }
            match self.next(node, kind, address, wait_backoff)? {
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
                            broker: connection_label(node, address, kind),
                        }),
                    };
                }
            }
        }
    }

    fn next(
        &self,
        node: i32,
        kind: ConnectionKind,
        address: &str,
        wait_backoff: bool,
    ) -> Result<Next> {
        let mut slots = self.inner.slots.lock().map_err(|_| Error::Closed)?;
        let slot = slots
            .entry((node, kind))
            .or_insert_with(|| Slot::new(address));
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
                            broker: connection_label(node, address, kind),
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
            let label = connection_label(node, &address, kind);
            tracing::debug!(broker = %label, "connecting");
            let result = connect(&address, label.clone(), &inner.opts).await;
            if let Err(error) = &result {
                if !error.is_fatal() {
                    tracing::warn!(broker = %label, %error, "connection failed");
                } else if remember_fatal(&inner, error) {
                    tracing::warn!(broker = %label, %error, "connection refused for good; no more attempts");
                } else {
                    tracing::debug!(broker = %label, %error, "connection refused for good");
                }
            }
            if let Ok(mut slots) = inner.slots.lock() {
                if let Some(slot) = slots
                    .get_mut(&(node, kind))
                    .filter(|s| s.attempt == attempt)
                {
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

/// Keeps the pool's first fatal error; `true` if `error` is it.
fn remember_fatal(inner: &PoolInner, error: &Error) -> bool {
    match inner.fatal.lock() {
        Ok(mut fatal) if fatal.is_none() => {
            *fatal = Some(error.clone());
            true
        }
        _ => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! The lanes over loopback TCP: the test plays a broker that answers ApiVersions and
    //! Heartbeat v0, and never answers on the group connection (a coordinator holding a
    //! JoinGroup).

    use std::sync::Arc;
    use std::time::Duration;

    use bytes::{BufMut, BytesMut};
    use mooring_wire::messages::api_versions::ApiVersion;
    use mooring_wire::messages::{
        ApiVersionsResponse, HeartbeatRequest, HeartbeatResponse, Message,
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::conn::ConnSettings;

    fn frame(correlation_id: i32, message: &impl Message, version: i16) -> Vec<u8> {
        let mut body = BytesMut::new();
        body.put_i32(correlation_id);
        message.encode(&mut body, version).unwrap();
        let mut out = Vec::new();
        out.put_i32(i32::try_from(body.len()).unwrap());
        out.extend_from_slice(&body);
        out
    }

    /// Answers ApiVersions, then Heartbeat when `answer_heartbeats`, until the client hangs up.
    async fn serve(mut stream: TcpStream, answer_heartbeats: bool) {
        loop {
            let Ok(size) = stream.read_i32().await else {
                return;
            };
            let mut body = vec![0u8; usize::try_from(size).unwrap()];
            if stream.read_exact(&mut body).await.is_err() {
                return;
            }
            let key = i16::from_be_bytes([body[0], body[1]]);
            let version = i16::from_be_bytes([body[2], body[3]]);
            let id = i32::from_be_bytes([body[4], body[5], body[6], body[7]]);
            let out = match key {
                18 => frame(
                    id,
                    &ApiVersionsResponse {
                        api_keys: [(18, 0, 4), (12, 0, 0)]
                            .into_iter()
                            .map(|(api_key, min_version, max_version)| ApiVersion {
                                api_key,
                                min_version,
                                max_version,
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    },
                    version,
                ),
                12 if answer_heartbeats => frame(id, &HeartbeatResponse::default(), 0),
                _ => continue,
            };
            if stream.write_all(&out).await.is_err() {
                return;
            }
        }
    }

    fn pool() -> Pool {
        let opts = ConnectOptions {
            settings: ConnSettings {
                client_id: Arc::from("t"),
                request_timeout: Duration::from_secs(5),
                max_frame_size: 1 << 20,
                max_in_flight: 16,
                frame_memory: None,
            },
            setup_timeout: Duration::from_secs(5),
            tls: None,
            sasl: None,
            principal: Arc::from("User:ANONYMOUS"),
        };
        let backoff = Backoff {
            base: Duration::from_millis(10),
            max: Duration::from_millis(10),
        };
        Pool::new(opts, backoff)
    }

    fn heartbeat(_: i16) -> HeartbeatRequest {
        HeartbeatRequest {
            group_id: "g".into(),
            generation_id: 1,
            member_id: "m".into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn the_group_lane_is_a_connection_of_its_own_and_times_out_alone() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let pool = pool();
        let accept = async {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(stream, true));
        };
        let (general, ()) = tokio::join!(pool.get(1, &address, true), accept);
        let general = general.unwrap();
        let accept = async {
            let (stream, _) = listener.accept().await.unwrap();
            tokio::spawn(serve(stream, false));
        };
        let (group, ()) = tokio::join!(
            pool.get_on(1, ConnectionKind::Group, &address, true),
            accept
        );
        let group = group.unwrap();
        assert_eq!(pool.attempts(), 2, "one connection per kind");
        assert!(
            group.broker().ends_with("group connection"),
            "{}",
            group.broker()
        );
        let live: Vec<i32> = pool.live().into_iter().map(|(node, _)| node).collect();
        assert_eq!(
            live,
            [1],
            "the group connection is not lent to other requests"
        );

        // The held call times out and closes its connection; the general one carries on.
        let err = group
            .call_within(Duration::from_millis(100), heartbeat)
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Timeout { .. }), "{err:?}");
        assert!(!group.is_alive());
        assert!(general.call(heartbeat).await.is_ok());
        let again = pool.get(1, &address, false).await.unwrap();
        assert!(again.call(heartbeat).await.is_ok());
        assert_eq!(pool.attempts(), 2, "the general connection was kept");
    }
}
