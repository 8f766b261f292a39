//! One relayed connection: the client's socket, a socket of our own to the broker, and a pump
//! each way. A pump reads whole frames (4-byte size, then the body), hands them to the faults,
//! and writes them on; reading and writing are decoupled by a bounded queue so that a delayed
//! frame does not stop the next one from being read (latency is added, not accumulated).
//!
//! Requests are parsed only as far as their header's api key, version and correlation id, to know
//! what each response answers; responses that name brokers are rewritten ([`super::rewrite`]),
//! some may be corrupted ([`super::corrupt`]), and everything else is relayed byte for byte.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use bytes::{Bytes, BytesMut};
use mooring_wire::frame::{peek_frame_size, DEFAULT_MAX_FRAME_SIZE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::corrupt::{fetch_batches, flip, Window};
use super::faults::{Bandwidth, Corruption, CorruptionTarget, FaultConfig, Latency};
use super::rewrite::rewrite_response;
use super::rng::Rng;
use super::sockets::Registered;
use super::stats::{ConnectionEnd, CorruptedBatch, CorruptedResponse, Endpoint, Stats};
use super::throttle::{chunk_size, Bucket};
use super::Shared;

/// Frames read but not yet written, per direction.
const QUEUE: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    ToBroker,
    ToClient,
}

/// A frame and when it may be written.
struct Timed {
    release: Instant,
    frame: Bytes,
}

/// Requests remembered per connection until answered.
const IN_FLIGHT: usize = 1024;

/// What both pumps of a connection share.
struct Conn {
    id: u64,
    shared: Arc<Shared>,
    in_flight: Mutex<InFlight>,
}

/// Correlation id → (api key, api version) of requests not yet answered, at most [`IN_FLIGHT`]:
/// some requests are never answered (a Produce with `acks=0`), so past the cap the oldest (the
/// lowest correlation id: clients count up) is forgotten, and its answer, if one comes, is
/// relayed as it is.
#[derive(Debug, Default)]
struct InFlight(BTreeMap<i32, (i16, i16)>);

impl InFlight {
    fn remember(&mut self, correlation_id: i32, api_key: i16, api_version: i16) {
        self.0.insert(correlation_id, (api_key, api_version));
        if self.0.len() > IN_FLIGHT {
            self.0.pop_first();
        }
    }

    fn answered(&mut self, correlation_id: i32) -> Option<(i16, i16)> {
        self.0.remove(&correlation_id)
    }
}

