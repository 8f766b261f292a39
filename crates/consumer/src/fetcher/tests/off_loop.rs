//! Answers extracted off the fetch loop (`extracting.rs`) end as they end extracted on it: the
//! positions move only once the records are handed on, a broker gets no request meanwhile, and a
//! batch that fails its CRC or its decompression stops the partition at the same offset with the
//! same error.

use proptest::prelude::*;
use tokio::time::advance;

use super::*;
use mooring_wire::records::{compression, Compression};

impl Harness {
    /// Hands on every partition being extracted off the loop, as the loop does once each is
    /// done.
    async fn extracted(&mut self) {
        while !self.fetcher.extracting.is_empty() {
            let (node, done) = self.fetcher.extracted_rx.recv().await.expect("open");
            self.fetcher.extraction_done(node, done);
        }
    }
}

/// Batch bytes past the 61-byte header: the (compressed) records.
const HEADER: usize = 61;
/// Where the CRC-32C sits in a batch, and where what it covers starts.
const CRC_AT: usize = 17;
const CRC_FROM: usize = 21;

fn encoded(base: i64, n: i64, codec: Compression) -> BytesMut {
    let mut b = RecordBatch::builder(base)
        .partition_leader_epoch(0)
        .compression(codec);
    for i in 0..n {
        // Values that compress, long enough for the codecs to emit more than literals.
        let value = format!("{:0>200}", base + i);
        b = b.record(1_000 + i, None, Some(Bytes::from(value)), vec![]);
    }
    let mut buf = BytesMut::new();
    b.build().encode(&mut buf).expect("encode");
    buf
}

/// `batch` broken: with `crc`, a byte flipped after the CRC was taken, so it fails its CRC-32C;
/// else its records' bytes cut short and the CRC taken again, so it passes its CRC and fails to
/// decompress (or to decode, uncompressed).
fn damaged(mut batch: BytesMut, crc: bool) -> BytesMut {
    if crc {
        let last = batch.len() - 1;
        batch[last] ^= 0x5a;
        return batch;
    }
    let records = batch.len() - HEADER;
    batch.truncate(HEADER + records / 2);
    let length = i32::try_from(batch.len() - 12).expect("small");
    batch[8..12].copy_from_slice(&length.to_be_bytes());
    let sum = crc32c::crc32c(&batch[CRC_FROM..]);
    batch[CRC_AT..CRC_FROM].copy_from_slice(&sum.to_be_bytes());
    batch
}

fn codec(i: u8) -> Compression {
    [Compression::None, Compression::Lz4, Compression::Zstd][usize::from(i % 3)]
}

#[tokio::test(start_paused = true)]
async fn positions_move_once_handed_on_and_the_broker_waits_until_then() {
    let (a0, a1, a2) = (tp("a", 0), tp("a", 1), tp("a", 2));
    let md = metadata(&[("a", 3)]);
    let mut h = harness(&[a0.clone(), a1.clone(), a2.clone()]);
    h.fetcher.off_loop_from = 0;
    let _ = h.send(&md).expect("fetch");
    h.answer(vec![
        (
            a0.clone(),
            records(0, encoded(0, 5, Compression::Lz4).freeze()),
        ),
        (a1.clone(), records(1, corrupt_batch(0, 3))),
        (
            a2.clone(),
            records(2, encoded(0, 4, Compression::Zstd).freeze()),
        ),
    ]);
    assert_eq!(
        [&a0, &a1, &a2].map(|p| h.position(p)),
        [0, 0, 0],
        "not handed on yet"
    );
    assert!(
        h.fetcher.busy.contains(&NODE),
        "its broker waits for the extraction"
    );
    h.extracted().await;
    assert_eq!([&a0, &a1, &a2].map(|p| h.position(p)), [5, 0, 4]);
    let errors = h.fetch_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0.as_ref(), Some(&a1));
    assert!(
        errors[0].1.contains("offset 0 (fetch 1 of 3)"),
        "{errors:?}"
    );
    assert!(!h.fetcher.busy.contains(&NODE));
    let next = h.send(&md).expect("fetched again");
    assert_eq!(next.to_send[&a0].fetch_offset, 5);
}

#[tokio::test(start_paused = true)]
async fn records_of_a_partition_sought_while_they_were_extracted_are_dropped() {
    let a0 = tp("a", 0);
    let md = metadata(&[("a", 1)]);
    let mut h = harness(std::slice::from_ref(&a0));
    h.fetcher.off_loop_from = 0;
    let _ = h.send(&md).expect("fetch");
    h.answer(vec![(a0.clone(), records(0, corrupt_batch(0, 5)))]);
    h.fetcher.shared.subs().seek(&a0, 2).expect("seek");
    h.extracted().await;
    assert_eq!(h.position(&a0), 2, "the seek stands");
    assert!(
        h.fetch_errors().is_empty(),
        "a stale answer's corrupt batch counts for nothing"
    );
    let next = h.send(&md).expect("fetched again");
    assert_eq!(next.to_send[&a0].fetch_offset, 2);
}

