//! One record inside a RecordBatch v2, and its headers (KIP-82).
//!
//! See <https://kafka.apache.org/documentation/#record>. On the wire:
//! `length varint, attributes int8, timestampDelta varlong, offsetDelta varint,
//! keyLength varint, key, valueLength varint, value, headerCount varint,
//! [headerKeyLength varint, headerKey, headerValueLength varint, headerValue]`,
//! where a length of -1 means null (key, value and header value only).
//!
//! Decoded keys, values and header values are [`Bytes`] slices of the buffer the batch was read
//! from (or of its one decompressed buffer): no copy per record.

use bytes::Bytes;

use crate::error::{DecodeError, EncodeError};
use crate::primitives::{
    int8, put_varint, put_varlong, take, varint, varint_len, varlong, varlong_len, PResult,
};

/// A record header: a UTF-8 key and a nullable value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    /// The header key (the Java client only writes strings here).
    pub key: String,
    /// The header value; `None` is a null value, distinct from an empty one.
    pub value: Option<Bytes>,
}

impl Header {
    /// A header with a value.
    pub fn new(key: impl Into<String>, value: impl Into<Bytes>) -> Self {
        Header {
            key: key.into(),
            value: Some(value.into()),
        }
    }
}

/// A record with its absolute offset and timestamp (the batch's base plus the record's deltas).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Record {
    /// The record attributes byte; unused by Kafka so far and written as 0, kept to re-encode
    /// exactly what was read.
    pub attributes: i8,
    /// The record's offset: batch base offset + offset delta.
    pub offset: i64,
    /// The record's timestamp as stored: batch base timestamp + timestamp delta. For a batch with
    /// log-append time, the timestamp to show is the batch's `max_timestamp` (see
    /// [`super::RecordBatch::record_timestamp`]).
    pub timestamp: i64,
    /// The key; `None` is a null key.
    pub key: Option<Bytes>,
    /// The value; `None` is a null value (a tombstone on a compacted topic).
    pub value: Option<Bytes>,
    /// The headers, in wire order (keys may repeat).
    pub headers: Vec<Header>,
}

impl Record {
    /// A record with the given offset, timestamp, key and value and no headers.
    pub fn new(offset: i64, timestamp: i64, key: Option<Bytes>, value: Option<Bytes>) -> Self {
        Record {
            attributes: 0,
            offset,
            timestamp,
            key,
            value,
            headers: Vec::new(),
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, header: Header) -> Self {
        self.headers.push(header);
        self
    }
}

fn invalid(field: &'static str, detail: String) -> nom::Err<DecodeError> {
    nom::Err::Error(DecodeError::InvalidValue { field, detail })
}

/// A varint length prefix followed by that many bytes, -1 meaning null.
fn varint_nullable_bytes<'a>(
    input: &'a [u8],
    field: &'static str,
) -> PResult<'a, Option<&'a [u8]>> {
    let (rest, len) = varint(input)?;
    match len {
        -1 => Ok((rest, None)),
        n if n < 0 => Err(invalid(field, format!("negative length {n}"))),
        n => {
            let n = n as usize;
            if n > rest.len() {
                return Err(nom::Err::Error(DecodeError::LengthExceedsInput {
                    len: n as u64,
                    remaining: rest.len(),
                }));
            }
            let (head, tail) = rest.split_at(n);
            Ok((tail, Some(head)))
        }
    }
}

