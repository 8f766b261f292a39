//! Close or leave: revoke (or lose) everything, stop heartbeating, LeaveGroup if due, by the
//! ending's deadline.

use std::sync::Arc;

use mooring_client::error::{Error, Result};
use mooring_client::TopicPartition;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::LeaveGroupResponse;
use tokio::time::{timeout_at, Instant};

use super::ClassicMember;
use crate::command::Ending;
use crate::events::GroupEventKind;
use crate::leave;
use crate::listener::{Callback, RebalanceListener};
use crate::reaction;
use crate::requests;
use crate::state::MemberState;
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ClassicMember<T, L> {
    /// Close or leave: revoke (or lose) everything, stop heartbeating, LeaveGroup if due and if
    /// time is left, end; all of it by the ending's deadline.
    pub(super) async fn finish(&mut self, ending: Ending) {
        self.closing_by = Some(ending.deadline);
        let parts: Vec<TopicPartition> = self.owned.iter().cloned().collect();
        if !parts.is_empty() {
            if self.state.has_generation() {
                self.call_listener(
                    Callback::Revoked(self.strategies.rebalance_protocol()),
                    parts,
                )
                .await;
            } else {
                self.call_listener(Callback::Lost, parts).await;
            }
            self.owned.clear();
        }
        self.heartbeat.send_replace(None);
        let send_leave = (ending.force_leave || self.config.leave_on_close())
            && !self.member_id.is_empty()
            && self.state != MemberState::Fenced;
        let error = if send_leave {
            self.leave_group_by(ending.deadline).await.err()
        } else {
            None
        };
        if let Some(e) = &error {
            tracing::warn!(group = %self.config.group_id, error = %e, "LeaveGroup on close failed; the coordinator drops the member after its session timeout");
        }
        self.state = MemberState::Closed;
        self.publish();
        self.events.emit(GroupEventKind::Left {
            sent_leave_group: send_leave,
            error: error.as_ref().map(ToString::to_string),
        });
        if let Some(reply) = ending.reply {
            let _ = reply.send(match error {
                Some(e) => Err(e),
                None => Ok(()),
            });
        }
    }

    /// LeaveGroup (one retry, as the table says) by `deadline`; not sent when no time is left.
    pub(super) async fn leave_group_by(&mut self, deadline: Instant) -> Result<()> {
        let budget = deadline.saturating_duration_since(Instant::now());
        let group = self.config.group_id.clone();
        let out_of_time = move || Error::DeadlineExceeded {
            api: "LeaveGroup",
            group,
            after: budget,
            last: None,
        };
        if budget.is_zero() {
            return Err(out_of_time());
        }
        match timeout_at(deadline, self.leave_group()).await {
            Ok(result) => result,
            Err(_) => Err(out_of_time()),
        }
    }

    pub(super) async fn leave_group(&mut self) -> Result<()> {
        let send = || {
            let (config, member_id) = (Arc::clone(&self.config), self.member_id.clone());
            let answer = self
                .transport
                .call_coordinator(&self.config.group_id, move |version| {
                    requests::leave_group(version, &config, member_id)
                });
            async move { answer.await.map(|response| leave_code(&response)) }
        };
        let refused = |code| Error::Broker {
            api: "LeaveGroup",
            code,
            message: None,
        };
        leave::with_retry(
            &*self.transport,
            &self.config,
            reaction::leave_group,
            send,
            refused,
        )
        .await
    }
}

/// The code of a LeaveGroup answer: the top level's, else the first member's that is not NONE.
fn leave_code(response: &LeaveGroupResponse) -> ErrorCode {
    let top = ErrorCode::from_i16(response.error_code);
    if !top.is_ok() {
        return top;
    }
    response
        .members
        .iter()
        .map(|m| ErrorCode::from_i16(m.error_code))
        .find(|c| !c.is_ok())
        .unwrap_or(ErrorCode::None)
}
