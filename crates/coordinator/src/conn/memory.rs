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
//! Frame buffers are anonymous memory maps of their own, reused while the budget has room for them
//! and unmapped otherwise, so the process's resident memory follows the budget whatever the
//! allocator: with glibc's, buffers of a few MiB freed on one thread and allocated on another
//! (and its mmap threshold, which rises after each such free) left the heap 1.5 to 2.5 times
//! larger than what it held, varying from run to run. Reuse also saves the page faults of a
//! fresh buffer (one per 4 KiB).

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use memmap2::MmapMut;
use tokio::sync::Notify;

/// Frames from this size up are read into [`FrameMemory`] buffers; smaller ones (every answer but
/// a Fetch with records) stay in the connection's read buffer.
pub const LARGE_FRAME: usize = 64 * 1024;

/// Frame maps are made in multiples of this, so that one serves the next frames of about its size.
const MAP_GRAIN: usize = 64 * 1024;

/// The bytes of record data alive, against a limit; see the module docs.
pub struct FrameMemory {
    limit: usize,
    /// Capacity of the buffers handed out and not yet dropped.
    in_use: AtomicUsize,
    free: Mutex<FreeList>,
    released: Notify,
}

#[derive(Default)]
struct FreeList {
    maps: Vec<MmapMut>,
    bytes: usize,
}

/// A counted buffer's memory.
enum Storage {
    Map(MmapMut),
    /// A buffer made elsewhere ([`FrameMemory::adopt`]); freed, not kept, when dropped.
    Heap(Vec<u8>),
}

impl Storage {
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

    /// Bytes left below the limit.
    pub fn available(&self) -> usize {
        self.limit.saturating_sub(self.in_use())
    }

    /// Resolves once some buffer was dropped after this call began waiting (or had been since the
    /// last wait ended).
    pub async fn released(&self) {
        self.released.notified().await;
    }

    /// A counted buffer of `len` bytes to read a frame into (its content is unspecified). If no
    /// memory can be mapped, the buffer comes from the heap.
    pub fn frame(self: &Arc<Self>, len: usize) -> FrameBuf {
        let storage = match self.take(len) {
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

    /// Counts a buffer made elsewhere (a decompressed batch) and returns it as [`Bytes`], whose
    /// last slice gives the count back.
    pub fn adopt(self: &Arc<Self>, buf: Vec<u8>) -> Bytes {
        let len = buf.len();
        Bytes::from_owner(self.counted(Storage::Heap(buf), len))
    }

    fn counted(self: &Arc<Self>, storage: Storage, len: usize) -> FrameBuf {
        self.in_use.fetch_add(storage.capacity(), Ordering::AcqRel);
        FrameBuf {
            storage: Some(storage),
            len,
            memory: Arc::clone(self),
        }
    }

    /// The smallest free map of at least `len` bytes.
    fn take(&self, len: usize) -> Option<MmapMut> {
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

    /// A buffer's last slice was dropped: a map is kept for reuse while the buffers alive and
    /// free stay within the limit (the smallest free ones make room for it), unmapped otherwise.
    fn give_back(&self, storage: Storage) {
        let capacity = storage.capacity();
        let in_use = self.in_use.fetch_sub(capacity, Ordering::AcqRel) - capacity;
        if let (Storage::Map(map), Ok(mut free)) = (storage, self.free.lock()) {
            free.maps.sort_unstable_by_key(|m| m.len());
            while in_use + free.bytes + capacity > self.limit && !free.maps.is_empty() {
                let smallest = free.maps.remove(0);
                free.bytes -= smallest.len();
            }
            if in_use + free.bytes + capacity <= self.limit {
                free.bytes += capacity;
                free.maps.push(map);
            }
        }
        self.released.notify_one();
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
        assert_eq!(memory.available(), 1 << 20);
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
        assert_eq!(memory.available(), 0);
        drop(a);
        drop(b);
        assert_eq!(memory.in_use(), 0);
        let free = memory.free.lock().unwrap();
        assert!(free.bytes <= 300_000, "kept {} bytes", free.bytes);
        assert_eq!(free.bytes, free.maps.iter().map(|m| m.len()).sum::<usize>());
    }

    #[test]
    fn adopted_buffers_count_too() {
        let memory = FrameMemory::new(1 << 20);
        let bytes = memory.adopt(vec![1u8; 5000]);
        assert!(memory.in_use() >= 5000);
        assert_eq!(&bytes[..2], &[1, 1]);
        drop(bytes);
        assert_eq!(memory.in_use(), 0);
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
