//! Parsers for `ConsumerGroupCommand` output, so tests can assert what Kafka itself reports about a
//! group. The tool prints fixed-width columns whose widths follow the longest value, and leaves a
//! column blank where a value is absent (a dynamic member's GROUP-INSTANCE-ID), so rows are cut at
//! the header's column positions rather than split on whitespace.

use std::collections::BTreeMap;

/// One row of `--describe --members --verbose`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    pub group: String,
    pub consumer_id: String,
    /// `None` for a dynamic member.
    pub group_instance_id: Option<String>,
    pub host: String,
    pub client_id: String,
    pub partitions: u32,
    /// topic → partitions currently assigned to this member.
    pub assignment: BTreeMap<String, Vec<i32>>,
    /// The member epoch (a consumer group's members); `None` in a classic group.
    pub current_epoch: Option<i32>,
    /// In a consumer group with a classic member in it (a group migrating), whether this one
    /// speaks the consumer protocol (`true`) or is a classic member (`false`); `None` where the
    /// tool prints no such column (a classic group, or a consumer group of consumer-protocol
    /// members only).
    pub upgraded: Option<bool>,
}

impl GroupMember {
    /// Whether the member speaks the consumer protocol (KIP-848): a consumer group's member that
    /// is not a classic one in it.
    pub fn speaks_consumer_protocol(&self) -> bool {
        self.current_epoch.is_some() && self.upgraded != Some(false)
    }
}

/// The row of `--describe --state`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupState {
    pub group: String,
    /// `host:port` of the coordinator.
    pub coordinator: String,
    pub coordinator_id: i32,
    /// The protocol (assignor) the coordinator chose, e.g. `range`; empty while none is chosen.
    pub assignment_strategy: String,
    /// `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty`, `Dead`, ...
    pub state: String,
    pub members: u32,
}

/// One row of `--describe` (`--offsets`, the default): a partition's committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionOffset {
    pub topic: String,
    pub partition: i32,
    /// `None` where the tool prints `-` (nothing committed).
    pub committed: Option<i64>,
    pub log_end: Option<i64>,
}

/// Splits a table into rows of (column name → cell), cutting each row at the header's columns.
fn table(text: &str, first_column: &str) -> Vec<BTreeMap<String, String>> {
    let mut rows = Vec::new();
    let mut columns: Vec<(usize, String)> = Vec::new();
    for line in text.lines() {
        if line.starts_with(first_column) && line[first_column.len()..].starts_with(' ') {
            columns = header_columns(line);
            continue;
        }
        if columns.is_empty() || line.trim().is_empty() {
            continue;
        }
        let mut row = BTreeMap::new();
        for (i, (start, name)) in columns.iter().enumerate() {
            let end = columns.get(i + 1).map_or(line.len(), |(s, _)| *s);
            let cell = line.get(*start..end.min(line.len())).unwrap_or("").trim();
            row.insert(name.clone(), cell.to_string());
        }
        rows.push(row);
    }
    rows
}

/// Column start offsets and names. Names are single words, except "COORDINATOR (ID)": a word in
/// parentheses belongs to the name before it.
fn header_columns(header: &str) -> Vec<(usize, String)> {
    let mut cols: Vec<(usize, String)> = Vec::new();
    let mut offset = 0;
    for word in header.split(' ') {
        if !word.is_empty() {
            match cols.last_mut() {
                Some((_, name)) if word.starts_with('(') => {
                    name.push(' ');
                    name.push_str(word);
                }
                _ => cols.push((offset, word.to_string())),
            }
        }
        offset += word.len() + 1;
    }
    cols
}

fn assignment(cell: &str) -> BTreeMap<String, Vec<i32>> {
    let mut out: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for part in cell
        .split([';', ' '])
        .filter(|p| !p.is_empty() && *p != "-")
    {
        if let Some((topic, parts)) = part.rsplit_once(':') {
            let entry = out.entry(topic.to_string()).or_default();
            entry.extend(
                parts
                    .split(',')
                    .filter_map(|p| p.trim().parse::<i32>().ok()),
            );
            entry.sort_unstable();
        }
    }
    out
}

