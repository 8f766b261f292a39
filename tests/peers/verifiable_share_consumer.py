"""librdkafka peer (PyPI confluent-kafka, its KIP-932 ShareConsumer preview) in the shape of
Kafka's VerifiableShareConsumer, so the share scenarios (crates/consumer/tests/share_scenarios)
can put a librdkafka member in a share group beside ours and Java's and judge it by the same
event lines.

Usage: verifiable_share_consumer.py --bootstrap-server B --topic T --group-id G
       [--command-config FILE] [--offset-reset-strategy earliest|latest]
       [--acknowledgement-mode auto|sync|async] [--max-messages N]

As Java's tool: the properties file first, then the flags. `--offset-reset-strategy` sets the
group's `share.auto.offset.reset` (IncrementalAlterConfigs on the group) before consuming and
prints `offset_reset_strategy_set`. It polls, prints what it got as `records_consumed` (per
partition: count and offsets), and acknowledges it: under `auto` implicitly at the next poll,
under `sync`/`async` with commit_sync/commit_async right away. Each answer of the broker, which
librdkafka hands to the acknowledgement commit callback, is printed as `offsets_acknowledged`
(`success`, and `error` when refused).

Exits on SIGTERM or SIGINT, or after --max-messages records acknowledged, closing the consumer
(which acknowledges what is pending and leaves the group) and printing `shutdown_complete`.
"""
import argparse
import json
import signal
import sys
import threading
import time

from confluent_kafka import KafkaException, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)


def emit(name, **fields):
    event = {"timestamp": int(time.time() * 1000), "name": name, **fields}
    print(json.dumps(event, separators=(",", ":")), flush=True)


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


def by_partition(pairs):
    """`partitions` entries of (topic, partition, offsets) triples, and their total count."""
    entries = [
        {"topic": topic, "partition": partition, "count": len(offsets), "offsets": offsets}
        for (topic, partition), offsets in sorted(pairs.items())
    ]
    return entries, sum(e["count"] for e in entries)


def set_offset_reset(conf, group, strategy):
    admin = AdminClient({"bootstrap.servers": conf["bootstrap.servers"]})
    resource = ConfigResource(
        ResourceType.GROUP,
        group,
        incremental_configs=[
            ConfigEntry(
                "share.auto.offset.reset",
                strategy,
                incremental_operation=AlterConfigOpType.SET,
            )
        ],
    )
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(timeout=30)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group-id", required=True)
    parser.add_argument("--command-config")
    parser.add_argument("--offset-reset-strategy", choices=["earliest", "latest"])
    parser.add_argument("--acknowledgement-mode", default="auto", choices=["auto", "sync", "async"])
    parser.add_argument("--max-messages", type=int, default=-1)
    args = parser.parse_args()

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    conf = properties(args.command_config) if args.command_config else {}
    # Java's client keys librdkafka does not take.
    conf.pop("retry.backoff.ms", None)
    conf.update({"bootstrap.servers": args.bootstrap_server, "group.id": args.group_id})

    acknowledged = [0]

    def on_acknowledged(offsets, error):
        pairs = {(tp.topic, tp.partition): sorted(seen) for tp, seen in offsets.items()}
        entries, count = by_partition(pairs)
        if error is None:
            acknowledged[0] += count
            emit("offsets_acknowledged", count=count, partitions=entries, success=True)
        else:
            emit(
                "offsets_acknowledged",
                count=count,
                partitions=entries,
                success=False,
                error=str(error),
            )

    emit("startup_complete")
    if args.offset_reset_strategy:
        try:
            set_offset_reset(conf, args.group_id, args.offset_reset_strategy)
        except Exception as e:  # any failure ends the tool, as Java's does
            emit("shutdown_complete", error=f"setting share.auto.offset.reset: {e}")
            return 1
        emit("offset_reset_strategy_set", offsetResetStrategy=args.offset_reset_strategy)

    consumer = ShareConsumer(conf)
    consumer.set_acknowledgement_commit_callback(on_acknowledged)
    consumer.subscribe([args.topic])
    error = None
    try:
        while not stop.is_set():
            if 0 <= args.max_messages <= acknowledged[0]:
                break
            batch = consumer.poll(0.2)
            pairs = {}
            for msg in batch or []:
                if msg.error():
                    raise KafkaException(msg.error())
                pairs.setdefault((msg.topic(), msg.partition()), []).append(msg.offset())
            if not pairs:
                continue
            entries, count = by_partition(pairs)
            emit("records_consumed", count=count, partitions=entries)
            if args.acknowledgement_mode == "sync":
                consumer.commit_sync()
            elif args.acknowledgement_mode == "async":
                consumer.commit_async()
    except KafkaException as e:
        error = str(e)
    emit("shutdown_requested")
    consumer.close()
    if error is None:
        emit("shutdown_complete")
        return 0
    emit("shutdown_complete", error=error)
    return 1


if __name__ == "__main__":
    sys.exit(main())
