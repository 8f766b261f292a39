//! Share groups (KIP-932) as the sidecar watches them: ShareGroupDescribe (API 77: the group's
//! state, epochs and members with their assignments), DescribeShareGroupOffsets (API 90: each
//! share-partition's start offset and, from v1, its lag as the broker counts it, KIP-1226), and
//! the group's configuration (DescribeConfigs, API 32, on the `GROUP` resource: its
//! `share.delivery.count.limit` among others, the broker's `group.share.*` defaults where the
//! group sets none).
//!
//! Kafka answers ShareGroupDescribe for a group of another type, or for no group, with
//! GROUP_ID_NOT_FOUND: [`Client::describe_share_group`] says `None` then, as
//! [`Client::describe_consumer_group`] does for `consumer` groups.

use std::collections::BTreeMap;

use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::describe_configs::{DescribeConfigsRequest, DescribeConfigsResource};
use mooring_wire::messages::describe_share_group_offsets::{
    DescribeShareGroupOffsetsRequest, DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsResponseGroup,
};
use mooring_wire::messages::share_group_describe::{self, ShareGroupDescribeRequest};

use super::consumer_group::named_partitions;
use super::{broker_error, is_coordinator_move};
use crate::client::Client;
use crate::error::{Error, Result};
use crate::topic::TopicPartition;

/// DescribeConfigs' resource type of a group (`ConfigResource.Type.GROUP`).
pub const CONFIG_RESOURCE_GROUP: i8 = 32;

/// What ShareGroupDescribe says of a share group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareGroupDescription {
    /// The group id.
    pub group_id: String,
    /// `Empty`, `Stable` or `Dead`.
    pub state: String,
    /// The group epoch (it moves when the membership or a subscription changes).
    pub group_epoch: i32,
    /// The epoch of the coordinator's target assignment.
    pub assignment_epoch: i32,
    /// The broker-side assignor (`simple`).
    pub assignor: String,
    /// The members.
    pub members: Vec<ShareMemberDescription>,
}

/// One member of a described share group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareMemberDescription {
    /// The member id (chosen by the member).
    pub member_id: String,
    /// `client.rack`.
    pub rack_id: Option<String>,
    /// Its member epoch.
    pub member_epoch: i32,
    /// The member's `client.id`.
    pub client_id: String,
    /// The member's host as the broker saw it.
    pub client_host: String,
    /// The topics it subscribed to.
    pub subscribed_topic_names: Vec<String>,
    /// The share-partitions assigned to it (other members may be assigned the same ones).
    pub assignment: Vec<TopicPartition>,
}

/// One share-partition's offsets (DescribeShareGroupOffsets).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharePartitionOffsets {
    /// The share-partition start offset: every record before it is done (accepted, rejected or
    /// archived). `-1` when the share-partition has not been initialised.
    pub start_offset: i64,
    /// The leader epoch the offsets were read at (`-1`: not known).
    pub leader_epoch: i32,
    /// The share-partition's lag as the broker counts it (records from the start offset to the
    /// end of the log not yet done: v1, Kafka 4.2 and later); `None` from a broker that does not
    /// say (v0, or `-1`).
    pub lag: Option<i64>,
}

fn partitions(assignment: share_group_describe::Assignment) -> Vec<TopicPartition> {
    named_partitions(
        assignment
            .topic_partitions
            .into_iter()
            .map(|t| (t.topic_id, t.topic_name, t.partitions)),
    )
}

fn member(m: share_group_describe::Member) -> ShareMemberDescription {
    ShareMemberDescription {
        member_id: m.member_id,
        rack_id: m.rack_id,
        member_epoch: m.member_epoch,
        client_id: m.client_id,
        client_host: m.client_host,
        subscribed_topic_names: m.subscribed_topic_names,
        assignment: partitions(m.assignment),
    }
}

/// The group's entry of a ShareGroupDescribe answer: `Ok(None)` for GROUP_ID_NOT_FOUND (no such
/// group, or not a share group) and for UNSUPPORTED_VERSION (a broker that offers the API with
/// share groups switched off answers every group so), the group's error code and message
/// otherwise.
fn entry(
    group: &str,
    groups: Vec<share_group_describe::DescribedGroup>,
) -> std::result::Result<Option<ShareGroupDescription>, (ErrorCode, Option<String>)> {
    let Some(described) = groups.into_iter().find(|g| g.group_id == group) else {
        return Err((
            ErrorCode::UnknownServerError,
            Some(format!("no answer for group {group}")),
        ));
    };
    match ErrorCode::from(described.error_code) {
        ErrorCode::None => {}
        ErrorCode::GroupIdNotFound | ErrorCode::UnsupportedVersion => return Ok(None),
        code => return Err((code, described.error_message)),
    }
    Ok(Some(ShareGroupDescription {
        group_id: described.group_id,
        state: described.group_state,
        group_epoch: described.group_epoch,
        assignment_epoch: described.assignment_epoch,
        assignor: described.assignor_name,
        members: described.members.into_iter().map(member).collect(),
    }))
}

