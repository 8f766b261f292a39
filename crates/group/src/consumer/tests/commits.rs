//! Commits and offset fetches of a `consumer`-protocol member: the member epoch in both, the
//! rows of the error table for OffsetCommit and OffsetFetch, commits from inside `revoked`.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use mooring_wire::error_code::ErrorCode as E;
use mooring_wire::messages::offset_commit::{
    OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
use mooring_wire::messages::offset_fetch::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartitions, OffsetFetchResponseTopics,
};
use mooring_wire::messages::{
    OffsetCommitRequest, OffsetCommitResponse, OffsetFetchRequest, OffsetFetchResponse,
};

use super::*;
use crate::classic::tests::fake::PRINCIPAL;
use crate::classic::tests::wait_until;
use crate::{MemberState, OffsetAndMetadata};
use mooring_client::error::Error;

/// OffsetFetch's API key.
const OFFSET_FETCH: i16 = 9;

/// An OffsetCommit answer as v10 gives it: topic `t` by id.
fn commit_response(parts: &[(i32, E)]) -> OffsetCommitResponse {
    OffsetCommitResponse {
        topics: vec![OffsetCommitResponseTopic {
            topic_id: topic_id("t"),
            partitions: parts
                .iter()
                .map(|(p, c)| OffsetCommitResponsePartition {
                    partition_index: *p,
                    error_code: c.code(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// An OffsetFetch answer as v10 gives it: `t-0` at `offset`.
fn fetch_response(group_code: E, offset: i64) -> OffsetFetchResponse {
    OffsetFetchResponse {
        groups: vec![OffsetFetchResponseGroup {
            group_id: "g".into(),
            error_code: group_code.code(),
            topics: vec![OffsetFetchResponseTopics {
                topic_id: topic_id("t"),
                partitions: vec![OffsetFetchResponsePartitions {
                    partition_index: 0,
                    committed_offset: offset,
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn offsets(parts: &[i32]) -> BTreeMap<TopicPartition, OffsetAndMetadata> {
    parts
        .iter()
        .map(|p| (tp("t", *p), OffsetAndMetadata::new(10 + i64::from(*p))))
        .collect()
}

fn commits(s: &Setup) -> Vec<OffsetCommitRequest> {
    s.fake.requests::<OffsetCommitRequest>()
}

#[tokio::test(start_paused = true)]
async fn commit_carries_the_member_epoch_and_member_id() {
    let s = start(config(Some("pod-0")));
    stable(&s).await;
    s.fake.push(commit_response(&[(0, E::None)]));
    s.member.commit(offsets(&[0])).await.unwrap();
    let sent = &commits(&s)[0];
    assert_eq!(sent.generation_id_or_member_epoch, 1);
    assert_eq!(sent.member_id, s.member.state().member_id);
    assert_eq!(sent.group_instance_id.as_deref(), Some("pod-0"));
}

#[tokio::test(start_paused = true)]
async fn commit_stale_member_epoch_waits_for_the_next_epoch_and_resends_with_it() {
    let s = start(config(None));
    stable(&s).await;
    s.fake
        .push(commit_response(&[(0, E::StaleMemberEpoch), (1, E::None)]));
    s.fake.push(commit_response(&[(0, E::None)]));
    s.fake.push(ok(2, None));
    s.member.commit(offsets(&[0, 1])).await.unwrap();
    let sent = commits(&s);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].generation_id_or_member_epoch, 1);
    assert_eq!(sent[1].generation_id_or_member_epoch, 2, "the new epoch");
    assert_eq!(sent[1].topics[0].partitions.len(), 1, "only what failed");
}

#[tokio::test(start_paused = true)]
async fn commit_stale_member_epoch_fails_once_the_commit_deadline_passes() {
    let s = start(config(None));
    stable(&s).await;
    s.fake.push(commit_response(&[(0, E::StaleMemberEpoch)]));
    // No newer epoch ever comes (the fake keeps answering epoch 1).
    let err = s
        .member
        .commit_within(offsets(&[0]), std::time::Duration::from_secs(3))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::DeadlineExceeded { .. }), "{err}");
    assert_eq!(commits(&s).len(), 1);
}

#[tokio::test(start_paused = true)]
async fn commit_unknown_member_id_and_fenced_member_epoch_fail_without_telling_the_member() {
    for code in [E::UnknownMemberId, E::FencedMemberEpoch] {
        let s = start(config(None));
        stable(&s).await;
        s.fake.push(commit_response(&[(0, code)]));
        let err = s.member.commit(offsets(&[0])).await.unwrap_err();
        assert!(
            matches!(err, Error::Broker { code: c, .. } if c == code),
            "{err}"
        );
        let before = heartbeats(&s).len();
        wait_until(|| heartbeats(&s).len() > before + 2).await;
        assert_eq!(
            s.member.state().consumer_state,
            Some(ConsumerMemberState::Stable),
            "{code}"
        );
        assert_eq!(s.listener.calls().len(), 1, "{code}: nothing lost");
    }
}

#[tokio::test(start_paused = true)]
async fn commit_below_offset_commit_v9_is_refused_before_sending() {
    let s = start(config(None));
    stable(&s).await;
    s.fake.offsets_version.store(8, Ordering::SeqCst);
    let err = s.member.commit(offsets(&[0])).await.unwrap_err();
    assert!(
        matches!(err, Error::ConsumerProtocolUnsupported { .. }),
        "{err}"
    );
    assert!(err.is_fatal());
    assert!(err.to_string().contains("OffsetCommit v8"), "{err}");
    assert!(commits(&s).is_empty());
}

#[tokio::test(start_paused = true)]
async fn commit_while_joining_fails_at_once_without_being_sent() {
    let s = start(config(None));
    s.fake.push_hang(HEARTBEAT);
    s.member.subscribe(["t"]).await.unwrap();
    wait_state(&s.member, |x| {
        x.consumer_state == Some(ConsumerMemberState::Joining)
    })
    .await;
    let err = s.member.commit(offsets(&[0])).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Broker {
                code: E::UnknownMemberId,
                ..
            }
        ),
        "{err}"
    );
    assert!(commits(&s).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_commit_from_inside_revoked_goes_at_once_with_the_current_epoch() {
    let fake = Fake::new();
    fake.set_partitions("t", 4);
    let listener = Arc::new(Committer::default());
    let member = GroupMember::spawn(fake.clone(), config(None), listener.clone()).unwrap();
    let _ = listener.member.set(member.downgrade());
    fake.push(ok(3, Some(&[("t", &[0, 1])])));
    member.subscribe(["t"]).await.unwrap();
    wait_state(&member, |x| {
        x.consumer_state == Some(ConsumerMemberState::Stable)
    })
    .await;
    fake.push(commit_response(&[(1, E::None)]));
    fake.push(ok(3, Some(&[("t", &[0])])));
    wait_state(&member, |x| {
        x.assignment.len() == 1 && x.consumer_state == Some(ConsumerMemberState::Stable)
    })
    .await;
    let results = listener.results.lock().unwrap().len();
    assert_eq!(results, 1);
    assert!(listener.results.lock().unwrap()[0].is_ok());
    let sent = fake.requests::<OffsetCommitRequest>();
    assert_eq!(
        sent[0].generation_id_or_member_epoch, 3,
        "the epoch held during the revoke"
    );
    assert_eq!(member.state().state, MemberState::Stable);
}

#[tokio::test(start_paused = true)]
async fn fetch_says_the_member_and_its_epoch_and_stale_member_epoch_retries_with_the_new_one() {
    let s = start(config(None));
    stable(&s).await;
    s.fake.push(fetch_response(E::StaleMemberEpoch, -1));
    s.fake.push(fetch_response(E::None, 42));
    s.fake.push(ok(2, None));
    let got = s.member.committed([tp("t", 0)]).await.unwrap();
    assert_eq!(got[&tp("t", 0)], Some(OffsetAndMetadata::new(42)));
    let sent = s.fake.requests::<OffsetFetchRequest>();
    let member_id = s.member.state().member_id;
    assert_eq!(
        sent[0].groups[0].member_id.as_deref(),
        Some(member_id.as_str())
    );
    assert_eq!(sent[0].groups[0].member_epoch, 1);
    assert_eq!(
        sent[1].groups[0].member_epoch, 2,
        "asked again with the new epoch"
    );
}

#[tokio::test(start_paused = true)]
async fn fetch_unknown_member_id_and_fenced_member_epoch_fail_at_once() {
    for code in [E::UnknownMemberId, E::FencedMemberEpoch] {
        let s = start(config(None));
        stable(&s).await;
        s.fake.push(fetch_response(code, -1));
        // The answer a resend would get.
        s.fake.push(fetch_response(E::None, 42));
        let err = s.member.committed([tp("t", 0)]).await.unwrap_err();
        assert!(
            matches!(err, Error::Broker { api: "OffsetFetch", code: c, .. } if c == code),
            "{err}"
        );
        assert_eq!(s.fake.requests::<OffsetFetchRequest>().len(), 1, "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn fetch_retriable_codes_follow_the_classic_table_and_retry_after_the_backoff() {
    for (code, forgets) in [(E::CoordinatorLoadInProgress, 0), (E::NotCoordinator, 1)] {
        let s = start(config(None));
        stable(&s).await;
        s.fake.push(fetch_response(code, -1));
        s.fake.push(fetch_response(E::None, 42));
        let got = s.member.committed([tp("t", 0)]).await.unwrap();
        assert_eq!(got[&tp("t", 0)], Some(OffsetAndMetadata::new(42)), "{code}");
        let t = s.fake.times(OFFSET_FETCH);
        assert_eq!(t.len(), 2, "{code}");
        assert!(t[1] - t[0] >= config(None).retry_backoff, "{code}: backoff");
        assert_eq!(s.fake.forgets.load(Ordering::SeqCst), forgets, "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn fetch_authorization_and_other_codes_follow_the_classic_table_and_fail_at_once() {
    for code in [
        E::GroupAuthorizationFailed,
        E::InvalidGroupId,
        E::UnknownServerError,
    ] {
        let s = start(config(None));
        stable(&s).await;
        s.fake.push(fetch_response(code, -1));
        // The answer a resend would get.
        s.fake.push(fetch_response(E::None, 42));
        let err = s.member.committed([tp("t", 0)]).await.unwrap_err();
        assert_eq!(err.code(), Some(code), "{err:?}");
        // An authorization refused is typed, naming the group and who.
        let typed = matches!(
            &err,
            Error::Authorization { resource, principal, .. }
                if principal == PRINCIPAL && resource.to_string() == "group g"
        );
        assert_eq!(typed, code == E::GroupAuthorizationFailed, "{err:?}");
        assert_eq!(s.fake.requests::<OffsetFetchRequest>().len(), 1, "{code}");
    }
}

#[tokio::test(start_paused = true)]
async fn fetch_before_joining_is_anonymous() {
    let s = start(config(None));
    s.fake.push(fetch_response(E::None, 5));
    s.member.committed([tp("t", 0)]).await.unwrap();
    let sent = s.fake.requests::<OffsetFetchRequest>();
    assert_eq!(sent[0].groups[0].member_id, None);
    assert_eq!(sent[0].groups[0].member_epoch, -1);
}

#[tokio::test(start_paused = true)]
async fn commit_other_codes_follow_the_classic_table() {
    let s = start(config(None));
    stable(&s).await;
    s.fake.push(commit_response(&[(0, E::NotCoordinator)]));
    s.fake.push(commit_response(&[(0, E::None)]));
    s.member.commit(offsets(&[0])).await.unwrap();
    assert_eq!(commits(&s).len(), 2, "resent after rediscovery");
    assert_eq!(s.fake.forgets.load(Ordering::SeqCst), 1);
    s.fake
        .push(commit_response(&[(0, E::OffsetMetadataTooLarge)]));
    let err = s.member.commit(offsets(&[0])).await.unwrap_err();
    assert!(
        matches!(
            err,
            Error::Broker {
                code: E::OffsetMetadataTooLarge,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        s.member.state().consumer_state,
        Some(ConsumerMemberState::Stable)
    );
}
