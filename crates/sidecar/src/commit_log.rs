//! The group's commits as they happen, read from `__consumer_offsets` as Burrow reads them: the
//! one partition of it the group's coordinator writes to ([`partition_for`]), fetched from its
//! leader from `lag.status.lookback.ms` ago on, each offset commit of the group (repeats
//! included: what tells STALL from STOP) going to its partition's window with the lag it leaves
//! behind the log end read right after it. Transactional commits wait for their transaction's
//! marker (committed: kept; aborted: dropped). Records of other groups are skipped unread past
//! their key.
//!
//! The principal needs Describe and Read on `__consumer_offsets`. When it cannot read it (or
//! the look-up fails), the windows are filled from the broker watch instead (see
//! [`lag_status`](crate::lag_status)) and the error is shown in `/debug/lag`; the follow is tried
//! again 5 s later, or a minute later when the broker refused the principal (or the group turned
//! out to be a share group, which commits nothing).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use mooring_client::error::{is_authorization_code, Resource};
use mooring_client::{Client, OffsetSpec, TopicPartition as ClientPartition};
use mooring_telemetry_schema::TopicPartition;
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::fetch::{FetchPartition, FetchRequest, FetchTopic};
use mooring_wire::offsets_topic::{decode_key, decode_value, partition_for, OFFSETS_TOPIC};
use mooring_wire::primitives::Uuid;
use mooring_wire::records::{
    BatchItem, BatchReader, ControlRecordType, DecodeOptions, RecordsError,
};
use tokio::sync::watch;

use crate::app::{unix_ms, App};
use crate::lag_status::Source;
use crate::state::GROUP_TYPE_SHARE;

/// The first Fetch version that names topics by id only.
const TOPIC_IDS_VERSION: i16 = 13;
/// Bytes asked per Fetch (one partition).
const FETCH_BYTES: i32 = 1 << 20;
/// The broker holds a Fetch this long when there is nothing new.
const FETCH_WAIT_MS: i32 = 1_000;
/// The decompressed size accepted from one batch.
const MAX_DECOMPRESSED: usize = 16 << 20;
/// Transactional commits held per producer until their marker, and producers held.
const PENDING_COMMITS: usize = 10_000;
const PENDING_PRODUCERS: usize = 1_000;
/// The wait before following again after an error, and after a refusal or for a share group.
const RETRY: Duration = Duration::from_secs(5);
const RETRY_SETTLED: Duration = Duration::from_secs(60);

/// Why the commits are not followed.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// A look-up failed (the principal may not read the topic, a broker is away, ...).
    #[error(transparent)]
    Client(#[from] mooring_client::Error),
    /// The topic's records could not be read.
    #[error(transparent)]
    Records(#[from] RecordsError),
    /// The topic cannot be followed now.
    #[error("{OFFSETS_TOPIC}: {0}")]
    Unavailable(String),
}

/// One offset commit of the group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The partition committed.
    pub partition: TopicPartition,
    /// The offset.
    pub offset: i64,
    /// When the coordinator took it, ms since the epoch.
    pub at_ms: i64,
}

/// Picks the group's commits out of `__consumer_offsets` batches.
#[derive(Debug)]
pub struct CommitReader {
    group: String,
    /// Per producer id, the commits of its open transaction.
    pending: BTreeMap<i64, Vec<Commit>>,
    /// Records that could not be decoded, skipped.
    pub skipped: u64,
}

impl CommitReader {
    /// A reader of `group`'s commits.
    pub fn new(group: &str) -> CommitReader {
        CommitReader {
            group: group.to_string(),
            pending: BTreeMap::new(),
            skipped: 0,
        }
    }

