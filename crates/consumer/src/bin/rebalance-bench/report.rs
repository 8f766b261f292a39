//! The bench's tables: per member count, each client and protocol's medians over every change
//! of its kind (rounds × cycles) of the time until every partition is consumed again and of the
//! longest pauses, with their ratios to Mooring's classic eager protocol and to the Java client
//! on the same protocol, measured in the same run; then the goal lines for the consumer protocol.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One change of one run, as `rebalance-bench analyze` printed it.
#[derive(Debug, Clone, serde::Deserialize)]
pub struct Row {
    pub client: String,
    pub mode: String,
    pub members: usize,
    pub event: String,
    pub recovery_ms: Option<i64>,
    pub unmoved_max_pause_ms: Option<i64>,
    pub moved_max_pause_ms: Option<i64>,
    pub moved: usize,
    pub baseline_max_gap_ms: Option<i64>,
    #[serde(default)]
    pub unmoved_max_wait_ms: Option<i64>,
    #[serde(default)]
    pub moved_max_wait_ms: Option<i64>,
    #[serde(default)]
    pub producer_max_gap_ms: Option<i64>,
    #[serde(default)]
    pub baseline_producer_max_gap_ms: Option<i64>,
}

/// What the goal lines are measured against.
#[derive(Debug, Clone, Copy)]
pub struct Goals {
    /// `fetch.max.wait.ms` of every client (their default, 500).
    pub fetch_max_wait_ms: i64,
    /// The consumer protocol's heartbeat interval (the broker's
    /// `group.consumer.heartbeat.interval.ms`).
    pub heartbeat_interval_ms: i64,
}

/// The clients and protocols in the order of the table, with their names there.
const SERIES: [(&str, &str, &str); 5] = [
    ("mooring", "eager", "Mooring classic eager (range)"),
    (
        "mooring",
        "cooperative",
        "Mooring classic cooperative-sticky",
    ),
    ("mooring", "consumer", "Mooring consumer protocol"),
    ("java", "cooperative", "Java classic cooperative-sticky"),
    ("java", "consumer", "Java consumer protocol"),
];

fn median(mut values: Vec<i64>) -> Option<i64> {
    values.sort_unstable();
    match values.len() {
        0 => None,
        n if n % 2 == 1 => Some(values[n / 2]),
        n => Some((values[n / 2 - 1] + values[n / 2]) / 2),
    }
}

/// The figures of one series and event: medians, and the worst (largest) of each pause and wait.
#[derive(Debug, Clone, Default)]
struct Cell {
    changes: usize,
    unrecovered: usize,
    recovery: Option<i64>,
    unmoved: Option<i64>,
    moved: Option<i64>,
    moved_count: Option<i64>,
    unmoved_wait: Option<i64>,
    moved_wait: Option<i64>,
    producer_gap: Option<i64>,
    worst_unmoved: Option<i64>,
    worst_moved: Option<i64>,
    worst_unmoved_wait: Option<i64>,
    worst_moved_wait: Option<i64>,
    worst_producer_gap: Option<i64>,
    baseline: Option<i64>,
    baseline_producer: Option<i64>,
}

fn cell(rows: &[&Row]) -> Cell {
    let pick = |f: fn(&Row) -> Option<i64>| rows.iter().filter_map(|r| f(r)).collect::<Vec<_>>();
    let worst = |f: fn(&Row) -> Option<i64>| pick(f).into_iter().max();
    Cell {
        changes: rows.len(),
        unrecovered: rows.iter().filter(|r| r.recovery_ms.is_none()).count(),
        recovery: median(pick(|r| r.recovery_ms)),
        unmoved: median(pick(|r| r.unmoved_max_pause_ms)),
        moved: median(pick(|r| r.moved_max_pause_ms)),
        moved_count: median(rows.iter().map(|r| r.moved as i64).collect()),
        unmoved_wait: median(pick(|r| r.unmoved_max_wait_ms)),
        moved_wait: median(pick(|r| r.moved_max_wait_ms)),
        producer_gap: median(pick(|r| r.producer_max_gap_ms)),
        worst_unmoved: worst(|r| r.unmoved_max_pause_ms),
        worst_moved: worst(|r| r.moved_max_pause_ms),
        worst_unmoved_wait: worst(|r| r.unmoved_max_wait_ms),
        worst_moved_wait: worst(|r| r.moved_max_wait_ms),
        worst_producer_gap: worst(|r| r.producer_max_gap_ms),
        baseline: median(pick(|r| r.baseline_max_gap_ms)),
        baseline_producer: median(pick(|r| r.baseline_producer_max_gap_ms)),
    }
}

fn ms(v: Option<i64>) -> String {
    v.map_or_else(|| "–".to_owned(), |v| v.to_string())
}

fn ratio(ours: Option<i64>, base: Option<i64>) -> String {
    match (ours, base) {
        (Some(a), Some(b)) if b > 0 => format!("{:.2}×", a as f64 / b as f64),
        _ => "–".to_owned(),
    }
}

type Cells<'a> = BTreeMap<(usize, &'a str, &'a str, &'a str), Cell>;

