//! Every request the client sends, each built by one named function of the version negotiated
//! with the broker (the highest both sides implement, from the 4.x floor of KIP-896 up to the
//! broker's maximum, which is lower on a 3.x broker).
//!
//! The wire encoder is strict: a field that does not exist at the version sent but holds a
//! non-default value is an encoding error, never silently dropped. So each builder fills a field
//! only at the versions that have it, and `tests.rs` builds every request with the values the
//! runtime really sets and encodes it at every version of its range. The builders take the
//! version from the closures handed to `Connection::call`, `Client::send_to`, `Client::send_any`
//! and `GroupTransport::call_coordinator`; none is built before the version is known.

mod connection;
mod offsets;
mod telemetry;

#[cfg(test)]
mod tests;

pub use connection::metadata;
pub(crate) use connection::{api_versions, find_coordinator, sasl_authenticate, sasl_handshake};
pub use offsets::{describe_groups, offset_fetch};
pub(crate) use offsets::{list_groups, list_offsets};
pub use telemetry::{get_telemetry_subscriptions, push_telemetry, TelemetryPush};

/// A duration in whole milliseconds for an `int32` field, capped at `i32::MAX`.
pub fn millis(d: std::time::Duration) -> i32 {
    i32::try_from(d.as_millis()).unwrap_or(i32::MAX)
}
