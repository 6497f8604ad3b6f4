#!/usr/bin/env bash
# Three-node Apache Kafka KRaft cluster on 127.0.0.1 for the integration tests, of the
# version KDP_KAFKA_VERSION names (default 4.4.0, the newest 4.x; also 3.9.2, the newest 3.9).
#
#   scripts/kafka-cluster.sh start   build it/ if needed, wipe target/kafka-it/, start, wait until ready
#   scripts/kafka-cluster.sh stop    stop the nodes (TERM, then KILL after a bound); idempotent
#   scripts/kafka-cluster.sh env     print target/kafka-it/cluster.env
#   scripts/kafka-cluster.sh status  show which nodes run
#
# Node 1: process.roles=broker,controller (the only controller, dynamic quorum, formatted
# --standalone); nodes 2 and 3: process.roles=broker (formatted --no-initial-controllers).
# Each node serves JMX on a port of its own (127.0.0.1 only, no authentication: a test
# cluster), KDP_IT_JMX in cluster.env, for the brokers' own gauges (ProducerIdCount).
# producer.id.expiration.check.interval.ms (read at start): 1 s on nodes 1 and 2, a day on
# node 3, so that once a test shortens producer.id.expiration.ms (dynamic) nodes 1 and 2
# expire idle producer ids at once and node 3 keeps them past it. With Kafka's default
# producer.id.expiration.ms (a day) neither changes what a test sees.
# Use the environment with:  set -a; . target/kafka-it/cluster.env; set +a
#
# Knobs (environment): KDP_IT_JAVA (default java), KDP_IT_READY_TIMEOUT (s, default 90),
# KDP_IT_STOP_TIMEOUT (s per stage, default 15), KDP_IT_HEAP (default 512m),
# KDP_KAFKA_VERSION (default 4.4.0): broker, tools and clients all of that version, built by
# maven into it/target/kafka-<version>/{lib,classes}. A 3.x version logs with log4j 1.x
# (reload4j, it/config/broker-log4j.properties), 4.x with log4j2 (broker-log4j2.properties).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
IT="$ROOT/it"
STATE="$ROOT/target/kafka-it"
DEFAULT_KAFKA_VERSION=4.4.0
VERSION="${KDP_KAFKA_VERSION:-$DEFAULT_KAFKA_VERSION}"
[[ "$VERSION" =~ ^[34]\.[0-9]+\.[0-9]+$ ]] || { echo "kafka-cluster: KDP_KAFKA_VERSION=$VERSION: want 3.x.y or 4.x.y" >&2; exit 2; }
GENERATION="${VERSION%%.*}"
BUILD="$IT/target/kafka-$VERSION"
LIB="$BUILD/lib"
CLASSES="$BUILD/classes"
STAMP="$BUILD/.kdp-it-build-stamp"
MVN_LOG="$ROOT/target/kdp-it-maven-$VERSION.log"
JAVA="${KDP_IT_JAVA:-java}"
READY_TIMEOUT="${KDP_IT_READY_TIMEOUT:-90}"
STOP_TIMEOUT="${KDP_IT_STOP_TIMEOUT:-15}"
HEAP="${KDP_IT_HEAP:-512m}"
CLUSTER_ID="a2RwLWl0LWNsdXN0ZXItMQ" # base64url of the 16 bytes "kdp-it-cluster-1"
NODES=(1 2 3)

log() { echo "kafka-cluster: $*" >&2; }

# Kafka 3.x configures log4j 1.x (reload4j), 4.x log4j2: each gets a file-only broker config.
if [[ "$GENERATION" == 3 ]]; then
    LOG_OPT="-Dlog4j.configuration=file:$IT/config/broker-log4j.properties"
else
    LOG_OPT="-Dlog4j2.configurationFile=$IT/config/broker-log4j2.properties"
fi
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------- build

needs_build() {
    [[ -d "$LIB" && -f "$STAMP" && -f "$CLASSES/dev/kdp/it/Scenario.class" ]] || return 0
    ls "$LIB"/kafka_2.13-*.jar >/dev/null 2>&1 || return 0
    [[ -n "$(find "$IT/pom.xml" "$IT/src" -newer "$STAMP" -print -quit 2>/dev/null)" ]]
}

