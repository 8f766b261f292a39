#!/usr/bin/env python3
"""Writes mooring-consumer.json, the Grafana dashboard of Mooring consumers and their sidecars.

The JSON is the artifact (import it as is); this script keeps its ids, grid positions and
selectors consistent. Edit here, then:

    python3 dashboards/generate.py > dashboards/mooring-consumer.json
    cargo test -p mooring-sidecar --test dashboards      # every query parses and names live metrics
"""

import json
import sys

DS = {"type": "prometheus", "uid": "${datasource}"}
# Every sidecar of a group reports the group's lag, generation, state and members; the member's
# own series (rebalances it took part in, assignment, processing) are per pod.
GROUP = 'namespace=~"$namespace", job=~"$group"'
MEMBER = GROUP + ', pod=~"$pod"'
RI = "$__rate_interval"

panels = []
next_id = [1]
cursor = {"x": 0, "y": 0, "row_h": 0}


def new_id():
    i = next_id[0]
    next_id[0] += 1
    return i


def target(expr, legend="", ref="A", **extra):
    t = {"datasource": DS, "refId": ref, "expr": expr, "legendFormat": legend or "__auto", "range": True}
    t.update(extra)
    return t


def place(w, h):
    if cursor["x"] + w > 24:
        cursor["x"] = 0
        cursor["y"] += cursor["row_h"]
        cursor["row_h"] = 0
    pos = {"h": h, "w": w, "x": cursor["x"], "y": cursor["y"]}
    cursor["x"] += w
    cursor["row_h"] = max(cursor["row_h"], h)
    return pos


def thresholds(*steps):
    """steps: (value or None, color)."""
    return {"mode": "absolute", "steps": [{"color": c, "value": v} for v, c in steps]}


def panel(kind, title, targets, w=8, h=8, unit=None, description="", steps=None, mappings=None,
          options=None, custom=None, overrides=None, **extra):
    defaults = {}
    if unit:
        defaults["unit"] = unit
    if steps:
        defaults["thresholds"] = thresholds(*steps)
        defaults["color"] = {"mode": "thresholds"}
    if mappings:
        defaults["mappings"] = mappings
    if custom:
        defaults["custom"] = custom
    p = {
        "id": new_id(),
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": place(w, h),
        "targets": [dict(t, refId=chr(ord("A") + i)) for i, t in enumerate(targets)],
        "fieldConfig": {"defaults": defaults, "overrides": overrides or []},
        "options": options or {},
    }
    p.update(extra)
    return p


def ts(title, targets, **kw):
    kw.setdefault("options", {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True, "calcs": []},
                              "tooltip": {"mode": "multi", "sort": "desc"}})
    return panel("timeseries", title, targets, **kw)


def stat(title, targets, **kw):
    kw.setdefault("options", {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                              "colorMode": "value", "graphMode": "none", "textMode": "auto",
                              "justifyMode": "auto", "orientation": "auto", **STAT_REQUIRED})
    kw.setdefault("w", 4)
    kw.setdefault("h", 5)
    return panel("stat", title, targets, **kw)


rows = []
# What the stat panel's schema requires besides (Grafana 11 fills these in on import).
STAT_REQUIRED = {"wideLayout": True, "showPercentChange": False, "percentChangeColorMode": "standard"}
TIMELINE_OPTIONS = {"showValue": "never", "mergeValues": True, "rowHeight": 0.9, "alignValue": "left",
                    "tooltip": {"mode": "single", "sort": "none"},
                    "legend": {"displayMode": "list", "placement": "bottom", "showLegend": False, "calcs": []}}


def row(title, collapsed, children_fn):
    """A row; a collapsed row holds its panels, an open one is followed by them."""
    if cursor["x"] != 0:
        cursor["y"] += cursor["row_h"]
    cursor["x"], cursor["row_h"] = 0, 0
    r = {"id": new_id(), "type": "row", "title": title, "collapsed": collapsed,
         "gridPos": {"h": 1, "w": 24, "x": 0, "y": cursor["y"]}, "panels": []}
    cursor["y"] += 1
    children = children_fn()
    cursor["y"] += cursor["row_h"]
    cursor["x"], cursor["row_h"] = 0, 0
    if collapsed:
        r["panels"] = children
        panels.append(r)
    else:
        panels.append(r)
        panels.extend(children)


LEVELS = [
    {"type": "value", "options": {
        "0": {"text": "ok", "color": "green", "index": 0},
        "1": {"text": "warning", "color": "orange", "index": 1},
        "2": {"text": "critical", "color": "red", "index": 2}}},
]