/// What a partition went through over `fetches` answers of the same bytes: its position after
/// each, the `FetchError`s, and the fatal error's offset, if any.
async fn outcome(
    bytes: &Bytes,
    off_loop: bool,
    fetches: usize,
) -> (Vec<i64>, Vec<String>, Option<i64>) {
    let a0 = tp("a", 0);
    let md = metadata(&[("a", 1)]);
    let mut h = harness(std::slice::from_ref(&a0));
    h.fetcher.off_loop_from = if off_loop { 0 } else { usize::MAX };
    let mut positions = Vec::new();
    for _ in 0..fetches {
        if h.fetcher.shared.fatal().is_some() {
            break;
        }
        advance(Duration::from_secs(2)).await;
        let Some(sent) = h.send(&md) else { break };
        let from = sent.to_send.get(&a0).map_or(0, |p| p.fetch_offset);
        // The broker answers from the batch holding the fetch offset on.
        let start = start_of(bytes, from);
        h.answer(vec![(a0.clone(), records(0, bytes.slice(start..)))]);
        h.extracted().await;
        positions.push(h.position(&a0));
    }
    let errors = h.fetch_errors().into_iter().map(|(_, e)| e).collect();
    let fatal = match h.fetcher.shared.fatal() {
        Some(ConsumerError::CorruptRecords { offset, .. }) => Some(offset),
        _ => None,
    };
    (positions, errors, fatal)
}

/// Where, in concatenated batches, the batch whose offsets reach `offset` starts.
fn start_of(bytes: &Bytes, offset: i64) -> usize {
    let mut at = 0;
    while at + HEADER <= bytes.len() {
        let base = i64::from_be_bytes(bytes[at..at + 8].try_into().expect("8"));
        let len = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().expect("4"));
        let last_delta = i32::from_be_bytes(bytes[at + 23..at + 27].try_into().expect("4"));
        if base + i64::from(last_delta) >= offset {
            return at;
        }
        at += 12 + usize::try_from(len).expect("length");
    }
    bytes.len()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Batches of any codec, one of them possibly damaged: on or off the loop, the same
    /// positions, the same errors, the same fatal offset, and never a position past the damage.
    #[test]
    fn off_the_loop_stops_where_on_the_loop_stops(
        batches in prop::collection::vec((0u8..3, 1i64..6), 1..6),
        damage in prop::option::of((any::<prop::sample::Index>(), any::<bool>())),
    ) {
        let mut bytes = BytesMut::new();
        let mut base = 0;
        let mut damaged_at = None;
        let hit = damage.map(|(i, crc)| (i.index(batches.len()), crc));
        for (k, (c, n)) in batches.iter().enumerate() {
            let batch = encoded(base, *n, codec(*c));
            let batch = match hit {
                Some((at, crc)) if at == k => {
                    damaged_at = Some(base);
                    damaged(batch, crc)
                }
                _ => batch,
            };
            bytes.extend_from_slice(&batch);
            base += n;
        }
        let bytes = bytes.freeze();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .start_paused(true)
            .build()
            .expect("runtime");
        let fetches = CORRUPT_FETCHES as usize + 2;
        let here = runtime.block_on(outcome(&bytes, false, fetches));
        let off = runtime.block_on(outcome(&bytes, true, fetches));
        prop_assert_eq!(&here, &off);
        if let Some(at) = damaged_at {
            prop_assert!(off.0.iter().all(|p| *p <= at), "past the damage at {}: {:?}", at, off);
        }
    }
}

/// `n` records from `base` in one lz4 batch, whose values decompress to about twice their
/// compressed size (half of each value random bytes, half zeros).
fn half_random_lz4(base: i64, n: i64) -> Bytes {
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64 ^ base as u64;
    let mut b = RecordBatch::builder(base)
        .partition_leader_epoch(0)
        .compression(Compression::Lz4);
    for i in 0..n {
        let mut value = vec![0u8; 2048];
        for byte in &mut value[..1024] {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            *byte = seed as u8;
        }
        b = b.record(1_000 + i, None, Some(Bytes::from(value)), vec![]);
    }
    let mut buf = BytesMut::new();
    b.build().encode(&mut buf).expect("encode");
    buf.freeze()
}

/// While a compressed answer is extracted, its frame and its decompressed batches are held
/// together: requests ask for the room divided by both, so that an answer of that size fits the
/// budget whole and none of it is left over to be fetched again.
#[tokio::test(start_paused = true)]
async fn requests_leave_room_for_an_answer_and_its_decompressed_batches() {
    let a0 = tp("a", 0);
    let md = metadata(&[("a", 1)]);
    let mut h = harness(std::slice::from_ref(&a0));
    let wire = half_random_lz4(0, 6);
    let inflated = compression::decompress(Compression::Lz4, &wire[HEADER..], 1 << 20)
        .expect("decompresses")
        .len();
    let held_per_wire_byte = 1.0 + inflated as f64 / wire.len() as f64;
    assert!(
        (2.5..3.5).contains(&held_per_wire_byte),
        "{held_per_wire_byte}"
    );
    // Enough answers for what the fetcher learns of them to settle (below the high watermark).
    for round in 0..16 {
        let _ = h.send(&md).expect("fetch");
        h.answer(vec![(
            a0.clone(),
            records(0, half_random_lz4(round * 6, 6)),
        )]);
        h.extracted().await;
        assert_eq!(h.position(&a0), round * 6 + 6);
    }
    let memory = Arc::clone(&h.fetcher.shared.memory);
    let room = (memory.limit() - memory.in_use()).min(memory.limit() / 2) as f64;
    let asked = f64::from(h.fetcher.request_max_bytes(1).expect("room"));
    let held = asked * held_per_wire_byte;
    assert!(
        held <= room * 1.02 && held >= room * 0.9,
        "asked {asked} bytes, holding {held} of {room} while extracted"
    );
}
