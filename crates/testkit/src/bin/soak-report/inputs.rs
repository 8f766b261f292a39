//! Reading a soak's run directory: what the producer had acknowledged (VerifiableProducer's JSON
//! lines), what each member's life processed (`records-M-L.txt`, the demo service's output), the
//! members' events (`events-M.txt`, each line stamped with its Unix time by the soak), and the
//! timeline (`soak.txt`, the soak's own actions, and `proxy.txt`, the fault proxy's output).
//!
//! A line that does not parse is counted per file and reported, never skipped in silence.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

/// One member's one life: member number and the how-manieth start.
pub type LifeId = (u32, u32);

/// A record the broker acknowledged to the producer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Acked {
    pub partition: i32,
    pub offset: i64,
    pub value: String,
    /// When the producer was told (its event's timestamp, Unix ms).
    pub at_ms: i64,
}

/// One processing of a record by one member's life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    pub partition: i32,
    pub offset: i64,
    pub value: String,
    pub at_ms: i64,
    pub life: LifeId,
}

/// A line of the timeline or of a member's events: `UNIX_MS WHO WHAT key=value...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub at_ms: i64,
    /// `soak`, `fault-proxy`, or `member-M` for an event line.
    pub who: String,
    pub what: String,
    pub fields: BTreeMap<String, String>,
}

impl Mark {
    pub fn field(&self, key: &str) -> Option<&str> {
        self.fields.get(key).map(String::as_str)
    }
}

/// Lines that did not parse, per file.
#[derive(Debug, Default)]
pub struct Unparsed(pub BTreeMap<PathBuf, u64>);

impl Unparsed {
    fn add(&mut self, path: &Path) {
        *self.0.entry(path.to_path_buf()).or_default() += 1;
    }
}

/// Everything the report reads.
#[derive(Debug, Default)]
pub struct Inputs {
    pub acked: Vec<Acked>,
    /// `producer_send_error` lines: records the producer gave up on (not acknowledged).
    pub send_errors: u64,
    pub processed: Vec<Processed>,
    /// The timeline, in time order.
    pub timeline: Vec<Mark>,
    /// Every member's events, in time order.
    pub events: Vec<Mark>,
    pub unparsed: Unparsed,
}

fn lines(path: &Path) -> Result<impl Iterator<Item = std::io::Result<String>>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(BufReader::new(file).lines())
}

/// `PREFIX-A[-B].txt` in `dir`, with the numbers A (and B).
fn numbered(dir: &Path, prefix: &str) -> Result<Vec<(PathBuf, u32, Option<u32>)>, String> {
    let mut found = Vec::new();
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(rest) = name
            .strip_prefix(prefix)
            .and_then(|r| r.strip_prefix('-'))
            .and_then(|r| r.strip_suffix(".txt"))
        else {
            continue;
        };
        let mut numbers = rest.split('-').map(str::parse::<u32>);
        match (numbers.next(), numbers.next(), numbers.next()) {
            (Some(Ok(a)), None, None) => found.push((path.clone(), a, None)),
            (Some(Ok(a)), Some(Ok(b)), None) => found.push((path.clone(), a, Some(b))),
            _ => {}
        }
    }
    found.sort();
    Ok(found)
}

impl Inputs {
    /// Reads `dir` for `topic`.
    pub fn read(dir: &Path, topic: &str) -> Result<Inputs, String> {
        let mut inputs = Inputs::default();
        inputs.read_producer(&dir.join("producer.txt"))?;
        for (path, member, life) in numbered(dir, "records")? {
            let Some(life) = life else { continue };
            inputs.read_records(&path, topic, (member, life))?;
        }
        for (path, member, life) in numbered(dir, "events")? {
            if life.is_none() {
                inputs.read_events(&path, member)?;
            }
        }
        for name in ["soak.txt", "proxy.txt"] {
            let path = dir.join(name);
            for line in lines(&path)? {
                let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
                match parse_mark(&line) {
                    Some(mark) => inputs.timeline.push(mark),
                    None if line.trim().is_empty() => {}
                    None => inputs.unparsed.add(&path),
                }
            }
        }
        inputs.timeline.sort_by_key(|m| m.at_ms);
        inputs.events.sort_by_key(|m| m.at_ms);
        Ok(inputs)
    }

    fn read_producer(&mut self, path: &Path) -> Result<(), String> {
        for line in lines(path)? {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            let Ok(json) = serde_json::from_str::<serde_json::Value>(&line) else {
                self.unparsed.add(path);
                continue;
            };
            match json.get("name").and_then(|n| n.as_str()) {
                Some("producer_send_success") => match parse_ack(&json) {
                    Some(acked) => self.acked.push(acked),
                    None => self.unparsed.add(path),
                },
                Some("producer_send_error") => self.send_errors += 1,
                Some(_) => {}
                None => self.unparsed.add(path),
            }
        }
        Ok(())
    }

