//! One broker connection: a cloneable [`Connection`] handle and one background task that owns the
//! socket ([`super::task`]). This file is the handle's side: versions, correlation ids, encoding,
//! the in-flight limit and each request's timeout.
//!
//! Callers encode their request (with a fresh correlation id) and hand the whole frame to the task
//! over a bounded channel; the task registers the waiter, then writes the frame in one piece, so a
//! caller that is cancelled can never leave half a frame on the socket. Responses are matched by
//! correlation id ([`super::pending`]), so many requests can be in flight at once (pipelining, up
//! to `max.in.flight.requests.per.connection`). Each request carries its own timeout:
//! `request.timeout.ms` unless the caller gives another ([`Connection::call_within`]: JoinGroup
//! and SyncGroup, which the coordinator may legitimately hold for the rebalance timeout). A
//! request that times out closes the connection it was sent on, as in Java (the broker answers in
//! order, so a stuck or half-open connection would hold every later request too); that is why
//! requests the broker may hold go on a connection of their own (see [`crate::client`]). A request
//! future that is merely dropped does not: its response is read and discarded when it comes. A
//! fatal I/O or framing error fails every waiter with a clone of the error and the connection is
//! dead for good: the pool makes a new one. Response frames larger than
//! `receive.message.max.bytes` are refused before anything is allocated for them.

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use mooring_wire::frame::{decode_response, encode_request};
use mooring_wire::messages::Request;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{mpsc, oneshot, Semaphore};

use super::memory::FrameMemory;
use super::pending::Waiter;
use super::task::{run, Outgoing, State};
use super::versions::VersionTable;
use crate::error::{Error, Result};

/// Capacity of the channel between handles and the connection task (frames not yet written).
const QUEUE: usize = 64;

/// The settings one connection needs.
#[derive(Debug, Clone)]
pub(crate) struct ConnSettings {
    pub client_id: Arc<str>,
    pub request_timeout: Duration,
    pub max_frame_size: usize,
    pub max_in_flight: usize,
    /// Where frames of [`LARGE_FRAME`](super::memory::LARGE_FRAME) bytes and more are read into (the fetcher's budget).
    pub frame_memory: Option<Arc<FrameMemory>>,
}

struct Inner {
    broker: String,
    tx: mpsc::Sender<Outgoing>,
    state: Arc<State>,
    next_id: AtomicI32,
    in_flight: Arc<Semaphore>,
    settings: ConnSettings,
    versions: OnceLock<VersionTable>,
    /// When the broker ends the SASL session (KIP-368 `session_lifetime_ms`).
    session_expiry: OnceLock<std::time::Instant>,
}

/// A handle to one broker connection; clones share the connection.
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("broker", &self.inner.broker)
            .field("alive", &self.is_alive())
            .finish()
    }
}

