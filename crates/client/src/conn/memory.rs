//! [`FrameMemory`]: a byte budget for the memory that record data occupies, and the buffers it
//! reuses.
//!
//! A consumer's records are slices of the response frames they came in (or of the buffers their
//! batches were decompressed into): a frame stays alive, whole, until its last record is dropped.
//! So the bytes a consumer holds — fetched, queued for the handlers, in their hands — are the
//! bytes of the frames and decompressed buffers still alive. Frames of [`LARGE_FRAME`] bytes or
//! more on a connection given a `FrameMemory` are read into its buffers, and decompressed batches
//! are handed to it ([`FrameMemory::adopt`]); each such buffer is counted from the moment it is
//! filled until its last slice is dropped, when it goes back to a free list for the next frame.
//! The fetcher asks the broker for no more than the budget has room for ([`FrameMemory::in_use`]).
//!
//! Frame buffers are anonymous memory maps of their own; freed ones are kept for the next frames
//! while all buffers, alive and free, stay within one and a quarter times the budget, and
//! unmapped otherwise, so the process's resident memory follows the budget whatever the
//! allocator: with glibc's, buffers of a few MiB freed on one thread and allocated on another
//! (and its mmap threshold, which rises after each such free) left the heap 1.5 to 2.5 times
//! larger than what it held, varying from run to run. Reuse also saves the page faults of a
//! fresh buffer (one per 4 KiB). Decompressed batches are heap buffers (reused through the free
//! list while they fit the same bound): the heap keeps what they took at the most.

use std::cell::Cell;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use memmap2::MmapMut;
use mooring_wire::records::BufferPool;
use tokio::sync::Notify;

/// Frames from this size up are read into [`FrameMemory`] buffers; smaller ones (every answer but
/// a Fetch with records) stay in the connection's read buffer.
pub const LARGE_FRAME: usize = 64 * 1024;

/// Frame maps are made (and counted) in multiples of this, so that one serves the next frames of
/// about its size.
pub const MAP_GRAIN: usize = 64 * 1024;

/// The bytes of record data alive, against a limit; see the module docs.
pub struct FrameMemory {
    limit: usize,
    /// Capacity of the buffers handed out and not yet dropped.
    in_use: AtomicUsize,
    free: Mutex<FreeList>,
    released: Notify,
    /// The largest recent decompressed batch: a new decompression buffer gets a little more than
    /// this, so buffers are not reserved on a guess of the ratio (and kept at that size).
    typical_batch: AtomicUsize,
}

#[derive(Default)]
struct FreeList {
    maps: Vec<MmapMut>,
    /// Decompression buffers.
    vecs: Vec<Vec<u8>>,
    /// Capacity of the maps and buffers here.
    bytes: usize,
}

/// A counted buffer's memory.
enum Storage {
    Map(MmapMut),
    /// A decompressed batch ([`FrameMemory::adopt`]), or a frame when no map could be made.
    Heap(Vec<u8>),
}

impl Storage {
    /// What the buffer counts as held: a map's size, or a decompressed batch's length (its
    /// vector's spare capacity, reserved on a guess of the ratio, is mostly never touched).
    fn held(&self) -> usize {
        match self {
            Storage::Map(m) => m.len(),
            Storage::Heap(v) => v.len(),
        }
    }

    /// What the buffer takes when kept free.
    fn capacity(&self) -> usize {
        match self {
            Storage::Map(m) => m.len(),
            Storage::Heap(v) => v.capacity(),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Storage::Map(m) => m,
            Storage::Heap(v) => v,
        }
    }
}

impl fmt::Debug for FrameMemory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameMemory")
            .field("limit", &self.limit)
            .field("in_use", &self.in_use())
            .finish()
    }
}

impl FrameMemory {
    /// A budget of `limit` bytes.
    pub fn new(limit: usize) -> Arc<FrameMemory> {
        Arc::new(FrameMemory {
            limit,
            in_use: AtomicUsize::new(0),
            free: Mutex::new(FreeList::default()),
            released: Notify::new(),
            typical_batch: AtomicUsize::new(0),
        })
    }

    /// The limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes of the buffers alive (handed out, not yet dropped); may pass the limit, since a
    /// frame is never refused (the broker sends a first batch larger than asked for whole).
    pub fn in_use(&self) -> usize {
        self.in_use.load(Ordering::Acquire)
    }

    /// Resolves once some buffer was dropped after this call began waiting (or had been since the
    /// last wait ended).
    pub async fn released(&self) {
        self.released.notified().await;
    }