def overview():
    return [
        stat("Group state", [target(f"max by (state) (mooring_group_state{{{GROUP}}}) == 1", "{{state}}")],
             description="The group's state as DescribeGroups reports it (Stable, PreparingRebalance, CompletingRebalance, Empty, Dead), or ConsumerGroupDescribe for a consumer-protocol group (Stable, Assigning, Reconciling, Empty, Dead).",
             options={"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                      "colorMode": "none", "graphMode": "none", "textMode": "name",
                      "justifyMode": "auto", "orientation": "auto", **STAT_REQUIRED}),
        stat("Members", [target(f"max(mooring_group_members{{{GROUP}}})", "members")],
             description="Members of the group, from the broker (DescribeGroups, ConsumerGroupDescribe)."),
        stat("Generation", [target(f"max(mooring_group_generation{{{GROUP}}})", "generation")],
             description="The group's generation (consumer protocol: the member epoch): it moves by one per rebalance. A rolling update of static members must not move it."),
        stat("Assigned partitions", [target(f"sum(mooring_assigned_partitions{{{MEMBER}}})", "assigned")],
             description="Partitions assigned to the selected members, summed."),
        stat("Rebalances (24 h, largest member)",
             [target(f"max(round(sum by (pod) (increase(mooring_rebalances_total{{{MEMBER}}}[1d]))))", "rebalances")],
             description="The seeds' thresholds: below 3 a day normal, 3 to 10 warning, above 10 critical (MooringRebalances).",
             steps=[(None, "green"), (3, "orange"), (11, "red")]),
        stat("Last rebalance", [target(f"time() - max(mooring_last_rebalance_timestamp_seconds{{{MEMBER}}} > 0)", "ago")],
             unit="s", description="Time since the last completed rebalance (Java: last-rebalance-seconds-ago)."),
        ts("Generation per member", [target(f"mooring_group_generation{{{MEMBER}}}", "{{pod}}")], w=12,
           description="Each member's generation. Members that disagree are mid-rebalance."),
        ts("Group state over time", [target(f"max by (state) (mooring_group_state{{{GROUP}}})", "{{state}}")], w=12,
           description="1 while the group is in that state."),
    ]


def rebalances():
    phases = [
        ("join", "mooring_join_duration_seconds"),
        ("sync", "mooring_sync_duration_seconds"),
        ("revoke callback", "mooring_partitions_revoked_duration_seconds"),
        ("assign callback", "mooring_partitions_assigned_duration_seconds"),
        ("lost callback", "mooring_partitions_lost_duration_seconds"),
    ]
    return [
        ts("Rebalance rate by cause (per hour)",
           [target(f"max by (cause) (rate(mooring_rebalances_total{{{MEMBER}}}[{RI}])) * 3600", "{{cause}}")],
           w=12, unit="short",
           description="Java's rebalance-rate-per-hour, split by cause. Every member counts the same rebalance, so the largest member's rate is the group's."),
        ts("Rebalances in the last 24 h per member",
           [target(f"round(sum by (pod) (increase(mooring_rebalances_total{{{MEMBER}}}[1d])))", "{{pod}}")],
           w=12, steps=[(None, "green"), (3, "orange"), (11, "red")],
           custom={"thresholdsStyle": {"mode": "line+area"}},
           description="What MooringRebalances judges: warning from 3, critical above 10."),
        panel("heatmap", "Rebalance duration",
              [target(f"sum by (le) (increase(mooring_rebalance_duration_seconds_bucket{{{MEMBER}}}[{RI}]))", "{{le}}",
                      format="heatmap")],
              w=12, h=9, unit="s",
              description="Start to stable, from the histogram's buckets (Java: rebalance-latency).",
              options={"calculate": False, "cellGap": 1, "yAxis": {"unit": "s"}, "showValue": "auto",
                       "color": {"mode": "scheme", "scheme": "Oranges", "steps": 64, "fill": "dark-orange",
                                 "exponent": 0.5, "reverse": False},
                       "exemplars": {"color": "rgba(255,0,255,0.7)"},
                       "rowsFrame": {"layout": "auto"}, "tooltip": {"mode": "single", "yHistogram": True},
                       "legend": {"show": True}}),
        ts("Rebalance phases (p95)",
           [target(f"histogram_quantile(0.95, sum by (le) (rate({m}_bucket{{{MEMBER}}}[{RI}])))", name)
            for name, m in phases],
           w=12, h=9, unit="s", description="JoinGroup and SyncGroup round trips and the listener callbacks."),
        ts("Last rebalance duration per member",
           [target(f"mooring_last_rebalance_duration_seconds{{{MEMBER}}}", "{{pod}}")], w=8, unit="s",
           steps=[(None, "green"), (30, "orange"), (120.001, "red")],
           custom={"thresholdsStyle": {"mode": "line"}},
           description="MooringRebalanceDuration: warning from 30 s, critical above 120 s."),
        ts("Failed rebalances", [target(f"sum by (pod) (increase(mooring_rebalances_failed_total{{{MEMBER}}}[{RI}]))", "{{pod}}")],
           w=8, description="Java: failed-rebalance-total."),
        panel("state-timeline", "Alert levels",
              [target(f"max by (alert) (mooring_alert_level{{{MEMBER}}})", "{{alert}}")], w=8,
              mappings=LEVELS, steps=[(None, "green"), (1, "orange"), (2, "red")],
              description="The sidecars' own levels (GET /alerts): 0 ok, 1 warning, 2 critical; the worst member's.",
              options=TIMELINE_OPTIONS),
    ]


