//! The primitive types of the Kafka protocol, as `nom` complete parsers and `BufMut` writers.
//!
//! See <https://kafka.apache.org/protocol#protocol_types>. Classic forms use fixed-width signed
//! length prefixes (int16 for strings, int32 for bytes and arrays, -1 for null); compact forms
//! (flexible versions, KIP-482) use an unsigned varint holding length + 1 (0 for null).
//!
//! Every length read off the wire is checked against the bytes actually present before anything
//! is sliced or allocated, so a hostile length can neither panic nor reserve memory.

use bytes::BufMut;
use nom::Parser;

use crate::error::{DecodeError, EncodeError};

/// Result of a primitive parser: the rest of the input and the value.
pub type PResult<'a, O> = nom::IResult<&'a [u8], O, DecodeError>;

fn fail<O>(e: DecodeError) -> PResult<'static, O> {
    Err(nom::Err::Error(e))
}

/// Takes `n` bytes, or fails with [`DecodeError::Truncated`].
pub fn take(n: usize) -> impl Fn(&[u8]) -> PResult<'_, &[u8]> {
    move |input: &[u8]| {
        if input.len() < n {
            return Err(nom::Err::Error(DecodeError::Truncated {
                needed: n - input.len(),
            }));
        }
        let (head, rest) = input.split_at(n);
        Ok((rest, head))
    }
}

macro_rules! fixed {
    ($(#[$doc:meta])* $name:ident, $ty:ty) => {
        $(#[$doc])*
        pub fn $name(input: &[u8]) -> PResult<'_, $ty> {
            const N: usize = std::mem::size_of::<$ty>();
            let (rest, raw) = take(N)(input)?;
            let mut arr = [0u8; N];
            arr.copy_from_slice(raw);
            Ok((rest, <$ty>::from_be_bytes(arr)))
        }
    };
}

fixed!(/// INT8.
    int8, i8);
fixed!(/// INT16, big-endian.
    int16, i16);
fixed!(/// INT32, big-endian.
    int32, i32);
fixed!(/// INT64, big-endian.
    int64, i64);
fixed!(/// UINT16, big-endian.
    uint16, u16);
fixed!(/// UINT32, big-endian.
    uint32, u32);
fixed!(/// FLOAT64, IEEE 754 big-endian.
    float64, f64);

/// BOOLEAN: one byte, zero is false, anything else true (as the Java client reads it).
pub fn boolean(input: &[u8]) -> PResult<'_, bool> {
    let (rest, b) = int8(input)?;
    Ok((rest, b != 0))
}

/// A 128-bit UUID as Kafka sends it (topic ids, KIP-516). The all-zero value is "no id".
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Uuid(pub [u8; 16]);

impl Uuid {
    /// The all-zero UUID Kafka uses for "unknown topic id".
    pub const NIL: Uuid = Uuid([0; 16]);

    /// Whether this is the all-zero UUID.
    pub fn is_nil(&self) -> bool {
        self.0 == [0; 16]
    }
}

impl std::fmt::Debug for Uuid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

impl std::fmt::Display for Uuid {
    /// Kafka prints topic ids in URL-safe base64 without padding; we print hex, which is
    /// unambiguous in logs and greppable.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// UUID: 16 raw bytes.
pub fn uuid(input: &[u8]) -> PResult<'_, Uuid> {
    let (rest, raw) = take(16)(input)?;
    let mut arr = [0u8; 16];
    arr.copy_from_slice(raw);
    Ok((rest, Uuid(arr)))
}

/// UNSIGNED_VARINT: up to 5 bytes of 7-bit groups, little-endian group order.
pub fn unsigned_varint(input: &[u8]) -> PResult<'_, u32> {
    let mut value: u32 = 0;
    for (i, &b) in input.iter().enumerate().take(5) {
        value |= u32::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            if i == 4 && b > 0x0f {
                return fail(DecodeError::VarintTooLong { max: 5 });
            }
            return Ok((&input[i + 1..], value));
        }
    }
    if input.len() < 5 {
        fail(DecodeError::Truncated { needed: 1 })
    } else {
        fail(DecodeError::VarintTooLong { max: 5 })
    }
}

