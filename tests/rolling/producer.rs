//! The producer (Kafka's VerifiableProducer) whose acknowledgements are the truth, and what the
//! pods processed.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mooring_testkit::{kafka_script, Cluster};

use super::{terminate, RATE};

/// Kafka's VerifiableProducer at a steady rate, until stopped.
pub(crate) struct Producer {
    child: Child,
    out: PathBuf,
}

impl Producer {
    pub(crate) fn start(cluster: &Cluster, topic: &str, dir: &Path) -> Producer {
        let out = dir.join("producer.txt");
        let child = Command::new(kafka_script())
            .args(["--cluster", cluster.name(), "tool", "VerifiableProducer"])
            .args(["--bootstrap-server", cluster.bootstrap(), "--topic", topic])
            .args(["--throughput", &RATE.to_string(), "--max-messages", "-1"])
            // Keyed, so every partition gets its steady share (keyless records stick to one
            // partition for a whole batch) and a pause in processing shows as a gap.
            .args(["--acks", "-1", "--repeating-keys", "60"])
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).expect("producer output"))
            .stderr(std::fs::File::create(dir.join("producer.err")).expect("producer err"))
            .spawn()
            .expect("start VerifiableProducer");
        Producer { child, out }
    }

    /// (partition, offset) → value of every acknowledged record so far.
    pub(crate) fn acked(&self) -> BTreeMap<(i32, i64), String> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .filter(|l| l.contains("\"name\":\"producer_send_success\""))
            .filter_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                Some((
                    (
                        i32::try_from(v["partition"].as_i64()?).ok()?,
                        v["offset"].as_i64()?,
                    ),
                    v["value"].as_str()?.to_owned(),
                ))
            })
            .collect()
    }

    /// SIGTERM; the tool flushes and prints what it had acknowledged.
    pub(crate) fn stop(mut self) -> BTreeMap<(i32, i64), String> {
        let (_, _) = terminate(&mut self.child, Duration::from_secs(20));
        self.acked()
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One processed record: `record TOPIC PARTITION OFFSET VALUE UNIX_MS`.
#[derive(Debug, Clone)]
pub(crate) struct Processed {
    pub(crate) partition: i32,
    pub(crate) offset: i64,
    pub(crate) value: String,
    pub(crate) at_ms: u64,
}

/// Every record processed by any life of any pod of the run in `dir`.
pub(crate) fn processed(dir: &Path) -> Vec<Processed> {
    let mut all = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return all;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("records-") {
            continue;
        }
        let Ok(file) = std::fs::File::open(entry.path()) else {
            continue;
        };
        for line in BufReader::new(file).lines().map_while(Result::ok) {
            let f: Vec<&str> = line.split(' ').collect();
            if f.len() != 6 || f[0] != "record" {
                continue; // a line cut by a crash would be one; a clean stop leaves none
            }
            if let (Ok(partition), Ok(offset), Ok(at_ms)) =
                (f[2].parse(), f[3].parse(), f[5].parse())
            {
                all.push(Processed {
                    partition,
                    offset,
                    value: f[4].to_owned(),
                    at_ms,
                });
            }
        }
    }
    all
}
