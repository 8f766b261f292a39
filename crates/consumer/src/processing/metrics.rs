//! Plain-data metrics of the engine, read with
//! [`ProcessingEngine::metrics`](super::ProcessingEngine::metrics): in-flight handlers, per-partition
//! buffers and committable offsets, handler latency and outcome counters. The telemetry exporter
//! turns them into Prometheus series; nothing here knows about Prometheus.

use std::time::Duration;

use mooring_telemetry_schema::HANDLER_LATENCY_BUCKETS_SECONDS;

use crate::TopicPartition;

/// [`HANDLER_LATENCY_BUCKETS_SECONDS`] in nanoseconds, so an observation needs no float.
const BUCKET_NANOS: [u64; HANDLER_LATENCY_BUCKETS_SECONDS.len()] = {
    let mut nanos = [0u64; HANDLER_LATENCY_BUCKETS_SECONDS.len()];
    let mut i = 0;
    while i < nanos.len() {
        nanos[i] = (HANDLER_LATENCY_BUCKETS_SECONDS[i] * 1e9) as u64;
        i += 1;
    }
    nanos
};

/// A fixed-bucket histogram of handler latencies (from the first attempt's start to the final
/// outcome, retries included).
///
/// ```
/// use std::time::Duration;
/// use mooring_consumer::processing::LatencyHistogram;
///
/// let mut h = LatencyHistogram::default();
/// h.record(Duration::from_millis(3));
/// h.record(Duration::from_secs(400));
/// assert_eq!(h.count(), 2);
/// assert_eq!(h.max(), Duration::from_secs(400));
/// // Cumulative counts per bucket, then the overflow (+Inf) count.
/// assert_eq!(h.cumulative()[1], 1);
/// assert_eq!(*h.cumulative().last().expect("+Inf"), 2);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LatencyHistogram {
    /// One count per bucket in [`HANDLER_LATENCY_BUCKETS_SECONDS`], then the overflow bucket.
    counts: [u64; HANDLER_LATENCY_BUCKETS_SECONDS.len() + 1],
    sum: Duration,
    max: Duration,
}

impl LatencyHistogram {
    /// Adds one observation.
    pub fn record(&mut self, latency: Duration) {
        let nanos = latency.as_nanos();
        let i = BUCKET_NANOS
            .iter()
            .position(|&b| nanos <= u128::from(b))
            .unwrap_or(HANDLER_LATENCY_BUCKETS_SECONDS.len());
        if let Some(c) = self.counts.get_mut(i) {
            *c += 1;
        }
        self.sum = self.sum.saturating_add(latency);
        self.max = self.max.max(latency);
    }

    /// Adds another histogram's observations.
    pub(crate) fn merge(&mut self, other: &LatencyHistogram) {
        for (c, o) in self.counts.iter_mut().zip(other.counts) {
            *c += o;
        }
        self.sum = self.sum.saturating_add(other.sum);
        self.max = self.max.max(other.max);
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Sum of all observations.
    pub fn sum(&self) -> Duration {
        self.sum
    }

    /// The longest observation.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// Cumulative counts (`le` buckets, the last one is `+Inf`).
    pub fn cumulative(&self) -> Vec<u64> {
        self.counts
            .iter()
            .scan(0u64, |acc, c| {
                *acc += c;
                Some(*acc)
            })
            .collect()
    }
}

/// One partition's processing state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionMetrics {
    /// The partition.
    pub partition: TopicPartition,
    /// Records buffered, not yet started.
    pub buffered_records: usize,
    /// Bytes buffered, not yet started.
    pub buffered_bytes: usize,
    /// Handlers running for this partition.
    pub in_flight: usize,
    /// Records accepted and not yet committable (what backpressure bounds).
    pub window_records: usize,
    /// The offset a commit may carry now.
    pub committable: Option<i64>,
    /// Fetching is paused by backpressure.
    pub paused_by_backpressure: bool,
}

/// A handler running longer than `max.poll.interval.ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OverdueHandler {
    /// The record's partition.
    pub partition: TopicPartition,
    /// The record's offset.
    pub offset: i64,
    /// How long it has run.
    pub elapsed: Duration,
}

/// A snapshot of the engine.
#[derive(Debug, Clone, PartialEq)]
pub struct ProcessingMetrics {
    /// Handlers running now (a batch handler's call counts once).
    pub in_flight: usize,
    /// The concurrency limit.
    pub concurrency: usize,
    /// The most handlers that ever ran at once.
    pub max_in_flight_observed: usize,
    /// Per partition, sorted.
    pub partitions: Vec<PartitionMetrics>,
    /// Handler latency (one observation per call: per record, or per batch).
    pub handler_latency: LatencyHistogram,
    /// Records whose handler succeeded (every record of a batch that succeeded).
    pub completed_total: u64,
    /// Handler errors (every attempt, a batch's counting once) and panics.
    pub failed_total: u64,
    /// Records skipped after failing (every record of a skipped batch).
    pub skipped_total: u64,
    /// Retries started.
    pub retries_total: u64,
    /// Handlers reported past `max.poll.interval.ms`.
    pub poll_interval_exceeded_total: u64,
    /// Events dropped because the channel was full.
    pub events_dropped_total: u64,
    /// Records discarded unstarted by a stop, drop or shutdown.
    pub discarded_total: u64,
    /// Records handed out and given up unprocessed (stream deliveries dropped without `ack`);
    /// each one stops its partition's commits until the partition is fetched again from its
    /// committed offset.
    pub abandoned_total: u64,
    /// Time since a handler last started or finished (the processing loop's liveness). Only a
    /// sign of trouble while work is pending (`in_flight > 0` or records buffered): an idle
    /// engine has nothing to progress on.
    pub since_last_progress: Duration,
    /// Handlers running longer than `max.poll.interval.ms` now.
    pub overdue: Vec<OverdueHandler>,
    /// Dispatch stopped after a handler failure (policy `Stop`).
    pub halted: bool,
}
