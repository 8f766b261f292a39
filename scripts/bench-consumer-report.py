"""scripts/bench-consumer's tables (run by it, not on its own): per topic, each client's medians
with its ratios to ours and to the floor, the best-peer ratios and the goal lines; then what one
core does for the parts no client avoids (fetch-floor --costs).

Usage: bench-consumer-report.py RESULTS LOADS COSTS RECORDS RECORD_SIZE RSS_GOAL_MIB ROUNDS
                                FLOOR_GOAL
  RESULTS  lines "key client round records_per_s mib_per_s cpu_s rss_kb"
  LOADS    lines "key|name|partitions|compression|load before|load after"
  COSTS    lines "key JSON", one per part fetch-floor --costs printed
"""

import json
import statistics
import sys

# Clients that are no peer: ours, and the floor.
NOT_PEERS = ("mooring", "floor")


def ratio(a, b):
    return f"{a / b:.2f}x" if b else "-"


def met(ok):
    return "met" if ok else "NOT met"


def medians(results):
    """(topic key, client) -> [median rps, mibps, cpu_s, rss_kb], run counts, client order."""
    runs, order = {}, []
    for line in open(results):
        key, client, _round, rps, mib, cpu, rss = line.split()
        if client not in order:
            order.append(client)
        runs.setdefault((key, client), []).append((float(rps), float(mib), float(cpu), float(rss)))
    med = {k: [statistics.median(col) for col in zip(*rows)] for k, rows in runs.items()}
    return med, {k: len(v) for k, v in runs.items()}, order


def topic_table(med, gib):
    """The table of one topic's clients (client -> medians)."""
    ours, floor = med.get("mooring"), med.get("floor")
    print(f"| {'client':<14} | {'records/s':>10} | {'MiB/s':>7} | {'CPU-s per GiB':>13} | "
          f"{'peak RSS MiB':>12} | {'rec/s / ours':>12} | {'CPU / ours':>10} | {'RSS / ours':>10} | "
          f"{'CPU / floor':>11} | {'rec/s / floor':>13} |")
    widths = [16, 11, 8, 14, 13, 13, 11, 11, 12, 14]
    print("|" + "|".join(["-" * widths[0]] + ["-" * w + ":" for w in widths[1:]]) + "|")
    for client, (rps, mib, cpu, rss) in med.items():
        to_ours = [ratio(rps, ours[0]), ratio(cpu, ours[2]), ratio(rss, ours[3])] if ours else ["-"] * 3
        to_floor = [ratio(cpu, floor[2]), ratio(rps, floor[0])] if floor else ["-"] * 2
        print(f"| {client:<14} | {rps:>10.0f} | {mib:>7.1f} | {cpu / gib:>13.2f} | {rss / 1024:>12.1f} | "
              f"{to_ours[0]:>12} | {to_ours[1]:>10} | {to_ours[2]:>10} | {to_floor[0]:>11} | "
              f"{to_floor[1]:>13} |")


def goal_lines(med, rss_goal, floor_goal):
    """Ours against the best peer and against the floor."""
    ours, floor = med.get("mooring"), med.get("floor")
    if not ours:
        return
    goals = []
    peers = {c: m for c, m in med.items() if c not in NOT_PEERS}
    if peers:
        best_rps = max(peers, key=lambda c: peers[c][0])
        best_cpu = min(peers, key=lambda c: peers[c][2])
        best_rss = min(peers, key=lambda c: peers[c][3])
        t = ours[0] / peers[best_rps][0]
        u = ours[2] / peers[best_cpu][2]
        print(f"ours/best peer: throughput {t:.2f}x (best: {best_rps}), CPU per GiB {u:.2f}x "
              f"(best: {best_cpu}), peak RSS {ours[3] / peers[best_rss][3]:.2f}x (best: {best_rss})")
        goals += [f"throughput >= 1.1x best peer: {met(t >= 1.1)}",
                  f"CPU per GiB <= 0.6x best peer: {met(u <= 0.6)}"]
    if floor and floor[2] > 0:
        f = ours[2] / floor[2]
        print(f"ours/floor: CPU per GiB {f:.2f}x, throughput {ours[0] / floor[0]:.2f}x")
        goals.append(f"CPU per GiB <= {floor_goal:.1f}x floor: {met(f <= floor_goal)} ({f:.2f}x)")
    elif floor:
        # /usr/bin/time counts CPU in 10 ms steps: a run this short may show none.
        goals.append(f"CPU per GiB <= {floor_goal:.1f}x floor: not judged (the floor's CPU time "
                     "is below /usr/bin/time's 10 ms)")
    m = ours[3] / 1024
    goals.append(f"peak RSS <= {rss_goal:.0f} MiB: {met(m <= rss_goal)} ({m:.1f} MiB)")
    print("goals: " + "; ".join(goals))


def costs_table(costs, names):
    """What one core does for CRC-32C and decompression, per topic and part."""
    rows = []
    for line in open(costs):
        key, js = line.split(" ", 1)
        rows.append((key, json.loads(js)))
    if not rows:
        return
    print("\nwhat one core does for the parts no client avoids (fetch-floor --costs: whole batches "
          "of the topic, one thread, CPU time)")
    print(f"| {'topic':<26} | {'part':<7} | {'batches':>7} | {'MiB timed':>9} | {'GiB/s in':>8} | "
          f"{'GiB/s out':>9} | {'CPU-s per GiB':>13} |")
    print("|" + "|".join(["-" * 28, "-" * 9] + ["-" * w + ":" for w in (8, 10, 9, 10, 14)]) + "|")
    per_topic = {}
    for key, j in rows:
        per_topic[key] = per_topic.get(key, 0) + j["cpu_secs_per_gib_values"]
        print(f"| {names.get(key, key):<26} | {j['part']:<7} | {j['batches']:>7} | "
              f"{j['input_bytes'] / 2**20:>9.1f} | {j['input_gib_per_sec']:>8.2f} | "
              f"{j['output_gib_per_sec']:>9.2f} | {j['cpu_secs_per_gib_values']:>13.3f} |")
    print("(CPU-s per GiB of record values, the topic tables' unit; per topic, all its parts: "
          + ", ".join(f"{names.get(k, k)} {v:.3f}" for k, v in per_topic.items()) + ")")


def main():
    results, loads, costs = sys.argv[1], sys.argv[2], sys.argv[3]
    n, size, rss_goal = int(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
    rounds, floor_goal = int(sys.argv[7]), float(sys.argv[8])
    gib = n * size / 2**30
    med, counts, order = medians(results)
    names = {}
    for line in open(loads):
        key, name, partitions, compression, before, after = line.rstrip("\n").split("|")
        names[key] = name
        by_client = {c: med[(key, c)] for c in order if (key, c) in med}
        print(f"\n{name}: {partitions} partitions, compression.type={compression}; "
              f"load average before: {before}, after: {after}")
        topic_table(by_client, gib)
        short = [f"{c} {counts[(key, c)]}" for c in by_client if counts[(key, c)] < rounds]
        if short:
            print(f"(runs that failed are left out; runs kept: {', '.join(short)} of {rounds})")
        goal_lines(by_client, rss_goal, floor_goal)
    costs_table(costs, names)


main()
