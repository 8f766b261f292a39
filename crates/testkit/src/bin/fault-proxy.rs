//! `fault-proxy`: testkit's fault proxy ([`mooring_testkit::FaultProxy`]) as a process of its own,
//! for runs that are not a Rust test (`scripts/soak`): clients bootstrap through its listeners,
//! and it injects faults on a seeded plan of its own, or when told on stdin.
//!
//! It listens on 127.0.0.1 only, on the first free ports of `--ports` (the bootstrap servers'
//! listeners first, in order, then one per broker node as responses name it), and fronts
//! PLAINTEXT listeners only: it must read the frames to rewrite the brokers' addresses, which TLS
//! would hide.
//!
//! The plan (unless `--no-plan`): every `--every` seconds (a uniform draw from the range) one
//! fault episode, its kind drawn from `--kinds`:
//! - `latency`: responses delayed 100-400 ms plus up to 300 ms jitter, requests 10-50 ms, for 20 s;
//! - `bandwidth`: a cap of 8-32 KiB/s per connection direction, for 20 s;
//! - `reset`: every open connection reset (RST) at once;
//! - `half-open`: nothing relayed either way for `--half-open-secs` (default 8, longer than a
//!   client's `request.timeout.ms` of 5 s), sockets kept open;
//! - `corruption`: one byte flipped in 1 of `--corrupt-one-in` (500) Fetch responses' record
//!   batches (where the batch CRC-32C must catch it; `--corrupt-anywhere`: any byte of any
//!   response), for 30 s.
//!
//! Every draw comes from `--seed` (default `MOORING_FAULT_SEED`, else the clock), printed first.
//!
//! Stdin, one command a line: `pause` (end the episode running, clear every fault, no more until
//! `resume`), `resume`, `stats`, `quit`; and one episode now (ending the running one first):
//! `latency MS JITTER_MS SECS`, `bandwidth BYTES_PER_S SECS`, `reset`, `half-open SECS`,
//! `corrupt ONE_IN SECS`. The end of stdin, SIGTERM or SIGINT end the proxy like `quit`.
//!
//! Stdout, one line per thing done, each `UNIX_MS fault-proxy WHAT key=value...` so a run's report
//! can line its observations up with the faults: `started`, `listener` (a new listener and the
//! broker behind it), `fault-start kind=...` and `fault-end kind=...` (a reset starts and ends at
//! once), `paused`, `resumed`, `stats`, `exit`.

use std::io::Write;
use std::ops::RangeInclusive;
use std::process::ExitCode;
use std::str::FromStr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use mooring_testkit::fault_proxy::{
    seed_from_env, Bandwidth, Corruption, CorruptionTarget, Endpoint, Faults, Latency, Stats,
};
use mooring_testkit::FaultProxy;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::signal::unix::{signal, SignalKind};
use tokio::time::Instant;

#[derive(Debug, Parser)]
#[command(
    name = "fault-proxy",
    about = "A fault proxy in front of a Kafka cluster's PLAINTEXT listeners: latency, bandwidth \
             caps, resets, half-open episodes and corrupted bytes, on a seeded plan or on stdin \
             commands"
)]
struct Args {
    /// The real brokers, comma-separated host:port (PLAINTEXT listeners).
    #[arg(long)]
    bootstrap: String,
    /// The ports to listen on (127.0.0.1), FIRST-LAST: bootstrap servers first, then one per
    /// broker node.
    #[arg(long, default_value = "16500-16519", value_parser = parse_range::<u16>)]
    ports: RangeInclusive<u16>,
    /// The seed of every random choice (default: MOORING_FAULT_SEED, else from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// No plan: faults only when stdin asks.
    #[arg(long)]
    no_plan: bool,
    /// Seconds between the end of one planned episode and the start of the next, MIN-MAX.
    #[arg(long, default_value = "60-120", value_parser = parse_range::<u64>)]
    every: RangeInclusive<u64>,
    /// The kinds the plan draws from, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "latency,bandwidth,reset,half-open,corruption"
    )]
    kinds: Vec<Kind>,
    /// How long a planned half-open episode lasts.
    #[arg(long, default_value_t = 8)]
    half_open_secs: u64,
    /// One response in this many is corrupted during a corruption episode.
    #[arg(long, default_value_t = 500)]
    corrupt_one_in: u32,
    /// Corrupt any byte of any response (framing included), not only a record batch's bytes its
    /// CRC covers.
    #[arg(long)]
    corrupt_anywhere: bool,
}

