//! Record batches written by the Java client (kafka-clients 4.4.0, see
//! `golden/java/GenRecords.java` and each file's comment header), decoded field by field and,
//! where the bytes are deterministic, re-encoded byte for byte.

use bytes::{Bytes, BytesMut};
use mooring_wire::records::{
    decode_all, BatchItem, BatchReader, Compression, ControlRecordType, DecodeOptions,
    EndTxnMarker, Header, RawBatch, Record, RecordBatch, RecordsErrorKind, TimestampType,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const T0: i64 = 1_700_000_000_000;

mod common;
use common::hex;

fn batches(bytes: &Bytes) -> Result<Vec<RawBatch>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for item in BatchReader::new(bytes.clone()).with_context("golden", 0) {
        match item? {
            BatchItem::Batch(raw) => out.push(raw),
            BatchItem::Incomplete { remaining } => {
                return Err(format!("{remaining} bytes left").into())
            }
        }
    }
    Ok(out)
}

fn encode(batch: &RecordBatch) -> Result<Bytes, Box<dyn std::error::Error>> {
    let mut buf = BytesMut::new();
    batch.encode(&mut buf)?;
    Ok(buf.freeze())
}

fn s(v: &'static str) -> Option<Bytes> {
    Some(Bytes::from_static(v.as_bytes()))
}

fn big_value() -> Bytes {
    (0..40_000)
        .map(|i| b'0' + (i % 10) as u8)
        .collect::<Vec<u8>>()
        .into()
}

/// The records every `records_<codec>.hex` holds (the compressed ones add a fifth).
fn sample_records(with_big: bool) -> Vec<Record> {
    let mut v = vec![
        Record::new(100, T0, s("key-0"), s("value-0"))
            .with_header(Header::new("h1", "v1"))
            .with_header(Header {
                key: "h2".into(),
                value: None,
            }),
        Record::new(101, T0 + 5, None, s("value-1")),
        Record::new(102, T0 - 10, s("key-2"), None).with_header(Header::new("h1", "")),
        Record::new(103, T0 + 1, s("key-3"), s("")),
    ];
    if with_big {
        v.push(Record::new(104, T0 + 2, s("big"), Some(big_value())));
    }
    v
}

/// What our builder makes of the same input the Java generator used.
fn sample_batch(codec: Compression) -> RecordBatch {
    let mut b = RecordBatch::builder(100)
        .compression(codec)
        .partition_leader_epoch(5);
    for r in sample_records(codec != Compression::None) {
        b = b.push(r);
    }
    b.build()
}

fn golden(name: &str) -> Result<Bytes, Box<dyn std::error::Error>> {
    let text = match name {
        "none" => include_str!("golden/records_none.hex"),
        "gzip" => include_str!("golden/records_gzip.hex"),
        "snappy" => include_str!("golden/records_snappy.hex"),
        "lz4" => include_str!("golden/records_lz4.hex"),
        "zstd" => include_str!("golden/records_zstd.hex"),
        other => return Err(format!("no golden file for {other}").into()),
    };
    hex(text)
}

#[test]
fn java_batches_decode_with_every_codec() -> TestResult {
    for codec in Compression::ALL {
        let bytes = golden(codec.name())?;
        let raws = batches(&bytes)?;
        assert_eq!(raws.len(), 1, "{codec}");
        let h = *raws[0].header();
        let n = if codec == Compression::None { 4 } else { 5 };
        assert_eq!(h.base_offset, 100);
        assert_eq!(h.size_in_bytes(), bytes.len());
        assert_eq!(h.partition_leader_epoch, 5);
        assert_eq!(h.magic, 2);
        assert_eq!(h.attributes.compression(), Some(codec));
        assert_eq!(h.attributes.timestamp_type(), TimestampType::CreateTime);
        assert!(!h.is_transactional() && !h.is_control() && !h.attributes.has_delete_horizon());
        assert_eq!(h.last_offset_delta, n - 1);
        assert_eq!(h.next_offset(), 100 + i64::from(n));
        assert_eq!(h.base_timestamp, T0);
        assert_eq!(h.max_timestamp, T0 + 5);
        assert_eq!(
            (h.producer_id, h.producer_epoch, h.base_sequence),
            (-1, -1, -1)
        );
        assert_eq!(h.records_count, n);
        let batch = raws[0].decode()?;
        assert_eq!(
            batch.records,
            sample_records(codec != Compression::None),
            "{codec}"
        );
        assert_eq!(
            batch,
            sample_batch(codec),
            "{codec}: our builder fills the header as Java does"
        );
    }
    Ok(())
}

