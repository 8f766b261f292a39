//! A hostile network between a Mooring consumer and the real broker (`scripts/kafka start`):
//! the consumer, in a group, bootstraps through testkit's fault proxy (which rewrites the
//! advertised addresses, so every connection goes through it) and consumes a topic a producer
//! fills while one fault at a time is on: latency with jitter, a bandwidth cap, resets every 2 s,
//! a half-open episode longer than the request timeout, and a flipped byte in 1 of 500 Fetch
//! responses' record batches.
//!
//! Each test checks, against the producer's acknowledged offsets: no panic anywhere in the
//! process, every acknowledged offset handled (0 lost), duplicates only after a rebalance (the
//! count is printed), the typed errors the fault must cause seen among the consumer's events,
//! reconnection where the fault closes connections (the proxy counts what it accepted), and no
//! socket of the process connected to the broker around the proxy.
//!
//! The proxy's seed is printed; `MOORING_FAULT_SEED=<seed>` replays its choices.
//! Run with `set -a; source <(scripts/kafka env); set +a; cargo test -p mooring-consumer --test hostile_network`.

#![allow(clippy::unwrap_used)] // a failed unwrap is a failed test

mod common;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use common::{spawn_run, Seen};
use mooring_consumer::{
    Consumer, ConsumerError, ConsumerEvent, GroupEvent, GroupEventKind, TopicPartition,
};
use mooring_testkit::fault_proxy::{
    Bandwidth, ConnectionEnd, Corruption, CorruptionTarget, Latency, Stats,
};
use mooring_testkit::{unique, BackgroundProducer, Cluster, FaultProxy};
use tokio::task::JoinHandle;
use tokio::time::Instant;

const PARTITIONS: u32 = 3;

/// `run`'s result after shutdown, or that it did not return in time.
type StopResult =
    Result<Result<Result<(), ConsumerError>, tokio::task::JoinError>, tokio::time::error::Elapsed>;

/// Panics on threads other than the tests' own (the consumer's tasks, the proxy), with where.
static PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn watch_panics() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("<unnamed>");
            // Test bodies run on threads named after the test; their failed asserts are theirs.
            if name.starts_with("tokio-runtime-worker")
                || name == "fault-proxy"
                || name == "<unnamed>"
            {
                PANICS.lock().unwrap().push(format!("{name}: {info}"));
            }
            default(info);
        }));
    });
}

/// One consumer in a group of its own, through a proxy of its own, on a topic of its own.
/// What a spawned `run` returned.
type RunResult = Result<Result<(), ConsumerError>, tokio::task::JoinError>;

/// A member of `group` subscribed to `topic` through the proxy (`props`), its events pushed to
/// `events`.
fn member(
    cluster: &Cluster,
    group: &str,
    props: &[(String, String)],
    topic: &str,
    events: &Arc<Mutex<Vec<(Instant, ConsumerEvent)>>>,
) -> Consumer {
    let props: Vec<(&str, &str)> = props
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let consumer = common::consumer(cluster, group, &props);
    consumer.subscribe([topic.to_string()]).unwrap();
    let mut rx = consumer.events().unwrap();
    let sink = Arc::clone(events);
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            sink.lock().unwrap().push((Instant::now(), event));
        }
    });
    consumer
}

struct Hostile {
    name: &'static str,
    cluster: Cluster,
    proxy: FaultProxy,
    topic: String,
    consumer: Consumer,
    seen: Seen,
    events: Arc<Mutex<Vec<(Instant, ConsumerEvent)>>>,
    bypasses: Arc<Mutex<Vec<String>>>,
    run: Option<JoinHandle<Result<(), ConsumerError>>>,
    started: Instant,
    group: String,
    props: Vec<(String, String)>,
    /// Whether a run ended by a refusal a flipped byte forged is started again (see
    /// [`Hostile::restart_after_forged_refusal`]), and the refusals that were.
    restart_forged: bool,
    forged: Vec<String>,
}

/// What a test checks at the end.
struct Outcome {
    acked: usize,
    lost: Vec<(i32, i64)>,
    duplicates: u64,
    rebalances: usize,
    stats: Stats,
    events: Vec<(Instant, ConsumerEvent)>,
}

impl Outcome {
    /// Fetch errors, with their partition.
    fn fetch_errors(&self) -> Vec<(Option<TopicPartition>, String)> {
        self.events
            .iter()
            .filter_map(|(_, e)| match e {
                ConsumerEvent::FetchError {
                    partition, error, ..
                } => Some((partition.clone(), error.clone())),
                _ => None,
            })
            .collect()
    }