    /// Reads one fetched `records` section from offset `from` on: the group's commits (in log
    /// order) go to `out`; returns the offset to fetch next (`from` when no whole batch came).
    pub fn read(
        &mut self,
        records: Bytes,
        from: i64,
        out: &mut Vec<Commit>,
    ) -> Result<i64, RecordsError> {
        let options = DecodeOptions {
            max_decompressed_bytes: MAX_DECOMPRESSED,
            ..DecodeOptions::default()
        };
        let mut next = from;
        let reader = BatchReader::new(records)
            .with_context(OFFSETS_TOPIC, 0)
            .with_options(options);
        for item in reader {
            let BatchItem::Batch(batch) = item? else {
                break;
            };
            let header = *batch.header();
            next = next.max(header.next_offset());
            if header.next_offset() <= from {
                continue;
            }
            if let Some(control) = batch.control_record()? {
                let done = self.pending.remove(&header.producer_id);
                if control.kind == ControlRecordType::Commit {
                    out.extend(done.unwrap_or_default());
                }
                continue;
            }
            for record in batch.records()? {
                if record.offset < from {
                    continue;
                }
                let Some(commit) = self.commit(record.key.as_deref(), record.value.as_deref())
                else {
                    continue;
                };
                if header.is_transactional() {
                    self.hold(header.producer_id, commit);
                } else {
                    out.push(commit);
                }
            }
        }
        Ok(next)
    }

    /// The group's commit in this record, if it is one (a tombstone is not).
    fn commit(&mut self, key: Option<&[u8]>, value: Option<&[u8]>) -> Option<Commit> {
        let key = match decode_key(key?) {
            Ok(Some(key)) if key.group == self.group => key,
            Ok(_) => return None,
            Err(_) => {
                self.skipped += 1;
                return None;
            }
        };
        let value = match decode_value(value?) {
            Ok(v) => v,
            Err(_) => {
                self.skipped += 1;
                return None;
            }
        };
        Some(Commit {
            partition: TopicPartition {
                topic: key.topic,
                partition: key.partition,
            },
            offset: value.offset,
            at_ms: value.commit_timestamp,
        })
    }

    fn hold(&mut self, producer: i64, commit: Commit) {
        if !self.pending.contains_key(&producer) && self.pending.len() >= PENDING_PRODUCERS {
            self.skipped += 1;
            return;
        }
        let held = self.pending.entry(producer).or_default();
        if held.len() < PENDING_COMMITS {
            held.push(commit);
        } else {
            self.skipped += 1;
        }
    }
}

/// Follows the group's commits until `shutdown` turns true.
pub async fn run(app: Arc<App>, mut shutdown: watch::Receiver<bool>) {
    let (Some(config), Some(group)) = (app.config.client.clone(), app.config.group_id.clone())
    else {
        return;
    };
    let client = match Client::new(config) {
        Ok(c) => c,
        Err(e) => return set_source(&app, Some(e.to_string())),
    };
    let mut position = None;
    let mut reader = CommitReader::new(&group);
    loop {
        let error = tokio::select! {
            r = follow(&app, &client, &group, &mut reader, &mut position) => r,
            _ = shutdown.wait_for(|s| *s) => return,
        };
        // Refused (the client's fatal errors: authorization, authentication, TLS), or a share
        // group: nothing changes soon, so look again only after a while.
        let settled =
            is_share_group(&app) || matches!(&error, FollowError::Client(e) if e.is_fatal());
        tracing::info!(%error, "the group's commits cannot be followed in {OFFSETS_TOPIC}");
        set_source(&app, Some(error.to_string()));
        let wait = if settled { RETRY_SETTLED } else { RETRY };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown.wait_for(|s| *s) => return,
        }
    }
}

fn set_source(app: &App, error: Option<String>) {
    let mut state = app.state();
    state.lag_status.source = if error.is_none() {
        Source::CommitLog
    } else {
        Source::Watch
    };
    state.lag_status.source_error = error;
}

/// Follows from `position` (from the lookback when none) until an error.
async fn follow(
    app: &App,
    client: &Client,
    group: &str,
    reader: &mut CommitReader,
    position: &mut Option<i64>,
) -> FollowError {
    match follow_inner(app, client, group, reader, position).await {
        Ok(never) => match never {},
        Err(e) => e,
    }
}

