"""librdkafka peer (PyPI confluent-kafka) in the shape of Kafka's VerifiableConsumer, so the
system scenarios (crates/consumer/tests/system_scenarios) can put a librdkafka member in a group
beside ours and Java's and judge it by the same event lines.

Usage: verifiable_consumer.py --bootstrap-server B --topic T --group-id G [--consumer.config FILE]
       [--group-protocol classic|consumer] [--group-remote-assignor A] [--assignment-strategy S]
       [--session-timeout MS] [--group-instance-id ID] [--enable-autocommit]
       [--reset-policy earliest|latest|none] [--max-messages N]

As Java's tool: the properties file first, then the flags (classic: partition.assignment.strategy
from --assignment-strategy, Java class names mapped to librdkafka's; consumer: group.protocol and
group.remote.assignor, no strategy). It polls, prints what it got as `records_consumed` (per
partition count, minOffset, maxOffset), commits exactly those offsets synchronously
(`offsets_committed`, unless --enable-autocommit), and polls again. `partitions_assigned` and
`partitions_revoked` are printed from the rebalance callbacks (a loss is printed as a revoke, as
Java's default onPartitionsLost does). Records of partitions no longer owned when a poll returns
are not reported (their next owner reads them from the committed offset).

One difference is bridged: Java's consumer calls onPartitionsAssigned at the end of every
reconciliation under the consumer protocol, with the partitions added even when there are none,
where librdkafka calls on_assign only when partitions are added. So under the consumer protocol,
a revoke while running is followed by an empty `partitions_assigned`, as Java's tool prints it.

Exits (closing the consumer: its partitions revoked, the member leaving) on SIGTERM or SIGINT, or
after --max-messages records, printing `shutdown_complete`.
"""
import argparse
import json
import signal
import sys
import threading
import time

from confluent_kafka import Consumer, KafkaException, TopicPartition

STRATEGIES = {
    "RangeAssignor": "range",
    "RoundRobinAssignor": "roundrobin",
    "CooperativeStickyAssignor": "cooperative-sticky",
}


def emit(name, **fields):
    event = {"timestamp": int(time.time() * 1000), "name": name, **fields}
    print(json.dumps(event, separators=(",", ":")), flush=True)


def partitions(tps):
    return [{"topic": tp.topic, "partition": tp.partition} for tp in tps]


def properties(path):
    """A Java properties file's `key=value` lines (comments and blanks skipped)."""
    props = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
    return props


def config(args):
    conf = properties(args.consumer_config) if args.consumer_config else {}
    if args.group_protocol.lower() == "consumer":
        conf["group.protocol"] = "consumer"
        if args.group_remote_assignor:
            conf["group.remote.assignor"] = args.group_remote_assignor
    else:
        names = [s.strip().rsplit(".", 1)[-1] for s in args.assignment_strategy.split(",")]
        conf["partition.assignment.strategy"] = ",".join(STRATEGIES.get(n, n) for n in names)
    if args.session_timeout is not None:
        conf["session.timeout.ms"] = str(args.session_timeout)
    if args.group_instance_id:
        conf["group.instance.id"] = args.group_instance_id
    conf.update(
        {
            "bootstrap.servers": args.bootstrap_server,
            "group.id": args.group_id,
            "enable.auto.commit": "true" if args.enable_autocommit else "false",
            "auto.offset.reset": args.reset_policy,
        }
    )
    return conf


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group-id", required=True)
    parser.add_argument("--consumer.config", dest="consumer_config")
    parser.add_argument("--group-protocol", default="classic")
    parser.add_argument("--group-remote-assignor")
    parser.add_argument(
        "--assignment-strategy", default="org.apache.kafka.clients.consumer.RangeAssignor"
    )
    parser.add_argument("--session-timeout", type=int)
    parser.add_argument("--group-instance-id")
    parser.add_argument("--enable-autocommit", action="store_true")
    parser.add_argument("--reset-policy", default="earliest")
    parser.add_argument("--max-messages", type=int, default=-1)
    args = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    consumer_protocol = args.group_protocol.lower() == "consumer"
    commit = not args.enable_autocommit
    owned = set()
    closing = [False]

    def on_assign(_consumer, tps):
        owned.update((tp.topic, tp.partition) for tp in tps)
        emit("partitions_assigned", partitions=partitions(tps))

    def on_revoke(_consumer, tps):
        for tp in tps:
            owned.discard((tp.topic, tp.partition))
        emit("partitions_revoked", partitions=partitions(tps))
        if consumer_protocol and not closing[0]:
            emit("partitions_assigned", partitions=[])

    consumer = Consumer(config(args))
    consumer.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    emit("startup_complete")
    consumed = 0
    try:
        while not stop.is_set():
            if 0 <= args.max_messages <= consumed:
                break
            batch = consumer.consume(num_messages=500, timeout=0.2)
            by_partition = {}
            for msg in batch:
                if msg.error():
                    raise KafkaException(msg.error())
                key = (msg.topic(), msg.partition())
                if key in owned:
                    by_partition.setdefault(key, []).append(msg.offset())
            if not by_partition:
                continue
            summaries = []
            offsets = []
            for (topic, partition), seen in sorted(by_partition.items()):
                if args.max_messages >= 0:
                    seen = sorted(seen)[: max(0, args.max_messages - consumed)]
                if not seen:
                    continue
                consumed += len(seen)
                summaries.append(
                    {
                        "topic": topic,
                        "partition": partition,
                        "count": len(seen),
                        "minOffset": min(seen),
                        "maxOffset": max(seen),
                    }
                )
                offsets.append(TopicPartition(topic, partition, max(seen) + 1))
            emit(
                "records_consumed",
                count=sum(s["count"] for s in summaries),
                partitions=summaries,
            )
            if commit and offsets:
                committed = [{"topic": tp.topic, "partition": tp.partition, "offset": tp.offset}
                             for tp in offsets]
                try:
                    consumer.commit(offsets=offsets, asynchronous=False)
                    emit("offsets_committed", offsets=committed, success=True)
                except KafkaException as e:
                    emit("offsets_committed", offsets=committed, success=False, error=str(e))
    except KafkaException as e:
        closing[0] = True
        consumer.close()
        emit("shutdown_complete", error=str(e))
        return 1
    closing[0] = True
    consumer.close()
    emit("shutdown_complete")
    return 0


if __name__ == "__main__":
    sys.exit(main())