/// Parses `ConsumerGroupCommand --describe --members --verbose` output.
pub fn parse_describe_members(text: &str) -> Vec<GroupMember> {
    table(text, "GROUP")
        .into_iter()
        .map(|row| {
            let get = |k: &str| row.get(k).cloned().unwrap_or_default();
            let instance = get("GROUP-INSTANCE-ID");
            let assignment_cell = row
                .get("CURRENT-ASSIGNMENT")
                .or_else(|| row.get("ASSIGNMENT"))
                .cloned()
                .unwrap_or_default();
            GroupMember {
                group: get("GROUP"),
                consumer_id: get("CONSUMER-ID"),
                group_instance_id: (!instance.is_empty() && instance != "-").then_some(instance),
                host: get("HOST"),
                client_id: get("CLIENT-ID"),
                partitions: get("#PARTITIONS").parse().unwrap_or(0),
                assignment: assignment(&assignment_cell),
                current_epoch: get("CURRENT-EPOCH").parse().ok(),
                upgraded: match row.get("UPGRADED").map(String::as_str) {
                    Some("true") => Some(true),
                    Some("false") => Some(false),
                    _ => None,
                },
            }
        })
        .collect()
}

/// Parses `ConsumerGroupCommand --describe` (offsets) output. A group without active members
/// lists only the partitions it has committed.
pub fn parse_describe_offsets(text: &str) -> Vec<PartitionOffset> {
    table(text, "GROUP")
        .into_iter()
        .filter_map(|row| {
            let get = |k: &str| row.get(k).cloned().unwrap_or_default();
            Some(PartitionOffset {
                topic: get("TOPIC"),
                partition: get("PARTITION").parse().ok()?,
                committed: get("CURRENT-OFFSET").parse().ok(),
                log_end: get("LOG-END-OFFSET").parse().ok(),
            })
        })
        .collect()
}

/// Parses `ConsumerGroupCommand --list --type` output: group → type (`Classic`, `Consumer`,
/// `Share`, `Streams`, ...).
pub fn parse_group_types(text: &str) -> BTreeMap<String, String> {
    table(text, "GROUP")
        .into_iter()
        .filter_map(|row| Some((row.get("GROUP")?.clone(), row.get("TYPE")?.clone())))
        .collect()
}