/// The tables and goal lines for every member count in `rows`.
pub fn render(rows: &[Row], goals: Goals) -> String {
    let mut grouped: BTreeMap<(usize, &str, &str, &str), Vec<&Row>> = BTreeMap::new();
    for r in rows {
        grouped
            .entry((r.members, &r.client, &r.mode, &r.event))
            .or_default()
            .push(r);
    }
    let cells: Cells = grouped.iter().map(|(k, rs)| (*k, cell(rs))).collect();
    let mut counts: Vec<usize> = rows.iter().map(|r| r.members).collect();
    counts.sort_unstable();
    counts.dedup();
    let mut out = String::new();
    for n in counts {
        let _ = writeln!(
            out,
            "\n{n} members ({n} → {} → {n}): medians of every change of its kind\n",
            n + 1
        );
        pause_table(&mut out, &cells, n);
        out.push('\n');
        wait_table(&mut out, &cells, n);
        let baselines: Vec<String> = SERIES
            .iter()
            .filter_map(|(client, mode, name)| {
                let c = cells.get(&(n, client, mode, "join"))?;
                Some(format!(
                    "{name} {} ({})",
                    ms(c.baseline),
                    ms(c.baseline_producer)
                ))
            })
            .collect();
        let _ = writeln!(
            out,
            "\nsteady state before the first change, longest pause of any partition (the producer's \
             longest gap), ms, medians: {}",
            baselines.join(", ")
        );
        goal_lines(&mut out, &cells, n, goals);
    }
    out
}

/// A row's ratios of `f` to Mooring's eager and to Java on the same protocol.
fn ratios(cells: &Cells, key: (usize, &str, &str, &str), f: fn(&Cell) -> Option<i64>) -> String {
    let (n, client, mode, event) = key;
    let ours = cells.get(&key).and_then(f);
    let eager = cells.get(&(n, "mooring", "eager", event)).and_then(f);
    let java = (client == "mooring")
        .then(|| cells.get(&(n, "java", mode, event)).and_then(f))
        .flatten();
    format!("{} | {}", ratio(ours, eager), ratio(ours, java))
}

fn pause_table(out: &mut String, cells: &Cells, n: usize) {
    out.push_str(
        "| client, protocol | event | changes | all consumed again ms | ÷ eager | ÷ Java \
         | longest pause, not moved ms | ÷ eager | ÷ Java | longest pause, moved ms \
         | ÷ eager | ÷ Java | moved |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for event in ["join", "leave"] {
        for (client, mode, name) in SERIES {
            let key = (n, client, mode, event);
            let Some(c) = cells.get(&key) else {
                continue;
            };
            let unrecovered = match c.unrecovered {
                0 => String::new(),
                k => format!(" ({k} not in the window)"),
            };
            let _ = writeln!(
                out,
                "| {name} | {event} | {} | {}{unrecovered} | {} | {} | {} | {} | {} | {} |",
                c.changes,
                ms(c.recovery),
                ratios(cells, key, |c| c.recovery),
                ms(c.unmoved),
                ratios(cells, key, |c| c.unmoved),
                ms(c.moved),
                ratios(cells, key, |c| c.moved),
                ms(c.moved_count),
            );
        }
    }
}

fn wait_table(out: &mut String, cells: &Cells, n: usize) {
    out.push_str(
        "| client, protocol | event | longest wait, not moved ms | ÷ eager | ÷ Java \
         | longest wait, moved ms | ÷ eager | ÷ Java | producer's longest gap ms |\n",
    );
    out.push_str("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for event in ["join", "leave"] {
        for (client, mode, name) in SERIES {
            let key = (n, client, mode, event);
            let Some(c) = cells.get(&key) else {
                continue;
            };
            let _ = writeln!(
                out,
                "| {name} | {event} | {} | {} | {} | {} | {} |",
                ms(c.unmoved_wait),
                ratios(cells, key, |c| c.unmoved_wait),
                ms(c.moved_wait),
                ratios(cells, key, |c| c.moved_wait),
                ms(c.producer_gap),
            );
        }
    }
}

fn verdict(worst: Option<i64>, bound: i64) -> &'static str {
    match worst {
        Some(w) if w < bound => "met",
        Some(_) => "NOT met",
        None => "none measured",
    }
}

/// The goal, judged on the worst change's pause, with the worst records' wait (produce to
/// consume: the pause plus the usual delivery time) and the producer's own longest gap beside
/// it, to tell a consumer's pause from a late producer's.
fn goal(c: &Cell, event: &str, moved: bool, bound: i64) -> String {
    let (median, worst, wait) = if moved {
        (c.moved, c.worst_moved, c.worst_moved_wait)
    } else {
        (c.unmoved, c.worst_unmoved, c.worst_unmoved_wait)
    };
    format!(
        "{event} pause median {} ms, worst {} ms: {} (records' longest wait {} ms, \
         producer's longest gap {} ms, worst of the changes)",
        ms(median),
        ms(worst),
        verdict(worst, bound),
        ms(wait),
        ms(c.worst_producer_gap),
    )
}

