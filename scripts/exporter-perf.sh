#!/usr/bin/env bash
# Measures `kdp exporter` in front of a mock cluster (docs/PERFORMANCE.md):
# scan time, scrape latency while scans run back to back and between scans,
# and the exporter's peak memory.
#
#   python3 scripts/scale-cluster.py > /tmp/scale.json      # 1,000,000 producers
#   cargo build --release -p kdp
#   bash scripts/exporter-perf.sh /tmp/scale.json [EXTRA EXPORTER FLAGS...]
set -euo pipefail
cluster=$1; shift
kdp=${KDP:-target/release/kdp}
work=$(mktemp -d)
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

first_line() { until [ -s "$1" ]; do sleep 0.1; done; head -1 "$1"; }
latency() {  # N scrapes of $1/metrics: median, p99, max
    for _ in $(seq "$2"); do curl -s -o /dev/null -w '%{time_total}\n' "$1/metrics"; done | sort -n |
        awk '{a[NR]=$1} END {p=int(NR*0.99)+1; if (p>NR) p=NR;
             printf "%d scrapes: median %.1f ms, p99 %.1f ms, max %.1f ms\n", NR, 1000*a[int(NR/2)+1], 1000*a[p], 1000*a[NR]}'
}

"$kdp" mock-broker --cluster "$cluster" --listen 127.0.0.1:0 > "$work/mock.out" 2>/dev/null &
pids+=($!)
bootstrap=$(first_line "$work/mock.out")

# --interval 1s is shorter than a scan: scans run back to back
"$kdp" exporter --bootstrap-server "$bootstrap" --listen 127.0.0.1:0 --interval 1s --timeout 60s "$@" \
    > "$work/exp.out" 2>/dev/null &
exp=$!
pids+=("$exp")
addr=$(first_line "$work/exp.out")
until curl -sf "$addr/readyz" >/dev/null; do sleep 0.2; done
echo "while scanning: $(latency "$addr" 100)"
until [ "$(curl -s "$addr/metrics" | awk '/^kdp_scan_duration_seconds_count/ {print $2}')" -ge 10 ]; do sleep 0.5; done
curl -s "$addr/metrics" > "$work/metrics"
awk '/^kdp_scan_duration_seconds_sum/ {s=$2} /^kdp_scan_duration_seconds_count/ {n=$2}
     END {printf "scan: %d scans, mean %.2f s\n", n, s/n}' "$work/metrics"
echo "exposition: $(grep -vc '^#' "$work/metrics") samples, $(wc -c < "$work/metrics") bytes;" \
     "producers counted: $(awk '/^kdp_producers\{/ {s+=$2} END {print s}' "$work/metrics")"
grep -E 'VmHWM' "/proc/$exp/status"
kill -TERM "$exp"; wait "$exp" || true

# --interval 10m: after the first scan, scrapes meet no scan
"$kdp" exporter --bootstrap-server "$bootstrap" --listen 127.0.0.1:0 --interval 10m --timeout 60s "$@" \
    > "$work/exp2.out" 2>/dev/null &
pids+=($!)
addr=$(first_line "$work/exp2.out")
until curl -sf "$addr/readyz" >/dev/null; do sleep 0.2; done
echo "between scans: $(latency "$addr" 100)"