/// Parses `ConsumerGroupCommand --describe --state` output; `None` if it holds no group row.
pub fn parse_state(text: &str) -> Option<GroupState> {
    let row = table(text, "GROUP").into_iter().next()?;
    let get = |k: &str| row.get(k).cloned().unwrap_or_default();
    let coord = get("COORDINATOR (ID)");
    let (coordinator, id) = match coord.split_once('(') {
        Some((addr, id)) => (
            addr.trim().to_string(),
            id.trim_end_matches(')').trim().parse().unwrap_or(-1),
        ),
        None => (coord.trim().to_string(), -1),
    };
    Some(GroupState {
        group: get("GROUP"),
        coordinator,
        coordinator_id: id,
        assignment_strategy: get("ASSIGNMENT-STRATEGY"),
        state: get("STATE"),
        members: get("#MEMBERS").parse().unwrap_or(0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Printed by kafka-tools 4.4.0 ConsumerGroupCommand for a classic group with one static
    // member (inst-1) and one dynamic member (blank GROUP-INSTANCE-ID), both VerifiableConsumer.
    const MEMBERS: &str = "
GROUP           CONSUMER-ID                                            GROUP-INSTANCE-ID HOST            CLIENT-ID              #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   
gprobe          consumer-gprobe-1-60854ea3-906c-4276-93c1-3ec2c8f53d1e                   /127.0.0.1      consumer-gprobe-1      1               -               probe:2              -               -                   
gprobe          inst-1-fbc4ecdb-5aa3-42a5-ae1a-71b82e1f5828            inst-1            /127.0.0.1      consumer-gprobe-inst-1 2               -               probe:0,1            -               -                   
";

    const STATE: &str = "
GROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS
gprobe          127.0.0.1:19192  (1)      range                Stable               2
";

    // Printed by kafka-tools 4.4.0 ConsumerGroupCommand for a consumer group with a classic
    // member (Mooring's verifiable-consumer) and a consumer-protocol one (Java's).
    const UPGRADED: &str = "
GROUP            CONSUMER-ID            HOST            CLIENT-ID                   #PARTITIONS     CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT    UPGRADED
probe-upg-g-1777 GVgLo1bpQzWhI40fS3w0sQ /127.0.0.1      mooring                     1               3               probe-upg-1777:1     3               probe-upg-1777:1     false
probe-upg-g-1777 _4F4Jcb5Q1KM8UHqrjrjmA /127.0.0.1      consumer-probe-upg-g-1777-1 1               3               probe-upg-1777:0     3               probe-upg-1777:0     true
";

    #[test]
    fn parses_which_members_speak_the_consumer_protocol() {
        let m = parse_describe_members(UPGRADED);
        assert_eq!(m.len(), 2);
        assert_eq!(
            (m[0].client_id.as_str(), m[0].upgraded),
            ("mooring", Some(false))
        );
        assert_eq!(m[1].upgraded, Some(true));
        assert_eq!(
            m[1].assignment,
            BTreeMap::from([("probe-upg-1777".to_string(), vec![0])])
        );
        assert_eq!(m[1].current_epoch, Some(3));
        assert!(m[1].speaks_consumer_protocol() && !m[0].speaks_consumer_protocol());
        let classic = &parse_describe_members(MEMBERS)[0];
        assert_eq!((classic.upgraded, classic.current_epoch), (None, None));
        assert!(!classic.speaks_consumer_protocol());
    }

    #[test]
    fn parses_members_with_blank_instance_id() {
        let m = parse_describe_members(MEMBERS);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].group_instance_id, None);
        assert_eq!(m[0].client_id, "consumer-gprobe-1");
        assert_eq!(
            m[0].assignment,
            BTreeMap::from([("probe".to_string(), vec![2])])
        );
        assert_eq!(m[1].group_instance_id.as_deref(), Some("inst-1"));
        assert_eq!(m[1].partitions, 2);
        assert_eq!(
            m[1].assignment,
            BTreeMap::from([("probe".to_string(), vec![0, 1])])
        );
    }

    // Printed by kafka-tools 4.4.0 ConsumerGroupCommand --describe for a group with no members.
    const OFFSETS: &str = "
Consumer group 'lc-drop-g' has no active members.

GROUP                      TOPIC                    PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID     HOST            CLIENT-ID
lc-drop-g                  lc-drop-17063-16995493-3 1          460             460             0               -               -               -
lc-drop-g                  lc-drop-17063-16995493-3 2          -               1069            -               -               -               -
";

    #[test]
    fn parses_offsets() {
        let rows = parse_describe_offsets(OFFSETS);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].topic, "lc-drop-17063-16995493-3");
        assert_eq!(rows[0].partition, 1);
        assert_eq!(rows[0].committed, Some(460));
        assert_eq!(rows[1].committed, None);
        assert_eq!(rows[1].log_end, Some(1069));
    }

    // Printed by kafka-tools 4.4.0 ConsumerGroupCommand --list --type.
    const TYPES: &str = "
GROUP                                            TYPE                
vc-bounce-rolling-g-30096-53756106-0             Classic             
vc-848-bounce-mixed-g-30527-53778771-2           Consumer            
";

    #[test]
    fn parses_group_types() {
        let types = parse_group_types(TYPES);
        assert_eq!(types.len(), 2);
        assert_eq!(types["vc-bounce-rolling-g-30096-53756106-0"], "Classic");
        assert_eq!(types["vc-848-bounce-mixed-g-30527-53778771-2"], "Consumer");
    }

    #[test]
    fn parses_state() {
        let s = parse_state(STATE).expect("a row");
        assert_eq!(s.coordinator, "127.0.0.1:19192");
        assert_eq!(s.coordinator_id, 1);
        assert_eq!(s.assignment_strategy, "range");
        assert_eq!(s.state, "Stable");
        assert_eq!(s.members, 2);
        assert_eq!(parse_state("Error: group not found"), None);
    }
}
