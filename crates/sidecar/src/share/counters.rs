//! The share consumer's counters as Prometheus families, exported as its last `share_snapshot`
//! carried them (a collector: no line per record crosses the wire).

use std::sync::{Arc, Mutex, PoisonError};

use mooring_telemetry_schema::ShareSnapshot;
use prometheus::core::{Collector, Desc};
use prometheus::proto;

use super::view::{DELIVERY_COUNT_BUCKETS, DELIVERY_COUNT_LABELS};

/// One counter family of [`ShareCounters`]: its name, help, and where its value is.
struct Family {
    name: &'static str,
    help: &'static str,
    value: fn(&ShareSnapshot) -> u64,
}

/// The plain counter families, in the order they are exported.
const FAMILIES: [Family; 10] = [
    Family {
        name: "mooring_share_records_acquired_total",
        help: "Share consumer: records acquired (handed to this member under an acquisition lock).",
        value: |s| s.acquired_total,
    },
    Family {
        name: "mooring_share_records_accepted_total",
        help: "Share consumer: records accepted (processed), as the broker took the verdicts.",
        value: |s| s.accepted_total,
    },
    Family {
        name: "mooring_share_records_released_total",
        help: "Share consumer: records released (delivered again, to any member, until the delivery limit archives them), as the broker took the verdicts.",
        value: |s| s.released_total,
    },
    Family {
        name: "mooring_share_records_rejected_total",
        help: "Share consumer: records rejected as poison (archived at once, never delivered again), as the broker took the verdicts.",
        value: |s| s.rejected_total,
    },
    Family {
        name: "mooring_share_lock_renewals_total",
        help: "Share consumer: acquisition lock renewals the broker took (a handler holding a record longer than half the lock).",
        value: |s| s.renewed_total,
    },
    Family {
        name: "mooring_share_lock_renewals_refused_total",
        help: "Share consumer: lock renewals the broker refused (the lock had run out, or the broker takes none).",
        value: |s| s.renewals_refused_total,
    },
    Family {
        name: "mooring_share_lock_renewals_given_up_total",
        help: "Share consumer: records whose lock was left to run out because their handler held them max.poll.interval.ms.",
        value: |s| s.renewals_given_up_total,
    },
    Family {
        name: "mooring_share_lock_expired_total",
        help: "Share consumer: verdicts that came after the record's acquisition lock ran out, or that the broker refused for it: the record went to another member.",
        value: |s| s.lock_expired_total,
    },
    Family {
        name: "mooring_share_acknowledgements_failed_total",
        help: "Share consumer: verdicts lost otherwise (a share-partition's leader moved, a share session ended under them): delivered again when their locks run out.",
        value: |s| s.acknowledgements_failed_total,
    },
    Family {
        name: "mooring_share_gap_offsets_total",
        help: "Share consumer: acquired offsets without a record (transaction markers, compacted records) given back.",
        value: |s| s.gaps_total,
    },
];

/// `mooring_share_records_acquired_by_delivery_total`.
const BY_DELIVERY: (&str, &str) = (
    "mooring_share_records_acquired_by_delivery_total",
    "Share consumer: records acquired, by their delivery count (1 = first delivery; 10+ = 10 or more).",
);
/// `mooring_share_records_archived_total`.
const ARCHIVED: (&str, &str) = (
    "mooring_share_records_archived_total",
    "Share consumer: records released at a delivery count at or above the group's share.delivery.count.limit, which the broker archives instead of delivering again.",
);

/// The share consumer's counter families, as its last `share_snapshot` carried them.
#[derive(Debug)]
pub struct ShareCounters {
    descs: Vec<Desc>,
    latest: Mutex<Option<(ShareSnapshot, Option<u64>)>>,
}

