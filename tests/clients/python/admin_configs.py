"""DescribeConfigs / IncrementalAlterConfigs / AlterConfigs / CreatePartitions / DeleteRecords
through both Python admin clients, and a consumer picking up a new partition.

usage: admin_configs.py BOOTSTRAP first|again
Prints one JSON object; the Rust test (tests/admin_configs.rs) checks it. `again` runs after
the broker restarted on the same data and reads back what `first` changed.
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)
from kafka.admin import ConfigResource as KConfigResource
from kafka.admin import ConfigResourceType as KType
from kafka.admin import KafkaAdminClient
from kafka.structs import TopicPartition as KTopicPartition

bootstrap, phase = sys.argv[1], sys.argv[2]
out = {}
c = AdminClient({"bootstrap.servers": bootstrap, "client.id": "admin-configs"})


def one(futures):
    """The outcome of each future: "ok" or the Kafka error's name (and message)."""
    res = {}
    for key, f in futures.items():
        try:
            f.result()
            res[str(key)] = "ok"
        except KafkaException as e:
            res[str(key)] = [e.args[0].name(), e.args[0].str()]
    return res


def described(resource, keys):
    """{key: [value, source name, read_only]} of `keys` in `resource`, or the error name."""
    try:
        entries = c.describe_configs([resource], request_timeout=10)[resource].result()
    except KafkaException as e:
        return e.args[0].name()
    return {
        k: [entries[k].value, ConfigSource(entries[k].source).name, entries[k].is_read_only]
        for k in keys
        if k in entries
    }


def synonyms(resource, key):
    entries = c.describe_configs([resource], request_timeout=10)[resource].result()
    return [[s.name, s.value, ConfigSource(s.source).name] for s in entries[key].synonyms.values()]


topic = ConfigResource("TOPIC", "cfg")
keys = ["retention.ms", "segment.bytes", "cleanup.policy", "max.message.bytes"]

if phase == "first":
    one(c.create_topics([NewTopic("cfg", 1, 1, config={"retention.ms": "60000"})], operation_timeout=10))
    one(c.create_topics([NewTopic("grow", 1, 1), NewTopic("rec", 1, 1), NewTopic("kp", 1, 1)], operation_timeout=10))
    out["created"] = described(topic, keys)
    out["synonyms"] = synonyms(topic, "retention.ms")
    alter = ConfigResource(
        "TOPIC",
        "cfg",
        incremental_configs=[
            ConfigEntry("segment.bytes", "2097152", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("retention.ms", None, incremental_operation=AlterConfigOpType.DELETE),
            ConfigEntry("cleanup.policy", "compact", incremental_operation=AlterConfigOpType.APPEND),
        ],
    )
    out["alter"] = one(c.incremental_alter_configs([alter]))
    out["altered"] = described(topic, keys)
    bad = ConfigResource(
        "TOPIC",
        "cfg",
        incremental_configs=[ConfigEntry("segment.bytes", "12", incremental_operation=AlterConfigOpType.SET)],
    )
    out["bad"] = one(c.incremental_alter_configs([bad]))
    dry = ConfigResource(
        "TOPIC",
        "cfg",
        incremental_configs=[ConfigEntry("max.message.bytes", "5000", incremental_operation=AlterConfigOpType.SET)],
    )
    out["validate_only"] = one(c.incremental_alter_configs([dry], validate_only=True))
    out["unknown_topic"] = described(ConfigResource("TOPIC", "never-was"), keys)
    out["broker"] = described(ConfigResource("BROKER", "1"), ["num.partitions", "node.id"])
    broker_alter = ConfigResource(
        "BROKER",
        "1",
        incremental_configs=[ConfigEntry("num.partitions", "3", incremental_operation=AlterConfigOpType.SET)],
    )
    out["broker_alter"] = {k: v[0] for k, v in one(c.incremental_alter_configs([broker_alter])).items()}

    # kafka-python: its own codec, and the older AlterConfigs (replace all overrides).
    k = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="admin-configs-kp")
    r = k.alter_configs(
        [KConfigResource(KType.TOPIC, "kp", configs={"retention.ms": "3600000"})], incremental=False
    )
    out["kp_alter"] = str(r)
    r = k.describe_configs([KConfigResource(KType.TOPIC, "kp")], config_filter="all")
    kp = r["topic"]["kp"]
    out["kp_describe"] = [kp["retention.ms"]["value"], str(kp["retention.ms"]["config_source"]), len(kp)]
    k.create_partitions({"kp": 3})
    out["kp_partitions"] = len(k.describe_topics(["kp"])[0]["partitions"])

    # CreatePartitions while a classic consumer of the topic runs.
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "grow-group",
            "auto.offset.reset": "earliest",
            "topic.metadata.refresh.interval.ms": 1000,
        }
    )
    consumer.subscribe(["grow"])
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce("grow", b"p0", partition=0)
    producer.flush(10)
    seen = set()
    deadline = time.time() + 30
    while time.time() < deadline and 0 not in seen:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            seen.add(m.partition())
    out["grow"] = one(c.create_partitions([NewPartitions("grow", 2)]))
    out["grow_again"] = {k: v[0] for k, v in one(c.create_partitions([NewPartitions("grow", 2)])).items()}
    out["shrink"] = {k: v[0] for k, v in one(c.create_partitions([NewPartitions("grow", 1)])).items()}
    # librdkafka learns of partition 1 from Metadata before it may produce there.
    deadline = time.time() + 30
    while time.time() < deadline:
        if len(producer.list_topics("grow", timeout=5).topics["grow"].partitions) == 2:
            break
        time.sleep(0.2)
    producer.produce("grow", b"p1", partition=1)
    producer.flush(10)
    deadline = time.time() + 60
    while time.time() < deadline and 1 not in seen:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            seen.add(m.partition())
    out["grow_consumed"] = sorted(seen)
    consumer.close()

    # DeleteRecords, then ListOffsets and a Fetch agree.
    for i in range(10):
        producer.produce("rec", b"r%d" % i, partition=0)
    producer.flush(10)
    r = one(c.delete_records([TopicPartition("rec", 0, 4)]))
    out["delete_records"] = list(r.values())
    out["delete_records_past_end"] = [
        v[0] for v in one(c.delete_records([TopicPartition("rec", 0, 50)])).values()
    ]
    k.delete_records({KTopicPartition("rec", 0): 6})
    k.close()

earliest = c.list_offsets({TopicPartition("rec", 0): OffsetSpec.earliest()})
out["earliest"] = [f.result().offset for f in earliest.values()]
latest = c.list_offsets({TopicPartition("rec", 0): OffsetSpec.latest()})
out["latest"] = [f.result().offset for f in latest.values()]
reader = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": "rec-reader-" + phase,
        "enable.auto.commit": False,
        # Offset 0 is below the log start now: the Fetch answers OFFSET_OUT_OF_RANGE and the
        # consumer resets to the earliest offset ListOffsets gives.
        "auto.offset.reset": "earliest",
    }
)
reader.assign([TopicPartition("rec", 0, 0)])
first = None
deadline = time.time() + 30
while time.time() < deadline and first is None:
    m = reader.poll(0.5)
    if m is not None and m.error() is None:
        first = [m.offset(), m.value().decode()]
reader.close()
out["first_fetched"] = first
if phase == "again":
    out["read_back"] = described(topic, keys)
    md = c.list_topics(timeout=10)
    out["partitions"] = {t: len(md.topics[t].partitions) for t in ["grow", "kp"]}
print(json.dumps(out, sort_keys=True))
