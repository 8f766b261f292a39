//! Client metrics pushed to the brokers (Kafka's KIP-714): when a broker has a client metrics
//! receiver and an operator subscribed clients like this one (`kafka-client-metrics.sh`), the
//! consumer sends it the metrics the subscription names, in OTLP, every push interval, and a
//! last time when it closes. `enable.metrics.push=false` turns it off (nothing is asked of the
//! broker).
//!
//! Pushed, under Java's names ([`sample`]): `org.apache.kafka.consumer.` +
//! `fetch.manager.records.consumed.total`, `fetch.manager.bytes.consumed.total`,
//! `fetch.manager.fetch.latency.avg` / `.max`, `coordinator.commit.latency.avg` / `.max`,
//! `coordinator.assigned.partitions` (with a group), `connection.creation.total`.
//!
//! [`reporter`] runs the protocol, [`subscription`] reads the broker's answer and holds the
//! reactions to its errors, [`otlp`] makes the payload, [`state`] keeps what the rest of the
//! consumer may read (the instance id, the pushes).

mod otlp;
mod reporter;
mod sample;
pub(crate) mod state;
mod subscription;

use std::sync::Arc;

use mooring_client::Client;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::shared::Shared;
use otlp::Encoder;
use reporter::Reporter;
use sample::Sources;

/// The running reporter of one `run`.
#[derive(Debug)]
pub(crate) struct MetricsPush {
    task: JoinHandle<()>,
    terminate: Option<oneshot::Sender<Instant>>,
}

impl MetricsPush {
    /// Starts the reporter, unless `enable.metrics.push` is false.
    pub(crate) fn start(shared: &Arc<Shared>, group_client: Option<Arc<Client>>) -> Option<Self> {
        if !shared.config.enable_metrics_push {
            return None;
        }
        let reporter = Reporter {
            client: shared.fetch_client.clone(),
            encoder: Encoder::new(labels(shared), shared.created_unix_nanos),
            sources: Sources {
                shared: Arc::clone(shared),
                group_client,
            },
        };
        let (terminate, terminated) = oneshot::channel();
        Some(MetricsPush {
            task: tokio::spawn(reporter.run(terminated)),
            terminate: Some(terminate),
        })
    }

    /// The consumer closes: the terminating push, if a subscription is held, by `deadline`
    /// (later, the task is aborted).
    pub(crate) async fn close(mut self, deadline: Instant) {
        if let Some(terminate) = self.terminate.take() {
            let _ = terminate.send(deadline);
        }
        // Past the deadline the drop aborts the task.
        let _ = tokio::time::timeout_at(deadline, &mut self.task).await;
    }
}

impl Drop for MetricsPush {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The resource labels Java's consumer sets, each when it has a value.
fn labels(shared: &Shared) -> Vec<(&'static str, String)> {
    let config = &shared.config;
    let mut labels = vec![("client_id", config.client.client_id.clone())];
    if let Some(group) = &config.group {
        labels.push(("group_id", group.group_id.clone()));
        if let Some(instance) = &group.group_instance_id {
            labels.push(("group_instance_id", instance.clone()));
        }
    }
    if let Some(rack) = &config.client.client_rack {
        labels.push(("client_rack", rack.clone()));
    }
    labels
}
