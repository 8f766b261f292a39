//! The fetch loop of the floor: the topic's partitions and leaders from Metadata, their earliest
//! offsets from ListOffsets, then per leader one connection sending one Fetch after another
//! (never two at once), each partition's next offset learnt from its batch headers alone.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use bytes::Bytes;
use mooring_client::{Client, OffsetSpec, TopicPartition};
use mooring_consumer::FetchConfig;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::fetch::{FetchPartition, FetchRequest, FetchTopic, PartitionData};
use mooring_wire::primitives::Uuid;

use crate::batches::batches;
use crate::session::Session;

/// An error a broker task can hand back across threads.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The first Fetch version that names topics by id only.
const TOPIC_IDS_VERSION: i16 = 13;

/// When the loop stops.
#[derive(Debug, Clone, Copy)]
pub enum Goal {
    /// Once this many records were counted (from the batch headers).
    Records(u64),
    /// Once this many bytes of whole batches were kept, or every partition is read to its end.
    Bytes(u64),
}

/// What every broker's task adds to, and reads to know when to stop.
#[derive(Debug)]
pub struct Progress {
    goal: Goal,
    records: AtomicU64,
    bytes: AtomicU64,
    done: AtomicBool,
    /// When the first batch arrived, and when the goal was met.
    pub first: OnceLock<Instant>,
    pub last: OnceLock<Instant>,
    kept: Option<Mutex<Vec<Bytes>>>,
}

impl Progress {
    /// Progress toward `goal`; with `Goal::Bytes` the whole batches are kept.
    pub fn new(goal: Goal) -> Progress {
        Progress {
            goal,
            records: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            done: AtomicBool::new(false),
            first: OnceLock::new(),
            last: OnceLock::new(),
            kept: matches!(goal, Goal::Bytes(_)).then(|| Mutex::new(Vec::new())),
        }
    }

    /// Records counted so far, and bytes of whole batches received.
    pub fn counted(&self) -> (u64, u64) {
        (
            self.records.load(Ordering::Relaxed),
            self.bytes.load(Ordering::Relaxed),
        )
    }

    /// Whether the goal was met.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Relaxed)
    }

    /// The batches kept (`Goal::Bytes`), each item one partition's whole batches of a response.
    pub fn take_kept(&self) -> Vec<Bytes> {
        self.kept
            .as_ref()
            .and_then(|k| k.lock().ok().map(|mut v| std::mem::take(&mut *v)))
            .unwrap_or_default()
    }

    fn add(&self, records: u64, whole: Bytes) {
        let _ = self.first.get_or_init(Instant::now);
        let bytes = whole.len() as u64;
        let total_records = self.records.fetch_add(records, Ordering::Relaxed) + records;
        let total_bytes = self.bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if let Some(kept) = &self.kept {
            if let Ok(mut kept) = kept.lock() {
                kept.push(whole);
            }
        }
        let met = match self.goal {
            Goal::Records(n) => total_records >= n,
            Goal::Bytes(n) => total_bytes >= n,
        };
        if met && !self.done.swap(true, Ordering::Relaxed) {
            let _ = self.last.set(Instant::now());
        }
    }
}

/// One partition's place in the loop.
#[derive(Debug, Clone, Copy)]
struct Position {
    offset: i64,
    /// The last high watermark the broker gave (`None` before its first answer).
    end: Option<i64>,
    /// Whether the offset moved since the last request (an incremental request lists it).
    moved: bool,
}

/// The topic as the loop needs it: its id, and each leader's partitions with their earliest
/// offsets.
#[derive(Debug)]
pub struct TopicPlan {
    pub topic: String,
    pub id: Uuid,
    pub by_leader: BTreeMap<i32, BTreeMap<i32, i64>>,
}

/// Metadata, then ListOffsets (earliest) for every partition of `topic`.
pub async fn plan(client: &Client, topic: &str) -> Result<TopicPlan, BoxError> {
    let metadata = client.refresh_topics(&[topic.to_owned()]).await?;
    let info = metadata
        .topics
        .get(topic)
        .ok_or_else(|| format!("topic {topic} does not exist"))?;
    let tps: Vec<TopicPartition> = info
        .partitions
        .keys()
        .map(|&p| TopicPartition::new(topic, p))
        .collect();
    let earliest = client.list_offsets(&tps, OffsetSpec::Earliest).await?;
    let mut by_leader: BTreeMap<i32, BTreeMap<i32, i64>> = BTreeMap::new();
    for (p, partition) in &info.partitions {
        if partition.leader < 0 {
            return Err(format!("{topic}-{p} has no leader").into());
        }
        let offset = earliest
            .get(&TopicPartition::new(topic, *p))
            .map(|o| o.offset)
            .ok_or_else(|| format!("no earliest offset for {topic}-{p}"))?;
        by_leader
            .entry(partition.leader)
            .or_default()
            .insert(*p, offset);
    }
    Ok(TopicPlan {
        topic: topic.to_owned(),
        id: info.id,
        by_leader,
    })
}

