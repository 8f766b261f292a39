//! The CI check of what operators import: the committed rule files are exactly what
//! `mooring-sidecar rules` prints for the default configuration (and for the deployed
//! `sidecar.toml`), every PromQL expression of the Grafana dashboards and the rules parses
//! (`promtool check rules`), and every metric it names is one a live sidecar exports.

#![allow(clippy::unwrap_used)] // a failed unwrap fails the test

mod common;
mod promql;

use std::path::{Path, PathBuf};

use mooring_sidecar::rules::{self, Format};
use mooring_sidecar::SidecarConfig;

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
