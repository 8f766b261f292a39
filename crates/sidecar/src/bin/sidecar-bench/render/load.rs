//! The event load of the render part, as the consumer's exporter makes it: a batch of lines every
//! 100 ms and a snapshot with every partition every `--snapshot-interval-ms`, each POST timed;
//! beside it, the sidecar's RSS sampled every 100 ms for its peak under load.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use crate::http::Conn;
use crate::procfs::rss_kib;
use crate::stats::sorted;

/// The load and the RSS sampler, running until [`Load::stop`].
pub struct Load {
    stop: Arc<AtomicBool>,
    posted: Arc<AtomicU64>,
    post_latency: Arc<Mutex<Vec<f64>>>,
    peak_rss: Arc<AtomicU64>,
    started: Instant,
    poster: JoinHandle<()>,
    sampler: JoinHandle<()>,
}

/// What the load did.
pub struct Loaded {
    /// Lines the sidecar accepted.
    pub posted: u64,
    /// From the load's start to its stop, s.
    pub secs: f64,
    /// Every POST's round trip, ms, sorted.
    pub posts: Vec<f64>,
    /// The highest VmRSS sampled, KiB.
    pub peak_rss: u64,
}

impl Load {
    /// Starts posting on `post`: `batch` (of `per_tick` lines) every 100 ms, `snapshot` every
    /// `snapshot_every`; and sampling the RSS of process `pid`.
    pub fn start(
        mut post: Conn,
        batch: Arc<Vec<u8>>,
        snapshot: Arc<Vec<u8>>,
        per_tick: u64,
        snapshot_every: Duration,
        pid: u32,
    ) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let posted = Arc::new(AtomicU64::new(0));
        let post_latency: Arc<Mutex<Vec<f64>>> = Arc::default();
        let started = Instant::now();
        let poster = {
            let (stop, posted, lat) = (
                Arc::clone(&stop),
                Arc::clone(&posted),
                Arc::clone(&post_latency),
            );
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                let mut last_snapshot = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    tick.tick().await;
                    let t0 = Instant::now();
                    if post.request("POST", "/v1/events", &batch).await.is_ok() {
                        posted.fetch_add(per_tick, Ordering::Relaxed);
                    }
                    let mut spent = vec![t0.elapsed().as_secs_f64() * 1000.0];
                    if last_snapshot.elapsed() >= snapshot_every {
                        last_snapshot = Instant::now();
                        let t0 = Instant::now();
                        if post.request("POST", "/v1/events", &snapshot).await.is_ok() {
                            posted.fetch_add(1, Ordering::Relaxed);
                        }
                        spent.push(t0.elapsed().as_secs_f64() * 1000.0);
                    }
                    lat.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .extend(spent);
                }
            })
        };
        let peak_rss = Arc::new(AtomicU64::new(0));
        let sampler = {
            let (stop, peak) = (Arc::clone(&stop), Arc::clone(&peak_rss));
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    if let Some((rss, _)) = rss_kib(pid) {
                        peak.fetch_max(rss, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            })
        };
        Load {
            stop,
            posted,
            post_latency,
            peak_rss,
            started,
            poster,
            sampler,
        }
    }

    /// Stops both tasks and waits for them.
    pub async fn stop(self) -> Loaded {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.poster.await;
        let _ = self.sampler.await;
        let secs = self.started.elapsed().as_secs_f64();
        let posts = sorted(std::mem::take(
            &mut *self
                .post_latency
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        ));
        Loaded {
            posted: self.posted.load(Ordering::Relaxed),
            secs,
            posts,
            peak_rss: self.peak_rss.load(Ordering::Relaxed),
        }
    }
}
