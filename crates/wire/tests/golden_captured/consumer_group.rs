//! The `consumer-protocol` scenario (KIP-848): the Java client's VerifiableConsumer with
//! `group.protocol=consumer` joined a group of its own on a fresh broker, read the topic, was
//! described by ConsumerGroupCommand (ConsumerGroupDescribe) and left on SIGTERM. Per file: the
//! ConsumerGroupHeartbeat requests as each kind says them (a join with epoch 0 and the whole
//! subscription, an acknowledgement naming the owned partitions by topic id, a steady heartbeat
//! with every "unchanged" field null, a leave with epoch -1) and the broker's answers (the
//! coordinator errors a loading `__consumer_offsets` gives, then an epoch, a heartbeat interval
//! and the assignment). Across the files: one member id throughout, the epoch the broker gave is
//! the one the member says next, and every topic id is the topic ConsumerGroupDescribe names.

use mooring_wire::messages::consumer_group_describe::DescribedGroup;
use mooring_wire::messages::consumer_group_heartbeat::TopicPartitions;
use mooring_wire::messages::*;
use mooring_wire::primitives::Uuid;

use super::{captured, expected_error, round_trip, Captured, PARTITIONS};

/// What a heartbeat file's variant says the member did (scripts/capture-golden: heartbeat_shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Join,
    Ack,
    Steady,
    Leave,
}

fn shape(c: &Captured) -> Shape {
    let words: Vec<&str> = c.variant().map_or(Vec::new(), |v| v.split('-').collect());
    let kinds: Vec<&str> = words
        .into_iter()
        .filter(|w| !w.starts_with("error"))
        .collect();
    match kinds[..] {
        [] => Shape::Steady,
        ["join"] => Shape::Join,
        ["ack"] => Shape::Ack,
        ["leave"] => Shape::Leave,
        _ => panic!("{}: unknown heartbeat variant {:?}", c.name, c.variant()),
    }
}

/// The group as the broker described it while the member was in it.
fn described(c: &Captured) -> DescribedGroup {
    let dir = super::root().join(&c.client).join(&c.scenario);
    let path = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("consumer_group_describe-v"))
                && p.to_string_lossy().ends_with("-response.hex")
        })
        .unwrap_or_else(|| panic!("{}: no ConsumerGroupDescribe response beside it", c.name));
    let describe = super::load(&path);
    let m: ConsumerGroupDescribeResponse = round_trip(&describe);
    assert_eq!(m.groups.len(), 1, "{}", describe.name);
    m.groups[0].clone()
}

/// The id of the scenario's topic, as ConsumerGroupDescribe names it.
pub(super) fn topic_id(c: &Captured) -> Uuid {
    let group = described(c);
    let t = &group.members[0].assignment.topic_partitions[0];
    assert_eq!(t.topic_name, c.topic(), "{}: described topic", c.name);
    assert_ne!(t.topic_id, Uuid::NIL, "{}: described topic id", c.name);
    t.topic_id
}

/// The whole topic, by id, as a consumer alone in its group owns it.
fn check_whole_topic(c: &Captured, partitions: &[TopicPartitions]) {
    assert_eq!(partitions.len(), 1, "{}: {partitions:?}", c.name);
    assert_eq!(partitions[0].topic_id, topic_id(c), "{}: topic id", c.name);
    let mut owned = partitions[0].partitions.clone();
    owned.sort_unstable();
    assert_eq!(owned, (0..PARTITIONS).collect::<Vec<_>>(), "{}", c.name);
}

pub(super) fn heartbeat_request(c: &Captured) {
    let name = &c.name;
    let m: ConsumerGroupHeartbeatRequest = round_trip(c);
    assert_eq!(m.group_id, c.group(), "{name}");
    // From v1 the member makes up its id (KIP-1082) and keeps it for its whole life.
    assert!(
        c.version() >= 1 && !m.member_id.is_empty(),
        "{name}: member id"
    );
    assert_eq!(m.instance_id, None, "{name}: a dynamic member");
    match shape(c) {
        Shape::Join => {
            assert_eq!(m.member_epoch, 0, "{name}: joining");
            assert_eq!(
                m.subscribed_topic_names,
                Some(vec![c.topic().to_string()]),
                "{name}"
            );
            assert_eq!(m.subscribed_topic_regex, None, "{name}");
            assert!(m.rebalance_timeout_ms > 0, "{name}: max.poll.interval.ms");
            assert_eq!(m.topic_partitions, Some(Vec::new()), "{name}: owns nothing");
        }
        Shape::Ack => {
            assert!(m.member_epoch >= 1, "{name}: epoch {}", m.member_epoch);
            let owned = m.topic_partitions.as_deref().expect("owned partitions");
            check_whole_topic(c, owned);
        }
        Shape::Steady => {
            assert!(m.member_epoch >= 1, "{name}: epoch {}", m.member_epoch);
            assert_eq!(m.rebalance_timeout_ms, -1, "{name}: unchanged");
            assert_eq!(
                (m.subscribed_topic_names, m.topic_partitions, m.rack_id),
                (None, None, None),
                "{name}: nothing changed, nothing said"
            );
        }
        Shape::Leave => assert_eq!(m.member_epoch, -1, "{name}: leaving"),
    }
}

