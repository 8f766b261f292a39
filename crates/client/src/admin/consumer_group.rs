//! ConsumerGroupDescribe (API 69, KIP-848): how the sidecar sees a group of the `consumer`
//! protocol. Kafka 4.x answers DescribeGroups for such a group with GROUP_ID_NOT_FOUND ("Group …
//! is not a classic group.", state `Dead`, no members), and ConsumerGroupDescribe for a classic
//! group with GROUP_ID_NOT_FOUND ("… is not a consumer group."), so each protocol's groups have
//! their own look-up; [`Client::describe_consumer_group`] says `None` for a group that is not a
//! consumer group (or does not exist).

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::consumer_group_describe::{self, ConsumerGroupDescribeRequest};
use mooring_wire::primitives::Uuid;

use super::{broker_error, is_coordinator_move};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::topic::TopicPartition;

/// What ConsumerGroupDescribe says of a `consumer`-protocol group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroupDescription {
    /// The group id.
    pub group_id: String,
    /// `Empty`, `Assigning`, `Reconciling`, `Stable` or `Dead`.
    pub state: String,
    /// The group epoch: it moves whenever the group's membership, subscriptions or the
    /// subscribed topics' metadata change.
    pub group_epoch: i32,
    /// The epoch of the target assignment the coordinator computed last (it catches up with the
    /// group epoch once the assignor ran).
    pub assignment_epoch: i32,
    /// The broker-side assignor (`uniform`, `range`).
    pub assignor: String,
    /// The members.
    pub members: Vec<ConsumerMemberDescription>,
}

/// Whether a member of a `consumer` group speaks the classic protocol (upgrade or downgrade in
/// progress, KIP-848's online migration) or the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberType {
    /// Not said (ConsumerGroupDescribe v0).
    Unknown,
    /// JoinGroup/SyncGroup/Heartbeat, in a `consumer` group.
    Classic,
    /// ConsumerGroupHeartbeat.
    Consumer,
}

impl MemberType {
    fn from_wire(value: i8) -> MemberType {
        match value {
            0 => MemberType::Classic,
            1 => MemberType::Consumer,
            _ => MemberType::Unknown,
        }
    }
}

/// One member of a described `consumer` group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerMemberDescription {
    /// The member id (chosen by the member itself under this protocol).
    pub member_id: String,
    /// `group.instance.id` of a static member.
    pub instance_id: Option<String>,
    /// `client.rack`.
    pub rack_id: Option<String>,
    /// Its member epoch: the group epoch it reconciled to; `-2` for a static member that left
    /// and whose assignment the coordinator holds for its return (until its session expires).
    pub member_epoch: i32,
    /// The member's `client.id`.
    pub client_id: String,
    /// The member's host as the broker saw it.
    pub client_host: String,
    /// The topics it subscribed to by name.
    pub subscribed_topic_names: Vec<String>,
    /// Its broker-side regex subscription, if any (the broker answers `""` for none).
    pub subscribed_topic_regex: Option<String>,
    /// What it owns now.
    pub assignment: Vec<TopicPartition>,
    /// What the coordinator wants it to own.
    pub target_assignment: Vec<TopicPartition>,
    /// Which protocol it speaks.
    pub member_type: MemberType,
}

fn partitions(assignment: consumer_group_describe::Assignment) -> Vec<TopicPartition> {
    named_partitions(
        assignment
            .topic_partitions
            .into_iter()
            .map(|t| (t.topic_id, t.topic_name, t.partitions)),
    )
}

/// A described assignment's topics (id, name, partitions) as partitions, in topic then partition
/// order. A topic the broker could not name (deleted meanwhile) is named by its id, so none of its
/// partitions goes missing.
pub(crate) fn named_partitions(
    topics: impl IntoIterator<Item = (Uuid, String, Vec<i32>)>,
) -> Vec<TopicPartition> {
    let mut out: Vec<TopicPartition> = topics
        .into_iter()
        .flat_map(|(id, name, partitions)| {
            let topic = if name.is_empty() {
                id.to_string()
            } else {
                name
            };
            partitions
                .into_iter()
                .map(move |p| TopicPartition::new(topic.clone(), p))
        })
        .collect();
    out.sort();
    out
}

fn member(m: consumer_group_describe::Member) -> ConsumerMemberDescription {
    ConsumerMemberDescription {
        member_id: m.member_id,
        instance_id: m.instance_id,
        rack_id: m.rack_id,
        member_epoch: m.member_epoch,
        client_id: m.client_id,
        client_host: m.client_host,
        subscribed_topic_names: m.subscribed_topic_names,
        subscribed_topic_regex: m.subscribed_topic_regex.filter(|r| !r.is_empty()),
        assignment: partitions(m.assignment),
        target_assignment: partitions(m.target_assignment),
        member_type: MemberType::from_wire(m.member_type),
    }
}

