#!/usr/bin/env python3
"""Runs Kafka Streams, Kafka Connect and Flink for real against the running test cluster and writes
what kdp will see of their transactional ids and groups to vectors/owners/<framework>-<kafka>.json.

    scripts/kafka-cluster.sh start            # KDP_KAFKA_VERSION=3.9.2 for the older generation
    set -a; . target/kafka-it/cluster.env; set +a
    scripts/owners-vectors.py [--framework streams|streams-protocol|connect|flink|all]

Each vector: the scenario, the harness lines that matter (ids, client ids, process ids, worker ids as
the frameworks report them) and OwnersSnapshot documents taken while every instance lives ("live")
and after one was killed with SIGKILL ("afterKill"), see it/README.md. Progress on stderr.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
JVM = ["-Xmx192m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"]
FLINK_DIR = os.path.join(ROOT, "it", "target", "flink-5.0.0-2.2")


def log(msg):
    print(f"owners-vectors: {msg}", file=sys.stderr, flush=True)


def env(name):
    v = os.environ.get(name)
    if not v:
        sys.exit(f"owners-vectors: {name} is not set (load target/kafka-it/cluster.env)")
    return v


class Harness:
    """A harness JVM whose stdout JSON lines are collected as they come."""

    def __init__(self, name, cls, args, classpath=None, heap=None):
        self.name = name
        self.lines = []
        self.cond = threading.Condition()
        jvm = list(JVM) if heap is None else ["-Xmx" + heap] + JVM[1:]
        cmd = [os.environ.get("KDP_IT_JAVA", "java")] + jvm + ["-cp", classpath or env("KDP_IT_CLASSPATH"), cls] + args
        self.err = open(os.path.join(ROOT, "target", f"owners-{name}.log"), "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.started = time.monotonic()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for raw in self.proc.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            line["_t"] = round(time.monotonic() - self.started, 2)
            with self.cond:
                self.lines.append(line)
                self.cond.notify_all()

    def wait_for(self, pred, what, timeout=120):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if pred(line):
                        return line
                if self.proc.poll() is not None and not any(pred(x) for x in self.lines):
                    raise RuntimeError(f"{self.name} exited ({self.proc.returncode}) before {what}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RuntimeError(f"{self.name}: no {what} within {timeout}s")
                self.cond.wait(min(left, 1.0))

    def events(self, *kinds):
        with self.cond:
            return [x for x in self.lines if x.get("event") in kinds]

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


def java(cls, args, classpath=None):
    cmd = [os.environ.get("KDP_IT_JAVA", "java")] + JVM + ["-cp", classpath or env("KDP_IT_CLASSPATH"), cls] + args
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=180)
    if out.returncode != 0:
        raise RuntimeError(f"{cls} {' '.join(args)} failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def scenario(sub, **kw):
    args = [sub, "--bootstrap", env("KDP_IT_BOOTSTRAP")]
    for k, v in kw.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    return java("dev.kdp.it.Scenario", args)


def snapshot(prefix, classic=(), streams=()):
    args = ["--bootstrap", env("KDP_IT_BOOTSTRAP"), "--id-prefix", prefix]
    if classic:
        args += ["--classic-groups", ",".join(classic)]
    if streams:
        args += ["--streams-groups", ",".join(streams)]
    return java("dev.kdp.it.OwnersSnapshot", args)


def poll(fn, what, timeout=120):
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v:
            return v
        if time.monotonic() > deadline:
            raise RuntimeError(f"not within {timeout}s: {what}")
        time.sleep(1)


def tag():
    return str(int(time.time()) % 100000)


# ---------------------------------------------------------------- Kafka Streams

def streams(protocol):
    app = "orders-app-7f3c-2" + ("-kip1071" if protocol == "streams" else "")  # dashes and digits on purpose
    t = tag()
    tin, tout = f"owners-in-{t}", f"owners-out-{t}"
    for topic in (tin, tout):
        scenario("create-topic", topic=topic, partitions=4, replication_factor=3)
    args = ["--bootstrap", env("KDP_IT_BOOTSTRAP"), "--application-id", app, "--input", tin, "--output", tout,
            "--threads", "2", "--group-protocol", protocol, "--commit-interval-ms", "600000",
            "--transaction-timeout-ms", "600000"]
    if protocol == "classic":
        args += ["--session-timeout-ms", "6000"]
    a = Harness(f"streams-{protocol}-a", "dev.kdp.it.StreamsApp", args)
    b = Harness(f"streams-{protocol}-b", "dev.kdp.it.StreamsApp", args)
    try:
        pa = a.wait_for(lambda x: x.get("event") == "running" and x.get("processId"), "running")["processId"]
        pb = b.wait_for(lambda x: x.get("event") == "running" and x.get("processId"), "running")["processId"]
        log(f"streams ({protocol}): A={pa} B={pb}")
        groups = (dict(classic=[app]) if protocol == "classic" else dict(streams=[app]))

        def members(s):
            g = (s["classicGroups"] or s["streamsGroups"])[0]
            return g["members"], g["groupState"]

        def stable_with_both():
            s = snapshot(app, **groups)
            m, st = members(s)
            ids = " ".join(x["clientId"] for x in m)
            return s if st == "Stable" and len(m) == 4 and pa in ids and pb in ids else None
        poll(stable_with_both, "group Stable with both instances' 4 threads", 150)
        time.sleep(3)  # let the last rebalance's RUNNING settle
        scenario("producer-burst", topic=tin, producers=1)
        a.wait_for(lambda x: x.get("event") == "open", "open transaction")
        b.wait_for(lambda x: x.get("event") == "open", "open transaction")
        live = snapshot(app, **groups)
        log(f"streams ({protocol}): both have open transactions; SIGKILL A")
        a.kill9()

        def only_b():
            s = snapshot(app, **groups)
            m, st = members(s)
            return s if m and all(pb in x["clientId"] for x in m) and st == "Stable" else None
        after = poll(only_b, "group without A", 180)
        offsets = [scenario("offsets", topic=tout, partition=p) for p in range(4)]
        return {
            "framework": "kafka-streams",
            "groupProtocol": protocol,
            "kafkaVersion": after["kafkaVersion"],
            "scenario": ("two instances (separate JVMs) of application id '%s', 2 stream threads each, "
                         "exactly_once_v2, commit.interval.ms=600000, producer transaction.timeout.ms=600000; "
                         "one record per input partition opens a transaction per thread that has a task; "
                         "then instance A gets SIGKILL while its transactions are open. 'afterKill' is taken "
                         "once the group has only B's members: A's ids stay Ongoing (orphaned) and pin the "
                         "output partitions (outputOffsets: lastStableOffset < highWatermark)." % app),
            "applicationId": app,
            "inputTopic": tin,
            "outputTopic": tout,
            "instances": {
                "A": {"killed": True, "processId": pa, "lines": a.events("started", "producer", "open")},
                "B": {"killed": False, "processId": pb, "lines": b.events("started", "producer", "open", "commit")},
            },
            "snapshots": {"live": live, "afterKill": after},
            "outputOffsets": offsets,
        }
    finally:
        a.stop()
        b.stop()


# ---------------------------------------------------------------- Kafka Connect

def connect():
    group = "kdp-connect-7-a1"  # dashes and digits on purpose
    name = "ticks-2024-v2"
    t = tag()
    topic = f"owners-ticks-{t}"
    scenario("create-topic", topic=topic, partitions=2, replication_factor=3)
    common = ["--bootstrap", env("KDP_IT_BOOTSTRAP"), "--group-id", group, "--rebalance-delay-ms", "5000"]
    w1 = Harness("connect-w1", "dev.kdp.it.ConnectWorker", common + ["--connector", name, "--topic", topic, "--tasks", "3"])
    w2 = None
    try:
        worker1 = w1.wait_for(lambda x: x.get("event") == "worker", "worker line")
        w1.wait_for(lambda x: x.get("event") == "connector" and len(x["tasks"]) == 3
                    and all(tk["state"] == "RUNNING" for tk in x["tasks"]), "3 running tasks")
        w2 = Harness("connect-w2", "dev.kdp.it.ConnectWorker", common)
        worker2 = w2.wait_for(lambda x: x.get("event") == "worker", "worker line")
        log(f"connect: workers {worker1['workerId']} and {worker2['workerId']}")

        def tasks_on_both():
            st = w1.events("connector")[-1]
            on = {tk["workerId"] for tk in st["tasks"] if tk["state"] == "RUNNING"}
            return st if len(st["tasks"]) == 3 and on == {worker1["workerId"], worker2["workerId"]} else None
        poll(tasks_on_both, "tasks spread over both workers", 120)
        prefixes = group + ",connect-cluster-" + group  # task ids and the leader's config-topic id
        live = snapshot(prefixes, classic=[group])
        w2.kill9()
        log("connect: SIGKILL worker 2")

        def back_on_w1():
            st = w1.events("connector")[-1]
            ok = all(tk["state"] == "RUNNING" and tk["workerId"] == worker1["workerId"] for tk in st["tasks"])
            if not ok:
                return None
            s = snapshot(prefixes, classic=[group])
            m = s["classicGroups"][0]["members"]
            return s if len(m) == 1 else None
        after = poll(back_on_w1, "every task back on worker 1", 180)
        return {
            "framework": "kafka-connect",
            "kafkaVersion": after["kafkaVersion"],
            "scenario": ("a distributed Connect cluster (group.id '%s', exactly.once.source.support=enabled, "
                         "scheduled.rebalance.max.delay.ms=5000) of two workers runs source connector '%s' "
                         "(3 tasks, exactly.once.support=required); worker 2 gets SIGKILL and its tasks move to "
                         "worker 1 after the delay, reusing the same transactional ids (fencing the old producer)."
                         % (group, name)),
            "groupId": group,
            "connector": name,
            "workers": {"1": {"killed": False, "lines": w1.events("worker", "connector")},
                        "2": {"killed": True, "lines": w2.events("worker")}},
            "snapshots": {"live": live, "afterKill": after},
        }
    finally:
        w1.stop()
        if w2:
            w2.stop()


# ---------------------------------------------------------------- Flink

def flink():
    # kafka-cluster.sh builds it and names it in cluster.env; else a manual mvn -f it/flink/pom.xml package
    cp = os.environ.get("KDP_IT_FLINK_CLASSPATH") or f"{FLINK_DIR}/lib/*:{FLINK_DIR}/classes"
    if not os.path.isdir(os.path.join(FLINK_DIR, "classes")) and not os.environ.get("KDP_IT_FLINK_CLASSPATH"):
        sys.exit("owners-vectors: no Flink build: scripts/kafka-cluster.sh start builds it (or mvn -B -q -f it/flink/pom.xml package)")
    prefix = "ingest-sink-3"  # a prefix that ends in a digit on purpose
    t = tag()
    topic = f"owners-flink-{t}"
    scenario("create-topic", topic=topic, partitions=2, replication_factor=3)
    ckdir = os.path.join(ROOT, "target", f"owners-flink-{t}")
    base = ["--bootstrap", env("KDP_IT_BOOTSTRAP"), "--topic", topic, "--prefix", prefix, "--checkpoint-interval-ms", "1000"]
    runs = {}

    def run(label, extra, until):
        h = Harness(f"flink-{label}", "dev.kdp.it.FlinkSinkJob", base + extra, classpath=cp, heap="320m")
        try:
            h.wait_for(until, "its condition", 150)
            if h.proc.poll() is None:
                h.stop()
            else:
                h.proc.wait()
        finally:
            h.stop()
        runs[label] = {"args": extra, "lines": h.events("started", "halt", "txn")}

    halted = lambda x: x.get("event") == "halt"
    # A: parallelism 1, fresh; halted (like kill -9) with prefix-0-3 open
    run("A", ["--checkpoint-dir", ckdir + "-a", "--parallelism", "1", "--halt-after-commits", "2"], halted)
    # B: restored from A's newest checkpoint with parallelism 2: subtask 1 starts at counter 3
    run("B", ["--checkpoint-dir", ckdir + "-a", "--parallelism", "2", "--restore", "latest", "--halt-after-commits", "4"], halted)
    after_b = snapshot(prefix + "-")
    # C: a fresh job (no state) with the same prefix: subtask 1 probes prefix-1-1, finds it unused and stops,
    # so B's open prefix-1-5 is never aborted: it lingers while C commits prefix-1-1, -2, ...
    run("C", ["--checkpoint-dir", ckdir + "-c", "--parallelism", "2", "--halt-after-commits", "2"], halted)
    after_c = snapshot(prefix + "-")
    return {
        "framework": "flink-kafka-sink",
        "connector": "org.apache.flink:flink-connector-kafka:5.0.0-2.2 (Flink 2.2.1, kafka-clients %s)"
                     % runs["A"]["lines"][0].get("kafkaClientsVersion"),
        "kafkaVersion": after_c["kafkaVersion"],
        "scenario": ("KafkaSink EXACTLY_ONCE, TransactionNamingStrategy.INCREMENTING, transactional id prefix '%s', "
                     "checkpoint every 1 s. Run A (parallelism 1, fresh) halts with %s-0-3 open. Run B restores A's "
                     "newest checkpoint with parallelism 2 (its probe aborts %s-0-3; subtask 1's first id is %s-1-3) "
                     "and halts with %s-0-5 and %s-1-5 open ('afterB'). Run C starts fresh (no state), parallelism 2: "
                     "subtask 0's probe walks %s-0-1.. and aborts %s-0-5; subtask 1's probe stops at the unused "
                     "%s-1-1, so %s-1-5 lingers (Ongoing, started before C's committed %s-1-1 and -2) ('afterC')."
                     % ((prefix,) * 11)),
        "prefix": prefix,
        "runs": runs,
        "snapshots": {"afterB": after_b, "afterC": after_c},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--framework", default="all", choices=["streams", "streams-protocol", "connect", "flink", "all"])
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "vectors", "owners"))
    a = ap.parse_args()
    version = env("KDP_IT_KAFKA_VERSION")
    todo = ["streams", "streams-protocol", "connect", "flink"] if a.framework == "all" else [a.framework]
    if version.startswith("3.") and "streams-protocol" in todo:
        if a.framework == "streams-protocol":
            sys.exit("owners-vectors: KIP-1071 streams groups need Kafka 4.1+")
        todo.remove("streams-protocol")
    os.makedirs(a.out_dir, exist_ok=True)
    for fw in todo:
        t0 = time.monotonic()
        log(f"{fw} against Kafka {version}")
        doc = {"streams": lambda: streams("classic"), "streams-protocol": lambda: streams("streams"),
               "connect": connect, "flink": flink}[fw]()
        path = os.path.join(a.out_dir, f"{fw}-{version}.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=False)
            f.write("\n")
        log(f"{fw}: wrote {os.path.relpath(path, ROOT)} in {time.monotonic() - t0:.0f}s")


if __name__ == "__main__":
    main()
