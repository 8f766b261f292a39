//! The share-group member (KIP-932): the broker assigns share-partitions, which several members
//! consume at once; each record is handed to one member under an acquisition lock and
//! acknowledged on its own (by the runtime's share fetcher, not by this member). The member's
//! part is the membership: it heartbeats with ShareGroupHeartbeat, takes the assignment the
//! coordinator gives and tells the runtime, through the same [`RebalanceListener`] contract as
//! the other two members, which share-partitions to fetch from. One task owns the state machine,
//! written against [`GroupTransport`](crate::GroupTransport) so tests can script every answer;
//! it sits behind the same [`GroupHandle`](crate::GroupHandle) and events.
//!
//! [`RebalanceListener`]: crate::RebalanceListener
//!
//! # States
//!
//! [`ShareMemberState`](crate::ShareMemberState), as Java's `ShareMembershipManager` names them
//! (the snapshot also maps each onto [`MemberState`](crate::MemberState)):
//!
//! ```text
//!  UNSUBSCRIBED --subscribe--> JOINING --epoch--> STABLE <--taken-- RECONCILING
//!                                 |                  |  new assignment    ^
//!                                 |                  +--------------------+
//!  any in the group --FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID / GROUP_ID_NOT_FOUND--> FENCED --lost--> JOINING (epoch 0)
//!  any --fatal code--> FATAL --lost; a new subscribe--> JOINING
//!  close / leave / empty subscription --revoked--> LEAVING --epoch -1--> (closed | UNSUBSCRIBED)
//! ```
//!
//! - The member makes up its id once (a random UUID in Java's form) and keeps it for its life,
//!   rejoins after fencing included.
//! - The heartbeat interval is the broker's (`heartbeat_interval_ms` of each answer;
//!   `group.share.heartbeat.interval.ms`, 5 s by default, or the group's
//!   `share.heartbeat.interval.ms`); at most one heartbeat is in flight; one goes at once when
//!   joining and when the subscription changes (never inside a failure's back-off).
//! - A heartbeat says `RackId` (`client.rack`) once per membership and `SubscribedTopicNames`
//!   when joining and whenever it changed; after a heartbeat that failed or went unanswered,
//!   both again (`share/heartbeat.rs`).
//! - An answer's `Assignment`, when present, is the member's whole assignment: its topic ids are
//!   resolved to names through metadata (ids still unknown are looked up again each heartbeat
//!   interval and on `metadata_changed`), then `revoked` (what it no longer holds) and `assigned`
//!   (what it gains) are called, bounded by
//!   [`GroupConfig::listener_timeout`](crate::GroupConfig::listener_timeout). There is nothing
//!   to acknowledge and nothing to commit: records acquired stay the member's until acknowledged
//!   or until their acquisition lock expires, whoever holds the partition.
//! - `max.poll.interval.ms` is not the member's business: a stuck handler's record lock expires and
//!   the record goes to another member ([`poll_interval_exceeded`] does nothing).
//! - Leaving: epoch -1 on `close`, `leave` or an empty subscription, after `revoked`.
//!
//! # Events
//!
//! As the `consumer` protocol's where they apply: `RebalanceStarted` (cause `MemberJoined` when
//! subscribing, `EpochFenced` after fencing, `SubscriptionChange`, `MetadataChange` when topic ids
//! unknown before are named, else read from the assignment: `MemberJoined` when it takes
//! partitions away or brings the member its first, `MemberLeft` when it only adds to what the
//! member held), `Joined` on the first epoch of a join,
//! `PartitionsRevoked`/`PartitionsAssigned`/`PartitionsLost`, `Reconciled` and
//! `RebalanceCompleted` (generation = the member epoch) once an assignment is taken (a join
//! answered with nothing completes with the member's first share-partitions: one join, one
//! rebalance),
//! `RebalanceFailed` when fencing or a fatal error cuts one, `Heartbeat` per round trip, `Left`.
//!
//! # Error table
//!
//! Code: [`reaction`]. "Lost": the listener's `lost` with every owned partition. Anything not
//! listed is the API's last row.
//!
//! | API | error code | reaction |
//! |---|---|---|
//! | ShareGroupHeartbeat | NONE | take the epoch, the interval and the assignment (if any); next heartbeat after the interval |
//! | ShareGroupHeartbeat | FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, GROUP_ID_NOT_FOUND | lost; → FENCED; rejoin at epoch 0 with the same member id (cause `EpochFenced`) |
//! | ShareGroupHeartbeat | COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, NETWORK_EXCEPTION, transport error | rediscover; a full heartbeat after `retry.backoff.ms`; membership kept |
//! | ShareGroupHeartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | a full heartbeat after `retry.backoff.ms` |
//! | ShareGroupHeartbeat | the broker offers no ShareGroupHeartbeat v1 (ApiVersions: Kafka 3.x, 4.0's early access, `share.version` off), or answers UNSUPPORTED_VERSION | lost; → FATAL with [`Error::ShareGroupsUnsupported`](mooring_client::Error::ShareGroupsUnsupported); never retried |
//! | ShareGroupHeartbeat | GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED (or from the FindCoordinator before it), authentication or TLS refused | lost; → FATAL with [`Error::Authorization`](mooring_client::Error::Authorization) naming group or topics and the principal (or the SASL/TLS error), said once; a new `subscribe` tries again |
//! | ShareGroupHeartbeat | any other (GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, ...) | lost; → FATAL(code) with the error, `RebalanceFailed`, said once; a new `subscribe` tries again |
//! | leave heartbeat (-1) | NONE | done (`Left` event) |
//! | leave heartbeat | UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, GROUP_ID_NOT_FOUND | done: not in the group, which is what leaving wanted |
//! | leave heartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, transport error | one retry after `retry.backoff.ms` (rediscovering for coordinator errors), then give up: the session timeout removes the member |
//! | leave heartbeat | any other | `close`/`leave` return the error; the member ends anyway |
//!
//! [`poll_interval_exceeded`]: crate::GroupHandle::poll_interval_exceeded

pub(crate) mod heartbeat;
pub(crate) mod member;
pub mod reaction;

#[cfg(test)]
mod tests;
