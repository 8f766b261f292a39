//! The commands a [`GroupHandle`](super::GroupHandle) sends to its member task, whichever group
//! protocol the task speaks.

use std::collections::BTreeSet;

use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::error::Result;

/// Commands from the handle.
#[derive(Debug)]
pub(crate) enum Command {
    Subscribe(BTreeSet<String>),
    /// A broker-side regular expression subscription (`consumer` protocol only: the handle
    /// refuses it for a classic member).
    SubscribeRegex(String),
    MetadataChanged,
    PollIntervalExceeded,
    Leave {
        reply: oneshot::Sender<Result<()>>,
        deadline: Instant,
    },
    Close {
        reply: oneshot::Sender<Result<()>>,
        deadline: Instant,
    },
}
