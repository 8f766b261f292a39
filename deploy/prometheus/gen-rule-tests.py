#!/usr/bin/env python3
"""Writes mooring-rules.test.yaml: promtool unit tests of mooring-rules.yaml.

The scenarios (input series, evaluation times, expected labels and values) are written out here
by hand; only the annotations are expanded from the rule file's templates, by this script's own
small template expander (so a template that Prometheus expands differently fails the test).
Run after changing the rules' texts:

    python3 deploy/prometheus/gen-rule-tests.py > deploy/prometheus/mooring-rules.test.yaml
    promtool test rules deploy/prometheus/mooring-rules.test.yaml
"""

import math
import os
import re
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = yaml.safe_load(open(os.path.join(HERE, "mooring-rules.yaml")))["groups"][0]["rules"]
BY_NAME = {r["alert"]: r for r in RULES}

NS = "orders"
JOB = "orders/orders-consumer"


def target(pod, n):
    """The labels the Prometheus Operator gives a PodMonitor target."""
    return {
        "namespace": NS,
        "job": JOB,
        "pod": pod,
        "instance": f"10.0.0.{n}:9465",
        "container": "sidecar",
        "endpoint": "metrics",
    }


POD0 = target("orders-consumer-0", 10)
POD1 = target("orders-consumer-1", 11)


def series(name, labels, segments):
    """segments: [(value, samples)], one sample a minute."""
    parts = []
    for value, count in segments:
        parts.append(f"{value}x{count - 1}" if count > 1 else f"{value}")
    body = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    return {"series": f"{name}{{{body}}}", "values": " ".join(parts)}


def humanize(v):
    if v == 0 or math.isnan(v) or math.isinf(v):
        return "%.4g" % v
    prefixes = ["", "k", "M", "G", "T", "P", "E", "Z", "Y"]
    i = 0
    if abs(v) >= 1:
        while abs(v) >= 1000 and i < len(prefixes) - 1:
            v /= 1000
            i += 1
        return ("%.4g" % v) + prefixes[i]
    return "%.4g" % v


def raw(v):
    return str(int(v)) if float(v).is_integer() else repr(v)


def expand(text, labels, value):
    text = text.replace("{{ $value | humanize }}", humanize(value))
    text = text.replace("{{ $value }}", raw(value))
    text = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), text)
    assert "{{" not in text, text
    return text


def alert(name, labels, value):
    """One expected firing alert: its labels (the expression's plus the rule's) and annotations."""
    rule = BY_NAME[name]
    all_labels = dict(labels)
    all_labels.update(rule["labels"])
    return {
        "exp_labels": all_labels,
        "exp_annotations": {k: expand(v, labels, value) for k, v in rule["annotations"].items()},
    }


def check(minute, name, *alerts):
    return {"eval_time": f"{minute}m", "alertname": name, "exp_alerts": list(alerts)}


def group_labels():
    return {"namespace": NS, "job": JOB}


def member(t):
    return {"namespace": NS, "job": JOB, "pod": t["pod"]}


def topic(name):
    return {"namespace": NS, "job": JOB, "topic": name}


def with_(base, **extra):
    out = dict(base)
    out.update(extra)
    return out


tests = []

# Rebalances: a 1 d window. Nothing for a day, then pod-0 counts 2 (ok), 3 (warning from 3, after
# the 1 m `for`), 10 (still warning), 11 (critical, warning gone). pod-1 counts 1: the group's
# value is the largest member's. Causes are summed.
W, C = "MooringRebalancesWarning", "MooringRebalancesCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_rebalances_total", with_(POD0, cause="member_joined"),
               [(0, 1441), (2, 19), (9, 10), (10, 11)]),
        series("mooring_rebalances_total", with_(POD0, cause="member_left"), [(0, 1450), (1, 31)]),
        series("mooring_rebalances_total", with_(POD1, cause="member_joined"), [(0, 1441), (1, 40)]),
    ],
    "alert_rule_test": [
        check(1445, W),
        check(1445, C),
        check(1450, W),  # 3: pending for 1 m
        check(1451, W, alert(W, group_labels(), 3)),
        check(1465, W, alert(W, group_labels(), 10)),
        check(1465, C),
        check(1470, W),  # 11: out of the warning band
        check(1470, C),  # pending
        check(1471, C, alert(C, group_labels(), 11)),
    ],
})

