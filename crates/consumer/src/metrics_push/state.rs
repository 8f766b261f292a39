//! What the metrics push learnt, kept in the consumer's shared state across runs (the broker
//! keeps knowing the client by the instance id it gave), and the clock its payloads use.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mooring_wire::primitives::Uuid;

use super::subscription::Subscription;

/// What the reporter tells the rest of the consumer, kept across runs: the broker keeps
/// knowing the client by the instance id it gave.
#[derive(Debug, Default)]
pub(crate) struct PushState {
    inner: Mutex<Known>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Known {
    instance_id: Option<Uuid>,
    interval: Option<Duration>,
    pushes: u64,
}

impl PushState {
    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The client instance id a broker gave, if one did.
    pub(crate) fn instance_id(&self) -> Option<Uuid> {
        self.known().instance_id
    }

    /// The push interval of the last subscription, if one came.
    pub(crate) fn subscription_interval(&self) -> Option<Duration> {
        self.known().interval
    }

    /// Pushes the brokers accepted.
    pub(crate) fn pushes(&self) -> u64 {
        self.known().pushes
    }

    pub(super) fn subscribed(&self, sub: &Subscription) {
        let mut known = self.known();
        known.instance_id = Some(sub.instance_id);
        known.interval = Some(sub.interval);
    }

    pub(super) fn pushed(&self) {
        self.known().pushes += 1;
    }
}

/// Now, in nanoseconds of Unix time.
pub(crate) fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}
