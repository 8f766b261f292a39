//! The `share-group` scenario (KIP-932): the Java client's VerifiableShareConsumer read a topic in
//! a share group of its own, twice, each time setting the group's `share.auto.offset.reset` to
//! `earliest` first (IncrementalAlterConfigs) and ending on SIGTERM (the share session closed with
//! epoch -1, the member left with epoch -1). The explicit run (`golden-zstd`) acknowledged each
//! record by its offset's place in a pattern (`# ack_pattern:` accept,release,reject), each poll's
//! acknowledgements sent by commitSync in a ShareAcknowledge, so the released records came back
//! with a growing delivery count until the broker's limit (`# delivery_count_limit:`) archived
//! them. The implicit run (`golden-none`) accepted every record, the acknowledgements riding on the
//! next ShareFetch; with everything acknowledged, ShareGroupCommand described its group
//! (DescribeShareGroupOffsets, ShareGroupDescribe) and listed the share groups (ListGroups).
//!
//! Per file: each ShareGroupHeartbeat as its kind says it (a join with epoch 0 and the
//! subscription, a steady heartbeat leaving what did not change null, a leave with epoch -1) and
//! the broker's answer (an epoch, the heartbeat interval, the assignment); each ShareFetch and
//! ShareAcknowledge request's session epoch against where it stands in its session
//! (`# share_session_request:`, counted off the TCP stream by the capture script, which never
//! reads the epoch for it: 0 opens, then 1, 2, …; -1 closes) and its acknowledgement batches
//! against the type the run gives each offset; each ShareFetch response's acquired ranges and
//! delivery counts against the pattern, its records, decoded with the records module, against
//! `produced.tsv`; the described group Stable with its one member and the whole topic, no lag.
//! Across the files of a run: one member id, the epoch the broker gave is the one the member says
//! next, one topic id, and each acknowledgement acknowledges exactly what the session's previous
//! ShareFetch acquired.

use std::collections::{BTreeMap, BTreeSet};

use mooring_wire::messages::*;
use mooring_wire::primitives::Uuid;

use super::fetched::{check_records, end_offset, ProducedLog};
use super::{captured, round_trip, Captured, PARTITIONS};

/// Acknowledge types (ShareFetchRequest.json: 0 Gap, 1 Accept, 2 Release, 3 Reject, 4 Renew).
const ACCEPT: i8 = 1;
const RELEASE: i8 = 2;
const REJECT: i8 = 3;
/// Broker defaults the capture cluster keeps (scripts/kafka sets neither):
/// group.share.heartbeat.interval.ms and group.share.record.lock.duration.ms.
const HEARTBEAT_INTERVAL_MS: i32 = 5_000;
const RECORD_LOCK_MS: i32 = 30_000;
/// Java consumer defaults: fetch.max.wait.ms, fetch.min.bytes, fetch.max.bytes, max.poll.records
/// (a share fetch's max records and batch size both).
const MAX_WAIT_MS: i32 = 500;
const MIN_BYTES: i32 = 1;
const MAX_BYTES: i32 = 52_428_800;
const MAX_POLL_RECORDS: i32 = 500;
/// Java's ConfigResource.Type.GROUP and AlterConfigOp.OpType.SET ids.
const GROUP_RESOURCE: i8 = 32;
const SET: i8 = 0;
/// The share group type and protocol type, as ListGroups says them.
const SHARE: &str = "share";

/// How the run acknowledged (`# share_acknowledgement:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Mode {
    Explicit,
    Implicit,
}

fn mode(c: &Captured) -> Mode {
    match c.meta("share_acknowledgement") {
        "explicit" => Mode::Explicit,
        "implicit" => Mode::Implicit,
        other => panic!("{}: share acknowledgement {other:?}", c.name),
    }
}

/// The type the run gives the record at `offset`: the pattern's entry at the offset modulo its
/// length (VerifiableShareConsumer --ack-pattern), or Accept for every record in implicit mode.
fn ack_type(c: &Captured, offset: i64) -> i8 {
    if mode(c) == Mode::Implicit {
        return ACCEPT;
    }
    let pattern: Vec<i8> = c
        .meta("ack_pattern")
        .split(',')
        .map(|t| match t {
            "accept" => ACCEPT,
            "release" => RELEASE,
            "reject" => REJECT,
            other => panic!("{}: ack pattern entry {other:?}", c.name),
        })
        .collect();
    let at = usize::try_from(offset).unwrap_or_else(|_| panic!("{}: offset {offset}", c.name));
    pattern[at % pattern.len()]
}

