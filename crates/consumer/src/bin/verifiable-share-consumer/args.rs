//! The command line, Java's `VerifiableShareConsumer` flags, and the share consumer properties it
//! stands for: the `--command-config` file first, then the flags over it (`group.id`,
//! `bootstrap.servers`, and `share.acknowledgement.mode=explicit` under `--ack-pattern`, as Java's
//! tool sets them), then what the reporter needs of the runtime.
//!
//! Values Java's tool takes in any case (`--acknowledgement-mode`, `--offset-reset-strategy`) are
//! taken in any case here too; a value it cannot take is refused before anything starts, as clap
//! refuses (Java's tool throws on some of them only once running).

use std::path::{Path, PathBuf};

use clap::{Parser, ValueEnum};

/// Java's `max.poll.records` default: the most records one report ("poll") holds, unless the
/// config file says otherwise.
const MAX_POLL_RECORDS: usize = 500;

#[derive(Debug, Parser)]
#[command(
    name = "verifiable-share-consumer",
    about = "This tool creates a share group and consumes messages from a specific topic and \
             emits share consumer events (e.g. share consumer startup, received messages, and \
             offsets acknowledged) as JSON objects to STDOUT. Mooring's implementation of \
             Kafka's VerifiableShareConsumer."
)]
pub struct Args {
    /// Consumes messages from this topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: String,
    /// The group id of the share group.
    #[arg(long = "group-id", value_name = "GROUP-ID")]
    pub group_id: String,
    /// Consume this many messages (counted as the broker acknowledges them); -1 (the default):
    /// until the process is stopped.
    #[arg(
        long = "max-messages",
        default_value_t = -1,
        allow_negative_numbers = true,
        value_name = "MAX-MESSAGES"
    )]
    pub max_messages: i32,
    /// Log individual consumed records (`record_data` events).
    #[arg(long)]
    pub verbose: bool,
    /// Acknowledgement mode: auto, sync (each report waits for the broker's answer to its
    /// acknowledgements before the next) or async.
    #[arg(
        long = "acknowledgement-mode",
        value_enum,
        ignore_case = true,
        default_value = "auto",
        value_name = "ACKNOWLEDGEMENT-MODE"
    )]
    pub acknowledgement_mode: AckMode,
    /// Comma-separated cycle of accept|release|reject applied to each consumed record, chosen by
    /// (record offset % pattern length); needs --acknowledgement-mode sync or async. Java's
    /// `renew` is refused: Mooring renews a held record's lock itself.
    #[arg(
        long = "ack-pattern",
        value_parser = parse_ack_pattern,
        default_value = "",
        value_name = "ACK-PATTERN"
    )]
    pub ack_pattern: AckPattern,
    /// The share group's offset reset strategy (`share.auto.offset.reset`, set on the group
    /// through the admin API before subscribing): earliest or latest; empty: left as it is.
    #[arg(
        long = "offset-reset-strategy",
        value_parser = parse_reset_strategy,
        default_value = "",
        value_name = "OFFSET-RESET-STRATEGY"
    )]
    pub offset_reset_strategy: ResetStrategy,
    /// Config properties file (config options shared with command line parameters are
    /// overridden). `--consumer.config`, the name older Kafka tools use, is taken too.
    #[arg(
        long = "command-config",
        alias = "consumer.config",
        value_name = "CONFIG-FILE"
    )]
    pub command_config: Option<PathBuf>,
    /// The server(s) to connect to: HOST1:PORT1,HOST2:PORT2,...
    #[arg(
        long = "bootstrap-server",
        value_name = "HOST1:PORT1[,HOST2:PORT2[...]]"
    )]
    pub bootstrap_server: String,
}

/// `--acknowledgement-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AckMode {
    /// Java's implicit acknowledgement: records are accepted once reported.
    Auto,
    /// Each report waits for the broker's answer to its acknowledgements.
    Sync,
    /// Acknowledgements are answered in the background.
    Async,
}

/// One entry of `--ack-pattern`: the verdict a record gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AckType {
    Accept,
    Release,
    Reject,
}