/// Relays `client` (accepted on `endpoint`) to its broker until either side closes, a fault
/// resets it, or a response cannot be rewritten.
pub(super) async fn serve(shared: Arc<Shared>, client: TcpStream, endpoint: Endpoint) {
    let id = shared.opened(endpoint);
    let mut resets = shared.faults.subscribe_resets();
    resets.borrow_and_update();
    let (upstream, registered) = match connect_upstream(&shared, endpoint).await {
        Ok(u) => u,
        Err(e) => {
            shared.closed(id, ConnectionEnd::UpstreamUnreachable(e.to_string()));
            return;
        }
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let conn = Conn {
        id,
        shared: Arc::clone(&shared),
        in_flight: Mutex::new(InFlight::default()),
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut broker_read, mut broker_write) = upstream.into_split();
    let end = tokio::select! {
        end = pump(&conn, Dir::ToBroker, &mut client_read, &mut broker_write) => end,
        end = pump(&conn, Dir::ToClient, &mut broker_read, &mut client_write) => end,
        _ = resets.changed() => ConnectionEnd::Reset,
    };
    if end == ConnectionEnd::Reset {
        // SO_LINGER 0: closing sends RST, as a middlebox that drops the connection would.
        let _ = client_read.as_ref().set_zero_linger();
        let _ = broker_read.as_ref().set_zero_linger();
    }
    drop((client_read, client_write, broker_read, broker_write));
    drop(registered);
    shared.closed(id, end);
}

/// Connects to the endpoint's broker from a local port registered first, so the bypass check
/// never mistakes this socket for a client's.
async fn connect_upstream(
    shared: &Shared,
    endpoint: Endpoint,
) -> io::Result<(TcpStream, Registered)> {
    let target = shared.upstream_of(endpoint).ok_or_else(|| {
        io::Error::new(io::ErrorKind::NotFound, format!("no broker for {endpoint}"))
    })?;
    let mut last = io::Error::new(
        io::ErrorKind::NotFound,
        format!("{target} resolves to nothing"),
    );
    for addr in tokio::net::lookup_host(&target).await? {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        let any = if addr.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        socket.bind(any.parse().map_err(io::Error::other)?)?;
        let registered = Registered::new(socket.local_addr()?.port());
        shared.dialled(addr);
        match socket.connect(addr).await {
            Ok(stream) => return Ok((stream, registered)),
            Err(e) => last = e,
        }
    }
    Err(last)
}

/// One direction: read frames from `from`, write them to `to`. Ends when the writer does: the
/// queue drained after the reader stopped, or a write failed.
async fn pump(
    conn: &Conn,
    dir: Dir,
    from: &mut OwnedReadHalf,
    to: &mut OwnedWriteHalf,
) -> ConnectionEnd {
    let (tx, mut rx) = mpsc::channel(QUEUE);
    let reader = read_side(conn, dir, from, tx);
    let writer = write_side(conn, dir, to, &mut rx);
    tokio::pin!(reader, writer);
    let mut read_end = None;
    loop {
        tokio::select! {
            end = &mut reader, if read_end.is_none() => {
                if matches!(end, ConnectionEnd::RewriteFailed(_)) {
                    return end;
                }
                read_end = Some(end);
            }
            end = &mut writer => return read_end.unwrap_or(end),
        }
    }
}

async fn read_side(
    conn: &Conn,
    dir: Dir,
    from: &mut OwnedReadHalf,
    tx: mpsc::Sender<Timed>,
) -> ConnectionEnd {
    let mut rng = Rng::stream(
        conn.shared.seed,
        conn.id * 2 + u64::from(dir == Dir::ToClient),
    );
    let mut window = Window::default();
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let mut last_release = Instant::now();
    loop {
        let frame = match read_frame(from, &mut buf).await {
            Ok(Some(frame)) => frame,
            Ok(None) if dir == Dir::ToBroker => return ConnectionEnd::ClientClosed,
            Ok(None) => return ConnectionEnd::BrokerClosed,
            Err(e) => return ConnectionEnd::Io(e.to_string()),
        };
        let config = conn.shared.faults.current();
        let frame = match dir {
            Dir::ToBroker => conn.request(frame, &config),
            Dir::ToClient => match conn.response(frame, &config, &mut window, &mut rng) {
                Ok(frame) => frame,
                Err(e) => return ConnectionEnd::RewriteFailed(e),
            },
        };
        let Some(frame) = frame else {
            continue;
        };
        let latency = match dir {
            Dir::ToBroker => config.request_latency,
            Dir::ToClient => config.response_latency,
        };
        let release = conn.release_at(latency, &mut last_release, &mut rng);
        if tx.send(Timed { release, frame }).await.is_err() {
            return ConnectionEnd::Io("writer stopped".into());
        }
    }
}

async fn write_side(
    conn: &Conn,
    dir: Dir,
    to: &mut OwnedWriteHalf,
    rx: &mut mpsc::Receiver<Timed>,
) -> ConnectionEnd {
    let mut bucket = Bucket::new(std::time::Instant::now());
    while let Some(Timed { release, frame }) = rx.recv().await {
        tokio::time::sleep_until(release).await;
        if conn.shared.faults.current().half_open {
            conn.shared.stat(|s| s.dropped_half_open += 1);
            continue;
        }
        if let Err(e) = write_limited(conn, to, &frame, &mut bucket).await {
            return ConnectionEnd::Io(e.to_string());
        }
        let len = frame.len() as u64;
        conn.shared.stat(|s| {
            match dir {
                Dir::ToBroker => s.frames_to_broker += 1,
                Dir::ToClient => s.frames_to_client += 1,
            }
            if let Some(c) = s.connection(conn.id) {
                match dir {
                    Dir::ToBroker => c.bytes_to_broker += len,
                    Dir::ToClient => c.bytes_to_client += len,
                }
            }
        });
    }
    ConnectionEnd::Io("reader stopped".into())
}

/// Writes `frame`, in chunks paced by the bandwidth cap when there is one (read again per chunk,
/// so a cap set or lifted mid-frame applies at once).
async fn write_limited(
    conn: &Conn,
    to: &mut OwnedWriteHalf,
    frame: &[u8],
    bucket: &mut Bucket,
) -> io::Result<()> {
    let mut rest = frame;
    while !rest.is_empty() {
        let cap = conn.shared.faults.current().bandwidth;
        let rate = match cap {
            None => 0,
            Some(Bandwidth::PerConnection(r) | Bandwidth::Total(r)) => r,
        };
        let n = if cap.is_some() {
            chunk_size(rate).min(rest.len())
        } else {
            rest.len()
        };
        let now = std::time::Instant::now();
        let wait = match cap {
            None => std::time::Duration::ZERO,
            Some(Bandwidth::PerConnection(_)) => bucket.reserve(n, rate, now),
            Some(Bandwidth::Total(_)) => conn
                .shared
                .total_bucket
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .reserve(n, rate, now),
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        to.write_all(&rest[..n]).await?;
        rest = &rest[n..];
    }
    Ok(())
}

/// The next whole frame (size prefix included), or `None` at a clean end of stream.
async fn read_frame(from: &mut OwnedReadHalf, buf: &mut BytesMut) -> io::Result<Option<Bytes>> {
    loop {
        let size = peek_frame_size(buf, DEFAULT_MAX_FRAME_SIZE)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if let Some(size) = size {
            if buf.len() >= 4 + size {
                return Ok(Some(buf.split_to(4 + size).freeze()));
            }
            buf.reserve(4 + size - buf.len());
        }
        if from.read_buf(buf).await? == 0 {
            return if buf.is_empty() {
                Ok(None)
            } else {
                Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("stream ended inside a frame ({} bytes left)", buf.len()),
                ))
            };
        }
    }
}

