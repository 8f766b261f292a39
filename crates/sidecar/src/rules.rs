//! `mooring-sidecar rules`: the Prometheus alerting rules, built from the same thresholds as
//! `/alerts`, so the numbers cannot drift. `deploy/prometheus/mooring-rules.yaml` and the
//! PrometheusRule in `deploy/kubernetes/base` are this module's output for the default
//! configuration (a test compares them byte for byte); `deploy/prometheus/README.md` is the
//! runbook the rules point at.
//!
//! Each threshold alert gets a warning and a critical rule judged on the raw series (not on
//! `mooring_alert_level`, so Prometheus judges on its own data and still alerts when a sidecar
//! restarts and forgets its window). Aggregation names the culprit:
//! - per member (`namespace, job, pod`): rebalance duration, poll stall, fencing, the wait for an
//!   unreleased `group.instance.id`;
//! - per group (`namespace, job`): the rebalance count (every member sees the same rebalances;
//!   the largest member count is the group's);
//! - per topic (`namespace, job, topic`): lag (every sidecar of a group reports the whole group's
//!   lag, so a per-pod rule would fire once per member);
//! - share groups: poison records (rejected, and archived after the delivery limit) per group,
//!   summed over its members (each counts its own records, and the data is the group's problem,
//!   whichever member drew the record); lock expiries per member (a slow member's handlers).
//!
//! With the Prometheus Operator a PodMonitor's targets carry `job="<namespace>/<podmonitor>"`,
//! one per StatefulSet, i.e. one per consumer group in `deploy/kubernetes`.
//!
//! Four rules follow the lag status (Burrow's rules, no threshold): a partition STOP (commits
//! stopped with lag), STALL (commits without moving, or held by a live member), REWIND (the
//! committed offset went back), each per partition of a group (every sidecar of the group judges
//! every partition, so the rules take the largest; a STOP is left out where a sidecar says STALL,
//! as the owner's sidecar knows its member is alive), and a group ERR for a while.
//!
//! Two rules watch the sidecar itself: `MooringSidecarDown` (`up == 0` for the targets matched by
//! `rules.scrape.selector`) and `MooringSidecarAbsent` (no such target at all).

use crate::alerts::{AlertKind, Threshold};
use crate::config::SidecarConfig;

/// The labels a group is known by.
const GROUP: &str = "namespace, job";
/// The labels a member is known by.
const MEMBER: &str = "namespace, job, pod";
/// The labels a topic of a group is known by.
const TOPIC: &str = "namespace, job, topic";
/// A completed rebalance's duration is alerted on for this long after it completed.
const RECENT_REBALANCE_SECS: u64 = 3600;
/// Where the runbook is (a path in the repository: the sections are named after the alerts).
const RUNBOOK: &str = "deploy/prometheus/README.md";
/// The labels a partition of a group is known by.
const PARTITION: &str = "namespace, job, topic, partition";
/// `for:` of the STOP and STALL rules.
const LAG_STATUS_FOR_SECS: u64 = 300;
/// `for:` of the group ERR rule.
const GROUP_ERR_FOR_SECS: u64 = 900;
/// `for:` of the sidecar-down rule.
const DOWN_FOR_SECS: u64 = 300;
/// `for:` of the sidecar-absent rule.
const ABSENT_FOR_SECS: u64 = 900;

/// Output formats of `mooring-sidecar rules`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Prometheus rule file (`groups:`), for `promtool` and `rule_files`.
    Rules,
    /// A Prometheus Operator `PrometheusRule` (`spec.groups`), for `deploy/kubernetes/base`.
    PrometheusRule,
}

/// One alerting rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// `alert:`.
    pub name: String,
    /// `expr:`.
    pub expr: String,
    /// `for:` in seconds (0: none).
    pub for_secs: u64,
    /// `severity` label.
    pub severity: &'static str,
    /// `alert` label (the `/alerts` name; `sidecar` for the sidecar's own rules).
    pub alert: &'static str,
    /// The summary annotation (Prometheus templates allowed).
    pub summary: String,
    /// The description annotation.
    pub description: String,
}

impl Rule {
    /// The name without its level (`MooringRebalances`): the runbook's section.
    pub fn family(&self) -> &str {
        self.name
            .strip_suffix("Warning")
            .or_else(|| self.name.strip_suffix("Critical"))
            .unwrap_or(&self.name)
    }
}