# Rebalances of a consumer-protocol group: the sidecar counts each reconciliation that moved a
# member's partitions in mooring_rebalances_total, with this protocol's causes; the count sums
# them all as any other cause. pod-0: a join (1), a fencing (2), a join after a wait for its
# instance id (3: warning after the 1 m `for`).
W = "MooringRebalancesWarning"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_rebalances_total", with_(POD0, cause="member_joined"), [(0, 1441), (1, 20)]),
        series("mooring_rebalances_total", with_(POD0, cause="epoch_fenced"), [(0, 1445), (1, 16)]),
        series("mooring_rebalances_total", with_(POD0, cause="instance_id_unreleased"), [(0, 1450), (1, 11)]),
        series("mooring_rebalances_total", with_(POD1, cause="epoch_fenced"), [(0, 1461)]),
    ],
    "alert_rule_test": [
        check(1449, W),
        check(1450, W),  # 3: pending for 1 m
        check(1451, W, alert(W, group_labels(), 3)),
    ],
})

# Fencing: any fencing is critical at once (no warning band by default), and leaves the 1 d window.
C = "MooringFencedCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_fenced_total", POD0, [(0, 1441), (1, 1450)]),
        series("mooring_fenced_total", POD1, [(0, 2891)]),
    ],
    "alert_rule_test": [
        check(1440, C),
        check(1441, C, alert(C, member(POD0), 1)),
        check(2880, C, alert(C, member(POD0), 1)),
        check(2881, C),
    ],
})

# Rebalance duration: 29.9 s ok, 30 s warning (no `for`), 120 s still warning, 121 s critical;
# an hour after that rebalance completed, it no longer alerts.
W, C = "MooringRebalanceDurationWarning", "MooringRebalanceDurationCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_last_rebalance_duration_seconds", POD0,
               [(0, 5), (29.9, 5), (30, 10), (120, 10), (121, 66)]),
        series("mooring_last_rebalance_timestamp_seconds", POD0,
               [(0, 5), (300, 5), (600, 10), (1200, 10), (1800, 66)]),
        series("mooring_last_rebalance_duration_seconds", POD1, [(0.5, 96)]),
        series("mooring_last_rebalance_timestamp_seconds", POD1, [(0, 96)]),
    ],
    "alert_rule_test": [
        check(7, W),
        check(10, W, alert(W, member(POD0), 30)),
        check(25, W, alert(W, member(POD0), 120)),
        check(25, C),
        check(30, W),
        check(30, C, alert(C, member(POD0), 121)),
        check(89, C, alert(C, member(POD0), 121)),
        check(90, C),  # completed 3600 s ago
        check(90, W),
    ],
})

# Lag in records: per topic, the largest partition's; both members report the group's lag.
# 9999 ok; 10000 warning after 10 m; 100000 still warning; 100001 critical after 5 m.
W, C = "MooringLagRecordsWarning", "MooringLagRecordsCritical"
lag_series = []
for pod in (POD0, POD1):
    lag_series += [
        series("mooring_partition_lag_records", with_(pod, topic="orders", partition="0"),
               [(9999, 10), (10000, 20), (100000, 10), (100001, 11)]),
        series("mooring_partition_lag_records", with_(pod, topic="orders", partition="1"), [(5, 51)]),
        series("mooring_partition_lag_records", with_(pod, topic="audit", partition="0"), [(0, 51)]),
    ]
tests.append({
    "interval": "1m",
    "input_series": lag_series,
    "alert_rule_test": [
        check(9, W),
        check(19, W),  # pending since 10m
        check(20, W, alert(W, topic("orders"), 10000)),
        check(35, W, alert(W, topic("orders"), 100000)),
        check(35, C),
        check(44, W),
        check(44, C),  # pending since 40m
        check(45, C, alert(C, topic("orders"), 100001)),
    ],
})

