"""Three librdkafka consumers with `group.protocol=consumer` share a 6-partition topic: the
broker's assignor balances them (2 each); one leaves and the other two take its partitions
(3 each); a new one joins and the group is balanced again. Records are produced in each phase
and every one must be consumed exactly once; every consumed record is committed (OffsetCommit
v9 with the member epoch) before its partition can move, so the committed offsets at the end are
the log end. An ownership ledger built from the assign/revoke callbacks records any partition
given to a member while another still held it.

usage: groups_kip848_three.py BOOTSTRAP TOPIC GROUP
Prints one JSON object; the Rust test (tests/groups_clients.rs, tests/cluster_kip848.rs)
checks it.
"""
import json
import sys

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import NewTopic

from kip848 import Ledger, Member, admin_client, distinct, fast_heartbeats, poll_until, produce

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
parts, batch = 6, 300

admin = admin_client(bootstrap)
fast_heartbeats(bootstrap)
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)

ledger = Ledger()
out = {}
members = {n: Member(bootstrap, group, n, ledger, [topic]) for n in ("c1", "c2", "c3")}
everyone = list(members.values())


def live():
    return list(members.values())


def balanced(names, want):
    return lambda: ledger.counts(names) == want and len(ledger.owner) == parts


out["three_balanced"] = poll_until(live(), balanced(["c1", "c2", "c3"], [2, 2, 2]), 60)
produce(bootstrap, topic, parts, 0, batch)
out["first_consumed"] = poll_until(live(), lambda: distinct(everyone) >= batch, 60)

members.pop("c3").close()
out["after_leave_balanced"] = poll_until(live(), balanced(["c1", "c2"], [3, 3]), 60)
out["after_leave"] = ledger.counts(["c1", "c2"])
produce(bootstrap, topic, parts, batch, batch)
out["second_consumed"] = poll_until(live(), lambda: distinct(everyone) >= 2 * batch, 60)

members["c4"] = Member(bootstrap, group, "c4", ledger, [topic])
everyone.append(members["c4"])
out["after_join_balanced"] = poll_until(live(), balanced(["c1", "c2", "c4"], [2, 2, 2]), 60)
out["after_join"] = ledger.counts(["c1", "c2", "c4"])
produce(bootstrap, topic, parts, 2 * batch, batch)
out["third_consumed"] = poll_until(live(), lambda: distinct(everyone) >= 3 * batch, 60)

# The broker's view while the three are stable (ConsumerGroupDescribe): each member's current
# assignment is its target and no partition is listed twice.
described = admin.describe_consumer_groups([group])[group].result(30)
current = sorted(tp.partition for m in described.members for tp in m.assignment.topic_partitions)
out["described"] = {
    "state": described.state.name,
    "type": described.type.name,
    "members": sorted(m.client_id for m in described.members),
    "partitions": current,
    "target_is_current": all(
        sorted((tp.topic, tp.partition) for tp in m.assignment.topic_partitions)
        == sorted((tp.topic, tp.partition) for tp in m.target_assignment.topic_partitions)
        for m in described.members
    ),
}
for m in live():
    m.close()

seen = [(t, p, o) for m in everyone for (t, p, o, _) in m.seen]
keys = [k for m in everyone for (_, _, _, k) in m.seen]
out["consumed"] = len(seen)
out["distinct"] = len(set(seen))
out["distinct_keys"] = len(set(keys))
out["commit_errors"] = sorted({e for m in everyone for e in m.commit_errors})
out["violations"] = ledger.violations
offsets = admin.list_consumer_group_offsets(
    [ConsumerGroupTopicPartitions(group, [TopicPartition(topic, p) for p in range(parts)])]
)[group].result(30)
out["committed"] = sorted([tp.partition, tp.offset] for tp in offsets.topic_partitions)
print(json.dumps(out))