/// `for:` of a threshold alert's (warning, critical) rules, in seconds: zero where the value is
/// already a count over a window or a fact that does not flap; longer for lag, which is spiky.
fn for_secs(kind: AlertKind) -> (u64, u64) {
    match kind {
        // A 24 h count moves only on rebalances: 1 m rides out a scrape gap or a restart.
        AlertKind::Rebalances => (60, 60),
        // The duration of a completed rebalance, or a fencing, is a fact: alert at once.
        AlertKind::RebalanceDurationSeconds | AlertKind::Fenced => (0, 0),
        // Lag jumps with every produce burst and falls with every commit.
        AlertKind::LagRecords | AlertKind::LagSeconds => (600, 300),
        // The value already is a duration (seconds without progress).
        AlertKind::PollStallSeconds => (60, 60),
        // A duration too, and it restarts from 0 when the member gives up and its pod restarts.
        AlertKind::InstanceIdUnreleasedSeconds => (0, 0),
        // Counts over a window of records that are facts (a poison record, an archive, a lock
        // that ran out): alert at once.
        AlertKind::ShareRejected | AlertKind::ShareArchived | AlertKind::ShareLockExpired => (0, 0),
    }
}

/// The PromQL value an alert is judged on, with the labels that name the culprit.
fn value(kind: AlertKind, t: &Threshold) -> String {
    let window = duration(t.window.map_or(0, |w| w.as_secs().max(1)));
    match kind {
        // Summed over causes and over a restarted pod's series (a new instance label), then the
        // largest member's count: the group's. Rounded: increase() extrapolates to the window's
        // edges (10 rebalances can read 10.01), and the thresholds count whole rebalances.
        AlertKind::Rebalances => format!(
            "max by ({GROUP}) (round(sum by ({MEMBER}) (increase(mooring_rebalances_total[{window}]))))"
        ),
        AlertKind::Fenced => format!(
            "round(sum by ({MEMBER}) (increase(mooring_fenced_total[{window}])))"
        ),
        // Prometheus sees completed rebalances only (a running one shows as unready members and
        // as lag); the gauge keeps the last one's duration, so only a recent one alerts.
        AlertKind::RebalanceDurationSeconds => format!(
            "max by ({MEMBER}) (mooring_last_rebalance_duration_seconds and time() - mooring_last_rebalance_timestamp_seconds < {RECENT_REBALANCE_SECS})"
        ),
        AlertKind::LagRecords => format!("max by ({TOPIC}) (mooring_partition_lag_records)"),
        AlertKind::LagSeconds => format!("max by ({TOPIC}) (mooring_partition_lag_seconds)"),
        AlertKind::PollStallSeconds => format!("max by ({MEMBER}) (mooring_poll_stale_seconds)"),
        AlertKind::InstanceIdUnreleasedSeconds => {
            format!("max by ({MEMBER}) (mooring_instance_id_unreleased_wait_seconds)")
        }
        AlertKind::ShareRejected => format!(
            "round(sum by ({GROUP}) (increase(mooring_share_records_rejected_total[{window}])))"
        ),
        AlertKind::ShareArchived => format!(
            "round(sum by ({GROUP}) (increase(mooring_share_records_archived_total[{window}])))"
        ),
        AlertKind::ShareLockExpired => format!(
            "round(sum by ({MEMBER}) (increase(mooring_share_lock_expired_total[{window}])))"
        ),
    }
}

fn title(kind: AlertKind) -> &'static str {
    match kind {
        AlertKind::Rebalances => "MooringRebalances",
        AlertKind::Fenced => "MooringFenced",
        AlertKind::RebalanceDurationSeconds => "MooringRebalanceDuration",
        AlertKind::LagRecords => "MooringLagRecords",
        AlertKind::LagSeconds => "MooringLagSeconds",
        AlertKind::PollStallSeconds => "MooringPollStall",
        AlertKind::InstanceIdUnreleasedSeconds => "MooringInstanceIdUnreleased",
        AlertKind::ShareRejected => "MooringShareRecordsRejected",
        AlertKind::ShareArchived => "MooringShareRecordsArchived",
        AlertKind::ShareLockExpired => "MooringShareLocksExpired",
    }
}

