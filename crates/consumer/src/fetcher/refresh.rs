//! Metadata refreshes for fetching: the assigned topics are looked up when a fetch error may mean
//! a leader moved (or a topic went), and when an unavailable topic is due to be looked up again.
//! A topic the principal may not read is fatal; a topic a refresh does not list is unavailable
//! (reported once, not fetched) until one lists it (`partition_errors.rs` keeps that state).

use std::collections::BTreeSet;

use mooring_client::metadata::Metadata;
use tokio::time::Instant;

use super::Fetcher;
use crate::error::ConsumerError;
use crate::events::ConsumerEvent;
use crate::processing::Dispatch;
use crate::TopicPartition;

impl<H: Dispatch> Fetcher<H> {
    /// Refreshes the metadata of the assigned topics, unless a failed refresh's retry is not due.
    pub(super) async fn refresh(&mut self) {
        if self.refresh_retry_at.is_some_and(|t| Instant::now() < t) {
            return;
        }
        let topics: Vec<String> = self
            .shared
            .subs()
            .assigned_partitions()
            .into_iter()
            .map(|tp| tp.topic)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if topics.is_empty() {
            return;
        }
        match self.shared.fetch_client.refresh_topics(&topics).await {
            Ok(metadata) => {
                self.refresh_metadata = false;
                self.refresh_retry_at = None;
                self.refreshed(&topics, &metadata);
            }
            Err(e) if e.is_fatal() => self.shared.fail(e.into()),
            Err(e) => {
                tracing::warn!(error = %e, "metadata refresh for fetching failed");
                self.refresh_retry_at = Some(Instant::now() + self.retry_backoff());
            }
        }
    }

    /// What a refresh of the assigned `topics` says: topics the principal may not read are fatal;
    /// topics it does not list are unavailable (reported once, not fetched) until one lists them.
    pub(super) fn refreshed(&mut self, topics: &[String], metadata: &Metadata) {
        let unauthorized = metadata.unauthorized_topics(topics);
        if !unauthorized.is_empty() {
            self.shared.fail(ConsumerError::TopicAuthorizationFailed {
                topics: unauthorized,
                principal: self.shared.config.client.principal(),
            });
            return;
        }
        let recheck = self.shared.config.client.metadata_max_age;
        let changed = self.errors.refreshed(
            topics,
            |t| metadata.topics.contains_key(t),
            Instant::now(),
            recheck,
        );
        for (topic, code) in changed.gone {
            let partitions: Vec<TopicPartition> = self
                .shared
                .subs()
                .assigned_partitions()
                .into_iter()
                .filter(|tp| tp.topic == topic)
                .collect();
            tracing::warn!(%topic, %code, ?recheck, "assigned topic gone from the cluster; its partitions are no longer fetched");
            self.shared.emit(ConsumerEvent::TopicUnavailable {
                topic,
                partitions,
                code,
                recheck_in: recheck,
            });
        }
        for topic in changed.back {
            tracing::info!(%topic, "topic listed in metadata again; fetching it");
        }
    }
}
