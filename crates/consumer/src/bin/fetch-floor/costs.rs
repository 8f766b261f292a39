//! `--costs`: what one core does for the parts of consuming no client avoids, on real batches of
//! a topic. Given the whole batches the fetch loop kept, on the calling thread alone: CRC-32C
//! over each batch's covered bytes (attributes to its end), and decompression of each compressed
//! batch's records section with the wire crate's codecs (the consumer's own), each repeated in
//! passes over every batch until a second of this thread's CPU time has gone.
//!
//! Each part's figures are per second of this thread's CPU time (`/proc/thread-self/stat`, so
//! the fetch's idle runtime threads count for nothing): GiB/s of input, GiB/s of output, and CPU
//! seconds per GiB of record values, the unit of `scripts/bench-consumer`'s tables. The record
//! values are counted once, before any timing, by decoding the batches.

use std::hint::black_box;

use bytes::Bytes;
use mooring_wire::records::{decompress_into, BatchItem, BatchReader, Compression};

use crate::batches::{batches, BatchSpan, CRC_COVERED_FROM, HEADER_LEN};
use crate::fetch::BoxError;

/// The largest decompressed batch accepted (the broker's default `message.max.bytes` is 1 MiB
/// compressed; this leaves room for any ratio seen in practice).
const DECOMPRESSED_LIMIT: usize = 256 << 20;
const GIB: f64 = (1u64 << 30) as f64;

/// One batch with what the timing needs to know of it.
struct Batch {
    bytes: Bytes,
    compression: Compression,
    value_bytes: u64,
}

/// What one part measured.
#[derive(Debug)]
pub struct Part {
    pub name: &'static str,
    pub batches: usize,
    pub passes: u64,
    /// Per pass.
    pub input_bytes: u64,
    pub output_bytes: u64,
    pub value_bytes: u64,
    pub cpu_secs: f64,
}

impl Part {
    /// The JSON line `scripts/bench-consumer` reads.
    pub fn json(&self, topic: &str) -> serde_json::Value {
        let per_sec = |bytes: u64| self.passes as f64 * bytes as f64 / GIB / self.cpu_secs;
        serde_json::json!({
            "part": self.name,
            "topic": topic,
            "batches": self.batches,
            "passes": self.passes,
            "input_bytes": self.input_bytes,
            "output_bytes": self.output_bytes,
            "value_bytes": self.value_bytes,
            "cpu_secs": self.cpu_secs,
            "input_gib_per_sec": per_sec(self.input_bytes),
            "output_gib_per_sec": per_sec(self.output_bytes),
            "cpu_secs_per_gib_values": self.cpu_secs * GIB
                / (self.passes as f64 * self.value_bytes as f64).max(1.0),
        })
    }
}

/// Splits the kept chunks into batches and measures CRC-32C over all of them and each codec's
/// decompression over the batches it compressed, each for at least `min_cpu_secs`.
pub fn measure(chunks: &[Bytes], min_cpu_secs: f64) -> Result<Vec<Part>, BoxError> {
    let all = split(chunks)?;
    if all.is_empty() {
        return Err("no whole batch was fetched".into());
    }
    let mut parts = vec![timed("crc32c", &all, min_cpu_secs, crc_pass)?];
    for codec in [
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ] {
        let these: Vec<&Batch> = all.iter().filter(|b| b.compression == codec).collect();
        if !these.is_empty() {
            parts.push(timed(codec.name(), &these, min_cpu_secs, decompress_pass)?);
        }
    }
    Ok(parts)
}

/// Every whole batch of the chunks, with its record values counted (untimed).
fn split(chunks: &[Bytes]) -> Result<Vec<Batch>, BoxError> {
    let mut out = Vec::new();
    for chunk in chunks {
        for span in batches(chunk) {
            let BatchSpan {
                range, compression, ..
            } = span?;
            let bytes = chunk.slice(range);
            let compression = compression.ok_or("a batch has an unknown codec")?;
            let value_bytes = value_bytes(&bytes)?;
            out.push(Batch {
                bytes,
                compression,
                value_bytes,
            });
        }
    }
    Ok(out)
}

/// The record values' bytes of one batch (CRC checked, decompressed and decoded).
fn value_bytes(batch: &Bytes) -> Result<u64, BoxError> {
    let mut sum = 0;
    for item in BatchReader::new(batch.clone()) {
        if let BatchItem::Batch(raw) = item? {
            for record in raw.records()? {
                sum += record.value.map_or(0, |v| v.len() as u64);
            }
        }
    }
    Ok(sum)
}

/// One pass of a part over `batches`: (input bytes, output bytes).
type Pass = fn(&[&Batch], &mut Vec<u8>) -> Result<(u64, u64), BoxError>;

/// Runs `pass` over `batches` until `min_cpu_secs` of this thread's CPU time have gone.
fn timed<B: std::borrow::Borrow<Batch>>(
    name: &'static str,
    batches: &[B],
    min_cpu_secs: f64,
    pass: Pass,
) -> Result<Part, BoxError> {
    let batches: Vec<&Batch> = batches.iter().map(|b| b.borrow()).collect();
    let mut buf = Vec::new();
    // One pass untimed: the output buffer grown and the batches in the CPU caches as far as
    // they fit, as they are for a client in its steady state.
    let (input_bytes, output_bytes) = pass(&batches, &mut buf)?;
    let start = thread_cpu_secs()?;
    let mut passes = 0;
    let cpu_secs = loop {
        pass(&batches, &mut buf)?;
        passes += 1;
        let spent = thread_cpu_secs()? - start;
        if spent >= min_cpu_secs {
            break spent;
        }
    };
    Ok(Part {
        name,
        batches: batches.len(),
        passes,
        input_bytes,
        output_bytes,
        value_bytes: batches.iter().map(|b| b.value_bytes).sum(),
        cpu_secs,
    })
}

/// CRC-32C of every batch's covered bytes, each checked against the one it carries.
fn crc_pass(batches: &[&Batch], _: &mut Vec<u8>) -> Result<(u64, u64), BoxError> {
    let mut bytes = 0;
    for b in batches {
        let covered = &b.bytes[CRC_COVERED_FROM..];
        let stored = u32::from_be_bytes([b.bytes[17], b.bytes[18], b.bytes[19], b.bytes[20]]);
        if black_box(crc32c::crc32c(covered)) != stored {
            return Err("a batch's CRC-32C does not match".into());
        }
        bytes += covered.len() as u64;
    }
    Ok((bytes, bytes))
}

/// Decompression of every batch's records section into one reused buffer.
fn decompress_pass(batches: &[&Batch], out: &mut Vec<u8>) -> Result<(u64, u64), BoxError> {
    let (mut input, mut output) = (0, 0);
    for b in batches {
        let section = &b.bytes[HEADER_LEN..];
        decompress_into(b.compression, section, DECOMPRESSED_LIMIT, out)?;
        black_box(&out);
        input += section.len() as u64;
        output += out.len() as u64;
    }
    Ok((input, output))
}

/// This thread's user + system CPU seconds (Linux `/proc/thread-self/stat`, USER_HZ = 100).
fn thread_cpu_secs() -> Result<f64, BoxError> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat")?;
    let rest = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])
        .ok_or("unreadable /proc/thread-self/stat")?;
    let mut fields = rest.split_whitespace().skip(11);
    let mut next = || -> Result<u64, BoxError> {
        Ok(fields
            .next()
            .ok_or("short /proc/thread-self/stat")?
            .parse()?)
    };
    let (user, system) = (next()?, next()?);
    Ok((user + system) as f64 / 100.0)
}
