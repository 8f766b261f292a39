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
    put_varint, put_varlong, unsigned_varint, unsigned_varlong, varint_len, varlong_len,
};

/// A header key: UTF-8 text (the Java client writes and reads keys as strings).
///
/// Decoded keys share the batch's buffer, like keys and values do, so headers cost no allocation
/// per key. The text is checked to be UTF-8 when the key is made (a record whose header key is
/// not is refused as [`DecodeError::InvalidUtf8`]); [`HeaderKey::as_str`] checks it again, which
/// for a short key is a handful of instructions (this crate has no `unsafe`).
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct HeaderKey(Bytes);

impl HeaderKey {
    /// A key from bytes that must be UTF-8.
    pub fn from_utf8(bytes: Bytes) -> Result<Self, DecodeError> {
        // Keys are almost always ASCII, which is checked faster than UTF-8 in general.
        if bytes.is_ascii() || std::str::from_utf8(&bytes).is_ok() {
            Ok(HeaderKey(bytes))
        } else {
            Err(DecodeError::InvalidUtf8)
        }
    }

    /// A key from a static string, without copying.
    pub const fn from_static(key: &'static str) -> Self {
        HeaderKey(Bytes::from_static(key.as_bytes()))
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).unwrap_or_default()
    }

    /// The key's UTF-8 bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The key's bytes, shared.
    pub fn to_bytes(&self) -> Bytes {
        self.0.clone()
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the key is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for HeaderKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for HeaderKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<&str> for HeaderKey {
    fn from(key: &str) -> Self {
        HeaderKey(Bytes::copy_from_slice(key.as_bytes()))
    }
}

impl From<String> for HeaderKey {
    fn from(key: String) -> Self {
        HeaderKey(Bytes::from(key.into_bytes()))
    }
}

impl From<&String> for HeaderKey {
    fn from(key: &String) -> Self {
        key.as_str().into()
    }
}

impl From<HeaderKey> for String {
    fn from(key: HeaderKey) -> Self {
        key.as_str().to_owned()
    }
}

impl PartialEq<str> for HeaderKey {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for HeaderKey {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for HeaderKey {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

/// A record header: a UTF-8 key and a nullable value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Header {
    /// The header key (the Java client only writes strings here).
    pub key: HeaderKey,
    /// The header value; `None` is a null value, distinct from an empty one.
    pub value: Option<Bytes>,
}

impl Header {
    /// A header with a value.
    pub fn new(key: impl Into<HeaderKey>, value: impl Into<Bytes>) -> Self {
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

fn invalid(field: &'static str, detail: String) -> DecodeError {
    DecodeError::InvalidValue { field, detail }
}

/// A read position inside one record, over the whole (decompressed) records section so that
/// fields are sliced out of it by offset: one bounds check per field, no `nom` plumbing, no
/// pointer arithmetic per slice. This is the consumer's inner loop (one call per record).
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
    /// The end of the current record (or of the section, before the record's length is read).
    end: usize,
}

impl Cursor<'_> {
    fn left(&self) -> usize {
        self.end - self.pos
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        if self.pos < self.end {
            let b = self.buf[self.pos];
            self.pos += 1;
            Ok(b)
        } else {
            Err(DecodeError::Truncated { needed: 1 })
        }
    }

    /// VARINT (zigzag). Lengths and deltas are mostly under 64 or 8192: one or two bytes.
    #[inline]
    fn varint(&mut self) -> Result<i32, DecodeError> {
        let u = match self.buf[self.pos..self.end] {
            [b0, ..] if b0 < 0x80 => {
                self.pos += 1;
                u32::from(b0)
            }
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                u32::from(b0 & 0x7f) | u32::from(b1) << 7
            }
            _ => {
                let (rest, u) = unsigned_varint(&self.buf[self.pos..self.end])?;
                self.pos = self.end - rest.len();
                u
            }
        };
        Ok(((u >> 1) as i32) ^ -((u & 1) as i32))
    }

    /// VARLONG (zigzag).
    #[inline]
    fn varlong(&mut self) -> Result<i64, DecodeError> {
        let u = match self.buf[self.pos..self.end] {
            [b0, ..] if b0 < 0x80 => {
                self.pos += 1;
                u64::from(b0)
            }
            _ => {
                let (rest, u) = unsigned_varlong(&self.buf[self.pos..self.end])?;
                self.pos = self.end - rest.len();
                u
            }
        };
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    /// A varint length prefix and that many bytes, -1 meaning null: the field's range.
    #[inline]
    fn nullable(&mut self, field: &'static str) -> Result<Option<(usize, usize)>, DecodeError> {
        match self.varint()? {
            -1 => Ok(None),
            n if n < 0 => Err(invalid(field, format!("negative length {n}"))),
            n => {
                let n = n as usize;
                if n > self.left() {
                    return Err(DecodeError::LengthExceedsInput {
                        len: n as u64,
                        remaining: self.left(),
                    });
                }
                let start = self.pos;
                self.pos += n;
                Ok(Some((start, self.pos)))
            }
        }
    }
}

/// Parses the record starting at `pos` in `data` (a batch's records section), slicing keys and
/// values out of `data` without copying. Returns the record and where the next one starts.
pub(crate) fn parse_record(
    data: &Bytes,
    pos: usize,
    base_offset: i64,
    base_timestamp: i64,
) -> Result<(Record, usize), DecodeError> {
    let mut c = Cursor {
        buf: data,
        pos,
        end: data.len(),
    };
    let len = c.varint()?;
    if len < 0 {
        return Err(invalid("record length", format!("negative length {len}")));
    }
    if len as usize > c.left() {
        return Err(DecodeError::LengthExceedsInput {
            len: len as u64,
            remaining: c.left(),
        });
    }
    c.end = c.pos + len as usize;
    let slice = |r: Option<(usize, usize)>| r.map(|(start, end)| data.slice(start..end));

    let attributes = c.byte()? as i8;
    let timestamp_delta = c.varlong()?;
    let offset_delta = c.varint()?;
    let key = c.nullable("record key")?;
    let value = c.nullable("record value")?;
    let count = c.varint()?;
    if count < 0 || count as usize > c.left() {
        return Err(invalid(
            "record header count",
            format!("{count} with {} byte(s) left", c.left()),
        ));
    }
    let mut headers = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let (start, end) = c
            .nullable("header key")?
            .ok_or_else(|| invalid("header key", "null".into()))?;
        let key = HeaderKey::from_utf8(data.slice(start..end))?;
        let value = c.nullable("header value")?;
        headers.push(Header {
            key,
            value: slice(value),
        });
    }
    if c.left() != 0 {
        return Err(DecodeError::TrailingBytes(c.left()));
    }
    let record = Record {
        attributes,
        offset: base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp: base_timestamp.wrapping_add(timestamp_delta),
        key: slice(key),
        value: slice(value),
        headers,
    };
    Ok((record, c.end))
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