def reconciliation():
    phases = [(p, p) for p in ("revoke", "assign", "acknowledge")]
    return [
        stat("Group protocol", [target(f"max by (protocol) (mooring_group_protocol{{{MEMBER}}}) == 1", "{{protocol}}")],
             description="group.protocol of the selected members: classic (JoinGroup/SyncGroup) or consumer (KIP-848: the broker assigns, members reconcile). The rows below are the consumer protocol's.",
             options={"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                      "colorMode": "none", "graphMode": "none", "textMode": "name",
                      "justifyMode": "auto", "orientation": "auto", **STAT_REQUIRED}),
        stat("Group epoch", [target(f"max(mooring_group_epoch{{{GROUP}}})", "group epoch")],
             description="ConsumerGroupDescribe's group epoch: it moves when a member joins or leaves, a subscription changes or the subscribed topics do. -1 for a classic group."),
        stat("Assignment epoch", [target(f"max(mooring_group_assignment_epoch{{{GROUP}}})", "assignment epoch")],
             description="The epoch of the coordinator's target assignment: below the group epoch while the assignor has not run."),
        stat("Reconciliations (24 h)", [target(f"round(sum(increase(mooring_reconciliations_total{{{MEMBER}}}[1d])))", "reconciliations")],
             description="Epoch bumps the selected members reconciled, those that moved nothing included; those that moved partitions count as rebalances (Rebalances row, MooringRebalances)."),
        stat("Partitions moved (24 h)", [target(f"round(sum(increase(mooring_reconcile_partitions_moved_sum{{{MEMBER}}}[1d])))", "moved")],
             description="Partitions revoked plus added by the selected members' reconciliations."),
        stat("Waiting for an instance id", [target(f"max(mooring_instance_id_unreleased_wait_seconds{{{MEMBER}}})", "longest wait")],
             unit="s", steps=[(None, "green"), (60, "orange"), (300.001, "red")],
             description="The longest wait of a static member for its group.instance.id (UNRELEASED_INSTANCE_ID), 0 when none waits (MooringInstanceIdUnreleased)."),
        ts("Epochs", [target(f"max(mooring_group_epoch{{{GROUP}}})", "group epoch"),
                      target(f"max(mooring_group_assignment_epoch{{{GROUP}}})", "assignment epoch"),
                      target(f"mooring_member_epoch{{{MEMBER}}}", "{{pod}} member epoch")],
           w=12, description="A member's epoch catches up with the group epoch as it reconciles; one that stays behind is slow to revoke (or fenced, back at 0)."),
        ts("Members by state", [target(f"sum by (state) (mooring_consumer_member_state{{{MEMBER}}})", "{{state}}")], w=12,
           description="The selected consumer-protocol members in each of their states (joining, reconciling, acknowledging, stable, fenced, stale, leaving, instance_id_unreleased, ...)."),
        ts("Reconciliation phases (p95)",
           [target(f"histogram_quantile(0.95, sum by (le) (rate(mooring_reconcile_duration_seconds_bucket{{{MEMBER}}}[{RI}])))", "total")] +
           [target(f'histogram_quantile(0.95, sum by (le) (rate(mooring_reconcile_phase_duration_seconds_bucket{{{MEMBER}, phase="{ph}"}}[{RI}])))', name)
            for name, ph in phases],
           w=12, h=9, unit="s",
           description="From the heartbeat answer carrying a new assignment to its acknowledgement: revoke (handlers of the revoked partitions drained, commit, the revoked callback), assign (the assigned callback), acknowledge (the next heartbeat)."),
        panel("heatmap", "Partitions moved per epoch bump",
              [target(f"sum by (le) (increase(mooring_reconcile_partitions_moved_bucket{{{MEMBER}}}[{RI}]))", "{{le}}",
                      format="heatmap")],
              w=12, h=9, unit="short",
              description="Revoked plus added per reconciliation (le=0: an epoch bump that moved nothing of this member's).",
              options={"calculate": False, "cellGap": 1, "yAxis": {"unit": "short"}, "showValue": "auto",
                       "color": {"mode": "scheme", "scheme": "Blues", "steps": 64, "fill": "dark-blue",
                                 "exponent": 0.5, "reverse": False},
                       "exemplars": {"color": "rgba(255,0,255,0.7)"},
                       "rowsFrame": {"layout": "auto"}, "tooltip": {"mode": "single", "yHistogram": True},
                       "legend": {"show": True}}),
        ts("Reconciliations and partitions moved per hour",
           [target(f"sum by (pod) (rate(mooring_reconciliations_total{{{MEMBER}}}[{RI}])) * 3600", "{{pod}} reconciliations"),
            target(f"sum by (pod) (rate(mooring_reconcile_partitions_moved_sum{{{MEMBER}}}[{RI}])) * 3600", "{{pod}} partitions moved")],
           w=12, unit="short"),
        ts("Instance id waits",
           [target(f"mooring_instance_id_unreleased_wait_seconds{{{MEMBER}}}", "{{pod}} waited"),
            target(f"sum by (pod) (increase(mooring_instance_id_unreleased_attempts_total{{{MEMBER}}}[{RI}]))", "{{pod}} refused attempts")],
           w=12, unit="s", steps=[(None, "green"), (60, "orange"), (300.001, "red")],
           custom={"thresholdsStyle": {"mode": "line"}},
           overrides=[{"matcher": {"id": "byFrameRefID", "options": "B"}, "properties": [{"id": "unit", "value": "short"}]}],
           description="UNRELEASED_INSTANCE_ID: a static member waits for the process it replaces to release its group.instance.id (it stays Ready meanwhile, deploy/README.md). MooringInstanceIdUnreleased: warning from 60 s, critical above 300 s."),
    ]


