#!/usr/bin/env bash
# `kdp exporter --lag` in front of a mock of scripts/lag-cluster.py
# (docs/PERFORMANCE.md, issue 30): scans back to back (--interval 1s, shorter
# than a scan), and per scan its duration (kdp_scan_duration_seconds), the
# Fetch requests the mock received during it (its request log at debug
# level, `api_key=1`), the exporter's resident set and peak (VmRSS, VmHWM)
# and the lag series' sum.
#
#   python3 scripts/lag-cluster.py 1000 100 50 10000 100 > /tmp/lag-scale.json
#   cargo build --release -p kdp
#   bash scripts/exporter-lag.sh /tmp/lag-scale.json [SCANS] [EXPORTER FLAGS...]
set -euo pipefail
cluster=$1
scans=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
kdp=${KDP:-target/release/kdp}
work=$(mktemp -d)
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
first_line() { until [ -s "$1" ]; do sleep 0.1; done; head -1 "$1"; }
metric() { awk -v m="$1" '$1 == m {print $2}' "$work/metrics"; }

"$kdp" mock-broker -vv --cluster "$cluster" --listen 127.0.0.1:0 > "$work/mock.out" 2> "$work/mock.log" &
pids+=($!)
bootstrap=$(first_line "$work/mock.out")

"$kdp" exporter --bootstrap-server "$bootstrap" --listen 127.0.0.1:0 --interval 1s --timeout 60s --lag "$@" \
    > "$work/exp.out" 2> "$work/exp.err" &
exp=$!
pids+=("$exp")
addr=$(first_line "$work/exp.out")
echo "| scan | duration | Fetch requests | exporter VmRSS | VmHWM | kdp_group_lag_records (sum) | kdp_group_lag_offsets (sum) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
seen=0 sum=0 fetches=0
while [ "$seen" -lt "$scans" ]; do
    sleep 0.2
    curl -sf "$addr/metrics" > "$work/metrics" || continue
    n=$(metric kdp_scan_duration_seconds_count); n=${n:-0}
    [ "${n%.*}" -gt "$seen" ] || continue
    s=$(metric kdp_scan_duration_seconds_sum)
    f=$(grep -c 'api_key=1 ' "$work/mock.log" || true)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$exp/status"); hwm=$(awk '/VmHWM/ {print $2}' "/proc/$exp/status")
    records=$(awk '/^kdp_group_lag_records\{/ {s+=$2} END {print s+0}' "$work/metrics")
    offsets=$(awk '/^kdp_group_lag_offsets\{/ {s+=$2} END {print s+0}' "$work/metrics")
    seen=${n%.*}
    awk -v k="$seen" -v d="$(awk -v a="$s" -v b="$sum" 'BEGIN {print a - b}')" -v f=$((f - fetches)) \
        -v r="$rss" -v h="$hwm" -v rec="$records" -v off="$offsets" \
        'BEGIN {printf "| %d | %.2f s | %d | %.1f MiB | %.1f MiB | %d | %d |\n", k, d, f, r / 1024, h / 1024, rec, off}'
    sum=$s fetches=$f
done
grep -E '^kdp_scans_total' "$work/metrics" || true