impl AckType {
    /// Java's `AcknowledgeType` name, as `ackTypeCounts` spells it.
    pub fn java_name(self) -> &'static str {
        match self {
            AckType::Accept => "ACCEPT",
            AckType::Release => "RELEASE",
            AckType::Reject => "REJECT",
        }
    }
}

/// `--ack-pattern`: empty unless given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AckPattern(pub Vec<AckType>);

impl AckPattern {
    /// The verdict for the record at `offset` (accept without a pattern).
    pub fn verdict(&self, offset: i64) -> AckType {
        let len = i64::try_from(self.0.len()).unwrap_or(i64::MAX);
        if len == 0 {
            return AckType::Accept;
        }
        let index = usize::try_from(offset.rem_euclid(len)).unwrap_or(0);
        self.0.get(index).copied().unwrap_or(AckType::Accept)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn parse_ack_pattern(value: &str) -> Result<AckPattern, String> {
    if value.is_empty() {
        return Ok(AckPattern::default());
    }
    let types: Result<Vec<AckType>, String> = value
        .split(',')
        .map(|entry| match entry.trim().to_ascii_lowercase().as_str() {
            "accept" => Ok(AckType::Accept),
            "release" => Ok(AckType::Release),
            "reject" => Ok(AckType::Reject),
            "renew" => Err(
                "renew is not supported: Mooring renews the lock of a record it holds \
                            itself (mooring.share.lock.renewal), a verdict cannot ask for it"
                    .to_owned(),
            ),
            other => Err(format!("`{other}` is not one of accept, release, reject")),
        })
        .collect();
    Ok(AckPattern(types?))
}

/// `--offset-reset-strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResetStrategy {
    /// Not given (or given empty, Java's default): the group's setting is left alone.
    Unset,
    Earliest,
    Latest,
}

impl ResetStrategy {
    /// The value of `share.auto.offset.reset`.
    pub fn value(self) -> Option<&'static str> {
        match self {
            ResetStrategy::Unset => None,
            ResetStrategy::Earliest => Some("earliest"),
            ResetStrategy::Latest => Some("latest"),
        }
    }
}

fn parse_reset_strategy(value: &str) -> Result<ResetStrategy, String> {
    match value.to_ascii_lowercase().as_str() {
        "" => Ok(ResetStrategy::Unset),
        "earliest" => Ok(ResetStrategy::Earliest),
        "latest" => Ok(ResetStrategy::Latest),
        _ => Err("must be either 'earliest' or 'latest'".into()),
    }
}

/// The flags that must agree with each other, checked as Java's tool checks them: an
/// `--ack-pattern` needs `sync` or `async`. The message, for a clap usage error.
pub fn check(args: &Args) -> Result<(), String> {
    if !args.ack_pattern.is_empty() && args.acknowledgement_mode == AckMode::Auto {
        return Err(
            "--ack-pattern requires --acknowledgement-mode to be 'sync' or 'async', not 'auto'"
                .into(),
        );
    }
    Ok(())
}

/// The share consumer's properties: the file first, then the command line over it, then the
/// runtime's defaults for what the file leaves out.
pub fn properties(args: &Args) -> Result<Vec<(String, String)>, String> {
    let mut props: Vec<(String, String)> = match &args.command_config {
        Some(path) => read_properties(path)?,
        None => Vec::new(),
    };
    let mut set = |key: &str, value: String| {
        props.retain(|(k, _)| k != key);
        props.push((key.to_owned(), value));
    };
    set("group.id", args.group_id.clone());
    set("bootstrap.servers", args.bootstrap_server.clone());
    if !args.ack_pattern.is_empty() {
        set("share.acknowledgement.mode", "explicit".into());
    }
    // A "poll" is what the stream hands out at once: as many deliveries as max.poll.records
    // may be out together, and twice that held.
    let has = |key: &str| props.iter().any(|(k, _)| k == key);
    let poll_records = max_poll_records(&props);
    let mut defaults = Vec::new();
    if !has("mooring.concurrency") {
        defaults.push(("mooring.concurrency", poll_records.to_string()));
    }
    if !has("mooring.buffer.max.records") {
        defaults.push((
            "mooring.buffer.max.records",
            (poll_records * 2).max(1000).to_string(),
        ));
    }
    for (key, value) in defaults {
        props.push((key.to_owned(), value));
    }
    Ok(props)
}

