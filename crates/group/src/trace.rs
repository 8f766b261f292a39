//! `tracing` spans of a rebalance, for OpenTelemetry (the consumer's `otel` module installs the
//! layer): a `rebalance` span per rebalance with a child per phase — `join` and `sync` (one per
//! attempt), `partitions_revoked`, `partitions_assigned`, `partitions_lost` (the listener runs
//! inside, so its own spans, such as the commit of revoked partitions, nest under them). A
//! `partitions_lost` outside a rebalance (heartbeat errors) is a root span.
//!
//! All on target `mooring::trace` at level `INFO`; without a subscriber the macros return disabled
//! spans and recording on them does nothing. Spans only: no behaviour depends on them.

use tracing::field::Empty;
use tracing::Span;

use super::events::RebalanceCause;
use crate::assignor::RebalanceProtocol;
use mooring_wire::error_code::ErrorCode;

/// The target of every trace span of the runtime (the consumer's `otel::TARGET`).
pub(crate) const TARGET: &str = "mooring::trace";

pub(crate) fn rebalance(
    group: &str,
    cause: RebalanceCause,
    protocol: RebalanceProtocol,
    generation: i32,
) -> Span {
    tracing::info_span!(
        target: TARGET,
        "rebalance",
        "messaging.system" = "kafka",
        "messaging.consumer.group.name" = group,
        "mooring.rebalance.cause" = cause.as_str(),
        "mooring.rebalance.protocol" = ?protocol,
        "mooring.generation.before" = generation,
        "mooring.generation" = Empty,
        "mooring.rebalance.outcome" = Empty,
    )
}

/// How the rebalance ended: `completed` (stable in `generation`) or `stopped` (closing, fenced or
/// failed for good).
pub(crate) fn rebalance_ended(span: &Span, completed: bool, generation: i32) {
    if completed {
        span.record("mooring.rebalance.outcome", "completed");
        span.record("mooring.generation", generation);
    } else {
        span.record("mooring.rebalance.outcome", "stopped");
    }
}

/// A span of one round trip to the coordinator (`join`, `sync`): span kind client.
macro_rules! round_trip {
    ($name:literal) => {
        tracing::info_span!(
            target: TARGET,
            $name,
            "otel.kind" = "client",
            "otel.status_code" = Empty,
            "error.type" = Empty,
            "mooring.error_code" = Empty,
            "mooring.generation" = Empty,
        )
    };
}

/// One JoinGroup round trip.
pub(crate) fn join() -> Span {
    round_trip!("join")
}

/// One SyncGroup round trip.
pub(crate) fn sync() -> Span {
    round_trip!("sync")
}

/// The round trip's answer: an error code with the generation it names. `NONE` is success, and
/// so is MEMBER_ID_REQUIRED (KIP-394: a new member's first JoinGroup always gets it).
pub(crate) fn answered(span: &Span, code: ErrorCode, generation: i32) {
    span.record("mooring.generation", generation);
    if code == ErrorCode::None {
        return;
    }
    span.record("mooring.error_code", code.name());
    if code != ErrorCode::MemberIdRequired {
        span.record("error.type", code.name());
        span.record("otel.status_code", "ERROR");
    }
}

/// The round trip failed in transport.
pub(crate) fn transport_failed(span: &Span) {
    span.record("error.type", "transport");
    span.record("otel.status_code", "ERROR");
}

/// A span of one rebalance listener call, with the number of partitions it names (as `i64`:
/// `tracing-opentelemetry` turns unsigned values into strings).
macro_rules! callback {
    ($name:literal, $partitions:expr) => {
        tracing::info_span!(
            target: TARGET,
            $name,
            "mooring.partitions" = i64::try_from($partitions).unwrap_or(i64::MAX),
            "mooring.timed_out" = Empty,
        )
    };
}

/// The listener's `revoked`.
pub(crate) fn revoked(partitions: usize) -> Span {
    callback!("partitions_revoked", partitions)
}

/// The listener's `assigned`.
pub(crate) fn assigned(partitions: usize) -> Span {
    callback!("partitions_assigned", partitions)
}

/// The listener's `lost`.
pub(crate) fn lost(partitions: usize) -> Span {
    callback!("partitions_lost", partitions)
}

/// Whether the listener call ran past the rebalance timeout.
pub(crate) fn callback_ended(span: &Span, timed_out: bool) {
    span.record("mooring.timed_out", timed_out);
}
