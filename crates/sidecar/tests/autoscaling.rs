//! The scaling signal driving replicas on the real broker, as the HPA would act on it through
//! KEDA's `prometheus` trigger (`AverageValue` 1, deploy/kubernetes/components/keda): every
//! tick the test reads `mooring_scaling_desired_replicas` from the sidecar's `/metrics` and
//! applies the HPA's own formula (desired = ceil(value / 1), nothing while value / replicas is
//! within the 10% tolerance), starting or stopping Mooring consumers of one `consumer`-protocol
//! group. Each replica processes at most `CAPACITY` records a second. The producer sends 100/s,
//! then 10× that for a minute, then nothing.
//!
//! What must hold: the lag back under the drain target within `DRAIN_BOUND` of the burst's end,
//! the replica count going up and then down only (no flapping), down to one once the group is
//! quiet, and every record the broker acknowledged processed (0 lost; duplicates counted). The
//! replica changes are set against KEDA's lag-sum rule (`ceil(total lag / lagThreshold)`, capped
//! at the partitions, the HPA's scale-down stabilization) run over the same look-ups' lag, at
//! KEDA's default `lagThreshold` (10) and at one sized to this load (what a replica drains in
//! the target): open-loop, on the lag our scaling left, which the note printed says.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{get, get_json, metric};
use mooring_consumer::processing::ConsumerRecord;
use mooring_consumer::{Consumer, ConsumerConfig, ConsumerError};
use mooring_testkit::{unique, Cluster};
use support::{background_producer, props, watching_sidecar};
use tokio::task::JoinHandle;

/// Records a replica processes per second, at most.
const CAPACITY: f64 = 200.0;
const PARTITIONS: u32 = 6;
/// `scaling.drain.target.ms`, in seconds.
const TARGET: f64 = 15.0;
/// `scaling.scale.down.hold.ms`, in seconds (the HPA's scale-down stabilization in the
/// simulation of KEDA's rule).
const HOLD: f64 = 20.0;
/// The HPA's sync period, shortened as the other periods are.
const TICK: Duration = Duration::from_secs(2);
/// How soon after the burst ends the lag must be under the target.
const DRAIN_BOUND: f64 = 30.0;
const BASE_RATE: u32 = 100;
const BURST_SECONDS: u32 = 60;

/// What each replica processed, by (partition, offset), and how often.
type Seen = Arc<Mutex<BTreeMap<(i32, i64), u32>>>;

struct Replica {
    consumer: Consumer,
    task: JoinHandle<Result<(), ConsumerError>>,
}

fn start_replica(cluster: &Cluster, group: &str, topic: &str, seen: &Seen) -> Replica {
    let mut p = props(
        cluster,
        group,
        &[
            ("group.protocol", "consumer"),
            ("auto.commit.interval.ms", "500"),
        ],
    );
    p.retain(|(k, _)| {
        !matches!(
            k.as_str(),
            "partition.assignment.strategy" | "session.timeout.ms" | "heartbeat.interval.ms"
        )
    });
    let consumer = Consumer::new(ConsumerConfig::from_properties(p).unwrap()).unwrap();
    consumer.subscribe([topic.to_string()]).unwrap();
    // One replica's pace: a record every 1/CAPACITY s, whichever lane it comes from.
    let next = Arc::new(Mutex::new(Instant::now()));
    let seen = Arc::clone(seen);
    let handler = move |r: ConsumerRecord| {
        let at = {
            let mut next = next.lock().unwrap();
            let at = (*next).max(Instant::now());
            *next = at + Duration::from_secs_f64(1.0 / CAPACITY);
            at
        };
        let seen = Arc::clone(&seen);
        async move {
            tokio::time::sleep_until(at.into()).await;
            *seen
                .lock()
                .unwrap()
                .entry((r.partition(), r.offset()))
                .or_insert(0) += 1;
            Ok::<(), String>(())
        }
    };
    let c = consumer.clone();
    let task = tokio::spawn(async move { c.run(handler).await });
    Replica { consumer, task }
}

async fn stop_replicas(replicas: Vec<Replica>) {
    for r in &replicas {
        r.consumer.shutdown_handle().shutdown();
    }
    for r in replicas {
        tokio::time::timeout(Duration::from_secs(30), r.task)
            .await
            .expect("run returns after shutdown")
            .expect("run task")
            .expect("clean run");
    }
}

/// One HPA tick's figures.
#[derive(Debug, Clone, Copy)]
struct Tick {
    at: f64,
    signal: f64,
    replicas: usize,
    lag_records: i64,
    max_lag_seconds: f64,
}

