"""A regular-expression subscription with the consumer group protocol: librdkafka with
`group.protocol=consumer` subscribing to "^orders-.*" sends it as SubscribedTopicRegex and the
broker resolves it against its topics. Two members share orders-a; orders-b, created while they
run, is picked up and consumed; "other-x" and "xorders-c" (no full match) are never assigned.

usage: groups_kip848_regex.py BOOTSTRAP GROUP
Prints one JSON object; tests/groups_clients.rs checks it. COHORT_BIN is the broker binary.
"""
import json
import logging
import sys

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import NewTopic

from kip848 import Ledger, Member, admin_client, fast_heartbeats, poll_until, produce

bootstrap, group = sys.argv[1], sys.argv[2]
per_topic = 60

admin = admin_client(bootstrap)
fast_heartbeats(bootstrap)


def create(name, partitions):
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


create("orders-a", 3)
create("other-x", 2)
create("xorders-c", 2)


class Seen(Ledger):
    """The ledger, also remembering every topic any member was ever given."""

    def __init__(self):
        super().__init__()
        self.topics = set()

    def assign(self, name, tps):
        self.topics.update(tp.topic for tp in tps)
        super().assign(name, tps)


class Heartbeats(logging.Handler):
    """librdkafka's own account (debug=cgrp) of the ConsumerGroupHeartbeats it sends: proof
    that the regex goes to the broker (SubscribedTopicRegex) rather than being resolved by the
    client into topic names."""

    def __init__(self):
        super().__init__()
        self.regex_sent = False
        self.names_sent = False

    def emit(self, record):
        line = record.getMessage()
        if "ConsumerGroupHeartbeat of member id" not in line:
            return
        names = line.split('subscribed topics "', 1)[1].split('"', 1)[0]
        regex = line.split('subscribed topic regex "', 1)[1].split('"', 1)[0]
        # librdkafka prints the regex in parentheses and an unchanged field as NULL.
        self.regex_sent |= regex.strip("()") == "^orders-.*"
        self.names_sent |= names not in ("", "NULL", "(null)")


heartbeats = Heartbeats()
rdkafka_log = logging.getLogger("r1-rdkafka")
rdkafka_log.setLevel(logging.DEBUG)
rdkafka_log.addHandler(heartbeats)
rdkafka_log.propagate = False

ledger = Seen()
members = [
    Member(bootstrap, group, "r1", ledger, ["^orders-.*"],
           {"debug": "cgrp", "log_level": 7, "logger": rdkafka_log}),
    Member(bootstrap, group, "r2", ledger, ["^orders-.*"]),
]
out = {}


def owned(topic):
    return sorted(p for (t, p) in ledger.owner if t == topic)


def consumed(topic):
    return len({(t, p, o) for m in members for (t, p, o, _) in m.seen if t == topic})


out["orders_a_owned"] = poll_until(members, lambda: owned("orders-a") == [0, 1, 2], 60)
for topic, n in (("orders-a", 3), ("other-x", 2), ("xorders-c", 2)):
    produce(bootstrap, topic, n, 0, per_topic)
out["orders_a_consumed"] = poll_until(members, lambda: consumed("orders-a") >= per_topic, 60)

create("orders-b", 4)
produce(bootstrap, "orders-b", 4, 0, per_topic)
out["orders_b_owned"] = poll_until(members, lambda: owned("orders-b") == [0, 1, 2, 3], 60)
out["orders_b_consumed"] = poll_until(members, lambda: consumed("orders-b") >= per_topic, 60)
out["balanced"] = ledger.counts(["r1", "r2"]) in ([3, 4], [4, 3])

described = admin.describe_consumer_groups([group])[group].result(30)
out["described_topics"] = sorted({
    tp.topic for m in described.members for tp in m.assignment.topic_partitions
})
for m in members:
    m.close()

seen = [(t, p, o) for m in members for (t, p, o, _) in m.seen]
out["regex_sent"] = heartbeats.regex_sent
out["names_sent"] = heartbeats.names_sent
out["consumed"] = len(seen)
out["distinct"] = len(set(seen))
out["topics_ever_assigned"] = sorted(ledger.topics)
out["commit_errors"] = sorted({e for m in members for e in m.commit_errors})
out["violations"] = ledger.violations
wanted = [TopicPartition("orders-a", p) for p in range(3)]
wanted += [TopicPartition("orders-b", p) for p in range(4)]
offsets = admin.list_consumer_group_offsets(
    [ConsumerGroupTopicPartitions(group, wanted)]
)[group].result(30)
out["committed"] = sorted([tp.topic, tp.partition, tp.offset] for tp in offsets.topic_partitions)
print(json.dumps(out))
