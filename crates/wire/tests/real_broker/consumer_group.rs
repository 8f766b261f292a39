//! The KIP-848 group protocol's two APIs against the real broker, at every version both this
//! crate and the broker implement: a member joins a group of its own with ConsumerGroupHeartbeat
//! (epoch 0), is assigned the topic by id, acknowledges it, is described by ConsumerGroupDescribe,
//! and leaves (epoch -1). Bytes only, no group member logic: what is checked is that the broker
//! reads what the codec writes and the codec reads what the broker answers.
//!
//! Kafka 4.x runs the protocol. 3.7.2 and 3.9.1 advertise ConsumerGroupHeartbeat v0 (3.9.1
//! ConsumerGroupDescribe v0 too) as a preview that is off unless the broker enables it, and answer
//! a heartbeat with UNSUPPORTED_VERSION: on those that refusal ends the test (said on stderr), and
//! any other error fails it.

use std::time::{Duration, Instant};

use mooring_testkit::{unique, Cluster};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::consumer_group_heartbeat::TopicPartitions;
use mooring_wire::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatResponse, FindCoordinatorRequest, Message,
};
use mooring_wire::primitives::Uuid;

use super::{create_topic, Conn};

const PARTITIONS: i32 = 2;

/// The common versions of an API, if the broker offers it at all.
fn common_versions<M: Message>(conn: &Conn) -> Option<std::ops::RangeInclusive<i16>> {
    let (min, max) = *conn.broker_versions.get(&M::API_KEY)?;
    let (lo, hi) = (min.max(M::MIN_VERSION), max.min(M::MAX_VERSION));
    (lo <= hi).then_some(lo..=hi)
}