    /// A counted buffer of `len` bytes to read a frame into (its content is unspecified). If no
    /// memory can be mapped, the buffer comes from the heap.
    pub fn frame(self: &Arc<Self>, len: usize) -> FrameBuf {
        let storage = match self.take_map(len) {
            Some(map) => Storage::Map(map),
            None => match MmapMut::map_anon(len.div_ceil(MAP_GRAIN).max(1) * MAP_GRAIN) {
                Ok(map) => Storage::Map(map),
                Err(e) => {
                    tracing::debug!(error = %e, len, "no frame map; reading into the heap");
                    Storage::Heap(vec![0; len])
                }
            },
        };
        self.counted(storage, len)
    }

    /// Counts a filled buffer (a decompressed batch, in a buffer of [`FrameMemory::take_vec`])
    /// and returns it as [`Bytes`], whose last slice gives the buffer back.
    pub fn adopt(self: &Arc<Self>, buf: Vec<u8>) -> Bytes {
        let len = buf.len();
        // A decaying maximum: recent batches, never one long gone.
        let typical = self.typical_batch.load(Ordering::Relaxed);
        self.typical_batch
            .store(len.max(typical - typical / 16), Ordering::Relaxed);
        Bytes::from_owner(self.counted(Storage::Heap(buf), len))
    }

    /// The pool to decompress batches into ([`RawBatch::records_into`]).
    ///
    /// [`RawBatch::records_into`]: mooring_wire::records::RawBatch::records_into
    pub fn decompression(self: &Arc<Self>) -> Decompression<'_> {
        Decompression {
            memory: self,
            decompressed: Cell::new(0),
        }
    }

    /// The largest free decompression buffer (empty, with the capacity it had), or a new one.
    pub fn take_vec(&self) -> Vec<u8> {
        let Ok(mut free) = self.free.lock() else {
            return Vec::new();
        };
        let largest = (0..free.vecs.len()).max_by_key(|&i| free.vecs[i].capacity());
        match largest.map(|i| free.vecs.swap_remove(i)) {
            Some(mut buf) => {
                free.bytes -= buf.capacity();
                buf.clear();
                buf
            }
            None => {
                let typical = self.typical_batch.load(Ordering::Relaxed);
                Vec::with_capacity(typical + typical / 8)
            }
        }
    }

    fn counted(self: &Arc<Self>, storage: Storage, len: usize) -> FrameBuf {
        self.in_use.fetch_add(storage.held(), Ordering::AcqRel);
        FrameBuf {
            storage: Some(storage),
            len,
            memory: Arc::clone(self),
        }
    }

    /// The smallest free map of at least `len` bytes.
    fn take_map(&self, len: usize) -> Option<MmapMut> {
        let mut free = self.free.lock().ok()?;
        let (i, _) = free
            .maps
            .iter()
            .enumerate()
            .filter(|(_, m)| m.len() >= len)
            .min_by_key(|(_, m)| m.len())?;
        let map = free.maps.swap_remove(i);
        free.bytes -= map.len();
        Some(map)
    }

    /// A buffer's last slice was dropped: kept for reuse while the buffers alive and free stay
    /// within one and a quarter times the limit (the smallest free maps make room for a map), freed
    /// otherwise. Free buffers are not counted as held: the next frames reuse them (a
    /// compressed answer's frame is freed while its decompressed batches are held).
    fn give_back(&self, storage: Storage) {
        let held = storage.held();
        let in_use = self.in_use.fetch_sub(held, Ordering::AcqRel) - held;
        let capacity = storage.capacity();
        let keep = (self.limit + self.limit / 4).saturating_sub(in_use);
        if let Ok(mut free) = self.free.lock() {
            match storage {
                Storage::Map(map) => {
                    free.maps.sort_unstable_by_key(|m| m.len());
                    while free.bytes + capacity > keep && !free.maps.is_empty() {
                        let smallest = free.maps.remove(0);
                        free.bytes -= smallest.len();
                    }
                    if free.bytes + capacity <= keep {
                        free.bytes += capacity;
                        free.maps.push(map);
                    }
                }
                Storage::Heap(buf) => {
                    if free.bytes + capacity <= keep {
                        free.bytes += capacity;
                        free.vecs.push(buf);
                    }
                }
            }
        }
        self.released.notify_one();
    }
}

/// The [`BufferPool`] of a [`FrameMemory`] ([`FrameMemory::decompression`]): decompressed batches
/// go to reused buffers, counted while their records live.
#[derive(Debug)]
pub struct Decompression<'a> {
    memory: &'a Arc<FrameMemory>,
    decompressed: Cell<usize>,
}