/// UNSIGNED_VARLONG: up to 10 bytes of 7-bit groups.
pub fn unsigned_varlong(input: &[u8]) -> PResult<'_, u64> {
    let mut value: u64 = 0;
    for (i, &b) in input.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            if i == 9 && b > 0x01 {
                return fail(DecodeError::VarintTooLong { max: 10 });
            }
            return Ok((&input[i + 1..], value));
        }
    }
    if input.len() < 10 {
        fail(DecodeError::Truncated { needed: 1 })
    } else {
        fail(DecodeError::VarintTooLong { max: 10 })
    }
}

/// VARINT: a zigzag-encoded signed 32-bit integer.
pub fn varint(input: &[u8]) -> PResult<'_, i32> {
    let (rest, u) = unsigned_varint(input)?;
    Ok((rest, ((u >> 1) as i32) ^ -((u & 1) as i32)))
}

/// VARLONG: a zigzag-encoded signed 64-bit integer.
pub fn varlong(input: &[u8]) -> PResult<'_, i64> {
    let (rest, u) = unsigned_varlong(input)?;
    Ok((rest, ((u >> 1) as i64) ^ -((u & 1) as i64)))
}

/// Checks a length read off the wire against the bytes that are left.
fn checked_len(len: u64, input: &[u8]) -> Result<usize, nom::Err<DecodeError>> {
    if len > input.len() as u64 {
        return Err(nom::Err::Error(DecodeError::LengthExceedsInput {
            len,
            remaining: input.len(),
        }));
    }
    Ok(len as usize)
}

/// How many elements to reserve room for: the count claimed, but no more than `left` bytes can
/// hold at `min_size` bytes each.
pub fn prealloc(count: usize, left: usize, min_size: usize) -> usize {
    count.min(left / min_size.max(1))
}

/// A classic (int16) or compact length prefix, `None` for null.
fn length<'a>(input: &'a [u8], compact: bool, wide: bool) -> PResult<'a, Option<u64>> {
    if compact {
        let (rest, n) = unsigned_varint(input)?;
        Ok((rest, n.checked_sub(1).map(u64::from)))
    } else {
        let (rest, n) = if wide {
            int32(input)?
        } else {
            let (rest, n) = int16(input)?;
            (rest, i32::from(n))
        };
        match n {
            -1 => Ok((rest, None)),
            n if n < 0 => fail(DecodeError::NegativeLength(i64::from(n))),
            n => Ok((rest, Some(n as u64))),
        }
    }
}

fn sized<'a>(input: &'a [u8], len: Option<u64>) -> PResult<'a, Option<&'a [u8]>> {
    match len {
        None => Ok((input, None)),
        Some(len) => {
            let n = checked_len(len, input)?;
            let (head, rest) = input.split_at(n);
            Ok((rest, Some(head)))
        }
    }
}

fn utf8(raw: &[u8]) -> Result<&str, nom::Err<DecodeError>> {
    std::str::from_utf8(raw).map_err(|_| nom::Err::Error(DecodeError::InvalidUtf8))
}

fn non_null<T>(v: Option<T>) -> Result<T, nom::Err<DecodeError>> {
    v.ok_or(nom::Err::Error(DecodeError::NegativeLength(-1)))
}

/// NULLABLE_STRING (int16 length, -1 for null) or COMPACT_NULLABLE_STRING.
pub fn nullable_str(compact: bool) -> impl Fn(&[u8]) -> PResult<'_, Option<&str>> {
    move |input| {
        let (rest, len) = length(input, compact, false)?;
        let (rest, raw) = sized(rest, len)?;
        Ok((rest, raw.map(utf8).transpose()?))
    }
}

/// STRING (int16 length) or COMPACT_STRING.
pub fn str(compact: bool) -> impl Fn(&[u8]) -> PResult<'_, &str> {
    move |input| {
        let (rest, s) = nullable_str(compact)(input)?;
        Ok((rest, non_null(s)?))
    }
}

/// NULLABLE_BYTES (int32 length, -1 for null) or COMPACT_NULLABLE_BYTES.
pub fn nullable_bytes(compact: bool) -> impl Fn(&[u8]) -> PResult<'_, Option<&[u8]>> {
    move |input| {
        let (rest, len) = length(input, compact, true)?;
        sized(rest, len)
    }
}

