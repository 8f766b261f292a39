//! The task behind a [`Connection`](super::Connection): it owns the socket, writes the request
//! frames the handles queue and hands each response frame to its waiter, until the socket fails
//! or every handle is gone. The handles and the task meet only here: the queue of [`Outgoing`]
//! frames, the [`State`] holding the error the connection died of, and the in-flight table
//! ([`super::pending`]), which only the task touches.
//!
//! The writer registers a frame's waiter before it writes the frame, in one piece, so a response
//! always finds its waiter, and a caller that gave up while its frame was queued puts nothing on
//! the wire. The reader cuts response frames from the socket, refusing one larger than
//! `receive.message.max.bytes` from its size prefix alone (before anything is allocated for it),
//! reads large ones into the frame memory, and delivers each by correlation id; a response nobody
//! waits for means the stream is out of step. Any error of either half is fatal: it becomes the
//! connection's failure and every waiter gets a clone of it.

use std::sync::{Arc, Mutex};

use bytes::{Buf, Bytes, BytesMut};
use mooring_wire::frame::{peek_correlation_id, peek_frame_size, split_frame};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::memory::{FrameMemory, LARGE_FRAME};
use super::pending::{Delivered, Pending, Waiter};
use crate::error::{Error, Result};

/// A whole request frame on its way to the task, and the waiter of its response.
pub(super) struct Outgoing {
    pub correlation_id: i32,
    pub frame: Bytes,
    pub waiter: Waiter,
}

/// What the task and the handles share: the error the connection died of.
#[derive(Debug, Default)]
pub(super) struct State {
    failure: Mutex<Option<Error>>,
    /// Wakes the task to close the connection (after a request timed out).
    kill: tokio::sync::Notify,
}

impl State {
    pub(super) fn failure(&self) -> Option<Error> {
        self.failure.lock().ok().and_then(|f| f.clone())
    }

    fn fail(&self, error: Error) {
        if let Ok(mut f) = self.failure.lock() {
            f.get_or_insert(error);
        }
    }

    /// Marks the connection failed and makes the task close it.
    pub(super) fn kill(&self, error: Error) {
        self.fail(error);
        self.kill.notify_one();
    }
}

/// The connection task: a writer and a reader running side by side until one of them fails, a
/// handle kills the connection (a request timed out) or every handle is gone; then the socket is
/// closed and every waiter left fails with the error the connection ended on.
pub(super) async fn run<S>(
    stream: S,
    mut rx: mpsc::Receiver<Outgoing>,
    state: Arc<State>,
    broker: String,
    max_frame_size: usize,
    memory: Option<Arc<FrameMemory>>,
) where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    let (mut reader, mut writer) = tokio::io::split(stream);
    let pending = Mutex::new(Pending::default());
    let broker = broker.as_str();

    let outcome = tokio::select! {
        r = write_requests(&mut writer, &mut rx, &pending, broker) => r,
        r = read_responses(&mut reader, &pending, broker, max_frame_size, memory.as_ref()) => r,
        // A request timed out: the connection dies of that, and so do the others in flight.
        () = state.kill.notified() => Err(state.failure().unwrap_or(Error::Closed)),
    };
    let error = match outcome {
        Ok(()) => Error::Closed,
        Err(e) => {
            tracing::debug!(broker, error = %e, "connection closed");
            e
        }
    };
    state.fail(error.clone());
    let guard = pending.lock();
    if let Ok(mut p) = guard {
        p.fail_all(&error);
    }
}

