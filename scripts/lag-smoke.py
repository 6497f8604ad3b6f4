#!/usr/bin/env python3
"""Self-check of it/'s LagScenario against a running cluster (scripts/kafka-cluster.sh start):
writes the logs the lag tests need, commits group offsets at chosen positions, and prints per case
the facts kdp lag must reproduce: log start, high watermark, LSO, the committed offset, Kafka's LAG
(kafka-consumer-groups.sh, i.e. ConsumerGroupCommand of the cluster's version) and what a real
KafkaConsumer seeked to the committed offset receives (read_committed and read_uncommitted).
Share groups and a Streams group on 4.x. Each fact the layout determines is checked.

  scripts/kafka-cluster.sh start && scripts/lag-smoke.py [--markdown]

Prints the table, each step's wall time, and `N passed, N failed` (exit 1 on a failure).
"""
import json
import os
import subprocess
import sys
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_env():
    env = {}
    path = os.path.join(ROOT, "target", "kafka-it", "cluster.env")
    if not os.path.exists(path):
        sys.exit("lag-smoke: no target/kafka-it/cluster.env: run scripts/kafka-cluster.sh start")
    for line in open(path):
        if "=" in line:
            k, v = line.rstrip("\n").split("=", 1)
            env[k] = v.strip('"')
    return env


ENV = load_env()
VERSION = ENV["KDP_IT_KAFKA_VERSION"]
FOUR = VERSION.startswith("4.")
RUN = uuid.uuid4().hex[:6]
TIMINGS = []
RESULTS = {"passed": 0, "failed": 0}
ROWS = []


def lag(cmd, *args, timeout=90):
    """LagScenario CMD ARGS: its JSON lines, and the wall time of the JVM."""
    argv = [ENV.get("KDP_IT_JAVA", "java"), "-cp", ENV["KDP_IT_CLASSPATH"], "dev.kdp.it.LagScenario", cmd,
            "--bootstrap", ENV["KDP_IT_BOOTSTRAP"], "--timeout-seconds", str(timeout)] + [str(a) for a in args]
    t0 = time.monotonic()
    r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 30)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-4000:])
        raise SystemExit(f"lag-smoke: LagScenario {cmd} {' '.join(map(str, args))} exited {r.returncode}")
    TIMINGS.append((cmd + " " + " ".join(str(a) for a in args[:4]), dt))
    return [json.loads(l) for l in r.stdout.splitlines() if l.strip()]


def check(what, got, want):
    if got == want:
        RESULTS["passed"] += 1
    else:
        RESULTS["failed"] += 1
        print(f"FAIL {what}: got {got!r}, want {want!r}", file=sys.stderr)


def tool_rows(groups):
    rows = lag("tool", "--kind", "consumer-groups", "--group", ",".join(groups))
    return {(r["GROUP"], r["TOPIC"], int(r["PARTITION"])): r for r in rows}


def cases(name, topic, partition, commits, expect_rc, expect_ru=None, reset="none", protocols=None):
    """Commits each offset for a group of its own, runs the tool once and the consumers once,
    and adds a table row per offset. expect_rc/expect_ru: {offset: records} known from the layout."""
    groups = []
    for i, c in enumerate(commits):
        via = (protocols or ["admin"])[i % len(protocols or ["admin"])]
        g = f"{topic}-g{c}-{via}"
        lag("commit", "--group", g, "--topic", topic, "--offsets", f"{partition}:{c}", "--via", via)
        groups.append((g, c, via))
    tool = tool_rows([g for g, _, _ in groups])
    frm = ",".join(str(c) for _, c, _ in groups)
    rc = {x["from"]: x for x in lag("count", "--topic", topic, "--partition", partition, "--from", frm,
                                      "--reset", reset)}
    ru = {x["from"]: x for x in lag("count", "--topic", topic, "--partition", partition, "--from", frm,
                                      "--isolation", "read_uncommitted", "--reset", reset)}
    for g, c, via in groups:
        t = tool[(g, topic, partition)]
        r, u = rc[c], ru[c]
        hw, lso, start = r["highWatermark"], r["lastStableOffset"], r["logStartOffset"]
        check(f"{name} C={c} tool CURRENT-OFFSET", t["CURRENT-OFFSET"], str(c))
        check(f"{name} C={c} tool LOG-END-OFFSET is the high watermark", t["LOG-END-OFFSET"], str(hw))
        check(f"{name} C={c} tool LAG is HWM - C", t["LAG"], str(hw - c))
        if c in expect_rc:
            check(f"{name} C={c} read_committed records", r["records"], expect_rc[c])
        if expect_ru and c in expect_ru:
            check(f"{name} C={c} read_uncommitted records", u["records"], expect_ru[c])
        ROWS.append({
            "case": name, "topic": topic, "group": via, "logStart": start, "hwm": hw, "lso": lso, "committed": c,
            "kafkaLag": int(t["LAG"]), "rc": r["records"] if not r["outOfRange"] else r["outOfRange"],
            "ru": u["records"] if not u["outOfRange"] else u["outOfRange"],
            "rcRange": f"{r['firstOffset']}..{r['lastOffset']}" if r["records"] else "-",
        })