/// The group's entry of a response: `Ok(None)` for GROUP_ID_NOT_FOUND (no such group, or not a
/// consumer group), the group's error code and message otherwise.
fn entry(
    group: &str,
    groups: Vec<consumer_group_describe::DescribedGroup>,
) -> std::result::Result<Option<ConsumerGroupDescription>, (ErrorCode, Option<String>)> {
    let Some(described) = groups.into_iter().find(|g| g.group_id == group) else {
        return Err((
            ErrorCode::UnknownServerError,
            Some(format!("no answer for group {group}")),
        ));
    };
    match ErrorCode::from(described.error_code) {
        ErrorCode::None => {}
        ErrorCode::GroupIdNotFound => return Ok(None),
        code => return Err((code, described.error_message)),
    }
    Ok(Some(ConsumerGroupDescription {
        group_id: described.group_id,
        state: described.group_state,
        group_epoch: described.group_epoch,
        assignment_epoch: described.assignment_epoch,
        assignor: described.assignor_name,
        members: described.members.into_iter().map(member).collect(),
    }))
}

impl Client {
    /// Describes a `consumer`-protocol group (ConsumerGroupDescribe to its coordinator; v1 says
    /// each member's protocol). `None` when the group does not exist or is a classic group (then
    /// [`Client::describe_group`] describes it). A broker without the API (before Kafka 3.7, or
    /// without KIP-848 enabled) answers [`Error::UnsupportedVersion`].
    pub async fn describe_consumer_group(
        &self,
        group: &str,
    ) -> Result<Option<ConsumerGroupDescription>> {
        self.with_retries("ConsumerGroupDescribe", || async {
            let response = self
                .call_coordinator(group, |_version| ConsumerGroupDescribeRequest {
                    group_ids: vec![group.to_string()],
                    ..Default::default()
                })
                .await?;
            entry(group, response.groups).map_err(|(code, message)| {
                if is_coordinator_move(code) {
                    self.forget_coordinator(group);
                }
                match code {
                    ErrorCode::UnknownServerError if message.is_some() => {
                        broker_error("ConsumerGroupDescribe", code, message)
                    }
                    code => Error::from_code(
                        "ConsumerGroupDescribe",
                        code,
                        message,
                        group,
                        Vec::new,
                        || self.config().principal(),
                    ),
                }
            })
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use mooring_wire::messages::consumer_group_describe::{
        Assignment, DescribedGroup, Member, TopicPartitions,
    };
    use mooring_wire::primitives::Uuid;

    use super::*;

    fn tps(topic: &str, id: u8, partitions: &[i32]) -> TopicPartitions {
        TopicPartitions {
            topic_id: Uuid([id; 16]),
            topic_name: topic.to_string(),
            partitions: partitions.to_vec(),
            ..Default::default()
        }
    }

    #[test]
    fn a_member_as_the_broker_describes_it() {
        let m = member(Member {
            member_id: "m".into(),
            instance_id: Some("pod-0".into()),
            member_epoch: 7,
            subscribed_topic_names: vec!["orders".into()],
            subscribed_topic_regex: Some(String::new()),
            assignment: Assignment {
                topic_partitions: vec![tps("orders", 1, &[2, 0]), tps("", 9, &[1])],
                ..Default::default()
            },
            member_type: 1,
            ..Default::default()
        });
        assert_eq!(m.subscribed_topic_regex, None, "\"\" is no regex");
        assert_eq!(m.member_type, MemberType::Consumer);
        let unnamed = Uuid([9; 16]).to_string();
        assert_eq!(
            m.assignment,
            vec![
                TopicPartition::new(unnamed, 1),
                TopicPartition::new("orders", 0),
                TopicPartition::new("orders", 2),
            ]
        );
        assert!(m.target_assignment.is_empty());
        assert_eq!(MemberType::from_wire(-1), MemberType::Unknown);
        assert_eq!(MemberType::from_wire(0), MemberType::Classic);
    }

    fn described(group: &str, code: ErrorCode) -> DescribedGroup {
        DescribedGroup {
            error_code: i16::from(code),
            error_message: Some(format!("about {group}")),
            group_id: group.to_string(),
            group_state: "Stable".into(),
            group_epoch: 5,
            assignment_epoch: 4,
            assignor_name: "uniform".into(),
            members: vec![Member::default()],
            ..Default::default()
        }
    }

    #[test]
    fn each_group_answer_has_its_meaning() {
        let ok = entry(
            "g",
            vec![
                described("other", ErrorCode::None),
                described("g", ErrorCode::None),
            ],
        )
        .expect("described")
        .expect("a consumer group");
        assert_eq!(
            (
                ok.state.as_str(),
                ok.group_epoch,
                ok.assignment_epoch,
                ok.assignor.as_str()
            ),
            ("Stable", 5, 4, "uniform")
        );
        assert_eq!(ok.members.len(), 1);
        // Kafka's answer for a classic group, or none at all.
        assert_eq!(
            entry("g", vec![described("g", ErrorCode::GroupIdNotFound)]),
            Ok(None)
        );
        assert_eq!(
            entry("g", vec![described("g", ErrorCode::NotCoordinator)]),
            Err((ErrorCode::NotCoordinator, Some("about g".into())))
        );
        let (code, message) =
            entry("g", vec![described("other", ErrorCode::None)]).expect_err("no entry for g");
        assert_eq!(code, ErrorCode::UnknownServerError);
        assert!(message.is_some_and(|m| m.contains("no answer for group g")));
    }
}
