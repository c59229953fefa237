"""kafka-python's describe_log_dirs over a three-node cluster (it asks every broker), and a
librdkafka consumer resuming from committed offsets with leader epochs on every partition (it
validates each with OffsetForLeaderEpoch at the partition's owner).

usage: admin_cluster_nodes.py BOOTSTRAP TOPIC PARTITIONS
Prints one JSON object; tests/admin_cluster_nodes.rs checks it.
"""
import json
import sys
import time

from confluent_kafka import Consumer, TopicPartition
from kafka.admin import KafkaAdminClient

bootstrap, topic, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = {}
k = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="admin-cluster-nodes")
dirs = {}
for broker in k.describe_log_dirs():
    for d in broker["log_dirs"]:
        for t in d["topics"]:
            if t["name"] == topic:
                for p in t["partitions"]:
                    dirs["%s-%d" % (topic, p["partition_index"])] = [broker["broker"], p["partition_size"]]
out["log_dirs"] = dirs
k.close()

# Commit offset 1 (with the record's leader epoch) on every partition, then resume from it.
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "nodes-epochs", "enable.auto.commit": False})
c.assign([TopicPartition(topic, p, 0) for p in range(count)])
seen = set()
deadline = time.time() + 30
while time.time() < deadline and len(seen) < count:
    m = c.poll(0.5)
    if m is not None and m.error() is None and m.partition() not in seen and m.offset() == 0:
        seen.add(m.partition())
        c.commit(message=m, asynchronous=False)
c.close()
c = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": "nodes-epochs",
        "enable.auto.commit": False,
        "auto.offset.reset": "latest",
    }
)
committed = c.committed([TopicPartition(topic, p) for p in range(count)], timeout=10)
out["committed"] = sorted([tp.partition, tp.offset, tp.leader_epoch] for tp in committed)
c.assign(committed)
resumed = {}
deadline = time.time() + 30
while time.time() < deadline and len(resumed) < count:
    m = c.poll(0.5)
    if m is not None and m.error() is None and m.partition() not in resumed:
        resumed[m.partition()] = [m.partition(), m.offset(), m.leader_epoch()]
c.close()
out["resumed"] = sorted(resumed.values())
print(json.dumps(out, sort_keys=True))