/// `FIRST-LAST` (or one number).
fn parse_range<T: FromStr + PartialOrd + Copy>(text: &str) -> Result<RangeInclusive<T>, String> {
    let number = |s: &str| {
        s.trim()
            .parse::<T>()
            .map_err(|_| format!("`{s}` is not a number"))
    };
    let (first, last) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => (number(text)?, number(text)?),
    };
    if first > last {
        return Err(format!("`{text}`: the first is above the last"));
    }
    Ok(first..=last)
}

/// The kinds, for messages.
const KINDS: &str = "latency, bandwidth, reset, half-open, corruption";

/// A kind of fault episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Latency,
    Bandwidth,
    Reset,
    HalfOpen,
    Corruption,
}

impl FromStr for Kind {
    type Err = String;
    fn from_str(s: &str) -> Result<Kind, String> {
        Ok(match s.trim() {
            "latency" => Kind::Latency,
            "bandwidth" => Kind::Bandwidth,
            "reset" => Kind::Reset,
            "half-open" => Kind::HalfOpen,
            "corruption" => Kind::Corruption,
            other => return Err(format!("unknown fault kind `{other}` ({KINDS})")),
        })
    }
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Latency => "latency",
            Kind::Bandwidth => "bandwidth",
            Kind::Reset => "reset",
            Kind::HalfOpen => "half-open",
            Kind::Corruption => "corruption",
        }
    }
}

/// One fault, switched on for `length` (a reset: at once, and over).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Episode {
    fault: Fault,
    length: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    Latency { response: Latency, request: Latency },
    Bandwidth(Bandwidth),
    Reset,
    HalfOpen,
    Corruption(Corruption),
}

impl Fault {
    fn kind(&self) -> Kind {
        match self {
            Fault::Latency { .. } => Kind::Latency,
            Fault::Bandwidth(_) => Kind::Bandwidth,
            Fault::Reset => Kind::Reset,
            Fault::HalfOpen => Kind::HalfOpen,
            Fault::Corruption(_) => Kind::Corruption,
        }
    }

    /// `key=value` details for the `fault-start` line.
    fn describe(&self) -> String {
        let ms = |d: Duration| d.as_millis();
        match self {
            Fault::Latency { response, request } => format!(
                "response_ms={}+{} request_ms={}+{}",
                ms(response.base),
                ms(response.jitter),
                ms(request.base),
                ms(request.jitter)
            ),
            Fault::Bandwidth(Bandwidth::PerConnection(b)) => {
                format!("bytes_per_s={b} per=connection-direction")
            }
            Fault::Bandwidth(Bandwidth::Total(b)) => format!("bytes_per_s={b} per=total"),
            Fault::Reset => String::new(),
            Fault::HalfOpen => String::new(),
            Fault::Corruption(c) => format!(
                "one_in={} target={}",
                c.one_in,
                match c.target {
                    CorruptionTarget::FetchRecords => "fetch-records",
                    CorruptionTarget::Anywhere => "anywhere",
                }
            ),
        }
    }

    fn switch_on(&self, faults: &Faults) {
        match *self {
            Fault::Latency { response, request } => {
                faults.set_response_latency(Some(response));
                faults.set_request_latency(Some(request));
            }
            Fault::Bandwidth(b) => faults.set_bandwidth(Some(b)),
            Fault::Reset => faults.reset_now(),
            Fault::HalfOpen => faults.set_half_open(true),
            Fault::Corruption(c) => faults.set_corruption(Some(c)),
        }
    }
}

/// SplitMix64, seeded: the plan's draws (the proxy's own per-connection streams are separate).
#[derive(Debug)]
struct Draws(u64);

