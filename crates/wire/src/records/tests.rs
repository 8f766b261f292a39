//! Round trips, corruption, truncation and hostile input for RecordBatch v2.

use bytes::{Bytes, BytesMut};
use proptest::prelude::*;

use super::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn b(s: &'static [u8]) -> Option<Bytes> {
    Some(Bytes::from_static(s))
}

fn sample(codec: Compression) -> RecordBatch {
    RecordBatch::builder(1000)
        .compression(codec)
        .partition_leader_epoch(7)
        .record(
            1_700_000_000_000,
            b(b"k1"),
            b(b"v1"),
            vec![Header::new("h", "x")],
        )
        .record(1_700_000_000_005, None, b(b"v2"), vec![])
        .record(
            1_699_999_999_990,
            b(b"k3"),
            None,
            vec![
                Header::new("a", ""),
                Header {
                    key: "n".into(),
                    value: None,
                },
            ],
        )
        .build()
}

fn encode(batch: &RecordBatch) -> Result<Bytes, EncodeError> {
    let mut buf = BytesMut::new();
    batch.encode(&mut buf)?;
    Ok(buf.freeze())
}

use crate::error::EncodeError;

fn one(bytes: Bytes) -> Result<RawBatch, Box<dyn std::error::Error>> {
    let mut items: Vec<BatchItem> = BatchReader::new(bytes).collect::<Result<_, _>>()?;
    match (items.pop(), items.is_empty()) {
        (Some(BatchItem::Batch(raw)), true) => Ok(raw),
        other => Err(format!("expected one batch, got {other:?}").into()),
    }
}

#[test]
fn builder_fills_header_like_java() {
    let batch = sample(Compression::None);
    assert_eq!(batch.base_timestamp, 1_700_000_000_000);
    assert_eq!(batch.max_timestamp, 1_700_000_000_005);
    assert_eq!(batch.last_offset_delta, 2);
    assert_eq!(batch.next_offset(), 1003);
    assert_eq!(batch.producer_id, -1);
}

#[test]
fn every_codec_round_trips() -> TestResult {
    for codec in Compression::ALL {
        let batch = sample(codec);
        let bytes = encode(&batch)?;
        let raw = one(bytes.clone())?;
        assert_eq!(raw.header().attributes.compression(), Some(codec));
        assert_eq!(raw.header().records_count, 3);
        assert_eq!(raw.header().size_in_bytes(), bytes.len());
        let back = raw.decode()?;
        assert_eq!(back, batch, "{codec}");
        assert_eq!(encode(&back)?, bytes, "{codec}: re-encode is stable");
    }
    Ok(())
}

#[test]
fn uncompressed_values_are_zero_copy() -> TestResult {
    let bytes = encode(&sample(Compression::None))?;
    let range = bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len();
    let batch = one(bytes.clone())?.decode()?;
    let value = batch.records[0].value.clone().ok_or("value")?;
    assert!(range.contains(&(value.as_ptr() as usize)));
    let header = batch.records[0].headers[0].value.clone().ok_or("header")?;
    assert!(range.contains(&(header.as_ptr() as usize)));
    Ok(())
}

#[test]
fn crc_mismatch_names_topic_partition_and_offset() -> TestResult {
    let mut bytes = encode(&sample(Compression::None))?.to_vec();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    let err = BatchReader::new(Bytes::from(bytes))
        .with_context("orders", 3)
        .next()
        .ok_or("no item")?
        .err()
        .ok_or("expected an error")?;
    assert!(
        matches!(err.kind, RecordsErrorKind::CrcMismatch { .. }),
        "{err}"
    );
    assert_eq!(err.location.base_offset, Some(1000));
    assert_eq!(err.location.partition, Some(3));
    let text = err.to_string();
    assert!(
        text.contains("orders-3") && text.contains("offset 1000"),
        "{text}"
    );
    Ok(())
}

#[test]
fn crc_check_can_be_disabled() -> TestResult {
    let mut bytes = encode(&sample(Compression::None))?.to_vec();
    bytes[17] ^= 0xff; // the CRC itself
    let opts = DecodeOptions {
        check_crcs: false,
        ..DecodeOptions::default()
    };
    let (batches, rest) = decode_all(Bytes::from(bytes), opts)?;
    assert_eq!((batches.len(), rest), (1, 0));
    Ok(())
}

