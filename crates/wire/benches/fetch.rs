//! Criterion benchmarks of the Fetch path: decoding a Fetch response and every record in it, and
//! encoding the same, compared with the `kafka-protocol` crate on the same bytes.
//!
//! The workload: one FetchResponse v16 (flexible, topic ids) for one topic and 4 partitions,
//! holding 10,000 records in RecordBatch v2 batches of 100 records each (the shape a Java producer
//! with `batch.size` ≈ 128 KiB and some linger produces). Each record has a 16-byte key, a 1 KiB
//! value of JSON-like text (compressible about like real payloads) and one 16-byte
//! `traceparent`-style header. The batches are uncompressed, lz4 or zstd.
//!
//! Throughput is counted in bytes of the *uncompressed* response (about 10.6 MB) for every codec,
//! so MB/s means "record data delivered per second" and codecs can be compared directly.
//!
//! `cargo bench -p mooring-wire --bench fetch` runs the criterion groups, then times each decoder
//! again with alternating runs and prints a table of MB/s and the mooring/kafka-protocol ratio.

use std::hint::black_box;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use criterion::{Criterion, Throughput};
use mooring_wire::messages::fetch::{FetchableTopicResponse, PartitionData};
use mooring_wire::messages::{FetchResponse, Message};
use mooring_wire::primitives::Uuid;
use mooring_wire::records::{
    BatchItem, BatchReader, Compression, Header, HeaderKey, Record, RecordBatch,
};

const VERSION: i16 = 16;
const RECORDS: usize = 10_000;
const PARTITIONS: usize = 4;
const PER_BATCH: usize = 100;
const VALUE_LEN: usize = 1024;
const TOPIC_ID: Uuid = Uuid([
    0x4f, 0x1c, 0x2a, 0x7d, 0x90, 0x11, 0x4e, 0x5b, 0x8a, 0x6c, 0x3d, 0x2e, 0x1f, 0x00, 0x42, 0x99,
]);
const BASE_TIMESTAMP: i64 = 1_764_460_800_000;
/// Timed calls per decoder and codec for the table printed after the criterion groups.
const ROUNDS: usize = 40;
const CODECS: [Compression; 3] = [Compression::None, Compression::Lz4, Compression::Zstd];

/// A small deterministic generator (xorshift64*), so every run benchmarks the same bytes.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// A 1 KiB JSON-like value: repeated field names and a vocabulary of words, with random numbers,
/// which lz4 and zstd compress by roughly 2-4x, like typical event payloads.
fn value(rng: &mut Rng) -> Bytes {
    const WORDS: [&str; 16] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima", "mike", "november", "oscar", "papa",
    ];
    let mut s = String::with_capacity(VALUE_LEN + 64);
    s.push('{');
    let mut i = 0;
    while s.len() < VALUE_LEN - 40 {
        let r = rng.next();
        let word = WORDS[(r % 16) as usize];
        s.push_str(&format!(
            "\"field_{i}\":{{\"name\":\"{word}\",\"n\":{},\"id\":\"{:x}\"}},",
            (r >> 8) % 100_000,
            rng.next() >> 16
        ));
        i += 1;
    }
    while s.len() < VALUE_LEN - 1 {
        s.push(' ');
    }
    s.push('}');
    let mut b = s.into_bytes();
    b.truncate(VALUE_LEN);
    Bytes::from(b)
}

/// The records of each partition, as an application would hand them to a producer.
fn records() -> Vec<Vec<Record>> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    (0..PARTITIONS)
        .map(|p| {
            (0..RECORDS / PARTITIONS)
                .map(|i| {
                    let offset = i as i64;
                    let key = Bytes::from(format!("user-{:011}", p * 1_000_000 + i));
                    let trace = Bytes::from(format!("{:016x}", rng.next()));
                    Record::new(
                        offset,
                        BASE_TIMESTAMP + offset,
                        Some(key),
                        Some(value(&mut rng)),
                    )
                    .with_header(Header {
                        key: HeaderKey::from_static("traceparent"),
                        value: Some(trace),
                    })
                })
                .collect()
        })
        .collect()
}