/// The HPA's decision on an `AverageValue` target of 1: ceil(value), unless value / replicas is
/// within its 10% tolerance of 1.
fn hpa(value: f64, replicas: usize) -> usize {
    if replicas > 0 && (value / replicas as f64 - 1.0).abs() <= 0.1 {
        return replicas;
    }
    (value.ceil() as usize).clamp(1, 10)
}

/// KEDA's Kafka scaler over the same ticks: total lag over `threshold`, capped at the
/// partitions (`allowIdleConsumers: false`), at least one replica, a scale-down only as the
/// highest recommendation of the last `HOLD` seconds. Returns the replica counts, at each tick
/// and at the quiet ticks that follow until the rule has settled.
fn keda(ticks: &[Tick], threshold: f64) -> Vec<usize> {
    // Quiet ticks after the run's last (nothing behind) until its hold has passed: where the
    // rule settles.
    let last = ticks.last().map_or(0.0, |t| t.at);
    let quiet = (1..=(HOLD / TICK.as_secs_f64()).ceil() as u32 + 1).map(|i| Tick {
        at: last + f64::from(i) * TICK.as_secs_f64(),
        signal: 0.0,
        replicas: 0,
        lag_records: 0,
        max_lag_seconds: 0.0,
    });
    let ticks: Vec<Tick> = ticks.iter().copied().chain(quiet).collect();
    let mut out: Vec<usize> = Vec::new();
    let mut recent: Vec<(f64, usize)> = Vec::new();
    let mut replicas = 1;
    for t in &ticks {
        let lag = (t.lag_records as f64).min(f64::from(PARTITIONS) * threshold);
        let raw = hpa(lag / threshold, replicas).min(PARTITIONS as usize);
        recent.push((t.at, raw));
        recent.retain(|(at, _)| t.at - at <= HOLD);
        replicas = if raw >= replicas {
            raw
        } else {
            recent.iter().map(|r| r.1).max().unwrap_or(raw)
        };
        out.push(replicas);
    }
    out
}

/// Replica changes, and how often the direction of change turned.
fn changes(series: &[usize]) -> (usize, usize) {
    let steps: Vec<i64> = series
        .windows(2)
        .map(|w| w[1] as i64 - w[0] as i64)
        .filter(|d| *d != 0)
        .collect();
    let turns = steps
        .windows(2)
        .filter(|w| w[0].signum() != w[1].signum())
        .count();
    (steps.len(), turns)
}