async fn follow_inner(
    app: &App,
    client: &Client,
    group: &str,
    reader: &mut CommitReader,
    position: &mut Option<i64>,
) -> Result<std::convert::Infallible, FollowError> {
    if is_share_group(app) {
        return Err(unavailable("a share group commits nothing"));
    }
    let topics = [OFFSETS_TOPIC.to_string()];
    let metadata = client.refresh_topics(&topics).await?;
    let info = metadata
        .topics
        .get(OFFSETS_TOPIC)
        .ok_or_else(|| unavailable("it does not exist yet"))?;
    refused_or(client, "Metadata", info.error)?;
    let count = i32::try_from(info.partitions.len()).unwrap_or(i32::MAX);
    let index = partition_for(group, count).ok_or_else(|| unavailable("it has no partitions"))?;
    let (leader, _) = metadata
        .leader_for(OFFSETS_TOPIC, index)
        .ok_or_else(|| unavailable("its partition has no leader"))?;
    let topic_id = info.id;
    let tp = ClientPartition::new(OFFSETS_TOPIC, index);
    let mut offset = match *position {
        Some(offset) => offset,
        None => start(app, client, &tp).await?,
    };
    let conn = client.connection(leader).await?;
    set_source(app, None);
    loop {
        let response = conn
            .call(|version| request(version, topic_id, index, offset))
            .await?;
        refused_or(client, "Fetch", ErrorCode::from(response.error_code))?;
        let Some(data) = response
            .responses
            .into_iter()
            .flat_map(|t| t.partitions)
            .find(|p| p.partition_index == index)
        else {
            continue;
        };
        if ErrorCode::from(data.error_code) == ErrorCode::OffsetOutOfRange {
            *position = None;
            return Err(unavailable("the position fell out of range"));
        }
        refused_or(client, "Fetch", ErrorCode::from(data.error_code))?;
        if is_share_group(app) {
            return Err(unavailable("a share group commits nothing"));
        }
        let mut commits = Vec::new();
        if let Some(records) = data.records {
            offset = reader.read(records, offset, &mut commits)?;
            app.state().lag_status.records_skipped = reader.skipped;
        }
        *position = Some(offset);
        if !commits.is_empty() {
            record(app, client, commits).await;
        }
    }
}

/// The watched group is a share group (seen by the broker watch): nothing of it is in the topic.
fn is_share_group(app: &App) -> bool {
    let state = app.state();
    state
        .group
        .as_ref()
        .is_some_and(|g| g.group_type == GROUP_TYPE_SHARE)
}

/// `code` of `api` on the topic as an error: the principal refused (retried only after a while),
/// or another broker error.
fn refused_or(client: &Client, api: &'static str, code: ErrorCode) -> Result<(), FollowError> {
    if code == ErrorCode::None {
        return Ok(());
    }
    if is_authorization_code(code) {
        return Err(mooring_client::Error::Authorization {
            api,
            resource: Resource::Topics(vec![OFFSETS_TOPIC.to_string()]),
            principal: client.config().principal(),
            code,
        }
        .into());
    }
    Err(unavailable(&format!("{api}: {code}")))
}

/// The offset the lookback starts at (the log end when nothing is that recent).
async fn start(app: &App, client: &Client, tp: &ClientPartition) -> mooring_client::Result<i64> {
    let since = unix_ms() as i64 - app.config.lag_status.lookback_ms;
    let parts = std::slice::from_ref(tp);
    let found = client
        .list_offsets(parts, OffsetSpec::Timestamp(since))
        .await?;
    match found.get(tp).map(|o| o.offset).filter(|&o| o >= 0) {
        Some(offset) => Ok(offset),
        None => Ok(client
            .list_offsets(parts, OffsetSpec::Latest)
            .await?
            .get(tp)
            .map_or(0, |o| o.offset)),
    }
}

