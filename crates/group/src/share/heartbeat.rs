//! What each ShareGroupHeartbeat says, as Java's share `HeartbeatState` decides it: the member's
//! identity (group, member id, epoch) always; the rack once per membership; the subscribed topic
//! names when joining and whenever they changed since the last heartbeat sent. After a heartbeat
//! that failed or went unanswered everything is said again (the coordinator may not have read it).

use std::collections::BTreeSet;

use mooring_wire::messages::ShareGroupHeartbeatRequest;

use crate::config::GroupConfig;

/// Epoch of the heartbeat that leaves the group (a share group has no static members, so there
/// is no leaving "for now").
pub(crate) const LEAVE_EPOCH: i32 = -1;

/// What the last heartbeat said of the fields that are sent only when they change.
#[derive(Debug, Default)]
pub(crate) struct SentFields {
    rack: bool,
    topics: Option<BTreeSet<String>>,
}

impl SentFields {
    /// Forgets what was sent: the next heartbeat says everything.
    pub(crate) fn reset(&mut self) {
        *self = SentFields::default();
    }

    /// The next heartbeat of `member_id` at `epoch` subscribed to `topics`, remembered as sent.
    pub(crate) fn build(
        &mut self,
        config: &GroupConfig,
        member_id: &str,
        epoch: i32,
        topics: &BTreeSet<String>,
    ) -> ShareGroupHeartbeatRequest {
        if epoch == 0 {
            self.reset();
        }
        let mut request = identity(config, member_id, epoch);
        if !self.rack {
            request.rack_id = config.client_rack.clone();
            self.rack = true;
        }
        if self.topics.as_ref() != Some(topics) {
            request.subscribed_topic_names = Some(topics.iter().cloned().collect());
            self.topics = Some(topics.clone());
        }
        request
    }
}

/// A heartbeat saying who the member is and nothing else (the leave heartbeat is one).
pub(crate) fn identity(
    config: &GroupConfig,
    member_id: &str,
    epoch: i32,
) -> ShareGroupHeartbeatRequest {
    ShareGroupHeartbeatRequest {
        group_id: config.group_id.clone(),
        member_id: member_id.to_owned(),
        member_epoch: epoch,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topics(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn a_join_says_everything_and_a_steady_heartbeat_only_its_identity() {
        let mut config = GroupConfig::new("g");
        config.client_rack = Some("rack-a".into());
        let mut sent = SentFields::default();
        let join = sent.build(&config, "m", 0, &topics(&["b", "a"]));
        assert_eq!(join.rack_id.as_deref(), Some("rack-a"));
        assert_eq!(
            join.subscribed_topic_names,
            Some(vec!["a".to_owned(), "b".to_owned()])
        );
        let steady = sent.build(&config, "m", 3, &topics(&["a", "b"]));
        assert_eq!(
            (steady.rack_id, steady.subscribed_topic_names),
            (None, None)
        );
        assert_eq!((steady.member_id.as_str(), steady.member_epoch), ("m", 3));
        let changed = sent.build(&config, "m", 3, &topics(&["a"]));
        assert_eq!(changed.subscribed_topic_names, Some(vec!["a".to_owned()]));
        sent.reset();
        let after_failure = sent.build(&config, "m", 3, &topics(&["a"]));
        assert!(after_failure.rack_id.is_some() && after_failure.subscribed_topic_names.is_some());
    }
}
