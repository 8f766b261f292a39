use super::*;
use crate::metrics::Metrics;

fn broker(node_id: i32, rack: Option<&str>, bytes: u64, followers: usize) -> BrokerFetchSnapshot {
    BrokerFetchSnapshot {
        node_id,
        rack: rack.map(str::to_owned),
        record_bytes_total: bytes,
        records_total: bytes / 100,
        follower_partitions: followers,
    }
}

fn snap(client_rack: Option<&str>, brokers: Vec<BrokerFetchSnapshot>) -> Snapshot {
    Snapshot {
        client_rack: client_rack.map(str::to_owned),
        fetch_brokers: brokers,
        ..Default::default()
    }
}

/// The exposition lines of the `mooring_fetch_` series, without HELP/TYPE.
fn fetch_lines(m: &Metrics) -> Vec<String> {
    m.render()
        .lines()
        .filter(|l| l.starts_with("mooring_fetch_"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn bytes_by_broker_and_rack_with_the_share_across_racks() {
    let m = Metrics::new();
    m.fetch.observe(
        3,
        &snap(
            Some("r1"),
            vec![
                broker(1, Some("r1"), 3000, 2),
                broker(2, Some("r2"), 1000, 0),
            ],
        ),
    );
    assert_eq!(
        fetch_lines(&m),
        [
            "mooring_fetch_brokers_dropped_total 0",
            "mooring_fetch_cross_rack_ratio{client_rack=\"r1\"} 0.25",
            "mooring_fetch_follower_partitions{broker=\"1\",rack=\"r1\"} 2",
            "mooring_fetch_follower_partitions{broker=\"2\",rack=\"r2\"} 0",
            "mooring_fetch_record_bytes_total{broker=\"1\",cross_rack=\"false\",rack=\"r1\"} 3000",
            "mooring_fetch_record_bytes_total{broker=\"2\",cross_rack=\"true\",rack=\"r2\"} 1000",
            "mooring_fetch_records_total{broker=\"1\",rack=\"r1\"} 30",
            "mooring_fetch_records_total{broker=\"2\",rack=\"r2\"} 10",
        ]
    );
}

#[test]
fn counters_grow_by_the_difference_and_count_a_new_process_whole() {
    let m = Metrics::new();
    let bytes = |m: &Metrics| {
        m.fetch
            .record_bytes_total
            .with_label_values(&["1", "r1", "false"])
            .get()
    };
    m.fetch
        .observe(10, &snap(Some("r1"), vec![broker(1, Some("r1"), 500, 0)]));
    m.fetch
        .observe(20, &snap(Some("r1"), vec![broker(1, Some("r1"), 800, 0)]));
    assert_eq!(bytes(&m), 800);
    // The consumer restarted: its events are numbered from 0 again and its totals too, and
    // what it fetched before this first snapshot (900, above the old process's 800) counts.
    m.fetch
        .observe(2, &snap(Some("r1"), vec![broker(1, Some("r1"), 900, 0)]));
    assert_eq!(bytes(&m), 1700);
}

#[test]
fn without_client_rack_the_bytes_are_of_unknown_side_and_no_share_is_said() {
    let m = Metrics::new();
    m.fetch.observe(
        1,
        &snap(
            None,
            vec![broker(1, Some("r1"), 100, 0), broker(2, None, 50, 0)],
        ),
    );
    let lines = fetch_lines(&m);
    assert!(
        !lines.iter().any(|l| l.contains("cross_rack_ratio")),
        "{lines:?}"
    );
    assert!(lines.contains(
        &"mooring_fetch_record_bytes_total{broker=\"1\",cross_rack=\"unknown\",rack=\"r1\"} 100"
            .to_owned()
    ));
    assert!(lines.contains(
        &"mooring_fetch_record_bytes_total{broker=\"2\",cross_rack=\"unknown\",rack=\"\"} 50"
            .to_owned()
    ));
}

#[test]
fn followers_of_brokers_no_longer_fetched_from_are_dropped_and_the_share_is_cumulative() {
    let m = Metrics::new();
    m.fetch
        .observe(1, &snap(Some("r2"), vec![broker(2, Some("r2"), 100, 3)]));
    // The follower in r2 failed: the leader in r1 serves, the follower series of node 2 is 0.
    m.fetch.observe(
        2,
        &snap(
            Some("r2"),
            vec![broker(1, Some("r1"), 300, 0), broker(2, Some("r2"), 100, 0)],
        ),
    );
    let lines = fetch_lines(&m);
    assert!(
        lines.contains(&"mooring_fetch_follower_partitions{broker=\"2\",rack=\"r2\"} 0".to_owned())
    );
    assert!(lines.contains(&"mooring_fetch_cross_rack_ratio{client_rack=\"r2\"} 0.75".to_owned()));
    assert_eq!(cross_rack_share(&snap(Some("r2"), vec![])), Some(0.0));
}

#[test]
fn broker_series_are_capped_and_the_rest_counted() {
    let m = Metrics::new();
    let long_rack = "r".repeat(MAX_RACK_LEN + 1);
    let mut brokers: Vec<_> = (0..MAX_FETCH_SERIES as i32 + 10)
        .map(|id| broker(id, Some("r1"), 100, 0))
        .collect();
    brokers.push(broker(-1, Some(&long_rack), 100, 0));
    m.fetch.observe(1, &snap(Some("r1"), brokers.clone()));
    let series = |m: &Metrics| {
        fetch_lines(m)
            .iter()
            .filter(|l| l.starts_with("mooring_fetch_record_bytes_total{"))
            .count()
    };
    assert_eq!(series(&m), MAX_FETCH_SERIES);
    assert!(!m.render().contains(&long_rack));
    let dropped = |m: &Metrics| {
        m.render()
            .lines()
            .find_map(|l| l.strip_prefix("mooring_fetch_brokers_dropped_total "))
            .map(str::to_owned)
    };
    assert_eq!(dropped(&m).as_deref(), Some("11"));
    // The next snapshot keeps the same series; a new rack of a known broker is a new series,
    // refused as well.
    brokers[0].rack = Some("r9".into());
    m.fetch.observe(2, &snap(Some("r1"), brokers));
    assert_eq!(series(&m), MAX_FETCH_SERIES);
    assert_eq!(dropped(&m).as_deref(), Some("23"));
}
