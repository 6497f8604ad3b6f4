#!/usr/bin/env python3
"""Smoke test of the real-Kafka harness against a running scripts/kafka-cluster.sh cluster.

Runs every dev.kdp.it.Scenario subcommand on a fresh topic (3 partitions, RF 3), then checks
the JSON each one printed against the official oracle
  org.apache.kafka.tools.TransactionsCommand describe-producers  (leader, and --broker-id for every replica)
and against the epoch / LastSequence facts written down in it/README.md (Kafka 4.1.1,
transaction.version=2). Prints "N passed, N failed"; exit status 1 on any failure.

    scripts/kafka-cluster.sh start && scripts/kafka-it-smoke.py; scripts/kafka-cluster.sh stop
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV_FILE = os.path.join(ROOT, "target", "kafka-it", "cluster.env")


def load_env():
    env = {}
    with open(ENV_FILE) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            k, v = line.split("=", 1)
            env[k] = v.strip('"')
    return env


ENV = load_env()
JAVA = ENV.get("KDP_IT_JAVA", "java")
CP = ENV["KDP_IT_CLASSPATH"]
BOOT = ENV["KDP_IT_BOOTSTRAP"]
passed = 0
failed = 0


def check(name, cond, detail=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok   {name}")
    else:
        failed += 1
        print(f"FAIL {name} {detail}")


def scenario(*args):
    t0 = time.time()
    p = subprocess.run([JAVA, "-cp", CP, "dev.kdp.it.Scenario", *args, "--bootstrap", BOOT],
                       capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"Scenario {args[0]} failed with {p.returncode}")
    lines = p.stdout.splitlines()
    if len(lines) != 1:
        raise SystemExit(f"Scenario {args[0]} printed {len(lines)} stdout lines: {p.stdout!r}")
    out = json.loads(lines[0])
    print(f"     {args[0]} ({time.time() - t0:.1f}s): {lines[0]}")
    return out


def describe_producers(topic, partition, broker=None):
    cmd = [JAVA, "-cp", CP, "org.apache.kafka.tools.TransactionsCommand", "--bootstrap-server", BOOT,
           "describe-producers", "--topic", topic, "--partition", str(partition)]
    if broker is not None:
        cmd += ["--broker-id", str(broker)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit(f"TransactionsCommand failed: {p.stderr}")
    rows = [[c.strip() for c in line.rstrip("\t").split("\t")] for line in p.stdout.splitlines() if line.strip()]
    header, body = rows[0], rows[1:]
    return {int(r[0]): dict(zip(header, r)) for r in body}, p.stdout


def oracle_matches(name, j, expect_txn_start=None):
    """The row for j's producer, on the leader and on every replica via --broker-id, equals j."""
    targets = [None] + j["replicas"]
    for b in targets:
        rows, raw = describe_producers(j["topic"], j["partition"], b)
        row = rows.get(j["producerId"])
        where = "leader" if b is None else f"broker {b}"
        ok = row is not None \
            and int(row["ProducerEpoch"]) == j["producerEpoch"] \
            and int(row["LastSequence"]) == j["lastSequence"] \
            and int(row["LatestCoordinatorEpoch"]) == j["coordinatorEpoch"] \
            and int(row["LastTimestamp"]) == j["lastTimestamp"] \
            and row["CurrentTransactionStartOffset"] == (
                "None" if j["currentTransactionStartOffset"] < 0 else str(j["currentTransactionStartOffset"]))
        check(f"{name}: describe-producers ({where}) matches JSON", ok, f"\n{raw}")