impl Conn {
    /// A request: dropped when half-open, else its header remembered and the frame relayed.
    fn request(&self, frame: Bytes, config: &FaultConfig) -> Option<Bytes> {
        if config.half_open {
            self.shared.stat(|s| s.dropped_half_open += 1);
            return None;
        }
        // Request header v1/v2: api key, api version, correlation id, then the rest.
        if let Some(h) = frame.get(4..12) {
            let api_key = i16::from_be_bytes([h[0], h[1]]);
            let api_version = i16::from_be_bytes([h[2], h[3]]);
            let correlation_id = i32::from_be_bytes([h[4], h[5], h[6], h[7]]);
            self.in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remember(correlation_id, api_key, api_version);
        }
        Some(frame)
    }

    /// A response: dropped when half-open, else rewritten if it names brokers, and maybe
    /// corrupted. An error means it named brokers and could not be rewritten.
    fn response(
        &self,
        frame: Bytes,
        config: &FaultConfig,
        window: &mut Window,
        rng: &mut Rng,
    ) -> Result<Option<Bytes>, String> {
        let request = frame.get(4..8).and_then(|id| {
            let correlation_id = i32::from_be_bytes([id[0], id[1], id[2], id[3]]);
            let found = self
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .answered(correlation_id);
            found.map(|(key, version)| (correlation_id, key, version))
        });
        if config.half_open {
            self.shared.stat(|s| s.dropped_half_open += 1);
            return Ok(None);
        }
        let Some((correlation_id, api_key, api_version)) = request else {
            return Ok(Some(frame));
        };
        let mut map = self.shared.address_map();
        let frame = match rewrite_response(&frame, api_key, api_version, &mut map) {
            Ok(Some(rewritten)) => {
                self.shared.stat(|s| s.rewritten += 1);
                rewritten
            }
            Ok(None) => frame,
            Err(e) => {
                let message = format!("connection {}: {e}", self.id);
                eprintln!("fault proxy: {message}; closing the connection");
                self.shared.stat(|s| {
                    Stats::keep(&mut s.rewrite_errors, &mut s.forgotten, message.clone())
                });
                return Err(message);
            }
        };
        let Some(corruption) = config.corruption else {
            return Ok(Some(frame));
        };
        let at = (correlation_id, api_key, api_version);
        Ok(Some(self.corrupt(frame, at, corruption, window, rng)))
    }