/// The most records one report holds: `max.poll.records` (Java's default 500).
pub fn max_poll_records(props: &[(String, String)]) -> usize {
    props
        .iter()
        .find(|(k, _)| k == "max.poll.records")
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(MAX_POLL_RECORDS)
        .max(1)
}

fn read_properties(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--command-config {}: {e}", path.display()))?;
    Ok(parse_properties(&text))
}

/// A properties file as `java.util.Properties.load` reads it: `#`/`!` comment lines; a line
/// ending in an odd number of backslashes continues on the next (its leading blanks dropped);
/// the key ends at the first unescaped `=`, `:` or blank; escapes `\t \n \r \f \uXXXX`, and any
/// other escaped character stands for itself. A later key replaces an earlier one.
fn parse_properties(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut logical = String::new();
    let mut continuing = false;
    for line in text.lines() {
        let line = line.trim_start_matches([' ', '\t', '\x0c']);
        if !continuing && (line.is_empty() || line.starts_with('#') || line.starts_with('!')) {
            continue;
        }
        let trailing = line.chars().rev().take_while(|c| *c == '\\').count();
        if trailing % 2 == 1 {
            logical.push_str(&line[..line.len() - 1]);
            continuing = true;
            continue;
        }
        continuing = false;
        logical.push_str(line);
        let (key, value) = split_entry(&std::mem::take(&mut logical));
        out.retain(|(k, _)| *k != key);
        out.push((key, value));
    }
    if continuing && !logical.is_empty() {
        let (key, value) = split_entry(&logical);
        out.retain(|(k, _)| *k != key);
        out.push((key, value));
    }
    out
}

/// One logical line → (key, value), both unescaped.
fn split_entry(entry: &str) -> (String, String) {
    let chars: Vec<char> = entry.chars().collect();
    let mut i = 0;
    let mut key_end = chars.len();
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            '=' | ':' | ' ' | '\t' | '\x0c' => {
                key_end = i;
                break;
            }
            _ => i += 1,
        }
    }
    let key_end = key_end.min(chars.len());
    let mut j = key_end;
    while j < chars.len() && matches!(chars[j], ' ' | '\t' | '\x0c') {
        j += 1;
    }
    if j < chars.len() && matches!(chars[j], '=' | ':') {
        j += 1;
        while j < chars.len() && matches!(chars[j], ' ' | '\t' | '\x0c') {
            j += 1;
        }
    }
    (unescape(&chars[..key_end]), unescape(&chars[j..]))
}