/// A record acquired for the `count`-th time: a record accepted or rejected never comes back; a
/// released one comes back until the delivery count limit (in the explicit run).
fn check_delivery(c: &Captured, partition: i32, offset: i64, count: i16) {
    let name = &c.name;
    assert!(
        count >= 1,
        "{name}: partition {partition} offset {offset}: count {count}"
    );
    if ack_type(c, offset) == RELEASE {
        assert!(
            i64::from(count) <= c.meta_i64("delivery_count_limit"),
            "{name}: partition {partition} offset {offset} delivered {count} times"
        );
    } else {
        assert_eq!(
            count, 1,
            "{name}: partition {partition} offset {offset} is never released"
        );
    }
}

/// The words of the file's variant after the first, its run's mode (scripts/capture-golden:
/// share_variant), which must be the one its `# share_acknowledgement:` line says.
fn words(c: &Captured) -> Vec<&str> {
    let mut words: Vec<&str> = c.variant().map_or(Vec::new(), |v| v.split('-').collect());
    let run = if words.is_empty() {
        ""
    } else {
        words.remove(0)
    };
    assert_eq!(run, c.meta("share_acknowledgement"), "{}: the run", c.name);
    words
}

fn has(c: &Captured, word: &str) -> bool {
    words(c).contains(&word)
}

/// The error code the variant names (`error<N>`), or 0.
fn variant_error(c: &Captured) -> i16 {
    words(c)
        .iter()
        .find_map(|w| w.strip_prefix("error"))
        .map_or(0, |n| {
            n.parse()
                .unwrap_or_else(|e| panic!("{}: variant error {n}: {e}", c.name))
        })
}

/// A member id the consumer made up (KIP-932): Java's `Uuid.randomUuid().toString()`, 16 bytes in
/// URL-safe base64 without padding.
fn check_member_id(c: &Captured, id: &str) {
    assert!(
        id.len() == 22
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "{}: member id {id:?}",
        c.name
    );
}

/// The group and member a ShareFetch or ShareAcknowledge request names.
fn check_session_member(c: &Captured, group: Option<&str>, member: Option<&str>) {
    assert_eq!(group, Some(c.group()), "{}: group", c.name);
    check_member_id(
        c,
        member.unwrap_or_else(|| panic!("{}: no member id", c.name)),
    );
}

/// Where a ShareFetch or ShareAcknowledge request stands in its share session: how many requests
/// the session carried before it, counted off the TCP stream.
fn session_request(c: &Captured) -> i64 {
    c.meta_i64("share_session_request")
}

/// A request's share session epoch: -1 to close; otherwise how many requests the session carried
/// before (0 opens it, each request after adds one).
fn check_session_epoch(c: &Captured, epoch: i32) {
    let name = &c.name;
    if has(c, "close") {
        assert_eq!(epoch, -1, "{name}: closing");
    } else {
        assert_eq!(
            i64::from(epoch),
            session_request(c),
            "{name}: session epoch"
        );
    }
    if has(c, "open") {
        assert_eq!(epoch, 0, "{name}: opening");
    }
}

/// Checks one partition's acknowledgement batches (first offset, last offset, types) against the
/// records produced and the type the run gives each offset; returns the offsets acknowledged.
fn check_acks<'a>(
    c: &Captured,
    partition: i32,
    batches: impl Iterator<Item = (i64, i64, &'a [i8])>,
    log: &ProducedLog,
) -> Vec<i64> {
    let name = &c.name;
    let end = end_offset(log, c.topic(), partition);
    let mut offsets = Vec::new();
    for (first, last, types) in batches {
        assert!(
            0 <= first && first <= last && last < end,
            "{name}: partition {partition}: batch {first}..={last} of {end} records"
        );
        // One type per offset, or one for the whole range (Java sends a range of one type so).
        let span = usize::try_from(last - first + 1).expect("a positive span");
        assert!(
            types.len() == 1 || types.len() == span,
            "{name}: partition {partition}: {} types for {first}..={last}",
            types.len()
        );
        for (i, offset) in (first..=last).enumerate() {
            let t = if types.len() == 1 { types[0] } else { types[i] };
            assert_eq!(
                t,
                ack_type(c, offset),
                "{name}: partition {partition} offset {offset}: acknowledge type"
            );
            offsets.push(offset);
        }
    }
    offsets
}

