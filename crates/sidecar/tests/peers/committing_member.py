"""librdkafka peer (PyPI confluent-kafka) for the sidecar's cause tests: a classic group member
that consumes and auto-commits every 200 ms, so the sidecar's broker watch sees its committed
offsets move while it lives. SIGKILL it to make the coordinator expire its session.

Usage: committing_member.py BOOTSTRAP GROUP TOPIC STRATEGY SESSION_TIMEOUT_MS

Prints {"name": "partitions_assigned", "count": N} on each assignment and {"name": "consumed",
"total": N} about once a second, one JSON line each, flushed.
"""
import json
import sys
import time

from confluent_kafka import Consumer

bootstrap, group, topic, strategy, session_timeout = sys.argv[1:6]

consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "partition.assignment.strategy": strategy,
        "session.timeout.ms": int(session_timeout),
        "heartbeat.interval.ms": 300,
        "enable.auto.commit": True,
        "auto.commit.interval.ms": 200,
        "auto.offset.reset": "earliest",
    }
)


def emit(**event):
    print(json.dumps(event, separators=(",", ":")), flush=True)


consumer.subscribe([topic], on_assign=lambda c, ps: emit(name="partitions_assigned", count=len(ps)))
total = 0
last = time.monotonic()
while True:
    msg = consumer.poll(0.1)
    if msg is not None and not msg.error():
        total += 1
    if time.monotonic() - last > 1.0:
        emit(name="consumed", total=total)
        last = time.monotonic()
