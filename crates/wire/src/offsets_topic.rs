//! The offset commits a group coordinator writes to `__consumer_offsets`, as records: what a
//! monitor that follows a group's commits (Burrow does) reads.
//!
//! Schemas: Kafka's `OffsetCommitKey.json` and `OffsetCommitValue.json` (group coordinator,
//! `group-coordinator/src/main/resources/common/message/`). A record's key starts with an int16
//! naming the record type: 0 and 1 are an offset commit (1 since Kafka 0.9, 0 before), 2 a
//! classic group's metadata, higher ones the `consumer` and share groups' records; only offset
//! commits are decoded here. The key after it is group (string), topic (string), partition
//! (int32). The value starts with its own int16 version: 0–3 classic encoding (v1 adds an expire
//! timestamp, v3 the leader epoch), v4 flexible (compact strings, tagged fields). A null value is
//! a tombstone: the offset was deleted (expired, or the group or topic deleted).
//!
//! Which partition of `__consumer_offsets` holds a group is [`partition_for`]: the coordinator
//! puts a group in `abs(groupId.hashCode()) % partitions`, Java's `String.hashCode`.

use crate::error::DecodeError;
use crate::primitives::{int16, int32, int64, str, tagged_fields};

/// The internal topic offset commits go to.
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// Offset commit keys (record types 0 and 1).
const OFFSET_COMMIT_KEYS: [i16; 2] = [0, 1];
/// The highest value version this module reads.
const HIGHEST_VALUE_VERSION: i16 = 4;

/// The key of an offset commit record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetCommitKey {
    /// The group.
    pub group: String,
    /// The topic.
    pub topic: String,
    /// The partition.
    pub partition: i32,
}

/// The value of an offset commit record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetCommitValue {
    /// The committed offset (the next record to read).
    pub offset: i64,
    /// The leader epoch of the last record read (-1: none; before v3 none).
    pub leader_epoch: i32,
    /// The application's metadata.
    pub metadata: String,
    /// When the coordinator took the commit, ms since the epoch.
    pub commit_timestamp: i64,
}

/// The key of an offset commit, or `None` for a record of another type (a group's metadata, the
/// newer protocols' records). Bytes after the key's fields are ignored.
pub fn decode_key(bytes: &[u8]) -> Result<Option<OffsetCommitKey>, DecodeError> {
    let (input, kind) = int16(bytes)?;
    if !OFFSET_COMMIT_KEYS.contains(&kind) {
        return Ok(None);
    }
    let (input, group) = str(false)(input)?;
    let (input, topic) = str(false)(input)?;
    let (_, partition) = int32(input)?;
    Ok(Some(OffsetCommitKey {
        group: group.to_owned(),
        topic: topic.to_owned(),
        partition,
    }))
}

/// The value of an offset commit (versions 0–4; a higher one is refused, as the broker promises
/// no compatibility across them).
pub fn decode_value(bytes: &[u8]) -> Result<OffsetCommitValue, DecodeError> {
    let (input, version) = int16(bytes)?;
    if !(0..=HIGHEST_VALUE_VERSION).contains(&version) {
        return Err(DecodeError::UnsupportedVersion {
            api: "OffsetCommitValue",
            version,
        });
    }
    let flexible = version >= 4;
    let (input, offset) = int64(input)?;
    let (input, leader_epoch) = if version >= 3 {
        int32(input)?
    } else {
        (input, -1)
    };
    let (input, metadata) = str(flexible)(input)?;
    let (input, commit_timestamp) = int64(input)?;
    let input = if version == 1 { int64(input)?.0 } else { input };
    if flexible {
        tagged_fields(input)?;
    }
    Ok(OffsetCommitValue {
        offset,
        leader_epoch,
        metadata: metadata.to_owned(),
        commit_timestamp,
    })
}

/// The partition of `__consumer_offsets` (of `partitions`) whose leader coordinates `group`:
/// `abs(hashCode) % partitions` with Java's `String.hashCode` (UTF-16 code units) and Kafka's
/// `Utils.abs` (`i32::MIN` is 0). `None` when there are no partitions.
pub fn partition_for(group: &str, partitions: i32) -> Option<i32> {
    if partitions <= 0 {
        return None;
    }
    let hash = group.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    let abs = if hash == i32::MIN { 0 } else { hash.abs() };
    Some(abs % partitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BufMut;
    use proptest::prelude::*;

    fn key(kind: i16, group: &str, topic: &str, partition: i32) -> Vec<u8> {
        let mut b = Vec::new();
        b.put_i16(kind);
        for s in [group, topic] {
            b.put_i16(s.len() as i16);
            b.put_slice(s.as_bytes());
        }
        b.put_i32(partition);
        b
    }

    #[test]
    fn offset_commit_keys_of_both_types_and_nothing_else() {
        let expected = OffsetCommitKey {
            group: "g".into(),
            topic: "orders".into(),
            partition: 7,
        };
        assert_eq!(
            decode_key(&key(1, "g", "orders", 7)),
            Ok(Some(expected.clone()))
        );
        assert_eq!(decode_key(&key(0, "g", "orders", 7)), Ok(Some(expected)));
        assert_eq!(decode_key(&key(2, "g", "orders", 7)), Ok(None));
        assert_eq!(decode_key(&[0, 3, 0, 0]), Ok(None));
        assert!(matches!(
            decode_key(&key(1, "g", "orders", 7)[..8]),
            Err(DecodeError::LengthExceedsInput { .. })
        ));
    }

    #[test]
    fn values_of_every_version() {
        let classic = |version: i16| {
            let mut b = Vec::new();
            b.put_i16(version);
            b.put_i64(42);
            if version >= 3 {
                b.put_i32(5);
            }
            b.put_i16(2);
            b.put_slice(b"md");
            b.put_i64(1_700_000_000_123);
            if version == 1 {
                b.put_i64(1_800_000_000_000);
            }
            b
        };
        for version in 0..=3 {
            let v = decode_value(&classic(version)).expect("value");
            assert_eq!(v.offset, 42, "v{version}");
            assert_eq!(v.leader_epoch, if version >= 3 { 5 } else { -1 });
            assert_eq!(v.metadata, "md");
            assert_eq!(v.commit_timestamp, 1_700_000_000_123, "v{version}");
        }
        // v4: compact string (length + 1 as a varint), then an empty tagged-field section.
        let mut b = Vec::new();
        b.put_i16(4);
        b.put_i64(42);
        b.put_i32(5);
        b.put_u8(3);
        b.put_slice(b"md");
        b.put_i64(1_700_000_000_123);
        b.put_u8(0);
        let v = decode_value(&b).expect("v4");
        assert_eq!(
            (v.offset, v.leader_epoch, v.commit_timestamp),
            (42, 5, 1_700_000_000_123)
        );
        let mut future = classic(3);
        future[1] = 5;
        assert!(matches!(
            decode_value(&future),
            Err(DecodeError::UnsupportedVersion { version: 5, .. })
        ));
    }

    #[test]
    fn the_partition_is_the_coordinators() {
        // Java's hashCode of each (jshell): 772757305, -1910022912, i32::MIN, 15587.
        assert_eq!(partition_for("orders-app", 50), Some(772_757_305 % 50));
        assert_eq!(partition_for("zzzzzzzz", 50), Some(1_910_022_912 % 50));
        assert_eq!(partition_for("polygenelubricants", 50), Some(0));
        assert_eq!(partition_for("é€", 50), Some(15_587 % 50));
        assert_eq!(partition_for("", 50), Some(0));
        assert_eq!(partition_for("g", 0), None);
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_key(&bytes);
            let _ = decode_value(&bytes);
        }
    }
}