def main():
    t_all = time.monotonic()
    print(f"lag-smoke: Kafka {VERSION}, run {RUN}", file=sys.stderr)

    # 1. markers on an idle partition: the group committed right after its last data record
    idle = f"lag-idle-{RUN}"
    lag("create-topic", "--topic", idle)
    w = lag("write", "--topic", idle, "--partition", 0, "--transactional-id", idle, "--plan", "idem:3,commit:4")[0]
    check("idle layout", (w["highWatermark"], w["lastStableOffset"], w["steps"][1]["markerOffset"]), (8, 8, 7))
    # a member of each protocol commits last record + 1 (4.x: classic and consumer; 3.9: classic)
    cases("idle: after last record", idle, 0, [7, 7] if FOUR else [7], {7: 0}, {7: 0},
          protocols=["classic", "consumer"] if FOUR else ["classic"])
    cases("idle: at the end", idle, 0, [8, 0], {8: 0, 0: 7}, {8: 0, 0: 7})

    # 2. the mixed partition: idempotent, committed, aborted, interleaved, an open transaction
    mix = f"lag-mix-{RUN}"
    lag("create-topic", "--topic", mix)
    plan = "idem:5,commit:4,abort:3,idem:2,interleave:3,commit:2,open:3,idem:3,commit:2"
    w = lag("write", "--topic", mix, "--partition", 0, "--transactional-id", mix, "--plan", plan)[0]
    check("mix layout", (w["highWatermark"], w["lastStableOffset"]), (36, 27))
    # delivered below the LSO (27): 0-4, 5-8, 14-15, 16 18 20, 24-25
    rc = {0: 16, 9: 7, 14: 7, 17: 4, 26: 0, 27: 0, 36: 0}
    # read_uncommitted to the HWM (36): every data record (30), markers never
    ru = {0: 30, 9: 21, 14: 18, 17: 15, 26: 8, 27: 8, 36: 0}
    cases("mix", mix, 0, sorted(rc), rc, ru, protocols=["admin", "classic"] + (["consumer"] if FOUR else []))

    # 3. log start moved past the committed offset
    trunc = f"lag-trunc-{RUN}"
    lag("create-topic", "--topic", trunc)
    lag("write", "--topic", trunc, "--partition", 0, "--transactional-id", trunc, "--plan", "idem:10,commit:5")
    lag("commit", "--group", f"{trunc}-early", "--topic", trunc, "--offsets", "0:3")
    d = lag("delete-records", "--topic", trunc, "--partition", 0, "--before", 8)[0]
    check("trunc log start", d["logStartOffset"], 8)
    cases("trunc: C below log start (reset none)", trunc, 0, [3], {}, {})
    e = lag("count", "--topic", trunc, "--partition", 0, "--from", 3, "--reset", "earliest")[0]
    check("trunc: reset earliest reads from the log start", (e["records"], e["firstOffset"]), (7, 8))
    ROWS.append({"case": "trunc: C below log start (reset earliest)", "topic": trunc, "group": "-",
                 "logStart": e["logStartOffset"], "hwm": e["highWatermark"], "lso": e["lastStableOffset"],
                 "committed": 3, "kafkaLag": e["highWatermark"] - 3, "rc": e["records"], "ru": "-",
                 "rcRange": f"{e['firstOffset']}..{e['lastOffset']}"})
    l = lag("count", "--topic", trunc, "--partition", 0, "--from", 3, "--reset", "latest")[0]
    check("trunc: reset latest skips everything", l["records"], 0)

    # 4. codecs: a transaction's batch read from its middle (C inside a compressed batch)
    codecs = ["gzip", "snappy", "lz4", "zstd"]
    cod = f"lag-codec-{RUN}"
    lag("create-topic", "--topic", cod, "--partitions", len(codecs))
    for p, c in enumerate(codecs):
        lag("write", "--topic", cod, "--partition", p, "--transactional-id", f"{cod}-{c}",
            "--compression", c, "--plan", "idem:5,commit:4,abort:3")
        cases(f"codec {c}: C inside a batch", cod, p, [2, 7], {2: 7, 7: 2}, {2: 10, 7: 5})

    # 5. thousands of small transactions, every tenth aborted
    many = f"lag-many-{RUN}"
    lag("create-topic", "--topic", many)
    w = lag("write", "--topic", many, "--partition", 0, "--transactional-id", many,
            "--plan", "txns:1000:1:10:16", timeout=180)[0]
    check("many layout", (w["highWatermark"], w["deliveredReadCommitted"]), (2000, 900))
    cases("1000 transactions", many, 0, [0, 1000], {0: 900}, {0: 1000})

    # 6. compaction
    comp = f"lag-comp-{RUN}"
    w = lag("compacted", "--topic", comp, "--transactional-id", comp, timeout=120)[0]
    # 5 keys (one value each), the committed pair, the roll record; the aborted pair and old values gone
    cases("compacted", comp, 0, [0], {0: 8}, {0: 8})

    # 7. share groups and a Streams group (4.x)
    if FOUR:
        for g, iso, n in [("rc-part", "read_committed", 10), ("rc-all", "read_committed", 16),
                          ("ru-part", "read_uncommitted", 10)]:
            s = lag("share-consume", "--group", f"{mix}-share-{g}", "--topic", mix, "--accept", n,
                    "--isolation", iso, timeout=120)[0]
            o = s["offsets"][0]
            t = lag("tool", "--kind", "share-groups", "--group", f"{mix}-share-{g}")[0]
            check(f"share {g}: tool LAG is DescribeShareGroupOffsets' Lag", t["LAG"], str(o["lag"]))
            check(f"share {g}: tool START-OFFSET", t["START-OFFSET"], str(o["startOffset"]))
            ROWS.append({"case": f"share group, {iso}, {n} accepted", "topic": mix, "group": "share",
                         "logStart": 0, "hwm": o["highWatermark"], "lso": o["lastStableOffset"],
                         "committed": f"SPSO {o['startOffset']}", "kafkaLag": o["lag"],
                         "rc": (16 - n) if iso == "read_committed" else "-",
                         "ru": (30 - n) if iso == "read_uncommitted" else "-",
                         "rcRange": "accepted " + ",".join(map(str, s["acceptedOffsets"]))})
        st = f"lag-streams-{RUN}"
        lag("create-topic", "--topic", st)
        lag("write", "--topic", st, "--partition", 0, "--transactional-id", st, "--plan", "idem:5,commit:4,abort:3")
        for guarantee in ["at_least_once", "exactly_once_v2"]:
            s = lag("streams-run", "--application-id", f"{st}-{guarantee}", "--topic", st, "--guarantee", guarantee,
                    timeout=120)[0]
            check(f"streams {guarantee} processed", s["processed"], 12 if guarantee == "at_least_once" else 9)
            check(f"streams {guarantee} ListGroups type", s["closed"]["listGroups"]["type"], "Streams")
            check(f"streams {guarantee} OffsetFetch as a consumer group",
                  s["closed"]["listConsumerGroupOffsets"], {"0": 14})
            t = lag("tool", "--kind", "streams-groups", "--group", f"{st}-{guarantee}")
            print(f"streams {guarantee}: tool rows {t}", file=sys.stderr)
            ROWS.append({"case": f"streams group, {guarantee}", "topic": st, "group": "streams",
                         "logStart": 0, "hwm": 14, "lso": 14, "committed": s["closed"]["listStreamsGroupOffsets"]["0"],
                         # the 4.4 tool prints no table for an Empty streams group
                         "kafkaLag": t[0].get("OFFSET-LAG", "?") if t else "no rows", "rc": 0, "ru": 0,
                         "rcRange": f"processed {s['processed']}"})

    print_table()
    print(f"\nlag-smoke: Kafka {VERSION}, total {time.monotonic() - t_all:.1f}s; per call:", file=sys.stderr)
    for what, dt in TIMINGS:
        print(f"  {dt:6.1f}s  {what}", file=sys.stderr)
    out = os.path.join(ROOT, "target", f"lag-smoke-{VERSION}.json")
    with open(out, "w") as f:
        json.dump({"version": VERSION, "rows": ROWS, "timings": TIMINGS}, f, indent=1)
    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 1 if RESULTS["failed"] else 0


def print_table():
    cols = ["case", "group", "logStart", "hwm", "lso", "committed", "kafkaLag", "rc", "ru", "rcRange"]
    head = ["case", "group", "log start", "HWM", "LSO", "committed", "Kafka's LAG", "read_committed gets",
            "read_uncommitted gets", "offsets received (rc)"]
    if "--markdown" in sys.argv:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in ROWS:
            print("| " + " | ".join(str(r[c]) for c in cols) + " |")
    else:
        w = [max(len(h), *(len(str(r[c])) for r in ROWS)) for h, c in zip(head, cols)]
        print("  ".join(h.ljust(n) for h, n in zip(head, w)))
        for r in ROWS:
            print("  ".join(str(r[c]).ljust(n) for c, n in zip(cols, w)))


if __name__ == "__main__":
    sys.exit(main())
