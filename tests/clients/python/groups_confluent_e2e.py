"""End to end with librdkafka: 600 records produced over 6 partitions, three consumers in one
group consume them, committing after processing each record; one consumer leaves half way and
the others take over its partitions. Every record is consumed exactly once (a clean leave
loses nothing and commits were synchronous, so nothing is redelivered).

usage: groups_confluent_e2e.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec

bootstrap = sys.argv[1]
topic, group, total, parts = "e2e", "e2e-group", 600, 6
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)

producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
for i in range(total):
    producer.produce(topic, value=str(i).encode(), partition=i % parts)
assert producer.flush(30) == 0

seen = []
assigned = {}


def consumer(name):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": name,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "log_level": 3,
    })
    c.subscribe([topic], on_assign=lambda _c, ps: assigned.__setitem__(name, len(ps)))
    return c


consumers = {n: consumer(n) for n in ("c1", "c2", "c3")}
left = False
deadline = time.time() + 90
while time.time() < deadline and len(set(seen)) < total:
    for name, c in list(consumers.items()):
        msg = c.poll(0.05)
        if msg is None or msg.error():
            continue
        seen.append((msg.partition(), msg.offset()))
        c.commit(message=msg, asynchronous=False)
    if not left and len(seen) >= total // 2:
        consumers.pop("c3").close()
        left = True

committed = consumers["c1"].committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
out = {
    "consumed": len(seen),
    "distinct": len(set(seen)),
    "left": left,
    "after_leave": sorted(assigned[n] for n in consumers),
    "committed": sorted((tp.partition, tp.offset) for tp in committed),
}
for c in consumers.values():
    c.close()
# Lag as the AdminClient sees it: log end (ListOffsets) minus committed = 0 everywhere.
ends = admin.list_offsets({TopicPartition(topic, p): OffsetSpec.latest() for p in range(parts)})
out["lag"] = sorted(
    (tp.partition, f.result(30).offset - dict(out["committed"])[tp.partition]) for tp, f in ends.items()
)
print(json.dumps(out))