/// (partition → offsets) a ShareFetch request acknowledges.
fn fetch_acks(m: &ShareFetchRequest) -> BTreeMap<i32, Vec<i64>> {
    let mut acked = BTreeMap::new();
    for t in &m.topics {
        for p in t
            .partitions
            .iter()
            .filter(|p| !p.acknowledgement_batches.is_empty())
        {
            let offsets: &mut Vec<i64> = acked.entry(p.partition_index).or_default();
            for b in &p.acknowledgement_batches {
                offsets.extend(b.first_offset..=b.last_offset);
            }
        }
    }
    acked
}

/// (partition → offsets) a ShareAcknowledge request acknowledges.
fn acknowledge_acks(m: &ShareAcknowledgeRequest) -> BTreeMap<i32, Vec<i64>> {
    let mut acked = BTreeMap::new();
    for t in &m.topics {
        for p in &t.partitions {
            let offsets: &mut Vec<i64> = acked.entry(p.partition_index).or_default();
            for b in &p.acknowledgement_batches {
                offsets.extend(b.first_offset..=b.last_offset);
            }
        }
    }
    acked
}

/// (partition → offsets) a ShareFetch response acquired.
fn acquired(m: &ShareFetchResponse) -> BTreeMap<i32, Vec<i64>> {
    let mut acquired = BTreeMap::new();
    for t in &m.responses {
        for p in t
            .partitions
            .iter()
            .filter(|p| !p.acquired_records.is_empty())
        {
            let offsets: &mut Vec<i64> = acquired.entry(p.partition_index).or_default();
            for a in &p.acquired_records {
                offsets.extend(a.first_offset..=a.last_offset);
            }
        }
    }
    acquired
}

/// What a heartbeat file's variant says the member did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Join,
    Steady,
    Leave,
}

fn shape(c: &Captured) -> Shape {
    let kinds: Vec<&str> = words(c)
        .into_iter()
        .filter(|w| !w.starts_with("error"))
        .collect();
    match kinds[..] {
        [] => Shape::Steady,
        ["join"] => Shape::Join,
        ["leave"] => Shape::Leave,
        _ => panic!("{}: unknown heartbeat variant {:?}", c.name, c.variant()),
    }
}

pub(super) fn heartbeat_request(c: &Captured) {
    let name = &c.name;
    let m: ShareGroupHeartbeatRequest = round_trip(c);
    assert_eq!(m.group_id, c.group(), "{name}");
    check_member_id(c, &m.member_id);
    assert_eq!(m.rack_id, None, "{name}: no client.rack");
    match shape(c) {
        Shape::Join => {
            assert_eq!(m.member_epoch, 0, "{name}: joining");
            assert_eq!(
                m.subscribed_topic_names,
                Some(vec![c.topic().to_string()]),
                "{name}"
            );
        }
        Shape::Steady => {
            assert!(m.member_epoch >= 1, "{name}: epoch {}", m.member_epoch);
            assert_eq!(
                m.subscribed_topic_names, None,
                "{name}: nothing changed, nothing said"
            );
        }
        Shape::Leave => {
            assert_eq!(m.member_epoch, -1, "{name}: leaving");
            // Java's leave says an empty subscription, not null: the codec keeps them apart.
            assert_eq!(m.subscribed_topic_names, Some(Vec::new()), "{name}");
        }
    }
}

/// A member alone in its group is assigned the whole topic, once the assignor has run; until
/// then (the answer to a join) nothing.
fn check_assignment(c: &Captured, assignment: &share_group_heartbeat::Assignment) {
    let t = &assignment.topic_partitions;
    if t.is_empty() {
        return;
    }
    assert_eq!(t.len(), 1, "{}: {t:?}", c.name);
    assert_ne!(t[0].topic_id, Uuid::NIL, "{}", c.name);
    let mut partitions = t[0].partitions.clone();
    partitions.sort_unstable();
    assert_eq!(
        partitions,
        (0..PARTITIONS).collect::<Vec<_>>(),
        "{}: assigned partitions",
        c.name
    );
}

pub(super) fn heartbeat_response(c: &Captured) {
    let name = &c.name;
    let m: ShareGroupHeartbeatResponse = round_trip(c);
    let error = variant_error(c);
    assert_eq!(m.error_code, error, "{name}: {:?}", m.error_message);
    if error != 0 {
        assert_eq!(
            (
                m.member_id,
                m.member_epoch,
                m.heartbeat_interval_ms,
                m.assignment
            ),
            (None, 0, 0, None),
            "{name}"
        );
        return;
    }
    assert_eq!(m.error_message, None, "{name}");
    check_member_id(c, m.member_id.as_deref().expect("the member id echoed"));
    match shape(c) {
        Shape::Leave => assert_eq!(
            (m.member_epoch, m.heartbeat_interval_ms, m.assignment),
            (-1, 0, None),
            "{name}: left"
        ),
        shape => {
            assert!(m.member_epoch >= 1, "{name}: epoch {}", m.member_epoch);
            assert_eq!(m.heartbeat_interval_ms, HEARTBEAT_INTERVAL_MS, "{name}");
            // A joining member is always told its assignment, empty until the assignor runs.
            if shape == Shape::Join {
                assert!(m.assignment.is_some(), "{name}: no assignment");
            }
            if let Some(assignment) = &m.assignment {
                check_assignment(c, assignment);
            }
        }
    }
}