/// Writes the queued frames in order, each after its waiter is registered; a frame whose caller
/// gave up before it was written is dropped. `Ok` once every handle is gone.
async fn write_requests<W: AsyncWrite + Unpin>(
    writer: &mut W,
    rx: &mut mpsc::Receiver<Outgoing>,
    pending: &Mutex<Pending>,
    broker: &str,
) -> Result<()> {
    while let Some(out) = rx.recv().await {
        if out.waiter.reply.is_closed() {
            // The caller gave up before its frame was written: nothing goes on the wire.
            continue;
        }
        let registered = match pending.lock() {
            Ok(mut p) => p.insert(out.correlation_id, out.waiter),
            Err(_) => false,
        };
        if !registered {
            return Err(Error::Io {
                broker: broker.to_string(),
                source: Arc::new(std::io::Error::other(format!(
                    "correlation id {} already in flight",
                    out.correlation_id
                ))),
            });
        }
        writer
            .write_all(&out.frame)
            .await
            .map_err(|e| io_error(broker, e))?;
        writer.flush().await.map_err(|e| io_error(broker, e))?;
    }
    Ok(())
}

/// Reads response frames and delivers each to its waiter; returns only with the error that ends
/// the connection (the socket failed or ended, a frame too large or out of step).
async fn read_responses<R: AsyncRead + Unpin>(
    reader: &mut R,
    pending: &Mutex<Pending>,
    broker: &str,
    max_frame_size: usize,
    memory: Option<&Arc<FrameMemory>>,
) -> Result<()> {
    let mut buf = BytesMut::with_capacity(64 * 1024);
    loop {
        while let Some(next) = next_frame(&mut buf, max_frame_size, memory)
            .map_err(|e| invalid_data(broker, e.to_string()))?
        {
            let frame = match next {
                Next::Frame(frame) => frame,
                Next::Large(size, into) => read_large_frame(reader, &mut buf, size, &into)
                    .await
                    .map_err(|e| match e.kind() {
                        std::io::ErrorKind::UnexpectedEof => Error::Disconnected {
                            broker: broker.to_string(),
                        },
                        _ => io_error(broker, e),
                    })?,
            };
            deliver(pending, broker, frame)?;
        }
        reserve_for_frame(&mut buf, max_frame_size);
        let n = reader
            .read_buf(&mut buf)
            .await
            .map_err(|e| io_error(broker, e))?;
        if n == 0 {
            return Err(Error::Disconnected {
                broker: broker.to_string(),
            });
        }
    }
}

/// Makes room in `buf` for the frame being read, but never more than the limit allows (its size
/// prefix, when `buf` holds it, was checked by [`next_frame`]).
fn reserve_for_frame(buf: &mut BytesMut, max_frame_size: usize) {
    if let Some(prefix) = buf.first_chunk::<4>() {
        let want = 4 + i32::from_be_bytes(*prefix).max(0) as usize;
        buf.reserve(want.saturating_sub(buf.len()).min(max_frame_size + 4));
    } else {
        buf.reserve(8 * 1024);
    }
}

fn io_error(broker: &str, source: std::io::Error) -> Error {
    Error::Io {
        broker: broker.to_string(),
        source: Arc::new(source),
    }
}

fn invalid_data(broker: &str, message: String) -> Error {
    io_error(
        broker,
        std::io::Error::new(std::io::ErrorKind::InvalidData, message),
    )
}

/// What the read buffer holds next.
enum Next {
    /// A whole frame.
    Frame(Bytes),
    /// The start of a frame of this size to read into the frame memory.
    Large(usize, Arc<FrameMemory>),
}

/// The next frame in `buf`, or the announcement of a large one (with `memory`), or `None` when
/// more bytes must be read first.
fn next_frame(
    buf: &mut BytesMut,
    max_frame_size: usize,
    memory: Option<&Arc<FrameMemory>>,
) -> std::result::Result<Option<Next>, mooring_wire::frame::FrameError> {
    if let Some(memory) = memory {
        if let Some(size) = peek_frame_size(buf, max_frame_size)? {
            if size >= LARGE_FRAME {
                return Ok(Some(Next::Large(size, Arc::clone(memory))));
            }
        }
    }
    Ok(split_frame(buf, max_frame_size)?.map(Next::Frame))
}

