//! The CI check of what operators import: the committed rule files are exactly what
//! `mooring-sidecar rules` prints for the default configuration (and for the deployed
//! `sidecar.toml`), every PromQL expression of the Grafana dashboards and the rules parses
//! (`promtool check rules`), every metric it names is one a live sidecar exports, and on a real
//! Prometheus scraping that sidecar every rule evaluates cleanly and every dashboard query returns
//! series.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod promql;
mod support;

use std::path::{Path, PathBuf};

use mooring_sidecar::rules::{self, Format};
use mooring_sidecar::SidecarConfig;
use support::prometheus::{Prometheus, Target};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const RULES_FILE: &str = "deploy/prometheus/mooring-rules.yaml";
const PROMETHEUS_RULE: &str = "deploy/kubernetes/base/prometheusrule.yaml";

#[test]
fn the_committed_rule_file_is_the_generated_one() {
    let want = rules::render(&SidecarConfig::from_toml("").unwrap());
    assert!(
        read(RULES_FILE) == want,
        "{RULES_FILE} differs from `mooring-sidecar rules` with the default configuration; \
         regenerate it: cargo run -p mooring-sidecar -- rules > {RULES_FILE} \
         (then python3 deploy/prometheus/gen-rule-tests.py > deploy/prometheus/mooring-rules.test.yaml \
         if the texts changed, and promtool test rules deploy/prometheus/mooring-rules.test.yaml)"
    );
}

#[test]
fn the_committed_prometheus_rule_is_the_generated_one() {
    let want = rules::render_as(
        &SidecarConfig::from_toml("").unwrap(),
        Format::PrometheusRule,
    );
    assert!(
        read(PROMETHEUS_RULE) == want,
        "{PROMETHEUS_RULE} differs from `mooring-sidecar rules --format prometheus-rule`; regenerate it: \
         cargo run -p mooring-sidecar -- rules --format prometheus-rule > {PROMETHEUS_RULE}"
    );
    // The same rules in both, the PrometheusRule's indented under spec.
    let groups = |text: &str, indent: &str| -> Vec<String> {
        text.lines()
            .skip_while(|l| !l.trim_start().starts_with("- name: mooring-sidecar"))
            .map(|l| l.strip_prefix(indent).unwrap_or(l).to_string())
            .collect()
    };
    assert_eq!(
        groups(&read(PROMETHEUS_RULE), "  "),
        groups(&read(RULES_FILE), "")
    );
}

/// The pods run with `deploy/kubernetes/base/config/sidecar.toml`: its thresholds must be the
/// defaults the committed rules were generated from, or the PrometheusRule would judge on other
/// numbers than the pods' `/alerts`.
#[test]
fn the_deployed_sidecar_config_yields_the_same_rules() {
    let deployed = read("deploy/kubernetes/base/config/sidecar.toml");
    // The Kafka values the StatefulSet sets from the environment.
    let text = format!(
        "\"bootstrap.servers\" = \"kafka:9093\"\n\"group.id\" = \"g\"\n\"sasl.username\" = \"u\"\n\"sasl.password\" = \"p\"\n{deployed}"
    );
    let config = SidecarConfig::from_toml(&text).unwrap();
    assert!(
        rules::render(&config) == read(RULES_FILE),
        "deploy/kubernetes/base/config/sidecar.toml sets other thresholds than the defaults: \
         regenerate the rules from it (mooring-sidecar --config ... rules) and commit both files"
    );
}