/// BYTES (int32 length) or COMPACT_BYTES.
pub fn bytes(compact: bool) -> impl Fn(&[u8]) -> PResult<'_, &[u8]> {
    move |input| {
        let (rest, b) = nullable_bytes(compact)(input)?;
        Ok((rest, non_null(b)?))
    }
}

/// ARRAY / COMPACT_ARRAY of elements parsed by `elem`, each at least `min_elem_size` bytes on
/// the wire; `None` for a null array.
///
/// The count is not trusted: it is refused when larger than the bytes left (every element of
/// every schema we decode takes at least one byte), so it cannot loop long; and the vector is
/// pre-allocated for at most as many elements as the bytes left can hold at `min_elem_size`
/// each, so a count read off the wire can reserve no more than the input could fill (an element
/// in memory is often many times its smallest encoding: a 1 MiB frame claiming a million
/// structs of 100 bytes must not reserve 100 MiB before the first one fails to parse).
pub fn nullable_array<'a, O, F>(
    compact: bool,
    min_elem_size: usize,
    mut elem: F,
) -> impl FnMut(&'a [u8]) -> PResult<'a, Option<Vec<O>>>
where
    F: Parser<&'a [u8], Output = O, Error = DecodeError>,
{
    move |input: &'a [u8]| {
        let (mut rest, count) = length(input, compact, true)?;
        let Some(count) = count else {
            return Ok((rest, None));
        };
        let count = checked_len(count, rest)?;
        let mut out = Vec::with_capacity(prealloc(count, rest.len(), min_elem_size));
        for _ in 0..count {
            let (r, v) = elem.parse(rest)?;
            rest = r;
            out.push(v);
        }
        Ok((rest, Some(out)))
    }
}

/// ARRAY / COMPACT_ARRAY that must not be null (see [`nullable_array`] for `min_elem_size`).
pub fn array<'a, O, F>(
    compact: bool,
    min_elem_size: usize,
    elem: F,
) -> impl FnMut(&'a [u8]) -> PResult<'a, Vec<O>>
where
    F: Parser<&'a [u8], Output = O, Error = DecodeError>,
{
    let mut inner = nullable_array(compact, min_elem_size, elem);
    move |input: &'a [u8]| {
        let (rest, v) = inner(input)?;
        Ok((rest, non_null(v)?))
    }
}

/// One raw tagged field: its tag and its undecoded value bytes.
pub type RawTaggedField<'a> = (u32, &'a [u8]);

/// A tagged-field section (KIP-482): count, then (tag, size, bytes) triples in ascending tag order.
pub fn tagged_fields(input: &[u8]) -> PResult<'_, Vec<RawTaggedField<'_>>> {
    let (mut rest, count) = unsigned_varint(input)?;
    let count = checked_len(u64::from(count), rest)?;
    // A tag and a size, one byte each at least.
    let mut out = Vec::with_capacity(prealloc(count, rest.len(), 2));
    let mut last: Option<u32> = None;
    for _ in 0..count {
        let (r, tag) = unsigned_varint(rest)?;
        if last.is_some_and(|l| tag <= l) {
            return fail(DecodeError::InvalidValue {
                field: "tagged fields",
                detail: format!("tag {tag} is not in ascending order"),
            });
        }
        last = Some(tag);
        let (r, size) = unsigned_varint(r)?;
        let n = checked_len(u64::from(size), r)?;
        let (value, r) = r.split_at(n);
        out.push((tag, value));
        rest = r;
    }
    Ok((rest, out))
}

// ---------------------------------------------------------------------------------------------
// Writers

