#!/usr/bin/env python3
"""Side-by-side runs of kdp and the kadm program (bench/kadm/main.go) against
one running `kdp mock-broker`: each command's two outputs are checked to be
the same first, then the two are timed as interleaved pairs (kdp, kadm,
kdp, kadm, ...; the first pair is a warm-up) and a Markdown table is printed.
Client CPU (user + system) and peak RSS come from wait4's rusage of each
child, output to /dev/null. The time-dependent fields (VOLATILE) and the columns only kdp
computes (KDP_ONLY) are left out of the comparison; both programs must exit 0 (or kdp 4 where it found
something), and for `blocked` with the same status. Run by
scripts/bench-kadm.sh.

    pairs.py BOOTSTRAP KDP KADM RUNS [COMMAND...]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

# time-dependent fields (now minus a start), left out of the comparison
VOLATILE = {"TransactionDurationMs", "TransactionAgeMs", "ProducerIdleMs"}

# columns kdp adds that the peer does not compute (find-hanging's Owner,
# issue 31): left out of the comparison, still paid for in kdp's timing
KDP_ONLY = {"Owner"}

# commands whose exit status the kadm program gives as kdp does (4: found);
# for the others it exits 0 where kdp may exit 4 (find-hanging: hanging)
SAME_STATUS = {"blocked"}


def commands(b, ids):
    tx = [a for i in ids for a in ("--transactional-id", i)]
    return {
        "describe --output json": (["describe", "--bootstrap-server", b, "--output", "json"],
                                   ["describe-json"], "bytes"),
        "describe --output jsonl": (["describe", "--bootstrap-server", b, "--output", "jsonl"],
                                    ["describe-jsonl"], "lines"),
        "transactions list": (["transactions", "--bootstrap-server", b, "list", "--output", "json"],
                              ["transactions-list"], "records"),
        "transactions describe": (["transactions", "--bootstrap-server", b, "describe", "--output", "json"] + tx,
                                  ["transactions-describe"] + ids, "records"),
        "find-hanging": (["find-hanging", "--bootstrap-server", b, "--output", "json"],
                         ["find-hanging"], "records"),
        "compare-replicas": (["compare-replicas", "--bootstrap-server", b, "--output", "json"],
                             ["compare-replicas"], "records"),
        "blocked": (["blocked", "--bootstrap-server", b, "--output", "json"],
                    ["blocked"], "records"),
    }


def run(argv, stdout):
    """(exit status, user+sys seconds, peak RSS in KiB) of one child.

    The child runs under GNU time, a 1 MiB process: a child forked straight
    from Python would count Python's own resident set in its peak (Linux
    keeps the pre-exec high-water mark). CPU is wait4's rusage of time and
    its child (microseconds; time's own share is `run(["true"])`'s)."""
    with tempfile.NamedTemporaryFile() as m:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", m.name] + argv,
                             stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        return p.returncode, ru.ru_utime + ru.ru_stime, int(m.read().split()[-1])


def output(argv):
    with tempfile.TemporaryFile() as f:
        code, _, _ = run(argv, f)
        f.seek(0)
        return code, f.read()


def normal(kind, data):
    if kind == "bytes":
        return data
    if kind == "lines":
        return sorted(data.splitlines())
    doc = json.loads(data)
    (name, rows), = doc.items()
    out = []
    for r in rows:
        r = {k: (sorted(v) if isinstance(v, list) else v) for k, v in r.items() if k not in VOLATILE | KDP_ONLY}
        out.append(json.dumps(r, sort_keys=True))
    return name, sorted(out)


def main():
    b, kdp, kadm, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    wanted = sys.argv[5:]
    code, listed = output([kdp, "transactions", "--bootstrap-server", b, "list", "--output", "json"])
    ids = [r["TransactionalId"] for r in json.loads(listed)["Transactions"]]
    table = []
    with open(os.devnull, "wb") as null:
        floor = statistics.median(run(["true"], null)[1] for _ in range(11))
    print(f"GNU time's own CPU (`true` under it): {floor * 1000:.2f} ms, in both columns", file=sys.stderr)
    for name, (kdp_args, kadm_args, kind) in commands(b, ids).items():
        if wanted and name not in wanted:
            continue
        kdp_argv = [kdp] + kdp_args
        kadm_argv = [kadm, "-bootstrap-server", b] + kadm_args
        (c1, o1), (c2, o2) = output(kdp_argv), output(kadm_argv)
        if c1 not in (0, 4) or c2 != (c1 if name in SAME_STATUS else 0):
            sys.exit(f"{name}: exit status kdp {c1}, kadm {c2}")
        n1, n2 = normal(kind, o1), normal(kind, o2)
        if n1 != n2:
            sys.exit(f"{name}: the outputs differ ({len(o1)} and {len(o2)} bytes)")
        rows = len(n1[1]) if kind == "records" else len(n1) if kind == "lines" else o1.count(b'"ProducerId"')
        cpu = {"kdp": [], "kadm": []}
        rss = {"kdp": [], "kadm": []}
        with open(os.devnull, "wb") as null:
            for i in range(runs + 1):
                for who, argv in (("kdp", kdp_argv), ("kadm", kadm_argv)):
                    _, t, m = run(argv, null)
                    if i:
                        cpu[who].append(t)
                        rss[who].append(m)
        ratios = sorted(a / k for a, k in zip(cpu["kdp"], cpu["kadm"]))
        k, a = statistics.median(cpu["kdp"]), statistics.median(cpu["kadm"])
        table.append((name, rows, len(o1), k, a, ratios, max(rss["kdp"]), max(rss["kadm"])))
        print(f"{name}: checked, timed", file=sys.stderr)
    print("| command | rows | kdp bytes | kdp CPU (median) | kadm CPU (median) | kdp / kadm, pair by pair (min / median / max) | kdp peak RSS | kadm peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
    for name, rows, size, k, a, r, mk, ma in table:
        print(f"| `{name}` | {rows:,} | {size:,} | {k * 1000:.1f} ms | {a * 1000:.1f} ms "
              f"| {r[0]:.2f} / {statistics.median(r):.2f} / {r[-1]:.2f} | {mk / 1024:.1f} MiB | {ma / 1024:.1f} MiB |")


if __name__ == "__main__":
    main()