#[test]
fn uncompressed_java_batch_re_encodes_byte_for_byte() -> TestResult {
    let bytes = golden("none")?;
    let decoded = batches(&bytes)?[0].decode()?;
    assert_eq!(encode(&decoded)?, bytes);
    assert_eq!(
        encode(&sample_batch(Compression::None))?,
        bytes,
        "built from scratch"
    );
    Ok(())
}

/// Compressed payloads: our encoder's output always decodes to the same batch; whether the
/// compressed bytes equal Java's is a property of the codec libraries, recorded here.
#[test]
fn compressed_java_batches_re_encode_to_the_same_records() -> TestResult {
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let bytes = golden(codec.name())?;
        let decoded = batches(&bytes)?[0].decode()?;
        let ours = encode(&decoded)?;
        let again = batches(&ours)?[0].decode()?;
        assert_eq!(again, decoded, "{codec}");
        // What we found: snappy (snap ports the C++ algorithm snappy-java wraps) and zstd (the
        // same libzstd 1.5.7 as zstd-jni, streaming, flushed before the end as Java does) give
        // Java's bytes exactly. gzip (miniz_oxide vs zlib) and lz4 (lz4_flex vs lz4-java) pick
        // different matches: same headers, different compressed blocks, both valid.
        if matches!(codec, Compression::Snappy | Compression::Zstd) {
            assert_eq!(ours, bytes, "{codec}: byte-identical to Java");
        } else {
            // Everything but batchLength, the CRC and the compressed blocks agrees, down to the
            // codec's own header (gzip's 10 bytes, lz4's magic, FLG, BD and header checksum).
            assert_eq!(ours[..8], bytes[..8], "{codec}: base offset");
            assert_eq!(ours[12..17], bytes[12..17], "{codec}: epoch and magic");
            let end = 61 + if codec == Compression::Gzip { 10 } else { 7 };
            assert_eq!(
                ours[21..end],
                bytes[21..end],
                "{codec}: attributes..records count, codec header"
            );
        }
    }
    Ok(())
}