# Lag in seconds: 59.5 ok; 60 warning after 10 m; 300 still warning; 300.5 critical after 5 m.
W, C = "MooringLagSecondsWarning", "MooringLagSecondsCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_partition_lag_seconds", with_(POD0, topic="orders", partition="0"),
               [(59.5, 10), (60, 10), (300, 10), (300.5, 11)]),
        series("mooring_partition_lag_seconds", with_(POD0, topic="orders", partition="1"), [(1, 41)]),
    ],
    "alert_rule_test": [
        check(9, W),
        check(19, W),
        check(20, W, alert(W, topic("orders"), 300)),
        check(34, C),
        check(35, C, alert(C, topic("orders"), 300.5)),
        check(35, W),
    ],
})

# Poll stall: 59 s ok; 60 s warning after 1 m; 300 s still warning; 301 s critical after 1 m.
W, C = "MooringPollStallWarning", "MooringPollStallCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_poll_stale_seconds", POD0, [(59, 5), (60, 10), (300, 10), (301, 6)]),
        series("mooring_poll_stale_seconds", POD1, [(0, 31)]),
    ],
    "alert_rule_test": [
        check(4, W),
        check(5, W),  # pending
        check(6, W, alert(W, member(POD0), 60)),
        check(20, W, alert(W, member(POD0), 300)),
        check(20, C),
        check(25, C),  # pending
        check(26, C, alert(C, member(POD0), 301)),
        check(26, W),
    ],
})

# The wait for an unreleased group.instance.id: 59 s ok, 60 s warning at once (the value is a
# duration), 300 s still warning, 301 s critical; 0 again once the member joined.
W, C = "MooringInstanceIdUnreleasedWarning", "MooringInstanceIdUnreleasedCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_instance_id_unreleased_wait_seconds", POD0,
               [(0, 3), (59, 2), (60, 3), (300, 3), (301, 3), (0, 5)]),
        series("mooring_instance_id_unreleased_wait_seconds", POD1, [(0, 19)]),
    ],
    "alert_rule_test": [
        check(4, W),
        check(5, W, alert(W, member(POD0), 60)),
        check(10, W, alert(W, member(POD0), 300)),
        check(10, C),
        check(12, C, alert(C, member(POD0), 301)),
        check(12, W),
        check(15, C),
        check(15, W),
    ],
})

# Share groups, poison records rejected: the group's count (summed over its members: each counts
# its own records) in a rolling 1 h, at once. Nothing for an hour; then pod-0 and pod-1 reject one
# each (2: warning from 1), pod-0 100 more (102: critical above 100); an hour after the first
# rejects they leave the window (at 121 m the window starts after the jump).
W, C = "MooringShareRecordsRejectedWarning", "MooringShareRecordsRejectedCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_share_records_rejected_total", POD0, [(0, 61), (1, 9), (101, 60)]),
        series("mooring_share_records_rejected_total", POD1, [(0, 61), (1, 69)]),
    ],
    "alert_rule_test": [
        check(60, W),
        check(61, W, alert(W, group_labels(), 2)),
        check(61, C),
        check(70, C, alert(C, group_labels(), 102)),
        check(70, W),
        check(131, C),
        check(131, W),
    ],
})

# Share groups, records archived after the delivery limit (releases at a delivery count at or
# above share.delivery.count.limit, as the sidecar counts them): the group's count in 1 h, at once.
W, C = "MooringShareRecordsArchivedWarning", "MooringShareRecordsArchivedCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_share_records_archived_total", POD0, [(0, 61), (1, 30)]),
        series("mooring_share_records_archived_total", POD1, [(0, 75), (150, 16)]),
    ],
    "alert_rule_test": [
        check(60, W),
        check(61, W, alert(W, group_labels(), 1)),
        check(75, C, alert(C, group_labels(), 151)),
        check(75, W),
    ],
})

# Share groups, acquisition locks that ran out before a verdict: per member in 1 h, at once.
# pod-0: 9 (ok), 10 (warning from 10), 101 (critical above 100); pod-1 none.
W, C = "MooringShareLocksExpiredWarning", "MooringShareLocksExpiredCritical"
tests.append({
    "interval": "1m",
    "input_series": [
        series("mooring_share_lock_expired_total", POD0, [(0, 61), (9, 5), (10, 10), (101, 10)]),
        series("mooring_share_lock_expired_total", POD1, [(0, 86)]),
    ],
    "alert_rule_test": [
        check(61, W),
        check(66, W, alert(W, member(POD0), 10)),
        check(66, C),
        check(76, C, alert(C, member(POD0), 101)),
        check(76, W),
    ],
})

