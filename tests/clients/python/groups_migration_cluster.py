"""A mixed group on a three-node cluster with real clients: a librdkafka classic consumer and a
kafka-python classic consumer form a classic group on a 6-partition topic; a librdkafka
consumer with `group.protocol=consumer` joins (the group is upgraded online to a consumer
group whose classic members are served from the broker's assignment); the kafka-python member
leaves (the group stays a consumer group: a consumer-protocol member is left) and a new
kafka-python classic consumer joins the consumer group. Records are produced in each phase;
every consumer commits each record it processes (synchronously) before counting it, so the
consumers' own record says whether a record was consumed twice or skipped. The group's type
and members are described while both kinds are in it (`cohort groups --describe --members
--verbose` shows Kafka's UPGRADED column).

usage: groups_migration_cluster.py BOOTSTRAP TOPIC GROUP   (COHORT_BIN: the broker binary)
Prints one JSON object; the Rust test (tests/cluster_kip848.rs) checks it.
"""
import json
import os
import sys

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.admin import NewTopic

from kip848 import admin_client, fast_heartbeats, produce
from migration import Consumers, cli, group_type

bootstrap, topic, group = sys.argv[1], sys.argv[2], sys.argv[3]
cohort = os.environ["COHORT_BIN"]
parts, batch = 6, 300

admin = admin_client(bootstrap)
fast_heartbeats(bootstrap)
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)
group_consumers = Consumers(bootstrap, topic, group, parts)
wait_for, covers_all, each_holds = (
    group_consumers.wait_for,
    group_consumers.covers_all,
    group_consumers.each_holds,
)
out = {}


def balanced_and_consumed(names, records):
    """The named consumers hold every partition between them, each some, and `records`
    distinct records have been consumed."""
    return wait_for(
        lambda: covers_all(names) and each_holds(names) and group_consumers.distinct() >= records,
        120,
    )


def describe(phase):
    out[f"type_{phase}"] = group_type(admin, group)
    out[f"cli_members_{phase}"] = cli(cohort, bootstrap, group, "--members", "--verbose")


# A classic group of two.
produce(bootstrap, topic, parts, 0, batch)
group_consumers.start_confluent("rd-classic", "classic")
group_consumers.start_kafka_python("kp-classic")
out["classic_formed"] = balanced_and_consumed(["rd-classic", "kp-classic"], batch)
out["type_classic"] = group_type(admin, group)

# A consumer-protocol member joins: the group is upgraded and mixed.
group_consumers.start_confluent("rd-consumer", "consumer")
three = ["rd-classic", "kp-classic", "rd-consumer"]
out["mixed_formed"] = balanced_and_consumed(three, batch)
describe("mixed")
produce(bootstrap, topic, parts, batch, batch)
out["mixed_consumed"] = balanced_and_consumed(three, 2 * batch)

# A classic member leaves the mixed group: it stays a consumer group of both kinds.
group_consumers.stop("kp-classic")
two = ["rd-classic", "rd-consumer"]
out["after_leave_formed"] = balanced_and_consumed(two, 2 * batch)
describe("after_leave")
produce(bootstrap, topic, parts, 2 * batch, batch)
out["after_leave_consumed"] = balanced_and_consumed(two, 3 * batch)

# A new classic member joins the consumer group (a classic JoinGroup served by the consumer
# group's coordinator).
group_consumers.start_kafka_python("kp-classic-2")
three = ["rd-classic", "rd-consumer", "kp-classic-2"]
out["after_join_formed"] = balanced_and_consumed(three, 3 * batch)
describe("after_join")
produce(bootstrap, topic, parts, 3 * batch, batch)
out["after_join_consumed"] = balanced_and_consumed(three, 4 * batch)
group_consumers.stop(*three)

out.update(group_consumers.summary())
check = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3})
tps = [TopicPartition(topic, p) for p in range(parts)]
out["committed"] = sorted([tp.partition, tp.offset] for tp in check.committed(tps, timeout=10))
out["end_offsets"] = sorted(
    [p, check.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]] for p in range(parts)
)
check.close()
print(json.dumps(out))