def share():
    rate = lambda m, by="pod": f"sum by ({by}) (rate({m}{{{MEMBER}}}[{RI}]))"
    hour = lambda m: f"round(sum(increase({m}{{{MEMBER}}}[1h])))"
    return [
        stat("Delivery limit", [target(f"max(mooring_share_delivery_count_limit{{{GROUP}}})", "limit")],
             description="The share group's share.delivery.count.limit as the broker describes it (DescribeConfigs): a record released at this delivery count is archived, never delivered again. -1: not a share group, or not read yet."),
        stat("Rejected (1 h)", [target(hour("mooring_share_records_rejected_total"), "rejected")],
             steps=[(None, "green"), (1, "orange"), (101, "red")],
             description="Records the selected members rejected as poison in the last hour (MooringShareRecordsRejected: warning from 1, critical above 100)."),
        stat("Archived (1 h)", [target(hour("mooring_share_records_archived_total"), "archived")],
             steps=[(None, "green"), (1, "orange"), (101, "red")],
             description="Records released at the delivery limit in the last hour, which the broker archived unprocessed (MooringShareRecordsArchived: warning from 1, critical above 100)."),
        stat("Lock expiries (1 h)", [target(hour("mooring_share_lock_expired_total"), "expired")],
             steps=[(None, "green"), (10, "orange"), (101, "red")],
             description="Verdicts that came after their record's acquisition lock ran out (MooringShareLocksExpired: warning from 10, critical above 100 per member)."),
        stat("Members", [target(f"sum(mooring_share_member_state{{{MEMBER}, state=\"stable\"}})", "stable")],
             description="Selected share members in state stable (every member may fetch every share-partition)."),
        stat("Share-partition lag", [target(
            f"sum(max by (topic, partition) (mooring_partition_lag_records{{{GROUP}}}"
            f" and on (namespace, job, pod, instance, topic, partition) mooring_share_partition_start_offset{{{GROUP}}}))", "records")],
             description="Records of the group's share-partitions not yet done (the broker's share-partition lag, DescribeShareGroupOffsets)."),
        ts("Records per second by verdict",
           [target(f"sum(rate(mooring_share_records_acquired_total{{{MEMBER}}}[{RI}]))", "acquired"),
            target(f"sum(rate(mooring_share_records_accepted_total{{{MEMBER}}}[{RI}]))", "accepted"),
            target(f"sum(rate(mooring_share_records_released_total{{{MEMBER}}}[{RI}]))", "released"),
            target(f"sum(rate(mooring_share_records_rejected_total{{{MEMBER}}}[{RI}]))", "rejected"),
            target(f"sum(rate(mooring_share_records_archived_total{{{MEMBER}}}[{RI}]))", "archived")],
           w=12, unit="ops",
           description="Acquired under a lock, then accepted (processed), released (delivered again, to any member), or rejected (poison); archived: released at the delivery limit."),
        ts("Acquired by delivery count",
           [target(rate("mooring_share_records_acquired_by_delivery_total", "delivery_count"), "delivery {{delivery_count}}")],
           w=12, unit="ops",
           description="Records acquired per second by their delivery count: redeliveries (2, 3, ...) building up mean handlers fail and release; at the limit the broker archives them."),
        ts("Poison and archives per member",
           [target(f"sum by (pod) (increase(mooring_share_records_rejected_total{{{MEMBER}}}[{RI}]))", "{{pod}} rejected"),
            target(f"sum by (pod) (increase(mooring_share_records_archived_total{{{MEMBER}}}[{RI}]))", "{{pod}} archived")],
           w=12),
        ts("Acquisition locks",
           [target(rate("mooring_share_lock_renewals_total"), "{{pod}} renewed"),
            target(rate("mooring_share_lock_renewals_refused_total"), "{{pod}} renewal refused"),
            target(rate("mooring_share_lock_renewals_given_up_total"), "{{pod}} given up (max.poll.interval.ms)"),
            target(rate("mooring_share_lock_expired_total"), "{{pod}} expired before a verdict")],
           w=12, unit="ops",
           description="A handler slower than half the lock has its lock renewed; a refused or given-up renewal lets the lock run out, and the verdict that follows comes too late (the record went to another member)."),
        ts("Share-partition start offsets",
           [target(f"max by (topic, partition) (mooring_share_partition_start_offset{{{GROUP}}})", "{{topic}}/{{partition}}")],
           w=12, unit="short",
           description="Every record before a share-partition's start offset is done (DescribeShareGroupOffsets)."),
        ts("Members by share state", [target(f"sum by (state) (mooring_share_member_state{{{MEMBER}}})", "{{state}}")], w=12,
           description="The selected share members in each of their states (joining, reconciling, stable, fenced, leaving, fatal, unsubscribed)."),
    ]