/// Parses one record from `input`, a sub-slice of `backing`, slicing keys and values out of
/// `backing` without copying.
pub(crate) fn parse_record<'a>(
    backing: &Bytes,
    input: &'a [u8],
    base_offset: i64,
    base_timestamp: i64,
) -> PResult<'a, Record> {
    let (rest, len) = varint(input)?;
    if len < 0 {
        return Err(invalid("record length", format!("negative length {len}")));
    }
    let (after, body) = take(len as usize)(rest).map_err(|_| {
        nom::Err::Error(DecodeError::LengthExceedsInput {
            len: len as u64,
            remaining: rest.len(),
        })
    })?;
    let slice = |s: Option<&[u8]>| s.map(|s| backing.slice_ref(s));

    let (b, attributes) = int8(body)?;
    let (b, timestamp_delta) = varlong(b)?;
    let (b, offset_delta) = varint(b)?;
    let (b, key) = varint_nullable_bytes(b, "record key")?;
    let (b, value) = varint_nullable_bytes(b, "record value")?;
    let (mut b, count) = varint(b)?;
    if count < 0 || count as usize > b.len() {
        return Err(invalid(
            "record header count",
            format!("{count} with {} byte(s) left", b.len()),
        ));
    }
    let mut headers = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let (r, hkey) = varint_nullable_bytes(b, "header key")?;
        let hkey = hkey.ok_or_else(|| invalid("header key", "null".into()))?;
        let hkey =
            std::str::from_utf8(hkey).map_err(|_| nom::Err::Error(DecodeError::InvalidUtf8))?;
        let (r, hvalue) = varint_nullable_bytes(r, "header value")?;
        headers.push(Header {
            key: hkey.to_owned(),
            value: slice(hvalue),
        });
        b = r;
    }
    if !b.is_empty() {
        return Err(nom::Err::Error(DecodeError::TrailingBytes(b.len())));
    }
    let record = Record {
        attributes,
        offset: base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp: base_timestamp.wrapping_add(timestamp_delta),
        key: slice(key),
        value: slice(value),
        headers,
    };
    Ok((after, record))
}

fn len_i32(what: &'static str, len: usize) -> Result<i32, EncodeError> {
    i32::try_from(len).map_err(|_| EncodeError::TooLong { what, len })
}

fn nullable_len(b: Option<&[u8]>, what: &'static str) -> Result<(i32, usize), EncodeError> {
    match b {
        None => Ok((-1, varint_len(-1))),
        Some(b) => {
            let n = len_i32(what, b.len())?;
            Ok((n, varint_len(n) + b.len()))
        }
    }
}

fn put_nullable(out: &mut Vec<u8>, b: Option<&[u8]>, len: i32) {
    put_varint(out, len);
    if let Some(b) = b {
        out.extend_from_slice(b);
    }
}

/// Appends one record to `out`, with deltas taken from the batch's base offset and timestamp.
pub(crate) fn write_record(
    out: &mut Vec<u8>,
    record: &Record,
    base_offset: i64,
    base_timestamp: i64,
) -> Result<(), EncodeError> {
    let offset_delta = record
        .offset
        .checked_sub(base_offset)
        .and_then(|d| i32::try_from(d).ok())
        .ok_or_else(|| EncodeError::InvalidValue {
            field: "record offset",
            detail: format!(
                "{} is too far from base offset {base_offset}",
                record.offset
            ),
        })?;
    // Wrapping, so that whatever a decoder produced (itself wrapping) re-encodes to the same bytes.
    let timestamp_delta = record.timestamp.wrapping_sub(base_timestamp);
    let key = record.key.as_deref();
    let value = record.value.as_deref();
    let (key_len, key_size) = nullable_len(key, "record key")?;
    let (value_len, value_size) = nullable_len(value, "record value")?;
    let header_count = len_i32("record headers", record.headers.len())?;
    let mut size =
        1 + varlong_len(timestamp_delta) + varint_len(offset_delta) + key_size + value_size;
    size += varint_len(header_count);
    let mut header_lens = Vec::with_capacity(record.headers.len());
    for h in &record.headers {
        let (klen, ksize) = nullable_len(Some(h.key.as_bytes()), "header key")?;
        let (vlen, vsize) = nullable_len(h.value.as_deref(), "header value")?;
        size += ksize + vsize;
        header_lens.push((klen, vlen));
    }
    put_varint(out, len_i32("record", size)?);
    out.push(record.attributes as u8);
    put_varlong(out, timestamp_delta);
    put_varint(out, offset_delta);
    put_nullable(out, key, key_len);
    put_nullable(out, value, value_len);
    put_varint(out, header_count);
    for (h, (klen, vlen)) in record.headers.iter().zip(header_lens) {
        put_nullable(out, Some(h.key.as_bytes()), klen);
        put_nullable(out, h.value.as_deref(), vlen);
    }
    Ok(())
}