pub(super) fn fetch_request(c: &Captured, log: &ProducedLog) {
    let name = &c.name;
    let m: ShareFetchRequest = round_trip(c);
    check_session_member(c, m.group_id.as_deref(), m.member_id.as_deref());
    check_session_epoch(c, m.share_session_epoch);
    assert_eq!(
        (
            m.max_wait_ms,
            m.min_bytes,
            m.max_bytes,
            m.max_records,
            m.batch_size
        ),
        (
            MAX_WAIT_MS,
            MIN_BYTES,
            MAX_BYTES,
            MAX_POLL_RECORDS,
            MAX_POLL_RECORDS
        ),
        "{name}: wait, min and max bytes, max records, batch size"
    );
    // share.acquire.mode batch_optimized (0), Java's default; nothing renewed.
    assert_eq!((m.share_acquire_mode, m.is_renew_ack), (0, false), "{name}");
    assert!(m.forgotten_topics_data.is_empty(), "{name}");
    if has(c, "open") {
        // The session opens on every assigned partition, with nothing to acknowledge yet.
        assert_eq!(m.topics.len(), 1, "{name}");
        let mut partitions: Vec<i32> = m.topics[0]
            .partitions
            .iter()
            .map(|p| p.partition_index)
            .collect();
        partitions.sort_unstable();
        assert_eq!(partitions, (0..PARTITIONS).collect::<Vec<_>>(), "{name}");
    } else {
        // After the open, a request names a partition again only to acknowledge its records.
        for t in &m.topics {
            assert!(
                t.partitions
                    .iter()
                    .all(|p| !p.acknowledgement_batches.is_empty()),
                "{name}: {t:?}"
            );
        }
    }
    let mut any = false;
    for t in &m.topics {
        assert_ne!(t.topic_id, Uuid::NIL, "{name}");
        for p in &t.partitions {
            let batches = p
                .acknowledgement_batches
                .iter()
                .map(|b| (b.first_offset, b.last_offset, &b.acknowledge_types[..]));
            any |= !check_acks(c, p.partition_index, batches, log).is_empty();
        }
    }
    assert_eq!(has(c, "ack"), any, "{name}: acknowledgements riding on it");
}

pub(super) fn fetch_response(c: &Captured, log: &ProducedLog) {
    let name = &c.name;
    let m: ShareFetchResponse = round_trip(c);
    let error = variant_error(c);
    assert_eq!(m.error_code, error, "{name}: {:?}", m.error_message);
    if error == 0 {
        assert_eq!(m.error_message, None, "{name}");
    }
    assert_eq!(m.acquisition_lock_timeout_ms, RECORD_LOCK_MS, "{name}");
    assert!(m.node_endpoints.is_empty(), "{name}: no leader moved");
    let mut most = 0;
    for t in &m.responses {
        assert_ne!(t.topic_id, Uuid::NIL, "{name}");
        for p in &t.partitions {
            let at = format!("{name}: partition {}", p.partition_index);
            assert!((0..PARTITIONS).contains(&p.partition_index), "{at}");
            assert_eq!(
                (
                    p.error_code,
                    p.error_message.as_deref(),
                    p.acknowledge_error_code,
                    p.acknowledge_error_message.as_deref()
                ),
                (0, None, 0, None),
                "{at}"
            );
            // The schema gives the leader no default: Java's zeros, which the broker replaces
            // only when it answers NOT_LEADER_OR_FOLLOWER.
            assert_eq!(
                (p.current_leader.leader_id, p.current_leader.leader_epoch),
                (0, 0),
                "{at}"
            );
            // Not nullable from v1: a partition that acquired nothing has no bytes.
            let records = p
                .records
                .clone()
                .unwrap_or_else(|| panic!("{at}: null records"));
            if p.acquired_records.is_empty() {
                assert!(records.is_empty(), "{at}: records acquired by no one");
                continue;
            }
            // The broker sends whole batches; what it hands this member is the acquired ranges.
            let offsets: BTreeSet<i64> = check_records(c, p.partition_index, records, log)
                .into_iter()
                .collect();
            for a in &p.acquired_records {
                assert!(a.first_offset <= a.last_offset, "{at}: {a:?}");
                for offset in a.first_offset..=a.last_offset {
                    assert!(
                        offsets.contains(&offset),
                        "{at}: acquired offset {offset} is not in the records"
                    );
                    check_delivery(c, p.partition_index, offset, a.delivery_count);
                }
                most = most.max(a.delivery_count);
            }
        }
    }
    // The variant says it: `records` (first deliveries only), `delivery<N>` (some record's N-th),
    // neither when nothing was acquired.
    let said: Vec<&str> = words(c)
        .into_iter()
        .filter(|w| *w == "records" || w.starts_with("delivery"))
        .collect();
    let expected = match most {
        0 => Vec::new(),
        1 => vec!["records".to_string()],
        n => vec![format!("delivery{n}")],
    };
    assert_eq!(said, expected, "{name}: the most deliveries of a record");
}