fn max_lag_seconds(metrics: &str) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with("mooring_partition_lag_seconds{"))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .fold(0.0, f64::max)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_consumer_protocol_group_scales_out_and_back_on_the_signal_without_flapping_or_loss() {
    let cluster = Cluster::shared();
    let topic = unique("scale");
    let group = unique("scale-g");
    cluster.create_topic(&topic, PARTITIONS);
    let s = watching_sidecar(
        &cluster,
        &group,
        500,
        &format!(
            "\"scaling.drain.target.ms\" = {}\n\"scaling.scale.down.hold.ms\" = {}\n\
             \"scaling.rate.window.ms\" = 6000\n",
            TARGET * 1000.0,
            HOLD * 1000.0
        ),
    )
    .await;
    let seen: Seen = Arc::default();
    let mut replicas = vec![start_replica(&cluster, &group, &topic, &seen)];

    // The producer: 100/s for 20 s, 1,000/s for a minute, then nothing.
    let phases = [(BASE_RATE, 20), (BASE_RATE * 10, BURST_SECONDS)];
    let produced: u64 = phases.iter().map(|(r, s)| u64::from(r * s)).sum();
    let started = Instant::now();
    let burst_window: Arc<Mutex<(Option<f64>, Option<f64>)>> = Arc::default();
    let producer = {
        let topic = topic.clone();
        let window = Arc::clone(&burst_window);
        tokio::task::spawn_blocking(move || {
            let cluster = Cluster::shared();
            for (i, (rate, seconds)) in phases.into_iter().enumerate() {
                if i == 1 {
                    window.lock().unwrap().0 = Some(started.elapsed().as_secs_f64());
                }
                let mut p = background_producer(&cluster, &topic, rate, seconds);
                let status = p.child.wait().unwrap();
                assert!(status.success(), "ProducerPerformance failed");
                let sent = format!("{} records sent", rate * seconds);
                assert!(p.saw(&sent), "the producer says {sent}");
            }
            window.lock().unwrap().1 = Some(started.elapsed().as_secs_f64());
        })
    };

    let mut ticks: Vec<Tick> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        tokio::time::sleep(TICK).await;
        let (_, text) = get(s.addr, "/metrics").await;
        let scaling = get_json(s.addr, "/debug/scaling").await;
        let Some(signal) = metric(&text, "mooring_scaling_desired_replicas") else {
            continue;
        };
        let want = hpa(signal, replicas.len());
        if want > replicas.len() {
            for _ in replicas.len()..want {
                replicas.push(start_replica(&cluster, &group, &topic, &seen));
            }
        } else if want < replicas.len() {
            let leaving = replicas.split_off(want);
            stop_replicas(leaving).await;
        }
        let tick = Tick {
            at: started.elapsed().as_secs_f64(),
            signal,
            replicas: replicas.len(),
            lag_records: scaling["scaling"]["lag_records"].as_i64().unwrap_or(0),
            max_lag_seconds: max_lag_seconds(&text),
        };
        println!(
            "t={:6.1}s signal={:4.1} replicas={} lag={:6} max_lag_s={:5.1} reason={}",
            tick.at,
            tick.signal,
            tick.replicas,
            tick.lag_records,
            tick.max_lag_seconds,
            scaling["scaling"]["reason"]
        );
        ticks.push(tick);
        let consumed = seen.lock().unwrap().len() as u64;
        if producer.is_finished() && consumed == produced && replicas.len() == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "not back to one replica with everything processed in 300 s: {consumed} of {produced}"
        );
    }
    producer.await.unwrap();
    let (burst_start, burst_end) = {
        let w = burst_window.lock().unwrap();
        (w.0.unwrap(), w.1.unwrap())
    };

    // 0 lost: every offset the broker holds was processed; duplicates counted.
    let ends = cluster.end_offsets(&topic);
    assert_eq!(ends.values().sum::<i64>() as u64, produced);
    let seen = std::mem::take(&mut *seen.lock().unwrap());
    for (p, end) in &ends {
        let missing = (0..*end).filter(|o| !seen.contains_key(&(*p, *o))).count();
        assert_eq!(
            missing, 0,
            "partition {p}: {missing} records never processed"
        );
    }
    let duplicates: u32 = seen.values().map(|n| n - 1).sum();

    // Up then down only, and down to one.
    let ours: Vec<usize> = std::iter::once(1)
        .chain(ticks.iter().map(|t| t.replicas))
        .collect();
    let (our_changes, our_turns) = changes(&ours);
    assert!(
        our_turns <= 1,
        "the replica count turned {our_turns} times: {ours:?}"
    );
    let peak = ours.iter().copied().max().unwrap();
    assert!(peak > 1 && peak <= PARTITIONS as usize, "{ours:?}");

    // The lag under the target within DRAIN_BOUND of the burst's end, for good.
    let over_target: Vec<f64> = ticks
        .iter()
        .filter(|t| t.max_lag_seconds > TARGET)
        .map(|t| t.at - burst_end)
        .collect();
    assert!(
        over_target.iter().all(|after| *after <= DRAIN_BOUND),
        "lag over {TARGET} s later than {DRAIN_BOUND} s after the burst's end: {ticks:?}"
    );
    let drained = match over_target.last() {
        Some(after) => {
            format!("last over the {TARGET} s target {after:+.1} s from the burst's end")
        }
        None => format!("never over the {TARGET} s target"),
    };
    let peak_lag = ticks.iter().map(|t| t.max_lag_seconds).fold(0.0, f64::max);

    // KEDA's lag-sum rule on the same look-ups.
    let tick_seconds = TICK.as_secs_f64();
    let replica_seconds = |series: &[usize]| series.iter().sum::<usize>() as f64 * tick_seconds;
    let mut table = vec![(
        "mooring_scaling_desired_replicas".to_string(),
        our_changes,
        our_turns,
        peak,
        replica_seconds(&ours),
    )];
    for threshold in [10.0, CAPACITY * TARGET] {
        let series: Vec<usize> = std::iter::once(1).chain(keda(&ticks, threshold)).collect();
        let (n, turns) = changes(&series);
        let peak = series.iter().copied().max().unwrap();
        let cost = replica_seconds(&series[..ours.len().min(series.len())]);
        table.push((
            format!("KEDA lagThreshold={threshold}"),
            n,
            turns,
            peak,
            cost,
        ));
    }
    println!(
        "burst {burst_start:.1}..{burst_end:.1} s; peak lag {peak_lag:.1} s, {drained}; {duplicates} duplicates; KEDA simulated open-loop on the lag this run's scaling left"
    );
    println!(
        "rule | replica changes | direction turns | peak replicas | replica-seconds over the run"
    );
    for (rule, n, turns, peak, cost) in &table {
        println!("{rule} | {n} | {turns} | {peak} | {cost:.0}");
    }
    let keda_default = &table[1];
    assert!(
        our_changes <= keda_default.1,
        "more replica changes than KEDA's default rule: {table:?}"
    );
    stop_replicas(replicas).await;
}
