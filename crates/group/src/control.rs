//! Messages to the member task from its helpers (the heartbeat task and commits running in the
//! application's tasks): errors bound to a generation that only the member task may act on.

use mooring_wire::error_code::ErrorCode;

use mooring_client::error::Error;

/// A generation-bound error for the member task. It is ignored if the member has moved to another
/// generation since the request was sent.
#[derive(Debug, Clone)]
pub(crate) struct Control {
    /// Which request got it: `"Heartbeat"` or `"OffsetCommit"`.
    pub(crate) api: &'static str,
    /// The generation the request carried.
    pub(crate) generation: i32,
    /// The member id the request carried.
    pub(crate) member_id: String,
    /// The error.
    pub(crate) code: ErrorCode,
    /// The request failed fatally ([`Error::is_fatal`]: this client cannot encode it, or a
    /// security failure); `code` is then the member's `Failed` code for it.
    pub(crate) failure: Option<Error>,
}