impl Decompression<'_> {
    /// Bytes decompressed through this pool so far.
    pub fn decompressed(&self) -> usize {
        self.decompressed.get()
    }
}

impl BufferPool for Decompression<'_> {
    fn take(&self) -> Vec<u8> {
        self.memory.take_vec()
    }

    fn adopt(&self, buf: Vec<u8>) -> Bytes {
        self.decompressed.set(self.decompressed.get() + buf.len());
        self.memory.adopt(buf)
    }
}

/// A counted buffer: the owner of the [`Bytes`] of one frame or decompressed batch.
pub struct FrameBuf {
    /// `None` only once dropped.
    storage: Option<Storage>,
    len: usize,
    memory: Arc<FrameMemory>,
}

impl fmt::Debug for FrameBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FrameBuf").field("len", &self.len).finish()
    }
}

impl FrameBuf {
    /// The frame's bytes, to read into.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Some(Storage::Map(m)) => &mut m[..self.len],
            Some(Storage::Heap(v)) => &mut v[..self.len],
            None => &mut [],
        }
    }

    /// The frame as [`Bytes`]; its last slice gives the buffer back.
    pub fn freeze(self) -> Bytes {
        Bytes::from_owner(self)
    }
}

impl AsRef<[u8]> for FrameBuf {
    fn as_ref(&self) -> &[u8] {
        self.storage
            .as_ref()
            .map_or(&[], |s| &s.bytes()[..self.len])
    }
}

impl Drop for FrameBuf {
    fn drop(&mut self) {
        if let Some(storage) = self.storage.take() {
            self.memory.give_back(storage);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn bytes_alive_are_counted_until_the_last_slice_is_dropped() {
        let memory = FrameMemory::new(1 << 20);
        let mut frame = memory.frame(100_000);
        frame.as_mut_slice()[99_999] = 7;
        let bytes = frame.freeze();
        assert_eq!(bytes.len(), 100_000);
        let tail = bytes.slice(99_000..);
        drop(bytes);
        assert!(memory.in_use() >= 100_000, "a slice keeps the frame");
        assert_eq!(tail[999], 7);
        drop(tail);
        assert_eq!(memory.in_use(), 0);
        assert_eq!(memory.in_use(), 0);
    }

    #[test]
    fn a_freed_buffer_serves_the_next_frame() {
        let memory = FrameMemory::new(1 << 20);
        let first = memory.frame(200_000).freeze();
        let address = first.as_ptr();
        drop(first);
        let second = memory.frame(150_000).freeze();
        assert_eq!(second.as_ptr(), address, "reused, not allocated again");
        assert_eq!(second.len(), 150_000);
    }

    #[test]
    fn buffers_past_the_limit_are_freed_not_kept() {
        let memory = FrameMemory::new(300_000);
        let a = memory.frame(200_000).freeze();
        let b = memory.frame(200_000).freeze();
        assert!(memory.in_use() >= 400_000, "a frame is never refused");
        assert!(memory.in_use() > memory.limit());
        drop(a);
        drop(b);
        assert_eq!(memory.in_use(), 0);
        let free = memory.free.lock().unwrap();
        assert!(free.bytes <= 450_000, "kept {} bytes", free.bytes);
        assert_eq!(
            free.maps.len(),
            1,
            "the first map, dropped beside the second, was freed"
        );
        assert_eq!(free.bytes, free.maps.iter().map(|m| m.len()).sum::<usize>());
    }

    #[test]
    fn adopted_buffers_count_too_and_serve_again() {
        let memory = FrameMemory::new(1 << 20);
        let mut buf = memory.take_vec();
        buf.extend_from_slice(&[1u8; 5000]);
        let address = buf.as_ptr();
        let bytes = memory.adopt(buf);
        assert!(memory.in_use() >= 5000);
        assert_eq!(&bytes[..2], &[1, 1]);
        drop(bytes);
        assert_eq!(memory.in_use(), 0);
        let again = memory.take_vec();
        assert!(again.is_empty() && again.capacity() >= 5000);
        assert_eq!(again.as_ptr(), address, "reused, not allocated again");
    }

    #[tokio::test]
    async fn a_release_wakes_a_waiter() {
        let memory = FrameMemory::new(1 << 20);
        let frame = memory.frame(LARGE_FRAME).freeze();
        let waiter = {
            let memory = Arc::clone(&memory);
            tokio::spawn(async move { memory.released().await })
        };
        tokio::task::yield_now().await;
        drop(frame);
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .unwrap()
            .unwrap();
    }
}
