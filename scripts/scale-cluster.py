#!/usr/bin/env python3
"""Writes a cluster file for `kdp mock-broker` with many producers, to time
whole-cluster scans at scale (docs/PERFORMANCE.md).

    scripts/scale-cluster.py [TOPICS] [PARTITIONS] [PRODUCERS_PER_PARTITION] [BROKERS]
                             [OPEN_EVERY] [TXN_STATE_PARTITIONS] > big.json

Defaults: 1000 topics x 10 partitions x 100 producers = 1,000,000 producers
on 3 brokers, replication factor 3 (every replica holds the same state);
every 10th producer has a transaction open (OPEN_EVERY), idle for days, so
`kdp find-hanging` sees each as a candidate. TXN_STATE_PARTITIONS > 0 adds a
`__transaction_state` topic of that many partitions, so transactional ids
have coordinators (default 0: none).
"""
import json
import sys


def main():
    args = [int(a) for a in sys.argv[1:]]
    defaults = [1000, 10, 100, 3, 10, 0]
    topics, partitions, producers, brokers, open_every, txn_state = (args + defaults[len(args):])[:6]
    out = sys.stdout
    out.write('{"cluster_id": "kdp-scale", "brokers": %s, "topics": [\n'
              % json.dumps([{"id": b} for b in range(1, brokers + 1)]))
    pid = 10_000
    for t in range(topics):
        parts = []
        for p in range(partitions):
            leader = (t + p) % brokers + 1
            replicas = [(leader - 1 + i) % brokers + 1 for i in range(min(3, brokers))]
            states = []
            for i in range(producers):
                pid += 1
                open_txn = pid % open_every == 0
                states.append(
                    '{"ProducerId":%d,"ProducerEpoch":%d,"LastSequence":%d,"LastTimestamp":%d,'
                    '"CoordinatorEpoch":%d,"CurrentTxnStartOffset":%d}'
                    % (pid, i % 5, pid % 9000, 1_795_000_000_000 + pid,
                       3 if open_txn else -1, pid * 7 if open_txn else -1))
            parts.append('{"partition":%d,"leader":%d,"replicas":%s,"producers":[%s]}'
                         % (p, leader, json.dumps(replicas), ",".join(states)))
        out.write('%s{"name":"scale-%05d","partitions":[%s]}\n'
                  % ("," if t else "", t, ",".join(parts)))
    if txn_state:
        parts = ['{"partition":%d,"leader":%d,"replicas":[%d]}' % (p, p % brokers + 1, p % brokers + 1)
                 for p in range(txn_state)]
        out.write(',{"name":"__transaction_state","partitions":[%s]}\n' % ",".join(parts))
    out.write("]}\n")


if __name__ == "__main__":
    main()
