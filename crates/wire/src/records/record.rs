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

/// A record's headers, in wire order (keys may repeat).
///
/// A `Vec<Header>` that keeps a single header inline: most records carry none or one (a trace
/// id, a content type), and the decoder would otherwise allocate once per record for it. Derefs
/// to `[Header]` for reading (`len`, `iter`, indexing), and converts from and into `Vec<Header>`.
#[derive(Clone, Default)]
pub struct Headers(HeadersRepr);

#[derive(Clone)]
enum HeadersRepr {
    One(Header),
    Many(Vec<Header>),
}

impl Default for HeadersRepr {
    fn default() -> Self {
        HeadersRepr::Many(Vec::new())
    }
}

impl Headers {
    /// No headers (no allocation).
    pub const fn new() -> Self {
        Headers(HeadersRepr::Many(Vec::new()))
    }

    /// Room for `n` headers; allocates only for two or more.
    pub fn with_capacity(n: usize) -> Self {
        if n <= 1 {
            Headers::new()
        } else {
            Headers(HeadersRepr::Many(Vec::with_capacity(n)))
        }
    }

    /// Appends a header.
    pub fn push(&mut self, header: Header) {
        self.0 = match std::mem::take(&mut self.0) {
            HeadersRepr::Many(v) if v.capacity() == 0 => HeadersRepr::One(header),
            HeadersRepr::Many(mut v) => {
                v.push(header);
                HeadersRepr::Many(v)
            }
            HeadersRepr::One(first) => HeadersRepr::Many(vec![first, header]),
        };
    }

    /// The headers as a `Vec`.
    pub fn into_vec(self) -> Vec<Header> {
        match self.0 {
            HeadersRepr::One(h) => vec![h],
            HeadersRepr::Many(v) => v,
        }
    }
}

impl std::ops::Deref for Headers {
    type Target = [Header];

    fn deref(&self) -> &[Header] {
        match &self.0 {
            HeadersRepr::One(h) => std::slice::from_ref(h),
            HeadersRepr::Many(v) => v,
        }
    }
}

impl std::ops::DerefMut for Headers {
    fn deref_mut(&mut self) -> &mut [Header] {
        match &mut self.0 {
            HeadersRepr::One(h) => std::slice::from_mut(h),
            HeadersRepr::Many(v) => v,
        }
    }
}

impl std::fmt::Debug for Headers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Headers {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Headers {}

impl PartialEq<Vec<Header>> for Headers {
    fn eq(&self, other: &Vec<Header>) -> bool {
        **self == **other
    }
}

impl std::hash::Hash for Headers {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (**self).hash(state);
    }
}

impl From<Vec<Header>> for Headers {
    fn from(v: Vec<Header>) -> Self {
        Headers(HeadersRepr::Many(v))
    }
}

impl From<Headers> for Vec<Header> {
    fn from(h: Headers) -> Self {
        h.into_vec()
    }
}

impl FromIterator<Header> for Headers {
    fn from_iter<I: IntoIterator<Item = Header>>(iter: I) -> Self {
        let mut headers = Headers::new();
        headers.extend(iter);
        headers
    }
}

impl Extend<Header> for Headers {
    fn extend<I: IntoIterator<Item = Header>>(&mut self, iter: I) {
        for h in iter {
            self.push(h);
        }
    }
}

impl IntoIterator for Headers {
    type Item = Header;
    type IntoIter = HeadersIntoIter;

    fn into_iter(self) -> HeadersIntoIter {
        HeadersIntoIter(match self.0 {
            HeadersRepr::One(h) => IntoIterRepr::One(Some(h).into_iter()),
            HeadersRepr::Many(v) => IntoIterRepr::Many(v.into_iter()),
        })
    }
}

impl<'a> IntoIterator for &'a Headers {
    type Item = &'a Header;
    type IntoIter = std::slice::Iter<'a, Header>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Headers {
    type Item = &'a mut Header;
    type IntoIter = std::slice::IterMut<'a, Header>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// The owning iterator of [`Headers`].
#[derive(Debug)]
pub struct HeadersIntoIter(IntoIterRepr);

#[derive(Debug)]
enum IntoIterRepr {
    One(std::option::IntoIter<Header>),
    Many(std::vec::IntoIter<Header>),
}

impl Iterator for HeadersIntoIter {
    type Item = Header;