def partitions():
    return [
        ts("Assigned partitions per member", [target(f"mooring_assigned_partitions{{{MEMBER}}}", "{{pod}}")], w=12,
           description="Java: assigned-partitions. A member with none is never Ready (replicas ≤ partitions)."),
        ts("Paused partitions per member", [target(f"mooring_partitions_paused{{{MEMBER}}}", "{{pod}}")], w=12,
           description="Paused by the application or by backpressure (full buffers)."),
    ]


def zones():
    bytes_rate = lambda by: f"sum by ({by}) (rate(mooring_fetch_record_bytes_total{{{MEMBER}}}[{RI}]))"
    return [
        stat("Cross-zone share", [target(f"mooring_fetch_cross_rack_ratio{{{MEMBER}}}", "{{pod}} ({{client_rack}})")],
             w=6, h=8, unit="percentunit", steps=[(None, "green"), (0.05, "orange"), (0.34, "red")],
             description="Per member, the share of the record bytes fetched since it started that came from brokers in "
                         "another rack (zone) than its client.rack: near 0 when it reads from its zone's replica (KIP-392). "
                         "No value: the member has no client.rack (see the Kubernetes client-rack component); then about "
                         "two thirds of a three-zone member's bytes cross a zone.",
             options={"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False},
                      "colorMode": "value", "graphMode": "area", "textMode": "value_and_name",
                      "justifyMode": "auto", "orientation": "auto", **STAT_REQUIRED}),
        ts("Bytes fetched within and across zones", [target(bytes_rate("cross_rack"), "cross zone: {{cross_rack}}")],
           w=9, unit="Bps",
           description="Record bytes per second (as on the wire) from brokers of the member's own rack (false), of "
                       "another (true), or unknown (the member or the broker has no rack)."),
        ts("Bytes fetched per rack", [target(bytes_rate("rack"), "rack {{rack}}")], w=9, unit="Bps",
           description="Record bytes per second by the broker.rack of the broker they came from."),
        ts("Bytes fetched per broker", [target(bytes_rate("broker, rack"), "broker {{broker}} ({{rack}})")], w=12,
           unit="Bps"),
        ts("Partitions read from a follower",
           [target(f"sum by (pod, broker) (mooring_fetch_follower_partitions{{{MEMBER}}})", "{{pod}} from broker {{broker}}")],
           w=12,
           description="Partitions each member fetches from a follower its leader named (the preferred read replica). "
                       "Drops to 0 when that follower fails and the leader serves, until the follower is back."),
    ]


