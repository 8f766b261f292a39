//! The consumer's side of a rebalance: the group member's [`RebalanceListener`], wired to the
//! processing engine, the subscription state, commits and the application's listener.
//!
//! - **revoked** (eager: everything, before JoinGroup; cooperative: only the partitions moving
//!   away): stop dispatching them, and fetching them, and wait (bounded by
//!   `mooring.revoke.timeout.ms`) for their running handlers; commit what finished, while the
//!   generation is still valid; forget them in the subscription state (their pauses end; the
//!   fetcher's next request to each broker forgets them from its fetch session) and in the engine;
//!   then call the application's `revoked`. All of it by one deadline, a little before the
//!   member's bound on the call ([`GroupConfig::listener_timeout`]): the commit gets what the
//!   drain left (past it: reported, not committed), the application's listener what the commit
//!   left (past it: abandoned). The removal is a drop guard: it happens also when the member
//!   drops the call at its bound, or when the consumer is dropped mid-revoke.
//! - **assigned** (eager: everything; cooperative: only the new partitions): add them to the
//!   subscription state (new partitions start unpaused, partitions kept by a cooperative
//!   rebalance keep their state) and to the engine; initialise their positions (committed offset,
//!   else `auto.offset.reset`); then call the application's `assigned`. Until it returns the new
//!   partitions are not fetched, so none of their records reaches a handler before it (a seek in
//!   it decides where they start).
//! - **lost**: drop their state at once, commit nothing (someone else may own them), then call the
//!   application's `lost`.
//!
//! Partitions not named in a call are not touched: during a cooperative rebalance the partitions
//! that stay keep being fetched, processed and committed.
//!
//! The `consumer` group protocol (KIP-848) calls the same listener: each reconciliation of a new
//! target assignment is `revoked` (what it takes away, drained and committed with the current
//! member epoch before the next heartbeat tells the broker they are released) then `assigned`
//! (what it adds), incremental as a cooperative rebalance; `lost` when the epoch is fenced. So
//! nothing here depends on the protocol: the revoke's bound is the member's bound on the call
//! ([`GroupConfig::listener_timeout`], from `max.poll.interval.ms`, the rebalance timeout of
//! both protocols).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use mooring_client::Client;
#[cfg(doc)]
use mooring_group::GroupConfig;
use mooring_group::{GroupHandle, RebalanceListener, WeakGroupHandle};
use tokio::time::{timeout_at, Instant};

use super::commit::{commit_offsets, report_not_committed, CommitLock};
use super::listener::ErasedListener;
use crate::error::ConsumerError;
use crate::fetcher::positions;
use crate::processing::{Dispatch, ProcessingEngine};
use crate::shared::Shared;
use crate::subscription::SubscriptionError;
use crate::TopicPartition;

pub(crate) struct MemberListener<H: Dispatch> {
    pub(crate) shared: Arc<Shared>,
    pub(crate) engine: ProcessingEngine<H>,
    /// Set right after the member is spawned, before it is asked to join. Weak: the member owns
    /// this listener, and a strong handle here would keep the member alive for ever.
    pub(crate) member: Arc<OnceLock<WeakGroupHandle<Client>>>,
    pub(crate) commits: Arc<CommitLock>,
    pub(crate) user: Option<Arc<dyn ErasedListener>>,
}

impl<H: Dispatch> MemberListener<H> {
    fn revoke_timeout(&self) -> Duration {
        self.shared.config.revoke_timeout
    }

    /// The member, while a handle to it exists.
    fn member(&self) -> Option<GroupHandle<Client>> {
        self.member.get().and_then(WeakGroupHandle::upgrade)
    }

    /// The bound of the whole revoke: the member's own bound on a listener call, less a margin
    /// (a tenth, at most a second) so this side's timeouts fire first and are reported.
    fn revoke_bound(&self) -> Duration {
        let member_bound = self
            .shared
            .config
            .group
            .as_ref()
            .map_or(self.revoke_timeout(), |g| g.listener_timeout());
        member_bound - (member_bound / 10).min(Duration::from_secs(1))
    }

    /// Adds what the subscription accepts; partitions of topics no longer subscribed are left out
    /// (the member revokes them at the next rebalance).
    fn assign(&self, partitions: &[TopicPartition]) -> Vec<TopicPartition> {
        let mut subs = self.shared.subs();
        match subs.assign_from_group(partitions.iter().cloned()) {
            Ok(()) => partitions.to_vec(),
            Err(SubscriptionError::NotSubscribed {
                partitions: outside,
            }) => {
                tracing::warn!(?outside, "assigned partitions outside the subscription");
                let inside: Vec<TopicPartition> = partitions
                    .iter()
                    .filter(|tp| !outside.contains(tp))
                    .cloned()
                    .collect();
                match subs.assign_from_group(inside.iter().cloned()) {
                    Ok(()) => inside,
                    Err(e) => {
                        tracing::warn!(error = %e, "assignment not applied");
                        Vec::new()
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "assignment not applied");
                Vec::new()
            }
        }
    }
}

/// Takes revoked partitions out of the runtime when dropped, however the revoke ends: out of the
/// engine (they may still be stopping there if the revoke was cut short) and out of the
/// subscription state, so the fetcher neither fetches them nor keeps an answer in flight for them.
struct Removal<'a, H: Dispatch> {
    shared: &'a Shared,
    engine: &'a ProcessingEngine<H>,
    partitions: Vec<TopicPartition>,
}

