//! The offset types of every Mooring crate: an offset with its metadata as committed
//! ([`OffsetAndMetadata`]), what a ListOffsets look-up asks for ([`OffsetSpec`]) and what it
//! found ([`OffsetAndTimestamp`]). The names are Java's.

/// An offset to commit, or a committed one (Java's `OffsetAndMetadata`): the next offset to
/// consume after a restart, the leader epoch of the record before it (KIP-320) and the commit's
/// metadata string (empty when none, as Java reads a null one).
///
/// ```
/// use mooring_client::OffsetAndMetadata;
///
/// let c = OffsetAndMetadata::new(100).with_metadata("batch-7");
/// assert_eq!(c.offset, 100);
/// assert_eq!(c.metadata, "batch-7");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OffsetAndMetadata {
    /// The next offset to consume.
    pub offset: i64,
    /// The leader epoch of the last consumed record, if known.
    pub leader_epoch: Option<i32>,
    /// The free-form metadata string stored with the commit (empty when none).
    pub metadata: String,
}

impl OffsetAndMetadata {
    /// An offset without epoch or metadata.
    pub fn new(offset: i64) -> Self {
        OffsetAndMetadata {
            offset,
            leader_epoch: None,
            metadata: String::new(),
        }
    }

    /// The same offset with a leader epoch.
    pub fn with_leader_epoch(mut self, epoch: i32) -> Self {
        self.leader_epoch = Some(epoch);
        self
    }

    /// The same offset with a metadata string.
    pub fn with_metadata(mut self, metadata: impl Into<String>) -> Self {
        self.metadata = metadata.into();
        self
    }
}

/// Which offset a ListOffsets look-up finds in a partition (Java's Admin `OffsetSpec`); the wire
/// timestamps are Kafka's.
///
/// ```
/// use mooring_client::OffsetSpec;
///
/// assert_eq!(OffsetSpec::Earliest.timestamp(), -2);
/// assert_eq!(OffsetSpec::Latest.timestamp(), -1);
/// assert_eq!(OffsetSpec::Timestamp(1_700_000_000_000).timestamp(), 1_700_000_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OffsetSpec {
    /// The log start offset (wire timestamp -2).
    Earliest,
    /// The log end offset, or the last stable offset under `read_committed` (wire timestamp -1).
    Latest,
    /// The first offset whose timestamp is at or after this many milliseconds since the epoch.
    Timestamp(i64),
}

impl OffsetSpec {
    /// The `timestamp` field of the ListOffsets request.
    pub fn timestamp(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
            OffsetSpec::Timestamp(ts) => ts,
        }
    }
}

/// The offset a ListOffsets look-up found in one partition (Java's `OffsetAndTimestamp`): the
/// offset (-1 when an [`OffsetSpec::Timestamp`] is later than every record), the timestamp of
/// the record there (-1 for `Earliest` and `Latest`), its leader epoch if the broker gave one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetAndTimestamp {
    /// The offset found.
    pub offset: i64,
    /// The timestamp of the record at that offset.
    pub timestamp: i64,
    /// The leader epoch of that record, if the broker returned one.
    pub leader_epoch: Option<i32>,
}
