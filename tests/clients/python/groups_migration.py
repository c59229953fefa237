"""Online migration between the classic and the consumer protocol with real clients: a
librdkafka classic consumer and a kafka-python classic consumer form a classic group on a
6-partition topic; a librdkafka consumer with `group.protocol=consumer` joins (the group is
upgraded: it becomes a consumer group whose classic members are served from the broker's
assignment); `cohort groups` describes it; the consumer-protocol member leaves (the group is
downgraded to classic) and the classic members consume what is produced next. Every consumer
commits after each record it processes, from its own thread.

usage: groups_migration.py BOOTSTRAP COHORT_BINARY
Prints one JSON object; the Rust test (tests/groups_migration.rs) checks it.
"""
import json
import subprocess
import sys

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, NewTopic

from migration import Consumers, cli, group_type

bootstrap, cohort = sys.argv[1], sys.argv[2]
topic, group, parts = "mig", "mig-group", 6
batch = 300
admin = AdminClient({"bootstrap.servers": bootstrap})
admin.create_topics([NewTopic(topic, parts, 1)])[topic].result(30)
producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})


def produce(start, count):
    # Records carry the wall clock (librdkafka's default CreateTime).
    for i in range(start, start + count):
        producer.produce(topic, value=str(i).encode(), partition=i % parts)
    assert producer.flush(30) == 0


produce(0, batch)
group_consumers = Consumers(bootstrap, topic, group, parts)
assigned = group_consumers.assigned
wait_for, covers_all = group_consumers.wait_for, group_consumers.covers_all


def seen_distinct():
    return group_consumers.distinct()


out = {}
group_consumers.start_confluent("rd-classic", "classic")
group_consumers.start_kafka_python("kp-classic")
out["classic_formed"] = wait_for(
    lambda: covers_all(["rd-classic", "kp-classic"])
    and all(assigned.get(n) for n in ("rd-classic", "kp-classic"))
    and seen_distinct() >= batch,
    90,
)
out["type_before"] = group_type(admin, group)

# Upgrade: a consumer-protocol member joins the classic group; then records for all three.
group_consumers.start_confluent("rd-consumer", "consumer")
three = ["rd-classic", "kp-classic", "rd-consumer"]
out["mixed_formed"] = wait_for(
    lambda: covers_all(three) and all(assigned.get(n) for n in three), 90
)
out["type_mixed"] = group_type(admin, group)
out["cli_state"] = cli(cohort, bootstrap, group, "--state", "--verbose")
out["cli_members"] = cli(cohort, bootstrap, group, "--members", "--verbose")
produce(batch, batch)
out["consumed_mixed"] = wait_for(lambda: seen_distinct() >= 2 * batch, 90)

# Downgrade: the consumer-protocol member leaves; the classic members take everything.
group_consumers.stop("rd-consumer")
out["classic_again"] = wait_for(lambda: covers_all(["rd-classic", "kp-classic"]), 90)
out["type_after"] = group_type(admin, group)
produce(2 * batch, batch)
out["consumed_after"] = wait_for(lambda: seen_distinct() >= 3 * batch, 90)
group_consumers.stop("rd-classic", "kp-classic")

check = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "log_level": 3})
committed = check.committed([TopicPartition(topic, p) for p in range(parts)], timeout=10)
check.close()
out.update(group_consumers.summary())
out["committed"] = sorted((tp.partition, tp.offset) for tp in committed)


# The policy as DescribeConfigs shows it, and changed cluster-wide by name.
def policy():
    r = ConfigResource("BROKER", "1")
    entries = admin.describe_configs([r], request_timeout=10)[r].result()
    e = entries["group.consumer.migration.policy"]
    return [e.value, ConfigSource(e.source).name]


def alter_policy(value):
    # librdkafka's AdminClient cannot name the cluster-wide default (an empty broker name):
    # `cohort configs`, Kafka's kafka-configs.sh, does.
    done = subprocess.run(
        [
            cohort, "configs", "--bootstrap-server", bootstrap, "--entity-type", "brokers",
            "--entity-default", "--alter", "--add-config",
            f"group.consumer.migration.policy={value}",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return [done.returncode, done.stderr.strip().splitlines()[-1:]]


out["policy_flag"] = policy()
out["policy_bad"] = alter_policy("sideways")
out["policy_set"] = alter_policy("Upgrade")
out["policy_after"] = policy()
print(json.dumps(out))
