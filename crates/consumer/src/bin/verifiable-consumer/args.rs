//! The command line, Java's `VerifiableConsumer` flags (and Mooring's own two), and the
//! consumer properties it stands for: the `--consumer.config` file first, then the flags over it,
//! then what the reporter needs of the runtime.

use std::path::{Path, PathBuf};

use clap::Parser;

/// The default of `--concurrency`, hence of the largest report ("poll"): Java's
/// `max.poll.records` default.
const MAX_POLL_RECORDS: usize = 500;

#[derive(Debug, Parser)]
#[command(
    name = "verifiable-consumer",
    about = "This tool consumes messages from a specific topic and emits consumer events (e.g. \
             group rebalances, received messages, and offsets committed) as JSON objects to \
             STDOUT. Mooring's implementation of Kafka's VerifiableConsumer."
)]
pub struct Args {
    /// The server(s) to connect to: HOST1:PORT1,HOST2:PORT2,...
    #[arg(
        long = "bootstrap-server",
        value_name = "HOST1:PORT1[,HOST2:PORT2[...]]"
    )]
    pub bootstrap_server: Option<String>,
    /// DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is given.
    #[arg(long = "broker-list", value_name = "HOST1:PORT1[,HOST2:PORT2[...]]")]
    pub broker_list: Option<String>,
    /// Consumes messages from this topic.
    #[arg(long, value_name = "TOPIC")]
    pub topic: String,
    /// Group protocol (must be one of CLASSIC, CONSUMER; any case).
    #[arg(
        long = "group-protocol",
        default_value = "classic",
        value_name = "GROUP_PROTOCOL"
    )]
    pub group_protocol: String,
    /// Group remote assignor (`group.remote.assignor`, e.g. uniform or range); only used if the
    /// group protocol is CONSUMER.
    #[arg(long = "group-remote-assignor", value_name = "GROUP_REMOTE_ASSIGNOR")]
    pub group_remote_assignor: Option<String>,
    /// The group id shared among members of the consumer group.
    #[arg(long = "group-id", value_name = "GROUP_ID")]
    pub group_id: String,
    /// A unique identifier of the consumer instance (static membership).
    #[arg(long = "group-instance-id", value_name = "GROUP_INSTANCE_ID")]
    pub group_instance_id: Option<String>,
    /// Consume this many messages; -1 (the default): until the process is stopped.
    #[arg(
        long = "max-messages",
        default_value_t = -1,
        allow_negative_numbers = true,
        value_name = "MAX-MESSAGES"
    )]
    pub max_messages: i64,
    /// The consumer's session timeout (default: `session.timeout.ms`'s, 45000); not supported
    /// when the group protocol is CONSUMER (the broker sets it).
    #[arg(long = "session-timeout", value_name = "TIMEOUT_MS")]
    pub session_timeout: Option<u64>,
    /// Timeout for closing the consumer (`mooring.shutdown.timeout.ms`): draining, the final
    /// commit and the close all end within it, whatever the brokers do.
    #[arg(
        long = "close-timeout",
        default_value_t = 30000,
        value_name = "CLOSE-TIMEOUT-MS"
    )]
    pub close_timeout: u64,
    /// Log individual consumed records (`record_data` events).
    #[arg(long)]
    pub verbose: bool,
    /// Enable offset auto-commit on the consumer.
    #[arg(long = "enable-autocommit")]
    pub enable_autocommit: bool,
    /// Reset policy: earliest, latest or none.
    #[arg(long = "reset-policy", default_value = "earliest")]
    pub reset_policy: String,
    /// Assignment strategy, as Java class names (org.apache.kafka.clients.consumer.RangeAssignor,
    /// RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor) or Mooring's names (range,
    /// roundrobin, sticky, cooperative-sticky); comma-separated for several. Only used if the
    /// group protocol is CLASSIC.
    #[arg(
        long = "assignment-strategy",
        default_value = "org.apache.kafka.clients.consumer.RangeAssignor"
    )]
    pub assignment_strategy: String,
    /// Consumer config properties file (keys also set by the command line are overridden).
    #[arg(long = "consumer.config", value_name = "CONFIG_FILE")]
    pub consumer_config: Option<PathBuf>,
    /// The same as --consumer.config (Kafka 4.x's name); both may be given, this one wins.
    #[arg(long = "command-config", value_name = "CONFIG_FILE")]
    pub command_config: Option<PathBuf>,
    /// Mooring: wait this long before reporting each batch of records (a slow application).
    #[arg(long = "processing-delay-ms", default_value_t = 0)]
    pub processing_delay_ms: u64,
    /// Mooring: records handled at once (`mooring.concurrency`), so the largest batch one report
    /// holds (the default is Java's `max.poll.records`).
    #[arg(long, default_value_t = MAX_POLL_RECORDS)]
    pub concurrency: usize,
}

