#!/usr/bin/env bash
# `kdp exporter` over many scans of a mock cluster (docs/PERFORMANCE.md): the
# scan duration and the exporter's resident memory every 10 scans, to see that
# memory stays flat (nothing grows with the number of scans).
#
#   # 50 brokers, 1,000,000 producers, and the internal topics a cluster that has run
#   # transactions and consumers has (without them every scan waits on FindCoordinator's
#   # COORDINATOR_NOT_AVAILABLE, as a real cluster does until it has created them)
#   python3 scripts/scale-cluster.py 1000 10 100 50 10 50 --offsets-partitions 50 > /tmp/scale50.json
#   cargo build --release -p kdp
#   bash scripts/exporter-soak.sh /tmp/scale50.json 100 --producer-ids [EXTRA EXPORTER FLAGS...]
#
# Scans run back to back (--interval 1s is shorter than a scan). Prints one line after
# scans 1, 10, 25, 50, 75, 100 and every 100 after (the first sample at or past each):
# scans done, mean scan duration so far, VmRSS and VmHWM of the exporter, and the
# exporter's CPU time (user + system) per scan so far.
set -euo pipefail
cluster=$1; scans=$2; shift 2
kdp=${KDP:-target/release/kdp}
work=$(mktemp -d)
pids=()
cleanup() { kill -TERM "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

first_line() { until [ -s "$1" ]; do sleep 0.1; done; head -1 "$1"; }
metric() { curl -s "$addr/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

"$kdp" mock-broker --cluster "$cluster" --listen 127.0.0.1:0 > "$work/mock.out" 2>/dev/null &
pids+=($!)
bootstrap=$(first_line "$work/mock.out")
"$kdp" exporter --bootstrap-server "$bootstrap" --listen 127.0.0.1:0 --interval 1s --timeout 60s "$@" \
    > "$work/exp.out" 2>"$work/exp.err" &
exp=$!
pids+=("$exp")
addr=$(first_line "$work/exp.out")
marks=(1 10 25 50 75)
mark=0
next=1
while :; do
    n=$(metric kdp_scan_duration_seconds_count); n=${n:-0}
    if [ "$n" -ge "$next" ]; then
        sum=$(metric kdp_scan_duration_seconds_sum)
        rss=$(awk '/VmRSS/ {print $2}' "/proc/$exp/status")
        hwm=$(awk '/VmHWM/ {print $2}' "/proc/$exp/status")
        # utime + stime, in clock ticks (fields 14 and 15 after the command's parentheses)
        ticks=$(sed 's/.*) //' "/proc/$exp/stat" | awk '{print $12 + $13}')
        awk -v n="$n" -v s="$sum" -v r="$rss" -v h="$hwm" -v t="$ticks" -v hz="$(getconf CLK_TCK)" \
            'BEGIN {printf "%4d scans: mean %.2f s, VmRSS %.1f MB, VmHWM %.1f MB, CPU %.2f s/scan\n", n, s/n, r/1024, h/1024, t/hz/n}'
        [ "$n" -ge "$scans" ] && break
        mark=$((mark + 1))
        if [ "$mark" -lt "${#marks[@]}" ]; then next=${marks[$mark]}; else next=$(( (n / 100 + 1) * 100 )); fi
    fi
    sleep 0.5
done
curl -s "$addr/metrics" | grep -E '^kdp_scans_total|^kdp_broker_producer_ids\{broker="1"\}|^kdp_broker_new_producer_ids_total\{broker="1"\}' || true