pub(super) fn acknowledge_request(c: &Captured, log: &ProducedLog) {
    let name = &c.name;
    let m: ShareAcknowledgeRequest = round_trip(c);
    check_session_member(c, m.group_id.as_deref(), m.member_id.as_deref());
    check_session_epoch(c, m.share_session_epoch);
    assert!(!m.is_renew_ack, "{name}");
    if has(c, "close") {
        // Every record was acknowledged before SIGTERM: the close carries nothing.
        assert!(m.topics.is_empty(), "{name}: {:?}", m.topics);
    }
    let mut types = BTreeSet::new();
    for t in &m.topics {
        assert_ne!(t.topic_id, Uuid::NIL, "{name}");
        for p in &t.partitions {
            assert!(!p.acknowledgement_batches.is_empty(), "{name}");
            let batches = p
                .acknowledgement_batches
                .iter()
                .map(|b| (b.first_offset, b.last_offset, &b.acknowledge_types[..]));
            check_acks(c, p.partition_index, batches, log);
            for b in &p.acknowledgement_batches {
                types.extend(b.acknowledge_types.iter().copied());
            }
        }
    }
    let named: Vec<&str> = types
        .iter()
        .map(|t| match *t {
            ACCEPT => "accept",
            RELEASE => "release",
            REJECT => "reject",
            other => panic!("{name}: acknowledge type {other}"),
        })
        .collect();
    let said: Vec<&str> = words(c)
        .into_iter()
        .filter(|w| ["accept", "release", "reject"].contains(w))
        .collect();
    assert_eq!(said, named, "{name}: the types it carries");
}

pub(super) fn acknowledge_response(c: &Captured) {
    let name = &c.name;
    let m: ShareAcknowledgeResponse = round_trip(c);
    let error = variant_error(c);
    assert_eq!(m.error_code, error, "{name}: {:?}", m.error_message);
    if error == 0 {
        assert_eq!(m.error_message, None, "{name}");
    }
    assert_eq!(m.acquisition_lock_timeout_ms, RECORD_LOCK_MS, "{name}");
    assert!(m.node_endpoints.is_empty(), "{name}");
    // The broker answers for every partition the request acknowledged, and only those.
    let request = super::load(&super::root().join(c.name.replacen("-response", "-request", 1)));
    let request: ShareAcknowledgeRequest = round_trip(&request);
    let asked: BTreeSet<(Uuid, i32)> = request
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.topic_id, p.partition_index)))
        .collect();
    let mut answered = BTreeSet::new();
    for t in &m.responses {
        for p in &t.partitions {
            assert_eq!(
                (
                    p.error_code,
                    p.error_message.as_deref(),
                    p.current_leader.leader_id,
                    p.current_leader.leader_epoch
                ),
                (0, None, 0, 0),
                "{name}: partition {}",
                p.partition_index
            );
            answered.insert((t.topic_id, p.partition_index));
        }
    }
    assert_eq!(answered, asked, "{name}: partitions answered");
}

pub(super) fn describe_request(c: &Captured) {
    let m: ShareGroupDescribeRequest = round_trip(c);
    assert_eq!(m.group_ids, [c.group()], "{}", c.name);
    assert!(!m.include_authorized_operations, "{}", c.name);
}