fn goal_lines(out: &mut String, cells: &Cells, n: usize, goals: Goals) {
    let unmoved_bound = 2 * goals.fetch_max_wait_ms;
    let moved_bound = 2 * goals.heartbeat_interval_ms;
    for (client, name) in [("mooring", "Mooring"), ("java", "Java")] {
        let mut unmoved = Vec::new();
        let mut moved = Vec::new();
        for event in ["join", "leave"] {
            let Some(c) = cells.get(&(n, client, "consumer", event)) else {
                continue;
            };
            unmoved.push(goal(c, event, false, unmoved_bound));
            moved.push(goal(c, event, true, moved_bound));
        }
        if unmoved.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "goal, {name} consumer protocol, partitions that do not move never stop \
             (longest pause < 2 × fetch.max.wait.ms = {unmoved_bound} ms): {}",
            unmoved.join("; ")
        );
        let _ = writeln!(
            out,
            "goal, {name} consumer protocol, moved partitions resume within 2 heartbeat intervals \
             (longest pause < 2 × {} ms = {moved_bound} ms): {}",
            goals.heartbeat_interval_ms,
            moved.join("; ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(client: &str, mode: &str, event: &str, recovery: i64, unmoved: i64, moved: i64) -> Row {
        Row {
            client: client.into(),
            mode: mode.into(),
            members: 3,
            event: event.into(),
            recovery_ms: Some(recovery),
            unmoved_max_pause_ms: Some(unmoved),
            moved_max_pause_ms: Some(moved),
            moved: 250,
            baseline_max_gap_ms: Some(150),
            unmoved_max_wait_ms: Some(unmoved / 2),
            moved_max_wait_ms: Some(moved / 2),
            producer_max_gap_ms: Some(120),
            baseline_producer_max_gap_ms: Some(110),
        }
    }

    const GOALS: Goals = Goals {
        fetch_max_wait_ms: 500,
        heartbeat_interval_ms: 5000,
    };

    #[test]
    fn ratios_are_against_eager_and_java_on_the_same_protocol() {
        let rows = [
            row("mooring", "eager", "join", 4000, 3000, 3200),
            row("mooring", "consumer", "join", 2000, 300, 1600),
            row("java", "consumer", "join", 8000, 600, 6400),
        ];
        let text = render(&rows, GOALS);
        let line = text
            .lines()
            .find(|l| l.starts_with("| Mooring consumer protocol | join"))
            .expect("the Mooring consumer row");
        assert_eq!(
            line,
            "| Mooring consumer protocol | join | 1 | 2000 | 0.50× | 0.25× | 300 | 0.10× | 0.50× | 1600 | 0.50× | 0.25× | 250 |"
        );
        let java = text
            .lines()
            .find(|l| l.starts_with("| Java consumer protocol | join"))
            .expect("the Java row");
        assert!(java.contains("| 8000 | 2.00× | – |"), "{java}");
        assert!(text.contains("3 members (3 → 4 → 3)"), "{text}");
        assert!(
            text.contains("| Mooring consumer protocol | join | 150 | 0.10× | 0.50× | 800 | 0.50× | 0.25× | 120 |"),
            "the waits: {text}"
        );
        assert!(
            text.contains("Mooring consumer protocol 150 (110)"),
            "{text}"
        );
    }

    #[test]
    fn a_goal_is_met_only_when_the_worst_change_meets_it() {
        let rows = [
            row("mooring", "consumer", "join", 2000, 300, 1600),
            row("mooring", "consumer", "join", 2000, 1200, 1600),
            row("mooring", "consumer", "join", 2000, 400, 1700),
            row("mooring", "consumer", "leave", 2000, 300, 11000),
        ];
        let text = render(&rows, GOALS);
        let unmoved = text
            .lines()
            .find(|l| l.starts_with("goal, Mooring consumer protocol, partitions that do not move"))
            .expect("the goal line");
        assert!(
            unmoved.contains(
                "join pause median 400 ms, worst 1200 ms: NOT met (records' longest wait \
                 600 ms, producer's longest gap 120 ms, worst of the changes)"
            ),
            "{unmoved}"
        );
        assert!(unmoved.contains("leave pause median 300 ms, worst 300 ms: met"));
        let moved = text
            .lines()
            .find(|l| l.starts_with("goal, Mooring consumer protocol, moved"))
            .expect("the goal line");
        assert!(
            moved.contains("join pause median 1600 ms, worst 1700 ms: met"),
            "{moved}"
        );
        assert!(moved.contains("leave pause median 11000 ms, worst 11000 ms: NOT met"));
        assert!(moved.contains("longest wait 5500 ms"), "the wait: {moved}");
        assert!(
            !text.contains("goal, Java"),
            "no Java rows, no Java goal lines"
        );
    }

    #[test]
    fn medians_of_even_counts_take_the_middle_two() {
        assert_eq!(median(vec![4, 1, 3, 2]), Some(2));
        assert_eq!(median(vec![5]), Some(5));
        assert_eq!(median(vec![]), None);
    }
}
