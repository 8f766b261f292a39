//! What the peer binaries share: their arguments, the tally of records and value bytes, and the
//! JSON line `consume-bench` (and `share-bench`) print (client, records, bytes, consume_secs,
//! total_secs, records_per_sec, mib_per_sec, cpu_secs), so `scripts/bench-consumer` and
//! `scripts/bench-share` read every Rust client's figures the same way.
//!
//! Timing as `consume-bench`'s: `consume_secs` from the first record to the N-th, `total_secs`
//! from just before the subscription to the N-th.

use std::fmt;
use std::future::Future;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// A peer binary's `main`: parses the arguments (exit 2 on a usage error), runs `run` and prints
/// its JSON line (exit 0), or the error (exit 1), each message prefixed with `consume-<client>`.
pub async fn main<F, Fut>(client: &str, run: F) -> ExitCode
where
    F: FnOnce(Args) -> Fut,
    Fut: Future<Output = Result<String, Box<dyn std::error::Error>>>,
{
    let args = match Args::parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("consume-{client}: {e}");
            return ExitCode::from(2);
        }
    };
    match run(args).await {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("consume-{client}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How long a run may take before it gives up (as `consume-bench`'s default `--timeout-secs`).
pub const TIMEOUT: Duration = Duration::from_secs(600);

/// `BOOTSTRAP TOPIC N GROUP [KEY=VALUE ...]`, as `tests/peers/consume_perf.py` takes them.
#[derive(Debug, Clone)]
pub struct Args {
    pub bootstrap: String,
    pub topic: String,
    pub records: u64,
    pub group: String,
    /// Extra consumer properties, applied over the binary's own.
    pub extra: Vec<(String, String)>,
}

/// A command line the binary cannot run with.
#[derive(Debug)]
pub struct UsageError(String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (usage: BOOTSTRAP TOPIC N GROUP [KEY=VALUE ...])",
            self.0
        )
    }
}

impl std::error::Error for UsageError {}

impl Args {
    /// Parses the process's arguments (after the program name).
    pub fn parse(mut args: impl Iterator<Item = String>) -> Result<Self, UsageError> {
        let mut next = |what: &str| {
            args.next()
                .ok_or_else(|| UsageError(format!("missing {what}")))
        };
        let bootstrap = next("BOOTSTRAP")?;
        let topic = next("TOPIC")?;
        let n = next("N")?;
        let records = match n.parse::<u64>() {
            Ok(r) if r > 0 => r,
            _ => {
                return Err(UsageError(format!(
                    "N must be a positive integer, not {n:?}"
                )))
            }
        };
        let group = next("GROUP")?;
        let extra = args
            .map(|kv| match kv.split_once('=') {
                Some((k, v)) => Ok((k.to_owned(), v.to_owned())),
                None => Err(UsageError(format!("{kv:?}: expected KEY=VALUE"))),
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            bootstrap,
            topic,
            records,
            group,
            extra,
        })
    }

    /// Removes the extra property `key` (the last one given, if repeated) and returns its value:
    /// for the bench's own settings, which are not the client's properties.
    pub fn take(&mut self, key: &str) -> Option<String> {
        let value = self.extra.iter().rev().find(|(k, _)| k == key)?.1.clone();
        self.extra.retain(|(k, _)| k != key);
        Some(value)
    }

    /// `base` with the extra properties applied over it (a key given again replaces its value).
    pub fn properties(&self, base: Vec<(String, String)>) -> Vec<(String, String)> {
        let mut props = base;
        for (k, v) in &self.extra {
            props.retain(|(key, _)| key != k);
            props.push((k.clone(), v.clone()));
        }
        props
    }
}