pub(super) fn describe_response(c: &Captured) {
    let name = &c.name;
    let m: ShareGroupDescribeResponse = round_trip(c);
    assert_eq!(m.groups.len(), 1, "{name}");
    let g = &m.groups[0];
    assert_eq!(
        (
            g.error_code,
            g.error_message.as_deref(),
            g.group_id.as_str()
        ),
        (0, None, c.group()),
        "{name}"
    );
    assert_eq!(g.group_state, "Stable", "{name}");
    assert!(
        g.group_epoch >= 1 && g.assignment_epoch == g.group_epoch,
        "{name}: {g:?}"
    );
    // group.share.assignors: the broker's default.
    assert_eq!(g.assignor_name, "simple", "{name}");
    // Not asked for: the broker says so with i32::MIN.
    assert_eq!(g.authorized_operations, i32::MIN, "{name}");
    assert_eq!(g.members.len(), 1, "{name}: the live member");
    let member = &g.members[0];
    check_member_id(c, &member.member_id);
    assert_eq!(
        (
            member.client_id.as_str(),
            member.client_host.as_str(),
            member.rack_id.as_deref()
        ),
        ("mooring-golden-java", "/127.0.0.1", None),
        "{name}"
    );
    assert_eq!(member.member_epoch, g.group_epoch, "{name}: reconciled");
    assert_eq!(member.subscribed_topic_names, [c.topic()], "{name}");
    let t = &member.assignment.topic_partitions;
    assert_eq!(t.len(), 1, "{name}");
    assert_eq!(t[0].topic_name, c.topic(), "{name}");
    assert_ne!(t[0].topic_id, Uuid::NIL, "{name}");
    let mut partitions = t[0].partitions.clone();
    partitions.sort_unstable();
    assert_eq!(partitions, (0..PARTITIONS).collect::<Vec<_>>(), "{name}");
}

pub(super) fn offsets_request(c: &Captured) {
    let m: DescribeShareGroupOffsetsRequest = round_trip(c);
    assert_eq!(m.groups.len(), 1, "{}", c.name);
    assert_eq!(m.groups[0].group_id, c.group(), "{}", c.name);
    assert_eq!(m.groups[0].topics, None, "{}: every topic", c.name);
}

pub(super) fn offsets_response(c: &Captured) {
    let name = &c.name;
    let m: DescribeShareGroupOffsetsResponse = round_trip(c);
    assert_eq!(m.groups.len(), 1, "{name}");
    let g = &m.groups[0];
    assert_eq!(
        (
            g.group_id.as_str(),
            g.error_code,
            g.error_message.as_deref()
        ),
        (c.group(), 0, None),
        "{name}"
    );
    assert_eq!(g.topics.len(), 1, "{name}");
    let t = &g.topics[0];
    assert_eq!(t.topic_name, c.topic(), "{name}");
    assert_ne!(t.topic_id, Uuid::NIL, "{name}");
    let mut partitions: Vec<i32> = t.partitions.iter().map(|p| p.partition_index).collect();
    partitions.sort_unstable();
    assert_eq!(partitions, (0..PARTITIONS).collect::<Vec<_>>(), "{name}");
    for p in &t.partitions {
        // The start offset is the one the share coordinator persisted: `earliest` put it at 0,
        // and the broker persists acknowledged records' state with the start offset from before
        // they were acknowledged, so after the one acknowledgement each partition had it is 0
        // still. Every record acknowledged: no lag (v1).
        assert_eq!(
            (
                p.start_offset,
                p.lag,
                p.leader_epoch,
                p.error_code,
                p.error_message.as_deref()
            ),
            (0, 0, 0, 0, None),
            "{name}: partition {}",
            p.partition_index
        );
    }
}

pub(super) fn alter_configs_request(c: &Captured) {
    let name = &c.name;
    let m: IncrementalAlterConfigsRequest = round_trip(c);
    assert!(!m.validate_only, "{name}");
    assert_eq!(m.resources.len(), 1, "{name}");
    let r = &m.resources[0];
    assert_eq!(
        (r.resource_type, r.resource_name.as_str()),
        (GROUP_RESOURCE, c.group()),
        "{name}: the group's config"
    );
    assert_eq!(r.configs.len(), 1, "{name}");
    let config = &r.configs[0];
    assert_eq!(
        (
            config.name.as_str(),
            config.config_operation,
            config.value.as_deref()
        ),
        ("share.auto.offset.reset", SET, Some("earliest")),
        "{name}"
    );
}

pub(super) fn alter_configs_response(c: &Captured) {
    let name = &c.name;
    let m: IncrementalAlterConfigsResponse = round_trip(c);
    assert_eq!(m.responses.len(), 1, "{name}");
    let r = &m.responses[0];
    assert_eq!(
        (
            r.error_code,
            r.error_message.as_deref(),
            r.resource_type,
            r.resource_name.as_str()
        ),
        (0, None, GROUP_RESOURCE, c.group()),
        "{name}"
    );
}

