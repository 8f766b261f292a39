# scripts/bench-lib.sh — what the benches share (sourced by scripts/bench-consumer, bench-share,
# bench-sidecar and bench-rebalance, not run): messages, where cargo builds, the topics' fill, the
# Java peers' JVM options, a timed run's figures, the load average.
#
# The sourcing script sets, before it calls these:
#   ROOT         the work tree
#   BENCH        its name, for messages (e.g. bench-share)
#   KAFKA        the scripts/kafka command line of its cluster (an array)
#   BOOTSTRAP    that cluster's PLAINTEXT bootstrap address
#   RECORDS, RECORD_SIZE   what a topic is filled with
#   WORK         a scratch directory (bench_fill_topic keeps the producer's stderr there)

die() { echo "$BENCH: $*" >&2; exit 1; }
say() { echo "$BENCH: $*" >&2; }

# bench_target_dir: the directory cargo builds the work tree's workspace into, absolute, as cargo
# itself resolves it: CARGO_TARGET_DIR (a relative one taken from the work tree, where the benches
# run cargo), build.target-dir of a cargo config, else target/ of the work tree.
bench_target_dir() {
  (cd "$ROOT" && cargo metadata --format-version 1 --no-deps --offline) |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' ||
    die "cannot ask cargo for the target directory"
}

# bench_build_rust_peers TARGET_DIR BIN...: builds bench/rust-peers (release, --locked) into
# TARGET_DIR (its own workspace would build into bench/rust-peers/target otherwise) and checks
# that each BIN is there.
bench_build_rust_peers() {
  local dir="$1" b
  shift
  say "building the Rust peers (bench/rust-peers, release)"
  cargo build --release --quiet --locked --manifest-path "$ROOT/bench/rust-peers/Cargo.toml" \
    --target-dir "$dir"
  for b in "$@"; do
    [[ -x "$dir/release/$b" ]] || die "no $dir/release/$b after the build"
  done
}

# bench_topic_records TOPIC: the sum of the end offsets of every partition of TOPIC (0 when it
# does not exist).
bench_topic_records() {
  { "${KAFKA[@]}" tool GetOffsetShell --bootstrap-server "$BOOTSTRAP" --topic "$1" 2>/dev/null || true; } |
    awk -F: -v t="$1" '$1 == t { s += $NF } END { print s + 0 }'
}

# bench_fill_topic NAME PARTITIONS COMPRESSION: creates the topic and produces records of
# RECORD_SIZE bytes with Kafka's ProducerPerformance (acks=1 linger.ms=20 batch.size=262144 and
# the topic's compression.type) until it has RECORDS.
bench_fill_topic() {
  local name="$1" partitions="$2" compression="$3" have missing
  have="$(bench_topic_records "$name")"
  if ((have == 0)); then
    "${KAFKA[@]}" tool TopicCommand --bootstrap-server "$BOOTSTRAP" --create --if-not-exists \
      --topic "$name" --partitions "$partitions" --replication-factor 1 >/dev/null
  fi
  if ((have >= RECORDS)); then
    say "reusing $name: $have records already there"
    return
  fi
  missing=$((RECORDS - have))
  say "producing $missing records of $RECORD_SIZE bytes into $name (compression.type=$compression)"
  # Its warnings (NOT_LEADER_OR_FOLLOWER retries while a new topic's leaders are elected) shown
  # only when the topic ends up short.
  "${KAFKA[@]}" tool ProducerPerformance --topic "$name" --num-records "$missing" \
    --record-size "$RECORD_SIZE" --throughput -1 --producer-props bootstrap.servers="$BOOTSTRAP" \
    acks=1 linger.ms=20 batch.size=262144 compression.type="$compression" \
    2>"$WORK/produce-$name.err" | tail -n 1 >&2
  have="$(bench_topic_records "$name")"
  if ((have < RECORDS)); then
    tail -n 20 "$WORK/produce-$name.err" >&2
    die "$name has $have records after producing, fewer than $RECORDS"
  fi
}

# bench_warm_topic STATE NAME: reads the topic's log segments of the cluster whose state
# directory is STATE, so every client reads from the page cache. The partition suffix keeps
# another topic sharing NAME's prefix (bench-1k-12p-lz4 of bench-1k-12p) out.
bench_warm_topic() {
  cat "$1"/node-*/data/"$2"-[0-9]*/*.log >/dev/null
}

# bench_java_opts JARS_DIR: sets JAVA_OPTS to the JVM options of Kafka's bin/kafka-run-class.sh
# and kafka-consumer-perf-test.sh (-Xmx512M, G1, C2), with the tools' log configuration.
# `scripts/kafka tool` would run a peer with C1 only (-XX:TieredStopAtLevel=1), which handicaps
# Java.
bench_java_opts() {
  local log
  if [[ -f "$1/log4j2-tools.properties" ]]; then
    log="-Dlog4j2.configurationFile=$1/log4j2-tools.properties"
  else
    log="-Dlog4j.configuration=file:$1/log4j-tools.properties"
  fi
  JAVA_OPTS=(-Xmx512M -server -XX:+UseG1GC -XX:MaxGCPauseMillis=20
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent
    -Djava.awt.headless=true "$log")
}

# bench_json_figures FILE [consume|total]: "records_per_sec mib_per_sec" from the JSON line a
# client printed last (consume-bench's and the Rust peers' line): its own figures, timed from the
# first record to the N-th (consume, the default), or recomputed over total_secs, from just
# before the subscription to the N-th (total). Nothing when there is no such line.
bench_json_figures() {
  python3 -c 'import json, sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if l.startswith("{")]
j = json.loads(lines[-1])
if sys.argv[2] == "total":
    print(j["records"] / j["total_secs"], j["bytes"] / 1048576 / j["total_secs"])
else:
    print(j["records_per_sec"], j["mib_per_sec"])' "$1" "${2:-consume}" 2>/dev/null || true
}

# bench_timed TIMING OUT ERR CMD...: runs CMD under /usr/bin/time, its stdout to OUT and stderr
# to ERR; TIMING's last line is then "user_s sys_s peak_rss_kib wall_s". Returns CMD's status.
bench_timed() {
  local timing="$1" out="$2" err="$3"
  shift 3
  /usr/bin/time -f '%U %S %M %e' -o "$timing" "$@" >"$out" 2>"$err"
}

# bench_load: the load average now (1, 5 and 15 minutes).
bench_load() {
  uptime | sed 's/.*load average: //'
}
