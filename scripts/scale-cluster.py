#!/usr/bin/env python3
"""Writes a cluster file for `kdp mock-broker` with many producers (and,
with --groups, many consumer groups), to time whole-cluster scans at scale
(docs/PERFORMANCE.md).

    scripts/scale-cluster.py [TOPICS] [PARTITIONS] [PRODUCERS_PER_PARTITION] [BROKERS]
                             [OPEN_EVERY] [TXN_STATE_PARTITIONS]
                             [--groups N [--offsets-per-group M] [--offsets-partitions P]]
                             [--transactions N]
                             > big.json

Defaults: 1000 topics x 10 partitions x 100 producers = 1,000,000 producers
on 3 brokers, replication factor 3 (every replica holds the same state);
every 10th producer has a transaction open (OPEN_EVERY), idle for days, so
`kdp find-hanging` sees each as a candidate. TXN_STATE_PARTITIONS > 0 adds a
`__transaction_state` topic of that many partitions, so transactional ids
have coordinators (default 0: none).

--groups N adds N consumer groups (and a `__consumer_offsets` topic of P
partitions, default one per broker, so they have coordinators; P alone adds
the topic without groups, as on a cluster whose groups are gone), each with M
committed offsets (default 100): group g reads topic g % TOPICS from
partition 0 on, so each topic is read by N / TOPICS groups. On a partition
an open transaction pins (its last stable offset below its high watermark),
groups commit at the LSO (blocked, g % 4 == 0), below it (lagging), past it
(read_uncommitted) or a little below the high watermark; elsewhere a little
below the high watermark. Two groups in three have one member holding the
partitions they read (every fifth is a KIP-848 consumer group); the others
are Empty. The issue-17 size:

    scripts/scale-cluster.py 1000 100 2 50 100 --groups 10000 > groups.json

--transactions N adds N transactional ids (`tx-000000001`...) to the
coordinators (it needs TXN_STATE_PARTITIONS), every other one Ongoing with a
start time and one partition, the rest Empty: the issue-32 listing of
300,000 ids is

    scripts/scale-cluster.py 1 1 0 3 10 50 --transactions 300000 > txns.json

(50 brokers, 100,000 partitions, 200,000 producers, 2,000 pinned partitions,
10,000 groups with 1,000,000 committed offsets.)
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dims", nargs="*", type=int)
    ap.add_argument("--groups", type=int, default=0)
    ap.add_argument("--offsets-per-group", type=int, default=100)
    ap.add_argument("--offsets-partitions", type=int, default=0)
    ap.add_argument("--transactions", type=int, default=0)
    a = ap.parse_args()
    defaults = [1000, 10, 100, 3, 10, 0]
    topics, partitions, producers, brokers, open_every, txn_state = (a.dims + defaults[len(a.dims):])[:6]
    out = sys.stdout
    out.write('{"cluster_id": "kdp-scale", "brokers": %s, "topics": [\n'
              % json.dumps([{"id": b} for b in range(1, brokers + 1)]))
    pid = 10_000
    # per partition: (high watermark, last stable offset)
    marks = {}
    for t in range(topics):
        parts = []
        for p in range(partitions):
            leader = (t + p) % brokers + 1
            replicas = [(leader - 1 + i) % brokers + 1 for i in range(min(3, brokers))]
            states = []
            starts = []
            for i in range(producers):
                pid += 1
                open_txn = pid % open_every == 0
                if open_txn:
                    starts.append(pid * 7)
                states.append(
                    '{"ProducerId":%d,"ProducerEpoch":%d,"LastSequence":%d,"LastTimestamp":%d,'
                    '"CoordinatorEpoch":%d,"CurrentTxnStartOffset":%d}'
                    % (pid, i % 5, pid % 9000, 1_795_000_000_000 + pid,
                       3 if open_txn else -1, pid * 7 if open_txn else -1))
            hw = (max(starts) + 100) if starts else 10_000 + p
            lso = min(starts) if starts else hw
            marks[(t, p)] = (hw, lso)
            extra = ',"high_watermark":%d' % hw if a.groups else ""
            parts.append('{"partition":%d,"leader":%d,"replicas":%s,"producers":[%s]%s}'
                         % (p, leader, json.dumps(replicas), ",".join(states), extra))
        out.write('%s{"name":"scale-%05d","partitions":[%s]}\n'
                  % ("," if t else "", t, ",".join(parts)))
    if txn_state:
        parts = ['{"partition":%d,"leader":%d,"replicas":[%d]}' % (p, p % brokers + 1, p % brokers + 1)
                 for p in range(txn_state)]
        out.write(',{"name":"__transaction_state","partitions":[%s]}\n' % ",".join(parts))
    if a.groups or a.offsets_partitions:
        n = a.offsets_partitions or brokers
        parts = ['{"partition":%d,"leader":%d,"replicas":[%d]}' % (p, p % brokers + 1, p % brokers + 1)
                 for p in range(n)]
        out.write(',{"name":"__consumer_offsets","partitions":[%s]}\n' % ",".join(parts))
    out.write("]")
    if a.groups:
        out.write(',"groups":[\n')
        per = min(a.offsets_per_group, partitions)
        for g in range(a.groups):
            t = g % topics
            topic = "scale-%05d" % t
            offsets = []
            for p in range(per):
                hw, lso = marks[(t, p)]
                if lso < hw:
                    at = [lso, max(lso - 5, 0), hw, hw - 1][g % 4]
                else:
                    at = hw - (g % 7)
                offsets.append('"%d":%d' % (p, at))
            group = {"group_id": "group-%05d" % g}
            if g % 5 == 0:
                group["type"] = "consumer"
            if g % 3 != 0:
                group["members"] = [{"member_id": "m-%05d" % g, "client_id": "c-%05d" % g,
                                     "assignment": {topic: list(range(per))}}]
            text = json.dumps(group)[:-1]
            out.write('%s%s,"offsets":{"%s":{%s}}}\n'
                      % ("," if g else "", text, topic, ",".join(offsets)))
        out.write("]")
    if a.transactions:
        out.write(',"transactions":[\n')
        for n in range(1, a.transactions + 1):
            txn = {"transactional_id": "tx-%09d" % n, "producer_id": 1_000_000 + n,
                   "producer_epoch": n % 5, "timeout_ms": 60000}
            if n % 2:
                txn.update(state="Ongoing", start_time=1_795_000_000_000 + n,
                           partitions={"scale-00000": [0]})
            else:
                txn["state"] = "Empty"
            out.write("%s%s\n" % ("," if n > 1 else "", json.dumps(txn, separators=(",", ":"))))
        out.write("]")
    out.write("}\n")


if __name__ == "__main__":
    main()
