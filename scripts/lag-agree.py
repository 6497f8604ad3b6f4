#!/usr/bin/env python3
"""Checks that `kdp lag --output json` and `kafka-consumer-groups.sh
--describe --all-groups` agree on the same cluster: the same (group,
topic, partition) rows, and on each CURRENT-OFFSET = CommittedOffset,
LOG-END-OFFSET = HighWatermark, LAG = OffsetLag. Prints the counts, and
how many rows kdp counts fewer records than Kafka's LAG (markers, aborted
records, offsets held back above the LSO). Exit 1 on any disagreement.

    scripts/lag-agree.py KDP.json KAFKA.txt
"""
import json
import sys


def kafka_rows(path):
    rows = {}
    with open(path) as f:
        for line in f:
            cols = line.split()
            if len(cols) < 6 or cols[0] == "GROUP" or not cols[2].isdigit():
                continue
            group, topic, partition, current, end, lag = cols[:6]
            num = lambda s: None if s == "-" else int(s)
            rows[(group, topic, int(partition))] = (num(current), num(end), num(lag))
    return rows


def kdp_rows(path):
    with open(path) as f:
        doc = json.load(f)
    return {(r["Group"], r["Topic"], r["Partition"]): r for r in doc["Lag"]}


def main():
    kdp, kafka = kdp_rows(sys.argv[1]), kafka_rows(sys.argv[2])
    bad = []
    for key in sorted(set(kdp) | set(kafka)):
        if key not in kdp or key not in kafka:
            bad.append("%s: only in %s" % (key, "kdp" if key in kdp else "Kafka's tool"))
            continue
        r, (current, end, lag) = kdp[key], kafka[key]
        mine = (r["CommittedOffset"], r["HighWatermark"], r["OffsetLag"])
        if mine != (current, end, lag):
            bad.append("%s: kdp %s, Kafka's tool %s" % (key, mine, (current, end, lag)))
    fewer = sum(1 for k, r in kdp.items() if r["Records"] is not None and r["OffsetLag"] is not None
                and r["Records"] < r["OffsetLag"])
    caught_up = sum(1 for r in kdp.values() if r["Records"] == 0 and (r["OffsetLag"] or 0) > 0)
    print("rows: kdp %d, Kafka's tool %d; disagreeing %d; kdp fewer records than LAG on %d "
          "(0 records where LAG > 0: %d)" % (len(kdp), len(kafka), len(bad), fewer, caught_up))
    for b in bad[:20]:
        print("  " + b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
