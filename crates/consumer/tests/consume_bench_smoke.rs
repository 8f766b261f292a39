//! Keeps `scripts/bench-consumer`, `consume-bench` and `fetch-floor` (the consume bench, its
//! Mooring binary and its floor) working: `scripts/bench-consumer --smoke` on the suite's cluster
//! with this build's binaries, a few thousand records on a plain and an lz4 topic of its own,
//! clients mooring, floor and Java's ConsumerPerformance, one round, the one-core costs timed
//! briefly. Asserts what the run printed (a row per client and topic with its ratios to the
//! floor, the goal lines, the one-core costs table with CRC-32C on both topics and lz4 on the
//! compressed one), never its figures.
//!
//! The bench times each client with `/usr/bin/time` (Debian's `time`, which `scripts/setup`
//! installs). Where it is absent, `scripts/test` leaves this test out (the bench-tools filter of
//! `.config/nextest.toml`), so nextest counts it skipped; run anyway, it fails saying so.

use std::path::Path;

use mooring_testkit::{run_bench_smoke, Cluster};

const TOPICS: [&str; 2] = ["bench-consumer-smoke", "bench-consumer-smoke-lz4"];

#[test]
fn bench_consumer_smoke_runs_mooring_the_floor_and_java() {
    assert!(
        Path::new("/usr/bin/time").is_file(),
        "/usr/bin/time is absent (apt-get install time): this test should have been left out by \
         the runner (the bench-tools filter of .config/nextest.toml, which scripts/test applies \
         where the tool is absent)"
    );
    let cluster = Cluster::shared();
    let (stdout, stderr) = run_bench_smoke(
        "bench-consumer",
        &cluster,
        [
            "--mooring-bin",
            env!("CARGO_BIN_EXE_consume-bench"),
            "--floor-bin",
            env!("CARGO_BIN_EXE_fetch-floor"),
        ],
    );
    let (tables, costs) = stdout
        .split_once("what one core does for the parts no client avoids")
        .unwrap_or_else(|| panic!("no table of the one-core costs:\n{stdout}\n{stderr}"));
    assert!(
        tables.contains("consume 5000 records of 1024 B"),
        "{stdout}\n{stderr}"
    );
    for topic in TOPICS {
        let table = topic_table(tables, topic)
            .unwrap_or_else(|| panic!("no table of {topic}:\n{stdout}\n{stderr}"));
        assert!(
            table.contains("| CPU / floor |") && table.contains("| rec/s / floor |"),
            "{topic}: no columns against the floor:\n{table}"
        );
        for client in ["mooring", "floor", "java"] {
            assert!(
                table
                    .lines()
                    .any(|l| l.starts_with(&format!("| {client} "))),
                "{topic}: no {client} row:\n{table}"
            );
        }
        assert!(
            table.contains("CPU per GiB <= 2.0x floor: "),
            "{topic}: no goal against the floor:\n{table}"
        );
        assert!(
            table.contains("ours/best peer: ") && table.contains("(best: java)"),
            "{topic}: the floor must be no peer:\n{table}"
        );
    }
    let rows: Vec<&str> = costs
        .lines()
        .filter(|l| l.starts_with("| bench-"))
        .collect();
    for (topic, part) in [
        (TOPICS[0], "crc32c"),
        (TOPICS[1], "crc32c"),
        (TOPICS[1], "lz4"),
    ] {
        assert!(
            rows.iter()
                .any(|r| r.starts_with(&format!("| {topic} ")) && r.contains(&format!("| {part} "))),
            "no {part} row for {topic} in the one-core costs:\n{costs}"
        );
    }
    assert!(
        !rows
            .iter()
            .any(|r| r.starts_with(&format!("| {} ", TOPICS[0])) && r.contains("| lz4 ")),
        "the plain topic has nothing to decompress:\n{costs}"
    );
}

/// The part of the report from `topic`'s heading to the next blank line.
fn topic_table<'a>(report: &'a str, topic: &str) -> Option<&'a str> {
    let start = report.find(&format!("\n{topic}: "))?;
    let rest = &report[start + 1..];
    Some(rest.split("\n\n").next().unwrap_or(rest))
}