    /// Flips a byte of `frame` if it is the one of its run of `one_in` eligible responses.
    fn corrupt(
        &self,
        frame: Bytes,
        (correlation_id, api_key, api_version): (i32, i16, i16),
        corruption: Corruption,
        window: &mut Window,
        rng: &mut Rng,
    ) -> Bytes {
        let (index, batch) = match corruption.target {
            CorruptionTarget::FetchRecords => {
                if api_key != 1 {
                    return frame;
                }
                let targets = fetch_batches(&frame, api_version);
                if targets.is_empty() || !window.next(corruption.one_in, rng) {
                    return frame;
                }
                let target = &targets[rng.below(targets.len() as u64) as usize];
                let index = target.range.start + rng.below(target.range.len() as u64) as usize;
                let topic = if target.topic.is_empty() {
                    self.shared.topic_name(target.topic_id)
                } else {
                    target.topic.clone()
                };
                let batch = CorruptedBatch {
                    topic,
                    partition: target.partition,
                    base_offset: target.base_offset,
                };
                (index, Some(batch))
            }
            CorruptionTarget::Anywhere => {
                if frame.is_empty() || !window.next(corruption.one_in, rng) {
                    return frame;
                }
                (rng.below(frame.len() as u64) as usize, None)
            }
        };
        let (bad, mask) = flip(&frame, index, rng);
        let record = CorruptedResponse {
            connection: self.id,
            api_key,
            api_version,
            correlation_id,
            byte: index,
            mask,
            batch,
        };
        eprintln!(
            "fault proxy (seed {}): corrupted {record:?}",
            self.shared.seed
        );
        self.shared
            .stat(|s| Stats::keep(&mut s.corrupted, &mut s.forgotten, record));
        bad
    }

    /// When a frame read now may be written: after its latency, and not before the frame
    /// before it.
    fn release_at(&self, latency: Option<Latency>, last: &mut Instant, rng: &mut Rng) -> Instant {
        let now = Instant::now();
        let Some(latency) = latency else {
            *last = (*last).max(now);
            return *last;
        };
        let jitter_ns = u64::try_from(latency.jitter.as_nanos()).unwrap_or(u64::MAX);
        let delay =
            latency.base + std::time::Duration::from_nanos(rng.below(jitter_ns.saturating_add(1)));
        let release = (now + delay).max(*last);
        *last = release;
        self.shared.stat(|s| {
            s.delayed += 1;
            s.added_delay += release - now;
        });
        release
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_never_answered_are_forgotten_oldest_first() {
        let mut in_flight = InFlight::default();
        for id in 0..10 * IN_FLIGHT as i32 {
            in_flight.remember(id, 0, 9);
        }
        assert_eq!(in_flight.0.len(), IN_FLIGHT);
        let newest = 10 * IN_FLIGHT as i32 - 1;
        assert_eq!(in_flight.answered(newest), Some((0, 9)));
        assert_eq!(in_flight.answered(0), None, "the oldest was forgotten");
        assert_eq!(in_flight.answered(newest), None, "answered once");
    }
}
