//! A Fetch answer's partitions extracted off the fetch loop: CRC checks, decompression and record
//! decoding (`records::extract`) run on a small pool of threads, one per core, side by side, so a
//! compressed topic decompresses on every core and the loop goes on with the other brokers'
//! answers, the engine's wake-ups and the group meanwhile. Each partition's extraction goes back
//! to the loop as soon as it is done (`Fetcher::handle_extracted` hands it to the engine): a
//! partition's records are not held while the others of its answer decompress.
//!
//! Each worker thread keeps its own zstd context (`mooring_wire::records`), and the memory budget
//! bounds what the workers decompress together (`records::Inflation`).
//!
//! An answer smaller than [`OFF_LOOP_FROM`] is extracted on the loop: handing it over would cost
//! more than it saves.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use mooring_wire::messages::fetch::AbortedTransaction;
use mooring_wire::records::RecordsError;
use tokio::sync::mpsc::UnboundedSender;

use super::records::{self, Extracted, Inflation, OffsetWindow};
use crate::subscription::FetchPosition;
use crate::TopicPartition;

/// Record bytes from which an answer is extracted off the loop.
pub(crate) const OFF_LOOP_FROM: usize = 64 * 1024;

/// One partition's records to extract.
#[derive(Debug)]
pub(crate) struct Job {
    pub tp: TopicPartition,
    /// The position the records were fetched from (checked again before they are handed on).
    pub position: FetchPosition,
    pub bytes: Bytes,
    pub window: OffsetWindow,
    /// The answer's aborted transactions, under `read_committed` only.
    pub aborted: Option<Vec<AbortedTransaction>>,
}

/// One partition's extraction, done.
#[derive(Debug)]
pub(crate) struct Done {
    pub tp: TopicPartition,
    pub position: FetchPosition,
    /// The records' size on the wire.
    pub wire_bytes: usize,
    /// `None`: the extraction panicked (a bug); nothing is handed on and the position stands,
    /// so the records are fetched again.
    pub result: Option<Result<Extracted, RecordsError>>,
}

impl Job {
    pub(crate) fn run(self, inflation: &Inflation) -> Done {
        let Job {
            tp,
            position,
            bytes,
            window,
            aborted,
        } = self;
        let wire_bytes = bytes.len();
        let result = catch_unwind(AssertUnwindSafe(|| {
            records::extract(
                bytes,
                &tp.topic,
                tp.partition,
                window,
                aborted.as_deref(),
                inflation,
            )
        }));
        if result.is_err() {
            tracing::error!(partition = %tp, "record extraction panicked; fetching again");
        }
        Done {
            tp,
            position,
            wire_bytes,
            result: result.ok(),
        }
    }
}

/// Extracts the jobs on the pool, the partitions split across its threads by their bytes, each
/// partition's [`Done`] sent to `to` with `node` as soon as it is done. Without a pool (its
/// threads could not be started) the jobs are given back, to be extracted here.
pub(crate) fn off_loop(
    jobs: Vec<Job>,
    inflation: &Arc<Inflation>,
    node: i32,
    to: &UnboundedSender<(i32, Done)>,
) -> Result<(), Vec<Job>> {
    let Some(pool) = pool() else {
        return Err(jobs);
    };
    for share in split(jobs, pool.current_num_threads()) {
        let (inflation, to) = (Arc::clone(inflation), to.clone());
        pool.spawn(move || {
            for job in share {
                // The loop may be gone (shutdown): the records are dropped with the answer.
                let _ = to.send((node, job.run(&inflation)));
            }
        });
    }
    Ok(())
}

/// Splits `jobs` into at most `ways` shares of about the same bytes (largest first, each to the
/// lightest share).
fn split(mut jobs: Vec<Job>, ways: usize) -> Vec<Vec<Job>> {
    jobs.sort_unstable_by_key(|job| std::cmp::Reverse(job.bytes.len()));
    let mut shares: Vec<(usize, Vec<Job>)> = (0..ways.max(1).min(jobs.len()))
        .map(|_| (0, Vec::new()))
        .collect();
    for job in jobs {
        if let Some(lightest) = shares.iter_mut().min_by_key(|(bytes, _)| *bytes) {
            lightest.0 += job.bytes.len();
            lightest.1.push(job);
        }
    }
    shares.into_iter().map(|(_, share)| share).collect()
}

/// The extraction threads, one per core, started with the first answer that needs them and
/// shared by every consumer of the process.
fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("mooring-extract-{i}"))
            .build()
            .map_err(|e| tracing::warn!(error = %e, "no extraction threads; extracting on the fetch loop"))
            .ok()
    })
    .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(partition: i32, len: usize) -> Job {
        Job {
            tp: TopicPartition::new("t", partition),
            position: FetchPosition {
                offset: 0,
                leader_epoch: None,
            },
            bytes: Bytes::from(vec![0u8; len]),
            window: OffsetWindow {
                position: 0,
                end: None,
            },
            aborted: None,
        }
    }

    #[test]
    fn shares_balance_bytes_and_keep_every_job_once() {
        let jobs = [900, 100, 500, 400, 300, 10].into_iter().enumerate();
        let shares = split(jobs.map(|(i, n)| job(i as i32, n)).collect(), 2);
        let bytes: Vec<usize> = shares
            .iter()
            .map(|s| s.iter().map(|j| j.bytes.len()).sum())
            .collect();
        assert_eq!(bytes, vec![1200, 1010]);
        let mut seen: Vec<i32> = shares.iter().flatten().map(|j| j.tp.partition).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..6).collect::<Vec<_>>());
        assert_eq!(split(vec![job(0, 5)], 4).len(), 1, "no empty shares");
    }
}
