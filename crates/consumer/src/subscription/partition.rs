//! The state of one assigned partition (Java's `TopicPartitionState`): position, committed offset,
//! the watermarks the last fetch reported, the two pause flags and a pending reset.

use super::{FetchPosition, OffsetAndMetadata, OffsetResetStrategy};

/// What the consumer knows about one partition assigned to it.
///
/// A partition enters with everything unknown and unpaused; the state lives exactly as long as the
/// partition stays assigned (see the pause rule in [the module docs](super)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionState {
    pub(crate) position: Option<FetchPosition>,
    pub(crate) committed: Option<OffsetAndMetadata>,
    pub(crate) high_watermark: Option<i64>,
    pub(crate) last_stable_offset: Option<i64>,
    pub(crate) log_start_offset: Option<i64>,
    pub(crate) paused: bool,
    pub(crate) paused_by_backpressure: bool,
    pub(crate) reset_pending: Option<OffsetResetStrategy>,
    /// Newly assigned by the group, the application's `assigned` listener still running: not
    /// fetched until it returns, so no record of the partition reaches a handler before it.
    pub(crate) held_for_listener: bool,
}

impl PartitionState {
    /// The next offset to fetch, once known.
    pub fn position(&self) -> Option<FetchPosition> {
        self.position
    }

    /// The last committed offset this consumer knows of (fetched or committed by it).
    pub fn committed(&self) -> Option<&OffsetAndMetadata> {
        self.committed.as_ref()
    }

    /// The high watermark from the last fetch response.
    pub fn high_watermark(&self) -> Option<i64> {
        self.high_watermark
    }

    /// The last stable offset from the last fetch response (`read_committed` reads up to it).
    pub fn last_stable_offset(&self) -> Option<i64> {
        self.last_stable_offset
    }

    /// The log start offset from the last fetch response.
    pub fn log_start_offset(&self) -> Option<i64> {
        self.log_start_offset
    }

    /// Paused by the user (`pause`), until `resume` or until the partition is no longer assigned.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Paused because the processing buffer of this partition is full; cleared by the engine.
    pub fn is_paused_by_backpressure(&self) -> bool {
        self.paused_by_backpressure
    }

    /// The reset waiting for a ListOffsets answer, if any.
    pub fn reset_pending(&self) -> Option<OffsetResetStrategy> {
        self.reset_pending
    }

    /// The fetcher may fetch this partition: not paused (by the user or by backpressure), not
    /// waiting for the application's `assigned` listener, and its position is known. Being in the
    /// assignment is the caller's half of the condition.
    pub fn is_fetchable(&self) -> bool {
        !self.paused
            && !self.paused_by_backpressure
            && !self.held_for_listener
            && self.position.is_some()
    }

    /// Neither a position nor a pending reset: waits for its committed offset or a reset.
    pub fn is_initializing(&self) -> bool {
        self.position.is_none() && self.reset_pending.is_none()
    }

    /// Records the fetcher may still read: high watermark (or last stable offset when
    /// `read_committed`) minus position, when both are known.
    pub fn lag(&self, read_committed: bool) -> Option<i64> {
        let end = if read_committed {
            self.last_stable_offset
        } else {
            self.high_watermark
        }?;
        Some((end - self.position?.offset).max(0))
    }

    pub(crate) fn seek(&mut self, position: FetchPosition) {
        self.position = Some(position);
        self.reset_pending = None;
    }

    pub(crate) fn request_reset(&mut self, strategy: OffsetResetStrategy) {
        self.position = None;
        self.reset_pending = Some(strategy);
    }
}

/// Fetch-response facts about a partition; `None` leaves the stored value as it is.
///
/// ```
/// use mooring_consumer::subscription::PartitionFetchInfo;
///
/// let info = PartitionFetchInfo { high_watermark: Some(120), ..Default::default() };
/// assert_eq!(info.last_stable_offset, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartitionFetchInfo {
    /// The partition's high watermark.
    pub high_watermark: Option<i64>,
    /// The partition's last stable offset.
    pub last_stable_offset: Option<i64>,
    /// The partition's log start offset.
    pub log_start_offset: Option<i64>,
}