impl<H: Dispatch> Drop for Removal<'_, H> {
    fn drop(&mut self) {
        self.engine.drop_partitions(self.partitions.iter().cloned());
        // Bumped before the change, as for an assignment (see `assigned`).
        self.shared.assignment_changed();
        self.shared.subs().revoke(&self.partitions);
        self.shared.wake();
    }
}

/// Holds newly assigned partitions from fetching while the application's `assigned` runs;
/// releases them when dropped (the call returned, or the member dropped it at its bound).
struct Held<'a> {
    shared: &'a Shared,
    partitions: Vec<TopicPartition>,
}

impl<'a> Held<'a> {
    fn new(shared: &'a Shared, partitions: Vec<TopicPartition>) -> Held<'a> {
        shared.subs().hold_for_listener(&partitions, true);
        Held { shared, partitions }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.shared
            .subs()
            .hold_for_listener(&self.partitions, false);
        self.shared.wake();
    }
}

impl<H: Dispatch> RebalanceListener for MemberListener<H> {
    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        let tps = partitions;
        let deadline = Instant::now() + self.revoke_bound();
        let removal = Removal {
            shared: &self.shared,
            engine: &self.engine,
            partitions: tps.clone(),
        };
        let drain = self
            .revoke_timeout()
            .min(deadline.saturating_duration_since(Instant::now()));
        let report = self
            .engine
            .stop_partitions(tps.iter().cloned(), drain)
            .await;
        if !report.timed_out.is_empty() {
            tracing::warn!(partitions = ?report.timed_out, "revoke: handlers still running at the timeout");
        }
        if let Some(member) = self.member() {
            let offsets = report
                .committable
                .into_iter()
                .filter(|(tp, _)| tps.contains(tp))
                .collect();
            let left = deadline.saturating_duration_since(Instant::now());
            if let Err(failed) =
                commit_offsets(&self.shared, &member, &self.commits, offsets, left).await
            {
                report_not_committed(&self.shared, "revoke", failed);
            }
        }
        drop(removal);
        if let Some(user) = &self.user {
            if timeout_at(deadline, user.revoked(tps)).await.is_err() {
                tracing::warn!(bound = ?self.revoke_bound(), "the application's revoke listener outlived the revoke's bound; abandoned so the rebalance can go on");
            }
        }
    }

    async fn assigned(&self, partitions: Vec<TopicPartition>) {
        // Bumped before the change: a look-up that checks it under the state's lock never
        // applies old answers to new partitions.
        self.shared.assignment_changed();
        let tps = self.assign(&partitions);
        // Not fetched before the application's `assigned` returns (nor, hence, handed to a
        // handler), as Java's `onPartitionsAssigned` runs before `poll` returns their records; a
        // seek in it decides where they start. Released however the call ends.
        let _held = self
            .user
            .is_some()
            .then(|| Held::new(&self.shared, tps.clone()));
        self.engine.add_partitions(tps.iter().cloned());
        let member = self.member();
        match tokio::time::timeout(
            self.revoke_timeout(),
            positions::initialize(&self.shared, member.as_ref()),
        )
        .await
        {
            Ok(Ok(())) => {}
            Ok(Err(e @ ConsumerError::NoOffsetForPartition { .. })) => self.shared.fail(e),
            // The fetch loop tries again.
            Ok(Err(e)) => tracing::warn!(error = %e, "initialising positions after assignment"),
            Err(_) => tracing::warn!("initialising positions after assignment timed out"),
        }
        self.shared.wake();
        if let Some(user) = &self.user {
            user.assigned(tps).await;
        }
    }