#[test]
fn java_transactional_batch_and_markers() -> TestResult {
    let bytes = hex(include_str!("golden/records_transactional.hex"))?;
    let raws = batches(&bytes)?;
    assert_eq!(raws.len(), 3);

    let data = raws[0].header();
    assert!(data.is_transactional() && !data.is_control());
    assert_eq!(
        (
            data.base_offset,
            data.last_offset_delta,
            data.partition_leader_epoch
        ),
        (200, 1, 6)
    );
    assert_eq!(
        (data.producer_id, data.producer_epoch, data.base_sequence),
        (4242, 3, 10)
    );
    assert_eq!(raws[0].control_record()?, None);
    let expected = RecordBatch::builder(200)
        .partition_leader_epoch(6)
        .transactional(4242, 3, 10)
        .record(T0, s("tk0"), s("tv0"), vec![])
        .record(T0 + 1, s("tk1"), s("tv1"), vec![])
        .build();
    assert_eq!(raws[0].decode()?, expected);

    let markers = [
        (&raws[1], 202, 4242, 3, ControlRecordType::Commit, 11),
        (&raws[2], 203, 777, 0, ControlRecordType::Abort, 12),
    ];
    for (raw, offset, pid, epoch, kind, coordinator_epoch) in markers {
        let h = raw.header();
        assert!(h.is_control() && h.is_transactional());
        assert_eq!(
            (h.base_offset, h.producer_id, h.producer_epoch),
            (offset, pid, epoch)
        );
        assert_eq!(
            (h.base_sequence, h.records_count, h.last_offset_delta),
            (-1, 1, 0)
        );
        let control = raw.control_record()?.ok_or("no control record")?;
        assert_eq!((control.version, control.kind), (0, kind));
        let batch = raw.decode()?;
        let value = batch.records[0].value.clone().ok_or("no marker value")?;
        let marker = EndTxnMarker::parse(&value)?;
        assert_eq!(
            (marker.version, marker.coordinator_epoch),
            (0, coordinator_epoch)
        );
        let ours = RecordBatch::end_txn_marker(
            offset,
            T0 + offset - 200,
            6,
            pid,
            epoch,
            kind == ControlRecordType::Commit,
            coordinator_epoch,
        );
        assert_eq!(batch, ours, "our marker builder matches Java's");
    }

    // The whole buffer re-encodes byte for byte.
    let mut again = BytesMut::new();
    for raw in &raws {
        raw.decode()?.encode(&mut again)?;
    }
    assert_eq!(again.freeze(), bytes);
    Ok(())
}

#[test]
fn java_log_append_time_batch() -> TestResult {
    let bytes = hex(include_str!("golden/records_log_append_time.hex"))?;
    let batch = batches(&bytes)?[0].decode()?;
    assert_eq!(
        batch.attributes.timestamp_type(),
        TimestampType::LogAppendTime
    );
    assert_eq!((batch.base_timestamp, batch.max_timestamp), (T0, T0 + 1000));
    assert_eq!(batch.records[1].timestamp, T0 + 7, "stored create time");
    assert_eq!(
        batch.record_timestamp(&batch.records[1]),
        T0 + 1000,
        "shown time"
    );
    let ours = RecordBatch::builder(0)
        .partition_leader_epoch(0)
        .log_append_time(T0 + 1000)
        .record(T0, s("a"), s("b"), vec![])
        .record(T0 + 7, None, s("c"), vec![])
        .build();
    assert_eq!(encode(&ours)?, bytes);
    Ok(())
}

#[test]
fn java_legacy_magic1_is_refused_by_name() -> TestResult {
    let bytes = hex(include_str!("golden/records_legacy_magic1.hex"))?;
    let err = BatchReader::new(bytes)
        .with_context("legacy", 2)
        .next()
        .ok_or("no item")?
        .err()
        .ok_or("expected an error")?;
    assert_eq!(err.kind, RecordsErrorKind::UnsupportedMagic(1));
    assert_eq!(err.location.base_offset, Some(50));
    assert!(err.to_string().contains("legacy-2"), "{err}");
    Ok(())
}

#[test]
fn java_batches_cut_by_max_bytes_end_incomplete() -> TestResult {
    let mut buf = golden("none")?.to_vec();
    let second = golden("zstd")?;
    buf.extend_from_slice(&second[..second.len() / 2]);
    let (decoded, remaining) = decode_all(Bytes::from(buf), DecodeOptions::default())?;
    assert_eq!((decoded.len(), remaining), (1, second.len() / 2));
    Ok(())
}

#[test]
fn java_batches_with_a_flipped_bit_fail_the_crc() -> TestResult {
    for codec in Compression::ALL {
        let mut bytes = golden(codec.name())?.to_vec();
        let at = bytes.len() - 3;
        bytes[at] ^= 0x10;
        let err = batches(&Bytes::from(bytes))
            .err()
            .ok_or("expected an error")?;
        assert!(
            err.to_string().contains("CRC-32C mismatch"),
            "{codec}: {err}"
        );
    }
    Ok(())
}
