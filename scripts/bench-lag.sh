#!/usr/bin/env bash
# `kdp lag` against `kafka-consumer-groups.sh --describe --all-groups`
# (ConsumerGroupCommand of Kafka's 4.4.0 jars, Java 17) on one mock cluster
# of scripts/lag-cluster.py (docs/PERFORMANCE.md, issue 30): writes the
# cluster file, starts `kdp mock-broker`, checks that both tools print the
# same rows with the same committed offset, log end offset and offset lag
# (scripts/lag-agree.py), then times them as interleaved pairs (kdp json,
# kdp table, Kafka's tool, ...; the first round is a warm-up), each run
# under /usr/bin/time: wall, user + system CPU, peak RSS, and the ratios
# pair by pair. Output goes to /dev/null.
#
#   cargo build --release -p kdp
#   bash scripts/kafka-cluster.sh start && bash scripts/kafka-cluster.sh stop   # Kafka's jars, once
#   bash scripts/bench-lag.sh [PAIRS] [lag-cluster.py ARGS...]
#
# Default cluster: 100 topics x 20 partitions on 10 brokers, 1,000 groups
# with 20 committed offsets each (20,000 rows). KDP (default
# target/release/kdp), KAFKA_CP (default it/target/kafka-4.4.0/lib/*),
# BENCH_DIR (default a temporary directory, removed at the end).
set -euo pipefail
pairs=${1:-5}
shift || true
dims=("$@")
[ ${#dims[@]} -gt 0 ] || dims=(100 20 10 1000 20)
kdp=${KDP:-target/release/kdp}
kafka_cp=${KAFKA_CP:-it/target/kafka-4.4.0/lib/*}
keep=${BENCH_DIR:-}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
mock=
cleanup() {
    [ -z "$mock" ] || { kill -TERM "$mock" 2>/dev/null || true; wait "$mock" 2>/dev/null || true; }
    [ -n "$keep" ] || rm -rf "$work"
}
trap cleanup EXIT

python3 scripts/lag-cluster.py "${dims[@]}" > "$work/cluster.json"
"$kdp" mock-broker --cluster "$work/cluster.json" --listen 127.0.0.1:0 > "$work/mock.out" 2>/dev/null &
mock=$!
until [ -s "$work/mock.out" ]; do sleep 0.2; done
b=$(head -1 "$work/mock.out")

java_tool=(java -Xshare:auto -cp "$kafka_cp" org.apache.kafka.tools.consumer.group.ConsumerGroupCommand
           --bootstrap-server "$b" --describe --all-groups)
kdp_json=("$kdp" lag --bootstrap-server "$b" --timeout 120s --output json)
kdp_table=("$kdp" lag --bootstrap-server "$b" --timeout 120s)

"${kdp_json[@]}" > "$work/kdp.json" 2> "$work/kdp.err" || [ $? -eq 4 ]
"${java_tool[@]}" > "$work/kafka.txt" 2> "$work/kafka.err"
python3 scripts/lag-agree.py "$work/kdp.json" "$work/kafka.txt"
grep -h "position(s)" "$work/kdp.err" || true

# one run: "wall user sys peakKB" of the command, output to /dev/null
once() { /usr/bin/time -f "%e %U %S %M" -o "$work/t" "$@" > /dev/null 2>&1 || true; tail -1 "$work/t"; }
: > "$work/runs"
for i in $(seq 0 "$pairs"); do
    j=$(once "${kdp_json[@]}"); t=$(once "${kdp_table[@]}"); k=$(once "${java_tool[@]}")
    [ "$i" -eq 0 ] || echo "$j $t $k" >> "$work/runs"
done
python3 - "$work/runs" <<'EOF'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
med = lambda xs: statistics.median(xs)
names = ["kdp lag --output json", "kdp lag (table)", "kafka-consumer-groups.sh --describe --all-groups"]
print("| %d pairs | wall (median, min-max) | CPU user+sys (median) | peak RSS (median) |" % len(rows))
print("| --- | ---: | ---: | ---: |")
for i, n in enumerate(names):
    w = [r[4 * i] for r in rows]; c = [r[4 * i + 1] + r[4 * i + 2] for r in rows]; m = [r[4 * i + 3] for r in rows]
    print("| %s | %.3f s (%.3f-%.3f) | %.3f s | %.1f MiB |" % (n, med(w), min(w), max(w), med(c), med(m) / 1024))
for i, n in enumerate(names[:2]):
    rw = [r[4 * i] / r[8] for r in rows]; rc = [(r[4 * i + 1] + r[4 * i + 2]) / max(r[9] + r[10], 1e-3) for r in rows]
    rm = [r[4 * i + 3] / r[11] for r in rows]
    print("| %s / Kafka's tool, pair by pair (median) | %.4f (%.4f-%.4f) | %.4f | %.3f |" % (n, med(rw), min(rw), max(rw), med(rc), med(rm)))
EOF
