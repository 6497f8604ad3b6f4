#!/usr/bin/env python3
"""Writes a cluster file for `kdp mock-broker` whose partitions hold record
batches (idempotent data, committed and aborted transactions with their
markers, open transactions) and whose consumer groups commit offsets over
them, to time `kdp lag`, the exporter's `--lag` and
`kafka-consumer-groups.sh --describe --all-groups` on the same cluster
(docs/PERFORMANCE.md, scripts/bench-lag.sh).

    scripts/lag-cluster.py TOPICS PARTITIONS BROKERS GROUPS OFFSETS_PER_GROUP
                           [--txn-every N] [--open-every M] > lag.json

Every partition's log starts at 10,000 (an older log deleted by retention)
and holds 40 records of one idempotent producer in 4 batches. Every N-th
partition (default 10) is written transactionally instead: idempotent
records, a committed transaction, an aborted one, then committed and
aborted transactions of two producers interleaved, each with its marker;
every M-th partition (default 50) also ends in an open transaction, which
holds its last stable offset back (the producer lists it with
CurrentTxnStartOffset, so `kdp lag` and `kdp blocked` name it). The other
partitions are never written transactionally: no Fetch is needed to count
them once they have been read.

Group g reads topic g % TOPICS, partitions 0 to OFFSETS_PER_GROUP - 1 (as
`scale-cluster.py --groups`: two groups in three have a member holding
them, every fifth is a KIP-848 consumer group). Its committed offset on
each partition is one of: the log start (far behind), inside a batch, just
after the last data record (on a marker on a transactional partition:
Kafka's LAG 1, 0 records), inside the aborted transaction, the last stable
offset, the high watermark. A `__consumer_offsets` topic (one partition
per broker) and a `__transaction_state` topic make the coordinators. The
issue-30 scale (50 brokers, 100,000 partitions, 10,000 groups,
1,000,000 committed offsets):

    scripts/lag-cluster.py 1000 100 50 10000 100 > lag-scale.json
"""
import argparse
import json
import sys

LOG_START = 10_000


def plain(pid):
    """Never transactional: 4 idempotent batches of 10. (batches, hwm, lso,
    interesting offsets, open producer)"""
    b = [{"offset": LOG_START, "producer_id": pid, "producer_epoch": 0, "base_sequence": 0, "records": 10}]
    for i in range(1, 4):
        b.append({"producer_id": pid, "producer_epoch": 0, "base_sequence": 10 * i, "records": 10})
    end = LOG_START + 40
    # far behind, inside a batch, after the last record, a little behind
    return b, end, end, [LOG_START, LOG_START + 15, end, end - 3], None


