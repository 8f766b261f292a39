//! A producer that writes while a test runs: Kafka's VerifiableProducer in the background, its
//! acknowledgements (`producer_send_success`: partition and offset) collected as they come. A
//! test that counts lost records measures against these, the offsets the broker acknowledged,
//! never against the number it asked for.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::{kafka_script, properties_file, Cluster};

/// A running VerifiableProducer; killed when dropped.
#[derive(Debug)]
pub struct BackgroundProducer {
    child: Child,
    reader: Option<JoinHandle<()>>,
    acked: Arc<Mutex<Vec<(i32, i64)>>>,
    finished: Arc<AtomicBool>,
    dir: std::path::PathBuf,
}

impl Cluster {
    /// Starts Kafka's VerifiableProducer (acks=all) writing `count` records (values `0..count`;
    /// `None`: until stopped) to `topic` at `throughput` records a second (0: as fast as it can),
    /// with extra producer properties such as `linger.ms`.
    pub fn spawn_verifiable_producer(
        &self,
        topic: &str,
        count: Option<u64>,
        throughput: u32,
        producer_props: &[(&str, &str)],
    ) -> BackgroundProducer {
        let (dir, config) = properties_file("bg-producer", producer_props);
        let throughput = if throughput == 0 {
            "-1".to_string()
        } else {
            throughput.to_string()
        };
        let mut child = Command::new(kafka_script())
            .args(["--cluster", self.name(), "tool", "VerifiableProducer"])
            .args(["--bootstrap-server", self.bootstrap(), "--topic", topic])
            .args([
                "--max-messages",
                &count.map_or_else(|| "-1".into(), |n| n.to_string()),
            ])
            .args(["--throughput", &throughput, "--acks", "-1"])
            .arg("--producer.config")
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("could not start VerifiableProducer: {e}"));
        let acked = Arc::new(Mutex::new(Vec::new()));
        let finished = Arc::new(AtomicBool::new(false));
        let stdout = child.stdout.take().expect("piped stdout");
        let reader = {
            let acked = Arc::clone(&acked);
            let finished = Arc::clone(&finished);
            std::thread::spawn(move || {
                for line in BufReader::new(stdout).lines() {
                    let Ok(line) = line else { break };
                    if let Some(ack) = parse_ack(&line) {
                        acked
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(ack);
                    }
                }
                finished.store(true, Ordering::Release);
            })
        };
        BackgroundProducer {
            child,
            reader: Some(reader),
            acked,
            finished,
            dir,
        }
    }
}

impl BackgroundProducer {
    /// The (partition, offset) of every record acknowledged so far.
    pub fn acked(&self) -> Vec<(i32, i64)> {
        self.acked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many records were acknowledged so far.
    pub fn acked_count(&self) -> usize {
        self.acked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether the tool has exited (all its output read).
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// Stops the tool (SIGTERM: it flushes and prints its last acknowledgements) and returns every
    /// acknowledgement.
    pub fn stop(mut self) -> Vec<(i32, i64)> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        self.acked()
    }
}

impl Drop for BackgroundProducer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `(partition, offset)` of a `producer_send_success` line.
fn parse_ack(line: &str) -> Option<(i32, i64)> {
    if !line.contains("\"name\":\"producer_send_success\"") {
        return None;
    }
    Some((json_int(line, "partition")?, json_int(line, "offset")?))
}

/// The integer value of `"key":` in a flat JSON line.
fn json_int<T: std::str::FromStr>(line: &str, key: &str) -> Option<T> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let digits: String = line[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acknowledgements_parse() {
        let line = r#"{"timestamp":1700000000000,"name":"producer_send_success","key":null,"value":"12","offset":345,"topic":"t","partition":2}"#;
        assert_eq!(parse_ack(line), Some((2, 345)));
        let error = r#"{"timestamp":1,"name":"producer_send_error","exception":"x","offset":1,"partition":0}"#;
        assert_eq!(parse_ack(error), None);
    }
}