    async fn lost(&self, partitions: Vec<TopicPartition>) {
        let tps = partitions;
        let discarded = self.engine.drop_partitions(tps.iter().cloned());
        tracing::info!(partitions = ?tps, discarded, "partitions lost");
        self.shared.assignment_changed();
        self.shared.subs().revoke(&tps);
        self.shared.wake();
        if let Some(user) = &self.user {
            user.lost(tps).await;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use mooring_client::conn::FrameMemory;
    use mooring_wire::records::Record;

    use super::*;
    use crate::config::ConsumerConfig;
    use crate::processing::{ConsumerRecord, ProcessingConfig};
    use crate::subscription::SubscriptionState;
    use mooring_group::EventSink;

    /// A consumer's shared state in group `g`, subscribed to topic `t`, with these properties
    /// besides (and its event stream, kept open).
    fn subscribed_to_t(extra: &[(&str, &str)]) -> (Arc<Shared>, crate::events::ConsumerEvents) {
        let config = ConsumerConfig::from_properties(
            [("bootstrap.servers", "127.0.0.1:9"), ("group.id", "g")]
                .into_iter()
                .chain(extra.iter().copied()),
        )
        .unwrap();
        let client = Client::new(config.client.clone()).unwrap();
        let (sink, events) = EventSink::channel(16);
        let subs = SubscriptionState::new(config.auto_offset_reset);
        let shared = Arc::new(Shared::new(
            config,
            subs,
            client,
            FrameMemory::new(1 << 20),
            sink,
        ));
        shared.subs().subscribe(["t"]).unwrap();
        (shared, events)
    }

    /// A revoke whose handler never finishes, cut short by the member's bound during the drain
    /// (the member drops the call): the partition still leaves the subscription state, hence the
    /// fetcher, and the engine.
    #[tokio::test(start_paused = true)]
    async fn a_revoke_cut_short_still_takes_its_partitions_out() {
        let (shared, _events) = subscribed_to_t(&[("mooring.revoke.timeout.ms", "60000")]);
        let tp = TopicPartition::new("t", 0);
        shared.subs().assign_from_group([tp.clone()]).unwrap();
        let hang = |_: ConsumerRecord| std::future::pending::<Result<(), String>>();
        let (engine, _engine_events) =
            ProcessingEngine::new(ProcessingConfig::default(), hang).unwrap();
        engine.add_partitions([tp.clone()]);
        engine
            .submit(&tp, vec![Record::new(0, 0, None, Some("v".into()))])
            .unwrap();
        let listener = MemberListener {
            shared: Arc::clone(&shared),
            engine: engine.clone(),
            member: Arc::new(OnceLock::new()),
            commits: Arc::new(CommitLock::new(())),
            user: None,
        };

        let revoke = RebalanceListener::revoked(&listener, vec![TopicPartition::new("t", 0)]);
        let cut = tokio::time::timeout(Duration::from_secs(1), revoke).await;

        assert!(cut.is_err(), "the drain was still waiting for the handler");
        assert!(!shared.subs().is_assigned(&tp), "left the subscription");
        assert!(shared.subs().fetchable_partitions().is_empty());
        assert!(
            engine.unfetchable_partitions().is_empty(),
            "no longer stopping in the engine: dropped from it"
        );
        assert!(matches!(
            engine.submit(&tp, vec![Record::new(1, 0, None, None)]),
            Err(crate::processing::SubmitError::UnknownPartition(_))
        ));
    }

    /// The application's `assigned` runs before any record of its partitions can reach a handler
    /// (Java calls `onPartitionsAssigned` before `poll` returns their records): while it runs the
    /// partitions have their position (a seek in it would set one) but are not fetchable.
    #[tokio::test(start_paused = true)]
    async fn new_partitions_are_not_fetched_until_the_application_s_assigned_returns() {
        struct Gate(tokio::sync::Mutex<Option<tokio::sync::oneshot::Receiver<()>>>);
        impl crate::ConsumerRebalanceListener for Gate {
            async fn assigned(&self, _partitions: Vec<TopicPartition>) {
                if let Some(rx) = self.0.lock().await.take() {
                    let _ = rx.await;
                }
            }
        }
        let (shared, _events) = subscribed_to_t(&[]);
        let tp = TopicPartition::new("t", 0);
        let (engine, _engine_events) =
            ProcessingEngine::new(ProcessingConfig::default(), |_: ConsumerRecord| async {
                Ok::<(), String>(())
            })
            .unwrap();
        let (open, gate) = tokio::sync::oneshot::channel();
        let listener = Arc::new(MemberListener {
            shared: Arc::clone(&shared),
            engine,
            // No member: positions come from `auto.offset.reset`, looked up by the fetch loop;
            // the test gives one by hand as a seek in the listener would.
            member: Arc::new(OnceLock::new()),
            commits: Arc::new(CommitLock::new(())),
            user: Some(Arc::new(Gate(tokio::sync::Mutex::new(Some(gate))))),
        });
        let call = tokio::spawn({
            let listener = Arc::clone(&listener);
            let tp = tp.clone();
            async move { RebalanceListener::assigned(&*listener, vec![tp]).await }
        });
        tokio::time::sleep(Duration::from_millis(10)).await;
        shared.subs().seek(&tp, 5).unwrap();
        assert!(
            shared.subs().fetchable_partitions().is_empty(),
            "fetchable while the application's assigned runs"
        );
        open.send(()).unwrap();
        call.await.unwrap();
        assert_eq!(shared.subs().fetchable_partitions(), vec![tp]);
    }
}