impl Draws {
    fn new(seed: u64) -> Draws {
        // Apart from the proxy's connection streams, which derive from the same seed.
        Draws(seed ^ 0x5EED_FA17_u64.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in the range (inclusive).
    fn within(&mut self, range: &RangeInclusive<u64>) -> u64 {
        let span = range.end() - range.start();
        range.start() + self.next() % (span.saturating_add(1)).max(1)
    }
}

/// What the plan needs besides the draws.
#[derive(Debug, Clone)]
struct Plan {
    every: RangeInclusive<u64>,
    kinds: Vec<Kind>,
    half_open: Duration,
    corruption: Corruption,
}

impl Plan {
    /// The pause before the next episode.
    fn pause(&self, draws: &mut Draws) -> Duration {
        Duration::from_secs(draws.within(&self.every))
    }

    /// The next episode: its kind from the plan's kinds, its settings drawn.
    fn episode(&self, draws: &mut Draws) -> Option<Episode> {
        if self.kinds.is_empty() {
            return None;
        }
        let kind = self.kinds[(draws.next() % self.kinds.len() as u64) as usize];
        let ms = |d: &mut Draws, r: RangeInclusive<u64>| Duration::from_millis(d.within(&r));
        let (fault, length) = match kind {
            Kind::Latency => (
                Fault::Latency {
                    response: Latency::new(ms(draws, 100..=400), ms(draws, 0..=300)),
                    request: Latency::new(ms(draws, 10..=50), ms(draws, 0..=20)),
                },
                Duration::from_secs(20),
            ),
            Kind::Bandwidth => (
                Fault::Bandwidth(Bandwidth::PerConnection(draws.within(&(8..=32)) * 1024)),
                Duration::from_secs(20),
            ),
            Kind::Reset => (Fault::Reset, Duration::ZERO),
            Kind::HalfOpen => (Fault::HalfOpen, self.half_open),
            Kind::Corruption => (Fault::Corruption(self.corruption), Duration::from_secs(30)),
        };
        Some(Episode { fault, length })
    }
}

/// A line from stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Command {
    Pause,
    Resume,
    Stats,
    Quit,
    Now(Episode),
}

fn parse_command(line: &str, corruption_target: CorruptionTarget) -> Result<Command, String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let number = |i: usize| -> Result<u64, String> {
        let word = words
            .get(i)
            .ok_or_else(|| format!("`{line}`: argument {i} missing"))?;
        word.parse()
            .map_err(|_| format!("`{line}`: `{word}` is not a number"))
    };
    let secs = |i: usize| number(i).map(Duration::from_secs);
    let now = |fault: Fault, length: Duration| Command::Now(Episode { fault, length });
    Ok(match words.first().copied() {
        Some("pause") => Command::Pause,
        Some("resume") => Command::Resume,
        Some("stats") => Command::Stats,
        Some("quit") => Command::Quit,
        Some("reset") => now(Fault::Reset, Duration::ZERO),
        Some("half-open") => now(Fault::HalfOpen, secs(1)?),
        Some("latency") => {
            let base = Duration::from_millis(number(1)?);
            let jitter = Duration::from_millis(number(2)?);
            now(
                Fault::Latency {
                    response: Latency::new(base, jitter),
                    request: Latency::new(base / 10, jitter / 10),
                },
                secs(3)?,
            )
        }
        Some("bandwidth") => now(
            Fault::Bandwidth(Bandwidth::PerConnection(number(1)?)),
            secs(2)?,
        ),
        Some("corrupt") => {
            let one_in = u32::try_from(number(1)?.max(1))
                .map_err(|_| format!("`{line}`: one in how many?"))?;
            now(
                Fault::Corruption(Corruption {
                    one_in,
                    target: corruption_target,
                }),
                secs(2)?,
            )
        }
        _ => {
            return Err(format!(
                "unknown command `{line}` (pause, resume, stats, quit, latency MS JITTER_MS SECS, \
                 bandwidth BYTES_PER_S SECS, reset, half-open SECS, corrupt ONE_IN SECS)"
            ))
        }
    })
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// One line on stdout, flushed (the soak reads it while the proxy runs).
fn say(what: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{} fault-proxy {what}", unix_ms());
    let _ = out.flush();
}

fn stats_line(stats: &Stats) -> String {
    format!(
        "accepted={} open={} reset_episodes={} dropped_half_open={} delayed={} corrupted={} \
         rewritten={} rewrite_errors={} forgotten={}",
        stats.accepted_total(),
        stats.open(),
        stats.reset_episodes,
        stats.dropped_half_open,
        stats.delayed,
        stats.corrupted.len(),
        stats.rewritten,
        stats.rewrite_errors.len(),
        stats.forgotten
    )
}

/// The running episode: what it is, when it ends, and the stats when it began.
struct Running {
    episode: Episode,
    ends: Instant,
    before: Stats,
}

struct Proxy {
    proxy: FaultProxy,
    faults: Faults,
    plan: Option<Plan>,
    draws: Draws,
    paused: bool,
    running: Option<Running>,
    /// When the plan starts its next episode (`None`: paused, no plan, or one is running).
    next: Option<Instant>,
    /// The broker nodes whose listener was printed.
    listeners_shown: std::collections::BTreeSet<i32>,
}

impl Proxy {
    fn new(proxy: FaultProxy, plan: Option<Plan>, seed: u64) -> Proxy {
        Proxy {
            faults: proxy.faults(),
            proxy,
            plan,
            draws: Draws::new(seed),
            paused: false,
            running: None,
            next: None,
            listeners_shown: std::collections::BTreeSet::new(),
        }
    }