impl ShareCounters {
    /// A new one, registered (as its collector) through `register`.
    pub fn register(
        register: impl FnOnce(Box<dyn Collector>) -> prometheus::Result<()>,
    ) -> prometheus::Result<Arc<ShareCounters>> {
        let mut descs = Vec::new();
        for (name, help, labels) in FAMILIES
            .iter()
            .map(|f| (f.name, f.help, Vec::new()))
            .chain([
                (
                    BY_DELIVERY.0,
                    BY_DELIVERY.1,
                    vec!["delivery_count".to_string()],
                ),
                (ARCHIVED.0, ARCHIVED.1, Vec::new()),
            ])
        {
            descs.push(Desc::new(
                name.to_string(),
                help.to_string(),
                labels,
                std::collections::HashMap::new(),
            )?);
        }
        let counters = Arc::new(ShareCounters {
            descs,
            latest: Mutex::new(None),
        });
        register(Box::new(Collected(Arc::clone(&counters))))?;
        Ok(counters)
    }

    /// Takes a snapshot's counters and the archive count (`None`: not known).
    pub fn set(&self, snap: &ShareSnapshot, archived: Option<u64>) {
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner) =
            Some((snap.clone(), archived));
    }

    fn families(&self) -> Vec<proto::MetricFamily> {
        let latest = self
            .latest
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let Some((snap, archived)) = latest else {
            return Vec::new();
        };
        let mut out: Vec<proto::MetricFamily> = FAMILIES
            .iter()
            .map(|f| family(f.name, f.help, vec![counter(&[], (f.value)(&snap))]))
            .collect();
        let mut by_delivery = [0u64; DELIVERY_COUNT_BUCKETS];
        for (i, n) in snap.acquired_by_delivery.iter().enumerate() {
            let bucket = &mut by_delivery[i.min(DELIVERY_COUNT_BUCKETS - 1)];
            *bucket = bucket.saturating_add(*n);
        }
        out.push(family(
            BY_DELIVERY.0,
            BY_DELIVERY.1,
            DELIVERY_COUNT_LABELS
                .iter()
                .zip(by_delivery)
                .map(|(label, n)| counter(&[("delivery_count", label)], n))
                .collect(),
        ));
        if let Some(archived) = archived {
            out.push(family(ARCHIVED.0, ARCHIVED.1, vec![counter(&[], archived)]));
        }
        out
    }
}

fn counter(labels: &[(&str, &str)], value: u64) -> proto::Metric {
    let mut c = proto::Counter::default();
    c.set_value(value as f64);
    let mut m = proto::Metric::default();
    m.set_label(
        labels
            .iter()
            .map(|(name, value)| {
                let mut l = proto::LabelPair::default();
                l.set_name((*name).to_string());
                l.set_value((*value).to_string());
                l
            })
            .collect(),
    );
    m.set_counter(c);
    m
}

fn family(name: &str, help: &str, metrics: Vec<proto::Metric>) -> proto::MetricFamily {
    let mut f = proto::MetricFamily::default();
    f.set_name(name.to_string());
    f.set_help(help.to_string());
    f.set_field_type(proto::MetricType::COUNTER);
    f.set_metric(metrics);
    f
}

struct Collected(Arc<ShareCounters>);

impl Collector for Collected {
    fn desc(&self) -> Vec<&Desc> {
        self.0.descs.iter().collect()
    }

    fn collect(&self) -> Vec<proto::MetricFamily> {
        self.0.families()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_exported_before_a_share_snapshot_and_the_labels_are_bounded() {
        let registry = prometheus::Registry::new();
        let counters = ShareCounters::register(|c| registry.register(c)).expect("registered");
        assert!(registry.gather().is_empty());
        let snap = ShareSnapshot {
            accepted_total: 7,
            acquired_by_delivery: (1..=12).collect(),
            ..ShareSnapshot::default()
        };
        counters.set(&snap, None);
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .expect("text");
        assert!(
            text.contains("mooring_share_records_accepted_total 7\n"),
            "{text}"
        );
        assert!(text.contains(
            "mooring_share_records_acquired_by_delivery_total{delivery_count=\"10+\"} 33\n"
        ));
        assert_eq!(
            text.matches("mooring_share_records_acquired_by_delivery_total{")
                .count(),
            10
        );
        assert!(!text.contains(ARCHIVED.0), "no limit known: {text}");
        counters.set(&snap, Some(4));
        let text = prometheus::TextEncoder::new()
            .encode_to_string(&registry.gather())
            .expect("text");
        assert!(
            text.contains("mooring_share_records_archived_total 4\n"),
            "{text}"
        );
    }
}
