"""librdkafka consume throughput (confluent-kafka): consume N records as fast as possible.

Usage: consume_perf.py BOOTSTRAP TOPIC N GROUP [KEY=VALUE ...]

A fresh group, auto.offset.reset=earliest, librdkafka's default buffering; records are taken in
batches (Consumer.consume) and only counted (len of the value), so the Python side does as little
as it can. Prints one JSON line like consume-bench: consume_secs runs from the first record to the
N-th, total_secs from subscribe to the N-th.
"""

import json
import sys
import time

from confluent_kafka import Consumer, KafkaException


def main() -> int:
    bootstrap, topic, n, group = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "auto.offset.reset": "earliest",
        "client.id": "consume-perf-librdkafka",
    }
    for kv in sys.argv[5:]:
        k, v = kv.split("=", 1)
        conf[k] = v
    consumer = Consumer(conf)
    begun = time.monotonic()
    consumer.subscribe([topic])
    records = 0
    nbytes = 0
    first = None
    deadline = begun + 600
    while records < n:
        if time.monotonic() > deadline:
            print(f"only {records} of {n} records within 600 s", file=sys.stderr)
            return 1
        batch = consumer.consume(num_messages=10000, timeout=1.0)
        for msg in batch:
            err = msg.error()
            if err is not None:
                if err.fatal():
                    raise KafkaException(err)
                continue
            if first is None:
                first = time.monotonic()
            records += 1
            nbytes += len(msg.value() or b"")
            if records == n:
                break
    last = time.monotonic()
    consumer.close()
    consume = last - first
    print(
        json.dumps(
            {
                "client": "librdkafka",
                "records": n,
                "bytes": nbytes,
                "consume_secs": consume,
                "total_secs": last - begun,
                "records_per_sec": n / consume,
                "mib_per_sec": nbytes / 1048576 / consume,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