impl Connection {
    /// Starts the task for an established stream (TLS already done). ApiVersions has not been
    /// negotiated yet: [`Connection::set_versions`] follows.
    pub(crate) fn spawn<S>(stream: S, broker: String, settings: ConnSettings) -> Connection
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (tx, rx) = mpsc::channel(QUEUE);
        let state = Arc::new(State::default());
        tokio::spawn(run(
            stream,
            rx,
            Arc::clone(&state),
            broker.clone(),
            settings.max_frame_size,
            settings.frame_memory.clone(),
        ));
        let in_flight = Arc::new(Semaphore::new(settings.max_in_flight.max(1)));
        Connection {
            inner: Arc::new(Inner {
                broker,
                tx,
                state,
                next_id: AtomicI32::new(0),
                in_flight,
                settings,
                versions: OnceLock::new(),
                session_expiry: OnceLock::new(),
            }),
        }
    }

    /// The broker this connection goes to, as named in errors (`node 1 (host:port)`).
    pub fn broker(&self) -> &str {
        &self.inner.broker
    }

    /// Whether the connection can still carry requests.
    pub fn is_alive(&self) -> bool {
        !self.inner.tx.is_closed() && self.inner.state.failure().is_none()
    }

    /// Whether new requests should use this connection: alive, and its SASL session not near its
    /// end. Instead of re-authenticating in place (KIP-368), the pool opens a fresh connection
    /// when 85 % of the session lifetime has passed; requests already in flight finish on the old
    /// one, which closes when its last handle is dropped.
    pub fn is_usable(&self) -> bool {
        self.is_alive()
            && self
                .inner
                .session_expiry
                .get()
                .is_none_or(|t| std::time::Instant::now() < *t)
    }

    /// Records the SASL session lifetime the broker announced (0: unlimited).
    pub(crate) fn set_session_lifetime(&self, lifetime_ms: i64) {
        if let Ok(ms) = u64::try_from(lifetime_ms) {
            if ms > 0 {
                let renew_after = Duration::from_millis(ms.saturating_mul(85) / 100);
                let _ = self
                    .inner
                    .session_expiry
                    .set(std::time::Instant::now() + renew_after);
            }
        }
    }

    /// The error the connection died of, if it did.
    pub fn failure(&self) -> Option<Error> {
        self.inner.state.failure()
    }

    pub(crate) fn set_versions(&self, versions: VersionTable) {
        let _ = self.inner.versions.set(versions);
    }

    /// What the broker answered to ApiVersions.
    pub fn versions(&self) -> Option<&VersionTable> {
        self.inner.versions.get()
    }

    /// The version of `R` used on this connection: the highest the broker and this client share.
    pub fn version<R: Request>(&self) -> Result<i16> {
        match self.inner.versions.get() {
            Some(table) => table.version::<R>(&self.inner.broker),
            None => Err(Error::UnsupportedVersion {
                api: R::NAME,
                broker: self.inner.broker.clone(),
            }),
        }
    }

    /// `request.timeout.ms`: how long a request waits for its answer unless told otherwise.
    pub fn request_timeout(&self) -> Duration {
        self.inner.settings.request_timeout
    }

    /// Builds a request for the negotiated version of `R` and sends it; the answer may take up to
    /// `request.timeout.ms`.
    pub async fn call<R, F>(&self, build: F) -> Result<R::Response>
    where
        R: Request,
        F: FnOnce(i16) -> R,
    {
        self.call_within(self.request_timeout(), build).await
    }

    /// As [`Connection::call`], with the answer allowed `timeout` instead of `request.timeout.ms`
    /// (longer for a request the broker may hold). If it times out, this connection is closed.
    pub async fn call_within<R, F>(&self, timeout: Duration, build: F) -> Result<R::Response>
    where
        R: Request,
        F: FnOnce(i16) -> R,
    {
        let version = self.version::<R>()?;
        // Encode before the first await: the request itself is never held across one, so only
        // `R: Send` (not `Sync`) is needed for the future to be `Send`.
        let encoded = self.encode(&build(version), version);
        let (correlation_id, frame) = encoded?;
        self.exchange::<R>(correlation_id, frame, version, timeout)
            .await
    }

    /// Sends `request` at the negotiated version.
    pub fn send<'a, R: Request>(
        &'a self,
        request: &R,
    ) -> impl Future<Output = Result<R::Response>> + 'a {
        let encoded = self
            .version::<R>()
            .and_then(|version| Ok((version, self.encode(request, version)?)));
        async move {
            let (version, (correlation_id, frame)) = encoded?;
            self.exchange::<R>(correlation_id, frame, version, self.request_timeout())
                .await
        }
    }

    /// Sends `request` at an explicit `version` and decodes the response at the same version.
    pub fn send_at<'a, R: Request>(
        &'a self,
        request: &R,
        version: i16,
    ) -> impl Future<Output = Result<R::Response>> + 'a {
        let encoded = self.encode(request, version);
        async move {
            let (correlation_id, frame) = encoded?;
            self.exchange::<R>(correlation_id, frame, version, self.request_timeout())
                .await
        }
    }

    async fn exchange<R: Request>(
        &self,
        correlation_id: i32,
        frame: Bytes,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response> {
        let frame = self
            .timed_round_trip(R::NAME, correlation_id, frame, timeout)
            .await?;
        decode_response::<R::Response>(&frame, version)
            .map(|(_, response)| response)
            .map_err(|source| Error::Decode {
                api: R::NAME,
                broker: self.inner.broker.clone(),
                source,
            })
    }

    /// Encodes a whole request frame with a fresh correlation id.
    fn encode<R: Request>(&self, request: &R, version: i16) -> Result<(i32, Bytes)> {
        let correlation_id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut buf = BytesMut::new();
        encode_request(
            &mut buf,
            request,
            version,
            correlation_id,
            Some(&self.inner.settings.client_id),
        )
        .map_err(|source| Error::Encode {
            api: R::NAME,
            source,
        })?;
        Ok((correlation_id, buf.freeze()))
    }

    /// Sends `request` at `version` and returns the raw response frame body (header included).
    pub(crate) async fn send_frame<R: Request>(&self, request: &R, version: i16) -> Result<Bytes> {
        let (correlation_id, frame) = self.encode(request, version)?;
        self.timed_round_trip(R::NAME, correlation_id, frame, self.request_timeout())
            .await
    }

    async fn timed_round_trip(
        &self,
        api: &'static str,
        correlation_id: i32,
        frame: Bytes,
        timeout: Duration,
    ) -> Result<Bytes> {
        match tokio::time::timeout(timeout, self.round_trip(api, correlation_id, frame)).await {
            Ok(result) => result,
            Err(_) => {
                let error = Error::Timeout {
                    api,
                    broker: self.inner.broker.clone(),
                    after: timeout,
                };
                // As Java's NetworkClient: a broker that does not answer in time may be gone
                // (half-open TCP) or stuck, and Kafka answers in order, so every later request
                // would wait behind this one. Close the connection; the pool makes a new one.
                tracing::warn!(broker = %self.inner.broker, api, ?timeout, "request timed out; closing the connection");
                self.inner.state.kill(error.clone());
                Err(error)
            }
        }
    }

    async fn round_trip(
        &self,
        api: &'static str,
        correlation_id: i32,
        frame: Bytes,
    ) -> Result<Bytes> {
        if let Some(error) = self.inner.state.failure() {
            return Err(error);
        }
        let permit = Arc::clone(&self.inner.in_flight)
            .acquire_owned()
            .await
            .map_err(|_| self.dead())?;
        let (reply, rx) = oneshot::channel();
        let outgoing = Outgoing {
            correlation_id,
            frame,
            waiter: Waiter {
                api,
                reply,
                _permit: Some(permit),
            },
        };
        self.inner
            .tx
            .send(outgoing)
            .await
            .map_err(|_| self.dead())?;
        match rx.await {
            Ok(result) => result,
            Err(_) => Err(self.dead()),
        }
    }

    fn dead(&self) -> Error {
        self.inner
            .state
            .failure()
            .unwrap_or_else(|| Error::Disconnected {
                broker: self.inner.broker.clone(),
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! The task's bookkeeping over an in-memory stream: the test plays the peer byte by byte (the
    //! real broker is exercised in `tests/client_real_broker.rs`).

    use super::*;
    use bytes::{Buf, BufMut};
    use mooring_wire::messages::{HeartbeatRequest, HeartbeatResponse, Message};
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};

    fn settings(max_frame_size: usize, timeout_ms: u64) -> ConnSettings {
        ConnSettings {
            client_id: Arc::from("t"),
            request_timeout: Duration::from_millis(timeout_ms),
            max_frame_size,
            max_in_flight: 16,
            frame_memory: None,
        }
    }

    fn connection(max_frame_size: usize, timeout_ms: u64) -> (Connection, DuplexStream) {
        let (ours, peer) = tokio::io::duplex(1 << 16);
        let conn = Connection::spawn(ours, "peer".into(), settings(max_frame_size, timeout_ms));
        // Heartbeat up to v0 only, so calls at the negotiated version go in v0, as the peer answers.
        conn.set_versions(VersionTable::new([(12, 0, 0)]));
        (conn, peer)
    }

    /// Reads one request frame from the peer side; returns its correlation id.
    async fn read_request(peer: &mut DuplexStream) -> i32 {
        let size = peer.read_i32().await.unwrap();
        let mut body = vec![0u8; usize::try_from(size).unwrap()];
        peer.read_exact(&mut body).await.unwrap();
        let mut b = &body[..];
        let _key = b.get_i16();
        let _version = b.get_i16();
        b.get_i32()
    }

    /// A Heartbeat v0 response frame (header v0) with `error_code`.
    fn response(correlation_id: i32, error_code: i16) -> Vec<u8> {
        let mut body = BytesMut::new();
        body.put_i32(correlation_id);
        HeartbeatResponse {
            error_code,
            ..Default::default()
        }
        .encode(&mut body, 0)
        .unwrap();
        let mut frame = Vec::new();
        frame.put_i32(i32::try_from(body.len()).unwrap());
        frame.extend_from_slice(&body);
        frame
    }

    fn heartbeat() -> HeartbeatRequest {
        HeartbeatRequest {
            group_id: "g".into(),
            generation_id: 1,
            member_id: "m".into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn responses_in_any_order_reach_their_callers() {
        let (conn, mut peer) = connection(1 << 20, 5_000);
        let request = heartbeat();
        let a = tokio::spawn({
            let conn = conn.clone();
            let request = request.clone();
            async move { conn.send_at(&request, 0).await }
        });
        let first = read_request(&mut peer).await;
        let b = tokio::spawn({
            let conn = conn.clone();
            async move { conn.send_at(&request, 0).await }
        });
        let second = read_request(&mut peer).await;
        peer.write_all(&response(second, 27)).await.unwrap();
        peer.write_all(&response(first, 0)).await.unwrap();
        assert_eq!(a.await.unwrap().unwrap().error_code, 0);
        assert_eq!(b.await.unwrap().unwrap().error_code, 27);
        assert!(conn.is_alive());
    }

    #[tokio::test]
    async fn an_oversized_frame_fails_every_waiter() {
        let (conn, mut peer) = connection(64, 5_000);
        let request = heartbeat();
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let conn = conn.clone();
                let request = request.clone();
                tokio::spawn(async move { conn.send_at(&request, 0).await })
            })
            .collect();
        for _ in 0..3 {
            read_request(&mut peer).await;
        }
        // A size prefix of 1 GiB: refused from the 4 bytes alone, nothing allocated for it.
        peer.write_all(&(1i32 << 30).to_be_bytes()).await.unwrap();
        for waiter in waiters {
            let err = waiter.await.unwrap().unwrap_err();
            assert!(
                matches!(&err, Error::Io { source, .. } if source.to_string().contains("exceeds")),
                "{err:?}"
            );
        }
        assert!(!conn.is_alive());
        // Later requests get the same error at once.
        let err = conn.send_at(&heartbeat(), 0).await.unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err:?}");
    }

    #[tokio::test]
    async fn a_closed_peer_and_an_unknown_correlation_id_are_fatal() {
        let (conn, peer) = connection(1 << 20, 5_000);
        let pending = tokio::spawn({
            let conn = conn.clone();
            async move { conn.send_at(&heartbeat(), 0).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(peer);
        let err = pending.await.unwrap().unwrap_err();
        assert!(
            matches!(err, Error::Disconnected { .. } | Error::Io { .. }),
            "{err:?}"
        );

        let (conn, mut peer) = connection(1 << 20, 5_000);
        let pending = tokio::spawn({
            let conn = conn.clone();
            async move { conn.send_at(&heartbeat(), 0).await }
        });
        let id = read_request(&mut peer).await;
        peer.write_all(&response(id + 100, 0)).await.unwrap();
        let err = pending.await.unwrap().unwrap_err();
        assert!(err.to_string().contains("unknown correlation id"), "{err}");
    }

    #[tokio::test]
    async fn a_dropped_caller_leaves_the_stream_in_step() {
        let (conn, mut peer) = connection(1 << 20, 5_000);
        let request = heartbeat();
        // Start a request, let its frame go out, then drop the caller.
        let abandoned = tokio::spawn({
            let conn = conn.clone();
            let request = request.clone();
            async move { conn.send_at(&request, 0).await }
        });
        let first = read_request(&mut peer).await;
        abandoned.abort();
        let _ = abandoned.await;
        let next = tokio::spawn({
            let conn = conn.clone();
            async move { conn.send_at(&request, 0).await }
        });
        let second = read_request(&mut peer).await;
        // The abandoned request's answer comes first and is discarded.
        peer.write_all(&response(first, 0)).await.unwrap();
        peer.write_all(&response(second, 22)).await.unwrap();
        assert_eq!(next.await.unwrap().unwrap().error_code, 22);
        assert!(conn.is_alive());
    }

    #[tokio::test]
    async fn a_timeout_closes_the_connection() {
        let (conn, mut peer) = connection(1 << 20, 100);
        let err = tokio::join!(conn.send_at(&heartbeat(), 0), read_request(&mut peer))
            .0
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Timeout {
                    api: "HeartbeatRequest",
                    ..
                }
            ),
            "{err:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!conn.is_alive());
    }

    #[tokio::test]
    async fn a_timeout_fails_the_other_calls_in_flight_and_closes_the_socket() {
        let (conn, mut peer) = connection(1 << 20, 100);
        // A call the peer may hold for 5 s, in flight when another one times out.
        let held = hold(&conn, Duration::from_secs(5));
        read_request(&mut peer).await;
        let timed_out = tokio::join!(conn.call(|_| heartbeat()), read_request(&mut peer)).0;
        assert!(
            matches!(timed_out, Err(Error::Timeout { .. })),
            "{timed_out:?}"
        );
        // The held call fails with the timeout at once, not after its own 5 s.
        let held = tokio::time::timeout(Duration::from_secs(2), held)
            .await
            .expect("the held call ends with the connection")
            .unwrap();
        assert!(matches!(held, Err(Error::Timeout { .. })), "{held:?}");
        // The socket is closed: the peer reads the end of the stream.
        let mut rest = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(2), peer.read_to_end(&mut rest)).await;
        assert!(matches!(read, Ok(Ok(0))), "{read:?}");
    }

    /// A Heartbeat sent with its own timeout, `within`, as a coordinator may hold a JoinGroup.
    fn hold(
        conn: &Connection,
        within: Duration,
    ) -> tokio::task::JoinHandle<Result<HeartbeatResponse>> {
        let conn = conn.clone();
        tokio::spawn(async move { conn.call_within(within, |_| heartbeat()).await })
    }

    /// Polls `condition` every 5 ms; panics with `what` after 2 s.
    async fn eventually(what: &str, condition: impl Fn() -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while !condition() {
            assert!(tokio::time::Instant::now() < deadline, "never: {what}");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    #[tokio::test]
    async fn a_call_with_its_own_timeout_outlives_the_request_timeout() {
        let (conn, mut peer) = connection(1 << 20, 100);
        let held = hold(&conn, Duration::from_secs(5));
        let id = read_request(&mut peer).await;
        // The peer holds the answer three times request.timeout.ms, as a coordinator holds a
        // JoinGroup.
        tokio::time::sleep(Duration::from_millis(300)).await;
        peer.write_all(&response(id, 0)).await.unwrap();
        assert_eq!(held.await.unwrap().unwrap().error_code, 0);
        assert!(conn.is_alive());
        // A call without a timeout of its own still has request.timeout.ms.
        let err = tokio::join!(conn.call(|_| heartbeat()), read_request(&mut peer))
            .0
            .unwrap_err();
        assert!(
            matches!(err, Error::Timeout { after, .. } if after == Duration::from_millis(100)),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn a_timed_out_group_call_leaves_the_commit_connection_alone() {
        let (commits, mut commit_peer) = connection(1 << 20, 5_000);
        let (group, mut group_peer) = connection(1 << 20, 5_000);
        // A commit in flight on its connection while the group connection's call is held past
        // its own timeout.
        let commit = tokio::spawn({
            let commits = commits.clone();
            async move { commits.call(|_| heartbeat()).await }
        });
        let commit_id = read_request(&mut commit_peer).await;
        let err = tokio::join!(
            group.call_within(Duration::from_millis(100), |_| heartbeat()),
            read_request(&mut group_peer)
        )
        .0
        .unwrap_err();
        assert!(
            matches!(err, Error::Timeout { after, .. } if after == Duration::from_millis(100)),
            "{err:?}"
        );
        eventually("the group connection closes", || !group.is_alive()).await;
        commit_peer
            .write_all(&response(commit_id, 0))
            .await
            .unwrap();
        assert_eq!(commit.await.unwrap().unwrap().error_code, 0);
        assert!(commits.is_alive());
    }
}