/// Fetches `partitions` (index → earliest offset) from their leader `node` until `progress` is
/// done or every partition is read to its high watermark.
pub async fn fetch_from(
    client: Client,
    node: i32,
    plan: Arc<TopicPlan>,
    partitions: BTreeMap<i32, i64>,
    config: FetchConfig,
    progress: Arc<Progress>,
) -> Result<(), BoxError> {
    let conn = client.connection(node).await?;
    let version = conn.version::<FetchRequest>()?;
    if version >= TOPIC_IDS_VERSION && plan.id.is_nil() {
        return Err(format!("Fetch v{version} needs the id of {}", plan.topic).into());
    }
    let mut positions: BTreeMap<i32, Position> = partitions
        .into_iter()
        .map(|(p, offset)| {
            let position = Position {
                offset,
                end: None,
                moved: true,
            };
            (p, position)
        })
        .collect();
    let mut session = Session::new(version);
    while !progress.is_done() && !read_to_end(&positions) {
        let request = request(version, &config, &plan, &session, &mut positions);
        let response = conn.send_at(&request, version).await?;
        let code = ErrorCode::from(response.error_code);
        session
            .answered(code, response.session_id)
            .map_err(|code| format!("Fetch from node {node}: {code}"))?;
        if code != ErrorCode::None {
            mark_all_moved(&mut positions);
            continue;
        }
        for data in response.responses.iter().flat_map(|t| &t.partitions) {
            take(&plan.topic, data, &mut positions, &progress)?;
        }
    }
    Ok(())
}

/// Whether every partition has reached the high watermark the broker last gave.
fn read_to_end(positions: &BTreeMap<i32, Position>) -> bool {
    positions
        .values()
        .all(|p| p.end.is_some_and(|end| p.offset >= end))
}

fn mark_all_moved(positions: &mut BTreeMap<i32, Position>) {
    for p in positions.values_mut() {
        p.moved = true;
    }
}

/// The next Fetch: every partition when the session is new, else those whose offset moved.
fn request(
    version: i16,
    config: &FetchConfig,
    plan: &TopicPlan,
    session: &Session,
    positions: &mut BTreeMap<i32, Position>,
) -> FetchRequest {
    let full = session.is_full();
    let partitions = positions
        .iter_mut()
        .filter(|(_, p)| full || p.moved)
        .map(|(&partition, p)| {
            p.moved = false;
            FetchPartition {
                partition,
                fetch_offset: p.offset,
                partition_max_bytes: config.max_partition_bytes,
                ..Default::default()
            }
        })
        .collect();
    let by_id = version >= TOPIC_IDS_VERSION;
    let topic = FetchTopic {
        topic: if by_id {
            String::new()
        } else {
            plan.topic.clone()
        },
        topic_id: if by_id { plan.id } else { Uuid::NIL },
        partitions,
        ..Default::default()
    };
    let (session_id, session_epoch) = session.fields();
    FetchRequest {
        max_wait_ms: i32::try_from(config.max_wait.as_millis()).unwrap_or(i32::MAX),
        min_bytes: config.min_bytes,
        max_bytes: config.max_bytes,
        isolation_level: config.isolation_level.wire(),
        session_id,
        session_epoch,
        topics: vec![topic],
        ..Default::default()
    }
}

/// One partition's answer: its whole batches counted (and kept, for the costs), its offset moved
/// past them, its high watermark noted. Any error code ends the run: the bench's topics do not
/// move, so there is nothing to recover from.
fn take(
    topic: &str,
    data: &PartitionData,
    positions: &mut BTreeMap<i32, Position>,
    progress: &Progress,
) -> Result<(), BoxError> {
    let p = data.partition_index;
    let code = ErrorCode::from(data.error_code);
    if code != ErrorCode::None {
        return Err(format!("Fetch of {topic}-{p}: {code}").into());
    }
    let Some(position) = positions.get_mut(&p) else {
        return Ok(());
    };
    position.end = Some(data.high_watermark);
    let Some(records) = &data.records else {
        return Ok(());
    };
    let (mut count, mut end, mut next) = (0u64, 0usize, None);
    for span in batches(records) {
        let span = span.map_err(|e| format!("{topic}-{p}: {e}"))?;
        count += span.records;
        end = span.range.end;
        next = Some(span.next_offset);
    }
    if let Some(next) = next {
        position.offset = next;
        position.moved = true;
        progress.add(count, records.slice(..end));
    }
    Ok(())
}
