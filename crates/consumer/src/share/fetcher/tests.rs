//! Unit tests of the share fetcher's bookkeeping, without a broker.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use bytes::BytesMut;
use mooring_group::{GroupProtocol, MemberState};
use mooring_wire::error_code::ErrorCode;
use mooring_wire::messages::share_fetch::AcquiredRecords;
use mooring_wire::primitives::Uuid;
use mooring_wire::records::RecordBatch;

use super::*;
use crate::share::ack::Acknowledge;
use crate::share::config::ShareConsumerConfig;

fn fetcher() -> ShareFetcher {
    let config = ShareConsumerConfig::from_properties([
        ("bootstrap.servers", "127.0.0.1:9"),
        ("group.id", "g"),
    ])
    .unwrap();
    let (shared, _events) = ShareShared::new(config).unwrap();
    let (_inbox, inbox_rx) = mpsc::unbounded_channel();
    let (_member, member_rx) = watch::channel(MemberSnapshot {
        state: MemberState::Stable,
        member_id: "m".into(),
        group_instance_id: None,
        generation: 1,
        group_protocol: GroupProtocol::Share,
        consumer_state: None,
        share_state: Some(ShareMemberState::Stable),
        protocol_name: None,
        rebalance_protocol: mooring_group::assignor::RebalanceProtocol::Cooperative,
        leader_id: None,
        assignment: BTreeSet::new(),
        subscription: BTreeSet::new(),
        failure: None,
    });
    ShareFetcher::new(Arc::new(shared), member_rx, inbox_rx, Arc::default())
}

fn one_record(offset: i64) -> bytes::Bytes {
    let mut buf = BytesMut::new();
    RecordBatch::builder(offset)
        .record(0, None, Some(bytes::Bytes::from_static(b"v")), vec![])
        .build()
        .encode(&mut buf)
        .unwrap();
    buf.freeze()
}

/// A share-partition revoked while a ShareFetch for it was in flight: the answer's records
/// were acquired for this member all the same, and their verdicts go to the broker that
/// answered, not nowhere.
#[tokio::test]
async fn records_of_a_share_partition_revoked_while_fetching_are_acknowledged_to_their_broker() {
    let mut f = fetcher();
    let tp = TopicPartition::new("t", 0);
    f.ids.insert("t".into(), Uuid([1; 16]));
    f.take(Input::Assigned(vec![tp.clone()]));
    f.leaders.insert(tp.clone(), 1);
    // Revoked, and the loop turns (forgetting where nothing held is fetched from)...
    f.take(Input::Revoked(vec![tp.clone()]));
    f.route();
    // ...before the answer of the fetch in flight, from node 1, brings a record of it.
    let acquired = [AcquiredRecords {
        first_offset: 5,
        last_offset: 5,
        delivery_count: 1,
        ..Default::default()
    }];
    f.take_records(
        1,
        &tp,
        &Arc::from("t"),
        Some(one_record(5)),
        &acquired,
        Instant::now(),
    );
    f.take(Input::Verdict(Verdict {
        topic: Arc::from("t"),
        partition: 0,
        offset: 5,
        delivery_count: 1,
        ack: Acknowledge::Accept,
    }));
    assert_eq!(f.shared.counters.snapshot().acknowledgements_failed, 0);
    assert!(
        f.sessions.get(&1).is_some_and(Session::has_acks),
        "the verdict waits for node 1"
    );
}

