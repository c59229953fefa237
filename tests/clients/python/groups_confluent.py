"""Consumer groups through librdkafka (confluent-kafka): three consumers share a 6-partition
topic, commit, one leaves and the others take over its partitions; then the AdminClient lists,
describes, reads, alters (refused while the group is active) and deletes.

usage: groups_confluent.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import json
import sys
import time

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

bootstrap = sys.argv[1]
topic, group = "orders", "billing"
out = {}

admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, 6, 1)])[topic].result(30)

assigned = {}


def consumer(name):
    c = Consumer({
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": name,
        "session.timeout.ms": 6000,
        "heartbeat.interval.ms": 500,
        "enable.auto.commit": False,
        "partition.assignment.strategy": "range",
        "log_level": 3,
    })

    def on_assign(_c, parts):
        assigned[name] = sorted(p.partition for p in parts)

    def on_revoke(_c, parts):
        assigned[name] = []

    c.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
    return c


def poll_until(consumers, done, limit_s=60):
    deadline = time.time() + limit_s
    while time.time() < deadline:
        for c in consumers:
            c.poll(0.05)
        if done():
            return True
    return False


consumers = {n: consumer(n) for n in ("c1", "c2", "c3")}
balanced = poll_until(
    consumers.values(),
    lambda: len(assigned) == 3 and sorted(len(v) for v in assigned.values()) == [2, 2, 2],
)
out["three_balanced"] = balanced
out["three_cover_all"] = sorted(p for v in assigned.values() for p in v) == list(range(6))

# Each member commits what it "processed": offset 10 + partition on its partitions.
for name, c in consumers.items():
    offs = [TopicPartition(topic, p, 10 + p) for p in assigned[name]]
    res = c.commit(offsets=offs, asynchronous=False)
    out.setdefault("commit_errors", []).extend(str(tp.error) for tp in res if tp.error)
committed = consumers["c1"].committed([TopicPartition(topic, p) for p in range(6)], timeout=10)
out["committed"] = sorted((tp.partition, tp.offset) for tp in committed)

# While the group is active, altering its offsets is refused.
try:
    res = admin.alter_consumer_group_offsets(
        [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 1)])]
    )[group].result(30)
    errors = [tp.error.name() for tp in res.topic_partitions if tp.error]
    out["alter_active"] = errors[0] if errors else "accepted"
except KafkaException as e:
    out["alter_active"] = e.args[0].name()

desc = admin.describe_consumer_groups([group])[group].result(30)
out["describe_active"] = [str(desc.state).split(".")[-1], len(desc.members)]

# One leaves: the other two take over its partitions.
consumers.pop("c3").close()
rebalanced = poll_until(
    consumers.values(),
    lambda: sorted(len(assigned[n]) for n in consumers) == [3, 3],
)
out["two_balanced"] = rebalanced
for c in consumers.values():
    c.close()

listed = admin.list_consumer_groups().result(30)
out["listed"] = sorted((g.group_id, str(g.state).split(".")[-1]) for g in listed.valid)
desc = admin.describe_consumer_groups([group])[group].result(30)
out["describe_empty"] = [str(desc.state).split(".")[-1], len(desc.members)]

# Empty: altering offsets is accepted and visible.
admin.alter_consumer_group_offsets(
    [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0, 5)])]
)[group].result(30)
got = admin.list_consumer_group_offsets(
    [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, 0), TopicPartition(topic, 1)])]
)[group].result(30)
out["after_alter"] = sorted((tp.partition, tp.offset) for tp in got.topic_partitions)

admin.delete_consumer_groups([group])[group].result(30)
listed = admin.list_consumer_groups().result(30)
out["after_delete"] = sorted(g.group_id for g in listed.valid)
print(json.dumps(out))