def lag():
    return [
        ts("Lag in records per partition",
           [target(f"max by (topic, partition) (mooring_partition_lag_records{{{GROUP}}})", "{{topic}}/{{partition}}")],
           w=12, steps=[(None, "green"), (10000, "orange"), (100000.001, "red")],
           custom={"thresholdsStyle": {"mode": "line"}},
           description="High watermark minus committed offset (Java: records-lag). Every sidecar of a group reports the whole group's partitions; which member owns one: GET /debug/partitions."),
        ts("Lag in seconds per partition",
           [target(f"max by (topic, partition) (mooring_partition_lag_seconds{{{GROUP}}})", "{{topic}}/{{partition}}")],
           w=12, unit="s", steps=[(None, "green"), (60, "orange"), (300.001, "red")],
           custom={"thresholdsStyle": {"mode": "line"}},
           description="Estimated time lag: now minus when the committed offset was the high watermark (interpolated)."),
        ts("Lag in records per topic",
           [target(f"sum by (topic) (max by (topic, partition) (mooring_partition_lag_records{{{GROUP}}}))", "{{topic}}")],
           w=12, description="All partitions of a topic."),
        # mooring_partition_owner names each partition's member; joined per scrape target
        # (namespace, pod, instance), whose view is consistent, then the largest figure over the targets.
        ts("Lag in records per member",
           [target(f"max by (member) (sum by (namespace, pod, instance, member) (mooring_partition_lag_records{{{GROUP}}}"
                   f" * on (namespace, job, pod, instance, topic, partition) group_left (member) mooring_partition_owner{{{GROUP}}}))",
                   "{{member}}")],
           w=12, description="The lag of the partitions each member owns (group.instance.id, else member id), from the last Stable DescribeGroups."),
        ts("Largest lag in seconds per member",
           [target(f"max by (member) (mooring_partition_lag_seconds{{{GROUP}}}"
                   f" * on (namespace, job, pod, instance, topic, partition) group_left (member) mooring_partition_owner{{{GROUP}}})",
                   "{{member}}")],
           w=12, unit="s", description="The oldest unconsumed record among the partitions each member owns."),
        ts("Largest lag in seconds as each member sees it",
           [target(f"max by (pod) (mooring_partition_lag_seconds{{{MEMBER}}})", "{{pod}}")], w=12, unit="s",
           description="A member whose figure differs from the others' has a stale broker watch (see Health)."),
    ]


# Lag status codes for the timelines: per partition the worst view wins, and STALL ranks above
# STOP (the owner's sidecar, which knows its member holds the partition, says STALL where the
# others say STOP), as the alerts judge.
PARTITION_STATUS = [("OK", "green"), ("WARN", "yellow"), ("REWIND", "orange"), ("STOP", "red"),
                     ("STALL", "purple")]
GROUP_STATUS = [("OK", "green"), ("WARN", "yellow"), ("ERR", "red")]


def status_mappings(states):
    return [{"type": "value", "options": {
        str(i): {"text": name, "color": color, "index": i} for i, (name, color) in enumerate(states)}}]


def status_code(metric, states, by):
    """The state set as one number per series: the index of the state whose gauge is 1."""
    terms = [f'{i} * {metric}{{{GROUP}, status="{name}"}}' for i, (name, _) in enumerate(states) if i > 0]
    return f"max by ({by}) ({' + ignoring (status) '.join(f'({t})' for t in terms)})"


def lag_status():
    group_code = status_code("mooring_group_lag_status", GROUP_STATUS, "job")
    return [
        stat("Group lag status", [target(group_code, "status")],
             mappings=status_mappings(GROUP_STATUS), steps=[(None, "green"), (1, "yellow"), (2, "red")],
             description="Burrow's group status: ERR while a partition is STOP, STALL or REWIND, WARN while one is WARN "
                         "(MooringGroupLagError after 15 m of ERR). The worst sidecar's view."),
        panel("state-timeline", "Group lag status over time", [target(group_code, "group")], w=20, h=5,
              mappings=status_mappings(GROUP_STATUS), steps=[(None, "green"), (1, "yellow"), (2, "red")],
              options=TIMELINE_OPTIONS),
        panel("state-timeline", "Lag status per partition",
              [target(status_code("mooring_partition_lag_status", PARTITION_STATUS, "topic, partition"),
                      "{{topic}}/{{partition}}")],
              w=24, h=10, mappings=status_mappings(PARTITION_STATUS),
              steps=[(None, "green"), (1, "yellow"), (2, "orange"), (3, "red"), (4, "purple")],
              description="Burrow's rules over each partition's window of commits: OK; WARN (the lag grew at every "
                          "commit of a full window); REWIND (a commit went back); STOP (commits stopped with lag); STALL "
                          "(the same offset committed again and again, or a live Mooring member holding the partition "
                          "paused or with a handler past max.poll.interval.ms). Why: GET /debug/lag on a sidecar.",
              options=dict(TIMELINE_OPTIONS, showValue="auto")),
    ]


