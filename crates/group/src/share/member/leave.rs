//! Leaving the share group: the listener's `revoked` for every owned partition (the runtime stops
//! fetching them), then a heartbeat with epoch -1, within the close's deadline. A share group has
//! no static members, so `close` and `leave` both leave; so does an empty subscription, after
//! which the member stays out until subscribed again. While joining (no epoch yet) the leave goes
//! anyway, since the coordinator may have taken the join whose answer is not in; UNKNOWN_MEMBER_ID
//! then says it had not.

use mooring_client::error::{Error, Result};
use mooring_client::TopicPartition;
use mooring_wire::error_code::ErrorCode;
use tokio::time::{timeout_at, Instant};

use super::answers::API;
use super::ShareMember;
use crate::assignor::RebalanceProtocol;
use crate::command::Ending;
use crate::events::{GroupEventKind, RebalanceCause};
use crate::leave;
use crate::listener::{Callback, RebalanceListener};
use crate::share::heartbeat::{identity, LEAVE_EPOCH};
use crate::share::reaction;
use crate::state::ShareMemberState;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ShareMember<T, L> {
    /// Whether the coordinator may count this member in the group.
    fn may_be_in_group(&self) -> bool {
        self.epoch > 0 || self.state == ShareMemberState::Joining
    }

    /// Releases the owned partitions through `revoked`.
    async fn release_all(&mut self) {
        if self.owned.is_empty() {
            return;
        }
        let parts: Vec<TopicPartition> = std::mem::take(&mut self.owned).into_iter().collect();
        self.publish();
        self.call_listener(Callback::Revoked(RebalanceProtocol::Cooperative), parts)
            .await;
    }

    /// Close or leave: release the partitions, stop heartbeating, leave if in the group and time
    /// is left, end; all of it by the ending's deadline.
    pub(super) async fn finish(&mut self, ending: Ending) {
        self.closing_by = Some(ending.deadline);
        self.release_all().await;
        self.beat.in_flight = None;
        let leaving = self.may_be_in_group();
        let error = if leaving {
            self.set_state(ShareMemberState::Leaving);
            self.leave_by(ending.deadline).await.err()
        } else {
            None
        };
        if let Some(e) = &error {
            tracing::warn!(group = %self.config.group_id, error = %e, "the share member's leave heartbeat failed; the coordinator drops it after its session timeout");
        }
        self.end_membership();
        self.closed = true;
        self.state = ShareMemberState::Unsubscribed;
        self.publish();
        self.events.emit(GroupEventKind::Left {
            sent_leave_group: leaving,
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
        if self.may_be_in_group() {
            self.set_state(ShareMemberState::Leaving);
            if let Err(error) = self.leave_by(deadline).await {
                tracing::warn!(group = %self.config.group_id, %error, "the share member's leave heartbeat failed; the coordinator drops it after its session timeout");
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
            self.set_state(ShareMemberState::Unsubscribed);
        }
    }

    /// The leave heartbeat by `deadline` (one retry, as the table says); not sent when no time is
    /// left.
    async fn leave_by(&mut self, deadline: Instant) -> Result<()> {
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
        let send = || {
            let request = identity(&self.config, &self.member_id, LEAVE_EPOCH);
            let answer = self
                .transport
                .call_coordinator(&self.config.group_id, move |_version| request);
            async move { answer.await.map(|r| ErrorCode::from_i16(r.error_code)) }
        };
        let refused = |code| Error::Broker {
            api: API,
            code,
            message: Some(format!("leaving with epoch {LEAVE_EPOCH}")),
        };
        let left = leave::with_retry(
            &*self.transport,
            &self.config,
            reaction::leave,
            send,
            refused,
        );
        match timeout_at(deadline, left).await {
            Ok(result) => result,
            Err(_) => Err(out_of_time()),
        }
    }
}
