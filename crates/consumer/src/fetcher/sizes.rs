//! How much each Fetch asks for: per partition, what its engine buffer surely has room for; per
//! request, what the memory budget (`mooring.memory.max.bytes`) has room for beside the frames
//! alive and the requests in flight (see the fetcher's module docs, **Limits**).

use std::collections::BTreeMap;

use tokio::time::Instant;

use super::session::PartitionRequest;
use super::Fetcher;
use crate::processing::Dispatch;
use crate::TopicPartition;

/// The partitions to fetch from each broker, by node id.
pub(super) type ByNode = BTreeMap<i32, BTreeMap<TopicPartition, PartitionRequest>>;

/// Per-partition fetch sizes below `max.partition.fetch.bytes` are multiples of this, so the
/// limit stays the same from one request to the next (a change re-lists the partition in the
/// fetch session).
const FETCH_SIZE_GRAIN: usize = 64 * 1024;

impl<H: Dispatch> Fetcher<H> {
    /// The partition's `partition_max_bytes`: `max.partition.fetch.bytes`, lowered to the room
    /// its engine buffer has after a backpressure pause ends (in bytes, and in records at the
    /// partition's last seen record size), in multiples of [`FETCH_SIZE_GRAIN`]. The broker
    /// still sends a first batch larger than the limit whole (KIP-74).
    pub(super) fn partition_max_bytes(&self, tp: &TopicPartition) -> i32 {
        let configured = usize::try_from(self.shared.config.fetch.max_partition_bytes).unwrap_or(0);
        let buffer = &self.shared.config.processing;
        let mut room = buffer
            .max_buffered_bytes
            .saturating_sub(buffer.resume_buffered_bytes);
        if let Some(size) = self.record_sizes.get(tp) {
            let records = buffer
                .max_buffered_records
                .saturating_sub(buffer.resume_buffered_records);
            room = room.min(records.saturating_mul(*size));
        }
        let limit = (room / FETCH_SIZE_GRAIN * FETCH_SIZE_GRAIN)
            .max(FETCH_SIZE_GRAIN)
            .min(configured);
        i32::try_from(limit).unwrap_or(i32::MAX)
    }

    /// The `fetch.max.bytes` of the next request when `brokers` brokers have partitions to
    /// fetch: what the memory budget has room for, beside the frames alive and the requests in
    /// flight, at most half the budget (so one answer is handled while the next is fetched) or,
    /// with more than two brokers, its share of the budget (so that each can have a request in
    /// flight), divided by what recent answers held while extracted per wire byte (their frame
    /// and their decompressed batches), and at most
    /// `fetch.max.bytes`. `None` while the budget is full; with nothing held at all a request
    /// always goes (the broker still sends a first batch larger than asked for, so a record
    /// larger than the budget is consumed).
    pub(super) fn request_max_bytes(&self, brokers: usize) -> Option<i32> {
        let memory = &self.shared.memory;
        let reserved: usize = self.reserved.values().sum();
        let held = memory.in_use() + reserved;
        let room = memory.limit().saturating_sub(held);
        if room < FETCH_SIZE_GRAIN && held > 0 {
            return None;
        }
        let configured = usize::try_from(self.shared.config.fetch.max_bytes).unwrap_or(0);
        let share = memory.limit() / brokers.max(2);
        let max = ((room.min(share) as f64) / self.expansion) as usize;
        let max = max.max(FETCH_SIZE_GRAIN).min(configured);
        Some(i32::try_from(max).unwrap_or(i32::MAX))
    }

    /// The brokers of `by_node` that get a request now, each with its `fetch.max.bytes`: those
    /// with none in flight nor a back-off running, while the memory budget has room. Each one's
    /// reservation (what its answer will hold once decompressed) is counted as it is admitted;
    /// `memory_full` says that one had to wait for room. The brokers take turns: a round starts
    /// after the broker last admitted, so when the budget has room for fewer requests than
    /// there are brokers, an answer's room goes to the next broker, not back to the one that
    /// answered (which, first in node order, kept a third broker from ever being fetched).
    pub(super) fn admit(
        &mut self,
        mut by_node: ByNode,
        now: Instant,
    ) -> Vec<(i32, BTreeMap<TopicPartition, PartitionRequest>, i32)> {
        let brokers = by_node.len();
        let after = by_node.split_off(&self.last_admitted.saturating_add(1));
        let mut admitted = Vec::new();
        for (node, wanted) in after.into_iter().chain(by_node) {
            if self.busy.contains(&node) || self.backoff_until.get(&node).is_some_and(|t| now < *t)
            {
                continue;
            }
            let Some(max_bytes) = self.request_max_bytes(brokers) else {
                self.memory_full = true;
                break;
            };
            let reserve = f64::from(max_bytes) * self.expansion;
            self.reserved.insert(node, reserve as usize);
            self.last_admitted = node;
            admitted.push((node, wanted, max_bytes));
        }
        admitted
    }
}
