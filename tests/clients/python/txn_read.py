"""Reads partition 0 of a topic from the beginning with confluent-kafka at an isolation level,
until no record arrives for --idle seconds (or --timeout passes).

usage: txn_read.py BOOTSTRAP TOPIC read_committed|read_uncommitted [--idle S] [--timeout S]
Prints one JSON line: {"values": [...], "offsets": [...], "position": n, "errors": [...]}.
"""
import argparse
import json
import time

from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING

ap = argparse.ArgumentParser()
ap.add_argument("bootstrap")
ap.add_argument("topic")
ap.add_argument("isolation", choices=["read_committed", "read_uncommitted"])
ap.add_argument("--idle", type=float, default=3)
ap.add_argument("--timeout", type=float, default=60)
args = ap.parse_args()

c = Consumer(
    {
        "bootstrap.servers": args.bootstrap,
        "group.id": "txn-read-unused",
        "enable.auto.commit": False,
        "isolation.level": args.isolation,
        "fetch.wait.max.ms": 100,
    }
)
c.assign([TopicPartition(args.topic, 0, OFFSET_BEGINNING)])
values, offsets, errors = [], [], []
deadline = time.time() + args.timeout
last = time.time()
while time.time() < deadline and time.time() - last < args.idle:
    m = c.poll(0.2)
    if m is None:
        continue
    if m.error():
        errors.append(str(m.error()))
        continue
    values.append(m.value().decode())
    offsets.append(m.offset())
    last = time.time()
position = c.position([TopicPartition(args.topic, 0)])[0].offset
c.close()
print(json.dumps({"values": values, "offsets": offsets, "position": position, "errors": errors}))