    /// The timer is due: the running episode ends, or the plan's next one starts.
    fn due(&mut self) {
        if self.running.is_some() {
            self.end_episode();
        } else if let Some(episode) = self.plan.clone().and_then(|p| p.episode(&mut self.draws)) {
            self.start_episode(episode);
        } else {
            self.next = None;
        }
    }

    /// Handles what reading a line of stdin gave; the reason to stop, if it is one.
    fn line(
        &mut self,
        line: std::io::Result<Option<String>>,
        target: CorruptionTarget,
    ) -> Option<&'static str> {
        match line {
            Ok(Some(line)) if line.trim().is_empty() => {}
            Ok(Some(line)) => match parse_command(&line, target) {
                Ok(command) => {
                    if !self.command(command) {
                        return Some("quit");
                    }
                }
                Err(message) => say(&format!("error message={message:?}")),
            },
            Ok(None) => return Some("stdin closed"),
            Err(e) => {
                eprintln!("fault-proxy: reading stdin: {e}");
                return Some("stdin failed");
            }
        }
        None
    }

    fn start_episode(&mut self, episode: Episode) {
        self.end_episode();
        let before = self.proxy.stats();
        let open = before.open();
        let detail = episode.fault.describe();
        say(&format!(
            "fault-start kind={} for_ms={}{}{}",
            episode.fault.kind().name(),
            episode.length.as_millis(),
            if detail.is_empty() { "" } else { " " },
            detail
        ));
        episode.fault.switch_on(&self.faults);
        if episode.fault == Fault::Reset {
            say(&format!("fault-end kind=reset connections={open}"));
            self.schedule_next();
            return;
        }
        self.running = Some(Running {
            ends: Instant::now() + episode.length,
            episode,
            before,
        });
        self.next = None;
    }

    fn end_episode(&mut self) {
        let Some(running) = self.running.take() else {
            return;
        };
        self.faults.clear();
        let after = self.proxy.stats();
        let effect = match running.episode.fault {
            Fault::HalfOpen => format!(
                " dropped_frames={}",
                after.dropped_half_open - running.before.dropped_half_open
            ),
            Fault::Latency { .. } => {
                format!(" delayed_frames={}", after.delayed - running.before.delayed)
            }
            Fault::Corruption(_) => {
                let hit: Vec<String> = after.corrupted[running.before.corrupted.len()..]
                    .iter()
                    .map(|c| match &c.batch {
                        Some(b) => format!("{}-{}@{}", b.topic, b.partition, b.base_offset),
                        None => format!("api{}v{}#{}", c.api_key, c.api_version, c.byte),
                    })
                    .collect();
                format!(
                    " corrupted={} batches={}",
                    hit.len(),
                    if hit.is_empty() {
                        "-".into()
                    } else {
                        hit.join(",")
                    }
                )
            }
            Fault::Bandwidth(_) | Fault::Reset => String::new(),
        };
        say(&format!(
            "fault-end kind={}{effect}",
            running.episode.fault.kind().name()
        ));
        self.schedule_next();
    }