fn request(version: i16, topic_id: Uuid, partition: i32, offset: i64) -> FetchRequest {
    let by_id = version >= TOPIC_IDS_VERSION;
    FetchRequest {
        max_wait_ms: FETCH_WAIT_MS,
        min_bytes: 1,
        max_bytes: FETCH_BYTES,
        topics: vec![FetchTopic {
            topic: if by_id {
                String::new()
            } else {
                OFFSETS_TOPIC.to_string()
            },
            topic_id: if by_id { topic_id } else { Uuid::NIL },
            partitions: vec![FetchPartition {
                partition,
                fetch_offset: offset,
                partition_max_bytes: FETCH_BYTES,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// The commits go to their windows, each with the lag it leaves behind the log end read now (the
/// lag table's, from the last watch, when that read fails).
async fn record(app: &App, client: &Client, commits: Vec<Commit>) {
    let cap = app.config.lag_max_partitions;
    let partitions: Vec<ClientPartition> = commits
        .iter()
        .map(|c| ClientPartition::new(c.partition.topic.clone(), c.partition.partition))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .take(cap)
        .collect();
    let ends = client
        .list_offsets(&partitions, OffsetSpec::Latest)
        .await
        .unwrap_or_default();
    let config = app.config.lag_status;
    let mut state = app.state();
    let state = &mut *state;
    for c in commits {
        let tp = ClientPartition::new(c.partition.topic.clone(), c.partition.partition);
        let end = ends
            .get(&tp)
            .map(|o| o.offset)
            .or_else(|| state.lag.get(&c.partition).and_then(|l| l.end));
        state
            .lag_status
            .record_commit(&c.partition, c.offset, c.at_ms, end, &config, cap);
        state.lag_status.commits_read += 1;
    }
}

fn unavailable(why: &str) -> FollowError {
    FollowError::Unavailable(why.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::{BufMut, BytesMut};
    use mooring_wire::records::RecordBatch;

    fn key(group: &str, topic: &str, partition: i32) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i16(1);
        for s in [group, topic] {
            b.put_i16(s.len() as i16);
            b.put_slice(s.as_bytes());
        }
        b.put_i32(partition);
        b.freeze()
    }

    fn value(offset: i64, at_ms: i64) -> Bytes {
        let mut b = BytesMut::new();
        b.put_i16(3);
        b.put_i64(offset);
        b.put_i32(-1);
        b.put_i16(0);
        b.put_i64(at_ms);
        b.freeze()
    }

    /// A batch at `base` of (key, value) records.
    fn batch(base: i64, records: Vec<(Bytes, Option<Bytes>)>, txn: Option<i64>) -> RecordBatch {
        let mut builder = RecordBatch::builder(base);
        if let Some(producer) = txn {
            builder = builder.transactional(producer, 0, 0);
        }
        for (k, v) in records {
            builder = builder.record(1_000, Some(k), v, vec![]);
        }
        builder.build()
    }

    fn encode(batches: &[RecordBatch]) -> Bytes {
        let mut buf = BytesMut::new();
        for b in batches {
            b.encode(&mut buf).expect("encode");
        }
        buf.freeze()
    }

    fn commit(topic: &str, partition: i32, offset: i64, at_ms: i64) -> Commit {
        Commit {
            partition: TopicPartition {
                topic: topic.into(),
                partition,
            },
            offset,
            at_ms,
        }
    }

    #[test]
    fn the_groups_commits_in_log_order_and_transactions_at_their_marker() {
        let records = encode(&[
            batch(
                0,
                vec![
                    (key("g", "t", 0), Some(value(5, 100))),
                    (key("other", "t", 0), Some(value(9, 101))),
                    (key("g", "t", 1), None), // a tombstone
                ],
                None,
            ),
            batch(3, vec![(key("g", "t", 0), Some(value(7, 102)))], Some(42)),
            batch(4, vec![(key("g", "t", 1), Some(value(3, 103)))], Some(43)),
            RecordBatch::end_txn_marker(5, 1_000, 0, 43, 0, false, 0),
            batch(6, vec![(key("g", "t", 0), Some(value(6, 104)))], None),
            RecordBatch::end_txn_marker(7, 1_000, 0, 42, 0, true, 0),
        ]);
        let mut reader = CommitReader::new("g");
        let mut out = Vec::new();
        let next = reader.read(records.clone(), 0, &mut out).expect("read");
        assert_eq!(next, 8);
        assert_eq!(
            out,
            [
                commit("t", 0, 5, 100),
                commit("t", 0, 6, 104),
                commit("t", 0, 7, 102)
            ]
        );
        // From offset 6 on: the earlier records are skipped, the open transaction of producer 42
        // was never seen.
        let mut later = Vec::new();
        CommitReader::new("g")
            .read(records, 6, &mut later)
            .expect("read");
        assert_eq!(later, [commit("t", 0, 6, 104)]);
    }

    #[test]
    fn undecodable_records_are_skipped_and_counted() {
        let records = encode(&[batch(
            0,
            vec![
                (key("g", "t", 0), Some(Bytes::from_static(&[0, 9, 1]))),
                (Bytes::from_static(&[0, 1, 0]), Some(value(1, 1))),
                (key("g", "t", 0), Some(value(2, 2))),
            ],
            None,
        )]);
        let mut reader = CommitReader::new("g");
        let mut out = Vec::new();
        reader.read(records, 0, &mut out).expect("read");
        assert_eq!(out, [commit("t", 0, 2, 2)]);
        assert_eq!(reader.skipped, 2);
    }
}
