#!/usr/bin/env bash
# kdp against a franz-go kadm program (bench/kadm) on the same mock cluster:
# builds the peer, writes the cluster (bench/kadm/cluster.py), starts
# `kdp mock-broker` on it, checks each command's two outputs are the same,
# then times interleaved pairs and prints a Markdown table
# (bench/kadm/pairs.py). Figures and the exact commands: docs/PERFORMANCE.md.
#
#   cargo build --release -p kdp
#   bash scripts/bench-kadm.sh medium|large [RUNS] [COMMAND...]
#
# medium: 100 topics x 10 partitions x 10 producers (10,000 producers,
# 1,000 pinned partitions, 150 consumer groups); large: 1,000 x 10 x 10
# (100,000 producers, 10,000 pinned partitions, 1,500 groups). COMMAND is a
# row name of the table (e.g. blocked, find-hanging). KDP (default
# target/release/kdp) is the client measured and also serves the mock.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-medium}
runs=${2:-11}
shift $(( $# < 2 ? $# : 2 ))
case "$size" in
  medium) dims=(100 10 10) ;;
  large) dims=(1000 10 10) ;;
  *) echo "usage: $0 medium|large [RUNS] [COMMAND...]" >&2; exit 2 ;;
esac
KDP=${KDP:-target/release/kdp}
work=${BENCH_DIR:-target/bench-kadm}
mkdir -p "$work"
work=$(cd "$work" && pwd)
[ -x "$KDP" ] || { echo "no $KDP: cargo build --release -p kdp" >&2; exit 2; }
(cd bench/kadm && GOFLAGS=-mod=mod go build -o "$work/kadm-bench" .)
python3 bench/kadm/cluster.py "${dims[@]}" > "$work/$size.json"
"$KDP" mock-broker --cluster "$work/$size.json" --listen 127.0.0.1:0 \
  > "$work/mock.out" 2> "$work/mock.err" &
mock=$!
trap 'kill "$mock" 2>/dev/null || true' EXIT
for _ in $(seq 600); do  # up to a minute: the large file takes seconds to load
  [ -s "$work/mock.out" ] && break
  kill -0 "$mock" 2>/dev/null || { cat "$work/mock.err" >&2; exit 1; }
  sleep 0.1
done
bootstrap=$(head -1 "$work/mock.out")
[ -n "$bootstrap" ] || { echo "the mock did not start" >&2; exit 1; }
echo "$size: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(len(p.get("producers",[])) for t in d["topics"] for p in t["partitions"]), "producers,", len(d["transactions"]), "transactions,", len(d.get("groups", [])), "groups")' "$work/$size.json"); mock at $bootstrap; $runs pairs" >&2
python3 bench/kadm/pairs.py "$bootstrap" "$KDP" "$work/kadm-bench" "$runs" "$@"
