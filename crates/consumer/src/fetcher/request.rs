//! Building a Fetch request from a session plan: topics by name up to v12, by topic id from v13
//! (KIP-516), the session fields (KIP-227), `fetch.*` limits and the isolation level.

use std::collections::BTreeMap;

use mooring_wire::messages::fetch::{FetchPartition, FetchRequest, FetchTopic, ForgottenTopic};
use mooring_wire::primitives::Uuid;

use super::session::SessionRequest;
use crate::config::FetchConfig;

/// The first Fetch version that names topics by id only.
pub(crate) const TOPIC_IDS_VERSION: i16 = 13;

/// The first Fetch version with fetch sessions (KIP-227).
pub(crate) const SESSIONS_VERSION: i16 = 7;

/// Why a request cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingTopicId(pub String);

/// Builds the request for `version`. `ids` maps topic names to ids (needed from v13).
pub(crate) fn build(
    version: i16,
    config: &FetchConfig,
    plan: &SessionRequest,
    ids: &BTreeMap<String, Uuid>,
    rack: &str,
) -> Result<FetchRequest, MissingTopicId> {
    let by_id = version >= TOPIC_IDS_VERSION;
    let name_or_id = |topic: &str| -> Result<(String, Uuid), MissingTopicId> {
        if by_id {
            match ids.get(topic) {
                Some(id) if !id.is_nil() => Ok((String::new(), *id)),
                _ => Err(MissingTopicId(topic.to_owned())),
            }
        } else {
            Ok((topic.to_owned(), Uuid::NIL))
        }
    };
    // Before v7 there are no sessions: every request is full, listing every partition of the
    // plan and forgetting none (an incremental plan cannot be said there).
    let sessions = version >= SESSIONS_VERSION;
    let (to_send, to_forget) = if sessions {
        (&plan.to_send, plan.to_forget.as_slice())
    } else {
        (&plan.session, &[][..])
    };
    let mut topics: Vec<FetchTopic> = Vec::new();
    for (tp, req) in to_send {
        let partition = FetchPartition {
            partition: tp.partition,
            // KIP-320's field exists from v9.
            current_leader_epoch: if version >= 9 {
                req.current_leader_epoch
            } else {
                -1
            },
            fetch_offset: req.fetch_offset,
            partition_max_bytes: req.max_bytes,
            ..Default::default()
        };
        match topics.last_mut() {
            Some(last) if same_topic((&last.topic, &last.topic_id), &tp.topic, by_id, ids) => {
                last.partitions.push(partition)
            }
            _ => {
                let (topic, topic_id) = name_or_id(&tp.topic)?;
                topics.push(FetchTopic {
                    topic,
                    topic_id,
                    partitions: vec![partition],
                    ..Default::default()
                });
            }
        }
    }
    let mut forgotten: Vec<ForgottenTopic> = Vec::new();
    for tp in to_forget {
        match forgotten.last_mut() {
            Some(last) if same_topic((&last.topic, &last.topic_id), &tp.topic, by_id, ids) => {
                last.partitions.push(tp.partition)
            }
            _ => {
                let (topic, topic_id) = name_or_id(&tp.topic)?;
                forgotten.push(ForgottenTopic {
                    topic,
                    topic_id,
                    partitions: vec![tp.partition],
                    ..Default::default()
                });
            }
        }
    }
    let max_wait_ms = i32::try_from(config.max_wait.as_millis()).unwrap_or(i32::MAX);
    Ok(FetchRequest {
        max_wait_ms,
        min_bytes: config.min_bytes,
        max_bytes: config.max_bytes,
        isolation_level: config.isolation_level.wire(),
        // Without sessions the answer's id is 0, so the next plan is full again.
        session_id: if sessions { plan.session_id } else { 0 },
        session_epoch: if sessions { plan.session_epoch } else { -1 },
        topics,
        forgotten_topics_data: forgotten,
        rack_id: if version >= 11 {
            rack.to_owned()
        } else {
            String::new()
        },
        ..Default::default()
    })
}