    /// Failed heartbeats' errors.
    fn heartbeat_errors(&self) -> Vec<String> {
        self.group_events()
            .filter_map(|k| match k {
                GroupEventKind::Heartbeat { error, .. } => error.clone(),
                _ => None,
            })
            .collect()
    }

    /// Heartbeat round trips that succeeded.
    fn heartbeat_latencies(&self) -> Vec<Duration> {
        self.group_events()
            .filter_map(|k| match k {
                GroupEventKind::Heartbeat {
                    latency,
                    error: None,
                    ..
                } => Some(*latency),
                _ => None,
            })
            .collect()
    }

    fn group_events(&self) -> impl Iterator<Item = &GroupEventKind> {
        self.events.iter().filter_map(|(_, e)| match e {
            ConsumerEvent::Group(GroupEvent { kind, .. }) => Some(kind),
            _ => None,
        })
    }

    /// Duplicates are legitimate only after the member lost or gave up partitions (a rebalance
    /// after the first, or a loss), where uncommitted records are delivered again.
    fn check_losses_and_duplicates(&self, name: &str) {
        assert!(
            self.lost.is_empty(),
            "{name}: {} of {} acknowledged records never handled, e.g. {:?}",
            self.lost.len(),
            self.acked,
            &self.lost[..self.lost.len().min(10)]
        );
        if self.rebalances <= 1 {
            assert_eq!(
                self.duplicates, 0,
                "{name}: duplicates without a rebalance to explain them"
            );
        }
    }
}

impl Hostile {
    async fn start(name: &'static str, extra: &[(&str, &str)]) -> Hostile {
        watch_panics();
        let cluster = Cluster::shared();
        let topic = unique(name);
        let group = unique(&format!("{name}-g"));
        cluster.create_topic(&topic, PARTITIONS);
        let proxy = FaultProxy::start(cluster.bootstrap()).unwrap();
        eprintln!(
            "{name}: fault proxy seed {} (replay: MOORING_FAULT_SEED={})",
            proxy.seed(),
            proxy.seed()
        );
        let mut props = vec![("bootstrap.servers".to_string(), proxy.bootstrap())];
        props.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let events = Arc::new(Mutex::new(Vec::new()));
        let consumer = member(&cluster, &group, &props, &topic, &events);
        let seen = Seen::default();
        let run = spawn_run(&consumer, &seen, Duration::ZERO);
        let mut hostile = Hostile {
            name,
            cluster,
            proxy,
            topic,
            consumer,
            seen,
            events,
            bypasses: Arc::new(Mutex::new(Vec::new())),
            run: Some(run),
            started: Instant::now(),
            group,
            props,
            restart_forged: false,
            forged: Vec::new(),
        };
        hostile.watch_bypasses();
        hostile
            .wait("every partition assigned", Duration::from_secs(30), |h| {
                h.consumer.assignment().len() == PARTITIONS as usize
            })
            .await;
        hostile
    }