/// The group's share-partitions of a DescribeShareGroupOffsets answer. A group the coordinator
/// does not know has none (GROUP_ID_NOT_FOUND); a share-partition answered with an error is left
/// out.
fn offsets(
    group: &str,
    groups: Vec<DescribeShareGroupOffsetsResponseGroup>,
) -> std::result::Result<BTreeMap<TopicPartition, SharePartitionOffsets>, (ErrorCode, Option<String>)>
{
    let Some(answer) = groups.into_iter().find(|g| g.group_id == group) else {
        return Err((
            ErrorCode::UnknownServerError,
            Some(format!("no answer for group {group}")),
        ));
    };
    match ErrorCode::from(answer.error_code) {
        ErrorCode::None => {}
        ErrorCode::GroupIdNotFound => return Ok(BTreeMap::new()),
        code => return Err((code, answer.error_message)),
    }
    let mut out = BTreeMap::new();
    for topic in answer.topics {
        for p in topic.partitions {
            if ErrorCode::from(p.error_code) != ErrorCode::None {
                tracing::debug!(group, topic = %topic.topic_name, partition = p.partition_index, code = p.error_code, "share-partition offsets not read");
                continue;
            }
            out.insert(
                TopicPartition::new(topic.topic_name.clone(), p.partition_index),
                SharePartitionOffsets {
                    start_offset: p.start_offset,
                    leader_epoch: p.leader_epoch,
                    lag: (p.lag >= 0).then_some(p.lag),
                },
            );
        }
    }
    Ok(out)
}

/// ShareGroupDescribe of one group (the same at every version).
fn describe_request(group: &str) -> ShareGroupDescribeRequest {
    ShareGroupDescribeRequest {
        group_ids: vec![group.to_string()],
        ..Default::default()
    }
}