#[test]
fn partial_batch_at_the_end_is_incomplete_not_an_error() -> TestResult {
    let first = encode(&sample(Compression::None))?;
    let second = encode(&sample(Compression::Gzip))?;
    for cut in [1, 11, 12, 17, 30, 61, second.len() - 1] {
        let mut buf = first.to_vec();
        buf.extend_from_slice(&second[..cut]);
        let items: Vec<BatchItem> = BatchReader::new(Bytes::from(buf)).collect::<Result<_, _>>()?;
        assert_eq!(items.len(), 2, "cut {cut}");
        assert!(matches!(items[0], BatchItem::Batch(_)));
        assert_eq!(items[1], BatchItem::Incomplete { remaining: cut });
    }
    assert_eq!(BatchReader::new(Bytes::new()).count(), 0);
    Ok(())
}

#[test]
fn legacy_message_sets_are_refused_by_magic() {
    // A magic-1 message: offset, size, crc, magic 1, attributes, timestamp, key -1, value "a".
    let mut msg = vec![0u8; 8];
    msg.extend_from_slice(&23i32.to_be_bytes());
    msg.extend_from_slice(&[0, 0, 0, 0, 1, 0]);
    msg.extend_from_slice(&[0; 8]);
    msg.extend_from_slice(&(-1i32).to_be_bytes());
    msg.extend_from_slice(&1i32.to_be_bytes());
    msg.push(b'a');
    for magic in [0u8, 1, 3] {
        msg[16] = magic;
        let item = BatchReader::new(Bytes::from(msg.clone())).next();
        let kind = item.and_then(Result::err).map(|e| e.kind);
        assert_eq!(kind, Some(RecordsErrorKind::UnsupportedMagic(magic as i8)));
    }
}

#[test]
fn decompression_bomb_is_bounded() -> TestResult {
    let big = Bytes::from(vec![0u8; 2 << 20]);
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let batch = RecordBatch::builder(0)
            .compression(codec)
            .record(0, None, Some(big.clone()), vec![])
            .build();
        let bytes = encode(&batch)?;
        assert!(bytes.len() < 200_000, "{codec}: {}", bytes.len());
        let opts = DecodeOptions {
            max_decompressed_bytes: 1 << 20,
            ..DecodeOptions::default()
        };
        let err = decode_all(bytes, opts).err().ok_or("expected an error")?;
        assert_eq!(
            err.kind,
            RecordsErrorKind::Compression(CompressionError::TooLarge {
                codec,
                limit: 1 << 20
            })
        );
    }
    Ok(())
}

#[test]
fn control_batches_expose_their_marker() -> TestResult {
    let marker = RecordBatch::end_txn_marker(42, 1_700_000_000_000, 3, 9001, 2, false, 17);
    let raw = one(encode(&marker)?)?;
    assert!(raw.header().is_control() && raw.header().is_transactional());
    assert_eq!(raw.header().producer_id, 9001);
    let control = raw.control_record()?.ok_or("no control record")?;
    assert_eq!(control.kind, ControlRecordType::Abort);
    let batch = raw.decode()?;
    let value = batch.records[0].value.as_deref().unwrap_or_default();
    assert_eq!(EndTxnMarker::parse(value)?.coordinator_epoch, 17);
    Ok(())
}

#[test]
fn wrong_record_count_and_trailing_bytes_are_typed() -> TestResult {
    let batch = sample(Compression::None);
    let good = encode(&batch)?.to_vec();
    let with_count = |count: i32| {
        let mut b = good.clone();
        b[57..61].copy_from_slice(&count.to_be_bytes());
        let crc = crc32c::crc32c(&b[21..]);
        b[17..21].copy_from_slice(&crc.to_be_bytes());
        b
    };
    let kind = |b: Vec<u8>| -> Result<RecordsErrorKind, Box<dyn std::error::Error>> {
        Ok(one(Bytes::from(b))?
            .decode()
            .err()
            .ok_or("expected an error")?
            .kind)
    };
    assert_eq!(
        kind(with_count(4))?,
        RecordsErrorKind::RecordCount {
            declared: 4,
            found: 3
        }
    );
    assert!(matches!(
        kind(with_count(2))?,
        RecordsErrorKind::TrailingBytes(_)
    ));
    assert!(matches!(
        kind(with_count(-1))?,
        RecordsErrorKind::RecordCount { declared: -1, .. }
    ));
    Ok(())
}

