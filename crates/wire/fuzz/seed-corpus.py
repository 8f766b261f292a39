#!/usr/bin/env python3
"""Seeds the fuzz corpus from the golden bytes (Java-client-made and captured), so fuzzing starts
from real messages. Run from anywhere: python3 crates/wire/fuzz/seed-corpus.py

response_frame inputs are [api index, version offset] + body, matching fuzz/decoders.rs."""
import pathlib
import re

here = pathlib.Path(__file__).resolve().parent
golden = here.parent / "tests" / "golden"
corpus = here / "corpus"

# ApiKey::ALL order in crates/wire/src/messages/mod.rs, with each API's lowest version.
apis = [("produce", 3), ("fetch", 4), ("list_offsets", 1), ("metadata", 0), ("offset_commit", 2),
        ("offset_fetch", 1), ("find_coordinator", 0), ("join_group", 0), ("heartbeat", 0),
        ("leave_group", 0), ("sync_group", 0), ("describe_groups", 0), ("list_groups", 0),
        ("sasl_handshake", 0), ("api_versions", 0), ("create_topics", 2), ("delete_topics", 1),
        ("sasl_authenticate", 0), ("consumer_group_heartbeat", 0), ("consumer_group_describe", 0)]


def body(path):
    text = "".join(l for l in path.read_text().splitlines() if not l.startswith("#"))
    return bytes.fromhex(re.sub(r"\s+", "", text))


def put(target, name, data):
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data)


for path in sorted((golden / "messages").glob("*.hex")):
    m = re.match(r"(.+)_(request|response)_v(\d+)\.hex", path.name)
    if not m:
        continue
    index = [a for a, _ in apis].index(m.group(1))
    offset = int(m.group(3)) - apis[index][1]
    put("response_frame", path.stem, bytes([index, offset]) + body(path))
for path in sorted(golden.glob("records_*.hex")):
    put("record_batch", path.stem, body(path))
for kind in ("subscription", "assignment"):
    for path in sorted(golden.glob(f"{kind}_v*.hex")):
        put(kind, path.stem, body(path))
