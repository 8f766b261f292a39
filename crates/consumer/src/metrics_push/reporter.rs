//! The reporter task: asks a broker for the subscription, then pushes every push interval, and
//! once more, marked terminating, when the consumer closes (KIP-714's client state machine, as
//! Java's `ClientTelemetryReporter` runs it).
//!
//! - The subscription is asked of any live connection of the fetch client (Java asks the
//!   least-loaded node), with the instance id the broker gave before (the zero UUID at first).
//!   A broker that does not list GetTelemetrySubscriptions in its ApiVersions (it has no client
//!   metrics receiver) ends the task: nothing is ever pushed.
//! - No metric asked for: ask again after the push interval, push nothing.
//! - The first push of a subscription comes after 0.5–1.5 × the interval (so a fleet started at
//!   once does not push at once), the next ones every interval, on the same connection; if it
//!   was lost, the subscription is asked for again (of another broker).
//! - An error code has one reaction ([`reaction`]); a transport failure asks for the
//!   subscription again after the interval (30 s before any is known).

use std::time::Duration;

use bytes::Bytes;
use mooring_client::conn::Connection;
use mooring_client::requests::{get_telemetry_subscriptions, push_telemetry, TelemetryPush};
use mooring_client::Client;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::GetTelemetrySubscriptionsRequest;
use tokio::sync::oneshot;
use tokio::time::Instant;

use super::otlp::Encoder;
use super::sample::Sources;
use super::state::unix_nanos;
use super::subscription::{reaction, Reaction, Refused, Subscription};

/// The wait after a transport failure before any subscription is known.
const RETRY_UNSUBSCRIBED: Duration = Duration::from_secs(30);

/// Where the reporter stands.
#[derive(Debug)]
enum State {
    /// Ask for a subscription next.
    Unsubscribed,
    /// Push next, on the connection the subscription came from.
    Subscribed(Subscription, Connection),
}

/// What comes after a step.
#[derive(Debug)]
enum Next {
    Wait(Duration, State),
    Stop,
}

/// The reporter's own state (see the module docs).
#[derive(Debug)]
pub(crate) struct Reporter {
    pub(crate) client: Client,
    pub(crate) sources: Sources,
    pub(crate) encoder: Encoder,
}

impl Reporter {
    /// Runs until the broker offers nothing, or `terminate` brings the close's deadline or is
    /// dropped. The close cuts short whatever step is under way (a wait, a request, a broker
    /// that does not answer); if a subscription is held, a terminating push follows by the
    /// deadline.
    pub(crate) async fn run(mut self, mut terminate: oneshot::Receiver<Instant>) {
        // The subscription is asked on a connection the fetch client already holds: none of its
        // own at start, before the client has met the cluster.
        let mut updates = self.client.metadata_updates();
        tokio::select! {
            _ = updates.wait_for(|m| !m.brokers.is_empty()) => {}
            _ = &mut terminate => return,
        }
        let mut next = Next::Wait(Duration::ZERO, State::Unsubscribed);
        loop {
            let (wait, state) = match next {
                Next::Wait(wait, state) => (wait, state),
                Next::Stop => return,
            };
            let held = match &state {
                State::Subscribed(sub, conn) => Some((sub.clone(), conn.clone())),
                State::Unsubscribed => None,
            };
            let step = tokio::select! {
                step = self.step(wait, state) => Ok(step),
                deadline = &mut terminate => Err(deadline.ok()),
            };
            let closing = match step {
                Ok(step) => {
                    next = step;
                    continue;
                }
                Err(deadline) => deadline,
            };
            if let (Some(deadline), Some((sub, conn))) = (closing, held) {
                let push = self.push(sub, conn, true);
                if tokio::time::timeout_at(deadline, push).await.is_err() {
                    tracing::debug!("metrics push: no time left for the terminating push");
                }
            }
            return;
        }
    }

    /// Waits `wait`, then takes the step `state` calls for.
    async fn step(&mut self, wait: Duration, state: State) -> Next {
        tokio::time::sleep(wait).await;
        match state {
            State::Unsubscribed => self.subscribe().await,
            State::Subscribed(sub, conn) => self.push(sub, conn, false).await,
        }
    }

