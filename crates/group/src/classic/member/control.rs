//! What arrives between rebalances: heartbeat and commit errors bound to a generation, and the
//! leader's metadata check.

use mooring_wire::consumer_protocol;
use tokio::time::Instant;

use super::ClassicMember;
use crate::assignor::PartitionsPerTopic;
use crate::control::Control;
use crate::events::{PhaseTimings, RebalanceCause};
use crate::listener::RebalanceListener;
use crate::reaction::{self, Reaction};
use crate::state::MemberState;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ClassicMember<T, L> {
    /// A heartbeat or commit error bound to a generation.
    pub(super) async fn on_control(&mut self, ctl: Control) {
        if ctl.generation != self.generation
            || ctl.member_id != self.member_id
            || !self.state.has_generation()
        {
            return;
        }
        if let Some(error) = ctl.failure {
            self.fatal_failure(ctl.api, error, Instant::now(), PhaseTimings::default())
                .await;
            return;
        }
        let r = match ctl.api {
            "OffsetCommit" => reaction::offset_commit(ctl.code),
            _ => reaction::heartbeat(ctl.code),
        };
        match r {
            Reaction::Rejoin => {
                self.rejoin.get_or_insert(RebalanceCause::MemberJoined);
            }
            Reaction::ResetMemberAndRejoin => {
                self.set_state(MemberState::Unjoined);
                self.lose_all().await;
                self.member_id.clear();
                self.generation = consumer_protocol::NO_GENERATION;
                self.publish();
                self.rejoin = Some(RebalanceCause::SessionTimeout);
            }
            Reaction::ResetGenerationAndRejoin => {
                self.set_state(MemberState::Unjoined);
                self.lose_all().await;
                self.generation = consumer_protocol::NO_GENERATION;
                self.publish();
                self.rejoin = Some(RebalanceCause::Fenced);
            }
            Reaction::Fenced => self.on_fenced().await,
            Reaction::Fatal => {
                self.fatal(ctl.api, ctl.code, Instant::now(), PhaseTimings::default())
                    .await
            }
            _ => {}
        }
    }

    /// The part of the topics whose change makes the leader rejoin: partition counts, and with
    /// `client.rack` set the replicas' racks too (Java's leader compares its metadata snapshots
    /// so, the racks only when it has a rack itself).
    pub(super) fn rejoin_snapshot(&self, topics: PartitionsPerTopic) -> PartitionsPerTopic {
        if self.config.client_rack.is_some() {
            topics
        } else {
            topics.without_racks()
        }
    }

    /// The leader's check after `metadata_changed()`: rejoin if partition counts (or, with
    /// `client.rack`, replica racks) moved.
    pub(super) async fn check_metadata(&mut self) {
        if !self.is_leader() || self.state != MemberState::Stable {
            return;
        }
        let Some(before) = self.assigned_topics.clone() else {
            return;
        };
        let topics: Vec<String> = self.group_topics.iter().cloned().collect();
        let transport = self.transport.clone();
        let Some(Ok(now)) = self
            .serve(
                async move { transport.partitions_per_topic(&topics).await },
                true,
            )
            .await
        else {
            return;
        };
        if self.rejoin_snapshot(now) != before {
            self.rejoin.get_or_insert(RebalanceCause::MetadataChange);
        }
    }
}