    fn schedule_next(&mut self) {
        self.next = match (&self.plan, self.paused) {
            (Some(plan), false) => Some(Instant::now() + plan.pause(&mut self.draws)),
            _ => None,
        };
    }

    fn show_new_listeners(&mut self) {
        for (endpoint, (port, upstream)) in self.proxy.listeners() {
            let Endpoint::Node(id) = endpoint else {
                continue; // the bootstrap listeners are on the `started` line
            };
            if self.listeners_shown.insert(id) {
                say(&format!(
                    "listener endpoint=node-{id} listen=127.0.0.1:{port} upstream={upstream}"
                ));
            }
        }
    }

    /// Handles one command; `false` to quit.
    fn command(&mut self, command: Command) -> bool {
        match command {
            Command::Pause => {
                self.paused = true;
                self.end_episode();
                self.faults.clear();
                self.next = None;
                say("paused");
            }
            Command::Resume => {
                self.paused = false;
                if self.running.is_none() {
                    self.schedule_next();
                }
                say("resumed");
            }
            Command::Stats => say(&format!("stats {}", stats_line(&self.proxy.stats()))),
            Command::Quit => return false,
            Command::Now(episode) => self.start_episode(episode),
        }
        true
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fault-proxy: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(args))
}

async fn run(args: Args) -> ExitCode {
    let seed = args.seed.unwrap_or_else(seed_from_env);
    let proxy = match FaultProxy::start_on_ports(&args.bootstrap, seed, args.ports.clone()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fault-proxy: cannot listen for {}: {e}", args.bootstrap);
            return ExitCode::FAILURE;
        }
    };
    let target = args.corruption_target();
    let plan = args.plan(target);
    say(&format!(
        "started seed={seed} bootstrap={} upstream={} plan={}",
        proxy.bootstrap(),
        args.bootstrap,
        describe_plan(plan.as_ref())
    ));
    let mut state = Proxy::new(proxy, plan, seed);
    state.schedule_next();
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        eprintln!("fault-proxy: cannot install the signal handlers");
        return ExitCode::FAILURE;
    };
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut poll = tokio::time::interval(Duration::from_millis(500));
    let reason = loop {
        let due = state.running.as_ref().map(|r| r.ends).or(state.next);
        let timer = async {
            match due {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = timer => state.due(),
            line = lines.next_line() => {
                if let Some(reason) = state.line(line, target) {
                    break reason;
                }
            }
            _ = poll.tick() => state.show_new_listeners(),
            _ = term.recv() => break "SIGTERM",
            _ = int.recv() => break "SIGINT",
        }
    };
    state.end_episode();
    state.faults.clear();
    say(&format!("stats {}", stats_line(&state.proxy.stats())));
    say(&format!("exit reason={reason:?}"));
    ExitCode::SUCCESS
}

impl Args {
    /// What a corruption episode may flip: `--corrupt-anywhere`'s choice.
    fn corruption_target(&self) -> CorruptionTarget {
        if self.corrupt_anywhere {
            CorruptionTarget::Anywhere
        } else {
            CorruptionTarget::FetchRecords
        }
    }

    /// The plan the flags describe; `None` under `--no-plan`.
    fn plan(&self, target: CorruptionTarget) -> Option<Plan> {
        (!self.no_plan).then(|| Plan {
            every: self.every.clone(),
            kinds: self.kinds.clone(),
            half_open: Duration::from_secs(self.half_open_secs),
            corruption: Corruption {
                one_in: self.corrupt_one_in.max(1),
                target,
            },
        })
    }
}

