//! The commands a [`GroupHandle`](super::GroupHandle) sends to its member task, whichever group
//! protocol the task speaks.

use std::collections::BTreeSet;
use std::time::Duration;

use tokio::sync::oneshot;
use tokio::time::Instant;

use mooring_client::error::Result;

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

/// A pending end of the member: `leave` always leaves the group, `close` as configured (a static
/// member stays in it); all of it (the revoke listener, the leave) by `deadline`.
#[derive(Debug)]
pub(crate) struct Ending {
    pub(crate) force_leave: bool,
    pub(crate) reply: Option<oneshot::Sender<Result<()>>>,
    pub(crate) deadline: Instant,
}

impl Ending {
    /// What `Command::Leave` asks.
    pub(crate) fn leave(reply: oneshot::Sender<Result<()>>, deadline: Instant) -> Ending {
        Ending {
            force_leave: true,
            reply: Some(reply),
            deadline,
        }
    }

    /// What `Command::Close` asks.
    pub(crate) fn close(reply: oneshot::Sender<Result<()>>, deadline: Instant) -> Ending {
        Ending {
            force_leave: false,
            reply: Some(reply),
            deadline,
        }
    }

    /// Every handle is gone: close as configured, within `timeout`, answering no one.
    pub(crate) fn handles_gone(timeout: Duration) -> Ending {
        Ending {
            force_leave: false,
            reply: None,
            deadline: Instant::now() + timeout,
        }
    }
}

/// When a listener call stops being waited for: its own `bound`, or sooner a pending end's
/// deadline or the close's (`closing_by`).
pub(crate) fn listener_until(
    bound: Instant,
    ending: Option<&Ending>,
    closing_by: Option<Instant>,
) -> Instant {
    [ending.map(|e| e.deadline), closing_by]
        .into_iter()
        .flatten()
        .fold(bound, Instant::min)
}
