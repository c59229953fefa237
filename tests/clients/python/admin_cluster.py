"""DescribeLogDirs, DescribeCluster, DescribeTopicPartitions, ListOffsets and OffsetForLeaderEpoch
through both Python clients.

usage: admin_cluster.py BOOTSTRAP first|again
Prints one JSON object; the Rust test (tests/admin_cluster.rs) checks it against the files on
disk and the broker's cluster. `first` creates the topics and produces; `again` runs after the
broker restarted on the same data (the epoch caches are rebuilt from the logs).
"""
import json
import sys
import time

from confluent_kafka import Consumer, Producer, TopicCollection, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic, OffsetSpec
from kafka import KafkaConsumer
from kafka.admin import KafkaAdminClient
from kafka.structs import OffsetAndMetadata, TopicPartition as KTopicPartition

bootstrap, phase = sys.argv[1], sys.argv[2]
out = {}
c = AdminClient({"bootstrap.servers": bootstrap, "client.id": "admin-cluster"})
k = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="admin-cluster-kp")

if phase == "first":
    for f in c.create_topics(
        [NewTopic("dirs", 3, 1), NewTopic("other", 1, 1), NewTopic("wide", 5, 1)],
        operation_timeout=10,
    ).values():
        f.result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i in range(40):
        producer.produce("dirs", b"v%03d" % i, key=b"k%d" % i, partition=0, timestamp=1_000_000 + i)
    for i in range(7):
        producer.produce("dirs", b"x" * 500, partition=2, timestamp=2_000_000 + i)
    producer.produce("other", b"o", partition=0)
    producer.flush(10)
    # A consumer commits (librdkafka stores the leader epoch of the record with the offset).
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "epochs",
            "enable.auto.commit": False,
            "auto.offset.reset": "earliest",
        }
    )
    consumer.assign([TopicPartition("dirs", 0, 0)])
    got = 0
    deadline = time.time() + 30
    while time.time() < deadline and got < 25:
        m = consumer.poll(0.5)
        if m is not None and m.error() is None:
            got += 1
            if got == 25:
                consumer.commit(message=m, asynchronous=False)
    consumer.close()
    # kafka-python commits with an explicit leader epoch 0.
    kc = KafkaConsumer(bootstrap_servers=bootstrap, group_id="epochs-kp", enable_auto_commit=False)
    kc.commit({KTopicPartition("dirs", 0): OffsetAndMetadata(30, "", 0)})
    kc.close()

# kafka-python: DescribeLogDirs of every topic, and of named partitions.
def log_dirs(answer):
    res = []
    for broker in answer:
        for d in broker["log_dirs"]:
            res.append(
                {
                    "broker": broker["broker"],
                    "log_dir": d["log_dir"],
                    "error_code": d["error_code"],
                    "total_bytes": d.get("total_bytes"),
                    "usable_bytes": d.get("usable_bytes"),
                    "partitions": {
                        "%s-%d" % (t["name"], p["partition_index"]): [
                            p["partition_size"],
                            p["offset_lag"],
                            p["is_future_key"],
                        ]
                        for t in d["topics"]
                        for p in t["partitions"]
                    },
                }
            )
    return res


# After a restart the broker opens every partition it holds in a background pass, which
# writes the marker files of partitions never written to: wait until two answers half a
# second apart agree, so that what is described is what the test then measures on disk.
deadline = time.time() + 15
previous = None
while time.time() < deadline:
    current = [d["partitions"] for d in log_dirs(k.describe_log_dirs())]
    if current == previous:
        break
    previous = current
    time.sleep(0.5)
out["log_dirs"] = log_dirs(k.describe_log_dirs())
out["log_dirs_named"] = log_dirs(k.describe_log_dirs({"dirs": [0, 2], "nope": [0]}))

# DescribeCluster: kafka-python speaks the API; librdkafka answers it from Metadata.
kc = k.describe_cluster()
out["kp_cluster"] = {
    "cluster_id": kc["cluster_id"],
    "controller_id": kc["controller_id"],
    "brokers": [[b["broker_id"], b["host"], b["port"]] for b in kc["brokers"]],
}
cc = c.describe_cluster(include_authorized_operations=True, request_timeout=10).result()
out["ck_cluster"] = {
    "cluster_id": cc.cluster_id,
    "controller_id": cc.controller.id,
    "brokers": [[n.id, n.host, n.port] for n in cc.nodes],
    "operations": sorted(op.name for op in (cc.authorized_operations or [])),
}

# DescribeTopicPartitions, page by page (two partitions a page).
pages = []
cursor = None
for _ in range(10):
    page = k.describe_topic_partitions(["wide", "dirs", "nope"], response_partition_limit=2, cursor=cursor)
    pages.append(
        [
            [t["name"], t["error_code"], [[p["partition_index"], p["leader_id"], p["leader_epoch"]] for p in t["partitions"]]]
            for t in page["topics"]
        ]
    )
    cursor = page["next_cursor"]
    if cursor is None:
        break
out["dtp_pages"] = pages

described = c.describe_topics(TopicCollection(["dirs"]), request_timeout=10)["dirs"].result()
out["ck_topic"] = [
    [p.id, p.leader.id, [r.id for r in p.replicas], [r.id for r in p.isr]] for p in described.partitions
]

# ListOffsets with the leader epochs it reports.
specs = {
    "earliest": OffsetSpec.earliest(),
    "latest": OffsetSpec.latest(),
    "max_timestamp": OffsetSpec.max_timestamp(),
    "at_ts": OffsetSpec.for_timestamp(1_000_010),
}
out["list_offsets"] = {}
for name, spec in specs.items():
    info = c.list_offsets({TopicPartition("dirs", 0): spec}, request_timeout=10)[TopicPartition("dirs", 0)].result()
    out["list_offsets"][name] = [info.offset, info.leader_epoch]

# The committed positions (with their leader epochs) are validated with OffsetForLeaderEpoch
# by both consumers before they fetch; they go on exactly from there.
consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": "epochs",
        "enable.auto.commit": False,
        "auto.offset.reset": "latest",
    }
)
committed = consumer.committed([TopicPartition("dirs", 0)], timeout=10)[0]
out["ck_committed"] = [committed.offset, committed.leader_epoch]
consumer.assign([TopicPartition("dirs", 0, committed.offset, leader_epoch=committed.leader_epoch)])
first = None
deadline = time.time() + 30
while time.time() < deadline and first is None:
    m = consumer.poll(0.5)
    if m is not None and m.error() is None:
        first = [m.offset(), m.value().decode(), m.leader_epoch()]
consumer.close()
out["ck_resumed"] = first

kc = KafkaConsumer(
    bootstrap_servers=bootstrap, group_id="epochs-kp", enable_auto_commit=False, auto_offset_reset="latest"
)
tp = KTopicPartition("dirs", 0)
kc.assign([tp])
meta = kc.committed(tp, metadata=True)
out["kp_committed"] = [meta.offset, meta.leader_epoch]
records = []
deadline = time.time() + 30
while time.time() < deadline and not records:
    for batch in kc.poll(timeout_ms=500).values():
        records.extend(batch)
kc.close()
out["kp_resumed"] = [records[0].offset, records[0].value.decode(), records[0].leader_epoch] if records else None
k.close()
print(json.dumps(out, sort_keys=True))
