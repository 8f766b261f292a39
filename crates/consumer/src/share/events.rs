//! The share consumer's event stream, for the application and the telemetry exporter: the share
//! member's events (joins, assignments, heartbeats, leaving) and the runtime's own — each answer
//! the broker gave to verdicts, each verdict that came after its record's lock ran out, the fatal
//! error that stopped the consumer. Bounded and never waiting, as every Mooring event stream:
//! when it is full an event is dropped and counted
//! ([`ShareConsumer::dropped_events`](super::ShareConsumer::dropped_events)).

use mooring_group::{EventReceiver, GroupEvent};
use mooring_wire::error_code::ErrorCode;

use super::ack::Acknowledge;
use crate::error::ConsumerError;
use crate::TopicPartition;

/// One event of a share consumer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ShareEvent {
    /// From the share member (joins, assignments, heartbeats, fencing, leaving).
    Group(GroupEvent),
    /// The broker answered verdicts of one kind for one share-partition.
    Acknowledged {
        partition: TopicPartition,
        acknowledge: Acknowledge,
        /// The records' offsets, ascending.
        offsets: Vec<i64>,
        /// `None`: taken. Otherwise the broker's refusal (INVALID_RECORD_STATE: the locks had
        /// run out), or `UnknownServerError` for a request that got no answer.
        error: Option<ErrorCode>,
    },
    /// A delivery's lock ran out before its verdict: the broker has handed the record out again
    /// (to another member, or to this one), and that delivery's verdict is not sent.
    LockExpired {
        partition: TopicPartition,
        offset: i64,
        /// Which delivery of the record lost its lock.
        delivery_count: u16,
    },
    /// The consumer is stopping on this error (said once); `kind` is
    /// [`ConsumerError::kind`].
    FatalError {
        kind: &'static str,
        error: ConsumerError,
    },
}

/// The receiving side of [`ShareConsumer::events`](super::ShareConsumer::events).
pub type ShareEvents = EventReceiver<ShareEvent>;