/// Writes an UNSIGNED_VARINT.
pub fn put_unsigned_varint(buf: &mut impl BufMut, mut v: u32) {
    while v >= 0x80 {
        buf.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

/// Writes an UNSIGNED_VARLONG.
pub fn put_unsigned_varlong(buf: &mut impl BufMut, mut v: u64) {
    while v >= 0x80 {
        buf.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    buf.put_u8(v as u8);
}

/// Writes a zigzag VARINT.
pub fn put_varint(buf: &mut impl BufMut, v: i32) {
    put_unsigned_varint(buf, ((v << 1) ^ (v >> 31)) as u32);
}

/// Writes a zigzag VARLONG.
pub fn put_varlong(buf: &mut impl BufMut, v: i64) {
    put_unsigned_varlong(buf, ((v << 1) ^ (v >> 63)) as u64);
}

/// Encoded width of an UNSIGNED_VARINT.
pub fn unsigned_varint_len(v: u32) -> usize {
    match v {
        0..=0x7f => 1,
        0x80..=0x3fff => 2,
        0x4000..=0x1f_ffff => 3,
        0x20_0000..=0x0fff_ffff => 4,
        _ => 5,
    }
}

/// Encoded width of a zigzag VARINT.
pub fn varint_len(v: i32) -> usize {
    unsigned_varint_len(((v << 1) ^ (v >> 31)) as u32)
}

/// Encoded width of a zigzag VARLONG.
pub fn varlong_len(v: i64) -> usize {
    let mut u = ((v << 1) ^ (v >> 63)) as u64;
    let mut n = 1;
    while u >= 0x80 {
        u >>= 7;
        n += 1;
    }
    n
}

/// Writes a length prefix: classic int16/int32 (`-1` for null) or compact (length + 1, 0 for null).
fn put_length(
    buf: &mut impl BufMut,
    len: Option<usize>,
    compact: bool,
    wide: bool,
    what: &'static str,
) -> Result<(), EncodeError> {
    let too_long = |len| EncodeError::TooLong { what, len };
    if compact {
        let v = match len {
            None => 0,
            Some(n) => u32::try_from(n)
                .ok()
                .and_then(|n| n.checked_add(1))
                .ok_or(too_long(n))?,
        };
        put_unsigned_varint(buf, v);
    } else if wide {
        let v = match len {
            None => -1,
            Some(n) => i32::try_from(n).map_err(|_| too_long(n))?,
        };
        buf.put_i32(v);
    } else {
        let v = match len {
            None => -1,
            Some(n) => i16::try_from(n).map_err(|_| too_long(n))?,
        };
        buf.put_i16(v);
    }
    Ok(())
}

/// Writes a (nullable) STRING or COMPACT_(NULLABLE_)STRING.
pub fn put_str(buf: &mut impl BufMut, s: Option<&str>, compact: bool) -> Result<(), EncodeError> {
    put_length(buf, s.map(str::len), compact, false, "string")?;
    if let Some(s) = s {
        buf.put_slice(s.as_bytes());
    }
    Ok(())
}

/// Writes (nullable) BYTES or COMPACT_(NULLABLE_)BYTES.
pub fn put_bytes(
    buf: &mut impl BufMut,
    b: Option<&[u8]>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, b.map(<[u8]>::len), compact, true, "bytes")?;
    if let Some(b) = b {
        buf.put_slice(b);
    }
    Ok(())
}

/// Writes an array length prefix (`None` for a null array); the caller writes the elements.
pub fn put_array_len(
    buf: &mut impl BufMut,
    len: Option<usize>,
    compact: bool,
) -> Result<(), EncodeError> {
    put_length(buf, len, compact, true, "array")
}

/// Writes a tagged-field section from (tag, value) pairs, which must be in ascending tag order.
pub fn put_tagged_fields<'a>(
    buf: &mut impl BufMut,
    fields: impl ExactSizeIterator<Item = (u32, &'a [u8])>,
) -> Result<(), EncodeError> {
    let count = u32::try_from(fields.len()).map_err(|_| EncodeError::TooLong {
        what: "tagged fields",
        len: fields.len(),
    })?;
    put_unsigned_varint(buf, count);
    for (tag, value) in fields {
        put_unsigned_varint(buf, tag);
        let size = u32::try_from(value.len()).map_err(|_| EncodeError::TooLong {
            what: "tagged field",
            len: value.len(),
        })?;
        put_unsigned_varint(buf, size);
        buf.put_slice(value);
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn varint_known_bytes() {
        // Values and encodings from the protobuf/Kafka zigzag examples.
        let cases: &[(i32, &[u8])] = &[
            (0, &[0x00]),
            (-1, &[0x01]),
            (1, &[0x02]),
            (-64, &[0x7f]),
            (64, &[0x80, 0x01]),
            (i32::MAX, &[0xfe, 0xff, 0xff, 0xff, 0x0f]),
            (i32::MIN, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        ];
        for &(v, enc) in cases {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert_eq!(buf, enc, "encode {v}");
            assert_eq!(varint(enc), Ok((&[][..], v)), "decode {v}");
            assert_eq!(varint_len(v), enc.len());
        }
    }

    #[test]
    fn overlong_and_truncated_varints_are_typed_errors() {
        let err = unsigned_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]).unwrap_err();
        assert_eq!(err, nom::Err::Error(DecodeError::VarintTooLong { max: 5 }));
        let err = unsigned_varint(&[0x80, 0x80]).unwrap_err();
        assert_eq!(err, nom::Err::Error(DecodeError::Truncated { needed: 1 }));
        // The fifth byte may only carry the top four bits of a u32.
        let err = unsigned_varint(&[0xff, 0xff, 0xff, 0xff, 0x1f]).unwrap_err();
        assert_eq!(err, nom::Err::Error(DecodeError::VarintTooLong { max: 5 }));
    }

    #[test]
    fn hostile_lengths_are_refused_before_allocation() {
        // An array claiming 2^31-1 elements in a 4-byte input.
        let input = [0x7f, 0xff, 0xff, 0xff];
        let err = array(false, 4, int32)(&input[..]).unwrap_err();
        assert_eq!(
            err,
            nom::Err::Error(DecodeError::LengthExceedsInput {
                len: 0x7fff_ffff,
                remaining: 0
            })
        );
        let err = str(false)(&[0x00, 0x05, b'a']).unwrap_err();
        assert!(matches!(
            err,
            nom::Err::Error(DecodeError::LengthExceedsInput { len: 5, .. })
        ));
        let err = str(false)(&[0xff, 0xfe]).unwrap_err();
        assert_eq!(err, nom::Err::Error(DecodeError::NegativeLength(-2)));
    }

    #[test]
    fn null_and_empty_are_distinct() {
        let mut buf = Vec::new();
        put_str(&mut buf, None, true).unwrap();
        put_str(&mut buf, Some(""), true).unwrap();
        put_str(&mut buf, None, false).unwrap();
        assert_eq!(buf, [0x00, 0x01, 0xff, 0xff]);
        let (rest, a) = nullable_str(true)(&buf).unwrap();
        let (rest, b) = nullable_str(true)(rest).unwrap();
        let (rest, c) = nullable_str(false)(rest).unwrap();
        assert_eq!((a, b, c, rest.len()), (None, Some(""), None, 0));
    }

    #[test]
    fn tagged_fields_keep_unknown_tags_and_refuse_disorder() {
        let mut buf = Vec::new();
        put_tagged_fields(&mut buf, [(0u32, &b"ab"[..]), (7, &b""[..])].into_iter()).unwrap();
        assert_eq!(buf, [2, 0, 2, b'a', b'b', 7, 0]);
        let (_, fields) = tagged_fields(&buf).unwrap();
        assert_eq!(fields, vec![(0, &b"ab"[..]), (7, &b""[..])]);
        assert!(tagged_fields(&[2, 7, 0, 0, 0]).is_err());
    }

    proptest! {
        #[test]
        fn varlong_round_trips(v in any::<i64>()) {
            let mut buf = Vec::new();
            put_varlong(&mut buf, v);
            prop_assert_eq!(buf.len(), varlong_len(v));
            prop_assert_eq!(varlong(&buf), Ok((&[][..], v)));
        }

        #[test]
        fn unsigned_varint_round_trips(v in any::<u32>()) {
            let mut buf = Vec::new();
            put_unsigned_varint(&mut buf, v);
            prop_assert_eq!(buf.len(), unsigned_varint_len(v));
            prop_assert_eq!(unsigned_varint(&buf), Ok((&[][..], v)));
        }

        #[test]
        fn strings_round_trip(s in proptest::option::of(".{0,40}"), compact in any::<bool>()) {
            let mut buf = Vec::new();
            put_str(&mut buf, s.as_deref(), compact).unwrap();
            let (rest, back) = nullable_str(compact)(&buf).unwrap();
            prop_assert!(rest.is_empty());
            prop_assert_eq!(back, s.as_deref());
        }

        #[test]
        fn decoders_never_panic(input in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = nullable_array(true, 1, str(true))(&input[..]);
            let _ = nullable_array(false, 4, nullable_bytes(false))(&input[..]);
            let _ = tagged_fields(&input);
            let _ = varlong(&input);
        }
    }
}
