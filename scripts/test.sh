#!/usr/bin/env bash
# Runs every test kdp has: unit, property and fuzz-corpus tests, CLI tests,
# the mock broker (also against Kafka's own Java tools), and the integration
# tests against a real three-broker Apache Kafka cluster that this script
# fetches from Maven Central, starts on 127.0.0.1 and always stops again.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --workspace --all-targets --locked

bash scripts/kafka-cluster.sh start
trap 'bash scripts/kafka-cluster.sh stop; bash scripts/kafka-secure.sh stop' EXIT
# one secured node (TLS, SASL, ACLs) beside the cluster, for tests/real_kafka_secure.rs
bash scripts/kafka-secure.sh start
set -a
# shellcheck disable=SC1091
. target/kafka-it/cluster.env
# shellcheck disable=SC1091
. target/kafka-secure/secure.env
set +a

# --include-ignored: the tests that need Kafka or its jars are #[ignore]d so
# that a bare `cargo test` stays self-contained; here they run, and fail
# (never skip) if the cluster is not there.
cargo test --workspace --locked --no-fail-fast -- --include-ignored