fn arb_bytes() -> impl Strategy<Value = Option<Bytes>> {
    proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from))
}

fn arb_record() -> impl Strategy<Value = (i64, i8, Option<Bytes>, Option<Bytes>, Vec<Header>)> {
    let header = ("[a-z]{0,8}", arb_bytes()).prop_map(|(key, value)| Header {
        key: key.into(),
        value,
    });
    (
        any::<i64>(),
        any::<i8>(),
        arb_bytes(),
        arb_bytes(),
        proptest::collection::vec(header, 0..4),
    )
}

prop_compose! {
    fn arb_batch()(
        base_offset in 0i64..i64::MAX / 2,
        gaps in proptest::collection::vec(1i64..5, 0..6),
        records in proptest::collection::vec(arb_record(), 6),
        codec in 0u8..5,
        flags in 0i16..8,
        producer in (any::<i64>(), any::<i16>(), any::<i32>()),
        epoch in any::<i32>(),
        log_append in proptest::option::of(any::<i64>()),
    ) -> RecordBatch {
        let mut builder = RecordBatch::builder(base_offset)
            .compression(Compression::from_id(codec).unwrap_or_default())
            .partition_leader_epoch(epoch)
            .idempotent(producer.0, producer.1, producer.2);
        if let Some(t) = log_append {
            builder = builder.log_append_time(t);
        }
        let mut offset = base_offset;
        for (gap, (ts, attrs, key, value, headers)) in gaps.iter().zip(records) {
            let mut r = Record::new(offset, ts, key, value);
            r.attributes = attrs;
            r.headers = headers.into();
            builder = builder.push(r);
            offset += gap;
        }
        let mut batch = builder.build();
        // Transactional, control and delete-horizon bits.
        batch.attributes = BatchAttributes(batch.attributes.0 | (flags << 4));
        batch
    }
}

proptest! {
    #[test]
    fn batches_round_trip(batches in proptest::collection::vec(arb_batch(), 1..4)) {
        let mut buf = BytesMut::new();
        for batch in &batches {
            prop_assert!(batch.encode(&mut buf).is_ok());
        }
        let bytes = buf.freeze();
        let decoded = decode_all(bytes.clone(), DecodeOptions::default());
        prop_assert_eq!(decoded.as_ref().map(|(b, rest)| (b, *rest)), Ok((&batches, 0)));
        // decode → encode gives the same bytes.
        let mut again = BytesMut::new();
        for batch in decoded.map(|(b, _)| b).unwrap_or_default() {
            prop_assert!(batch.encode(&mut again).is_ok());
        }
        prop_assert_eq!(again.freeze(), bytes);
    }

    #[test]
    fn random_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..200)) {
        for item in BatchReader::new(Bytes::from(input)) {
            if let Ok(BatchItem::Batch(raw)) = item {
                let _ = raw.decode();
                let _ = raw.control_record();
            }
        }
    }

    #[test]
    fn mutated_batches_never_panic(
        batch in arb_batch(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        check_crcs in any::<bool>(),
    ) {
        let mut buf = BytesMut::new();
        prop_assert!(batch.encode(&mut buf).is_ok());
        let mut bytes = buf.to_vec();
        for (at, v) in flips {
            let i = at.index(bytes.len());
            bytes[i] ^= v;
        }
        bytes.truncate(cut.index(bytes.len() + 1));
        let opts = DecodeOptions { check_crcs, max_decompressed_bytes: 1 << 20 };
        for item in BatchReader::new(Bytes::from(bytes)).with_options(opts) {
            if let Ok(BatchItem::Batch(raw)) = item {
                let _ = raw.decode();
                let _ = raw.control_record();
            }
        }
    }
}