    /// Looks for sockets around the proxy four times a second while the test runs.
    fn watch_bypasses(&self) {
        let found = Arc::clone(&self.bypasses);
        let peers = self.proxy.bypass_checker();
        tokio::spawn(async move {
            loop {
                match peers.check() {
                    Ok(bypasses) => found.lock().unwrap().extend(bypasses),
                    Err(e) => found.lock().unwrap().push(format!("cannot look: {e}")),
                }
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
    }

    fn produce(&self, count: u64, rate: u32, props: &[(&str, &str)]) -> BackgroundProducer {
        self.cluster
            .spawn_verifiable_producer(&self.topic, Some(count), rate, props)
    }

    /// Polls `condition` every 50 ms until it holds; fails at `timeout`, or at once if `run`
    /// ended (with its result).
    async fn wait(
        &mut self,
        what: &str,
        timeout: Duration,
        mut condition: impl FnMut(&Self) -> bool,
    ) {
        let deadline = Instant::now() + timeout;
        while !condition(self) {
            if self.run.as_ref().is_some_and(JoinHandle::is_finished) {
                if let Some(run) = self.run.take() {
                    let result = run.await;
                    if !self.restart_after_forged_refusal(&result) {
                        self.ended_early(what, result);
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "{}: timed out after {timeout:?} waiting for: {what} (proxy {:?})",
                self.name,
                self.proxy.stats()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Fails the test with the result of a `run` that ended by itself.
    fn ended_early(&self, what: &str, result: RunResult) -> ! {
        panic!(
            "{}: the consumer's run ended by itself while waiting for {what}: {result:?} \
             (proxy seed {}; corrupted {:?})",
            self.name,
            self.proxy.seed(),
            self.proxy.stats().corrupted
        );
    }

    /// A run that ended on an authorization or authentication refusal, from a broker that
    /// enforces neither, ended on a byte the proxy flipped outside the record batches: Kafka's
    /// protocol checksums nothing but records, so a flipped error code reads as the broker's,
    /// and such a refusal is final by design, as in Java's client. With `restart_forged`, the
    /// consumer starts again in the same group, as its pod would, and the refusal is noted.
    /// Whether it did.
    fn restart_after_forged_refusal(&mut self, result: &RunResult) -> bool {
        let Ok(Err(error)) = result else {
            return false;
        };
        let kind = error.kind();
        let refusal = kind.ends_with("authorization") || kind == "authentication";
        let flipped = self
            .proxy
            .stats()
            .corrupted
            .iter()
            .any(|c| c.batch.is_none());
        if !(self.restart_forged && refusal && flipped) {
            return false;
        }
        eprintln!(
            "{}: a flipped byte forged a refusal: {error}; starting again",
            self.name
        );
        self.forged.push(error.to_string());
        self.consumer = member(
            &self.cluster,
            &self.group,
            &self.props,
            &self.topic,
            &self.events,
        );
        self.run = Some(spawn_run(&self.consumer, &self.seen, Duration::ZERO));
        true
    }

    fn missing(&self, acked: &[(i32, i64)]) -> Vec<(i32, i64)> {
        let seen: HashSet<(i32, i64)> = self
            .seen
            .offsets()
            .into_iter()
            .map(|(_, p, o)| (p, o))
            .collect();
        acked
            .iter()
            .filter(|a| !seen.contains(a))
            .copied()
            .collect()
    }

    /// Waits for the producer to finish and every acknowledged record to be handled (up to
    /// `drain` after the producer ends), stops the consumer and gathers what the checks need.
    async fn finish(mut self, producer: BackgroundProducer, drain: Duration) -> Outcome {
        self.wait("the producer to finish", Duration::from_secs(60), |_| {
            producer.is_finished()
        })
        .await;
        let acked = producer.stop();
        assert!(!acked.is_empty(), "{}: nothing acknowledged", self.name);
        let deadline = Instant::now() + drain;
        while !self.missing(&acked).is_empty() && Instant::now() < deadline {
            if self.run.as_ref().is_some_and(JoinHandle::is_finished) {
                if let Some(run) = self.run.take() {
                    let result = run.await;
                    self.ended_early("every acknowledged record", result);
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let run = self.run.take().unwrap();
        // Stopped here, but judged after the records: a lost record says more than a hung
        // shutdown that follows from it.
        self.consumer.shutdown_handle().shutdown();
        let result = tokio::time::timeout(Duration::from_secs(30), run).await;
        let events = self.events.lock().unwrap().clone();
        let outcome = Outcome {
            acked: acked.len(),
            lost: self.missing(&acked),
            duplicates: self.seen.duplicates(),
            rebalances: rebalances(&events),
            stats: self.proxy.stats(),
            events,
        };
        self.report(&outcome);
        self.check(&outcome, result);
        outcome
    }

    fn report(&self, outcome: &Outcome) {
        let accepted: BTreeMap<String, u64> = outcome
            .stats
            .accepted
            .iter()
            .map(|(e, n)| (e.to_string(), *n))
            .collect();
        println!(
            "{}: seed {}, {:.1?}: acknowledged {}, handled {}, lost {}, duplicates {}, \
             rebalances {}, fetch errors {}, heartbeat errors {}, accepted {accepted:?}, \
             reset episodes {}, dropped half-open {}, delayed {}, corrupted {}",
            self.name,
            self.proxy.seed(),
            self.started.elapsed(),
            outcome.acked,
            self.seen.distinct(),
            outcome.lost.len(),
            outcome.duplicates,
            outcome.rebalances,
            outcome.fetch_errors().len(),
            outcome.heartbeat_errors().len(),
            outcome.stats.reset_episodes,
            outcome.stats.dropped_half_open,
            outcome.stats.delayed,
            outcome.stats.corrupted.len(),
        );
    }

    /// What every test asserts, in the order that explains a failure best.
    fn check(&self, outcome: &Outcome, result: StopResult) {
        let panics = PANICS.lock().unwrap().clone();
        assert!(panics.is_empty(), "{}: panics: {panics:?}", self.name);
        let bypasses = self.bypasses.lock().unwrap().clone();
        assert!(
            bypasses.is_empty(),
            "{}: connections around the proxy: {bypasses:?}",
            self.name
        );
        assert!(
            outcome.stats.rewrite_errors.is_empty(),
            "{}: {:?}",
            self.name,
            outcome.stats.rewrite_errors
        );
        assert!(
            outcome.stats.accepted.keys().count() >= 2,
            "{}: the consumer used the node listener, not only the bootstrap one: {:?}",
            self.name,
            outcome.stats.accepted
        );
        outcome.check_losses_and_duplicates(self.name);
        match result {
            Ok(Ok(Ok(()))) => {}
            Ok(other) => panic!("{}: run returned {other:?}", self.name),
            Err(_) => panic!("{}: run did not return within 30 s of shutdown", self.name),
        }
    }
}

/// Rebalances the member went through (the first join counts as one).
fn rebalances(events: &[(Instant, ConsumerEvent)]) -> usize {
    events
        .iter()
        .filter(|(_, e)| {
            matches!(
                e,
                ConsumerEvent::Group(GroupEvent {
                    kind: GroupEventKind::RebalanceStarted { .. },
                    ..
                })
            )
        })
        .count()
}

/// Every exchange is slower (responses 150-350 ms, requests 20-70 ms), well inside the 3 s
/// request timeout: nothing times out, the member keeps its generation, nothing is lost or
/// handled twice, and the heartbeats show the added latency.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn latency_and_jitter_slow_every_exchange_and_nothing_times_out_or_is_lost() {
    let h = Hostile::start("latency", &[("request.timeout.ms", "3000")]).await;
    let faults = h.proxy.faults();
    faults.set_response_latency(Some(Latency::new(
        Duration::from_millis(150),
        Duration::from_millis(200),
    )));
    faults.set_request_latency(Some(Latency::new(
        Duration::from_millis(20),
        Duration::from_millis(50),
    )));
    let producer = h.produce(3000, 400, &[]);
    let outcome = h.finish(producer, Duration::from_secs(20)).await;
    assert_eq!(outcome.fetch_errors(), [], "nothing may time out");
    assert_eq!(outcome.heartbeat_errors(), Vec::<String>::new());
    assert_eq!(outcome.rebalances, 1, "the member keeps its generation");
    assert_eq!(outcome.duplicates, 0);
    let slow = outcome.heartbeat_latencies();
    assert!(
        slow.iter()
            .filter(|l| **l >= Duration::from_millis(170))
            .count()
            >= 3,
        "heartbeats through the delays: {slow:?}"
    );
}

/// 16 KiB/s per connection direction under a producer writing faster than that: fetches are
/// paced by the cap (the records take at least their bytes over the cap to arrive), heartbeats
/// on their own connection keep the member in its generation, nothing times out or is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bandwidth_cap_paces_fetches_and_nothing_is_lost() {
    const CAP: u64 = 16 * 1024;
    // A Fetch response of 3 partitions x 64 KiB takes 12 s at the cap: the default 30 s
    // request timeout leaves room.
    let h = Hostile::start("bandwidth", &[]).await;
    h.proxy
        .faults()
        .set_bandwidth(Some(Bandwidth::PerConnection(CAP)));
    let capped_at = Instant::now();
    let before = h.proxy.stats();
    let producer = h.produce(6000, 1000, &[("linger.ms", "0")]);
    let outcome = h.finish(producer, Duration::from_secs(30)).await;
    assert_eq!(outcome.fetch_errors(), [], "nothing may time out");
    assert_eq!(outcome.rebalances, 1, "the member keeps its generation");
    // The busiest connection (the fetcher's) could not have carried its bytes faster.
    let busiest = outcome
        .stats
        .connections
        .iter()
        .map(|c| {
            let earlier = before
                .connections
                .iter()
                .find(|b| b.id == c.id)
                .map_or(0, |b| b.bytes_to_client);
            c.bytes_to_client - earlier
        })
        .max()
        .unwrap_or(0);
    let least = Duration::from_secs_f64(busiest as f64 / CAP as f64 * 0.9);
    println!("bandwidth: busiest connection {busiest} B, at least {least:.1?} under the cap");
    assert!(
        busiest > 2 * CAP,
        "the cap must bind: only {busiest} B relayed"
    );
    assert!(
        capped_at.elapsed() >= least,
        "{busiest} B in {:?}",
        capped_at.elapsed()
    );
}

/// Every open connection is reset (RST) every 2 s while the producer writes: the consumer sees
/// its fetches fail, reconnects each time (the proxy accepts new connections after each reset),
/// and loses nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn connections_reset_every_two_seconds_are_remade_and_nothing_is_lost() {
    let mut h = Hostile::start("resets", &[("request.timeout.ms", "3000")]).await;
    let before = h.proxy.stats();
    h.proxy
        .faults()
        .set_reset_every(Some(Duration::from_secs(2)));
    let producer = h.produce(4000, 400, &[]);
    h.wait("three reset episodes", Duration::from_secs(30), |h| {
        h.proxy.stats().reset_episodes >= 3
    })
    .await;
    let outcome = h.finish(producer, Duration::from_secs(20)).await;
    let resets = outcome.stats.ended_with(&ConnectionEnd::Reset);
    assert!(resets >= 3, "connections reset: {resets}");
    assert!(
        outcome.stats.accepted_total() >= before.accepted_total() + 3,
        "reconnected after the resets: {:?} then {:?}",
        before.accepted,
        outcome.stats.accepted
    );
    let errors = outcome.fetch_errors();
    assert!(
        !errors.is_empty(),
        "the resets must surface as typed fetch errors"
    );
    println!(
        "resets: {resets} connections reset; fetch errors e.g. {:?}",
        &errors[..errors.len().min(3)]
    );
}

/// Nothing is relayed for 5 s, sockets kept open, with request.timeout.ms at 3 s: the consumer's
/// requests time out (typed Timeout errors among its events), it drops those connections and
/// makes new ones, and after the episode it consumes everything, losing nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_half_open_episode_longer_than_the_request_timeout_is_timed_out_and_reconnected() {
    let mut h = Hostile::start(
        "half-open",
        &[
            ("request.timeout.ms", "3000"),
            ("session.timeout.ms", "20000"),
        ],
    )
    .await;
    let producer = h.produce(4000, 400, &[]);
    h.wait("records flowing", Duration::from_secs(30), |h| {
        h.seen.distinct() > 200
    })
    .await;
    let before = h.proxy.stats();
    h.proxy.faults().set_half_open(true);
    let episode = Instant::now();
    // The episode lasts 5 s whatever the consumer does.
    tokio::time::sleep(Duration::from_secs(5)).await;
    h.proxy.faults().set_half_open(false);
    let handled_at_end = h.seen.distinct();
    h.wait("records flowing again", Duration::from_secs(20), |h| {
        h.seen.distinct() > handled_at_end + 100
    })
    .await;
    let outcome = h.finish(producer, Duration::from_secs(20)).await;
    assert!(
        outcome.stats.dropped_half_open > 0,
        "the episode dropped frames"
    );
    let timeouts: Vec<String> = outcome
        .events
        .iter()
        .filter(|(at, _)| *at >= episode)
        .filter_map(|(_, e)| match e {
            ConsumerEvent::FetchError { error, .. } if error.contains("timed out") => {
                Some(error.clone())
            }
            _ => None,
        })
        .collect();
    assert!(
        !timeouts.is_empty(),
        "a typed timeout among the fetch errors: {:?}",
        outcome.fetch_errors()
    );
    assert!(
        outcome.stats.accepted_total() > before.accepted_total(),
        "new connections after the timeouts: {:?} then {:?}",
        before.accepted,
        outcome.stats.accepted
    );
    println!(
        "half-open: timeouts e.g. {:?}",
        &timeouts[..timeouts.len().min(3)]
    );
}

/// One Fetch response in 500 that carries a record batch gets one byte flipped inside the
/// batch's CRC-32C coverage. Each flip is caught by the CRC (a fetch error naming the partition)
/// and the same offset is fetched again, intact: nothing is lost, nothing handled twice, and
/// the consumer never stops (a CRC mismatch is fatal only when one offset fails 3 times in a
/// row).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flipped_record_byte_in_one_fetch_response_in_500_is_caught_by_the_crc_and_fetched_again()
{
    let mut h = Hostile::start("corruption", &[("request.timeout.ms", "3000")]).await;
    h.proxy.faults().set_corruption(Some(Corruption {
        one_in: 500,
        target: CorruptionTarget::FetchRecords,
    }));
    // Small batches, sent as they come: many Fetch responses with records.
    let producer = h.produce(8000, 500, &[("linger.ms", "0")]);
    h.wait("two corrupted batches", Duration::from_secs(40), |h| {
        h.proxy.stats().corrupted.len() >= 2
    })
    .await;
    let outcome = h.finish(producer, Duration::from_secs(20)).await;
    assert_eq!(outcome.duplicates, 0, "a refetch hands out nothing twice");
    let errors = outcome.fetch_errors();
    for corrupted in &outcome.stats.corrupted {
        let batch = corrupted.batch.as_ref().unwrap();
        assert!(
            errors.iter().any(|(tp, e)| {
                tp.as_ref()
                    .is_some_and(|tp| tp.partition == batch.partition)
                    && e.contains("CRC")
            }),
            "the CRC mismatch of {batch:?} among the fetch errors: {errors:?}"
        );
    }
}

/// One response in 50, of every kind, gets a byte flipped anywhere (size prefix, header, body,
/// records) for 8 s: framing breaks, bodies fail to decode, record batches fail their CRC. The
/// consumer must survive it: no panic, `run` still running, and once the corruption stops every
/// record acknowledged from then on is handled. (A flip outside any checksum, e.g. in a batch's
/// base offset, can move a position, so records from the corrupt period may legitimately be
/// skipped or handled twice: those counts, and records handed out at offsets the log never had,
/// are printed, not asserted.)
///
/// A batch that cannot be read at all (a flipped magic byte) or whose offsets cannot be right (a
/// flipped base offset that puts it before the position, out of order or past the high
/// watermark) is fetched again like a CRC mismatch; only a small shift of the last batch's base
/// offset still below the high watermark cannot be told from the real thing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bytes_flipped_anywhere_in_one_response_in_50_never_stop_the_consumer() {
    let mut h = Hostile::start("anywhere", &[("request.timeout.ms", "3000")]).await;
    h.restart_forged = true;
    let producer = h.produce(6000, 400, &[("linger.ms", "0")]);
    h.proxy.faults().set_corruption(Some(Corruption {
        one_in: 50,
        target: CorruptionTarget::Anywhere,
    }));
    tokio::time::sleep(Duration::from_secs(8)).await;
    h.proxy.faults().set_corruption(None);
    let corrupted = h.proxy.stats().corrupted.len();
    let cut = producer.acked_count();
    h.wait("the producer to finish", Duration::from_secs(60), |_| {
        producer.is_finished()
    })
    .await;
    let acked = producer.stop();
    let after = acked[cut.min(acked.len())..].to_vec();
    assert!(
        !after.is_empty(),
        "records acknowledged after the corruption stopped"
    );
    h.wait(
        "every record acknowledged after the corruption stopped",
        Duration::from_secs(30),
        |h| h.missing(&after).is_empty(),
    )
    .await;
    let lost = h.missing(&acked).len();
    let duplicates = h.seen.duplicates();
    // Records handed out at offsets the producer never had acknowledged: read from a batch
    // whose base offset (outside the CRC) was flipped.
    let real: HashSet<(i32, i64)> = acked.iter().copied().collect();
    let phantom: Vec<(i32, i64)> = h
        .seen
        .offsets()
        .into_iter()
        .map(|(_, p, o)| (p, o))
        .filter(|k| !real.contains(k))
        .collect();
    let run = h.run.take().unwrap();
    let result = common::stop(&h.consumer, run).await;
    let stats = h.proxy.stats();
    let events = h.events.lock().unwrap().clone();
    let resets: Vec<String> = events
        .iter()
        .filter_map(|(_, e)| match e {
            ConsumerEvent::OffsetReset {
                partition, offset, ..
            } => Some(format!("{partition}->{offset}")),
            _ => None,
        })
        .collect();
    println!(
        "anywhere: seed {}: {corrupted} responses corrupted; acknowledged {}, lost {lost}, \
         duplicates {duplicates}, rebalances {}, offset resets {resets:?}, \
         {} phantom offsets e.g. {:?}; accepted {:?}; refusals forged by a flip, restarted: {:?}",
        h.proxy.seed(),
        acked.len(),
        rebalances(&events),
        phantom.len(),
        &phantom[..phantom.len().min(5)],
        stats.accepted,
        h.forged
    );
    assert!(result.is_ok(), "run returned {result:?}");
    let panics = PANICS.lock().unwrap().clone();
    assert!(panics.is_empty(), "panics: {panics:?}");
    assert!(corrupted >= 3, "only {corrupted} responses corrupted");
}
