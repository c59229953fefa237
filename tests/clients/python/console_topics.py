"""Two topics for the console's topics pages, and what the Admin clients say about them.

usage: console_topics.py BOOTSTRAP setup|report

setup:  `shop-orders` (3 partitions: 30, 20 and no records; retention.ms and retention.bytes
        set by IncrementalAlterConfigs) and `shop-trimmed` (2 partitions: 25 and 10 records,
        DeleteRecords moves partition 0's log start to 15). Records carry the producer's
        wall-clock timestamps.
report: one JSON object per topic from confluent-kafka's AdminClient (describe_topics,
        list_offsets earliest/latest/max_timestamp, describe_configs) and kafka-python's
        describe_log_dirs; tests/console_live.rs compares it with the pages.
"""
import json
import sys

from confluent_kafka import Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    OffsetSpec,
)
from kafka.admin import KafkaAdminClient

bootstrap, phase = sys.argv[1], sys.argv[2]
TOPICS = {"shop-orders": 3, "shop-trimmed": 2}
a = AdminClient({"bootstrap.servers": bootstrap, "client.id": "console-topics"})


def results(futures):
    return {k: f.result() for k, f in futures.items()}


if phase == "setup":
    results(a.create_topics([NewTopic(t, n, 1) for t, n in TOPICS.items()], operation_timeout=10))
    p = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for topic, counts in [("shop-orders", [30, 20, 0]), ("shop-trimmed", [25, 10])]:
        for partition, n in enumerate(counts):
            for i in range(n):
                p.produce(topic, value=b"record-%d" % i, key=b"k%d" % i, partition=partition)
    assert p.flush(30) == 0, "undelivered records"
    alter = ConfigResource(
        "TOPIC",
        "shop-orders",
        incremental_configs=[
            ConfigEntry("retention.ms", "3600000", incremental_operation=AlterConfigOpType.SET),
            ConfigEntry("retention.bytes", "10485760", incremental_operation=AlterConfigOpType.SET),
        ],
    )
    results(a.incremental_alter_configs([alter]))
    results(a.delete_records([TopicPartition("shop-trimmed", 0, 15)]))
    print(json.dumps({"setup": "ok"}))
    sys.exit(0)

out = {t: {"partitions": {}, "configs": {}} for t in TOPICS}
described = results(a.describe_topics(TopicCollection(list(TOPICS))))
for name, d in described.items():
    for p in d.partitions:
        out[name]["partitions"][str(p.id)] = {
            "leader": p.leader.id,
            "replicas": [r.id for r in p.replicas],
        }
wanted = [TopicPartition(t, p) for t, n in TOPICS.items() for p in range(n)]
for field, spec in [
    ("earliest", OffsetSpec.earliest()),
    ("latest", OffsetSpec.latest()),
    ("max_timestamp", OffsetSpec.max_timestamp()),
]:
    for tp, info in results(a.list_offsets({tp: spec for tp in wanted})).items():
        entry = out[tp.topic]["partitions"][str(tp.partition)]
        entry[field] = info.offset
        if field == "max_timestamp":
            entry["max_timestamp_ms"] = info.timestamp
for t in TOPICS:
    resource = ConfigResource("TOPIC", t)
    entries = a.describe_configs([resource], request_timeout=10)[resource].result()
    out[t]["configs"] = {k: [e.value, ConfigSource(e.source).name] for k, e in entries.items()}
# Sizes as DescribeLogDirs reports them (after list_offsets above opened every partition).
k = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="console-topics-kp")
for broker in k.describe_log_dirs():
    for d in broker["log_dirs"]:
        for t in d["topics"]:
            if t["name"] in out:
                for p in t["partitions"]:
                    entry = out[t["name"]]["partitions"][str(p["partition_index"])]
                    entry["size"] = p["partition_size"]
k.close()
print(json.dumps(out))