/// Sends a heartbeat until the coordinator has loaded (a fresh group's partition of
/// `__consumer_offsets` may still be loading); any other answer is returned.
fn heartbeat(
    conn: &mut Conn,
    request: &ConsumerGroupHeartbeatRequest,
    version: i16,
) -> ConsumerGroupHeartbeatResponse {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let response = conn.call(request, version);
        let loading = matches!(
            ErrorCode::from(response.error_code),
            ErrorCode::CoordinatorLoadInProgress
                | ErrorCode::CoordinatorNotAvailable
                | ErrorCode::NotCoordinator
        );
        if !loading || Instant::now() > deadline {
            return response;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Asks FindCoordinator for `group` until the broker names a coordinator, as a client does before
/// its first heartbeat: on a fresh broker that request is what creates `__consumer_offsets`, and a
/// heartbeat sent before it is answered NOT_COORDINATOR for as long as nobody asks.
fn find_coordinator(conn: &mut Conn, group: &str) {
    let version = conn.version::<FindCoordinatorRequest>();
    // One key field or the other: the codec refuses a field at a version that lacks it.
    let request = if version >= 4 {
        FindCoordinatorRequest {
            coordinator_keys: vec![group.into()],
            ..Default::default()
        }
    } else {
        FindCoordinatorRequest {
            key: group.into(),
            ..Default::default()
        }
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let response = conn.call(&request, version);
        let code = match response.coordinators.first() {
            Some(c) => c.error_code,
            None => response.error_code,
        };
        if code == 0 {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "FindCoordinator v{version}: error {code}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn assigned(response: &ConsumerGroupHeartbeatResponse) -> Option<Vec<TopicPartitions>> {
    response
        .assignment
        .as_ref()
        .map(|a| a.topic_partitions.clone())
}

/// The whole topic, by id, sorted: what a member alone in its group is given.
fn whole_topic(topic_id: Uuid) -> Vec<TopicPartitions> {
    vec![TopicPartitions {
        topic_id,
        partitions: (0..PARTITIONS).collect(),
        ..Default::default()
    }]
}

fn sorted(mut partitions: Vec<TopicPartitions>) -> Vec<TopicPartitions> {
    for t in &mut partitions {
        t.partitions.sort_unstable();
    }
    partitions
}

/// Describes the group until `done` holds of it (the broker settles the member's state a
/// heartbeat at a time); returns the last description.
fn describe_until(
    conn: &mut Conn,
    group: &str,
    version: i16,
    done: impl Fn(&ConsumerGroupDescribeResponse) -> bool,
) -> ConsumerGroupDescribeResponse {
    let request = ConsumerGroupDescribeRequest {
        group_ids: vec![group.into()],
        include_authorized_operations: true,
        ..Default::default()
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let response = conn.call(&request, version);
        if done(&response) || Instant::now() > deadline {
            return response;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One member of a group of its own, at one ConsumerGroupHeartbeat version.
struct Member {
    group: String,
    topic: String,
    topic_id: Uuid,
    version: i16,
    id: String,
    epoch: i32,
}

impl Member {
    fn heartbeat(
        &self,
        conn: &mut Conn,
        request: ConsumerGroupHeartbeatRequest,
    ) -> ConsumerGroupHeartbeatResponse {
        let request = ConsumerGroupHeartbeatRequest {
            group_id: self.group.clone(),
            member_id: self.id.clone(),
            ..request
        };
        heartbeat(conn, &request, self.version)
    }

    /// Joins (epoch 0, the whole subscription said). With `refusal_expected` (a 3.x broker,
    /// whose preview of the protocol is off) the join must be refused with UNSUPPORTED_VERSION,
    /// and `None` says it was.
    fn join(
        &mut self,
        conn: &mut Conn,
        refusal_expected: bool,
    ) -> Option<ConsumerGroupHeartbeatResponse> {
        let v = self.version;
        let join = ConsumerGroupHeartbeatRequest {
            member_epoch: 0,
            rebalance_timeout_ms: 30_000,
            subscribed_topic_names: Some(vec![self.topic.clone()]),
            topic_partitions: Some(Vec::new()),
            ..Default::default()
        };
        let response = self.heartbeat(conn, join);
        if refusal_expected {
            assert_eq!(
                ErrorCode::from(response.error_code),
                ErrorCode::UnsupportedVersion,
                "v{v}: a broker before Kafka 4 refuses the join: {:?}",
                response.error_message
            );
            eprintln!("v{v}: the broker refuses the consumer protocol: UNSUPPORTED_VERSION");
            return None;
        }
        assert_eq!(
            response.error_code, 0,
            "v{v} join: {:?}",
            response.error_message
        );
        let given = response.member_id.clone().expect("a member id");
        if v >= 1 {
            assert_eq!(given, self.id, "v{v}: the id the member chose");
        } else {
            assert!(!given.is_empty(), "v0: the coordinator names the member");
            self.id = given;
        }
        assert!(response.member_epoch >= 1, "v{v}: {response:?}");
        assert!(response.heartbeat_interval_ms > 0, "v{v}: {response:?}");
        self.epoch = response.member_epoch;
        Some(response)
    }

    /// Heartbeats until given the whole topic (with the join or later: before the coordinator
    /// knows a new topic, the assignment it gives is empty), then acknowledges it.
    fn take_assignment(&mut self, conn: &mut Conn, join: &ConsumerGroupHeartbeatResponse) {
        let v = self.version;
        let whole = whole_topic(self.topic_id);
        let mut assignment = assigned(join);
        let deadline = Instant::now() + Duration::from_secs(30);
        while assignment.clone().map(sorted) != Some(whole.clone()) {
            assert!(
                Instant::now() < deadline,
                "v{v}: not given the topic in 30 s: {assignment:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
            let steady = ConsumerGroupHeartbeatRequest {
                member_epoch: self.epoch,
                ..Default::default()
            };
            let response = self.heartbeat(conn, steady);
            assert_eq!(response.error_code, 0, "v{v}: {:?}", response.error_message);
            self.epoch = response.member_epoch;
            // No assignment in a response means no change.
            assignment = assigned(&response).or(assignment);
        }
        let ack = ConsumerGroupHeartbeatRequest {
            member_epoch: self.epoch,
            topic_partitions: Some(whole),
            ..Default::default()
        };
        let response = self.heartbeat(conn, ack);
        assert_eq!(
            response.error_code, 0,
            "v{v} ack: {:?}",
            response.error_message
        );
        assert_eq!(response.member_epoch, self.epoch, "v{v}: nothing changed");
    }

    /// The group as ConsumerGroupDescribe `dv` says it once the member is reconciled.
    fn check_described(&self, conn: &mut Conn, dv: i16) {
        let described = describe_until(conn, &self.group, dv, |d| {
            d.groups.first().is_some_and(|g| g.group_state == "Stable")
        });
        let g = &described.groups[0];
        assert_eq!(
            (g.error_code, g.group_id.as_str()),
            (0, self.group.as_str())
        );
        assert_eq!(g.group_state, "Stable", "describe v{dv}: {g:?}");
        assert_eq!(g.members.len(), 1, "describe v{dv}");
        let m = &g.members[0];
        assert_eq!(
            (m.member_id.as_str(), m.member_epoch),
            (self.id.as_str(), self.epoch)
        );
        assert_eq!(m.client_id, "mooring-wire-test", "describe v{dv}");
        assert_eq!(m.subscribed_topic_names, vec![self.topic.clone()]);
        let t = &m.assignment.topic_partitions;
        assert_eq!(
            (t.len(), t[0].topic_id),
            (1, self.topic_id),
            "describe v{dv}"
        );
        assert_eq!(t[0].topic_name, self.topic, "describe v{dv}");
        let expected_type = if dv >= 1 { 1 } else { -1 };
        assert_eq!(m.member_type, expected_type, "describe v{dv}: member type");
    }

    /// Leaves (epoch -1); the group is then empty, as ConsumerGroupDescribe `dv` says.
    fn leave(&self, conn: &mut Conn, dv: Option<i16>) {
        let v = self.version;
        let leave = ConsumerGroupHeartbeatRequest {
            member_epoch: -1,
            ..Default::default()
        };
        let response = self.heartbeat(conn, leave);
        assert_eq!(
            response.error_code, 0,
            "v{v} leave: {:?}",
            response.error_message
        );
        assert_eq!(response.member_epoch, -1, "v{v}: left");
        if let Some(dv) = dv {
            let described = describe_until(conn, &self.group, dv, |d| {
                d.groups.first().is_some_and(|g| g.members.is_empty())
            });
            let g = &described.groups[0];
            assert_eq!((g.group_state.as_str(), g.members.len()), ("Empty", 0));
        }
    }
}

#[test]
fn consumer_group_heartbeat_and_describe_at_every_version() {
    let cluster = Cluster::shared();
    let mut conn = Conn::connect(&cluster);
    let kafka_4 = cluster.var("MOORING_KAFKA_VERSION").starts_with("4.");
    let Some(versions) = common_versions::<ConsumerGroupHeartbeatRequest>(&conn) else {
        assert!(!kafka_4, "a Kafka 4 broker offers ConsumerGroupHeartbeat");
        eprintln!("the broker does not offer ConsumerGroupHeartbeat");
        return;
    };
    let describe_versions = common_versions::<ConsumerGroupDescribeRequest>(&conn);
    if kafka_4 {
        assert_eq!(
            versions,
            0..=1,
            "Kafka 4.4 offers ConsumerGroupHeartbeat v0-v1"
        );
        assert_eq!(
            describe_versions,
            Some(0..=1),
            "and ConsumerGroupDescribe v0-v1"
        );
    }
    let topic = unique("wire-kip848");
    let topic_id = create_topic(&mut conn, &topic, PARTITIONS);
    for version in versions {
        let group = unique("wire-kip848");
        find_coordinator(&mut conn, &group);
        let mut member = Member {
            group,
            topic: topic.clone(),
            topic_id,
            version,
            // From v1 the member names itself (KIP-1082); at v0 the coordinator names it.
            id: if version >= 1 {
                unique("member")
            } else {
                String::new()
            },
            epoch: 0,
        };
        let Some(join) = member.join(&mut conn, !kafka_4) else {
            return;
        };
        member.take_assignment(&mut conn, &join);
        for dv in describe_versions.clone().into_iter().flatten() {
            member.check_described(&mut conn, dv);
        }
        member.leave(&mut conn, describe_versions.clone().map(|v| *v.end()));
    }
}
