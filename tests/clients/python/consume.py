"""Reads a topic from the beginning with a real client library (assigned partitions, no group)
and checks every record byte for byte against records.py.

usage: consume.py CLIENT BOOTSTRAP TOPIC NAME COUNT PARTITIONS [--only I,J,...]
Prints one JSON line: {"count": n, "mismatches": [...], "duplicates": n, "missing": n,
"positions": {"<i>": [partition, offset]}} (positions only with --positions).
"""
import argparse
import json
import sys
import time

import records

ap = argparse.ArgumentParser()
ap.add_argument("client")
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("name")
ap.add_argument("count", type=int)
ap.add_argument("partitions", type=int)
ap.add_argument("--expect", help="file of record indexes that must all be present")
ap.add_argument("--positions", action="store_true")
ap.add_argument("--timeout", type=float, default=60)
args = ap.parse_args()

expected = set(range(args.count))
if args.expect:
    with open(args.expect) as f:
        expected = {int(line) for line in f if line.strip()}

seen = {}
mismatches = []
duplicates = 0


def check(partition, offset, k, v, ts):
    global duplicates
    i = records.index_of(args.name, k)
    if i is None:
        mismatches.append(f"foreign key {k!r} at {partition}/{offset}")
        return
    if i in seen:
        duplicates += 1
        return
    seen[i] = (partition, offset)
    if v != records.value(args.name, i):
        mismatches.append(f"value of {i} differs at {partition}/{offset}")
    if partition != i % args.partitions:
        mismatches.append(f"{i} in partition {partition}")
    if ts != records.timestamp(i):
        mismatches.append(f"timestamp of {i} is {ts}")


deadline = time.time() + args.timeout
if args.client == "confluent":
    from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING

    c = Consumer(
        {
            "bootstrap.servers": args.bootstrap,
            "group.id": "unused-assign-only",
            "enable.auto.commit": False,
            "enable.partition.eof": False,
            "check.crcs": True,
        }
    )
    c.assign([TopicPartition(args.topic, p, OFFSET_BEGINNING) for p in range(args.partitions)])
    while not expected <= seen.keys() and time.time() < deadline:
        for m in c.consume(num_messages=1000, timeout=1.0):
            if m.error():
                mismatches.append(str(m.error()))
                continue
            check(m.partition(), m.offset(), m.key(), m.value(), m.timestamp()[1])
    c.close()
elif args.client == "kafka-python":
    from kafka import KafkaConsumer, TopicPartition

    c = KafkaConsumer(
        bootstrap_servers=args.bootstrap,
        enable_auto_commit=False,
        group_id=None,
        check_crcs=True,
    )
    tps = [TopicPartition(args.topic, p) for p in range(args.partitions)]
    c.assign(tps)
    c.seek_to_beginning(*tps)
    while not expected <= seen.keys() and time.time() < deadline:
        for tp, msgs in c.poll(timeout_ms=1000, max_records=5000).items():
            for m in msgs:
                check(tp.partition, m.offset, m.key, m.value, m.timestamp)
    c.close()
else:
    sys.exit(f"unknown client {args.client}")

out = {
    "count": len(seen),
    "mismatches": mismatches[:10],
    "duplicates": duplicates,
    "missing": len(expected - seen.keys()),
}
if args.positions:
    out["positions"] = {str(i): list(p) for i, p in seen.items()}
print(json.dumps(out), flush=True)