#[test]
fn a_bad_scrape_selector_is_refused() {
    for bad in ["", "{job=\"x\"}"] {
        let e = SidecarConfig::from_toml(&format!("\"rules.scrape.selector\" = '{bad}'\n"))
            .unwrap_err();
        assert!(e.to_string().contains("rules.scrape.selector"), "{e}");
    }
    let c = SidecarConfig::from_toml("\"rules.scrape.selector\" = 'job=\"kubernetes-pods\"'\n")
        .unwrap();
    assert!(rules::render(&c).contains(r#"up{job=\"kubernetes-pods\"} == 0"#));
}

// ---------------------------------------------------------------------------------------------
// The dashboards and the rules' PromQL.

/// One PromQL expression and where it comes from.
#[derive(Debug, Clone)]
struct Query {
    origin: String,
    /// With Grafana's variables substituted.
    expr: String,
}

fn dashboard_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("dashboards"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no dashboards/*.json");
    files
}

fn load(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap())
        .unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

/// Every panel, rows' nested ones included.
fn all_panels(dashboard: &serde_json::Value) -> Vec<&serde_json::Value> {
    fn walk<'a>(list: &'a serde_json::Value, out: &mut Vec<&'a serde_json::Value>) {
        for p in list.as_array().into_iter().flatten() {
            out.push(p);
            walk(&p["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&dashboard["panels"], &mut out);
    out
}

fn variables(dashboard: &serde_json::Value) -> Vec<String> {
    dashboard["templating"]["list"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str().map(str::to_string))
        .collect()
}

/// Every expression of every dashboard (panel targets, template variable queries, annotation
/// queries) and of the rule files in deploy/prometheus.
fn queries() -> Vec<Query> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for path in dashboard_files() {
        let d = load(&path);
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let vars = variables(&d);
        let mut push = |origin: String, raw: &str| match promql::substitute(raw, &vars) {
            Ok(expr) => out.push(Query { origin, expr }),
            Err(e) => errors.push(format!("{origin}: {e}")),
        };
        for p in all_panels(&d) {
            for t in p["targets"].as_array().into_iter().flatten() {
                if let Some(expr) = t["expr"].as_str() {
                    push(
                        format!(
                            "{file} panel {} \"{}\" target {}",
                            p["id"],
                            p["title"].as_str().unwrap_or(""),
                            t["refId"].as_str().unwrap_or("?")
                        ),
                        expr,
                    );
                }
            }
        }
        for v in d["templating"]["list"].as_array().into_iter().flatten() {
            if v["type"] != "query" {
                continue;
            }
            let q = v["query"]["query"]
                .as_str()
                .or_else(|| v["query"].as_str())
                .unwrap_or_default();
            if let Some(expr) = promql::variable_expr(q) {
                push(
                    format!("{file} variable ${}", v["name"].as_str().unwrap_or("?")),
                    &expr,
                );
            }
        }
        for a in d["annotations"]["list"].as_array().into_iter().flatten() {
            if let Some(expr) = a["expr"].as_str() {
                push(
                    format!(
                        "{file} annotation \"{}\"",
                        a["name"].as_str().unwrap_or("?")
                    ),
                    expr,
                );
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    for path in std::fs::read_dir(repo().join("deploy/prometheus")).unwrap() {
        let path = path.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".yaml") || name.ends_with(".test.yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let mut alert = String::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(a) = line.strip_prefix("- alert: ") {
                alert = a.to_string();
            } else if let Some(e) = line.strip_prefix("expr: ") {
                let expr: String = serde_json::from_str(e).unwrap_or_else(|err| {
                    panic!("{name} {alert}: expr is not a quoted string ({err})")
                });
                out.push(Query {
                    origin: format!("{name} alert {alert}"),
                    expr,
                });
            }
        }
    }
    out
}

fn promtool_check(path: &Path) -> (bool, String) {
    let out = std::process::Command::new("promtool")
        .arg("check")
        .arg("rules")
        .arg(path)
        .output()
        .expect("promtool (apt-get install -y prometheus; scripts/setup does)");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Every expression as a recording rule of its own group, named after its origin, in one file:
/// one promtool run parses them all and names the offending ones' groups.
#[test]
fn every_query_parses() {
    let queries = queries();
    let mut file = String::from("groups:\n");
    for (i, q) in queries.iter().enumerate() {
        file.push_str(&format!(
            "  - name: {}\n    rules:\n      - record: mooring_dashboard_check:expr_{i}\n        expr: {}\n",
            serde_json::to_string(&format!("{i}: {}", q.origin)).unwrap(),
            serde_json::to_string(&q.expr).unwrap()
        ));
    }
    let path = std::env::temp_dir().join(format!(
        "mooring-dashboard-queries-{}.yml",
        std::process::id()
    ));
    std::fs::write(&path, &file).unwrap();
    let (ok, output) = promtool_check(&path);
    let _ = std::fs::remove_file(&path);
    assert!(ok, "queries that do not parse (group = where):\n{output}");
    assert!(
        output.contains(&format!("SUCCESS: {} rules found", queries.len())),
        "{output}"
    );
    println!(
        "{} PromQL expressions parse (dashboards and rules)",
        queries.len()
    );
}

/// Grafana's import needs these; panel ids must be unique (rows' nested panels included), and
/// every query goes to the `${datasource}` variable.
#[test]
fn dashboards_have_the_required_fields_and_unique_panel_ids() {
    for path in dashboard_files() {
        let d = load(&path);
        let file = path.display().to_string();
        for key in [
            "uid",
            "title",
            "schemaVersion",
            "panels",
            "templating",
            "time",
            "annotations",
            "version",
        ] {
            assert!(!d[key].is_null(), "{file}: no top-level `{key}`");
        }
        let schema = d["schemaVersion"].as_u64().unwrap_or(0);
        assert!(
            (39..=41).contains(&schema),
            "{file}: schemaVersion {schema} is not Grafana 11's"
        );
        let ds = d["templating"]["list"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == "datasource")
            .unwrap_or_else(|| panic!("{file}: no `datasource` template variable"));
        assert_eq!(ds["type"], "datasource", "{file}");
        assert_eq!(ds["query"], "prometheus", "{file}");
        let mut ids = std::collections::BTreeSet::new();
        let panels = all_panels(&d);
        assert!(panels.len() > 10, "{file}: {} panels", panels.len());
        for p in &panels {
            let id = p["id"]
                .as_u64()
                .unwrap_or_else(|| panic!("{file}: a panel without id: {}", p["title"]));
            assert!(ids.insert(id), "{file}: panel id {id} twice");
            for k in ["type", "title", "gridPos"] {
                assert!(!p[k].is_null(), "{file} panel {id}: no `{k}`");
            }
            if p["type"] == "row" {
                continue;
            }
            assert_eq!(p["datasource"]["uid"], "${datasource}", "{file} panel {id}");
            let targets = p["targets"]
                .as_array()
                .unwrap_or_else(|| panic!("{file} panel {id}: no targets"));
            assert!(!targets.is_empty(), "{file} panel {id}: no targets");
            let mut refs = std::collections::BTreeSet::new();
            for t in targets {
                assert!(
                    t["expr"].as_str().is_some_and(|e| !e.is_empty()),
                    "{file} panel {id}: a target without expr"
                );
                assert!(
                    refs.insert(t["refId"].as_str().unwrap_or_default().to_string()),
                    "{file} panel {id}: refId twice"
                );
                assert_eq!(t["datasource"]["uid"], "${datasource}", "{file} panel {id}");
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// A live sidecar: every metric the queries name must be one it exports.

mod live {
    use std::net::SocketAddr;
    use std::time::{Duration, Instant};

    use mooring_consumer::processing::ConsumerRecord;
    use mooring_consumer::share::ShareConsumer;
    use mooring_consumer::Consumer;
    use mooring_testkit::{unique, Cluster};

    use super::common::get;
    use super::support::{consumer, exporter, run, share, stop, watching_sidecar};

    /// `# TYPE` families, histogram families, sample names.
    pub struct Exported {
        pub families: Vec<String>,
        pub histograms: Vec<String>,
        pub samples: Vec<String>,
    }

    fn parse(text: &str) -> Exported {
        let mut e = Exported {
            families: Vec::new(),
            histograms: Vec::new(),
            samples: Vec::new(),
        };
        for line in text.lines() {
            if let Some(t) = line.strip_prefix("# TYPE ") {
                let mut parts = t.split_whitespace();
                let (name, kind) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
                e.families.push(name.to_string());
                if kind == "histogram" {
                    e.histograms.push(name.to_string());
                }
            } else if !line.starts_with('#') && !line.is_empty() {
                let name = line.split(['{', ' ']).next().unwrap_or("").to_string();
                if !e.samples.contains(&name) {
                    e.samples.push(name);
                }
            }
        }
        e
    }

    /// A sidecar watching a real group whose member (a Mooring consumer) exports telemetry to it
    /// and has consumed and committed, and one watching a share group whose member (a Mooring
    /// share consumer) has accepted, rejected and archived records: every family, the labelled
    /// ones too, has samples on one of them.
    pub struct Busy {
        pub addr: SocketAddr,
        /// The share group's sidecar.
        pub share_addr: SocketAddr,
        /// What both export.
        pub exported: Exported,
        cluster: Cluster,
        topic: String,
        sidecar: mooring_sidecar::Running,
        consumer: Consumer,
        run: tokio::task::JoinHandle<Result<(), mooring_consumer::ConsumerError>>,
        export: mooring_consumer::telemetry::ExporterHandle,
        share_topic: String,
        share_sidecar: mooring_sidecar::Running,
        share_consumer: ShareConsumer,
        share_run: tokio::task::JoinHandle<Result<(), mooring_consumer::ConsumerError>>,
        share_export: mooring_consumer::telemetry::ExporterHandle,
    }

    /// Polls `addr`'s `/metrics` until every one of `wanted` has samples.
    async fn exporting(addr: SocketAddr, wanted: &[&str]) -> Exported {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let (_, text) = get(addr, "/metrics").await;
            let e = parse(&text);
            let missing: Vec<&str> = wanted
                .iter()
                .copied()
                .filter(|w| !e.samples.iter().any(|s| s == w))
                .collect();
            if missing.is_empty() {
                return e;
            }
            assert!(
                Instant::now() < deadline,
                "the sidecar never exported {missing:?}:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// Both sidecars' families and samples, each once.
    fn union(a: Exported, b: Exported) -> Exported {
        let merge = |mut x: Vec<String>, y: Vec<String>| {
            for n in y {
                if !x.contains(&n) {
                    x.push(n);
                }
            }
            x
        };
        Exported {
            families: merge(a.families, b.families),
            histograms: merge(a.histograms, b.histograms),
            samples: merge(a.samples, b.samples),
        }
    }

    impl Busy {
        pub async fn start() -> Busy {
            let cluster = Cluster::shared();
            let topic = unique("dashboards");
            let group = unique("dashboards-g");
            cluster.create_topic(&topic, 2);
            cluster.produce_perf(&topic, 200, 100);
            let sidecar = watching_sidecar(&cluster, &group, 300, "").await;
            let addr: SocketAddr = sidecar.addr;
            let consumer = consumer(
                &cluster,
                &group,
                &topic,
                &[
                    ("heartbeat.interval.ms", "500"),
                    ("auto.commit.interval.ms", "200"),
                    // The zones row's share needs the member's rack.
                    ("client.rack", "r1"),
                ],
            );
            let export = exporter(&consumer, addr);
            let run = run(&consumer, |_r: ConsumerRecord| async move {
                Ok::<(), String>(())
            });
            // The share group: a share consumer whose records are accepted, rejected (poison)
            // and archived (released at the group's delivery limit of 2).
            let share_topic = unique("dashboards-share");
            cluster.create_topic(&share_topic, 2);
            let share_group = share::share_group(&cluster, 2);
            for (value, count) in [
                (share::ACCEPT, 20),
                (share::REJECT, 2),
                (share::ALWAYS_FAIL, 2),
            ] {
                cluster.produce_payload(&share_topic, count, value, &[]);
            }
            let share_sidecar = watching_sidecar(&cluster, &share_group, 300, "").await;
            let share_addr = share_sidecar.addr;
            let (share_consumer, share_export) =
                share::share_consumer(&cluster, &share_group, &share_topic, share_addr);
            let share_run = share::run(&share_consumer);
            // Until the labelled vectors have samples: lag and its status (the watcher, from the
            // group's commits) and telemetry by type; and the handler histogram from a snapshot.
            let wanted = [
                "mooring_partition_lag_records",
                "mooring_partition_lag_seconds",
                "mooring_partition_lag_status",
                "mooring_group_lag_status",
                "mooring_telemetry_events_received_total",
                "mooring_handler_duration_seconds_bucket",
                "mooring_commit_duration_seconds_bucket",
                "mooring_fetch_record_bytes_total",
                "mooring_fetch_cross_rack_ratio",
            ];
            let exported = exporting(addr, &wanted).await;
            // The share sidecar: its counters (archived once it read the delivery limit), the
            // share-partitions' start offsets and lag from its watch.
            let share_wanted = [
                "mooring_share_records_rejected_total",
                "mooring_share_records_archived_total",
                "mooring_share_records_acquired_by_delivery_total",
                "mooring_share_partition_start_offset",
                "mooring_partition_lag_records",
            ];
            let share_exported = exporting(share_addr, &share_wanted).await;
            Busy {
                addr,
                share_addr,
                exported: union(exported, share_exported),
                cluster,
                topic,
                sidecar,
                consumer,
                run,
                export,
                share_topic,
                share_sidecar,
                share_consumer,
                share_run,
                share_export,
            }
        }

        pub async fn stop(self) {
            stop(&self.consumer, self.run).await;
            self.export.shutdown().await;
            self.sidecar.shutdown().await;
            share::stop(&self.share_consumer, self.share_run).await;
            self.share_export.shutdown().await;
            self.share_sidecar.shutdown().await;
            self.cluster.delete_topic(&self.topic);
            self.cluster.delete_topic(&self.share_topic);
        }
    }
}

/// Every metric a query names is exported by a live sidecar; then a real Prometheus scrapes that
/// sidecar (with a PodMonitor target's labels) and loads the rule files: every rule evaluates
/// without error, and every dashboard query evaluates without error and returns series.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_query_names_live_metrics_and_evaluates_on_a_real_prometheus() {
    let queries = queries();
    let busy = live::Busy::start().await;
    let exported = &busy.exported;
    // Prometheus's own series.
    let builtin = ["up"];
    let mut missing = Vec::new();
    let mut checked = std::collections::BTreeSet::new();
    for q in &queries {
        let names = promql::metric_names(&q.expr);
        assert!(
            !names.is_empty(),
            "{}: names no metric: {}",
            q.origin,
            q.expr
        );
        for name in names {
            if builtin.contains(&name.as_str()) {
                checked.insert(name);
                continue;
            }
            if exported.samples.contains(&name) {
                checked.insert(promql::family(&name, &exported.histograms).to_string());
            } else {
                missing.push(format!("{}: `{name}` in {}", q.origin, q.expr));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "metrics no live sidecar exports (exported families: {:?}):\n{}",
        exported.families,
        missing.join("\n")
    );
    let unused: Vec<&String> = exported
        .families
        .iter()
        .filter(|f| !checked.contains(*f))
        .collect();
    println!(
        "{} expressions, {} metric families checked against a live sidecar ({} exported; not on a dashboard or in a rule: {unused:?})",
        queries.len(),
        checked.len(),
        exported.families.len()
    );

    // A real Prometheus: the rules load and evaluate, the dashboard queries evaluate and return
    // series (the alert expressions may rightly return nothing; so may the rebalance annotation).
    let rule_file = repo().join(RULES_FILE).canonicalize().unwrap();
    // The sidecar as the Prometheus Operator scrapes it with the example's PodMonitor, as two
    // members (two targets, one per pod name), so a query whose vector matching only works with
    // one series per metric fails here as it would in production.
    // A third target is a share group's member, so the share row's queries have series.
    let targets: Vec<Target> = [
        ("orders-consumer-0", busy.addr),
        ("orders-consumer-1", busy.addr),
        ("orders-consumer-2", busy.share_addr),
    ]
    .into_iter()
    .map(|(pod, addr)| Target {
        addr,
        labels: vec![
            ("pod", pod),
            ("namespace", "orders"),
            ("container", "sidecar"),
            ("endpoint", "metrics"),
        ],
    })
    .collect();
    let prometheus = Prometheus::start("orders/orders-consumer", &targets, &[rule_file]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    // Enough samples for rate() over the substituted 1m $__rate_interval (two or more), and every
    // rule evaluated at least once.
    loop {
        let scrapes = prometheus
            .value("min(count_over_time(up[1m]))")
            .await
            .unwrap_or(0.0);
        let rules = prometheus.api("/api/v1/rules").await;
        let evaluated = rules.as_ref().is_some_and(|r| {
            let list: Vec<&serde_json::Value> = r["data"]["groups"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|g| g["rules"].as_array().into_iter().flatten())
                .collect();
            !list.is_empty()
                && list.iter().all(|x| {
                    !x["lastEvaluation"]
                        .as_str()
                        .unwrap_or("0001")
                        .starts_with("0001")
                })
        });
        if scrapes >= 5.0 && evaluated {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Prometheus did not scrape and evaluate in time ({scrapes} scrapes):\n{}",
            prometheus.log()
        );
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    let rules = prometheus.api("/api/v1/rules").await.unwrap();
    let mut rule_count = 0;
    let mut bad = Vec::new();
    for g in rules["data"]["groups"].as_array().unwrap() {
        for r in g["rules"].as_array().unwrap() {
            rule_count += 1;
            if r["health"] != "ok" {
                bad.push(format!(
                    "rule {}: {} {}",
                    r["name"], r["health"], r["lastError"]
                ));
            }
        }
    }
    assert_eq!(
        rule_count,
        queries
            .iter()
            .filter(|q| q.origin.contains(" alert "))
            .count()
    );
    let mut returned = 0;
    for q in &queries {
        let may_be_empty = q.origin.contains(" alert ") || q.origin.contains(" annotation ");
        match prometheus.query(&q.expr).await {
            Ok(result) if result.is_empty() && !may_be_empty => {
                bad.push(format!("{}: no series: {}", q.origin, q.expr))
            }
            Ok(result) => returned += usize::from(!result.is_empty()),
            Err(e) => bad.push(format!("{}: {e}: {}", q.origin, q.expr)),
        }
    }
    assert!(bad.is_empty(), "on a real Prometheus:\n{}", bad.join("\n"));
    println!(
        "a real Prometheus: {rule_count} rules evaluate without error; {} expressions evaluate, {returned} return series",
        queries.len()
    );
    drop(prometheus);
    busy.stop().await;
}
