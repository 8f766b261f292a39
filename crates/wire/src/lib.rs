//! mooring-wire: the Kafka wire codec, sans I/O.
//!
//! Bytes in, typed messages out (and back): request/response framing and headers, the primitive
//! types of the Kafka protocol (classic and flexible/compact forms, tagged fields), the request and
//! response messages a consumer needs, RecordBatch v2 with its compression codecs, and the
//! consumer-protocol Subscription/Assignment bytes.
//!
//! This crate must never depend on tokio, on sockets or on any I/O: it turns byte slices into values
//! and values into byte buffers, nothing else. Decoding is written with `nom` complete parsers.

pub mod consumer_protocol;
pub mod error;
pub mod error_code;
pub mod frame;
pub mod messages;
pub mod offsets_topic;
pub mod primitives;
pub mod records;

pub use error::{DecodeError, EncodeError};