/// (summary with `{value}` and `{bound}` placeholders, description).
fn texts(kind: AlertKind, t: &Threshold) -> (String, String) {
    let window = duration(t.window.map_or(0, |w| w.as_secs().max(1)));
    let member = "{{ $labels.namespace }}/{{ $labels.pod }}";
    let group = "{{ $labels.job }}";
    match kind {
        AlertKind::Rebalances => (
            format!("Consumer group {group}: {{value}} rebalances in {window} ({{bound}})"),
            format!("A member of {group} took part in {{{{ $value }}}} rebalances in the last {window} (consumer protocol: reconciliations that moved its partitions; an epoch bump that moved none is not counted). Static members that restart within session.timeout.ms cause none; see /debug/rebalances on any member's sidecar for each one's cause, and mooring_rebalances_total by cause."),
        ),
        AlertKind::Fenced => (
            format!("Member {member} was fenced {{value}} times in {window} ({{bound}})"),
            "FENCED_INSTANCE_ID: two live members used one group.instance.id (a surge, a copied pod name, a zombie after a network partition). The fenced member stops; find the duplicate id.".to_string(),
        ),
        AlertKind::RebalanceDurationSeconds => (
            format!("Member {member}: the last rebalance took {{value}} s ({{bound}})"),
            format!("A rebalance completed in the last {} took long; every member stops consuming the revoked partitions meanwhile. /debug/rebalances shows each phase (join, sync, revoke and assign callbacks).", duration(RECENT_REBALANCE_SECS)),
        ),
        AlertKind::LagRecords => (
            format!("Group {group}, topic {{{{ $labels.topic }}}}: a partition lags {{value}} records ({{bound}})"),
            "The largest committed-offset lag of the topic's partitions. The dashboard's lag row shows which partition and member; /debug/partitions on a sidecar shows positions, commits and pauses.".to_string(),
        ),
        AlertKind::LagSeconds => (
            format!("Group {group}, topic {{{{ $labels.topic }}}}: a partition lags {{value}} s ({{bound}})"),
            "Estimated time lag (now minus when the committed offset was the high watermark). The dashboard's lag row shows which partition and member.".to_string(),
        ),
        AlertKind::PollStallSeconds => (
            format!("Member {member}: no processing progress for {{value}} s while records wait ({{bound}})"),
            "The processing loop has made no progress although records or handlers are waiting: a stuck handler, a deadlock, or a downstream that never answers. Past the critical threshold the sidecar's /healthz fails and the kubelet restarts the consumer.".to_string(),
        ),
        AlertKind::InstanceIdUnreleasedSeconds => (
            format!("Member {member} has waited {{value}} s for its group.instance.id ({{bound}})"),
            "consumer protocol: UNRELEASED_INSTANCE_ID, the process this static member replaces still holds its group.instance.id (a surge rollout whose old pod has not stopped, or a predecessor that died without leaving and whose session has not expired). The member retries and stays Ready meanwhile (deploy/README.md); after mooring.unreleased.instance.timeout.ms it gives up. Find the other holder of the id: /debug/group's broker_view lists each member's instance id and epoch.".to_string(),
        ),
        AlertKind::ShareRejected => (
            format!("Share group {group}: {{value}} records rejected as poison in {window} ({{bound}})"),
            "Handlers rejected these records (RejectRecord, or the failure policy reject): the broker archives them, or sends them to the group's dead-letter topic, and never delivers them again. Bad data upstream or a handler bug; the consumers' logs name each record's partition and offset.".to_string(),
        ),
        AlertKind::ShareArchived => (
            format!("Share group {group}: {{value}} records archived after the delivery limit in {window} ({{bound}})"),
            "Records released (a handler error) at a delivery count at or above the group's share.delivery.count.limit (mooring_share_delivery_count_limit): the broker archives them instead of delivering them again, so they were never processed. A handler that fails on these records every time (poison it does not reject), or a downstream that is down; mooring_share_records_acquired_by_delivery_total shows redeliveries building up.".to_string(),
        ),
        AlertKind::ShareLockExpired => (
            format!("Member {member}: {{value}} share acquisition locks ran out before a verdict in {window} ({{bound}})"),
            "The member's handlers gave verdicts after the records' acquisition locks had run out (handlers slower than share.record.lock.duration.ms with lock renewal off or refused, or held past max.poll.interval.ms): the broker had handed the records to another member, so they are processed twice and their delivery counts climb towards the limit. mooring_share_lock_renewals_refused_total and _given_up_total tell which.".to_string(),
        ),
    }
}