/// Whether the request's last topic entry (`name`, `id`) is `topic`: by id from Fetch v13.
fn same_topic(
    (name, id): (&str, &Uuid),
    topic: &str,
    by_id: bool,
    ids: &BTreeMap<String, Uuid>,
) -> bool {
    if by_id {
        ids.get(topic) == Some(id)
    } else {
        name == topic
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use bytes::BytesMut;
    use mooring_wire::messages::Message;

    use super::super::session::{FetchSession, PartitionRequest};
    use super::*;
    use crate::TopicPartition;

    fn plan() -> Arc<SessionRequest> {
        let mut s = FetchSession::default();
        let req = PartitionRequest {
            fetch_offset: 10,
            current_leader_epoch: 2,
            max_bytes: 1 << 20,
        };
        s.build(BTreeMap::from([
            (TopicPartition::new("a", 0), req),
            (TopicPartition::new("a", 1), req),
            (TopicPartition::new("b", 0), req),
        ]))
    }

    #[test]
    fn names_up_to_v12_ids_from_v13_and_every_version_encodes() {
        let ids = BTreeMap::from([
            ("a".to_string(), Uuid([1; 16])),
            ("b".to_string(), Uuid([2; 16])),
        ]);
        let config = FetchConfig::default();
        let plan = plan();
        let old = build(12, &config, &plan, &ids, "").expect("v12");
        assert_eq!(old.topics.len(), 2);
        assert_eq!(old.topics[0].topic, "a");
        assert_eq!(old.topics[0].partitions.len(), 2);
        let new = build(13, &config, &plan, &ids, "").expect("v13");
        assert_eq!(new.topics[0].topic, "");
        assert_eq!(new.topics[1].topic_id, Uuid([2; 16]));
        assert_eq!(new.max_wait_ms, 500);
        for v in FetchRequest::MIN_VERSION..=FetchRequest::MAX_VERSION {
            let req = build(v, &config, &plan, &ids, "rack-1").expect("build");
            let mut buf = BytesMut::new();
            req.encode(&mut buf, v)
                .unwrap_or_else(|e| panic!("v{v}: {e}"));
        }
        assert_eq!(
            build(13, &config, &plan, &BTreeMap::new(), ""),
            Err(MissingTopicId("a".into()))
        );
    }

    /// What the fetcher really sends, at every version a broker (3.x or 4.x) may negotiate: a
    /// full request, then an incremental one of an established session that forgets a partition,
    /// read committed, with a rack (`client.rack`), leader epochs and the configured limits.
    #[test]
    fn session_requests_encode_at_every_version() {
        let ids = BTreeMap::from([
            ("a".to_string(), Uuid([1; 16])),
            ("b".to_string(), Uuid([2; 16])),
        ]);
        let config = FetchConfig {
            isolation_level: crate::config::IsolationLevel::ReadCommitted,
            ..FetchConfig::default()
        };
        let req = PartitionRequest {
            fetch_offset: 10,
            current_leader_epoch: 4,
            max_bytes: 1 << 20,
        };
        let mut session = FetchSession::default();
        let full = session.build(BTreeMap::from([
            (TopicPartition::new("a", 0), req),
            (TopicPartition::new("b", 0), req),
        ]));
        session.handle_response(77);
        let incremental = session.build(BTreeMap::from([(
            TopicPartition::new("a", 0),
            PartitionRequest {
                fetch_offset: 20,
                ..req
            },
        )]));
        assert_eq!(incremental.to_forget, vec![TopicPartition::new("b", 0)]);
        let sessionless = build(6, &config, &incremental, &ids, "").expect("v6");
        assert_eq!(
            sessionless.topics.len(),
            1,
            "v6 lists every wanted partition"
        );
        assert_eq!(sessionless.topics[0].partitions[0].fetch_offset, 20);
        assert!(sessionless.forgotten_topics_data.is_empty());
        let mut failed = Vec::new();
        for plan in [&full, &incremental] {
            for v in FetchRequest::MIN_VERSION..=FetchRequest::MAX_VERSION {
                let req = build(v, &config, plan, &ids, "eu-west-1a").expect("build");
                let mut buf = BytesMut::new();
                if let Err(e) = mooring_wire::frame::encode_request(&mut buf, &req, v, 1, None) {
                    failed.push(format!("v{v} (session epoch {}): {e}", plan.session_epoch));
                }
            }
        }
        assert!(failed.is_empty(), "{}", failed.join("\n"));
    }
}
