#!/usr/bin/env bash
# Installs what the tests need beyond Rust, if missing: Java and Maven (the
# real Kafka brokers and Kafka's own tools), Python 3 (the cluster scripts),
# util-linux/gawk/findutils (kafka-cluster.sh), and Debian's prometheus
# package (promtool and the Prometheus server, for tests/exporter.rs).
# Called by scripts/test.sh and .ci/run, so the README's test command works
# on a fresh machine by itself. Needs root (or sudo) only when something is
# missing.
set -euo pipefail

need_apt=()
command -v java >/dev/null || need_apt+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null || need_apt+=(maven)
command -v python3 >/dev/null || need_apt+=(python3)
command -v setsid >/dev/null || need_apt+=(util-linux)
command -v awk >/dev/null || need_apt+=(gawk)
command -v find >/dev/null || need_apt+=(findutils)
{ command -v promtool >/dev/null && command -v prometheus >/dev/null; } || need_apt+=(prometheus)
# the kdp CLI in a real terminal (tests/cli_terminal.rs) and its completions
# and manual pages checked by the shells and man themselves (tests/cli_completions.rs)
command -v tmux >/dev/null || need_apt+=(tmux)
command -v zsh >/dev/null || need_apt+=(zsh)
command -v elvish >/dev/null || need_apt+=(elvish)
command -v fish >/dev/null || need_apt+=(fish)
command -v man >/dev/null || need_apt+=(man-db)
command -v groff >/dev/null || need_apt+=(groff-base)
((${#need_apt[@]})) || exit 0

sudo=()
if [[ "$(id -u)" != 0 ]]; then
    command -v sudo >/dev/null || {
        echo "install-deps.sh: missing ${need_apt[*]}; install them (apt-get install ${need_apt[*]}) or run as root" >&2
        exit 1
    }
    sudo=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
# a stale or missing package list is the usual failure: refresh first, retry once
for attempt in 1 2; do
    if "${sudo[@]}" apt-get update -q && "${sudo[@]}" apt-get install -y -qq "${need_apt[@]}"; then
        exit 0
    fi
    [[ "$attempt" == 2 ]] && break
    sleep 10
done
echo "install-deps.sh: cannot install ${need_apt[*]}" >&2
exit 1