def scaling():
    return [
        ts("Replicas: the scaling signal and the members",
           [target(f"max(mooring_scaling_desired_replicas{{{GROUP}}})", "desired (the signal)"),
            target(f"max(mooring_scaling_recommended_replicas{{{GROUP}}})", "recommended (before the hold)"),
            target(f"max(mooring_group_members{{{GROUP}}})", "members")],
           w=16, description="mooring_scaling_desired_replicas is what KEDA's ScaledObject follows (deploy/README.md, "
                             "Autoscaling on lag): the replicas that drain the lag within scaling.drain.target.ms at the "
                             "measured rate per replica, capped at the partitions, a scale-down held for "
                             "scaling.scale.down.hold.ms. Why: GET /debug/scaling on a sidecar."),
        stat("Partitions without a committed offset",
             [target(f"max(mooring_scaling_partitions_without_commit{{{GROUP}}})", "partitions")], w=8,
             description="Their lag is not known: the signal does not count them (not as infinite lag)."),
        ts("Records appended per second",
           [target(f"max(mooring_scaling_produce_records_per_second{{{GROUP}}})", "appended")],
           w=24, unit="ops", description="To the group's partitions, over scaling.rate.window.ms: what the signal "
                                         "sizes the group for, with the lag to drain."),
    ]


def processing():
    return [
        ts("Handlers in flight per member", [target(f"mooring_processing_in_flight{{{MEMBER}}}", "{{pod}}")], w=8),
        ts("Handler latency",
           [target(f"histogram_quantile(0.5, sum by (le) (rate(mooring_handler_duration_seconds_bucket{{{MEMBER}}}[{RI}])))", "p50"),
            target(f"histogram_quantile(0.99, sum by (le) (rate(mooring_handler_duration_seconds_bucket{{{MEMBER}}}[{RI}])))", "p99")],
           w=8, unit="s", description="First attempt's start to final outcome, retries included."),
        ts("Records handled per second",
           [target(f"sum by (pod) (rate(mooring_handler_duration_seconds_count{{{MEMBER}}}[{RI}]))", "{{pod}}")],
           w=8, unit="ops"),
        ts("Commit latency",
           [target(f"histogram_quantile(0.5, sum by (le) (rate(mooring_commit_duration_seconds_bucket{{{MEMBER}}}[{RI}])))", "p50"),
            target(f"histogram_quantile(0.99, sum by (le) (rate(mooring_commit_duration_seconds_bucket{{{MEMBER}}}[{RI}])))", "p99")],
           w=12, unit="s", description="OffsetCommit round trip (Java: commit-latency-avg/max)."),
        ts("Commits and failed commits per second",
           [target(f"sum by (pod) (rate(mooring_commit_duration_seconds_count{{{MEMBER}}}[{RI}]))", "{{pod}} commits"),
            target(f"sum by (pod) (rate(mooring_commits_failed_total{{{MEMBER}}}[{RI}]))", "{{pod}} failed")],
           w=12, unit="ops"),
        ts("Record data held",
           [target(f"mooring_consumer_memory_bytes{{{MEMBER}}}", "{{pod}}"),
            target(f"max(mooring_consumer_memory_limit_bytes{{{MEMBER}}})", "budget")],
           w=24, unit="bytes",
           description="Fetched records not yet dropped by their handlers, against mooring.memory.max.bytes. "
                       "Held at the budget: handlers are the bottleneck and fetching waits for them."),
    ]


