"""librdkafka peer (PyPI confluent-kafka): join a classic consumer group, read a topic, commit, leave.

Usage: golden_consumer.py BOOTSTRAP GROUP TOPIC STRATEGY COUNT [INSTANCE_ID]

STRATEGY is librdkafka's partition.assignment.strategy (range, roundrobin, cooperative-sticky).
Reads COUNT records from the beginning of TOPIC, commits them synchronously, stays in the group a
little longer so at least one Heartbeat goes out, then closes (LeaveGroup, unless INSTANCE_ID makes it
a static member). scripts/capture-golden runs it while it records the traffic for the wire tests.
Prints "ok N" with the number of records read; exits 1 if fewer than COUNT arrived in time.
"""
import sys
import time

from confluent_kafka import Consumer, KafkaException

bootstrap, group, topic, strategy, count = sys.argv[1:6]
count = int(count)
config = {
    "bootstrap.servers": bootstrap,
    "group.id": group,
    "client.id": "mooring-golden-librdkafka",
    "partition.assignment.strategy": strategy,
    "auto.offset.reset": "earliest",
    "enable.auto.commit": False,
    "session.timeout.ms": 6000,
    "heartbeat.interval.ms": 500,
}
if len(sys.argv) > 6:
    config["group.instance.id"] = sys.argv[6]
consumer = Consumer(config)
consumer.subscribe([topic])
read = 0
deadline = time.monotonic() + 30
while read < count and time.monotonic() < deadline:
    msg = consumer.poll(0.5)
    if msg is None:
        continue
    if msg.error():
        raise KafkaException(msg.error())
    read += 1
if read:
    consumer.commit(asynchronous=False)
# Keep polling past one heartbeat interval: the capture wants a Heartbeat request and response.
linger = time.monotonic() + 1.5
while time.monotonic() < linger:
    consumer.poll(0.2)
consumer.close()
print("ok", read)
sys.exit(0 if read >= count else 1)