/// Encodes the records into batches of [`PER_BATCH`] and wraps them in a FetchResponse: what a
/// broker sends.
fn encode_response(partitions: &[Vec<Record>], codec: Compression) -> Bytes {
    let mut parts = Vec::with_capacity(partitions.len());
    for (p, records) in partitions.iter().enumerate() {
        let mut buf = BytesMut::with_capacity(records.len() * (VALUE_LEN + 64));
        for chunk in records.chunks(PER_BATCH) {
            let mut builder = RecordBatch::builder(chunk[0].offset)
                .compression(codec)
                .partition_leader_epoch(7);
            for r in chunk {
                builder = builder.push(r.clone());
            }
            builder.build().encode(&mut buf).expect("encode batch");
        }
        let end = records.len() as i64;
        parts.push(PartitionData {
            partition_index: p as i32,
            error_code: 0,
            high_watermark: end,
            last_stable_offset: end,
            log_start_offset: 0,
            aborted_transactions: Some(Vec::new()),
            preferred_read_replica: -1,
            records: Some(buf.freeze()),
            ..PartitionData::default()
        });
    }
    let response = FetchResponse {
        throttle_time_ms: 0,
        error_code: 0,
        session_id: 12345,
        responses: vec![FetchableTopicResponse {
            topic_id: TOPIC_ID,
            partitions: parts,
            ..FetchableTopicResponse::default()
        }],
        ..FetchResponse::default()
    };
    let mut out = BytesMut::with_capacity(RECORDS * (VALUE_LEN + 64));
    response.encode(&mut out, VERSION).expect("encode response");
    out.freeze()
}

/// What a consumer does with a fetch: decode the response, then every batch and record, touching
/// each key, value and header. Returns the bytes touched (so nothing is optimised away) and the
/// record count.
fn decode_mooring(wire: &Bytes) -> (usize, usize) {
    let response = FetchResponse::decode(wire, VERSION).expect("decode response");
    let (mut touched, mut count) = (0, 0);
    for topic in &response.responses {
        for partition in &topic.partitions {
            let Some(records) = &partition.records else {
                continue;
            };
            for item in BatchReader::new(records.clone()) {
                let BatchItem::Batch(raw) = item.expect("batch") else {
                    continue;
                };
                for r in raw.records().expect("records") {
                    touched += r.key.as_ref().map_or(0, Bytes::len);
                    touched += r.value.as_ref().map_or(0, Bytes::len);
                    for h in &r.headers {
                        touched += h.key.len() + h.value.as_ref().map_or(0, Bytes::len);
                    }
                    touched += (r.offset & 1) as usize;
                    count += 1;
                }
            }
        }
    }
    (black_box(touched), count)
}

/// The same with kafka-protocol: its FetchResponse decoder, then `RecordBatchDecoder` over each
/// partition's records (which also checks CRCs and decompresses).
fn decode_kafka_protocol(wire: &Bytes) -> (usize, usize) {
    use kafka_protocol::messages::FetchResponse as KpFetchResponse;
    use kafka_protocol::protocol::Decodable;
    use kafka_protocol::records::RecordBatchDecoder;

    let mut buf = wire.clone();
    let response = KpFetchResponse::decode(&mut buf, VERSION).expect("kafka-protocol decode");
    let (mut touched, mut count) = (0, 0);
    for topic in &response.responses {
        for partition in &topic.partitions {
            let Some(records) = &partition.records else {
                continue;
            };
            let mut records = records.clone();
            for set in RecordBatchDecoder::decode_all(&mut records).expect("kafka-protocol records")
            {
                for r in set.records {
                    touched += r.key.as_ref().map_or(0, Bytes::len);
                    touched += r.value.as_ref().map_or(0, Bytes::len);
                    for (k, v) in &r.headers {
                        touched += k.len() + v.as_ref().map_or(0, Bytes::len);
                    }
                    touched += (r.offset & 1) as usize;
                    count += 1;
                }
            }
        }
    }
    (black_box(touched), count)
}

struct Workload {
    codec: Compression,
    wire: Bytes,
    /// The size of the same response uncompressed: the throughput unit for every codec.
    logical: u64,
}

fn workloads(partitions: &[Vec<Record>]) -> Vec<Workload> {
    let logical = encode_response(partitions, Compression::None).len() as u64;
    CODECS
        .iter()
        .map(|&codec| {
            let wire = encode_response(partitions, codec);
            let a = decode_mooring(&wire);
            let b = decode_kafka_protocol(&wire);
            assert_eq!(a, b, "both decoders must see the same records ({codec})");
            assert_eq!(a.1, RECORDS);
            Workload {
                codec,
                wire,
                logical,
            }
        })
        .collect()
}