build() {
    if ! needs_build; then return 0; fi
    command -v mvn >/dev/null || { log "mvn not found"; exit 1; }
    local t0; t0=$(now)
    log "building it/ for Kafka $VERSION with maven (log: ${MVN_LOG#"$ROOT/"})"
    mkdir -p "$(dirname "$MVN_LOG")"
    rm -rf "$LIB" "$STAMP" # no stale jars from an older pom
    if ! mvn -B -q -f "$IT/pom.xml" -Dkafka.version="$VERSION" -Dkafka.generation="$GENERATION" \
        package >"$MVN_LOG" 2>&1; then
        log "maven build failed; tail of $MVN_LOG:"
        tail -n 40 "$MVN_LOG" >&2
        exit 1
    fi
    touch "$STAMP"
    log "maven build done in $(elapsed "$t0")s"
}

# FlinkSinkJob (owners tests) has its own class path (it/flink/pom.xml: flink-connector-kafka
# with the kafka-clients it is built against), the same for every broker version. Built once per
# checkout; a failure only leaves KDP_IT_FLINK_CLASSPATH empty (the Flink tests then say so).
FLINK_BUILD="$IT/target/flink-5.0.0-2.2"
FLINK_STAMP="$FLINK_BUILD/.kdp-it-build-stamp"

build_flink() {
    if [[ -f "$FLINK_STAMP" && -z "$(find "$IT/flink/pom.xml" "$IT/src/main/java/dev/kdp/it" -newer "$FLINK_STAMP" -print -quit 2>/dev/null)" ]]; then
        return 0
    fi
    local t0 flog="$ROOT/target/kdp-it-maven-flink.log"; t0=$(now)
    rm -rf "$FLINK_BUILD/lib"
    if mvn -B -q -f "$IT/flink/pom.xml" package >"$flog" 2>&1; then
        touch "$FLINK_STAMP"
        log "flink harness built in $(elapsed "$t0")s"
    else
        log "flink harness build failed (see ${flog#"$ROOT/"}); KDP_IT_FLINK_CLASSPATH stays empty"
    fi
}

flink_classpath() {
    if [[ -f "$FLINK_STAMP" ]]; then echo "$FLINK_BUILD/lib/*:$FLINK_BUILD/classes"; fi
}

# ---------------------------------------------------------------- processes

# Is $1 a live process that is our node (kafka.Kafka with a properties file under $STATE)?
is_our_node() {
    local pid="$1" cmd
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    cmd=$({ tr '\0' ' ' <"/proc/$pid/cmdline"; } 2>/dev/null) || return 1
    [[ "$cmd" == *kafka.Kafka* && "$cmd" == *"$STATE/node"* ]]
}

