//! Mooring's members under test: N [`Consumer`]s of one group in this process (one Tokio
//! runtime), each recording what it consumed and its rebalance-listener calls, and the
//! scenario: start N, wait until the group settles, a baseline, then `cycles` times a member
//! joins (N → N+1) and, once the group has settled, leaves again (N+1 → N). The Java client's
//! members (`bench/java-peers/RebalanceBench.java`) run the same steps with the same settle rule.
//!
//! Settled: every partition held by exactly one running member, spread evenly (each member
//! holds ⌊P/M⌋ or ⌈P/M⌉: what range, cooperative-sticky and the broker's uniform assignor give
//! one topic, so a change still under way, with some members not yet told, is not taken for
//! the end), every partition consumed since it was last assigned and since the change began, and
//! no listener call for `quiet`.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use mooring_consumer::processing::{ConsumerRecord, Handler};
use mooring_consumer::{
    Consumer, ConsumerConfig, ConsumerError, ConsumerRebalanceListener, TopicPartition,
};
use tokio::task::JoinHandle;

use crate::trace::{ChangeKind, Consumed, Line, ListenerKind};

/// Milliseconds since the Unix epoch (the clock every member and the Java side share).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The steps and bounds of a run.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub members: usize,
    pub cycles: usize,
    pub baseline: Duration,
    pub hold: Duration,
    pub quiet: Duration,
    pub settle_timeout: Duration,
}

/// What every member shares with the driver: the trace's events and, per partition, when it was
/// last consumed and last assigned.
#[derive(Debug)]
struct Board {
    last_consumed: Vec<AtomicI64>,
    last_assigned: Vec<AtomicI64>,
    last_event: AtomicI64,
    events: Mutex<Vec<Line>>,
}

impl Board {
    fn new(partitions: usize) -> Board {
        Board {
            last_consumed: (0..partitions).map(|_| AtomicI64::new(0)).collect(),
            last_assigned: (0..partitions).map(|_| AtomicI64::new(0)).collect(),
            last_event: AtomicI64::new(0),
            events: Mutex::new(Vec::new()),
        }
    }

    fn push(&self, line: Line) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }

    fn slot(list: &[AtomicI64], partition: i32) -> Option<&AtomicI64> {
        usize::try_from(partition).ok().and_then(|p| list.get(p))
    }
}

/// The handler: notes each record (partition, offset, when, its produce time).
struct Recorder {
    member: usize,
    board: Arc<Board>,
    records: Arc<Mutex<Vec<Consumed>>>,
}

impl Handler for Recorder {
    type Error = String;

    async fn handle(&self, record: ConsumerRecord) -> Result<(), String> {
        let now = now_ms();
        let partition = record.partition();
        if let Some(slot) = Board::slot(&self.board.last_consumed, partition) {
            slot.store(now, Ordering::Relaxed);
        }
        self.records
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Consumed {
                member: self.member,
                partition,
                offset: record.offset(),
                consumed: now,
                produced: record.timestamp(),
            });
        Ok(())
    }
}

/// The listener: keeps the member's partitions and notes each call.
struct Listener {
    member: usize,
    topic: String,
    board: Arc<Board>,
    held: Arc<Mutex<BTreeSet<i32>>>,
}

impl Listener {
    fn note(&self, kind: ListenerKind, partitions: Vec<TopicPartition>) {
        let now = now_ms();
        let mut parts: Vec<i32> = partitions
            .iter()
            .filter(|tp| tp.topic == self.topic)
            .map(|tp| tp.partition)
            .collect();
        parts.sort_unstable();
        {
            let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
            for &p in &parts {
                if kind == ListenerKind::Assigned {
                    held.insert(p);
                    if let Some(slot) = Board::slot(&self.board.last_assigned, p) {
                        slot.store(now, Ordering::Relaxed);
                    }
                } else {
                    held.remove(&p);
                }
            }
        }
        self.board.last_event.store(now, Ordering::Relaxed);
        self.board.push(Line::Listener {
            kind,
            at: now,
            member: self.member,
            partitions: parts,
        });
    }
}

impl ConsumerRebalanceListener for Listener {
    async fn assigned(&self, partitions: Vec<TopicPartition>) {
        self.note(ListenerKind::Assigned, partitions);
    }

    async fn revoked(&self, partitions: Vec<TopicPartition>) {
        self.note(ListenerKind::Revoked, partitions);
    }

    async fn lost(&self, partitions: Vec<TopicPartition>) {
        self.note(ListenerKind::Lost, partitions);
    }
}

/// One running member.
struct Member {
    id: usize,
    consumer: Consumer,
    held: Arc<Mutex<BTreeSet<i32>>>,
    records: Arc<Mutex<Vec<Consumed>>>,
    closed: Arc<AtomicBool>,
    leaving: bool,
    task: JoinHandle<Result<(), ConsumerError>>,
}

impl Member {
    fn leave(&mut self) {
        self.leaving = true;
        self.consumer.shutdown_handle().shutdown();
    }
}

/// The members of one run and the driver's view of them.
pub struct Run {
    topic: String,
    partitions: usize,
    scenario: Scenario,
    board: Arc<Board>,
    members: Vec<Member>,
    /// Each member's config (with its `client.id`), by member index.
    config: Box<dyn Fn(usize) -> Result<ConsumerConfig, String>>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("topic", &self.topic)
            .field("members", &self.members.len())
            .finish_non_exhaustive()
    }
}

