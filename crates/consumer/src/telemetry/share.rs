//! The share consumer's telemetry ([`ShareTelemetryExporter`]): the same exporter as the
//! consumer's (buffer, sender, credential, snapshot timer), fed by a [`ShareConsumer`]. Its lines
//! say `share` as the member's group protocol; the share member's group events go out as the
//! schema's group events, the fatal error as `fatal_error`, and every snapshot interval a
//! `share_snapshot` carries the member's state and the consumer's cumulative counters
//! ([`ShareStats`](crate::share::ShareStats)). The per-record answers of the event stream
//! (`Acknowledged`, `LockExpired`) are not sent one by one: the counters say them, at one line per
//! interval whatever the record rate.

use mooring_group::GroupProtocol;
use mooring_telemetry_schema::{
    share_state_name, Event, MemberIdentity, ShareSnapshot, TopicPartition,
};
use tokio::sync::mpsc;

use super::config::ExporterConfig;
use super::convert::{group_event, millis, now_ms};
use super::exporter::{start, ExporterHandle, Intake, Source, TelemetryError};
use crate::share::{ShareConsumer, ShareEvent, ShareEvents};

/// Sends a [`ShareConsumer`]'s telemetry to the sidecar: the share counterpart of
/// [`TelemetryExporter`](super::TelemetryExporter), with the same settings
/// ([`ExporterConfig`], the `mooring.telemetry.*` keys) and the same guarantees (never waits for
/// the sidecar, bounded buffer, losses counted).
///
/// ```no_run
/// use mooring_consumer::share::{ShareConsumer, ShareConsumerConfig};
/// use mooring_consumer::telemetry::ShareTelemetryExporter;
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let config = ShareConsumerConfig::from_properties([
///     ("bootstrap.servers", "localhost:9092"),
///     ("group.id", "order-workers"),
///     ("mooring.telemetry.enabled", "true"),
/// ])?;
/// let consumer = ShareConsumer::new(config)?;
/// let exporter = ShareTelemetryExporter::from_config(&consumer)?;
/// // ... consumer.run(handler).await ...
/// if let Some(exporter) = exporter {
///     exporter.shutdown().await; // one last snapshot and flush
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct ShareTelemetryExporter;

impl ShareTelemetryExporter {
    /// Takes the share consumer's event stream and starts the exporter's tasks (on the current
    /// tokio runtime).
    pub fn spawn(
        consumer: &ShareConsumer,
        config: ExporterConfig,
    ) -> Result<ExporterHandle, TelemetryError> {
        Self::start(consumer, config, None)
    }

    /// As [`spawn`](Self::spawn), and hands every event on to the application after taking its
    /// copy (a stream as large as the consumer's own; the application's copy is dropped when it
    /// is full, never waited for).
    pub fn spawn_tee(
        consumer: &ShareConsumer,
        config: ExporterConfig,
    ) -> Result<(ExporterHandle, ShareEvents), TelemetryError> {
        let capacity = consumer.config().group.event_capacity.max(1024);
        let (tx, rx) = mpsc::channel(capacity);
        Ok((Self::start(consumer, config, Some(tx))?, rx))
    }

    /// Starts the exporter as the share consumer's config says: `Ok(None)` (and nothing
    /// started) unless `mooring.telemetry.enabled` is `true`.
    pub fn from_config(consumer: &ShareConsumer) -> Result<Option<ExporterHandle>, TelemetryError> {
        let telemetry = &consumer.config().telemetry;
        if !telemetry.enabled {
            return Ok(None);
        }
        Self::spawn(consumer, telemetry.exporter.clone()).map(Some)
    }

    /// As [`from_config`](Self::from_config), for an application that reads the event stream
    /// too; with telemetry off the stream is the consumer's own.
    pub fn from_config_tee(
        consumer: &ShareConsumer,
    ) -> Result<(Option<ExporterHandle>, ShareEvents), TelemetryError> {
        let telemetry = &consumer.config().telemetry;
        if !telemetry.enabled {
            let events = consumer.events().ok_or(TelemetryError::StreamTaken)?;
            return Ok((None, events));
        }
        let (handle, events) = Self::spawn_tee(consumer, telemetry.exporter.clone())?;
        Ok((Some(handle), events))
    }

    fn start(
        consumer: &ShareConsumer,
        config: ExporterConfig,
        tee: Option<mpsc::Sender<ShareEvent>>,
    ) -> Result<ExporterHandle, TelemetryError> {
        super::http::Endpoint::checked(&config.endpoint, config.allow_remote)
            .map_err(TelemetryError::Endpoint)?;
        let events = consumer.events().ok_or(TelemetryError::StreamTaken)?;
        let c = consumer.config();
        let identity = MemberIdentity {
            group: c.group.group_id.clone(),
            member_id: String::new(),
            instance_id: None,
            client_id: c.client.client_id.clone(),
            group_protocol: Some(GroupProtocol::Share.as_str().to_string()),
        };
        let intake = Intake {
            events,
            tee,
            convert,
        };
        start(Box::new(consumer.clone()), identity, intake, config)
    }
}

impl Source for ShareConsumer {
    fn snapshot(&self) -> Event {
        Event::ShareSnapshot(share_snapshot(self))
    }

    fn dropped_events(&self) -> u64 {
        ShareConsumer::dropped_events(self)
    }

    fn attached(&self, attached: bool) {
        self.fatal_delivery().attached(attached);
    }

    fn fatal_exported(&self) {
        self.fatal_delivery().exported();
    }
}

/// The schema event of a share consumer's event: the member's group events and the fatal error;
/// the per-record answers stay in the counters.
fn convert(event: ShareEvent) -> Option<(u64, Event)> {
    match event {
        ShareEvent::Group(group) => Some((millis(group.at), group_event(group.kind)?)),
        ShareEvent::FatalError { kind, error } => Some((
            now_ms(),
            Event::FatalError {
                kind: kind.to_string(),
                message: error.to_string(),
            },
        )),
        _ => None,
    }
}

/// The share consumer's state and counters now.
pub(crate) fn share_snapshot(consumer: &ShareConsumer) -> ShareSnapshot {
    let stats = consumer.stats();
    let member = consumer.member_state();
    ShareSnapshot {
        member_state: member.as_ref().map(|m| format!("{:?}", m.state)),
        share_state: member
            .as_ref()
            .and_then(|m| m.share_state)
            .map(|s| share_state_name(s).to_string()),
        member_epoch: member.as_ref().map_or(-1, |m| m.generation),
        assignment: member
            .as_ref()
            .map(|m| {
                m.assignment
                    .iter()
                    .map(|tp| TopicPartition::new(tp.topic.clone(), tp.partition))
                    .collect()
            })
            .unwrap_or_default(),
        concurrency: consumer.config().concurrency,
        stream_dropped_total: consumer.dropped_events(),
        acquired_total: stats.acquired,
        accepted_total: stats.accepted,
        released_total: stats.released,
        rejected_total: stats.rejected,
        gaps_total: stats.gaps,
        renewed_total: stats.renewed,
        renewals_refused_total: stats.renewals_refused,
        renewals_given_up_total: stats.renewals_given_up,
        lock_expired_total: stats.lock_expired,
        acknowledgements_failed_total: stats.acknowledgements_failed,
        acquired_by_delivery: stats.acquired_by_delivery.to_vec(),
        released_by_delivery: stats.released_by_delivery.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

    use std::time::{Duration, UNIX_EPOCH};

    use mooring_group::{GroupEvent, GroupEventKind};

    use super::*;
    use crate::share::ShareConsumerConfig;

    fn consumer() -> ShareConsumer {
        let config = ShareConsumerConfig::from_properties([
            ("bootstrap.servers", "127.0.0.1:9"),
            ("group.id", "workers"),
            ("client.id", "svc"),
            ("mooring.concurrency", "8"),
        ])
        .unwrap();
        ShareConsumer::new(config).unwrap()
    }

    #[test]
    fn a_share_snapshot_before_run_has_the_counters_and_no_member() {
        let consumer = consumer();
        let snap = share_snapshot(&consumer);
        assert_eq!((snap.member_state, snap.share_state), (None, None));
        assert_eq!(snap.member_epoch, -1);
        assert_eq!(snap.concurrency, 8);
        assert_eq!(snap.acquired_by_delivery.len(), 10);
        let json = serde_json::to_value(Event::ShareSnapshot(share_snapshot(&consumer))).unwrap();
        assert_eq!(json["type"], "share_snapshot");
        assert_eq!(json["rejected_total"], 0);
        // Fields default: a line with fewer of them still reads.
        let short: Event =
            serde_json::from_str(r#"{"type":"share_snapshot","accepted_total":3}"#).unwrap();
        let Event::ShareSnapshot(short) = short else {
            panic!("a share snapshot: {short:?}");
        };
        assert_eq!((short.accepted_total, short.released_total), (3, 0));
    }

    #[test]
    fn the_members_events_and_the_fatal_error_are_sent_and_record_answers_are_not() {
        let joined = ShareEvent::Group(GroupEvent {
            at: UNIX_EPOCH + Duration::from_millis(1_764_000_000_123),
            kind: GroupEventKind::Heartbeat {
                generation: 3,
                latency: Duration::from_millis(2),
                error: None,
            },
        });
        let (ts, event) = convert(joined).unwrap();
        assert_eq!((ts, event.type_name()), (1_764_000_000_123, "heartbeat"));
        let error = crate::ConsumerError::NotSubscribed;
        let fatal = ShareEvent::FatalError {
            kind: error.kind(),
            error,
        };
        assert_eq!(convert(fatal).unwrap().1.type_name(), "fatal_error");
        let answer = ShareEvent::Acknowledged {
            partition: crate::TopicPartition::new("t", 0),
            acknowledge: crate::share::Acknowledge::Accept,
            offsets: vec![1, 2],
            error: None,
        };
        assert!(convert(answer).is_none());
    }

    #[test]
    fn every_share_state_has_its_label() {
        use mooring_group::ShareMemberState as S;
        use mooring_telemetry_schema::SHARE_MEMBER_STATES;
        let all = [
            S::Unsubscribed,
            S::Joining,
            S::Reconciling,
            S::Stable,
            S::Fenced,
            S::Leaving,
            S::Fatal,
        ];
        let names: Vec<&str> = all.into_iter().map(share_state_name).collect();
        assert_eq!(names, SHARE_MEMBER_STATES);
        for (state, name) in all.into_iter().zip(names) {
            assert_eq!(serde_json::to_value(state).unwrap(), name);
        }
    }

    #[tokio::test]
    async fn from_config_starts_nothing_unless_enabled_and_keeps_the_stream() {
        let consumer = consumer();
        assert!(ShareTelemetryExporter::from_config(&consumer)
            .unwrap()
            .is_none());
        assert!(
            consumer.events().is_some(),
            "the stream stays the application's"
        );
    }
}