pub(super) fn list_request(c: &Captured) {
    let m: ListGroupsRequest = round_trip(c);
    // ShareGroupCommand --list asks for share groups in any state, spelled as Java's GroupType
    // prints it.
    assert_eq!(m.states_filter, Vec::<String>::new(), "{}: states", c.name);
    assert_eq!(m.types_filter, ["Share"], "{}: types", c.name);
}

pub(super) fn list_response(c: &Captured) {
    let name = &c.name;
    let m: ListGroupsResponse = round_trip(c);
    assert_eq!(m.error_code, 0, "{name}");
    let listed: BTreeMap<&str, (&str, &str, &str)> = m
        .groups
        .iter()
        .map(|g| {
            (
                g.group_id.as_str(),
                (
                    g.protocol_type.as_str(),
                    g.group_state.as_str(),
                    g.group_type.as_str(),
                ),
            )
        })
        .collect();
    // Ours with its live member; the explicit run's group, which ran first, empty since its
    // member left; no other group is a share group.
    let expected = BTreeMap::from([
        (c.group(), (SHARE, "Stable", SHARE)),
        ("golden-java-share-explicit", (SHARE, "Empty", SHARE)),
    ]);
    assert_eq!(listed, expected, "{name}");
}

/// Every file of the scenario, by run (group).
fn runs() -> BTreeMap<String, Vec<Captured>> {
    let mut runs: BTreeMap<String, Vec<Captured>> = BTreeMap::new();
    for c in captured("java-")
        .into_iter()
        .filter(|c| c.scenario == "share-group")
    {
        runs.entry(c.group().to_string()).or_default().push(c);
    }
    runs
}

fn find(
    run: &[Captured],
    key: ApiKey,
    request: bool,
    what: impl Fn(&Captured) -> bool,
) -> Option<&Captured> {
    run.iter()
        .find(|c| c.api_key() == key && c.is_request() == request && what(c))
}

