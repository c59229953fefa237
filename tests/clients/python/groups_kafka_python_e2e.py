"""End to end with kafka-python: 300 records over 6 partitions, three KafkaConsumers in one
group, commits after processing each poll's records; one consumer leaves half way and the
others take over. Every record is consumed exactly once.

usage: groups_kafka_python_e2e.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

bootstrap = sys.argv[1]
topic, group, total, parts = "kp-e2e", "kp-e2e-group", 300, 6
KafkaAdminClient(bootstrap_servers=bootstrap).create_topics([NewTopic(topic, parts, 1)])

producer = KafkaProducer(bootstrap_servers=bootstrap)
for i in range(total):
    producer.send(topic, value=str(i).encode(), partition=i % parts)
producer.flush(30)
producer.close()


def consumer(name):
    c = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id=name,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=6000,
        heartbeat_interval_ms=500,
    )
    c.subscribe([topic])
    return c


consumers = {n: consumer(n) for n in ("k1", "k2", "k3")}
seen = []
left = False
deadline = time.time() + 90
while time.time() < deadline and len(set(seen)) < total:
    for name, c in list(consumers.items()):
        batch = c.poll(timeout_ms=50, max_records=5)
        records = [r for rs in batch.values() for r in rs]
        for r in records:
            seen.append((r.partition, r.offset))
        if records:
            c.commit()
    if not left and len(seen) >= total // 2:
        consumers.pop("k3").close(autocommit=False)
        left = True

# The two left must end up sharing all six partitions.
deadline = time.time() + 30
while time.time() < deadline and sorted(len(c.assignment()) for c in consumers.values()) != [3, 3]:
    for c in consumers.values():
        c.poll(timeout_ms=50)

k1 = consumers["k1"]
out = {
    "consumed": len(seen),
    "distinct": len(set(seen)),
    "left": left,
    "after_leave": sorted(len(c.assignment()) for c in consumers.values()),
    "committed": sorted((p, k1.committed(TopicPartition(topic, p))) for p in range(parts)),
}
for c in consumers.values():
    c.close(autocommit=False)
print(json.dumps(out))
