"""What confluent-kafka's AdminClient sees, for the `cohort configs` / `cohort topics --alter` /
`cohort records --delete` tests (tests/operator_admin.rs), plus produce with explicit
timestamps for the lag-in-seconds test.

usage: operator_admin.py BOOTSTRAP configs TYPE NAME [SOURCE]
  {key: [value, source name]} of every entry not from DEFAULT_CONFIG (TYPE topic|broker),
  or only those from SOURCE (a ConfigSource name).
usage: operator_admin.py BOOTSTRAP partitions TOPIC
  {"partitions": n} from the cluster metadata.
usage: operator_admin.py BOOTSTRAP earliest TOPIC N
  {"earliest": [offset of partition 0..N-1]} by ListOffsets EARLIEST.
usage: operator_admin.py BOOTSTRAP produce TOPIC PARTITION TS[,TS...]
  One record per timestamp (CreateTime, ms since the epoch) to TOPIC-PARTITION.
usage: operator_admin.py BOOTSTRAP commit GROUP TOPIC PARTITION OFFSET
  Commits OFFSET for GROUP without joining (a simple consumer's commit).
Prints one JSON object.
"""
import json
import sys

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource, OffsetSpec

bootstrap, what = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "operator-admin"})
out = {}

if what == "configs":
    kind = {"topic": ConfigResource.Type.TOPIC, "broker": ConfigResource.Type.BROKER}[args[0]]
    resource = ConfigResource(kind, args[1])
    entries = admin.describe_configs([resource], request_timeout=15)[resource].result(timeout=30)
    keep = (lambda s: s.name == args[2]) if len(args) > 2 else (
        lambda s: s != ConfigSource.DEFAULT_CONFIG
    )
    out = {
        k: [e.value, ConfigSource(e.source).name]
        for k, e in entries.items()
        if keep(ConfigSource(e.source))
    }
elif what == "partitions":
    md = admin.list_topics(topic=args[0], timeout=15)
    out = {"partitions": len(md.topics[args[0]].partitions)}
elif what == "earliest":
    topic, n = args[0], int(args[1])
    wanted = {TopicPartition(topic, p): OffsetSpec.earliest() for p in range(n)}
    got = admin.list_offsets(wanted, request_timeout=15)
    out = {"earliest": [got[TopicPartition(topic, p)].result(timeout=30).offset for p in range(n)]}
elif what == "produce":
    topic, partition = args[0], int(args[1])
    stamps = [int(t) for t in args[2].split(",")]
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for i, ts in enumerate(stamps):
        producer.produce(topic, value=b"v%d" % i, partition=partition, timestamp=ts)
    left = producer.flush(20)
    assert left == 0, f"{left} records not delivered"
    out = {"produced": len(stamps)}
elif what == "commit":
    group, topic, partition, offset = args[0], args[1], int(args[2]), int(args[3])
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    c.commit(offsets=[TopicPartition(topic, partition, offset)], asynchronous=False)
    c.close()
    out = {"committed": offset}
else:
    raise SystemExit(f"unknown command {what}")
print(json.dumps(out, sort_keys=True))
