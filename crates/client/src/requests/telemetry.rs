//! Requests of client metrics push (KIP-714): GetTelemetrySubscriptions, which asks a broker
//! what to push (and gives the client its instance id), and PushTelemetry, which carries the
//! metrics. Both exist at v0 only so far; the builders take the version all the same.

use bytes::Bytes;
use mooring_wire::messages::{GetTelemetrySubscriptionsRequest, PushTelemetryRequest};
use mooring_wire::primitives::Uuid;
use mooring_wire::records::Compression;

/// GetTelemetrySubscriptions for the client `instance_id` (the zero UUID before the broker gave
/// one: the broker then assigns it).
pub fn get_telemetry_subscriptions(
    _version: i16,
    instance_id: Uuid,
) -> GetTelemetrySubscriptionsRequest {
    GetTelemetrySubscriptionsRequest {
        client_instance_id: instance_id,
        ..Default::default()
    }
}

/// What one PushTelemetry carries.
#[derive(Debug, Clone)]
pub struct TelemetryPush {
    /// The client's instance id, as the broker gave it.
    pub instance_id: Uuid,
    /// The subscription the metrics answer.
    pub subscription_id: i32,
    /// The client's last push (it is closing).
    pub terminating: bool,
    /// The codec of `metrics`.
    pub compression: Compression,
    /// The OTLP `MetricsData`, compressed.
    pub metrics: Bytes,
}

/// PushTelemetry of `push`.
pub fn push_telemetry(_version: i16, push: &TelemetryPush) -> PushTelemetryRequest {
    PushTelemetryRequest {
        client_instance_id: push.instance_id,
        subscription_id: push.subscription_id,
        terminating: push.terminating,
        compression_type: i8::try_from(push.compression.id()).unwrap_or(0),
        metrics: push.metrics.clone(),
        ..Default::default()
    }
}