def main():
    topic = f"smoke-{int(time.time())}"
    t = scenario("create-topic", "--topic", topic, "--partitions", "3", "--replication-factor", "3")
    check("create-topic: 3 partitions, leaders known, full ISR",
          len(t["partitions"]) == 3 and all(p["leader"] >= 0 and len(p["isr"]) == 3 for p in t["partitions"]))
    lt = scenario("leaders", "--topic", topic)
    check("leaders: same as create-topic", lt["partitions"] == t["partitions"])

    # idempotent: epoch 0, LastSequence N-1
    i = scenario("idempotent", "--topic", topic, "--partition", "0", "--records", "5")
    check("idempotent: epoch 0, lastSequence 4, no txn",
          i["producerEpoch"] == 0 and i["lastSequence"] == 4 and i["coordinatorEpoch"] == -1
          and i["currentTransactionStartOffset"] == -1 and i["clientProducerEpoch"] == 0)
    oracle_matches("idempotent", i)

    # txn-commit: data at epoch 0, COMMIT marker at epoch 1 (TV2 bump) -> partition shows 1 / -1
    c = scenario("txn-commit", "--topic", topic, "--partition", "0", "--records", "4", "--transactional-id", f"{topic}-c")
    check("txn-commit: data epoch 0, marker bumps to 1, lastSequence reset to -1",
          c["clientInitEpoch"] == 0 and c["clientProducerEpoch"] == 0 and c["clientLastSequence"] == 3
          and c["producerEpoch"] == 1 and c["txnProducerEpoch"] == 1 and c["lastSequence"] == -1
          and c["txnState"] == "CompleteCommit" and c["currentTransactionStartOffset"] == -1
          and c["baseOffset"] == i["lastOffset"] + 1)
    oracle_matches("txn-commit", c)

    # txn-open: stays Ongoing after the process is gone
    o = scenario("txn-open", "--topic", topic, "--partition", "1", "--records", "3", "--transactional-id", f"{topic}-o")
    check("txn-open: epoch 0, lastSequence 2, txn start offset = first record",
          o["producerEpoch"] == 0 and o["lastSequence"] == 2 and o["coordinatorEpoch"] == -1
          and o["currentTransactionStartOffset"] == o["baseOffset"] and o["txnState"] == "Ongoing")
    oracle_matches("txn-open", o)
    time.sleep(12)  # > the broker's 10 s timed-out-transaction abort scan
    d = scenario("describe-txn", "--transactional-id", f"{topic}-o")
    check("txn-open: still Ongoing after the process exited (12 s later)",
          d["state"] == "Ongoing" and d["producerEpoch"] == 0 and d["producerId"] == o["producerId"])
    oracle_matches("txn-open (12 s later)", o)

    # a second open txn on partition 2, fenced by a producer that writes elsewhere
    o2 = scenario("txn-open", "--topic", topic, "--partition", "2", "--records", "2", "--transactional-id", f"{topic}-o2",
                  "--hold-seconds", "1")
    check("txn-open --hold-seconds 1", o2["holdSeconds"] == 1 and o2["txnState"] == "Ongoing")

    # fence an open txn: ABORT marker at epoch e+1, new producer gets e+2, COMMIT at e+3
    f = scenario("fence", "--topic", topic, "--partition", "1", "--records", "2", "--transactional-id", f"{topic}-o")
    check("fence (open txn): abort e+1, init e+2, commit e+3, lastSequence -1",
          f["producerId"] == o["producerId"] and f["previousTxnState"] == "Ongoing"
          and f["clientInitEpoch"] == 2 and f["clientProducerEpoch"] == 2 and f["clientLastSequence"] == 1
          and f["producerEpoch"] == 3 and f["txnProducerEpoch"] == 3 and f["lastSequence"] == -1
          and f["baseOffset"] == o["lastOffset"] + 2)  # +1 is the ABORT marker
    oracle_matches("fence (open txn)", f)

    # fence a completed txn: init e+1, commit e+2
    f2 = scenario("fence", "--topic", topic, "--partition", "0", "--records", "3", "--transactional-id", f"{topic}-c")
    check("fence (completed txn): init 2, commit marker 3",
          f2["producerId"] == c["producerId"] and f2["previousTxnProducerEpoch"] == 1
          and f2["clientInitEpoch"] == 2 and f2["producerEpoch"] == 3 and f2["lastSequence"] == -1
          and f2["baseOffset"] == c["lastOffset"] + 2)
    oracle_matches("fence (completed txn)", f2)

    # fence without records: only InitProducerId (epoch +1, coordinator state Empty); nothing is
    # written, so the partition keeps the last COMMIT marker's epoch
    f0 = scenario("fence", "--topic", topic, "--partition", "0", "--records", "0", "--transactional-id", f"{topic}-c")
    check("fence --records 0: init 4, coordinator Empty/4, partition still 3/-1",
          f0["clientInitEpoch"] == 4 and f0["txnProducerEpoch"] == 4 and f0["txnState"] == "Empty"
          and f0["producerEpoch"] == 3 and f0["lastSequence"] == -1)

    # fence of o2 writing to partition 0: partition 2 keeps only the ABORT marker's epoch
    f3 = scenario("fence", "--topic", topic, "--partition", "0", "--records", "1", "--transactional-id", f"{topic}-o2")
    rows, raw = describe_producers(topic, 2)
    r = rows.get(o2["producerId"])
    check("fence elsewhere: old partition shows ABORT epoch 1, LastSequence -1, no open txn",
          r is not None and r["ProducerEpoch"] == "1" and r["LastSequence"] == "-1"
          and r["CurrentTransactionStartOffset"] == "None" and f3["producerEpoch"] == 3, f"\n{raw}")

    # every producer that wrote partition 0 is listed, once
    rows, raw = describe_producers(topic, 0)
    check("partition 0 lists exactly the idempotent and the two transactional producers",
          sorted(rows) == sorted({i["producerId"], c["producerId"], f3["producerId"]}), f"\n{raw}")

    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
