//! Corrupting responses: which responses (one in N of those eligible, at a seeded position in each
//! run of N) and which byte (inside a Fetch response's record batch, where the batch's CRC-32C
//! must catch it, or anywhere in the frame).
//!
//! A RecordBatch v2 starts `baseOffset int64, batchLength int32, partitionLeaderEpoch int32,
//! magic int8, crc uint32`; the CRC-32C covers everything from the attributes (byte 21) to the
//! batch's end (KIP-98). A flip at byte 17 or later (the CRC or what it covers) is a CRC mismatch
//! and nothing else; earlier bytes would break the batch's framing instead. The batch chosen is
//! the first complete one of a partition's records: the one a consumer reads first.

use std::ops::Range;

use bytes::{Bytes, BytesMut};
use mooring_wire::frame::{decode_response_header, ApiKey};
use mooring_wire::messages::{FetchResponse, Message};
use mooring_wire::primitives::Uuid;

use super::rng::Rng;

/// Bytes of a batch before its CRC field.
const CRC_OFFSET: usize = 17;
/// The smallest batch length a v2 batch can have (its header after the length field).
const MIN_BATCH_LENGTH: usize = 49;
/// The bytes of a batch its `batchLength` does not count (base offset and the length itself).
const LOG_OVERHEAD: usize = 12;

/// The first complete record batch of one partition in a Fetch response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BatchTarget {
    /// The topic's name (before Fetch v13), else empty.
    pub topic: String,
    /// The topic's id (Fetch v13+), else nil.
    pub topic_id: Uuid,
    pub partition: i32,
    pub base_offset: i64,
    /// The bytes of the frame (size prefix included) a flip may hit: the CRC and what it covers.
    pub range: Range<usize>,
}

/// The first complete batch of every partition of the Fetch response `frame` (size prefix
/// included) that has one. Empty when the frame does not decode.
pub(crate) fn fetch_batches(frame: &Bytes, version: i16) -> Vec<BatchTarget> {
    let body = frame.slice(4.min(frame.len())..);
    let Ok((_, rest)) = decode_response_header(&body, ApiKey::Fetch, version) else {
        return Vec::new();
    };
    let Ok(response) = FetchResponse::decode(&rest, version) else {
        return Vec::new();
    };
    let base = frame.as_ptr() as usize;
    let mut targets = Vec::new();
    for topic in &response.responses {
        for partition in &topic.partitions {
            let Some(records) = partition.records.as_ref() else {
                continue;
            };
            // The records share the frame's memory: find where they start in it.
            let start = (records.as_ptr() as usize).wrapping_sub(base);
            if start > frame.len() || frame.len() - start < records.len() {
                continue;
            }
            if let Some((base_offset, size)) = first_batch(records) {
                targets.push(BatchTarget {
                    topic: topic.topic.clone(),
                    topic_id: topic.topic_id,
                    partition: partition.partition_index,
                    base_offset,
                    range: start + CRC_OFFSET..start + size,
                });
            }
        }
    }
    targets
}

/// The base offset and size of the complete v2 batch at the start of `records`, if there is one.
fn first_batch(records: &[u8]) -> Option<(i64, usize)> {
    let base_offset = i64::from_be_bytes(records.get(0..8)?.try_into().ok()?);
    let length = i32::from_be_bytes(records.get(8..12)?.try_into().ok()?);
    let length = usize::try_from(length).ok()?;
    let magic = *records.get(16)?;
    let size = LOG_OVERHEAD + length;
    (magic == 2 && length >= MIN_BATCH_LENGTH && size <= records.len())
        .then_some((base_offset, size))
}

/// A copy of `frame` with byte `index` XORed with a non-zero mask; returns the mask too.
pub(crate) fn flip(frame: &Bytes, index: usize, rng: &mut Rng) -> (Bytes, u8) {
    let mask = 1 + rng.below(255) as u8;
    let mut copy = BytesMut::from(&frame[..]);
    if let Some(byte) = copy.get_mut(index) {
        *byte ^= mask;
    }
    (copy.freeze(), mask)
}

/// "One in N": in each run of `one_in` eligible responses, exactly one is hit, at a position
/// drawn when the run starts.
#[derive(Debug, Clone, Default)]
pub(crate) struct Window {
    one_in: u32,
    seen: u32,
    hit_at: u32,
}

