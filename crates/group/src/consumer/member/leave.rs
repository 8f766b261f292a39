//! Leaving the group with a heartbeat: epoch -1 leaves for good (the coordinator reassigns the
//! member's partitions at once), epoch -2 is a static member leaving for now (KIP-848: the
//! coordinator keeps its assignment for the session timeout, so the process that comes back with
//! the same `group.instance.id` takes it over without a rebalance).
//!
//! - `close`: revoke everything through the listener, then -1 for a dynamic member, -2 for a
//!   static one (`mooring.leave.group.on.close=true` makes it -1; `false` on a dynamic member
//!   sends nothing and lets the session time out); all of it within the close's deadline.
//! - `leave`: as `close`, always -1.
//! - Either while joining (no epoch yet): the leave goes anyway, since the coordinator may have
//!   taken the join whose answer is not in; UNKNOWN_MEMBER_ID then says it had not.
//! - An empty subscription: as `close` (-1, or -2 for a static member, as Java's `unsubscribe`),
//!   and the member stays out until subscribed again.
//! - Stale (the processing loop missed `max.poll.interval.ms`): -1 at once, then `lost` for
//!   everything, then a rejoin at epoch 0 (see the [module docs](super) for when).

use mooring_client::error::{Error, Result};
use mooring_client::TopicPartition;
use mooring_wire::error_code::ErrorCode;
use tokio::time::{timeout_at, Instant};

use super::answers::API;
use super::ConsumerMember;
use crate::assignor::RebalanceProtocol;
use crate::command::Ending;
use crate::consumer::heartbeat::leave_fields;
use crate::consumer::reaction;
use crate::events::{GroupEventKind, RebalanceCause};
use crate::leave;
use crate::listener::{Callback, RebalanceListener};
use crate::requests;
use crate::state::ConsumerMemberState;
use crate::transport::GroupTransport;

/// Epoch of a heartbeat leaving the group for good.
pub(super) const LEAVE_EPOCH: i32 = -1;
/// Epoch of a static member's heartbeat leaving for now (its assignment kept).
pub(super) const STATIC_LEAVE_EPOCH: i32 = -2;

impl<T: GroupTransport, L: RebalanceListener> ConsumerMember<T, L> {
    /// The epoch a close (or an empty subscription) leaves with, if it sends one.
    fn close_epoch(&self, force_leave: bool) -> Option<i32> {
        if force_leave || self.config.leave_group_on_close == Some(true) {
            Some(LEAVE_EPOCH)
        } else if self.config.group_instance_id.is_some() {
            Some(STATIC_LEAVE_EPOCH)
        } else if self.config.leave_on_close() {
            Some(LEAVE_EPOCH)
        } else {
            None
        }
    }

    /// Releases the owned partitions before leaving: `revoked` while the membership holds (what
    /// finished can still be committed), `lost` when it is gone.
    async fn release_all(&mut self) {
        if self.owned.is_empty() {
            return;
        }
        let parts: Vec<TopicPartition> = self.owned.iter().cloned().collect();
        let kind = if self.in_group() {
            Callback::Revoked(RebalanceProtocol::Cooperative)
        } else {
            Callback::Lost
        };
        self.call_listener(kind, parts).await;
        self.owned.clear();
        self.publish();
    }

    /// Close or leave: release the partitions, stop heartbeating, send the leave heartbeat if due
    /// and time is left, end; all of it by the ending's deadline.
    pub(super) async fn finish(&mut self, ending: Ending) {
        self.closing_by = Some(ending.deadline);
        self.release_all().await;
        self.beat.in_flight = None;
        // Joining: the coordinator may have taken the join whose answer is not in yet.
        let was_in_group = self.epoch > 0 || self.state == ConsumerMemberState::Joining;
        let leave_epoch = self
            .close_epoch(ending.force_leave)
            .filter(|_| was_in_group);
        let error = match leave_epoch {
            Some(epoch) => {
                self.set_state(ConsumerMemberState::Leaving);
                self.leave_by(epoch, ending.deadline).await.err()
            }
            None => None,
        };
        if let Some(e) = &error {
            tracing::warn!(group = %self.config.group_id, error = %e, "the leave heartbeat on close failed; the coordinator drops the member after its session timeout");
        }
        self.end_membership();
        self.closed = true;
        self.state = ConsumerMemberState::Unsubscribed;
        self.publish();
        self.events.emit(GroupEventKind::Left {
            sent_leave_group: leave_epoch.is_some(),
            error: error.as_ref().map(ToString::to_string),
        });
        if let Some(reply) = ending.reply {
            let _ = reply.send(match error {
                Some(e) => Err(e),
                None => Ok(()),
            });
        }
    }

