//! Codec errors: what went wrong turning bytes into messages (`DecodeError`) or messages into bytes
//! (`EncodeError`). Both are plain data so callers can match on them; neither ever carries the
//! input bytes themselves.

use nom::error::{ErrorKind, ParseError};

/// Why a byte sequence could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended before the value did.
    #[error("input ended early: {needed} more byte(s) needed")]
    Truncated { needed: usize },
    /// A length prefix is negative where the field is not nullable.
    #[error("negative length {0} for a non-nullable field")]
    NegativeLength(i64),
    /// A length or count prefix claims more than the input can hold.
    #[error("length {len} exceeds the {remaining} byte(s) left")]
    LengthExceedsInput { len: u64, remaining: usize },
    /// A varint ran past its maximum encoded width.
    #[error("varint longer than {max} bytes")]
    VarintTooLong { max: usize },
    /// A string field is not valid UTF-8.
    #[error("string is not valid UTF-8")]
    InvalidUtf8,
    /// A field holds a value the protocol does not allow (a bad enum value, a bad magic byte, ...).
    #[error("invalid value for {field}: {detail}")]
    InvalidValue { field: &'static str, detail: String },
    /// The message exists, but not at this version (or this crate does not implement it).
    #[error("{api} version {version} is not supported")]
    UnsupportedVersion { api: &'static str, version: i16 },
    /// Bytes were left over after a message that should have consumed the whole frame.
    #[error("{0} trailing byte(s) after the message")]
    TrailingBytes(usize),
    /// A lower-level parser failed without a more specific reason.
    #[error("malformed input ({0:?})")]
    Malformed(ErrorKind),
}

impl ParseError<&[u8]> for DecodeError {
    fn from_error_kind(_input: &[u8], kind: ErrorKind) -> Self {
        match kind {
            ErrorKind::Eof | ErrorKind::Complete => DecodeError::Truncated { needed: 1 },
            other => DecodeError::Malformed(other),
        }
    }

    fn append(_input: &[u8], _kind: ErrorKind, other: Self) -> Self {
        // Keep the innermost, most specific reason.
        other
    }
}

impl From<nom::Err<DecodeError>> for DecodeError {
    fn from(err: nom::Err<DecodeError>) -> Self {
        match err {
            nom::Err::Incomplete(nom::Needed::Size(n)) => {
                DecodeError::Truncated { needed: n.get() }
            }
            nom::Err::Incomplete(nom::Needed::Unknown) => DecodeError::Truncated { needed: 1 },
            nom::Err::Error(e) | nom::Err::Failure(e) => e,
        }
    }
}

/// Why a message could not be encoded at the requested version.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// The message exists, but not at this version.
    #[error("{api} version {version} is not supported")]
    UnsupportedVersion { api: &'static str, version: i16 },
    /// A field holds a non-default value but does not exist at this version: sending the message
    /// would silently drop it.
    #[error("{api} v{version}: field {field} is not present at this version but has a non-default value")]
    FieldNotAtVersion {
        api: &'static str,
        version: i16,
        field: &'static str,
    },
    /// A null was given for a field that is not nullable at this version.
    #[error("{api} v{version}: field {field} is not nullable at this version")]
    NullNotAllowed {
        api: &'static str,
        version: i16,
        field: &'static str,
    },
    /// A string, byte array or array is longer than its length prefix can express.
    #[error("{what} of length {len} is too long for the wire format")]
    TooLong { what: &'static str, len: usize },
    /// A value cannot be represented (for example a record whose offset delta overflows).
    #[error("invalid value for {field}: {detail}")]
    InvalidValue { field: &'static str, detail: String },
}