/// Reads a frame of `size` bytes (its size prefix at the front of `buf`) into a buffer of the
/// frame memory: what `buf` already holds of it first, then the rest straight from the socket.
async fn read_large_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut BytesMut,
    size: usize,
    memory: &Arc<FrameMemory>,
) -> std::io::Result<Bytes> {
    buf.advance(4);
    let mut frame = memory.frame(size);
    let have = buf.len().min(size);
    let out = frame.as_mut_slice();
    out[..have].copy_from_slice(&buf[..have]);
    buf.advance(have);
    reader.read_exact(&mut out[have..]).await?;
    Ok(frame.freeze())
}

/// Hands a response frame to the request waiting for it.
fn deliver(pending: &Mutex<Pending>, broker: &str, frame: Bytes) -> Result<()> {
    let correlation_id =
        peek_correlation_id(&frame).map_err(|e| invalid_data(broker, e.to_string()))?;
    let delivered = match pending.lock() {
        Ok(mut p) => p.complete(correlation_id, frame),
        Err(_) => Delivered::Unknown,
    };
    match delivered {
        Delivered::Handed => Ok(()),
        Delivered::Discarded(api) => {
            tracing::debug!(
                broker,
                api,
                correlation_id,
                "response for an abandoned request discarded"
            );
            Ok(())
        }
        Delivered::Unknown => Err(invalid_data(
            broker,
            format!("response with unknown correlation id {correlation_id}"),
        )),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! How the reader cuts frames from its buffer; the whole task is exercised through
    //! [`Connection`](super::super::Connection)'s tests.

    use super::*;

    #[tokio::test]
    async fn a_large_frame_is_read_into_the_frame_memory_and_counted_while_alive() {
        let memory = FrameMemory::new(1 << 20);
        let body: Vec<u8> = (0..LARGE_FRAME + 5000).map(|i| (i % 251) as u8).collect();
        let mut wire = (body.len() as u32).to_be_bytes().to_vec();
        wire.extend_from_slice(&body);
        // The read buffer holds the size prefix and the first 1000 bytes, the rest is on the socket.
        let mut buf = BytesMut::from(&wire[..1004]);
        let (mut ours, mut peer) = tokio::io::duplex(1 << 16);
        let rest = wire[1004..].to_vec();
        let writer = tokio::spawn(async move { peer.write_all(&rest).await.unwrap() });
        let Some(Next::Large(size, m)) = next_frame(&mut buf, 1 << 20, Some(&memory)).unwrap()
        else {
            panic!("a frame of {} bytes is large", body.len());
        };
        assert_eq!(size, body.len());
        let frame = read_large_frame(&mut ours, &mut buf, size, &m)
            .await
            .unwrap();
        writer.await.unwrap();
        assert_eq!(&frame[..], &body[..]);
        assert!(buf.is_empty());
        assert!(memory.in_use() >= body.len());
        drop(frame);
        assert_eq!(memory.in_use(), 0);
    }

    #[test]
    fn small_frames_and_connections_without_memory_use_the_read_buffer() {
        let memory = FrameMemory::new(1 << 20);
        let mut wire = 10u32.to_be_bytes().to_vec();
        wire.extend_from_slice(&[9; 10]);
        let mut buf = BytesMut::from(&wire[..]);
        let Some(Next::Frame(frame)) = next_frame(&mut buf, 1 << 20, Some(&memory)).unwrap() else {
            panic!("a small frame is split off the read buffer");
        };
        assert_eq!(&frame[..], &[9; 10]);
        let mut big = ((LARGE_FRAME + 1) as u32).to_be_bytes().to_vec();
        big.resize(4 + LARGE_FRAME + 1, 1);
        let mut buf = BytesMut::from(&big[..]);
        assert!(matches!(
            next_frame(&mut buf, 1 << 20, None).unwrap(),
            Some(Next::Frame(f)) if f.len() == LARGE_FRAME + 1
        ));
        assert_eq!(memory.in_use(), 0);
    }
}
