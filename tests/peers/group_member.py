"""librdkafka peer (PyPI confluent-kafka): a classic consumer group member that only watches its
assignment, for mixed-group tests (our members, Java's and librdkafka's in one group).

Usage: group_member.py BOOTSTRAP GROUP TOPIC STRATEGY CLIENT_ID [SESSION_TIMEOUT_MS]

STRATEGY is librdkafka's partition.assignment.strategy (range, roundrobin, cooperative-sticky), or
`default` to leave it unset (librdkafka's own default, range,roundrobin).
Prints one JSON line per event on stdout, in the shape of Kafka's VerifiableConsumer so one parser
reads both: {"name": "startup_complete"}, {"name": "partitions_assigned", "partitions": [...]},
{"name": "partitions_revoked", ...}, {"name": "partitions_lost", ...}, each partition
{"topic": T, "partition": P}; assigned/revoked carry only the change (cooperative) or everything
(eager), and every event also carries "member_id". An error the consumer reports (for example
JoinGroup's INCONSISTENT_GROUP_PROTOCOL) is printed as {"name": "error", "code": N, "error": NAME,
"message": TEXT}, then the peer exits with it. Exits (closing the consumer, i.e. LeaveGroup) when
stdin closes or on SIGTERM.
"""
import json
import signal
import sys
import threading

from confluent_kafka import Consumer, KafkaException

bootstrap, group, topic, strategy, client_id = sys.argv[1:6]
session_timeout = int(sys.argv[6]) if len(sys.argv) > 6 else 6000

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())


def watch_stdin():
    sys.stdin.read()  # returns at EOF
    stop.set()


threading.Thread(target=watch_stdin, daemon=True).start()

config = {
    "bootstrap.servers": bootstrap,
    "group.id": group,
    "client.id": client_id,
    "session.timeout.ms": session_timeout,
    "heartbeat.interval.ms": 1000,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
}
if strategy != "default":
    config["partition.assignment.strategy"] = strategy
consumer = Consumer(config)


def member_id():
    try:
        return consumer.memberid() or ""
    except (RuntimeError, KafkaException):  # closed
        return ""


def emit(name, partitions=None, **fields):
    event = {"name": name, "member_id": member_id(), **fields}
    if partitions is not None:
        event["partitions"] = [{"topic": p.topic, "partition": p.partition} for p in partitions]
    print(json.dumps(event, separators=(",", ":")), flush=True)


# confluent-kafka assigns (incrementally, for cooperative) after on_assign returns, and unassigns
# after on_revoke / on_lost.
consumer.subscribe(
    [topic],
    on_assign=lambda c, ps: emit("partitions_assigned", ps),
    on_revoke=lambda c, ps: emit("partitions_revoked", ps),
    on_lost=lambda c, ps: emit("partitions_lost", ps),
)
emit("startup_complete")
try:
    while not stop.is_set():
        msg = consumer.poll(0.2)
        if msg is not None and msg.error():
            error = msg.error()
            emit("error", code=error.code(), error=error.name(), message=error.str())
            raise KafkaException(error)
finally:
    consumer.close()
    emit("shutdown_complete")