# Lag status (a state set: 1 for the partition's status, 0 for the others; only the states a
# scenario needs are written). Every sidecar of the group reports every partition; the owner's
# sidecar may say STALL where the others say STOP (it knows its member is alive and holding it).
# orders-0: STOP on pod-1 but STALL on pod-0 from 10 m: stalled after 5 m, never stopped.
# orders-1: STOP on both from 10 m: stopped after 5 m. orders-2: REWIND on pod-0 at 20 m only:
# at once, and gone the minute after. The group: ERR from 10 m on pod-0, OK on pod-1's view
# until 12 m then ERR too: ERR after 15 m.
S, T, R, E = "MooringLagStopped", "MooringLagStalled", "MooringLagRewound", "MooringGroupLagError"


def status(pod, partition, state, segments):
    labels = with_(pod, topic="orders", partition=str(partition), status=state)
    return series("mooring_partition_lag_status", labels, segments)


def partition_labels(partition):
    return with_(topic("orders"), partition=str(partition))


tests.append({
    "interval": "1m",
    "input_series": [
        status(POD0, 0, "STALL", [(0, 10), (1, 21)]),
        status(POD0, 0, "STOP", [(0, 31)]),
        status(POD1, 0, "STOP", [(0, 10), (1, 21)]),
        status(POD1, 0, "STALL", [(0, 31)]),
        status(POD0, 1, "STOP", [(0, 10), (1, 21)]),
        status(POD1, 1, "STOP", [(0, 10), (1, 21)]),
        status(POD0, 2, "REWIND", [(0, 20), (1, 1), (0, 10)]),
        status(POD1, 2, "REWIND", [(0, 31)]),
        series("mooring_group_lag_status", with_(POD0, status="ERR"), [(0, 10), (1, 21)]),
        series("mooring_group_lag_status", with_(POD1, status="ERR"), [(0, 12), (1, 19)]),
        series("mooring_group_lag_status", with_(POD1, status="OK"), [(1, 12), (0, 19)]),
    ],
    "alert_rule_test": [
        check(14, S),
        check(14, T),  # pending since 10 m
        check(15, S, alert(S, partition_labels(1), 1)),
        check(15, T, alert(T, partition_labels(0), 1)),
        check(19, R),
        check(20, R, alert(R, partition_labels(2), 1)),
        check(21, R),
        check(24, E),  # pending since 10 m
        check(25, E, alert(E, group_labels(), 1)),
    ],
})

# The sidecar down: a failed scrape alerts after 5 m; another job's failed scrape never does.
D, A = "MooringSidecarDown", "MooringSidecarAbsent"
other = {"namespace": NS, "job": "orders/orders-api", "pod": "orders-api-0",
         "instance": "10.0.0.20:8080", "container": "app", "endpoint": "http"}
tests.append({
    "interval": "1m",
    "input_series": [
        series("up", POD0, [(1, 5), (0, 11)]),
        series("up", POD1, [(1, 16)]),
        series("up", other, [(0, 16)]),
    ],
    "alert_rule_test": [
        check(4, D),
        check(9, D),  # pending since 5m
        check(10, D, alert(D, POD0, 0)),
        check(15, A),
    ],
})

# No sidecar target at all: absent after 15 m.
tests.append({
    "interval": "1m",
    "input_series": [series("up", other, [(1, 21)])],
    "alert_rule_test": [
        check(14, A),
        check(15, A, alert(A, {"container": "sidecar"}, 1)),
        check(15, D),
    ],
})

doc = {"rule_files": ["mooring-rules.yaml"], "evaluation_interval": "1m", "tests": tests}
sys.stdout.write(
    "# promtool unit tests of mooring-rules.yaml: every alert firing (warning and critical) and not,\n"
    "# at and around its thresholds and `for:` delays. Generated by gen-rule-tests.py (the scenarios\n"
    "# are written there): promtool test rules deploy/prometheus/mooring-rules.test.yaml\n"
)
yaml.safe_dump(doc, sys.stdout, sort_keys=False, width=1000, allow_unicode=True)
