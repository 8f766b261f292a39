"""librdkafka peer (PyPI confluent-kafka): join a classic consumer group, read a topic, commit, leave.

Usage: golden_consumer.py [--sasl MECHANISM USER PASSWORD] BOOTSTRAP GROUP TOPIC STRATEGY COUNT [INSTANCE_ID]

STRATEGY is librdkafka's partition.assignment.strategy (range, roundrobin, cooperative-sticky).
Reads COUNT records from the beginning of TOPIC, commits them synchronously, stays in the group a
little longer so at least one Heartbeat goes out, then closes (LeaveGroup, unless INSTANCE_ID makes it
a static member). scripts/capture-golden runs it while it records the traffic for the wire tests.
--sasl connects over SASL_PLAINTEXT (BOOTSTRAP is then the broker's SASL listener) with
librdkafka's sasl.mechanisms, sasl.username and sasl.password.
Prints "ok N" with the number of records read; exits 1 if fewer than COUNT arrived in time.
"""
import sys
import time

from confluent_kafka import Consumer, KafkaException

args = sys.argv[1:]
sasl = None
if args[:1] == ["--sasl"]:
    sasl, args = args[1:4], args[4:]
bootstrap, group, topic, strategy, count = args[0:5]
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
if len(args) > 5:
    config["group.instance.id"] = args[5]
if sasl:
    config.update({"security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": sasl[0],
                   "sasl.username": sasl[1], "sasl.password": sasl[2]})
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
