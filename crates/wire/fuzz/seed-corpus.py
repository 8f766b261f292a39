#!/usr/bin/env python3
"""Seeds the fuzz corpus from the golden bytes (Java-client-made and captured), so fuzzing starts
from real messages. Run from anywhere: python3 crates/wire/fuzz/seed-corpus.py

response_frame inputs are [api index, version offset] + body, matching fuzz/decoders.rs."""
import hashlib
import pathlib
import re

here = pathlib.Path(__file__).resolve().parent
golden = here.parent / "tests" / "golden"
corpus = here / "corpus"

# ApiKey::ALL order, with each API's lowest version, read off the generated enum's doc lines
# (`/// `JoinGroup` (key 11), requests v0-9.`), so an API added there never shifts the others.
messages = (here.parent / "src" / "messages" / "mod.rs").read_text()
apis = [(re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower(), int(low))
        for name, low in re.findall(r"/// `(\w+)` \(key \d+\), requests v(\d+)", messages)]


def body(path):
    text = "".join(l for l in path.read_text().splitlines() if not l.startswith("#"))
    return bytes.fromhex(re.sub(r"\s+", "", text))


def put(target, data):
    """Named by the SHA-1 of its bytes, as libFuzzer names what it keeps: seeding twice adds nothing."""
    d = corpus / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


for path in sorted((golden / "messages").glob("*.hex")):
    m = re.match(r"(.+)_(request|response)_v(\d+)\.hex", path.name)
    if not m:
        continue
    index = [a for a, _ in apis].index(m.group(1))
    offset = int(m.group(3)) - apis[index][1]
    put("response_frame", bytes([index, offset]) + body(path))
for path in sorted(golden.glob("records_*.hex")):
    put("record_batch", body(path))
for kind in ("subscription", "assignment"):
    for path in sorted(golden.glob(f"{kind}_v*.hex")):
        put(kind, body(path))