    async fn subscribe(&mut self) -> Next {
        let known = self.sources.shared.metrics_push.subscription_interval();
        let retry = known.unwrap_or(RETRY_UNSUBSCRIBED);
        let conn = match self.client.any_connection().await {
            Ok(conn) => conn,
            Err(e) => {
                tracing::debug!(error = %e, "metrics push: no broker to ask for a subscription");
                return Next::Wait(retry, State::Unsubscribed);
            }
        };
        if conn.version::<GetTelemetrySubscriptionsRequest>().is_err() {
            tracing::info!(broker = conn.broker(), "metrics push: the broker takes no client metrics (no GetTelemetrySubscriptions); none are pushed");
            return Next::Stop;
        }
        let instance_id = self
            .sources
            .shared
            .metrics_push
            .instance_id()
            .unwrap_or_default();
        let answer = match conn
            .call(|v| get_telemetry_subscriptions(v, instance_id))
            .await
        {
            Ok(answer) => answer,
            Err(e) => {
                tracing::debug!(error = %e, "metrics push: GetTelemetrySubscriptions failed");
                return Next::Wait(retry, State::Unsubscribed);
            }
        };
        match Subscription::from_answer(&answer) {
            Ok(sub) => {
                let shared = &self.sources.shared;
                shared.metrics_push.subscribed(&sub);
                if sub.selector == super::subscription::Selector::Nothing {
                    tracing::debug!("metrics push: the subscription asks for no metric");
                    return Next::Wait(sub.interval, State::Unsubscribed);
                }
                tracing::info!(instance_id = %sub.instance_id, interval_ms = sub.interval.as_millis() as u64, "metrics push: subscribed");
                Next::Wait(jittered(sub.interval), State::Subscribed(sub, conn))
            }
            Err(Refused::Error(code)) => react(code, known),
            Err(Refused::NoInstanceId) => {
                tracing::warn!(
                    broker = conn.broker(),
                    "metrics push: the broker gave no client instance id; pushing nothing"
                );
                Next::Stop
            }
        }
    }

    async fn push(&mut self, sub: Subscription, conn: Connection, terminating: bool) -> Next {
        if !conn.is_usable() {
            return Next::Wait(Duration::ZERO, State::Unsubscribed);
        }
        let metrics = self.sources.sample();
        let now = unix_nanos();
        let (payload, count) = match self.encoder.payload(&metrics, &sub, now) {
            Ok(made) => made,
            Err(e) => {
                tracing::warn!(error = %e, "metrics push: no payload this time");
                return Next::Wait(sub.interval, State::Subscribed(sub, conn));
            }
        };
        let push = TelemetryPush {
            instance_id: sub.instance_id,
            subscription_id: sub.id,
            terminating,
            compression: sub.compression,
            metrics: Bytes::from(payload),
        };
        match conn.call(|v| push_telemetry(v, &push)).await {
            Ok(answer) => match ErrorCode::from(answer.error_code) {
                ErrorCode::None => {
                    self.encoder.accepted(&metrics, now);
                    tracing::debug!(metrics = count, terminating, "metrics pushed");
                    self.sources.shared.metrics_push.pushed();
                    Next::Wait(sub.interval, State::Subscribed(sub, conn))
                }
                code => react(code, Some(sub.interval)),
            },
            Err(e) => {
                tracing::debug!(error = %e, "metrics push: PushTelemetry failed");
                Next::Wait(sub.interval, State::Unsubscribed)
            }
        }
    }
}

/// The step after a broker's error code.
fn react(code: ErrorCode, interval: Option<Duration>) -> Next {
    match reaction(code, interval) {
        Reaction::Resubscribe(wait) => {
            tracing::debug!(
                ?code,
                ?wait,
                "metrics push: asking for the subscription again"
            );
            Next::Wait(wait, State::Unsubscribed)
        }
        Reaction::Stop => {
            tracing::warn!(
                ?code,
                "metrics push: the broker refuses what we send; pushing no more"
            );
            Next::Stop
        }
    }
}

/// 0.5–1.5 × `interval`, uniformly.
fn jittered(interval: Duration) -> Duration {
    let r = getrandom::u32().unwrap_or(u32::MAX / 2);
    interval.mul_f64(0.5 + f64::from(r) / f64::from(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_push_waits_half_to_one_and_a_half_intervals() {
        let interval = Duration::from_secs(10);
        for _ in 0..200 {
            let d = jittered(interval);
            assert!(d >= interval / 2 && d <= interval * 3 / 2, "{d:?}");
        }
    }
}