fn benches(c: &mut Criterion, partitions: &[Vec<Record>], loads: &[Workload]) {
    let mut group = c.benchmark_group("decode");
    for w in loads {
        group.throughput(Throughput::Bytes(w.logical));
        group.bench_function(format!("mooring/{}", w.codec), |b| {
            b.iter(|| decode_mooring(black_box(&w.wire)))
        });
        group.bench_function(format!("kafka-protocol/{}", w.codec), |b| {
            b.iter(|| decode_kafka_protocol(black_box(&w.wire)))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("encode");
    for w in loads {
        group.throughput(Throughput::Bytes(w.logical));
        group.bench_function(format!("mooring/{}", w.codec), |b| {
            b.iter(|| encode_response(black_box(partitions), w.codec))
        });
    }
    group.finish();
}

/// Median seconds per call of each decoder. The decoders take turns in blocks of `block` calls,
/// so that a burst of load from elsewhere hits both alike, while each still runs warm, as in a
/// consumer that decodes fetch after fetch (right after the other decoder, each would also pay
/// for the allocator state the other left).
fn head_to_head(w: &Workload, rounds: usize, block: usize) -> (f64, f64) {
    let (mut a, mut b) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    while a.len() < rounds {
        for _ in 0..block {
            let t = Instant::now();
            black_box(decode_mooring(black_box(&w.wire)));
            a.push(t.elapsed().as_secs_f64());
        }
        for _ in 0..block {
            let t = Instant::now();
            black_box(decode_kafka_protocol(black_box(&w.wire)));
            b.push(t.elapsed().as_secs_f64());
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    (median(&mut a), median(&mut b))
}

/// `FETCH_BENCH_PROFILE=mooring/none` (or `kafka-protocol/zstd`, ...): run only that decoder a few
/// times and exit, for a profiler (`valgrind --tool=callgrind`) that would take hours over the
/// criterion groups.
fn profile(spec: &str, loads: &[Workload]) {
    let (who, codec) = spec.split_once('/').unwrap_or((spec, "none"));
    let w = loads
        .iter()
        .find(|w| w.codec.name() == codec)
        .expect("codec none, lz4 or zstd");
    let rounds = std::env::var("FETCH_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let t = Instant::now();
    profile_rounds(who, &w.wire, rounds);
    let secs = t.elapsed().as_secs_f64() / rounds as f64;
    println!(
        "{spec}: {:.3} ms per round, {:.0} MB/s",
        secs * 1e3,
        w.logical as f64 / secs / 1e6
    );
}

/// Kept out of line so that a profiler can collect only this: `--toggle-collect='*profile_rounds*'`.
#[inline(never)]
fn profile_rounds(who: &str, wire: &Bytes, rounds: usize) {
    for _ in 0..rounds {
        match who {
            "mooring" => black_box(decode_mooring(wire)),
            "kafka-protocol" => black_box(decode_kafka_protocol(wire)),
            "crc32c" => (black_box(crc32c::crc32c(wire)) as usize, 0),
            _ => panic!("mooring, kafka-protocol or crc32c"),
        };
    }
}

fn main() {
    let partitions = records();
    let loads = workloads(&partitions);
    if let Ok(spec) = std::env::var("FETCH_BENCH_PROFILE") {
        return profile(&spec, &loads);
    }
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
        .configure_from_args();
    benches(&mut c, &partitions, &loads);
    c.final_summary();

    // `cargo test --benches` runs each benchmark once as a smoke test; the table is for real runs.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    // FETCH_BENCH_BLOCK=1 makes the decoders alternate call by call.
    let block = std::env::var("FETCH_BENCH_BLOCK")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(5);
    println!();
    println!(
        "FetchResponse v{VERSION}: {RECORDS} records x {VALUE_LEN} B, {PARTITIONS} partitions, \
         {PER_BATCH} records/batch; MB/s of uncompressed response ({} bytes), median of \
         {ROUNDS} calls each, in turns of {block}",
        loads[0].logical
    );
    println!(
        "{:<6} {:>10} {:>14} {:>22} {:>8}",
        "codec", "wire bytes", "mooring MB/s", "kafka-protocol MB/s", "ratio"
    );
    for w in &loads {
        let (ours, theirs) = head_to_head(w, ROUNDS, block);
        let mbps = |secs: f64| w.logical as f64 / secs / 1e6;
        println!(
            "{:<6} {:>10} {:>14.0} {:>22.0} {:>7.2}x",
            w.codec.name(),
            w.wire.len(),
            mbps(ours),
            mbps(theirs),
            theirs / ours
        );
    }
    // Both decoders check every batch's CRC-32C: the floor under the uncompressed decode.
    let none = &loads[0];
    let t = Instant::now();
    for _ in 0..31 {
        black_box(crc32c::crc32c(black_box(&none.wire)));
    }
    let secs = t.elapsed().as_secs_f64() / 31.0;
    println!(
        "crc32c alone over the uncompressed response: {:.0} MB/s ({:.2} ms)",
        none.logical as f64 / secs / 1e6,
        secs * 1e3
    );
}