    fn next(&mut self) -> Option<Header> {
        match &mut self.0 {
            IntoIterRepr::One(one) => one.next(),
            IntoIterRepr::Many(many) => many.next(),
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
    pub headers: Headers,
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
            headers: Headers::new(),
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

/// The error paths of the parser below, kept out of line so the inner loop stays small.
#[cold]
#[inline(never)]
fn negative(field: &'static str, n: i32) -> DecodeError {
    invalid(field, format!("negative length {n}"))
}

#[cold]
#[inline(never)]
fn exceeds(len: usize, remaining: usize) -> DecodeError {
    DecodeError::LengthExceedsInput {
        len: len as u64,
        remaining,
    }
}

/// A read position inside one record, over the whole (decompressed) records section so that
/// fields are sliced out of it by offset: one bounds check per field, no `nom` plumbing, no
/// pointer arithmetic per slice. This is the consumer's inner loop (one call per record).
struct Cursor<'a> {
    data: &'a Bytes,
    pos: usize,
    /// The end of the current record (or of the section, before the record's length is read).
    end: usize,
}

impl Cursor<'_> {
    #[inline(always)]
    fn left(&self) -> usize {
        self.end - self.pos
    }

    #[inline(always)]
    fn byte(&mut self) -> Result<u8, DecodeError> {
        match self.data[..self.end].get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(DecodeError::Truncated { needed: 1 }),
        }
    }

    /// VARINT (zigzag). Lengths and deltas are mostly under 64 or 8192: one or two bytes.
    #[inline(always)]
    fn varint(&mut self) -> Result<i32, DecodeError> {
        let u = match self.data[self.pos..self.end] {
            [b0, ..] if b0 < 0x80 => {
                self.pos += 1;
                u32::from(b0)
            }
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                u32::from(b0 & 0x7f) | u32::from(b1) << 7
            }
            _ => self.varint_slow()?,
        };
        Ok(((u >> 1) as i32) ^ -((u & 1) as i32))
    }

    #[inline(never)]
    fn varint_slow(&mut self) -> Result<u32, DecodeError> {
        let (rest, u) = unsigned_varint(&self.data[self.pos..self.end])?;
        self.pos = self.end - rest.len();
        Ok(u)
    }

    /// VARLONG (zigzag).
    #[inline(always)]
    fn varlong(&mut self) -> Result<i64, DecodeError> {
        let u = match self.data[self.pos..self.end] {
            [b0, ..] if b0 < 0x80 => {
                self.pos += 1;
                u64::from(b0)
            }
            [b0, b1, ..] if b1 < 0x80 => {
                self.pos += 2;
                u64::from(b0 & 0x7f) | u64::from(b1) << 7
            }
            _ => self.varlong_slow()?,
        };
        Ok(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    #[inline(never)]
    fn varlong_slow(&mut self) -> Result<u64, DecodeError> {
        let (rest, u) = unsigned_varlong(&self.data[self.pos..self.end])?;
        self.pos = self.end - rest.len();
        Ok(u)
    }

    /// A varint length prefix and that many bytes, -1 meaning null: the field's range.
    #[inline(always)]
    fn nullable_range(
        &mut self,
        field: &'static str,
    ) -> Result<Option<(usize, usize)>, DecodeError> {
        let n = self.varint()?;
        if n < 0 {
            return if n == -1 {
                Ok(None)
            } else {
                Err(negative(field, n))
            };
        }
        let n = n as usize;
        if n > self.left() {
            return Err(exceeds(n, self.left()));
        }
        let start = self.pos;
        self.pos += n;
        Ok(Some((start, self.pos)))
    }

    /// A nullable byte field, sliced out of the section without copying.
    #[inline(always)]
    fn nullable(&mut self, field: &'static str) -> Result<Option<Bytes>, DecodeError> {
        Ok(self
            .nullable_range(field)?
            .map(|(start, end)| self.data.slice(start..end)))
    }

    #[inline(always)]
    fn header(&mut self) -> Result<Header, DecodeError> {
        let (start, end) = self
            .nullable_range("header key")?
            .ok_or_else(|| invalid("header key", "null".into()))?;
        let key = HeaderKey::from_utf8(self.data.slice(start..end))?;
        let value = self.nullable("header value")?;
        Ok(Header { key, value })
    }
}

/// Parses the record starting at `pos` in `data` (a batch's records section) into `out`, slicing
/// keys and values out of `data` without copying. Returns where the next record starts.
pub(crate) fn parse_record(
    data: &Bytes,
    pos: usize,
    base_offset: i64,
    base_timestamp: i64,
    out: &mut Vec<Record>,
) -> Result<usize, DecodeError> {
    let mut c = Cursor {
        data,
        pos,
        end: data.len(),
    };
    let len = c.varint()?;
    if len < 0 {
        return Err(negative("record length", len));
    }
    if len as usize > c.left() {
        return Err(exceeds(len as usize, c.left()));
    }
    c.end = c.pos + len as usize;

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
    let headers = match count {
        0 => Headers::new(),
        1 => Headers(HeadersRepr::One(c.header()?)),
        n => {
            // A header is at least its two length varints: two bytes.
            let mut v = Vec::with_capacity(crate::primitives::prealloc(n as usize, c.left(), 2));
            for _ in 0..n {
                v.push(c.header()?);
            }
            Headers(HeadersRepr::Many(v))
        }
    };
    if c.left() != 0 {
        return Err(DecodeError::TrailingBytes(c.left()));
    }
    out.push(Record {
        attributes,
        offset: base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp: base_timestamp.wrapping_add(timestamp_delta),
        key,
        value,
        headers,
    });
    Ok(c.end)
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