/// The consumer's properties: the file first, then the command line over it.
pub fn properties(args: &Args) -> Result<Vec<(String, String)>, String> {
    let protocol = group_protocol(&args.group_protocol)?;
    let bootstrap = args
        .bootstrap_server
        .as_ref()
        .or(args.broker_list.as_ref())
        .ok_or("one of --bootstrap-server or --broker-list is required")?;
    if !["earliest", "latest", "none"].contains(&args.reset_policy.as_str()) {
        return Err(format!(
            "--reset-policy {}: must be earliest, latest or none",
            args.reset_policy
        ));
    }
    if args.concurrency == 0 {
        return Err("--concurrency must be at least 1".into());
    }
    let mut props: Vec<(String, String)> = Vec::new();
    for path in [&args.consumer_config, &args.command_config]
        .into_iter()
        .flatten()
    {
        for (key, value) in read_properties(path)? {
            props.retain(|(k, _)| *k != key);
            props.push((key, value));
        }
    }
    let mut set = |key: &str, value: String| {
        props.retain(|(k, _)| k != key);
        props.push((key.to_owned(), value));
    };
    // As Java's tool: each protocol takes its own assignor flag and ignores the other's.
    set("group.protocol", protocol.into());
    if protocol == "consumer" {
        if let Some(assignor) = &args.group_remote_assignor {
            set("group.remote.assignor", assignor.clone());
        }
    } else {
        set(
            "partition.assignment.strategy",
            assignment_strategy(&args.assignment_strategy)?,
        );
    }
    set("group.id", args.group_id.clone());
    if let Some(id) = &args.group_instance_id {
        set("group.instance.id", id.clone());
    }
    set("bootstrap.servers", bootstrap.clone());
    set("enable.auto.commit", args.enable_autocommit.to_string());
    set("auto.offset.reset", args.reset_policy.clone());
    if let Some(timeout) = args.session_timeout {
        set("session.timeout.ms", timeout.to_string());
    }
    set(
        "mooring.shutdown.timeout.ms",
        args.close_timeout.to_string(),
    );
    // The reporter keeps offset order per partition itself; records must be able to wait for
    // it side by side, like the records of one poll.
    set("mooring.concurrency", args.concurrency.to_string());
    set("mooring.ordering", "none".into());
    set(
        "mooring.buffer.max.records",
        (args.concurrency * 2).max(1000).to_string(),
    );
    set("mooring.failure.policy", "stop".into());
    Ok(props)
}

/// `--group-protocol`, any case (Java's `GroupProtocol.of`) → the property value.
fn group_protocol(value: &str) -> Result<&'static str, String> {
    if value.eq_ignore_ascii_case("classic") {
        Ok("classic")
    } else if value.eq_ignore_ascii_case("consumer") {
        Ok("consumer")
    } else {
        Err(format!(
            "--group-protocol {value}: must be one of CLASSIC, CONSUMER"
        ))
    }
}

/// Java class names (and Mooring's names) → Mooring's names.
fn assignment_strategy(value: &str) -> Result<String, String> {
    let names: Result<Vec<&str>, String> = value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| {
            let short = name.rsplit('.').next().unwrap_or(name);
            match short {
                "RangeAssignor" | "range" => Ok("range"),
                "RoundRobinAssignor" | "roundrobin" => Ok("roundrobin"),
                "StickyAssignor" | "sticky" => Ok("sticky"),
                "CooperativeStickyAssignor" | "cooperative-sticky" => Ok("cooperative-sticky"),
                _ => Err(format!(
                    "--assignment-strategy {name}: unknown; use RangeAssignor, \
                     RoundRobinAssignor, StickyAssignor or CooperativeStickyAssignor \
                     (org.apache.kafka.clients.consumer.*)"
                )),
            }
        })
        .collect();
    let names = names?;
    if names.is_empty() {
        return Err("--assignment-strategy is empty".into());
    }
    Ok(names.join(","))
}

/// A Java properties file: `key=value`, `key: value` or `key value` lines, `#`/`!` comments,
/// a trailing `\` continues the line.
fn read_properties(path: &Path) -> Result<Vec<(String, String)>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--consumer.config {}: {e}", path.display()))?;
    Ok(parse_properties(&text))
}

