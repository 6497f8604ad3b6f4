#!/usr/bin/env python3
"""Writes a cluster file for `kdp mock-broker` for the side-by-side bench
against franz-go's kadm (scripts/bench-kadm.sh, docs/PERFORMANCE.md).

    bench/kadm/cluster.py TOPICS PARTITIONS PRODUCERS_PER_PARTITION > cluster.json

Three brokers, replication factor 3, a 50-partition `__transaction_state`.
Every 10th producer has a transaction open, idle for days (a find-hanging
candidate): half of those are tracked by a coordinator (an Ongoing
transaction holding the partition: not hanging), the other half no
coordinator knows (hanging). Another tenth of the producers have an
`Empty` transactional id, so ListTransactions returns 1.5 ids per 10
producers (1,500 on the medium cluster, 15,000 on the large). On every 50th
partition the second replica lost a producer and holds an older epoch of
another (compare-replicas' differences). Every time is absolute, so two
runs print the same bytes.
"""
import json
import sys


def producer(pid, i, open_txn, epoch=None):
    return {"ProducerId": pid, "ProducerEpoch": i % 5 if epoch is None else epoch,
            "LastSequence": pid % 9000, "LastTimestamp": 1_795_000_000_000 + pid,
            "CoordinatorEpoch": 3 if open_txn else -1,
            "CurrentTxnStartOffset": pid * 7 if open_txn else -1}


def group(g, topic, partitions):
    """Consumer group g, reading `topic` (offsets filled in by the caller)."""
    out = {"group_id": "group-%05d" % g, "n": g, "offsets": {topic: {}}}
    if g % 5 == 0:
        out["type"] = "consumer"
    if g % 3 != 0:
        out["members"] = [{"member_id": "m-%05d" % g, "client_id": "c-%05d" % g,
                           "assignment": {topic: list(range(partitions))}}]
    return out


def main():
    topics, partitions, per_partition = (int(a) for a in sys.argv[1:4])
    brokers = 3
    out = sys.stdout
    out.write('{"cluster_id": "kdp-bench", "brokers": %s, "topics": [\n'
              % json.dumps([{"id": b} for b in range(1, brokers + 1)]))
    txns = []
    groups = {}
    pid = 10_000
    n = 0
    for t in range(topics):
        name = "bench-%05d" % t
        parts = []
        for p in range(partitions):
            leader = (t + p) % brokers + 1
            replicas = [(leader - 1 + i) % brokers + 1 for i in range(brokers)]
            states = []
            for i in range(per_partition):
                pid += 1
                open_txn = pid % 10 == 0
                states.append(producer(pid, i, open_txn))
                if open_txn and pid % 20 == 0:
                    txns.append({"transactional_id": "tx-%d" % pid, "producer_id": pid,
                                 "producer_epoch": i % 5, "state": "Ongoing",
                                 "timeout_ms": 60000, "start_time": 1_795_000_000_000 + pid,
                                 "partitions": {name: [p]}})
                elif pid % 10 == 5:
                    txns.append({"transactional_id": "idle-%d" % pid, "producer_id": pid,
                                 "producer_epoch": i % 5, "state": "Empty", "timeout_ms": 60000})
            part = {"partition": p, "leader": leader, "replicas": replicas, "producers": states,
                    "high_watermark": pid * 7 + 1000}
            n += 1
            if n % 50 == 0 and len(states) > 1:
                follower = [dict(s) for s in states[1:]]
                follower[0]["ProducerEpoch"] = max(0, follower[0]["ProducerEpoch"] - 1)
                part["replica_producers"] = {str(replicas[1]): follower}
            parts.append(json.dumps(part, separators=(",", ":")))
            if t % 4 != 3:
                lso, hw = pid * 7, pid * 7 + 1000  # the open transaction is the last producer's
                for g in (2 * t, 2 * t + 1):
                    if g not in groups:
                        groups[g] = group(g, name, partitions)
                    at = [lso, lso - 5, lso + 10, None][(g + p) % 4]
                    if at is not None:
                        groups[g]["offsets"][name][str(p)] = at
        out.write('%s{"name":"%s","partitions":[%s]}\n' % ("," if t else "", name, ",".join(parts)))
    groups = list(groups.values())
    for g in groups[::2]:
        g["offsets"]["plain"] = {str(g["n"] % 10): 5_000 + g["n"]}
    parts = ['{"partition":%d,"leader":%d,"replicas":[%d],"high_watermark":%d}'
             % (p, p % brokers + 1, p % brokers + 1, 10_000 + p) for p in range(10)]
    out.write(',{"name":"plain","partitions":[%s]}\n' % ",".join(parts))
    parts = ['{"partition":%d,"leader":%d,"replicas":[%d]}' % (p, p % brokers + 1, p % brokers + 1)
             for p in range(50)]
    for internal in ("__transaction_state", "__consumer_offsets"):
        out.write(',{"name":"%s","internal":true,"partitions":[%s]}\n' % (internal, ",".join(parts)))
    for g in groups:
        del g["n"]
    out.write('], "transactions": %s,\n' % json.dumps(txns, separators=(",", ":")))
    out.write('"groups": %s}\n' % json.dumps(groups, separators=(",", ":")))


if __name__ == "__main__":
    main()