/// One member id in every request; the member says the epoch the broker gave; one topic id
/// throughout (the one ShareGroupCommand describes by name); the session opens at 0 and closes
/// last; each acknowledgement acknowledges what the previous ShareFetch acquired.
#[test]
fn each_runs_exchanges_hang_together() {
    let runs = runs();
    let modes: BTreeSet<Mode> = runs.values().map(|r| mode(&r[0])).collect();
    assert_eq!(modes, BTreeSet::from([Mode::Explicit, Mode::Implicit]));
    for (group, run) in &runs {
        let heartbeat = |s: Shape, request: bool| {
            find(run, ApiKey::ShareGroupHeartbeat, request, |c| {
                shape(c) == s && variant_error(c) == 0
            })
            .unwrap_or_else(|| panic!("{group}: no {s:?} heartbeat (request: {request})"))
        };
        let join: ShareGroupHeartbeatResponse = round_trip(heartbeat(Shape::Join, false));
        let member_id = join.member_id.clone().expect("member id");
        let joined: ShareGroupHeartbeatRequest = round_trip(heartbeat(Shape::Join, true));
        assert_eq!(joined.member_id, member_id, "{group}: echoed");
        let steady: ShareGroupHeartbeatRequest = round_trip(heartbeat(Shape::Steady, true));
        assert!(
            steady.member_epoch >= join.member_epoch,
            "{group}: {} after joining at {}",
            steady.member_epoch,
            join.member_epoch
        );
        let answer: ShareGroupHeartbeatResponse = round_trip(heartbeat(Shape::Steady, false));
        assert!(answer.member_epoch >= steady.member_epoch, "{group}");
        let _: ShareGroupHeartbeatRequest = round_trip(heartbeat(Shape::Leave, true));

        let mut topic_ids = BTreeSet::new();
        let mut sessions = BTreeMap::new(); // share session request → its file
        for c in run {
            match (c.api_key(), c.is_request()) {
                (ApiKey::ShareGroupHeartbeat, true) => {
                    let m: ShareGroupHeartbeatRequest = round_trip(c);
                    assert_eq!(m.member_id, member_id, "{}", c.name);
                }
                (ApiKey::ShareGroupHeartbeat, false) => {
                    let m: ShareGroupHeartbeatResponse = round_trip(c);
                    if m.error_code == 0 {
                        assert_eq!(m.member_id.as_ref(), Some(&member_id), "{}", c.name);
                    }
                    let assigned = m.assignment.iter().flat_map(|a| &a.topic_partitions);
                    topic_ids.extend(assigned.map(|t| t.topic_id));
                }
                (ApiKey::ShareFetch, true) => {
                    let m: ShareFetchRequest = round_trip(c);
                    assert_eq!(m.member_id.as_ref(), Some(&member_id), "{}", c.name);
                    topic_ids.extend(m.topics.iter().map(|t| t.topic_id));
                    assert!(sessions.insert(session_request(c), c).is_none());
                }
                (ApiKey::ShareFetch, false) => {
                    let m: ShareFetchResponse = round_trip(c);
                    topic_ids.extend(m.responses.iter().map(|t| t.topic_id));
                }
                (ApiKey::ShareAcknowledge, true) => {
                    let m: ShareAcknowledgeRequest = round_trip(c);
                    assert_eq!(m.member_id.as_ref(), Some(&member_id), "{}", c.name);
                    topic_ids.extend(m.topics.iter().map(|t| t.topic_id));
                    assert!(sessions.insert(session_request(c), c).is_none());
                }
                (ApiKey::ShareAcknowledge, false) => {
                    let m: ShareAcknowledgeResponse = round_trip(c);
                    topic_ids.extend(m.responses.iter().map(|t| t.topic_id));
                }
                (ApiKey::ShareGroupDescribe, false) => {
                    let m: ShareGroupDescribeResponse = round_trip(c);
                    let member = &m.groups[0].members[0];
                    assert_eq!(member.member_id, member_id, "{}", c.name);
                    assert_eq!(member.member_epoch, answer.member_epoch, "{}", c.name);
                    topic_ids.extend(
                        member
                            .assignment
                            .topic_partitions
                            .iter()
                            .map(|t| t.topic_id),
                    );
                }
                (ApiKey::DescribeShareGroupOffsets, false) => {
                    let m: DescribeShareGroupOffsetsResponse = round_trip(c);
                    topic_ids.extend(m.groups[0].topics.iter().map(|t| t.topic_id));
                }
                _ => {}
            }
        }
        assert_eq!(topic_ids.len(), 1, "{group}: topic ids {topic_ids:?}");

        // The session: opened by the first request, closed by the last.
        let open = sessions.get(&0).expect("the session's first request");
        assert!(has(open, "open"), "{}", open.name);
        let (_, last) = sessions.last_key_value().expect("requests");
        assert!(has(last, "close"), "{}: the last request", last.name);
        assert_eq!(
            sessions.values().filter(|c| has(c, "close")).count(),
            1,
            "{group}"
        );

        // What a request acknowledges is what the session's previous exchange, a ShareFetch,
        // acquired: the consumer acknowledges each poll's records before it polls again.
        for (n, c) in &sessions {
            let acked = if c.api_key() == ApiKey::ShareFetch {
                fetch_acks(&round_trip(c))
            } else {
                acknowledge_acks(&round_trip(c))
            };
            let previous = sessions
                .get(&(n - 1))
                .filter(|p| p.api_key() == ApiKey::ShareFetch);
            let (Some(previous), false) = (previous, acked.is_empty()) else {
                continue;
            };
            let response = super::load(&super::root().join(previous.name.replacen(
                "-request",
                "-response",
                1,
            )));
            let response: ShareFetchResponse = round_trip(&response);
            assert_eq!(
                acked,
                acquired(&response),
                "{}: acknowledges what {} acquired",
                c.name,
                previous.name
            );
        }

        // What each run is there to show.
        match mode(&run[0]) {
            Mode::Explicit => {
                let limit = run[0].meta_i64("delivery_count_limit");
                let acknowledged = find(run, ApiKey::ShareAcknowledge, true, |c| {
                    has(c, "accept") && has(c, "release") && has(c, "reject")
                });
                assert!(
                    acknowledged.is_some(),
                    "{group}: no ShareAcknowledge of every type"
                );
                for n in 2..=limit {
                    let delivery = format!("delivery{n}");
                    assert!(
                        find(run, ApiKey::ShareFetch, false, |c| has(c, &delivery)).is_some(),
                        "{group}: no ShareFetch delivering a record the {n}th time"
                    );
                }
            }
            Mode::Implicit => {
                let riding = find(run, ApiKey::ShareFetch, true, |c| has(c, "ack"));
                assert!(
                    riding.is_some(),
                    "{group}: no acknowledgement on a ShareFetch"
                );
                for key in [
                    ApiKey::ShareGroupDescribe,
                    ApiKey::DescribeShareGroupOffsets,
                ] {
                    assert!(
                        find(run, key, false, |_| true).is_some(),
                        "{group}: {}",
                        key.name()
                    );
                }
            }
        }
    }
}