def transactional(pid, open_txn):
    x, y, z = pid, pid + 1, pid + 2
    b = [
        # 0-9 idempotent
        {"offset": LOG_START, "producer_id": z, "producer_epoch": 0, "base_sequence": 0, "records": 10},
        # 10-14 committed, 15 marker
        {"producer_id": x, "producer_epoch": 0, "base_sequence": 0, "records": 5, "transactional": True},
        {"producer_id": x, "producer_epoch": 0, "control": "commit"},
        # 16-19 aborted, 20 marker
        {"producer_id": y, "producer_epoch": 0, "base_sequence": 0, "records": 4, "transactional": True},
        {"producer_id": y, "producer_epoch": 0, "control": "abort"},
        # 21-26 interleaved: x commits 21 23, y aborts 22 24
        {"producer_id": x, "producer_epoch": 0, "base_sequence": 5, "records": 1, "transactional": True},
        {"producer_id": y, "producer_epoch": 0, "base_sequence": 4, "records": 1, "transactional": True},
        {"producer_id": x, "producer_epoch": 0, "base_sequence": 6, "records": 1, "transactional": True},
        {"producer_id": y, "producer_epoch": 0, "base_sequence": 5, "records": 1, "transactional": True},
        {"producer_id": x, "producer_epoch": 0, "control": "commit"},
        {"producer_id": y, "producer_epoch": 0, "control": "abort"},
        # 27-29 idempotent, 30-32 committed, 33 marker
        {"producer_id": z, "producer_epoch": 0, "base_sequence": 10, "records": 3},
        {"producer_id": x, "producer_epoch": 0, "base_sequence": 7, "records": 3, "transactional": True},
        {"producer_id": x, "producer_epoch": 0, "control": "commit"},
    ]
    lso = LOG_START + 34
    hwm = lso
    opened = None
    if open_txn:
        # 34-36: a transaction left open, then 37-39 idempotent records above it
        b.append({"producer_id": y, "producer_epoch": 1, "base_sequence": 0, "records": 3,
                  "transactional": True, "timestamp": "now-3h"})
        b.append({"producer_id": z, "producer_epoch": 0, "base_sequence": 13, "records": 3})
        hwm = lso + 6
        opened = (y, lso)
    # far behind, on the committed batch, on the marker after the last data
    # record, inside the aborted transaction, the LSO, the high watermark
    return b, hwm, lso, [LOG_START, LOG_START + 12, lso - 1, LOG_START + 17, lso, hwm], opened


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("topics", type=int)
    ap.add_argument("partitions", type=int)
    ap.add_argument("brokers", type=int)
    ap.add_argument("groups", type=int)
    ap.add_argument("offsets_per_group", type=int)
    ap.add_argument("--txn-every", type=int, default=10)
    ap.add_argument("--open-every", type=int, default=50)
    a = ap.parse_args()
    out = sys.stdout
    out.write('{"cluster_id": "kdp-lag", "brokers": %s, "topics": [\n'
              % json.dumps([{"id": b} for b in range(1, a.brokers + 1)]))
    marks = {}
    pid = 100_000
    n = 0
    for t in range(a.topics):
        parts = []
        for p in range(a.partitions):
            leader = (t + p) % a.brokers + 1
            replicas = [(leader - 1 + i) % a.brokers + 1 for i in range(min(3, a.brokers))]
            n += 1
            pid += 3
            if n % a.txn_every == 0:
                batches, hwm, lso, at, opened = transactional(pid, n % a.open_every == 0)
            else:
                batches, hwm, lso, at, opened = plain(pid)
            marks[(t, p)] = at
            part = {"partition": p, "leader": leader, "replicas": replicas,
                    "log_start_offset": LOG_START, "batches": batches}
            if opened:
                part["producers"] = [{"ProducerId": opened[0], "ProducerEpoch": 1, "LastSequence": 2,
                                      "LastTimestamp": "now-3h", "CoordinatorEpoch": 3,
                                      "CurrentTxnStartOffset": opened[1]}]
            parts.append(json.dumps(part, separators=(",", ":")))
        out.write('%s{"name":"lag-%05d","partitions":[%s]}\n' % ("," if t else "", t, ",".join(parts)))
    for name, count in (("__consumer_offsets", a.brokers), ("__transaction_state", min(a.brokers, 50))):
        parts = ['{"partition":%d,"leader":%d,"replicas":[%d]}' % (p, p % a.brokers + 1, p % a.brokers + 1)
                 for p in range(count)]
        out.write(',{"name":"%s","partitions":[%s]}\n' % (name, ",".join(parts)))
    out.write('],"groups":[\n')
    per = min(a.offsets_per_group, a.partitions)
    for g in range(a.groups):
        t = g % a.topics
        topic = "lag-%05d" % t
        offsets = []
        for p in range(per):
            at = marks[(t, p)]
            offsets.append('"%d":%d' % (p, at[(g // a.topics + p) % len(at)]))
        group = {"group_id": "group-%05d" % g}
        if g % 5 == 0:
            group["type"] = "consumer"
        if g % 3 != 0:
            group["members"] = [{"member_id": "m-%05d" % g, "client_id": "c-%05d" % g,
                                 "assignment": {topic: list(range(per))}}]
        text = json.dumps(group)[:-1]
        out.write('%s%s,"offsets":{"%s":{%s}}}\n' % ("," if g else "", text, topic, ",".join(offsets)))
    out.write("]}\n")


if __name__ == "__main__":
    main()