impl Window {
    /// Counts one eligible response; whether it is the one to corrupt.
    pub(crate) fn next(&mut self, one_in: u32, rng: &mut Rng) -> bool {
        let one_in = one_in.max(1);
        if one_in != self.one_in || self.seen >= self.one_in {
            self.one_in = one_in;
            self.seen = 0;
            self.hit_at = rng.below(u64::from(one_in)) as u32;
        }
        let hit = self.seen == self.hit_at;
        self.seen += 1;
        hit
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use mooring_wire::frame::ResponseHeader;
    use mooring_wire::messages::fetch::{FetchableTopicResponse, PartitionData};
    use mooring_wire::records::{BatchItem, BatchReader, RecordBatch, RecordsErrorKind};

    use super::super::rewrite::encode_frame;
    use super::*;

    fn records(base: i64, n: i64) -> Bytes {
        let mut b = RecordBatch::builder(base);
        for i in 0..n {
            b = b.record(
                1_000 + i,
                None,
                Some(Bytes::from((base + i).to_string())),
                vec![],
            );
        }
        let mut buf = BytesMut::new();
        b.build().encode(&mut buf).unwrap();
        buf.freeze()
    }

    fn fetch_frame(version: i16, partitions: Vec<(i32, Option<Bytes>)>) -> Bytes {
        let response = FetchResponse {
            responses: vec![FetchableTopicResponse {
                topic: if version < 13 {
                    "t".into()
                } else {
                    String::new()
                },
                topic_id: if version >= 13 {
                    Uuid([9; 16])
                } else {
                    Uuid::NIL
                },
                partitions: partitions
                    .into_iter()
                    .map(|(partition_index, records)| PartitionData {
                        partition_index,
                        records,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let hv = if version >= 12 { 1 } else { 0 };
        encode_frame(&ResponseHeader::default(), hv, &response, version).unwrap()
    }

    #[test]
    fn every_flip_in_the_target_range_is_a_crc_mismatch_of_that_batch() {
        for version in [4, 12, 13, FetchResponse::MAX_VERSION] {
            let mut partial = BytesMut::from(&records(20, 3)[..]);
            partial.truncate(partial.len() - 5);
            let mut two = BytesMut::from(&records(5, 2)[..]);
            two.extend_from_slice(&records(7, 2));
            let frame = fetch_frame(
                version,
                vec![
                    (0, Some(records(0, 5))),
                    (1, None),
                    (2, Some(partial.freeze())),
                    (3, Some(two.freeze())),
                ],
            );
            let targets = fetch_batches(&frame, version);
            let found: Vec<(i32, i64)> = targets
                .iter()
                .map(|t| (t.partition, t.base_offset))
                .collect();
            assert_eq!(
                found,
                [(0, 0), (3, 5)],
                "v{version}: complete first batches only"
            );
            let mut rng = Rng::new(1);
            for target in &targets {
                for index in target.range.clone() {
                    let (bad, _) = flip(&frame, index, &mut rng);
                    let body = bad.slice(4..);
                    let (_, rest) = decode_response_header(&body, ApiKey::Fetch, version).unwrap();
                    let response = FetchResponse::decode(&rest, version).unwrap();
                    let data = response.responses[0]
                        .partitions
                        .iter()
                        .find(|p| p.partition_index == target.partition)
                        .unwrap();
                    let first = BatchReader::new(data.records.clone().unwrap())
                        .next()
                        .unwrap();
                    match first {
                        Err(e) => assert!(
                            matches!(e.kind, RecordsErrorKind::CrcMismatch { .. }),
                            "v{version} byte {index}: {e}"
                        ),
                        Ok(BatchItem::Batch(_) | BatchItem::Incomplete { .. }) => {
                            panic!("v{version} byte {index}: flip not caught")
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn exactly_one_in_each_run_of_n() {
        let mut rng = Rng::new(3);
        let mut window = Window::default();
        let hits: Vec<bool> = (0..5000).map(|_| window.next(500, &mut rng)).collect();
        for run in hits.chunks(500) {
            assert_eq!(run.iter().filter(|h| **h).count(), 1);
        }
        let mut every = Window::default();
        assert!((0..10).all(|_| every.next(1, &mut rng)));
        assert!((0..10).all(|_| every.next(0, &mut rng)));
    }

    #[test]
    fn a_flip_changes_exactly_one_byte() {
        let frame = Bytes::from_static(&[1, 2, 3, 4, 5]);
        let mut rng = Rng::new(9);
        for index in 0..frame.len() {
            let (bad, mask) = flip(&frame, index, &mut rng);
            assert_ne!(mask, 0);
            let diff: Vec<usize> = (0..5).filter(|i| bad[*i] != frame[*i]).collect();
            assert_eq!(diff, [index]);
        }
    }
}