fn unescape(chars: &[char]) -> String {
    let mut out = String::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&next) = chars.get(i) else { break };
        i += 1;
        match next {
            't' => out.push('\t'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            'f' => out.push('\x0c'),
            'u' => {
                let hex: String = chars[i..].iter().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) if hex.len() == 4 => {
                        out.push(decoded);
                        i += 4;
                    }
                    _ => out.push('u'),
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use clap::error::ErrorKind;
    use mooring_consumer::share::{AcknowledgementMode, ShareConsumerConfig};

    fn args(extra: &[&str]) -> Result<Args, clap::Error> {
        let mut all = vec![
            "verifiable-share-consumer",
            "--bootstrap-server",
            "localhost:9092",
            "--topic",
            "t",
            "--group-id",
            "g",
        ];
        all.extend_from_slice(extra);
        Args::try_parse_from(all)
    }

    fn value<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
        props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn javas_defaults() {
        let a = args(&[]).unwrap();
        assert_eq!(a.max_messages, -1);
        assert_eq!(a.acknowledgement_mode, AckMode::Auto);
        assert_eq!(a.offset_reset_strategy, ResetStrategy::Unset);
        assert!(a.ack_pattern.is_empty() && !a.verbose);
        let props = properties(&a).unwrap();
        assert_eq!(value(&props, "group.id"), Some("g"));
        assert_eq!(value(&props, "bootstrap.servers"), Some("localhost:9092"));
        assert_eq!(value(&props, "share.acknowledgement.mode"), None);
        assert_eq!(value(&props, "mooring.concurrency"), Some("500"));
        ShareConsumerConfig::from_properties(props).unwrap();
    }

    #[test]
    fn values_java_takes_in_any_case_are_taken_in_any_case() {
        let a = args(&[
            "--acknowledgement-mode",
            "SYNC",
            "--offset-reset-strategy",
            "Earliest",
        ])
        .unwrap();
        assert_eq!(a.acknowledgement_mode, AckMode::Sync);
        assert_eq!(a.offset_reset_strategy.value(), Some("earliest"));
        let a = args(&["--offset-reset-strategy", ""]).unwrap();
        assert_eq!(a.offset_reset_strategy, ResetStrategy::Unset);
    }

    #[test]
    fn unknown_flags_and_values_are_usage_errors() {
        for bad in [
            &["--acknowledgement-mode", "manual"][..],
            &["--offset-reset-strategy", "by_duration:PT1H"][..],
            &["--ack-pattern", "accept,renew"][..],
            &["--ack-pattern", "accept,,release"][..],
            &["--max-messages", "many"][..],
            &["--group-protocol", "share"][..],
        ] {
            let err = args(bad).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    ErrorKind::InvalidValue
                        | ErrorKind::ValueValidation
                        | ErrorKind::UnknownArgument
                ),
                "{bad:?}: {err}"
            );
            assert_eq!(err.exit_code(), 2, "{bad:?}");
        }
        let err = Args::try_parse_from(["verifiable-share-consumer", "--topic", "t"]).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
    }

    #[test]
    fn an_ack_pattern_cycles_by_offset_needs_sync_or_async_and_makes_the_consumer_explicit() {
        let a = args(&["--ack-pattern", "accept, RELEASE,reject"]).unwrap();
        assert_eq!(
            (0..4).map(|o| a.ack_pattern.verdict(o)).collect::<Vec<_>>(),
            [
                AckType::Accept,
                AckType::Release,
                AckType::Reject,
                AckType::Accept
            ]
        );
        assert!(check(&a).unwrap_err().contains("'sync' or 'async'"));
        let a = args(&[
            "--ack-pattern",
            "release",
            "--acknowledgement-mode",
            "async",
        ])
        .unwrap();
        check(&a).unwrap();
        let props = properties(&a).unwrap();
        assert_eq!(
            value(&props, "share.acknowledgement.mode"),
            Some("explicit")
        );
        let config = ShareConsumerConfig::from_properties(props).unwrap();
        assert_eq!(config.acknowledgement_mode, AcknowledgementMode::Explicit);
    }

    #[test]
    fn the_file_comes_first_and_the_flags_win() {
        let path = std::env::temp_dir().join(format!("vsc-args-{}.properties", std::process::id()));
        std::fs::write(
            &path,
            "group.id=other\nmax.poll.records=50\nclient.id=me\nmooring.buffer.max.records=70\n",
        )
        .unwrap();
        let a = args(&["--consumer.config", path.to_str().unwrap()]).unwrap();
        let props = properties(&a).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(value(&props, "group.id"), Some("g"));
        assert_eq!(value(&props, "client.id"), Some("me"));
        assert_eq!(value(&props, "mooring.concurrency"), Some("50"));
        assert_eq!(value(&props, "mooring.buffer.max.records"), Some("70"));
        assert_eq!(max_poll_records(&props), 50);
    }

    #[test]
    fn properties_files_as_java_reads_them() {
        let props = parse_properties(
            "# comment\n  ! other\n\nsession.timeout.ms=6000\nclient.id : me\nfetch.max.wait.ms 100\n\
             group.id=a\\\n   b\nkey\\=with\\:seps = v\\u0041\\tx\nempty\nsasl.jaas.config=x \\\\\n\
             session.timeout.ms=7000\n",
        );
        assert_eq!(
            props,
            vec![
                ("client.id".to_owned(), "me".to_owned()),
                ("fetch.max.wait.ms".to_owned(), "100".to_owned()),
                ("group.id".to_owned(), "ab".to_owned()),
                ("key=with:seps".to_owned(), "vA\tx".to_owned()),
                ("empty".to_owned(), String::new()),
                ("sasl.jaas.config".to_owned(), "x \\".to_owned()),
                ("session.timeout.ms".to_owned(), "7000".to_owned()),
            ]
        );
    }
}
