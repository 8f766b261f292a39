//! The `group-listing` scenario: while the Java client's VerifiableConsumer was the one live member
//! of a classic group (range assignor, all of the topic read), Kafka's ConsumerGroupCommand ran
//! `--list`, `--describe --members` and `--describe --state`. Per file: the ListGroups asking for
//! consumer groups and the broker listing ours as a Stable classic group of protocol type
//! `consumer`; the ConsumerGroupDescribe the admin client tries first and the broker's refusal (a
//! classic group is no consumer-protocol group: GROUP_ID_NOT_FOUND); the DescribeGroups it falls
//! back to and the group as the broker describes it: Stable, protocol `range`, the member with its
//! client id, host, Subscription and Assignment. Across the files: the member DescribeGroups names
//! holds the partitions its Subscription asked for.

use mooring_wire::consumer_protocol::{Assignment, Subscription, PROTOCOL_TYPE};
use mooring_wire::messages::*;

use super::{captured, expected_error, round_trip, Captured, GROUP_ID_NOT_FOUND, PARTITIONS};

/// The classic group's state while its member heartbeats with an assignment.
const STABLE: &str = "Stable";

pub(super) fn list_request(c: &Captured) {
    let m: ListGroupsRequest = round_trip(c);
    // `--list` asks for every state; from v5 (KIP-1043) it asks for the group types whose
    // groups are consumer groups, classic and consumer-protocol ones, spelled as Java's
    // GroupType prints them (the broker compares them case-insensitively).
    assert_eq!(m.states_filter, Vec::<String>::new(), "{}: states", c.name);
    let mut types = m.types_filter.clone();
    types.sort();
    assert_eq!(types, ["Classic", "Consumer"], "{}: types", c.name);
}

pub(super) fn list_response(c: &Captured) {
    let name = &c.name;
    let m: ListGroupsResponse = round_trip(c);
    assert_eq!(m.error_code, 0, "{name}");
    let group = m
        .groups
        .iter()
        .find(|g| g.group_id == c.group())
        .unwrap_or_else(|| panic!("{name}: {} not listed in {:?}", c.group(), m.groups));
    assert_eq!(
        (
            group.protocol_type.as_str(),
            group.group_state.as_str(),
            group.group_type.as_str()
        ),
        (PROTOCOL_TYPE, STABLE, "classic"),
        "{name}: the listed group"
    );
    // The capture cluster's other groups are the consumers of the scenarios run before: consumer
    // groups of the types asked for.
    for g in m.groups.iter().filter(|g| g.group_id != c.group()) {
        assert_eq!(g.protocol_type, PROTOCOL_TYPE, "{name}: {g:?}");
        assert!(
            ["classic", "consumer"].contains(&g.group_type.as_str()),
            "{name}: {g:?}"
        );
    }
}

pub(super) fn consumer_group_describe_request(c: &Captured) {
    let m: ConsumerGroupDescribeRequest = round_trip(c);
    assert_eq!(m.group_ids, [c.group()], "{}", c.name);
    assert!(!m.include_authorized_operations, "{}", c.name);
}

pub(super) fn consumer_group_describe_response(c: &Captured) {
    let name = &c.name;
    let m: ConsumerGroupDescribeResponse = round_trip(c);
    assert_eq!(expected_error(c), GROUP_ID_NOT_FOUND, "{name}: file name");
    assert_eq!(m.groups.len(), 1, "{name}");
    let g = &m.groups[0];
    assert_eq!(
        (g.error_code, g.group_id.as_str()),
        (GROUP_ID_NOT_FOUND, c.group()),
        "{name}"
    );
    let message = g.error_message.as_deref().unwrap_or_default();
    assert!(
        message.contains(c.group()) && message.contains("not a consumer group"),
        "{name}: {message:?}"
    );
    assert!(g.members.is_empty(), "{name}");
}

pub(super) fn describe_request(c: &Captured) {
    let m: DescribeGroupsRequest = round_trip(c);
    assert_eq!(m.groups, [c.group()], "{}", c.name);
    assert!(!m.include_authorized_operations, "{}", c.name);
}

pub(super) fn describe_response(c: &Captured) {
    let name = &c.name;
    let m: DescribeGroupsResponse = round_trip(c);
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
    assert_eq!(
        (
            g.group_state.as_str(),
            g.protocol_type.as_str(),
            g.protocol_data.as_str()
        ),
        (STABLE, PROTOCOL_TYPE, "range"),
        "{name}: state, protocol type, protocol"
    );
    // Not asked for: the broker says so with i32::MIN.
    assert_eq!(g.authorized_operations, i32::MIN, "{name}");
    assert_eq!(g.members.len(), 1, "{name}: the live member");
    let member = &g.members[0];
    assert_eq!(member.client_id, "mooring-golden-java", "{name}");
    assert!(
        member.member_id.starts_with("mooring-golden-java-"),
        "{name}: a broker-made id starts with the client id: {}",
        member.member_id
    );
    assert_eq!(member.group_instance_id, None, "{name}: dynamic");
    assert_eq!(member.client_host, "/127.0.0.1", "{name}");
    let (_, sub) = Subscription::decode(&member.member_metadata)
        .unwrap_or_else(|e| panic!("{name}: member metadata: {e}"));
    assert_eq!(sub.topics, [c.topic()], "{name}: subscription");
    let (_, assignment): (i16, Assignment) = Assignment::decode(&member.member_assignment)
        .unwrap_or_else(|e| panic!("{name}: member assignment: {e}"));
    assert_eq!(assignment.partitions.len(), 1, "{name}: {assignment:?}");
    assert_eq!(assignment.partitions[0].topic, c.topic(), "{name}");
    let mut partitions = assignment.partitions[0].partitions.clone();
    partitions.sort_unstable();
    assert_eq!(
        partitions,
        (0..PARTITIONS).collect::<Vec<_>>(),
        "{name}: the whole topic"
    );
}

/// ListGroups, the refused ConsumerGroupDescribe and DescribeGroups are all there, and the group
/// ListGroups lists is the one DescribeGroups describes.
#[test]
fn the_listing_and_the_description_agree() {
    let files: Vec<Captured> = captured("java-")
        .into_iter()
        .filter(|c| c.scenario == "group-listing")
        .collect();
    let response = |key: ApiKey| -> &Captured {
        files
            .iter()
            .find(|c| c.api_key() == key && !c.is_request())
            .unwrap_or_else(|| panic!("no {} response", key.name()))
    };
    let _: ConsumerGroupDescribeResponse = round_trip(response(ApiKey::ConsumerGroupDescribe));
    let listed: ListGroupsResponse = round_trip(response(ApiKey::ListGroups));
    let described: DescribeGroupsResponse = round_trip(response(ApiKey::DescribeGroups));
    let g = &described.groups[0];
    let l = listed
        .groups
        .iter()
        .find(|l| l.group_id == g.group_id)
        .expect("the described group listed");
    assert_eq!(
        (&l.group_state, &l.protocol_type),
        (&g.group_state, &g.protocol_type)
    );
}