def health():
    return [
        panel("state-timeline", "Sidecar scraped",
              [target(f"up{{{MEMBER}}}", "{{pod}}")], w=12,
              mappings=[{"type": "value", "options": {"0": {"text": "down", "color": "red", "index": 0},
                                                       "1": {"text": "up", "color": "green", "index": 1}}}],
              steps=[(None, "red"), (1, "green")],
              description="Prometheus's own up series for each sidecar (MooringSidecarDown after 5 m at 0).",
              options=TIMELINE_OPTIONS),
        ts("Poll loop without progress", [target(f"mooring_poll_stale_seconds{{{MEMBER}}}", "{{pod}}")], w=12, unit="s",
           steps=[(None, "green"), (60, "orange"), (300.001, "red")], custom={"thresholdsStyle": {"mode": "line"}},
           description="Seconds the processing loop made no progress while work waited (0 when idle). Past the critical threshold /healthz fails (MooringPollStall)."),
        ts("Consumer loop staleness", [target(f"mooring_consumer_loop_stale_seconds{{{MEMBER}}}", "{{pod}}")], w=8, unit="s",
           description="Seconds since the consumer's fetch loop last iterated (it iterates at least every 100 ms while it lives): /healthz."),
        ts("Consumer last heard from", [target(f"time() - mooring_telemetry_last_event_timestamp_seconds{{{MEMBER}}}", "{{pod}}")],
           w=8, unit="s", steps=[(None, "green"), (60, "red")], custom={"thresholdsStyle": {"mode": "line"}},
           description="Seconds since the sidecar's last telemetry line; liveness fails past health.stale.ms (60 s)."),
        ts("Last heartbeat", [target(f"time() - mooring_last_heartbeat_timestamp_seconds{{{MEMBER}}}", "{{pod}}")], w=8, unit="s",
           description="Java: last-heartbeat-seconds-ago. Past session.timeout.ms the coordinator expires the member."),
        ts("Heartbeat round trip (p99) and failures",
           [target(f"histogram_quantile(0.99, sum by (le, pod) (rate(mooring_heartbeat_response_duration_seconds_bucket{{{MEMBER}}}[{RI}])))", "{{pod}} p99"),
            target(f"sum by (pod) (increase(mooring_heartbeats_failed_total{{{MEMBER}}}[{RI}]))", "{{pod}} failed")],
           w=8, unit="s", overrides=[{"matcher": {"id": "byFrameRefID", "options": "B"},
                                      "properties": [{"id": "unit", "value": "short"}]}]),
        ts("Telemetry events dropped", [target(f"sum by (pod) (increase(mooring_telemetry_events_dropped_total{{{MEMBER}}}[{RI}]))", "{{pod}}")],
           w=8, description="Events the consumer's exporter lost (the sidecar was away or slow); consumption never waits for the sidecar."),
        ts("Telemetry events received by type", [target(f"sum by (type) (rate(mooring_telemetry_events_received_total{{{MEMBER}}}[{RI}]))", "{{type}}")],
           w=8, unit="ops"),
        ts("Fencings", [target(f"sum by (pod) (increase(mooring_fenced_total{{{MEMBER}}}[{RI}]))", "{{pod}}")], w=8,
           description="FENCED_INSTANCE_ID: two live members with one group.instance.id (MooringFenced)."),
        ts("Broker watch", [target(f"time() - mooring_broker_watch_last_success_timestamp_seconds{{{MEMBER}}}", "{{pod}} since success"),
                            target(f"sum by (pod) (increase(mooring_broker_watch_errors_total{{{MEMBER}}}[{RI}]))", "{{pod}} errors")],
           w=8, unit="s", description="The sidecar's DescribeGroups/OffsetFetch/ListOffsets loop (lag, group state, members).",
           overrides=[{"matcher": {"id": "byFrameRefID", "options": "B"}, "properties": [{"id": "unit", "value": "short"}]}]),
    ]


row("Group overview", False, overview)
row("Rebalances", False, rebalances)
row("Lag", False, lag)
row("Lag status", False, lag_status)
row("Scaling", True, scaling)
row("Reconciliation (consumer protocol)", True, reconciliation)
row("Share groups", True, share)
row("Partitions", True, partitions)
row("Zones", True, zones)
row("Processing", True, processing)
row("Health", True, health)


def var(name, label, query, multi=True):
    return {
        "name": name, "label": label, "type": "query", "datasource": DS,
        "query": {"query": query, "refId": f"{name}-query", "qryType": 1},
        "definition": query, "refresh": 2, "sort": 1, "multi": multi, "includeAll": True,
        "allValue": ".+", "current": {"text": ["All"], "value": ["$__all"]}, "options": [], "regex": "", "hide": 0,
    }


dashboard = {
    "id": None,
    "uid": "mooring-consumer",
    "title": "Mooring consumer",
    "description": "Mooring consumers and their sidecars: group, rebalances, lag, lag status, reconciliation (consumer protocol), share groups, partitions, processing, health. Source: dashboards/generate.py.",
    "tags": ["mooring", "kafka"],
    "timezone": "browser",
    "editable": True,
    "graphTooltip": 1,
    "fiscalYearStartMonth": 0,
    "liveNow": False,
    "refresh": "30s",
    "schemaVersion": 39,
    "version": 1,
    "weekStart": "",
    "time": {"from": "now-6h", "to": "now"},
    "timepicker": {},
    "links": [],
    "annotations": {"list": [
        {"builtIn": 1, "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True, "hide": True,
         "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts", "type": "dashboard"},
        {"name": "Rebalances", "datasource": DS, "enable": True, "hide": False, "iconColor": "orange",
         "expr": f"max(changes(mooring_group_generation{{{GROUP}}}[$__interval])) > 0",
         "step": "30s", "titleFormat": "generation changed", "textFormat": "a rebalance completed"},
    ]},
    "templating": {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
         "current": {"text": "default", "value": "default"}, "hide": 0, "includeAll": False, "multi": False, "options": [], "refresh": 1, "regex": ""},
        var("namespace", "Namespace", "label_values(mooring_group_generation, namespace)"),
        var("group", "Group (scrape job)",
            'label_values(mooring_group_generation{namespace=~"$namespace"}, job)'),
        var("pod", "Member (pod)",
            'label_values(mooring_group_generation{namespace=~"$namespace", job=~"$group"}, pod)'),
    ]},
    "panels": panels,
}

json.dump(dashboard, sys.stdout, indent=2, ensure_ascii=False)
sys.stdout.write("\n")