/// The threshold alerts (warning and critical) and the sidecar's own.
pub fn rules(config: &SidecarConfig) -> Vec<Rule> {
    let mut out = Vec::new();
    for kind in AlertKind::ALL {
        let t = config.threshold(kind);
        let value = value(kind, &t);
        let (lo, hi) = (fmt_num(t.warning), fmt_num(t.critical));
        let (summary, description) = texts(kind, &t);
        let (warn_for, crit_for) = for_secs(kind);
        let shown = "{{ $value | humanize }}";
        // An empty warning band (warning above critical, as fencing's 1 / 0: any fencing is
        // critical) has no warning rule.
        if t.warning <= t.critical {
            out.push(Rule {
                name: format!("{}Warning", title(kind)),
                // `>= lo <= hi` filters twice and keeps the value: the warning band, evaluated once.
                expr: format!("{value} >= {lo} <= {hi}"),
                for_secs: warn_for,
                severity: "warning",
                alert: kind.as_str(),
                summary: summary
                    .replace("{value}", shown)
                    .replace("{bound}", &format!("warning from {lo}")),
                description: description.clone(),
            });
        }
        out.push(Rule {
            name: format!("{}Critical", title(kind)),
            expr: format!("{value} > {hi}"),
            for_secs: crit_for,
            severity: "critical",
            alert: kind.as_str(),
            summary: summary
                .replace("{value}", shown)
                .replace("{bound}", &format!("critical above {hi}")),
            description,
        });
    }
    out.extend(lag_status_rules());
    let selector = &config.rules_scrape_selector;
    out.push(Rule {
        name: "MooringSidecarDown".into(),
        expr: format!("up{{{selector}}} == 0"),
        for_secs: DOWN_FOR_SECS,
        severity: "critical",
        alert: "sidecar",
        summary: "Sidecar of {{ $labels.namespace }}/{{ $labels.pod }} is not scraped".into(),
        description: format!("Prometheus cannot scrape the sidecar's /metrics ({{{{ $labels.instance }}}}). The probes ask the sidecar, so the consumer is restarted too; with the sidecar down no other Mooring alert fires for this member. Selector: rules.scrape.selector = {selector}."),
    });
    out.push(Rule {
        name: "MooringSidecarAbsent".into(),
        expr: format!("absent(up{{{selector}}})"),
        for_secs: ABSENT_FOR_SECS,
        severity: "warning",
        alert: "sidecar",
        summary: "No Mooring sidecar is scraped at all".into(),
        description: format!("No scrape target matches rules.scrape.selector = {selector}: the PodMonitor is not picked up (the Prometheus's podMonitorSelector), the pods are gone, or the selector does not fit this Prometheus's job names; every other Mooring alert is blind."),
    });
    out
}

/// The lag status rules: STOP, STALL and REWIND partitions, ERR groups.
fn lag_status_rules() -> Vec<Rule> {
    let status = |s: &str| {
        format!("max by ({PARTITION}) (mooring_partition_lag_status{{status=\"{s}\"}}) == 1")
    };
    let partition =
        "Group {{ $labels.job }}, partition {{ $labels.topic }}-{{ $labels.partition }}";
    let evidence = "/debug/lag on a sidecar of the group shows the partition's window of commits, its owner and what the member said (paused, a handler past its time).";
    vec![
        Rule {
            name: "MooringLagStopped".into(),
            expr: format!("{} unless on ({PARTITION}) {}", status("STOP"), status("STALL")),
            for_secs: LAG_STATUS_FOR_SECS,
            severity: "critical",
            alert: "lag_status",
            summary: format!("{partition}: commits stopped with records waiting (STOP)"),
            description: format!("No commit for longer than the span of the partition's window of commits, and no recent look-up saw it caught up: its member is gone or hung, or the partition is assigned to no one. {evidence}"),
        },
        Rule {
            name: "MooringLagStalled".into(),
            expr: status("STALL"),
            for_secs: LAG_STATUS_FOR_SECS,
            severity: "critical",
            alert: "lag_status",
            summary: format!("{partition}: the member holds it without moving (STALL)"),
            description: format!("The member commits the same offset again and again with lag, or (a Mooring member) is alive and holds the partition paused or with a handler past max.poll.interval.ms. {evidence}"),
        },
        Rule {
            name: "MooringLagRewound".into(),
            expr: status("REWIND"),
            for_secs: 0,
            severity: "warning",
            alert: "lag_status",
            summary: format!("{partition}: the committed offset went back (REWIND)"),
            description: format!("A commit below the one before it, within the window: an offset reset, a seek backwards committed, or a member committing stale offsets; records after it are processed again. {evidence}"),
        },
        Rule {
            name: "MooringGroupLagError".into(),
            expr: format!("max by ({GROUP}) (mooring_group_lag_status{{status=\"ERR\"}}) == 1"),
            for_secs: GROUP_ERR_FOR_SECS,
            severity: "warning",
            alert: "lag_status",
            summary: "Group {{ $labels.job }} has been ERR for 15 minutes: a partition STOP, STALL or REWIND".into(),
            description: format!("Burrow's group status: ERR while any partition is in error, whichever it is from one minute to the next. {evidence}"),
        },
    ]
}

