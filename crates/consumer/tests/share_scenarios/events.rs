//! What the members' event lines say, read as kafkatest's `verifiable_share_consumer.py` reads
//! them (`startup_complete`, `records_consumed`, `offsets_acknowledged`, `shutdown_complete`; other
//! names ignored), kept per record and per member *incarnation* (one run of one member's process),
//! so the verdict can tell every delivery of a record and every answer to its acknowledgement
//! apart, and say why a record came more than once.

use std::collections::BTreeMap;

use serde_json::Value;

/// One run of one member's process: (member index, incarnation number from 1).
pub type Inc = (usize, u32);

/// A record: (partition, offset).
pub type Key = (i32, i64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Started, `startup_complete` not yet printed.
    Starting,
    /// `startup_complete` printed (kafkatest's `Started`).
    Started,
    /// `shutdown_complete` printed, or the process was killed.
    Dead,
}

/// How an incarnation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// SIGTERM: a clean shutdown.
    Clean,
    /// SIGKILL.
    Killed,
}

#[derive(Debug)]
pub struct MemberView {
    pub status: Status,
    pub incarnation: u32,
    /// Records reported consumed, over every incarnation (kafkatest's `total_consumed`).
    pub consumed: u64,
    /// Records reported consumed by the current incarnation.
    pub consumed_now: u64,
    /// Records whose acknowledgement the broker took (`total_acknowledged_successfully`).
    pub acknowledged: u64,
    /// Records whose acknowledgement failed (`total_acknowledged_failed`).
    pub acknowledged_failed: u64,
    /// How each ended incarnation ended, by incarnation number.
    pub ends: BTreeMap<u32, End>,
}

impl MemberView {
    pub fn new() -> MemberView {
        MemberView {
            status: Status::Dead,
            incarnation: 0,
            consumed: 0,
            consumed_now: 0,
            acknowledged: 0,
            acknowledged_failed: 0,
            ends: BTreeMap::new(),
        }
    }
}

/// Everything every member said.
#[derive(Debug, Default)]
pub struct Global {
    pub topic: String,
    pub members: Vec<MemberView>,
    /// Each record's deliveries (`records_consumed`), in the order they were read.
    pub deliveries: BTreeMap<Key, Vec<Inc>>,
    /// Each record's acknowledgements the broker took.
    pub accepted: BTreeMap<Key, Vec<Inc>>,
    /// Each record's acknowledgements that failed, with the error.
    pub refused: BTreeMap<Key, Vec<(Inc, String)>>,
    /// Lines that break the tool's contract.
    pub violations: Vec<String>,
}

impl Global {
    pub fn new(topic: &str) -> Global {
        Global {
            topic: topic.to_owned(),
            ..Global::default()
        }
    }

    pub fn total_consumed(&self) -> u64 {
        self.members.iter().map(|m| m.consumed).sum()
    }

    pub fn total_acknowledged(&self) -> u64 {
        self.members.iter().map(|m| m.acknowledged).sum()
    }

    /// One event line of incarnation `inc`.
    pub fn handle(&mut self, inc: Inc, event: &Value) {
        let (member, _) = inc;
        let name = event["name"].as_str().unwrap_or_default();
        match name {
            "startup_complete" => self.members[member].status = Status::Started,
            "shutdown_complete" => self.members[member].status = Status::Dead,
            "records_consumed" => {
                let offsets = self.partitions(inc, name, event);
                let view = &mut self.members[member];
                view.consumed += offsets.len() as u64;
                view.consumed_now += offsets.len() as u64;
                for key in offsets {
                    self.deliveries.entry(key).or_default().push(inc);
                }
            }
            "offsets_acknowledged" => {
                let offsets = self.partitions(inc, name, event);
                for key in &offsets {
                    let delivered = self.deliveries.get(key).is_some_and(|d| d.contains(&inc));
                    if !delivered {
                        self.violations.push(format!(
                            "member {inc:?} acknowledged {key:?}, which it was never handed"
                        ));
                    }
                }
                let n = offsets.len() as u64;
                match event["success"].as_bool() {
                    Some(true) => {
                        self.members[member].acknowledged += n;
                        for key in offsets {
                            self.accepted.entry(key).or_default().push(inc);
                        }
                    }
                    Some(false) => {
                        self.members[member].acknowledged_failed += n;
                        let error = event["error"].as_str().unwrap_or("(none)").to_owned();
                        for key in offsets {
                            self.refused
                                .entry(key)
                                .or_default()
                                .push((inc, error.clone()));
                        }
                    }
                    None => self
                        .violations
                        .push(format!("member {inc:?}: {name} without success: {event}")),
                }
            }
            _ => {}
        }
    }

    /// The records a `records_consumed` or `offsets_acknowledged` line names, its counts
    /// checked against its offsets.
    fn partitions(&mut self, inc: Inc, name: &str, event: &Value) -> Vec<Key> {
        let mut keys = Vec::new();
        let Some(partitions) = event["partitions"].as_array() else {
            self.violations.push(format!(
                "member {inc:?}: {name} without partitions: {event}"
            ));
            return keys;
        };
        for p in partitions {
            let (Some(partition), Some(offsets)) =
                (p["partition"].as_i64(), p["offsets"].as_array())
            else {
                self.violations.push(format!(
                    "member {inc:?}: {name} with a bad partition entry: {p}"
                ));
                continue;
            };
            if p["topic"].as_str() != Some(self.topic.as_str()) {
                self.violations
                    .push(format!("member {inc:?}: {name} names another topic: {p}"));
            }
            if p["count"].as_u64() != Some(offsets.len() as u64) {
                self.violations.push(format!(
                    "member {inc:?}: {name}: a partition's count is not its offsets': {p}"
                ));
            }
            keys.extend(
                offsets
                    .iter()
                    .filter_map(Value::as_i64)
                    .map(|o| (partition as i32, o)),
            );
        }
        if event["count"].as_u64() != Some(keys.len() as u64) {
            self.violations.push(format!(
                "member {inc:?}: {name}: count is not the partitions' offsets: {event}"
            ));
        }
        keys
    }
}