/// Records and value bytes counted up to the N-th record, and when the first and the N-th came.
#[derive(Debug)]
pub struct Tally {
    target: u64,
    records: u64,
    bytes: u64,
    begun: Instant,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Tally {
    /// A tally of `target` records, its clock started now (call it just before subscribing).
    pub fn start(target: u64) -> Self {
        Self {
            target,
            records: 0,
            bytes: 0,
            begun: Instant::now(),
            first: None,
            last: None,
        }
    }

    /// Counts one record whose value is `value_len` bytes; records past the N-th are not counted.
    pub fn record(&mut self, value_len: usize) {
        if self.done() {
            return;
        }
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.records += 1;
        self.bytes += value_len as u64;
        if self.records == self.target {
            self.last = Some(now);
        }
    }

    /// Whether the N-th record has been counted.
    pub fn done(&self) -> bool {
        self.records >= self.target
    }

    /// Whether the run has gone on longer than [`TIMEOUT`].
    pub fn timed_out(&self) -> bool {
        self.begun.elapsed() > TIMEOUT
    }

    /// The error of a run that stopped short of N records.
    pub fn short(&self) -> String {
        format!(
            "only {} of {} records within {} s",
            self.records,
            self.target,
            TIMEOUT.as_secs()
        )
    }

    /// The JSON line of a finished run, or why there is none.
    pub fn report(&self, client: &str) -> Result<String, String> {
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return Err(self.short());
        };
        let consume = last.duration_since(first).as_secs_f64().max(1e-9);
        let total = last.duration_since(self.begun).as_secs_f64();
        let cpu = cpu_secs().map_or_else(|| "null".to_owned(), |c| format!("{c:.2}"));
        Ok(format!(
            "{{\"client\":\"{client}\",\"records\":{},\"bytes\":{},\"consume_secs\":{consume},\
             \"total_secs\":{total},\"records_per_sec\":{},\"mib_per_sec\":{},\"cpu_secs\":{cpu}}}",
            self.records,
            self.bytes,
            self.records as f64 / consume,
            self.bytes as f64 / 1_048_576.0 / consume,
        ))
    }
}

/// User + system CPU seconds of this process so far (Linux `/proc/self/stat`, USER_HZ = 100).
fn cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Result<Args, UsageError> {
        Args::parse(v.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn parses_positionals_and_overrides() -> Result<(), UsageError> {
        let a = args(&["b:1", "t", "5", "g", "fetch.max.bytes=1", "client.id=x"])?;
        assert_eq!(
            (a.topic.as_str(), a.records, a.group.as_str()),
            ("t", 5, "g")
        );
        let props = a.properties(vec![
            ("client.id".into(), "y".into()),
            ("a".into(), "b".into()),
        ]);
        assert_eq!(
            props,
            [("a", "b"), ("fetch.max.bytes", "1"), ("client.id", "x")]
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
        Ok(())
    }

    #[test]
    fn takes_the_benchs_own_keys_out() -> Result<(), UsageError> {
        let mut a = args(&["b:1", "t", "5", "g", "bench.x=1", "k=v", "bench.x=2"])?;
        assert_eq!(a.take("bench.x").as_deref(), Some("2"));
        assert_eq!(a.take("bench.x"), None);
        assert_eq!(a.extra, [("k".to_owned(), "v".to_owned())]);
        Ok(())
    }

    #[test]
    fn refuses_bad_arguments() {
        assert!(args(&["b:1", "t"]).is_err());
        assert!(args(&["b:1", "t", "0", "g"]).is_err());
        assert!(args(&["b:1", "t", "x", "g"]).is_err());
        assert!(args(&["b:1", "t", "1", "g", "novalue"]).is_err());
    }

    #[test]
    fn counts_up_to_the_target_only() {
        let mut t = Tally::start(2);
        assert!(t.report("x").is_err());
        t.record(10);
        assert!(!t.done());
        t.record(20);
        t.record(40);
        assert!(t.done());
        let line = t.report("x").unwrap_or_default();
        assert!(line.contains("\"records\":2,\"bytes\":30,"), "{line}");
    }
}