/// A fetcher with `buffer` as `mooring.buffer.max.records`, share-partition t-0 assigned and led
/// by node 1 with its session open, holding `held` records of it (offsets 0..held).
fn fetcher_holding(buffer: &str, held: i64) -> (ShareFetcher, TopicPartition) {
    let config = ShareConsumerConfig::from_properties([
        ("bootstrap.servers", "127.0.0.1:9"),
        ("group.id", "g"),
        ("mooring.buffer.max.records", buffer),
        ("max.poll.records", "4"),
        ("fetch.max.wait.ms", "500"),
    ])
    .unwrap();
    let mut f = fetcher();
    f.shared = Arc::new(ShareShared::new(config).unwrap().0);
    let tp = TopicPartition::new("t", 0);
    f.ids.insert("t".into(), Uuid([1; 16]));
    f.take(Input::Assigned(vec![tp.clone()]));
    f.leaders.insert(tp.clone(), 1);
    let session = f.sessions.entry(1).or_default();
    let limits = crate::share::session::FetchLimits {
        max_wait_ms: 0,
        min_bytes: 0,
        max_bytes: 0,
        max_records: 0,
        acquire_mode: 0,
    };
    let wanted = BTreeSet::from([tp.clone()]);
    let (_, sent) = session.fetch("g", "m", &wanted, &f.ids, limits).unwrap();
    session.answered(
        &sent,
        crate::share::session::Answered::Code(ErrorCode::None),
    );
    for offset in 0..held {
        let acquired = [AcquiredRecords {
            first_offset: offset,
            last_offset: offset,
            delivery_count: 1,
            ..Default::default()
        }];
        f.take_records(
            1,
            &tp,
            &Arc::from("t"),
            Some(one_record(offset)),
            &acquired,
            Instant::now(),
        );
    }
    (f, tp)
}

fn accept(tp: &TopicPartition, offset: i64) -> Input {
    Input::Verdict(Verdict {
        topic: Arc::from(tp.topic.as_str()),
        partition: tp.partition,
        offset,
        delivery_count: 1,
        ack: Acknowledge::Accept,
    })
}

/// While no fetch is due (the member holds as many records as it may), verdicts wait for one:
/// they go in a ShareAcknowledge of their own only once the oldest has waited
/// `fetch.max.wait.ms`, or once `max.poll.records` of them wait, not one request per verdict.
#[tokio::test(start_paused = true)]
async fn verdicts_wait_for_a_fetch_up_to_the_fetch_wait_or_a_poll_of_them() {
    let (mut f, tp) = fetcher_holding("10", 10);
    f.take(accept(&tp, 0));
    f.send_requests();
    assert!(!f.may_fetch(), "9 held of 10, fewer than a poll's room");
    let session = &f.sessions[&1];
    assert!(
        !session.in_flight && session.has_acks(),
        "one verdict waits"
    );
    tokio::time::advance(Duration::from_millis(499)).await;
    f.take(accept(&tp, 1));
    f.send_requests();
    assert!(!f.sessions[&1].in_flight, "the oldest waited 499 ms");
    tokio::time::advance(Duration::from_millis(1)).await;
    f.send_requests();
    assert!(
        f.sessions[&1].in_flight && !f.sessions[&1].has_acks(),
        "after fetch.max.wait.ms both go in one request"
    );

    // A poll's worth of verdicts goes at once.
    let (mut f, tp) = fetcher_holding("100", 100);
    for offset in 0..3 {
        f.take(accept(&tp, offset));
    }
    f.send_requests();
    assert!(!f.sessions[&1].in_flight, "3 verdicts wait");
    f.take(accept(&tp, 3));
    f.send_requests();
    assert!(f.sessions[&1].in_flight, "max.poll.records (4) of them go");
}

/// Fetching resumes once a whole poll fits under the held bound, so each ShareFetch carries the
/// verdicts of many records and may acquire a poll's worth.
#[tokio::test(start_paused = true)]
async fn fetching_resumes_when_a_poll_fits_under_the_held_bound() {
    let (mut f, tp) = fetcher_holding("10", 10);
    for offset in 0..3 {
        f.take(accept(&tp, offset));
        assert!(!f.may_fetch(), "{} held", 9 - offset);
    }
    f.take(accept(&tp, 3));
    assert!(f.may_fetch(), "6 held: a poll of 4 fits under 10");
}
