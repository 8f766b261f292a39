//! The `consumer` group protocol's member (KIP-848, `group.protocol=consumer`): the broker
//! computes assignments, the member heartbeats with ConsumerGroupHeartbeat and reconciles what it
//! is given. One task owns the state machine, written against
//! [`GroupTransport`](crate::GroupTransport) so tests can script every answer; it sits behind the
//! same [`GroupHandle`](crate::GroupHandle), events, listener contract and commit path as
//! the classic member.
//!
//! # States
//!
//! [`ConsumerMemberState`](crate::ConsumerMemberState), as Java's `ConsumerMembershipManager` names them
//! (the snapshot also maps each onto [`MemberState`](crate::MemberState)):
//!
//! ```text
//!  UNSUBSCRIBED --subscribe--> JOINING --epoch--> RECONCILING --revoke, assign--> ACKNOWLEDGING
//!                                ^  |                  ^                               |
//!        (UNRELEASED_INSTANCE_ID)|  v                  +---- new target -- STABLE <----+ answered
//!                  INSTANCE_ID_UNRELEASED
//!  any in the group --FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID / GROUP_ID_NOT_FOUND--> FENCED --lost--> JOINING (epoch 0)
//!  any in the group --max.poll.interval.ms missed--> STALE --leave -1, lost--> JOINING (epoch 0)
//!  any --fatal code--> FATAL --lost; a new subscribe--> JOINING
//!  close / leave / empty subscription --revoked--> LEAVING --epoch -1 or -2--> (closed | UNSUBSCRIBED)
//! ```
//!
//! - The member makes up its id (KIP-1082: a random UUID in Java's form) once and keeps it for its
//!   life, rejoins after fencing included; a v0 coordinator's own id, if it names one, is taken.
//! - The heartbeat interval is the broker's (`heartbeat_interval_ms` of each answer;
//!   `heartbeat.interval.ms` until the first). At most one heartbeat is in flight; one goes at once
//!   when joining, when an acknowledgement is due and when the subscription changes (never inside
//!   a failure's back-off).
//! - A full heartbeat (every field) when joining at epoch 0 and after a heartbeat that failed or
//!   went unanswered; otherwise only what changed, as Java's `HeartbeatState` decides
//!   ([`heartbeat`]): `RebalanceTimeoutMs` = `max.poll.interval.ms`, `RackId` = `client.rack`,
//!   `ServerAssignor` = `group.remote.assignor`, `SubscribedTopicNames` or (v1+)
//!   `SubscribedTopicRegex` for [`subscribe_regex`](crate::GroupHandle::subscribe_regex),
//!   `TopicPartitions` = the owned partitions; `InstanceId` in every heartbeat of a static member.
//!   A regex against a v0-only broker is the encoder's "field absent at this version" error,
//!   fatal (the member stops with it), never retried.
//! - Reconciliation (`member/reconcile.rs`): target topic ids resolved through metadata (refreshed for
//!   unknown ids; partitions of ids still unknown wait and are looked up again each heartbeat
//!   interval and on `metadata_changed`), revoke owned − target (`revoked`, bounded by
//!   [`GroupConfig::listener_timeout`](crate::GroupConfig::listener_timeout); commits made
//!   meanwhile carry the current epoch, which the coordinator keeps until the revocation is
//!   acknowledged), assign target − owned (`assigned`), acknowledge (`TopicPartitions` = owned) in
//!   a heartbeat sent at once. A target arriving meanwhile is reconciled after this one.
//! - Stale: the runtime reports `max.poll.interval.ms` missed ([`poll_interval_exceeded`]). The
//!   member leaves at once with epoch -1 (static or not: the point is that the group rebalances
//!   around it), gives up its partitions through `lost` and rejoins at epoch 0 as soon as `lost`
//!   returns. Java's member rejoins on the application's next `poll()`; a Mooring runtime has no
//!   such call (its fetcher and handlers go on by themselves), and its `lost` is where it stops
//!   the work of the stuck partitions, so the end of `lost` is when processing goes on.
//! - Leaving (`member/leave.rs`): epoch -1 (dynamic member's close, `leave`, `mooring.leave.group.on.close=true`),
//!   -2 (static member's close: the coordinator keeps its assignment for the session timeout, so
//!   the restarted process takes it back), after `revoked`, within the close's deadline.
//!
//! # Events
//!
//! As the classic member's where they apply, with `rebalance_protocol` Cooperative:
//! `RebalanceStarted` (cause `MemberJoined` when subscribing, `EpochFenced` after fencing,
//! `PollIntervalExceeded` after going stale, `SubscriptionChange`, `MetadataChange` when topic
//! ids unknown before are named, else read from the target: `MemberJoined` when it revokes,
//! `MemberLeft` when it only adds), `Joined` on the first epoch of
//! a join, `PartitionsRevoked`/`PartitionsAssigned`/`PartitionsLost` with durations, `Reconciled`
//! with its phases and `RebalanceCompleted` (generation = the member epoch) when the
//! acknowledgement is answered, `RebalanceFailed` when a rebalance under way is cut (fenced,
//! stale, fatal), `Heartbeat` per round trip, `InstanceIdUnreleased` per refused attempt, `Left`.
//! `PhaseTimings`: `join` the join round trips, `revoke` the revoke listener, `assign` the topic
//! id look-ups, `callbacks` the assign listener (`sync` is zero: there is no SyncGroup).
//!
//! # Commits
//!
//! OffsetCommit carries the member epoch (`GenerationIdOrMemberEpoch`) and member id, OffsetFetch
//! (v9+) `MemberId`/`MemberEpoch` while the member is in the group; a commit goes at once in
//! any state that holds an epoch (reconciling included: the runtime's `revoked` commits), and
//! needs OffsetCommit v9+, which the broker demands of consumer-protocol members (older:
//! [`Error::ConsumerProtocolUnsupported`](mooring_client::Error::ConsumerProtocolUnsupported)). See
//! [`offsets`](crate::offsets) for the path both protocols share.
//!
//! # Connections and timeouts
//!
//! Every request goes on the coordinator's general connection, answered within
//! `request.timeout.ms`: the coordinator never holds a ConsumerGroupHeartbeat.
//!
//! # Error table
//!
//! Code: [`reaction`]. "Lost": the listener's `lost` with every owned partition (the epoch is
//! gone: nothing can be committed for them). Anything not listed is the API's last row.
//!
//! | API | error code | reaction |
//! |---|---|---|
//! | ConsumerGroupHeartbeat | NONE | take the epoch, the interval and the target (if any); next heartbeat after the interval |
//! | ConsumerGroupHeartbeat | FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID | lost; → FENCED; rejoin at epoch 0 with the same member id (cause `EpochFenced`) |
//! | ConsumerGroupHeartbeat | GROUP_ID_NOT_FOUND (a heartbeat above epoch 0 whose group the coordinator deleted meanwhile: the member's session expired, the group emptied, and the periodic clean-up or an admin's DeleteGroups removed it) | as UNKNOWN_MEMBER_ID: lost; → FENCED; rejoin at epoch 0, which recreates the group. Java's member fails here (its table's last row); a consumer that dies because its group was cleaned up while it was away would crash-loop a deployment for nothing |
//! | ConsumerGroupHeartbeat | UNRELEASED_INSTANCE_ID (a static member whose instance id the process it replaces has not released) | → INSTANCE_ID_UNRELEASED; `InstanceIdUnreleased` event; join again after `retry.backoff.ms` doubling up to the heartbeat interval (at most 5 s); once `mooring.unreleased.instance.timeout.ms` has passed since the first: → FATAL with [`Error::InstanceIdUnreleased`](mooring_client::Error::InstanceIdUnreleased). Java's member fails at once; a rolling restart must not crash-loop |
//! | ConsumerGroupHeartbeat | COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, NETWORK_EXCEPTION, transport error | rediscover; a full heartbeat after `retry.backoff.ms`; membership kept |
//! | ConsumerGroupHeartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | a full heartbeat after `retry.backoff.ms` |
//! | ConsumerGroupHeartbeat | the broker offers no ConsumerGroupHeartbeat (ApiVersions), or answers UNSUPPORTED_VERSION (Kafka 3.x without the protocol enabled) | lost; → FATAL with [`Error::ConsumerProtocolUnsupported`](mooring_client::Error::ConsumerProtocolUnsupported) ("the broker does not support group.protocol=consumer; use classic"); never retried |
//! | ConsumerGroupHeartbeat | GROUP_AUTHORIZATION_FAILED (or from the FindCoordinator before it), authentication or TLS refused | lost; → FATAL with [`Error::Authorization`](mooring_client::Error::Authorization) naming group and principal (or the SASL/TLS error), said once; a new `subscribe` tries again |
//! | ConsumerGroupHeartbeat | a request this client cannot encode at the version negotiated (a regex at v0) | lost; → FATAL with [`Error::Encode`](mooring_client::Error::Encode); a new `subscribe` tries again |
//! | ConsumerGroupHeartbeat | any other (UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, GROUP_MAX_SIZE_REACHED, INVALID_REQUEST, FENCED_INSTANCE_ID, ...) | lost; → FATAL(code) with the error, `RebalanceFailed`, said once; a new `subscribe` tries again |
//! | leave heartbeat (-1, -2) | NONE | done (`Left` event) |
//! | leave heartbeat | UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH, FENCED_INSTANCE_ID, GROUP_ID_NOT_FOUND | done: not in the group, which is what leaving wanted |
//! | leave heartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, transport error | one retry after `retry.backoff.ms` (rediscovering for coordinator errors), then give up: the session timeout removes the member |
//! | leave heartbeat | any other | `close`/`leave` return the error; the member ends anyway |
//! | OffsetCommit | NONE | done (`Commit` event) |
//! | OffsetCommit | STALE_MEMBER_EPOCH | wait (bounded by the commit's deadline and the rebalance timeout) for the member's next epoch; resend with it what the member still owns, fail naming the partitions that moved |
//! | OffsetCommit | UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH | fail; the member is not told (its heartbeat gets the same answer and reacts) |
//! | OffsetCommit | a negotiated version below 9 | fail with [`Error::ConsumerProtocolUnsupported`](mooring_client::Error::ConsumerProtocolUnsupported), before sending |
//! | OffsetCommit | every other code | as the classic table |
//! | OffsetFetch | STALE_MEMBER_EPOCH | wait for the member's next epoch (bounded by the rebalance timeout), retry with it |
//! | OffsetFetch | UNKNOWN_MEMBER_ID, FENCED_MEMBER_EPOCH | fail |
//! | OffsetFetch | every other code | as the classic table |
//!
//! [`poll_interval_exceeded`]: crate::GroupHandle::poll_interval_exceeded

pub(crate) mod commits;
pub mod heartbeat;
pub(crate) mod member;
pub mod reaction;
mod target;

#[cfg(test)]
mod tests;