pub(super) fn heartbeat_response(c: &Captured) {
    let name = &c.name;
    let m: ConsumerGroupHeartbeatResponse = round_trip(c);
    let error = expected_error(c);
    assert_eq!(m.error_code, error, "{name}: {:?}", m.error_message);
    if error != 0 {
        assert_eq!(
            (m.member_id.clone(), m.assignment.clone()),
            (None, None),
            "{name}"
        );
        return;
    }
    assert!(
        m.member_id.as_deref().is_some_and(|id| !id.is_empty()),
        "{name}"
    );
    match shape(c) {
        Shape::Leave => assert_eq!(m.member_epoch, -1, "{name}: left"),
        shape => {
            assert!(m.member_epoch >= 1, "{name}: epoch {}", m.member_epoch);
            assert!(m.heartbeat_interval_ms > 0, "{name}: heartbeat interval");
            if shape == Shape::Join {
                let assignment = m.assignment.as_ref().expect("a lone member's assignment");
                check_whole_topic(c, &assignment.topic_partitions);
            } else {
                assert_eq!(m.assignment, None, "{name}: nothing new to assign");
            }
        }
    }
}

pub(super) fn describe_request(c: &Captured) {
    let m: ConsumerGroupDescribeRequest = round_trip(c);
    assert_eq!(m.group_ids, vec![c.group().to_string()], "{}", c.name);
}

pub(super) fn describe_response(c: &Captured) {
    let name = &c.name;
    let m: ConsumerGroupDescribeResponse = round_trip(c);
    assert_eq!(m.groups.len(), 1, "{name}");
    let g = &m.groups[0];
    assert_eq!(
        (g.error_code, g.group_id.as_str()),
        (0, c.group()),
        "{name}"
    );
    assert_eq!(g.group_state, "Stable", "{name}");
    assert!(
        g.group_epoch >= 1 && g.assignment_epoch == g.group_epoch,
        "{name}: {g:?}"
    );
    assert_eq!(
        g.assignor_name, "uniform",
        "{name}: the broker's default assignor"
    );
    assert_eq!(g.members.len(), 1, "{name}");
    let member = &g.members[0];
    assert_eq!(member.client_id, "mooring-golden-java", "{name}");
    assert_eq!(member.member_epoch, g.group_epoch, "{name}: reconciled");
    assert_eq!(
        member.subscribed_topic_names,
        vec![c.topic().to_string()],
        "{name}"
    );
    assert_eq!(
        member.assignment, member.target_assignment,
        "{name}: reconciled"
    );
    let t = &member.assignment.topic_partitions;
    assert_eq!(t.len(), 1, "{name}");
    assert_eq!(t[0].topic_name, c.topic(), "{name}");
    let mut partitions = t[0].partitions.clone();
    partitions.sort_unstable();
    assert_eq!(partitions, (0..PARTITIONS).collect::<Vec<_>>(), "{name}");
    if c.version() >= 1 {
        assert_eq!(member.member_type, 1, "{name}: a consumer-protocol member");
    }
}

/// The OffsetCommit of a consumer-protocol member carries its member epoch and id.
pub(super) fn check_commit_member(c: &Captured, m: &OffsetCommitRequest) {
    assert!(
        m.generation_id_or_member_epoch >= 1,
        "{}: member epoch {}",
        c.name,
        m.generation_id_or_member_epoch
    );
    assert!(!m.member_id.is_empty(), "{}: member id", c.name);
}

/// One member id in every heartbeat and commit; each heartbeat says the epoch the broker last
/// gave; the join, the acknowledgement, a steady heartbeat and the leave are all there.
#[test]
fn the_java_members_exchanges_hang_together() {
    let files: Vec<Captured> = captured("java-")
        .into_iter()
        .filter(|c| c.scenario == "consumer-protocol")
        .collect();
    let ok = |c: &&Captured| expected_error(c) == 0;
    let heartbeat = |shape_of: Shape, request: bool| -> &Captured {
        files
            .iter()
            .filter(ok)
            .find(|c| {
                c.api_key() == ApiKey::ConsumerGroupHeartbeat
                    && c.is_request() == request
                    && shape(c) == shape_of
            })
            .unwrap_or_else(|| panic!("no {shape_of:?} heartbeat (request: {request})"))
    };
    let join: ConsumerGroupHeartbeatResponse = round_trip(heartbeat(Shape::Join, false));
    let member_id = join.member_id.clone().expect("member id");
    for shape_of in [Shape::Join, Shape::Ack, Shape::Steady, Shape::Leave] {
        let request: ConsumerGroupHeartbeatRequest = round_trip(heartbeat(shape_of, true));
        assert_eq!(request.member_id, member_id, "{shape_of:?}");
        if shape_of == Shape::Ack {
            assert_eq!(
                request.member_epoch, join.member_epoch,
                "the epoch the join gave"
            );
        }
    }
    let commit = files
        .iter()
        .find(|c| c.api_key() == ApiKey::OffsetCommit && c.is_request())
        .expect("an OffsetCommit");
    let commit: OffsetCommitRequest = round_trip(commit);
    assert_eq!(commit.member_id, member_id);
    assert_eq!(commit.generation_id_or_member_epoch, join.member_epoch);
    let describe = files
        .iter()
        .find(|c| c.api_key() == ApiKey::ConsumerGroupDescribe && !c.is_request())
        .expect("a ConsumerGroupDescribe response");
    let described: ConsumerGroupDescribeResponse = round_trip(describe);
    assert_eq!(described.groups[0].members[0].member_id, member_id);
}
