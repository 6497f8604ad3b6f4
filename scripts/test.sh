#!/usr/bin/env bash
# Runs every test kdp has: unit, property and fuzz-corpus tests, CLI tests,
# the mock broker (also against Kafka's own Java tools), and the integration
# tests against a real three-broker Apache Kafka cluster that this script
# fetches from Maven Central, starts on 127.0.0.1 and always stops again.
#
# Two broker generations: everything runs against the newest Kafka 4.x
# (transaction protocol v2), then the cluster is restarted as Kafka 3.9
# (protocol v1) and the tests that talk to a broker run again.
# KDP_KAFKA_VERSION=V runs everything against that one version instead.
set -euo pipefail
cd "$(dirname "$0")/.."

NEWEST=4.4.0 # keep in step with DEFAULT_KAFKA_VERSION in scripts/kafka-cluster.sh
OLDER=3.9.2
if [[ -n "${KDP_KAFKA_VERSION:-}" ]]; then
    versions=("$KDP_KAFKA_VERSION")
else
    versions=("$NEWEST" "$OLDER")
fi

# Java, Maven, Prometheus and the rest, when missing (also what .ci/run calls)
bash scripts/install-deps.sh

# No incremental caches: a whole run gains nothing from them, and they more
# than double the target directory (15 GB against 4 GB from a clean clone; CI
# once ran out of disk). `cargo test --no-run` builds exactly what the tests
# below run; `cargo build --all-targets` would build the workspace a second
# time with other dependency features (clippy --all-targets checks the benches).
export CARGO_INCREMENTAL="${CARGO_INCREMENTAL:-0}"
df -h . >&2
cargo test --workspace --locked --no-run

trap 'bash scripts/kafka-cluster.sh stop; bash scripts/kafka-secure.sh stop' EXIT

# Loads the running cluster's cluster.env into this shell's environment.
use_cluster() {
    set -a
    # shellcheck disable=SC1091
    . target/kafka-it/cluster.env
    set +a
}

failed=()
for i in "${!versions[@]}"; do
    v="${versions[$i]}"
    echo "=== Kafka $v ===" >&2
    KDP_KAFKA_VERSION="$v" bash scripts/kafka-cluster.sh start
    use_cluster
    # --include-ignored: the tests that need Kafka or its jars are #[ignore]d so
    # that a bare `cargo test` stays self-contained; here they run, and fail
    # (never skip) if the cluster is not there.
    # one secured node (TLS, SASL, ACLs) beside the cluster, for tests/real_kafka_secure*.rs
    KDP_KAFKA_VERSION="$v" bash scripts/kafka-secure.sh start
    set -a
    # shellcheck disable=SC1091
    . target/kafka-secure/secure.env
    set +a
    if [[ "$i" == 0 ]]; then
        cargo test --workspace --locked --no-fail-fast -- --include-ignored || failed+=("$v")
    else
        # only the tests that talk to a broker: the rest does not depend on its version
        # (kdp-server's java_tool runs Kafka's tool against the mock, not a broker);
        # and kafka-consumer-groups.sh and the transaction-log formatter of this
        # generation against the mock
        cargo test -p kdp-server --locked --no-fail-fast --test java_group_tool \
            --test java_txn_log_formatter -- --include-ignored || failed+=("$v")
        cargo test -p kdp --locked --no-fail-fast --test real_kafka \
            --test real_kafka_broker_stop --test real_kafka_scenarios \
            --test real_kafka_diagnose --test real_kafka_repair \
            --test real_kafka_blocked --test real_kafka_secure --test real_kafka_secure_commands \
            --test real_kafka_secure_blocked --test real_kafka_batches --test real_kafka_history \
            --test real_kafka_pressure --test real_kafka_lag --test real_kafka_owners \
            -- --include-ignored ||
            failed+=("$v")
    fi
    bash scripts/kafka-secure.sh stop
    bash scripts/kafka-cluster.sh stop
done
# installing as the README says, from a clean clone
bash scripts/install-check.sh || failed+=("install")
du -sh target >&2
df -h . >&2
if ((${#failed[@]})); then
    echo "test.sh: tests failed: ${failed[*]}" >&2
    exit 1
fi
