//! Share groups (KIP-932): queue semantics for services that process records one by one.
//!
//! The members of a share group fetch from the same partitions; the broker hands each record to
//! one member under an acquisition lock, and the member acknowledges each record on its own:
//! accept (processed), release (delivered again, to any member, until the group's
//! `share.delivery.count.limit` archives it), reject (poison: archived, or sent to the group's
//! dead-letter topic). There is no offset to commit past an unfinished record, and parallelism is
//! not bounded by the partition count. Kafka 4.1 and later run share groups (acknowledgement
//! renewal, KIP-1222, from 4.2); 3.x brokers have none, and [`ShareConsumer::run`] stops at once
//! with [`Error::ShareGroupsUnsupported`](mooring_client::Error::ShareGroupsUnsupported) there.
//!
//! - [`ShareConsumer`]: `subscribe`, [`run`](ShareConsumer::run) a
//!   [`Handler`](crate::processing::Handler) (the same handler type as
//!   [`Consumer::run`](crate::Consumer::run): `Ok` accepts, an error goes to the failure policy),
//!   or [`stream`](ShareConsumer::stream) [`ShareDelivery`]s to accept, release or reject.
//! - [`ShareConsumerConfig`]: Kafka's property names (`share.acknowledgement.mode`,
//!   `share.acquire.mode`, `max.poll.records`, ...).
//! - [`RejectRecord`] and [`ReleaseRecord`]: a handler's error that says its record's verdict.
//! - [`ShareStats`]: records acquired and their verdicts, renewals, locks that ran out.
//!
//! While a record is held its lock is renewed (at half the lock duration the broker says, for at
//! most `max.poll.interval.ms`), so a handler slower than `share.record.lock.duration.ms` keeps
//! its record. Each record's [`delivery_count`](crate::processing::ConsumerRecord::delivery_count)
//! says how many times it has been delivered.
//!
//! Order is not a share group's promise (see [`ShareConsumer`]). Memory is bounded as the
//! consumer's: `mooring.memory.max.bytes` for record data, `mooring.buffer.max.records` for the
//! records held.
//!
//! Parts: `config.rs` (keys), `consumer.rs` (the public type and `run`'s lifecycle),
//! `fetcher.rs` (sessions, requests, answers, renewals; its error table), `session.rs` (one
//! broker's share session, sans I/O), `ledger.rs` (held records and their locks), `records.rs`
//! (acquired records out of an answer), `ack.rs` (verdicts on the wire), `dispatch.rs` (the
//! workers and the failure policy), `stream.rs` (deliveries), `stats.rs` (counters), `events.rs`
//! (the event stream). The share
//! member itself is `mooring_group::share`.

mod ack;
mod config;
mod consumer;
mod dispatch;
mod events;
mod fetcher;
mod ledger;
mod queue;
mod records;
mod session;
mod shared;
mod stats;
mod stream;

pub use ack::Acknowledge;
pub use config::{
    AcknowledgementMode, AcquireMode, ShareConsumerConfig, ShareFailurePolicy, SHARE_CONSUMER_KEYS,
};
pub use consumer::ShareConsumer;
pub use dispatch::{RejectRecord, ReleaseRecord};
pub use events::{ShareEvent, ShareEvents};
pub use stats::{ShareStats, DELIVERY_COUNT_BUCKETS};
pub use stream::{ShareDelivery, ShareRecordStream};
