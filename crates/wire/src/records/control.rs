//! Control records (KIP-98): the single record of a control batch. Its key is
//! `version int16, type int16` (Kafka's `ControlRecordType`); for the transaction markers COMMIT
//! and ABORT its value is `version int16, coordinatorEpoch int32` (`EndTxnMarker.json`).
//!
//! A consumer never shows control records; with `isolation.level=read_committed` it uses ABORT
//! markers (with the Fetch response's aborted-transactions list) to drop aborted data.

use bytes::{BufMut, Bytes, BytesMut};

use crate::error::DecodeError;
use crate::primitives::{int16, int32};

/// The type of a control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ControlRecordType {
    /// The end of an aborted transaction (0).
    Abort,
    /// The end of a committed transaction (1).
    Commit,
    /// A KRaft leader change (2).
    LeaderChange,
    /// A KRaft snapshot header (3).
    SnapshotHeader,
    /// A KRaft snapshot footer (4).
    SnapshotFooter,
    /// A KRaft version record (5).
    KRaftVersion,
    /// A KRaft voters record (6).
    KRaftVoters,
    /// A type this crate does not know; to be skipped like any control record.
    Unknown(i16),
}

impl ControlRecordType {
    /// The type for a wire id.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => Self::Abort,
            1 => Self::Commit,
            2 => Self::LeaderChange,
            3 => Self::SnapshotHeader,
            4 => Self::SnapshotFooter,
            5 => Self::KRaftVersion,
            6 => Self::KRaftVoters,
            other => Self::Unknown(other),
        }
    }

    /// The wire id.
    pub fn id(self) -> i16 {
        match self {
            Self::Abort => 0,
            Self::Commit => 1,
            Self::LeaderChange => 2,
            Self::SnapshotHeader => 3,
            Self::SnapshotFooter => 4,
            Self::KRaftVersion => 5,
            Self::KRaftVoters => 6,
            Self::Unknown(id) => id,
        }
    }
}

/// The key of a control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ControlRecord {
    /// The key version (0 today; a higher one is read as version 0, as the Java client does).
    pub version: i16,
    /// The type.
    pub kind: ControlRecordType,
}

impl ControlRecord {
    /// Parses a control record key. Bytes after the type are ignored (a future version may add
    /// fields); a negative version is an error.
    pub fn parse(key: &[u8]) -> Result<Self, DecodeError> {
        let (rest, version) = int16(key)?;
        if version < 0 {
            return Err(DecodeError::InvalidValue {
                field: "control record version",
                detail: format!("{version}"),
            });
        }
        let (_, id) = int16(rest)?;
        Ok(ControlRecord {
            version,
            kind: ControlRecordType::from_id(id),
        })
    }

    /// The key bytes.
    pub fn to_bytes(self) -> Bytes {
        let mut b = BytesMut::with_capacity(4);
        b.put_i16(self.version);
        b.put_i16(self.kind.id());
        b.freeze()
    }
}

/// The value of a COMMIT or ABORT control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EndTxnMarker {
    /// The value version (0 today).
    pub version: i16,
    /// The epoch of the transaction coordinator that wrote the marker.
    pub coordinator_epoch: i32,
}

impl EndTxnMarker {
    /// Parses a marker value; bytes after the known fields are ignored.
    pub fn parse(value: &[u8]) -> Result<Self, DecodeError> {
        let (rest, version) = int16(value)?;
        if version < 0 {
            return Err(DecodeError::InvalidValue {
                field: "end transaction marker version",
                detail: format!("{version}"),
            });
        }
        let (_, coordinator_epoch) = int32(rest)?;
        Ok(EndTxnMarker {
            version,
            coordinator_epoch,
        })
    }

    /// The value bytes.
    pub fn to_bytes(self) -> Bytes {
        let mut b = BytesMut::with_capacity(6);
        b.put_i16(self.version);
        b.put_i32(self.coordinator_epoch);
        b.freeze()
    }
}
