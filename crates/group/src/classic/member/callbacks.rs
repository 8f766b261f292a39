//! The rebalance listener's calls: each bounded by the listener timeout (or a close's deadline)
//! while commands are still read, each reported as an event.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use mooring_client::TopicPartition;
use tokio::time::{sleep_until, Instant};

use super::ClassicMember;
use crate::command::listener_until;
use crate::listener::{Callback, RebalanceListener};
use crate::transport::GroupTransport;

impl<T: GroupTransport, L: RebalanceListener> ClassicMember<T, L> {
    /// Awaits a listener call while reading commands, until it returns (`true`) or its bound
    /// passes (`false`; the call is dropped). The bound is the listener timeout, or the deadline
    /// of a close (pending, arriving meanwhile, or under way) when that comes first.
    pub(super) async fn await_listener(&mut self, call: impl Future<Output = ()>) -> bool {
        let bound = Instant::now() + self.config.listener_timeout();
        tokio::pin!(call);
        loop {
            let until = listener_until(bound, self.ending.as_ref(), self.closing_by);
            tokio::select! {
                () = &mut call => return true,
                cmd = self.commands.recv(), if !self.commands_closed => self.record(cmd),
                () = sleep_until(until) => return false,
            }
        }
    }

    pub(super) async fn call_listener(
        &mut self,
        kind: Callback,
        partitions: Vec<TopicPartition>,
    ) -> Duration {
        let (under_way, call) = kind.start(Arc::clone(&self.listener), partitions);
        let timed_out = !self.await_listener(call).await;
        under_way.finish(&self.config.group_id, &self.owned, timed_out, &self.events)
    }

    pub(super) async fn lose_all(&mut self) -> Duration {
        if self.owned.is_empty() {
            return Duration::ZERO;
        }
        let parts: Vec<TopicPartition> = self.owned.iter().cloned().collect();
        let d = self.call_listener(Callback::Lost, parts).await;
        self.owned.clear();
        self.publish();
        d
    }
}
