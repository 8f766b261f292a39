//! The classic group protocol's member (JoinGroup, SyncGroup, Heartbeat, LeaveGroup): one task
//! owning the state machine of the seeds, UNJOINED → PREPARING_REBALANCE → COMPLETING_REBALANCE → STABLE, written against
//! [`GroupTransport`](crate::GroupTransport) so tests can script every response.
//!
//! - Heartbeats on their own task and timer (KIP-62), never waiting on the member task or the
//!   application ([`heartbeat`]); the rebalance timeout sent in JoinGroup is `max.poll.interval.ms`.
//! - Generation fencing: Heartbeat, SyncGroup and OffsetCommit carry generation and member id;
//!   each error code has one reaction (table below).
//! - KIP-394: MEMBER_ID_REQUIRED → JoinGroup again at once with the id given.
//! - KIP-345 static membership: `group.instance.id` in JoinGroup (v5+), SyncGroup (v3+),
//!   Heartbeat (v3+), OffsetCommit (v7+) and LeaveGroup (v3+); closing a static member sends no
//!   LeaveGroup unless asked; FENCED_INSTANCE_ID stops the member, tells the app (a `Fenced`
//!   event, `MemberState::Fenced`, `Error::FencedInstanceId` on commits) and follows
//!   [`FencedPolicy`](crate::FencedPolicy).
//! - KIP-429 eager and cooperative rebalancing (cooperative iff every configured assignor supports
//!   it); KIP-814 `skip_assignment` for a static leader rejoining a stable group.
//! - Rebalance callbacks through [`RebalanceListener`](crate::RebalanceListener), awaited with a bound ([`listener`](crate::listener)).
//! - Typed, timed events over a bounded channel that never blocks the member ([`events`](crate::events)).
//! - Each request has its own timeout, and the coordinator may hold JoinGroup and SyncGroup, so
//!   they go on a connection of their own (table below).
//!
//! # Connections and timeouts
//!
//! The coordinator holds a JoinGroup until every member has rejoined and a follower's SyncGroup
//! until the leader's arrives, each for up to the rebalance timeout (`max.poll.interval.ms`), and a
//! broker answers one connection's requests one at a time, in order. So JoinGroup and SyncGroup
//! go on a group connection of their own to the coordinator
//! ([`CoordinatorCall::group`](mooring_client::CoordinatorCall::group)), timed by the rebalance;
//! a held JoinGroup never delays a commit or heartbeat, and a timed-out one closes only the group
//! connection (the cost: one connection more per member). Heartbeats pause during JoinGroup, by
//! design: the coordinator does not expire a member whose JoinGroup it holds.
//!
//! | API | connection | timeout |
//! |---|---|---|
//! | JoinGroup | group | rebalance timeout + `request.timeout.ms` ([`GroupConfig::join_timeout`](crate::GroupConfig::join_timeout)) |
//! | SyncGroup | group | rebalance timeout, at least `request.timeout.ms` ([`GroupConfig::sync_timeout`](crate::GroupConfig::sync_timeout)) |
//! | Heartbeat, OffsetCommit, OffsetFetch, LeaveGroup, DescribeGroups | general | `request.timeout.ms` |
//!
//! # Error table
//!
//! Reactions, per API and error code (code: [`reaction`](crate::reaction)). "Lost" means the listener's `lost` is
//! called with every owned partition (the generation is gone, nothing can be committed for them).
//! Anything not listed is the API's last row.
//!
//! | API | error code | reaction |
//! |---|---|---|
//! | JoinGroup | NONE | take generation, member id, leader, protocol; → COMPLETING_REBALANCE; leader assigns; SyncGroup |
//! | JoinGroup | MEMBER_ID_REQUIRED (KIP-394) | take the member id from the response, JoinGroup again at once |
//! | JoinGroup | UNKNOWN_MEMBER_ID | lost; reset member id and generation; JoinGroup again at once |
//! | JoinGroup | ILLEGAL_GENERATION | lost; reset generation (keep member id); JoinGroup again at once |
//! | JoinGroup | REBALANCE_IN_PROGRESS, COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | JoinGroup again after `retry.backoff.ms` |
//! | JoinGroup | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport error | forget the coordinator (rediscover), JoinGroup again after `retry.backoff.ms` |
//! | JoinGroup | FENCED_INSTANCE_ID | lost; → FENCED; `Fenced` event; [`FencedPolicy`](crate::FencedPolicy) |
//! | JoinGroup | GROUP_AUTHORIZATION_FAILED (from JoinGroup, or from the FindCoordinator before it) | lost; → FAILED(GROUP_AUTHORIZATION_FAILED) with [`Error::Authorization`](mooring_client::Error::Authorization) naming group and principal in [`MemberSnapshot::failure`](crate::MemberSnapshot::failure), said once (a warning); nothing retried; a new `subscribe` tries again |
//! | JoinGroup | authentication refused (SASL: [`Error::Authentication`](mooring_client::Error::Authentication)), TLS certificate refused ([`Error::Tls`](mooring_client::Error::Tls)), while connecting to the coordinator | as the row above, → FAILED(the SASL code; SASL_AUTHENTICATION_FAILED for TLS) with the error |
//! | JoinGroup | any other (INVALID_SESSION_TIMEOUT, INCONSISTENT_GROUP_PROTOCOL, INVALID_GROUP_ID, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_VERSION, ...) | lost; → FAILED(code) with the error, `RebalanceFailed` event; a new `subscribe` tries again |
//! | SyncGroup | NONE | → STABLE; decode the assignment; callbacks; cooperative: rejoin at once if anything was revoked |
//! | SyncGroup | REBALANCE_IN_PROGRESS | JoinGroup again at once, keeping member id and generation |
//! | SyncGroup | UNKNOWN_MEMBER_ID | lost; reset member id and generation; JoinGroup again at once |
//! | SyncGroup | ILLEGAL_GENERATION | lost; reset generation; JoinGroup again at once |
//! | SyncGroup | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | JoinGroup again after `retry.backoff.ms` |
//! | SyncGroup | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport error | rediscover; JoinGroup again after `retry.backoff.ms` |
//! | SyncGroup | FENCED_INSTANCE_ID | as JoinGroup |
//! | SyncGroup | GROUP_AUTHORIZATION_FAILED, authentication or TLS refused | as JoinGroup |
//! | SyncGroup | any other (INCONSISTENT_GROUP_PROTOCOL, ...) | as JoinGroup: → FAILED(code) |
//! | Heartbeat | NONE | next heartbeat after `heartbeat.interval.ms` |
//! | Heartbeat | REBALANCE_IN_PROGRESS | rejoin (cause `MemberJoined`; eager members revoke first); heartbeats go on meanwhile |
//! | Heartbeat | UNKNOWN_MEMBER_ID | heartbeats stop; lost; reset member id and generation; rejoin (cause `SessionTimeout`) |
//! | Heartbeat | ILLEGAL_GENERATION | heartbeats stop; lost; reset generation; rejoin (cause `Fenced`) |
//! | Heartbeat | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, a code Kafka does not define (a damaged answer) | next heartbeat after `retry.backoff.ms` |
//! | Heartbeat | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport error | rediscover; next heartbeat after `retry.backoff.ms`; membership kept |
//! | Heartbeat | FENCED_INSTANCE_ID | as JoinGroup |
//! | Heartbeat | GROUP_AUTHORIZATION_FAILED, authentication or TLS refused | heartbeats stop; lost; → FAILED as JoinGroup, with the typed error |
//! | Heartbeat | any other | heartbeats stop; → FAILED(code) |
//! | LeaveGroup | NONE | done (`Left` event) |
//! | LeaveGroup | UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID (top level or the member's entry) | done: the member is not in the group, which is what leaving wanted |
//! | LeaveGroup | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, transport error | one retry after `retry.backoff.ms` (rediscovering for coordinator errors), then give up: the session timeout removes the member |
//! | LeaveGroup | any other | `close`/`leave` return the error; the member ends anyway |
//! | OffsetCommit | NONE | done (`Commit` event) |
//! | OffsetCommit | REBALANCE_IN_PROGRESS | wait (≤ rebalance timeout) until the member is stable in a newer generation; resend with it if every partition is still owned, else fail naming the revoked ones |
//! | OffsetCommit | UNKNOWN_MEMBER_ID | fail; if it named the member's current generation: lost, reset member id and generation, rejoin |
//! | OffsetCommit | ILLEGAL_GENERATION | fail; if it named the member's current generation: lost, reset generation, rejoin. Sent while the member's JoinGroup was in flight (the generation moved on under it): as REBALANCE_IN_PROGRESS |
//! | OffsetCommit | FENCED_INSTANCE_ID | fail with `Error::FencedInstanceId`; the member is fenced as for JoinGroup |
//! | OffsetCommit | COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT, UNKNOWN_TOPIC_OR_PARTITION, UNSTABLE_OFFSET_COMMIT | resend the failed partitions after `retry.backoff.ms`, at most `mooring.commit.retries` times |
//! | OffsetCommit | UNKNOWN_TOPIC_ID (v10+, topics named by id) | as the row above, with the topic ids fetched afresh from metadata (the topic may have been re-created) |
//! | OffsetCommit | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport error | rediscover, then as the row above |
//! | OffsetCommit | GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED | fail at once with [`Error::Authorization`](mooring_client::Error::Authorization) naming the group, or the refused partitions' topics, and the principal (fatal: the consumer ends `run` with it); the member is not affected |
//! | OffsetCommit | any other (OFFSET_METADATA_TOO_LARGE, INVALID_COMMIT_OFFSET_SIZE, ...) | fail; the member is not affected |
//! | OffsetFetch | NONE | offsets (`None` where nothing is committed) |
//! | OffsetFetch | UNSTABLE_OFFSET_COMMIT (`require_stable`, KIP-447), COORDINATOR_LOAD_IN_PROGRESS, REQUEST_TIMED_OUT | retry after `retry.backoff.ms`, bounded |
//! | OffsetFetch | UNKNOWN_TOPIC_ID (v10+, topics named by id) | as the row above, with the topic ids fetched afresh from metadata |
//! | OffsetFetch | NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE, NETWORK_EXCEPTION, transport error | rediscover, retry, bounded |
//! | OffsetFetch | GROUP_AUTHORIZATION_FAILED (group level), TOPIC_AUTHORIZATION_FAILED (partition level) | fail at once with [`Error::Authorization`](mooring_client::Error::Authorization) naming group or topics and the principal (fatal) |
//! | OffsetFetch | any other | fail |
//!

pub mod heartbeat;
pub(crate) mod member;
pub(crate) mod protocol;

#[cfg(test)]
pub(crate) mod tests;
