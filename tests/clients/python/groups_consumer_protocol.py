"""The consumer group protocol (KIP-848) with librdkafka (`group.protocol=consumer`): one
consumer joins, is assigned every partition by the broker, consumes half of the records and
commits; the AdminClient lists the group by type and describes it (ConsumerGroupDescribe);
the consumer leaves, a second one joins and resumes exactly at the committed offsets.

usage: groups_consumer_protocol.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import json
import sys
import time

from confluent_kafka import (
    Consumer,
    ConsumerGroupType,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
topic, group, total, parts = "kip848", "kip848-group", 300, 3
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
for i in range(total):
    producer.produce(topic, value=str(i).encode(), partition=i % parts)
assert producer.flush(30) == 0

errors = []


def consumer(name):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "group.protocol": "consumer",
        "client.id": name,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "log_level": 3,
    })
    c.subscribe([topic])
    return c


def consume(c, want, seconds):
    got = []
    deadline = time.time() + seconds
    while time.time() < deadline and len(got) < want:
        msg = c.poll(0.1)
        if msg is None:
            continue
        if msg.error():
            errors.append(msg.error().name())
            continue
        got.append((msg.partition(), msg.offset()))
    return got


out = {}
c1 = consumer("c1")
first = consume(c1, total // 2, 30)
out["c1_assignment"] = sorted(tp.partition for tp in c1.assignment())
c1.commit(asynchronous=False)
committed = c1.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
# A partition c1 read nothing from has no committed offset (OFFSET_INVALID, -1001).
out["committed_first"] = sum(tp.offset for tp in committed if tp.offset >= 0)

listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(30)
out["listed_consumer"] = sorted((g.group_id, g.type.name) for g in listed.valid)
listed = admin.list_consumer_groups(types={ConsumerGroupType.CLASSIC}).result(30)
out["listed_classic"] = sorted(g.group_id for g in listed.valid)
described = admin.describe_consumer_groups([group])[group].result(30)
out["described"] = [
    described.state.name,
    described.type.name,
    [m.client_id for m in described.members],
    sorted(tp.partition for m in described.members for tp in m.assignment.topic_partitions),
]
c1.close()

c2 = consumer("c2")
second = consume(c2, total - len(first), 30)
out["c2_assignment"] = sorted(tp.partition for tp in c2.assignment())
c2.commit(asynchronous=False)
committed = c2.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
c2.close()
out["consumed"] = len(first) + len(second)
out["distinct"] = len(set(first) | set(second))
out["committed_end"] = sorted((tp.partition, tp.offset) for tp in committed)
out["errors"] = sorted(set(errors))
print(json.dumps(out))