impl Run {
    pub fn new(
        topic: String,
        partitions: usize,
        scenario: Scenario,
        config: impl Fn(usize) -> Result<ConsumerConfig, String> + 'static,
    ) -> Run {
        Run {
            topic,
            partitions,
            scenario,
            board: Arc::new(Board::new(partitions)),
            members: Vec::new(),
            config: Box::new(config),
        }
    }

    fn start(&mut self) -> Result<usize, String> {
        let id = self.members.len();
        let fail = |e: ConsumerError| format!("starting member {id}: {e}");
        let consumer = Consumer::new((self.config)(id)?).map_err(fail)?;
        consumer.subscribe([self.topic.clone()]).map_err(fail)?;
        let held = Arc::new(Mutex::new(BTreeSet::new()));
        let records = Arc::new(Mutex::new(Vec::new()));
        consumer.set_rebalance_listener(Listener {
            member: id,
            topic: self.topic.clone(),
            board: Arc::clone(&self.board),
            held: Arc::clone(&held),
        });
        let closed = Arc::new(AtomicBool::new(false));
        let handler = Recorder {
            member: id,
            board: Arc::clone(&self.board),
            records: Arc::clone(&records),
        };
        let task = {
            let (consumer, board, closed) = (
                consumer.clone(),
                Arc::clone(&self.board),
                Arc::clone(&closed),
            );
            tokio::spawn(async move {
                let result = consumer.run(handler).await;
                closed.store(true, Ordering::Relaxed);
                board.push(Line::Closed {
                    at: now_ms(),
                    member: id,
                });
                result
            })
        };
        self.members.push(Member {
            id,
            consumer,
            held,
            records,
            closed,
            leaving: false,
            task,
        });
        Ok(id)
    }

    /// Runs the scenario, then closes every member; returns the trace and, if the scenario
    /// could not finish, why (the trace holds what happened until then).
    pub async fn run(mut self) -> (Vec<Line>, Option<String>) {
        let failure = self.scenario().await.err();
        self.board.push(Line::End(now_ms()));
        for m in &mut self.members {
            m.leave();
        }
        let mut records = Vec::new();
        let mut failure = failure;
        for m in self.members {
            match m.task.await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    failure.get_or_insert(format!("member {}: {e}", m.id));
                }
                Err(e) => {
                    failure.get_or_insert(format!("member {}: {e}", m.id));
                }
            }
            records.append(&mut m.records.lock().unwrap_or_else(PoisonError::into_inner));
        }
        let mut lines = std::mem::take(
            &mut *self
                .board
                .events
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        lines.extend(records.into_iter().map(Line::Record));
        (lines, failure)
    }

    async fn scenario(&mut self) -> Result<(), String> {
        let begun = now_ms();
        for _ in 0..self.scenario.members {
            self.start()?;
        }
        self.settle(begun, &format!("the first {}", self.scenario.members))
            .await?;
        self.board.push(Line::Steady(now_ms()));
        tokio::time::sleep(self.scenario.baseline).await;
        for cycle in 1..=self.scenario.cycles {
            let t0 = now_ms();
            self.board.push(Line::Change {
                kind: ChangeKind::Join,
                at: t0,
                member: self.members.len(),
            });
            let joined = self.start()?;
            self.settle(t0, &format!("join {cycle}")).await?;
            tokio::time::sleep(self.scenario.hold).await;
            let t0 = now_ms();
            self.board.push(Line::Change {
                kind: ChangeKind::Leave,
                at: t0,
                member: joined,
            });
            self.members[joined].leave();
            self.settle(t0, &format!("leave {cycle}")).await?;
            tokio::time::sleep(self.scenario.hold).await;
        }
        Ok(())
    }

    /// Waits until the group has settled after a change that began at `t0`.
    async fn settle(&self, t0: i64, what: &str) -> Result<(), String> {
        let limit = i64::try_from(self.scenario.settle_timeout.as_millis()).unwrap_or(i64::MAX);
        loop {
            if let Some(m) = self
                .members
                .iter()
                .find(|m| !m.leaving && m.closed.load(Ordering::Relaxed))
            {
                return Err(format!("{what}: member {} stopped on its own", m.id));
            }
            if self.settled(t0) {
                let now = now_ms();
                eprintln!("rebalance-bench: {what} settled after {} ms", now - t0);
                self.board.push(Line::Settled(now));
                return Ok(());
            }
            if now_ms() - t0 > limit {
                return Err(format!(
                    "{what}: the group did not settle within {limit} ms"
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn settled(&self, t0: i64) -> bool {
        let quiet = i64::try_from(self.scenario.quiet.as_millis()).unwrap_or(i64::MAX);
        if now_ms() - self.board.last_event.load(Ordering::Relaxed) < quiet {
            return false;
        }
        let live: Vec<&Member> = self
            .members
            .iter()
            .filter(|m| !m.closed.load(Ordering::Relaxed))
            .collect();
        if live.is_empty() {
            return false;
        }
        let (low, high) = (
            self.partitions / live.len(),
            self.partitions.div_ceil(live.len()),
        );
        let mut owners = vec![0u32; self.partitions];
        for m in &live {
            let held = m.held.lock().unwrap_or_else(PoisonError::into_inner);
            if held.len() < low || held.len() > high {
                return false;
            }
            for &p in held.iter() {
                if let Some(n) = usize::try_from(p).ok().and_then(|p| owners.get_mut(p)) {
                    *n += 1;
                }
            }
        }
        owners.iter().enumerate().all(|(p, &n)| {
            let since = t0.max(self.board.last_assigned[p].load(Ordering::Relaxed));
            n == 1 && self.board.last_consumed[p].load(Ordering::Relaxed) > since
        })
    }
}
