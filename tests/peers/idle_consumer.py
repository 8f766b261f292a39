"""librdkafka idle consumer (confluent-kafka): subscribe and poll until SIGTERM or SIGINT.

Usage: idle_consumer.py BOOTSTRAP TOPIC GROUP [KEY=VALUE ...]

For scripts/bench-idle, which measures what a consumer costs with nothing to consume: librdkafka's
defaults but for group.id, auto.offset.reset=earliest and client.id (KEY=VALUE overrides), polled
with Consumer.poll(1.0) in a loop as an application would. Prints a JSON line
{"event": "assigned", "assigned": N} from each assignment callback, and at the end one with the
records consumed. Exits 0 after a clean close.
"""

import json
import signal
import sys
import time

from confluent_kafka import Consumer, KafkaException


def main() -> int:
    bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "client.id": "idle-consumer-librdkafka",
    }
    for kv in sys.argv[4:]:
        k, v = kv.split("=", 1)
        conf[k] = v
    stop = False

    def on_signal(_signum, _frame):
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    begun = time.monotonic()

    def on_assign(_consumer, partitions):
        print(json.dumps({"event": "assigned", "assigned": len(partitions),
                          "secs": time.monotonic() - begun}), flush=True)

    consumer = Consumer(conf)
    consumer.subscribe([topic], on_assign=on_assign)
    records = 0
    while not stop:
        msg = consumer.poll(1.0)
        if msg is None:
            continue
        err = msg.error()
        if err is not None:
            if err.fatal():
                raise KafkaException(err)
            continue
        records += 1
    consumer.close()
    print(json.dumps({"client": "librdkafka", "idle": True, "records": records,
                      "total_secs": time.monotonic() - begun}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