    /// `record TOPIC PARTITION OFFSET VALUE UNIX_MS` lines (orders-demo's output).
    fn read_records(&mut self, path: &Path, topic: &str, life: LifeId) -> Result<(), String> {
        for line in lines(path)? {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            let words: Vec<&str> = line.split(' ').collect();
            let parsed = match words.as_slice() {
                ["record", t, partition, offset, value, at] if *t == topic => {
                    match (partition.parse(), offset.parse(), at.parse()) {
                        (Ok(partition), Ok(offset), Ok(at_ms)) => Some(Processed {
                            partition,
                            offset,
                            value: (*value).to_string(),
                            at_ms,
                            life,
                        }),
                        _ => None,
                    }
                }
                _ => None,
            };
            match parsed {
                Some(p) => self.processed.push(p),
                None => self.unparsed.add(path),
            }
        }
        Ok(())
    }

    /// `UNIX_MS event NAME key=value...` lines; the rest of what the member printed is ignored
    /// (its logs are on stderr, in another file).
    fn read_events(&mut self, path: &Path, member: u32) -> Result<(), String> {
        for line in lines(path)? {
            let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
            let Some(mut mark) = parse_mark(&line) else {
                if !line.trim().is_empty() {
                    self.unparsed.add(path);
                }
                continue;
            };
            if mark.who != "event" {
                self.unparsed.add(path);
                continue;
            }
            mark.who = format!("member-{member}");
            self.events.push(mark);
        }
        Ok(())
    }
}

fn parse_ack(json: &serde_json::Value) -> Option<Acked> {
    Some(Acked {
        partition: i32::try_from(json.get("partition")?.as_i64()?).ok()?,
        offset: json.get("offset")?.as_i64()?,
        value: json.get("value")?.as_str()?.to_string(),
        at_ms: json.get("timestamp")?.as_i64()?,
    })
}

/// `UNIX_MS WHO WHAT key=value...`; words without `=` after WHAT are kept under their position
/// (`_3`, ...).
pub fn parse_mark(line: &str) -> Option<Mark> {
    let mut words = line.split_whitespace();
    let at_ms = words.next()?.parse().ok()?;
    let who = words.next()?.to_string();
    let what = words.next()?.to_string();
    let fields = words
        .enumerate()
        .map(|(i, w)| match w.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (format!("_{}", i + 3), w.to_string()),
        })
        .collect();
    Some(Mark {
        at_ms,
        who,
        what,
        fields,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    #[test]
    fn a_run_directory_reads_and_bad_lines_are_counted() {
        let dir = std::env::temp_dir().join(format!("soak-report-inputs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("producer.txt"),
            concat!(
                "{\"timestamp\":10,\"name\":\"startup_complete\"}\n",
                "{\"timestamp\":11,\"name\":\"producer_send_success\",\"key\":\"0\",\"value\":\"0\",\"offset\":0,\"topic\":\"orders\",\"partition\":2}\n",
                "{\"timestamp\":12,\"name\":\"producer_send_error\",\"key\":\"1\",\"value\":\"1\"}\n",
                "not json\n",
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("records-3-2.txt"),
            "record orders 2 0 0 20\nrecord orders 2 zero 0 21\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("events-3.txt"),
            "30 event rebalance-started cause=MemberJoined generation=-1\n[log] something\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("soak.txt"),
            "5 soak member-start member=3 life=2\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("proxy.txt"),
            "4 fault-proxy fault-start kind=reset for_ms=0\n",
        )
        .unwrap();
        let inputs = Inputs::read(&dir, "orders").unwrap();
        assert_eq!(
            inputs.acked,
            [Acked {
                partition: 2,
                offset: 0,
                value: "0".into(),
                at_ms: 11
            }]
        );
        assert_eq!(inputs.send_errors, 1);
        assert_eq!(inputs.processed.len(), 1);
        assert_eq!(inputs.processed[0].life, (3, 2));
        assert_eq!(inputs.events.len(), 1);
        assert_eq!(inputs.events[0].who, "member-3");
        assert_eq!(inputs.events[0].field("cause"), Some("MemberJoined"));
        assert_eq!(inputs.timeline[0].what, "fault-start", "in time order");
        let bad: Vec<u64> = inputs.unparsed.0.values().copied().collect();
        assert_eq!(bad, [1, 1, 1], "{:?}", inputs.unparsed);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
