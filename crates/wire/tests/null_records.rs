//! A records field the schema says cannot be null at a version (ShareFetch's, past v0), written
//! null all the same (franz-go's kfake writes a share-partition with no records so): it reads as
//! no records. Null and empty mean the same there, and refusing the answer would lose the
//! acknowledgements its request carried. Where the schema allows null (Fetch), null stays null.

use bytes::{Bytes, BytesMut};
use mooring_wire::messages::fetch::{
    FetchResponse, FetchableTopicResponse, PartitionData as FetchPartition,
};
use mooring_wire::messages::share_fetch::{
    PartitionData, ShareFetchResponse, ShareFetchableTopicResponse,
};
use mooring_wire::messages::Message;

/// `response` encoded at `version` with its one partition's records written as a null
/// (`marker` replaced: an empty compact records field is the length byte 1, a null one 0).
fn with_null_records<M: Message>(response: &M, version: i16, marker: &[u8]) -> Bytes {
    let mut buf = BytesMut::new();
    response.encode(&mut buf, version).expect("encode");
    let at = buf
        .windows(marker.len())
        .position(|w| w == marker)
        .expect("the marker");
    buf[at + marker.len() - 1] = 0; // compact length 0: null
    buf.freeze()
}

#[test]
fn a_share_fetch_partition_with_null_records_reads_as_no_records() {
    let response = ShareFetchResponse {
        responses: vec![ShareFetchableTopicResponse {
            partitions: vec![PartitionData {
                partition_index: 7,
                // A sentinel just before the records field, to find it by.
                acknowledge_error_message: Some("mark".into()),
                records: Some(Bytes::new()),
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    for version in [1, 2] {
        // "mark", then the current leader (two int32 and its tag section), then the records.
        let mut marker = b"mark".to_vec();
        marker.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 1]);
        let mut changed = response.clone();
        changed.responses[0].partitions[0].current_leader.leader_id = -1;
        changed.responses[0].partitions[0]
            .current_leader
            .leader_epoch = -1;
        let bytes = with_null_records(&changed, version, &marker);
        let decoded = ShareFetchResponse::decode(&bytes, version).expect("decodes");
        let p = &decoded.responses[0].partitions[0];
        assert_eq!(p.partition_index, 7);
        assert_eq!(p.records, Some(Bytes::new()), "v{version}: no records");
    }
}

#[test]
fn a_fetch_partition_with_null_records_stays_null() {
    let response = FetchResponse {
        responses: vec![FetchableTopicResponse {
            partitions: vec![FetchPartition {
                partition_index: 3,
                records: None,
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut buf = BytesMut::new();
    response.encode(&mut buf, 16).expect("encode");
    let decoded = FetchResponse::decode(&buf.freeze(), 16).expect("decodes");
    assert_eq!(decoded.responses[0].partitions[0].records, None);
}