fn parse_properties(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut logical = String::new();
    for line in text.lines() {
        let line = line.trim_start();
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            logical.push_str(head);
            continue;
        }
        logical.push_str(line);
        let entry = std::mem::take(&mut logical);
        let entry = entry.trim();
        let split = entry
            .find(['=', ':'])
            .or_else(|| entry.find(char::is_whitespace));
        let (key, value) = match split {
            Some(at) => (&entry[..at], &entry[at + 1..]),
            None => (entry, ""),
        };
        let (key, value) = (key.trim().to_owned(), value.trim().to_owned());
        out.retain(|(k, _)| *k != key);
        out.push((key, value));
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use mooring_consumer::{ConsumerConfig, ConsumerError};

    #[test]
    fn java_class_names_map_to_ours() {
        assert_eq!(
            assignment_strategy("org.apache.kafka.clients.consumer.CooperativeStickyAssignor"),
            Ok("cooperative-sticky".to_owned())
        );
        assert_eq!(
            assignment_strategy(
                "org.apache.kafka.clients.consumer.RangeAssignor, \
                 org.apache.kafka.clients.consumer.RoundRobinAssignor,sticky"
            ),
            Ok("range,roundrobin,sticky".to_owned())
        );
        assert!(assignment_strategy("com.example.MyAssignor").is_err());
    }

    #[test]
    fn properties_files_as_java_reads_them() {
        let props = parse_properties(
            "# comment\n! other\n\nsession.timeout.ms=6000\nclient.id : me\nfetch.max.wait.ms 100\n\
             group.id=a\\\n  b\nsession.timeout.ms=7000\n",
        );
        assert_eq!(
            props,
            vec![
                ("client.id".to_owned(), "me".to_owned()),
                ("fetch.max.wait.ms".to_owned(), "100".to_owned()),
                ("group.id".to_owned(), "ab".to_owned()),
                ("session.timeout.ms".to_owned(), "7000".to_owned()),
            ]
        );
    }

    fn args(extra: &[&str]) -> Args {
        let mut all = vec![
            "verifiable-consumer",
            "--bootstrap-server",
            "localhost:9092",
            "--topic",
            "t",
            "--group-id",
            "g",
        ];
        all.extend_from_slice(extra);
        Args::parse_from(all)
    }

    fn value<'a>(props: &'a [(String, String)], key: &str) -> Option<&'a str> {
        props
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn the_consumer_group_protocol_takes_the_remote_assignor_and_no_strategy() {
        let props = properties(&args(&[
            "--group-protocol",
            "CONSUMER",
            "--group-remote-assignor",
            "range",
            "--assignment-strategy",
            "org.apache.kafka.clients.consumer.RoundRobinAssignor",
        ]))
        .unwrap();
        assert_eq!(value(&props, "group.protocol"), Some("consumer"));
        assert_eq!(value(&props, "group.remote.assignor"), Some("range"));
        assert_eq!(value(&props, "partition.assignment.strategy"), None);
        assert_eq!(value(&props, "session.timeout.ms"), None);
        let config = ConsumerConfig::from_properties(props).unwrap();
        let group = config.group.unwrap();
        assert_eq!(group.protocol, mooring_group::GroupProtocol::Consumer);
        assert_eq!(group.remote_assignor.as_deref(), Some("range"));
    }

    #[test]
    fn the_classic_group_protocol_takes_the_strategy_and_ignores_the_remote_assignor() {
        for extra in [&[][..], &["--group-protocol", "classic"][..]] {
            let mut flags = extra.to_vec();
            flags.extend(["--group-remote-assignor", "uniform"]);
            let props = properties(&args(&flags)).unwrap();
            assert_eq!(value(&props, "group.protocol"), Some("classic"));
            assert_eq!(value(&props, "group.remote.assignor"), None);
            assert_eq!(
                value(&props, "partition.assignment.strategy"),
                Some("range")
            );
            ConsumerConfig::from_properties(props).unwrap();
        }
    }

    #[test]
    fn a_session_timeout_under_the_consumer_protocol_is_refused_naming_the_key() {
        let props = properties(&args(&[
            "--group-protocol",
            "consumer",
            "--session-timeout",
            "6000",
        ]))
        .unwrap();
        match ConsumerConfig::from_properties(props) {
            Err(ConsumerError::Config { key, message }) => {
                assert_eq!(key, "session.timeout.ms");
                assert!(message.contains("group.protocol=consumer"), "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_group_protocol_is_refused_naming_the_choices() {
        let err = properties(&args(&["--group-protocol", "streams"])).unwrap_err();
        assert!(err.contains("CLASSIC, CONSUMER"), "{err}");
    }
}