# PIDs of our nodes: from the pid files, plus any kafka.Kafka whose command line names a
# properties file under this repo's $STATE (covers a wiped state dir with nodes still running).
node_pids() {
    local n pid p
    local -A seen=()
    for n in "$@"; do
        if [[ -f "$STATE/node$n/pid" ]]; then
            pid=$(cat "$STATE/node$n/pid" 2>/dev/null || true)
            if is_our_node "$pid" && [[ -z "${seen[$pid]:-}" ]]; then seen[$pid]=1; echo "$pid"; fi
        fi
        for p in /proc/[0-9]*; do
            pid=${p#/proc/}
            [[ -z "${seen[$pid]:-}" ]] || continue
            if is_our_node "$pid" && { tr '\0' ' ' <"$p/cmdline"; } 2>/dev/null | grep -qF "$STATE/node$n/"; then
                seen[$pid]=1; echo "$pid"
            fi
        done
    done
}

# TERM the given nodes, wait up to STOP_TIMEOUT s, then KILL what is left.
stop_nodes() {
    local pids pid i
    pids=$(node_pids "$@")
    [[ -n "$pids" ]] || return 0
    for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
    for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
        local alive=""
        for pid in $pids; do if is_our_node "$pid"; then alive=1; fi; done
        [[ -n "$alive" ]] || return 0
        sleep 0.1
    done
    for pid in $pids; do
        if is_our_node "$pid"; then
            log "node pid $pid did not stop within ${STOP_TIMEOUT}s; KILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    for ((i = 0; i < 50; i++)); do
        local alive=""
        for pid in $pids; do if is_our_node "$pid"; then alive=1; fi; done
        [[ -n "$alive" ]] || return 0
        sleep 0.1
    done
}

cmd_stop() {
    # brokers first, so their controlled shutdown can still reach the controller
    stop_nodes 2 3
    stop_nodes 1
    rm -f "$STATE"/node*/pid "$STATE/cluster.env" # logs and data stay for post-mortems
    log "stopped"
}

cmd_status() {
    local n pids rc=0
    for n in "${NODES[@]}"; do
        pids=$(node_pids "$n" | tr '\n' ' ')
        if [[ -n "$pids" ]]; then echo "node$n: running (pid ${pids% })"; else echo "node$n: stopped"; rc=3; fi
    done
    return $rc
}

# ---------------------------------------------------------------- start

# Print N distinct free TCP ports on 127.0.0.1.
free_ports() {
    local count="$1"
    if command -v python3 >/dev/null; then
        python3 - "$count" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
    else
        local ports=() p
        while ((${#ports[@]} < count)); do
            p=$((20000 + RANDOM % 30000))
            [[ " ${ports[*]} " == *" $p "* ]] && continue
            if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then ports+=("$p"); fi
        done
        echo "${ports[*]}"
    fi
}

write_props() {
    local n="$1" port="$2" cport="$3" f="$STATE/node$1/node.properties"
    local check=1000
    [[ "$n" == 3 ]] && check=86400000
    {
        echo "node.id=$n"
        if [[ "$n" == 1 ]]; then
            echo "process.roles=broker,controller"
            echo "listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport"
        else
            echo "process.roles=broker"
            echo "listeners=PLAINTEXT://127.0.0.1:$port"
        fi
        cat <<EOF
advertised.listeners=PLAINTEXT://127.0.0.1:$port
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
controller.quorum.bootstrap.servers=127.0.0.1:$cport
log.dirs=$STATE/node$n/data

# test-friendly settings
num.partitions=1
default.replication.factor=3
min.insync.replicas=2
auto.create.topics.enable=false
offsets.topic.replication.factor=3
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=3
transaction.state.log.min.isr=2
transaction.state.log.num.partitions=5
transaction.max.timeout.ms=3600000
group.initial.rebalance.delay.ms=0
share.coordinator.state.topic.replication.factor=3
share.coordinator.state.topic.min.isr=2

# small machine, fast start and stop
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
background.threads=4
broker.heartbeat.interval.ms=500
broker.session.timeout.ms=6000
controller.quorum.fetch.timeout.ms=2000
controller.socket.timeout.ms=5000
log.flush.offset.checkpoint.interval.ms=5000

# how often idle producer ids are removed (see the top of kafka-cluster.sh)
producer.id.expiration.check.interval.ms=$check
EOF
    } >"$f"
}

dump_logs() {
    local n f
    for n in "${NODES[@]}"; do
        for f in "$STATE/node$n"/*.log; do
            [[ -f "$f" ]] || continue
            echo "----- ${f#"$ROOT/"} (tail) -----" >&2
            tail -n 25 "$f" >&2
        done
    done
}

fail_start() {
    log "startup FAILED: $*"
    dump_logs
    cmd_stop >/dev/null 2>&1 || true
    exit 1
}

cmd_start() {
    local t0 t1 n
    t0=$(now)
    command -v "$JAVA" >/dev/null || { log "java not found ($JAVA)"; exit 1; }
    # a previous cluster of this repo (stale pid files, or still running): stop it first
    cmd_stop 2>/dev/null
    build
    build_flink
    rm -rf "$STATE"
    mkdir -p "$STATE"

    local ports; read -r -a ports <<<"$(free_ports 7)"
    local cport="${ports[3]}"
    local -A bport=([1]="${ports[0]}" [2]="${ports[1]}" [3]="${ports[2]}")
    local -A jport=([1]="${ports[4]}" [2]="${ports[5]}" [3]="${ports[6]}")
    for n in "${NODES[@]}"; do
        mkdir -p "$STATE/node$n/data"
        write_props "$n" "${bport[$n]}" "$cport"
    done

    # format storage (in parallel): the controller as a single-node dynamic quorum
    local -a fpids=()
    for n in "${NODES[@]}"; do
        local mode=--no-initial-controllers
        [[ "$n" == 1 ]] && mode=--standalone
        "$JAVA" -Xmx256m -cp "$LIB/*" "$LOG_OPT" \
            -Dkafka.logs.dir="$STATE/node$n" \
            kafka.tools.StorageTool format -t "$CLUSTER_ID" -c "$STATE/node$n/node.properties" $mode \
            >"$STATE/node$n/format.log" 2>&1 &
        fpids+=($!)
    done
    for n in "${!fpids[@]}"; do
        wait "${fpids[$n]}" || fail_start "storage format of node$((n + 1)) failed"
    done

    t1=$(now)
    for n in "${NODES[@]}"; do
        local d="$STATE/node$n"
        # setsid: the nodes must outlive the shell that started them
        setsid bash -c 'echo $$ >"$1/pid"; shift; exec "$@"' _ "$d" \
            "$JAVA" -Xms256m -Xmx"$HEAP" -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
            -Djava.awt.headless=true \
            -Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.port="${jport[$n]}" \
            -Dcom.sun.management.jmxremote.rmi.port="${jport[$n]}" -Dcom.sun.management.jmxremote.host=127.0.0.1 \
            -Djava.rmi.server.hostname=127.0.0.1 -Dcom.sun.management.jmxremote.authenticate=false \
            -Dcom.sun.management.jmxremote.ssl=false \
            "$LOG_OPT" -Dkafka.logs.dir="$d" \
            -cp "$LIB/*" kafka.Kafka "$d/node.properties" \
            </dev/null >"$d/stdout.log" 2>&1 &
    done

    local bootstrap="127.0.0.1:${bport[1]},127.0.0.1:${bport[2]},127.0.0.1:${bport[3]}"
    local cp="$LIB/*:$CLASSES"
    "$JAVA" -cp "$cp" dev.kdp.it.Scenario wait-cluster --bootstrap "$bootstrap" --brokers 3 \
        --timeout-seconds "$READY_TIMEOUT" >"$STATE/ready.json" 2>"$STATE/ready.log" &
    local wpid=$! tw; tw=$(now)
    while kill -0 "$wpid" 2>/dev/null; do
        if awk -v a="$tw" -v b="$(now)" -v t="$READY_TIMEOUT" 'BEGIN { exit !(b - a > t + 10) }'; then
            kill "$wpid" 2>/dev/null || true
            wait "$wpid" 2>/dev/null || true
            fail_start "cluster not ready within ${READY_TIMEOUT}s"
        fi
        for n in "${NODES[@]}"; do
            if [[ -f "$STATE/node$n/pid" ]] && ! is_our_node "$(cat "$STATE/node$n/pid")"; then
                kill "$wpid" 2>/dev/null || true
                wait "$wpid" 2>/dev/null || true
                fail_start "node$n exited during startup"
            fi
        done
        sleep 0.5
    done
    if ! wait "$wpid"; then
        cat "$STATE/ready.log" >&2
        fail_start "cluster not ready within ${READY_TIMEOUT}s"
    fi

    cat >"$STATE/cluster.env" <<EOF
KDP_IT_BOOTSTRAP=$bootstrap
KDP_IT_BROKERS="1=127.0.0.1:${bport[1]} 2=127.0.0.1:${bport[2]} 3=127.0.0.1:${bport[3]}"
KDP_IT_JMX="1=127.0.0.1:${jport[1]} 2=127.0.0.1:${jport[2]} 3=127.0.0.1:${jport[3]}"
KDP_IT_CLASSPATH=$cp
KDP_IT_JAVA=$JAVA
KDP_IT_CONTROLLER=127.0.0.1:$cport
KDP_IT_CLUSTER_ID=$CLUSTER_ID
KDP_IT_STATE_DIR=$STATE
KDP_IT_KAFKA_VERSION=$VERSION
KDP_IT_TXN_VERSION=$(txn_protocol "$STATE/ready.json")
KDP_IT_FLINK_CLASSPATH=$(flink_classpath)
EOF
    local tv
    tv=$(grep -o '"transaction.version":[0-9]*' "$STATE/ready.json" | cut -d: -f2 || true)
    echo "kafka-it: Kafka $VERSION, 3 nodes ready in $(elapsed "$t1")s (total $(elapsed "$t0")s): bootstrap=$bootstrap" \
        "controller=127.0.0.1:$cport transaction.version=${tv:-none} (txn protocol v$(txn_protocol "$STATE/ready.json")) env=${STATE#"$ROOT/"}/cluster.env"
}

# The transaction protocol the cluster speaks, from its finalized features (ready.json):
# transaction.version >= 2 is KIP-890's protocol v2 (every transaction end bumps the epoch);
# absent (Kafka 3.9 finalizes no transaction.version) or 0/1 is the classic protocol v1.
txn_protocol() {
    local tv
    tv=$(grep -o '"transaction.version":[0-9]*' "$1" | cut -d: -f2 || true)
    if [[ -n "$tv" && "$tv" -ge 2 ]]; then echo 2; else echo 1; fi
}

cmd_env() {
    if [[ ! -f "$STATE/cluster.env" ]]; then
        log "no cluster.env: run '$0 start' first"
        exit 1
    fi
    cat "$STATE/cluster.env"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    env) cmd_env ;;
    status) cmd_status ;;
    *)
        echo "usage: $0 start|stop|env|status" >&2
        exit 2
        ;;
esac