/// The `plan=` of the `started` line.
fn describe_plan(plan: Option<&Plan>) -> String {
    match plan {
        Some(p) => format!(
            "every={}-{}s kinds={}",
            p.every.start(),
            p.every.end(),
            p.kinds
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(",")
        ),
        None => "none".into(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;

    fn plan(kinds: &[Kind]) -> Plan {
        Plan {
            every: 60..=120,
            kinds: kinds.to_vec(),
            half_open: Duration::from_secs(8),
            corruption: Corruption::default(),
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_plan() {
        let p = plan(&[
            Kind::Latency,
            Kind::Bandwidth,
            Kind::Reset,
            Kind::HalfOpen,
            Kind::Corruption,
        ]);
        let draw = |seed| {
            let mut d = Draws::new(seed);
            (0..20)
                .map(|_| (p.pause(&mut d), p.episode(&mut d)))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let episodes = draw(7);
        assert!(episodes
            .iter()
            .all(|(pause, _)| (60..=120).contains(&pause.as_secs())));
        let kinds: std::collections::BTreeSet<&str> = episodes
            .iter()
            .filter_map(|(_, e)| e.as_ref().map(|e| e.fault.kind().name()))
            .collect();
        assert!(kinds.len() >= 3, "20 draws cover the kinds: {kinds:?}");
    }

    #[test]
    fn planned_episodes_have_the_lengths_and_bounds_documented() {
        let mut d = Draws::new(1);
        for _ in 0..50 {
            let e = plan(&[Kind::Latency]).episode(&mut d).unwrap();
            assert_eq!(e.length, Duration::from_secs(20));
            let Fault::Latency { response, request } = e.fault else {
                panic!("{e:?}");
            };
            assert!((100..=400).contains(&response.base.as_millis()), "{e:?}");
            assert!(response.jitter <= Duration::from_millis(300), "{e:?}");
            assert!((10..=50).contains(&request.base.as_millis()), "{e:?}");
            let e = plan(&[Kind::Bandwidth]).episode(&mut d).unwrap();
            assert!(
                matches!(e.fault, Fault::Bandwidth(Bandwidth::PerConnection(b)) if (8192..=32768).contains(&b)),
                "{e:?}"
            );
        }
        let e = plan(&[Kind::HalfOpen]).episode(&mut d).unwrap();
        assert_eq!(
            (e.fault, e.length),
            (Fault::HalfOpen, Duration::from_secs(8))
        );
        let e = plan(&[Kind::Corruption]).episode(&mut d).unwrap();
        assert_eq!(e.length, Duration::from_secs(30));
        assert_eq!(plan(&[]).episode(&mut d), None);
    }

    #[test]
    fn commands_parse_and_bad_ones_say_why() {
        let t = CorruptionTarget::FetchRecords;
        assert_eq!(parse_command("pause", t), Ok(Command::Pause));
        assert_eq!(
            parse_command("half-open 8", t),
            Ok(Command::Now(Episode {
                fault: Fault::HalfOpen,
                length: Duration::from_secs(8)
            }))
        );
        assert_eq!(
            parse_command("corrupt 500 30", t),
            Ok(Command::Now(Episode {
                fault: Fault::Corruption(Corruption::default()),
                length: Duration::from_secs(30)
            }))
        );
        let e = parse_command("latency 200", t).unwrap_err();
        assert!(e.contains("argument 2 missing"), "{e}");
        let e = parse_command("bandwidth lots 3", t).unwrap_err();
        assert!(e.contains("`lots` is not a number"), "{e}");
        assert!(parse_command("explode", t)
            .unwrap_err()
            .contains("unknown command"));
    }

    #[test]
    fn ranges_parse() {
        assert_eq!(parse_range::<u16>("16500-16519"), Ok(16500..=16519));
        assert_eq!(parse_range::<u64>("90"), Ok(90..=90));
        assert!(parse_range::<u64>("9-1").is_err());
        assert!(parse_range::<u16>("a-b").is_err());
    }
}