    /// An empty subscription: release the partitions, leave, stay unsubscribed.
    pub(super) async fn unsubscribe(&mut self) {
        let deadline = Instant::now() + self.config.rebalance_timeout;
        self.closing_by = Some(deadline);
        self.release_all().await;
        self.closing_by = None;
        self.beat.in_flight = None;
        if self.epoch > 0 {
            if let Some(epoch) = self.close_epoch(false) {
                self.set_state(ConsumerMemberState::Leaving);
                if let Err(error) = self.leave_by(epoch, deadline).await {
                    tracing::warn!(group = %self.config.group_id, %error, "the leave heartbeat failed; the coordinator drops the member after its session timeout");
                }
            }
        }
        self.end_membership();
        self.run = None;
        if self.subscription.is_some() {
            // Subscribed again meanwhile.
            self.join(RebalanceCause::SubscriptionChange);
        } else {
            self.failure = None;
            self.failed_code = ErrorCode::None;
            self.set_state(ConsumerMemberState::Unsubscribed);
        }
    }

    /// The processing loop missed `max.poll.interval.ms`: leave (-1, so the group rebalances
    /// around this member), give up the partitions through `lost`, and rejoin at epoch 0.
    pub(super) async fn go_stale(&mut self) {
        if !self.in_group() {
            return;
        }
        tracing::warn!(group = %self.config.group_id, member_id = %self.member_id, "max.poll.interval.ms exceeded: leaving the group; rejoining once the partitions are released");
        self.fail_run(
            "the processing loop missed max.poll.interval.ms".into(),
            None,
        );
        self.beat.in_flight = None;
        self.incarnation += 1;
        self.set_state(ConsumerMemberState::Stale);
        let deadline = Instant::now() + self.transport.request_timeout();
        if let Err(error) = self.leave_by(LEAVE_EPOCH, deadline).await {
            tracing::info!(group = %self.config.group_id, %error, "the stale member's leave heartbeat failed; its session times out instead");
        }
        self.end_membership();
        self.publish();
        self.lose_all().await;
        if self.ending.is_none()
            && self.subscription.is_some()
            && self.state == ConsumerMemberState::Stale
        {
            self.join(RebalanceCause::PollIntervalExceeded);
        }
    }

    /// The leave heartbeat with `epoch` by `deadline` (one retry, as the table says); not sent
    /// when no time is left.
    pub(super) async fn leave_by(&mut self, epoch: i32, deadline: Instant) -> Result<()> {
        let budget = deadline.saturating_duration_since(Instant::now());
        let group = self.config.group_id.clone();
        let out_of_time = move || Error::DeadlineExceeded {
            api: API,
            group,
            after: budget,
            last: None,
        };
        if budget.is_zero() {
            return Err(out_of_time());
        }
        match timeout_at(deadline, self.leave(epoch)).await {
            Ok(result) => result,
            Err(_) => Err(out_of_time()),
        }
    }

    async fn leave(&mut self, epoch: i32) -> Result<()> {
        let send = || {
            let fields = leave_fields(&self.config, &self.member_id, epoch);
            let group = self.config.group_id.clone();
            let answer = self
                .transport
                .call_coordinator(&self.config.group_id, move |version| {
                    requests::consumer_group_heartbeat(version, &group, &fields)
                });
            async move { answer.await.map(|r| ErrorCode::from_i16(r.error_code)) }
        };
        let refused = |code| Error::Broker {
            api: API,
            code,
            message: Some(format!("leaving with epoch {epoch}")),
        };
        leave::with_retry(
            &*self.transport,
            &self.config,
            reaction::leave,
            send,
            refused,
        )
        .await
    }
}
