//! The consumer protocol as the member speaks it: the ordered protocol list of JoinGroup (one
//! Subscription per configured assignor), and the leader's side of SyncGroup (decode every
//! member's Subscription, run the assignor the coordinator picked, encode the Assignments).
//!
//! The rebalance protocol is cooperative only if every configured assignor supports it (KIP-429,
//! as Java decides it), so a group can upgrade from `range` to `cooperative-sticky` in two
//! rolling bounces.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use mooring_wire::consumer_protocol::{self, Assignment, Subscription};
use mooring_wire::messages::join_group::{JoinGroupRequestProtocol, JoinGroupResponseMember};
use mooring_wire::messages::sync_group::SyncGroupRequestAssignment;

use crate::assignor::{self, Assignor, MemberSubscription, PartitionsPerTopic, RebalanceProtocol};
use crate::state::group_by_topic;
use mooring_client::error::{Error, Result};
use mooring_client::TopicPartition;

/// The configured assignors, in preference order.
#[derive(Debug, Clone)]
pub(crate) struct Strategies {
    list: Vec<Arc<dyn Assignor>>,
    protocol: RebalanceProtocol,
}

impl Strategies {
    /// Looks the names up with [`assignor::by_name`].
    pub(crate) fn by_names(names: &[String]) -> Result<Strategies> {
        let list = names
            .iter()
            .map(|name| {
                assignor::by_name(name)
                    .map(Arc::from)
                    .ok_or_else(|| Error::Config {
                        key: "partition.assignment.strategy".into(),
                        message: format!("unknown assignor {name:?}"),
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Strategies::new(list)
    }

    pub(crate) fn new(list: Vec<Arc<dyn Assignor>>) -> Result<Strategies> {
        if list.is_empty() {
            return Err(Error::Config {
                key: "partition.assignment.strategy".into(),
                message: "at least one strategy is required".into(),
            });
        }
        let protocol = if list
            .iter()
            .all(|a| a.protocol() == RebalanceProtocol::Cooperative)
        {
            RebalanceProtocol::Cooperative
        } else {
            RebalanceProtocol::Eager
        };
        Ok(Strategies { list, protocol })
    }

    pub(crate) fn rebalance_protocol(&self) -> RebalanceProtocol {
        self.protocol
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Arc<dyn Assignor>> {
        self.list.iter().find(|a| a.name() == name)
    }

    /// JoinGroup's protocol list: every assignor with its Subscription (v3).
    pub(crate) fn join_protocols(
        &self,
        topics: &BTreeSet<String>,
        owned: &BTreeSet<TopicPartition>,
        generation: i32,
        rack: Option<&str>,
    ) -> Result<Vec<JoinGroupRequestProtocol>> {
        let owned_grouped = group_by_topic(owned);
        self.list
            .iter()
            .map(|a| {
                let subscription = Subscription {
                    topics: topics.iter().cloned().collect(),
                    user_data: a.subscription_user_data(&owned_grouped, generation),
                    owned_partitions: owned_grouped.clone(),
                    generation_id: generation,
                    rack_id: rack.map(str::to_owned),
                };
                let mut buf = BytesMut::new();
                subscription
                    .encode(consumer_protocol::HIGHEST_VERSION, &mut buf)
                    .map_err(|source| Error::Encode {
                        api: "ConsumerProtocolSubscription",
                        source,
                    })?;
                Ok(JoinGroupRequestProtocol {
                    name: a.name().to_owned(),
                    metadata: buf.freeze(),
                    ..Default::default()
                })
            })
            .collect()
    }
}

/// The members as the leader reads them from JoinGroup.
#[derive(Debug, Clone, Default)]
pub(crate) struct GroupSubscriptions {
    pub(crate) members: Vec<MemberSubscription>,
    /// Every topic some member subscribes to.
    pub(crate) topics: BTreeSet<String>,
    /// The lowest Subscription version seen (the Assignment is written at it).
    pub(crate) min_version: i16,
}

/// Decodes the members' Subscriptions. A member whose bytes cannot be read is kept with an empty
/// subscription (it gets nothing) and reported, rather than failing the whole group.
pub(crate) fn decode_members(members: &[JoinGroupResponseMember]) -> GroupSubscriptions {
    let mut out = GroupSubscriptions {
        min_version: consumer_protocol::HIGHEST_VERSION,
        ..Default::default()
    };
    for m in members {
        let subscription = match Subscription::decode(&m.metadata) {
            Ok((version, s)) => {
                out.min_version = out.min_version.min(version.max(0));
                s
            }
            Err(e) => {
                tracing::warn!(member = %m.member_id, error = %e, "undecodable subscription; assigning nothing to it");
                Subscription::default()
            }
        };
        out.topics.extend(subscription.topics.iter().cloned());
        out.members.push(MemberSubscription {
            member_id: m.member_id.clone(),
            group_instance_id: m.group_instance_id.clone(),
            subscription,
        });
    }
    out
}

/// Runs `assignor` and encodes one Assignment per member (members the assignor left out get an
/// empty one, so every member of the generation gets an answer).
pub(crate) fn assign(
    assignor: &dyn Assignor,
    group: &GroupSubscriptions,
    partitions_per_topic: &PartitionsPerTopic,
) -> Result<Vec<SyncGroupRequestAssignment>> {
    let mut result = assignor.assign(partitions_per_topic, &group.members);
    group
        .members
        .iter()
        .map(|m| {
            let assignment = result.remove(&m.member_id).unwrap_or_default();
            Ok(SyncGroupRequestAssignment {
                member_id: m.member_id.clone(),
                assignment: encode_assignment(&assignment, group.min_version)?,
                ..Default::default()
            })
        })
        .collect()
}

pub(crate) fn encode_assignment(assignment: &Assignment, version: i16) -> Result<Bytes> {
    let mut buf = BytesMut::new();
    assignment
        .encode(version, &mut buf)
        .map_err(|source| Error::Encode {
            api: "ConsumerProtocolAssignment",
            source,
        })?;
    Ok(buf.freeze())
}