/// DescribeShareGroupOffsets of every topic of one group (the same at every version).
fn offsets_request(group: &str) -> DescribeShareGroupOffsetsRequest {
    DescribeShareGroupOffsetsRequest {
        groups: vec![DescribeShareGroupOffsetsRequestGroup {
            group_id: group.to_string(),
            topics: None,
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// DescribeConfigs of one group's every config, without synonyms or documentation (the same at
/// every version).
fn configs_request(group: &str) -> DescribeConfigsRequest {
    DescribeConfigsRequest {
        resources: vec![DescribeConfigsResource {
            resource_type: CONFIG_RESOURCE_GROUP,
            resource_name: group.to_string(),
            configuration_keys: None,
            ..Default::default()
        }],
        ..Default::default()
    }
}

impl Client {
    /// A coordinator's refusal as the error to return (the coordinator forgotten when it moved).
    fn group_refusal(
        &self,
        api: &'static str,
        group: &str,
        (code, message): (ErrorCode, Option<String>),
    ) -> Error {
        if is_coordinator_move(code) {
            self.forget_coordinator(group);
        }
        match code {
            ErrorCode::UnknownServerError if message.is_some() => broker_error(api, code, message),
            code => Error::from_code(api, code, message, group, Vec::new, || {
                self.config().principal()
            }),
        }
    }

    /// Describes a share group (ShareGroupDescribe to its coordinator). `None` when the group
    /// does not exist, is not a share group, or the broker has share groups switched off. A
    /// broker without the API (before Kafka 4.1) answers [`Error::UnsupportedVersion`].
    pub async fn describe_share_group(&self, group: &str) -> Result<Option<ShareGroupDescription>> {
        const API: &str = "ShareGroupDescribe";
        self.with_retries(API, || async {
            let response = self
                .call_coordinator(group, |_version| describe_request(group))
                .await?;
            entry(group, response.groups).map_err(|refusal| self.group_refusal(API, group, refusal))
        })
        .await
    }

    /// Every share-partition's start offset and lag of a share group (DescribeShareGroupOffsets
    /// to its coordinator, all topics). Empty for a group the coordinator does not know.
    pub async fn share_group_offsets(
        &self,
        group: &str,
    ) -> Result<BTreeMap<TopicPartition, SharePartitionOffsets>> {
        const API: &str = "DescribeShareGroupOffsets";
        self.with_retries(API, || async {
            let response = self
                .call_coordinator(group, |_version| offsets_request(group))
                .await?;
            offsets(group, response.groups)
                .map_err(|refusal| self.group_refusal(API, group, refusal))
        })
        .await
    }

    /// A group's configuration (DescribeConfigs on the `GROUP` resource, to any broker): every
    /// config the broker lists, by name, with its value (`None` for a sensitive or unset one).
    /// The group's own settings where it has them, else the broker's `group.*` defaults.
    pub async fn describe_group_configs(
        &self,
        group: &str,
    ) -> Result<BTreeMap<String, Option<String>>> {
        const API: &str = "DescribeConfigs";
        self.with_retries(API, || async {
            let response = self.send_any(|_version| configs_request(group)).await?;
            let Some(result) = response
                .results
                .into_iter()
                .find(|r| r.resource_type == CONFIG_RESOURCE_GROUP && r.resource_name == group)
            else {
                return Err(broker_error(
                    API,
                    ErrorCode::UnknownServerError,
                    Some(format!("no answer for group {group}")),
                ));
            };
            match ErrorCode::from(result.error_code) {
                ErrorCode::None => Ok(result
                    .configs
                    .into_iter()
                    .map(|c| (c.name, c.value))
                    .collect()),
                code => Err(Error::from_code(
                    API,
                    code,
                    result.error_message,
                    group,
                    Vec::new,
                    || self.config().principal(),
                )),
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use mooring_wire::messages::describe_share_group_offsets::{
        DescribeShareGroupOffsetsResponsePartition, DescribeShareGroupOffsetsResponseTopic,
    };
    use mooring_wire::messages::share_group_describe::{
        Assignment, DescribedGroup, Member, TopicPartitions,
    };
    use mooring_wire::primitives::Uuid;

    use super::*;

    fn described(group: &str, code: ErrorCode) -> DescribedGroup {
        DescribedGroup {
            error_code: i16::from(code),
            error_message: Some(format!("about {group}")),
            group_id: group.to_string(),
            group_state: "Stable".into(),
            group_epoch: 3,
            assignment_epoch: 3,
            assignor_name: "simple".into(),
            members: vec![Member {
                member_id: "m".into(),
                member_epoch: 3,
                assignment: Assignment {
                    topic_partitions: vec![TopicPartitions {
                        topic_id: Uuid([1; 16]),
                        topic_name: "orders".into(),
                        partitions: vec![1, 0],
                        ..Default::default()
                    }],
                    ..Default::default()
                },
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_requests_encode_at_every_version() {
        use mooring_testkit::encode::encode_failures as every_version;
        let mut failed = every_version("describe", |_| describe_request("g"));
        failed.extend(every_version("offsets", |_| offsets_request("g")));
        failed.extend(every_version("configs", |_| configs_request("g")));
        assert!(failed.is_empty(), "{failed:?}");
    }

    #[test]
    fn each_describe_answer_has_its_meaning() {
        let ok = entry("g", vec![described("g", ErrorCode::None)])
            .expect("described")
            .expect("a share group");
        assert_eq!((ok.state.as_str(), ok.group_epoch), ("Stable", 3));
        assert_eq!(
            ok.members[0].assignment,
            vec![
                TopicPartition::new("orders", 0),
                TopicPartition::new("orders", 1)
            ]
        );
        for code in [ErrorCode::GroupIdNotFound, ErrorCode::UnsupportedVersion] {
            assert_eq!(entry("g", vec![described("g", code)]), Ok(None), "{code}");
        }
        assert_eq!(
            entry("g", vec![described("g", ErrorCode::NotCoordinator)]),
            Err((ErrorCode::NotCoordinator, Some("about g".into())))
        );
        assert!(entry("g", vec![described("other", ErrorCode::None)]).is_err());
    }

    fn partition(
        index: i32,
        start: i64,
        lag: i64,
        code: ErrorCode,
    ) -> DescribeShareGroupOffsetsResponsePartition {
        DescribeShareGroupOffsetsResponsePartition {
            partition_index: index,
            start_offset: start,
            leader_epoch: 0,
            lag,
            error_code: i16::from(code),
            ..Default::default()
        }
    }

    #[test]
    fn offsets_keep_what_the_broker_answered_for_each_share_partition() {
        let group = DescribeShareGroupOffsetsResponseGroup {
            group_id: "g".into(),
            topics: vec![DescribeShareGroupOffsetsResponseTopic {
                topic_name: "orders".into(),
                partitions: vec![
                    partition(0, 10, 5, ErrorCode::None),
                    partition(1, 7, -1, ErrorCode::None),
                    partition(2, 0, 0, ErrorCode::UnknownServerError),
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let got = offsets("g", vec![group]).expect("offsets");
        assert_eq!(got.len(), 2);
        assert_eq!(got[&TopicPartition::new("orders", 0)].lag, Some(5));
        assert_eq!(
            got[&TopicPartition::new("orders", 1)].lag,
            None,
            "v0, or not said"
        );
        assert_eq!(got[&TopicPartition::new("orders", 1)].start_offset, 7);
        let unknown = DescribeShareGroupOffsetsResponseGroup {
            group_id: "g".into(),
            error_code: i16::from(ErrorCode::GroupIdNotFound),
            ..Default::default()
        };
        assert!(offsets("g", vec![unknown]).expect("none").is_empty());
    }
}