/// The rule file or the PrometheusRule, as YAML.
pub fn render_as(config: &SidecarConfig, format: Format) -> String {
    let mut out = String::from(
        "# Generated by `mooring-sidecar rules` from the sidecar's configuration: edit the config, not this file.\n",
    );
    let indent = match format {
        Format::Rules => {
            out.push_str(
                "# Regenerate: cargo run -p mooring-sidecar -- rules > deploy/prometheus/mooring-rules.yaml\ngroups:\n",
            );
            ""
        }
        Format::PrometheusRule => {
            out.push_str(
                "# Regenerate: cargo run -p mooring-sidecar -- rules --format prometheus-rule > deploy/kubernetes/base/prometheusrule.yaml\n\
                 apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: consumer\nspec:\n  groups:\n",
            );
            "  "
        }
    };
    out.push_str(&format!(
        "{indent}  - name: mooring-sidecar\n{indent}    rules:\n"
    ));
    let pad = format!("{indent}      ");
    for rule in rules(config) {
        out.push_str(&format!("{pad}- alert: {}\n", rule.name));
        out.push_str(&format!("{pad}  expr: {}\n", yaml_str(&rule.expr)));
        if rule.for_secs > 0 {
            out.push_str(&format!("{pad}  for: {}\n", duration(rule.for_secs)));
        }
        out.push_str(&format!(
            "{pad}  labels:\n{pad}    severity: {}\n{pad}    alert: {}\n",
            rule.severity, rule.alert
        ));
        out.push_str(&format!(
            "{pad}  annotations:\n{pad}    summary: {}\n{pad}    description: {}\n{pad}    runbook: {}\n",
            yaml_str(&rule.summary),
            yaml_str(&rule.description),
            yaml_str(&format!("{RUNBOOK}#{}", rule.family().to_lowercase()))
        ));
    }
    out
}

/// The rule file (`groups:`).
pub fn render(config: &SidecarConfig) -> String {
    render_as(config, Format::Rules)
}

/// A YAML double-quoted scalar.
fn yaml_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Prometheus duration: the largest whole unit (`1d`, `6h`, `5m`, `90s`).
pub fn duration(secs: u64) -> String {
    match secs {
        0 => "0s".to_string(),
        s if s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_use_the_largest_whole_unit() {
        assert_eq!(duration(86_400), "1d");
        assert_eq!(duration(7200), "2h");
        assert_eq!(duration(300), "5m");
        assert_eq!(duration(90), "90s");
        assert_eq!(duration(1), "1s");
    }

    #[test]
    fn an_empty_warning_band_has_no_warning_rule() {
        let c = SidecarConfig::from_toml("").expect("defaults");
        let names: Vec<String> = rules(&c).into_iter().map(|r| r.name).collect();
        assert!(names.contains(&"MooringFencedCritical".to_string()));
        assert!(!names.contains(&"MooringFencedWarning".to_string()));
        assert!(names.contains(&"MooringRebalancesWarning".to_string()));
        assert!(names.contains(&"MooringSidecarDown".to_string()));
    }

    #[test]
    fn the_thresholds_are_the_configs() {
        let c = SidecarConfig::from_toml(
            "[alerts.rebalances]\nwarning = 4\ncritical = 12\n\"window.ms\" = 3600000\n",
        )
        .expect("valid");
        let r = rules(&c);
        let warn = r
            .iter()
            .find(|r| r.name == "MooringRebalancesWarning")
            .expect("warning rule");
        assert!(warn.expr.ends_with("[1h])))) >= 4 <= 12"), "{}", warn.expr);
        let crit = r
            .iter()
            .find(|r| r.name == "MooringRebalancesCritical")
            .expect("critical rule");
        assert!(crit.expr.ends_with(" > 12"), "{}", crit.expr);
    }

    #[test]
    fn quotes_in_the_selector_are_escaped() {
        assert_eq!(yaml_str(r#"up{job="a"}"#), r#""up{job=\"a\"}""#);
    }
}
