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

    /// The `fetch.max.bytes` of the next request: what the memory budget has room for, beside
    /// the frames alive and the requests in flight, at most half the budget (so one answer is
    /// handled while the next is fetched), divided by the recent answers' expansion when
    /// decompressed, and at most `fetch.max.bytes`. `None` while the budget
    /// is full; with nothing held at all a request always goes (the broker still sends a first
    /// batch larger than asked for, so a record larger than the budget is consumed).
    pub(super) fn request_max_bytes(&self) -> Option<i32> {
        let memory = &self.shared.memory;
        let reserved: usize = self.reserved.values().sum();
        let held = memory.in_use() + reserved;
        let room = memory.limit().saturating_sub(held);
        if room < FETCH_SIZE_GRAIN && held > 0 {
            return None;
        }
        let configured = usize::try_from(self.shared.config.fetch.max_bytes).unwrap_or(0);
        let max = ((room.min(memory.limit() / 2) as f64) / self.expansion) as usize;
        let max = max.max(FETCH_SIZE_GRAIN).min(configured);
        Some(i32::try_from(max).unwrap_or(i32::MAX))
    }

    /// The brokers of `by_node` that get a request now, each with its `fetch.max.bytes`: those
    /// with none in flight nor a back-off running, while the memory budget has room. Each one's
    /// reservation (what its answer will hold once decompressed) is counted as it is admitted;
    /// `memory_full` says that one had to wait for room.
    pub(super) fn admit(
        &mut self,
        by_node: ByNode,
        now: Instant,
    ) -> Vec<(i32, BTreeMap<TopicPartition, PartitionRequest>, i32)> {
        let mut admitted = Vec::new();
        for (node, wanted) in by_node {
            if self.busy.contains(&node) || self.backoff_until.get(&node).is_some_and(|t| now < *t)
            {
                continue;
            }
            let Some(max_bytes) = self.request_max_bytes() else {
                self.memory_full = true;
                break;
            };
            let reserve = f64::from(max_bytes) * self.expansion;
            self.reserved.insert(node, reserve as usize);
            admitted.push((node, wanted, max_bytes));
        }
        admitted
    }
}
