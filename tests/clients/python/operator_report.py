"""What two independent Admin implementations report about consumer groups: confluent-kafka's
AdminClient (librdkafka) and kafka-python's KafkaAdminClient (its own codec).

usage: operator_report.py BOOTSTRAP GROUP...
Prints one JSON object: {"confluent": {group: ...}, "kafka_python": {group: ...}} where each
group has "state", "members" ([member_id, client_id, host, ["topic:partition", ...]] sorted),
"committed" ({"topic:partition": offset}) and "log_end" ({"topic:partition": offset}).
"""
import json
import sys

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from kafka import TopicPartition as KTopicPartition
from kafka.admin import KafkaAdminClient
from kafka.admin import OffsetSpec as OffsetSpec_k

bootstrap, groups = sys.argv[1], sys.argv[2:]
out = {"confluent": {}, "kafka_python": {}}

admin = AdminClient({"bootstrap.servers": bootstrap})
described = admin.describe_consumer_groups(groups, request_timeout=10)
for g in groups:
    d = described[g].result()
    members = sorted(
        [
            m.member_id,
            m.client_id,
            m.host,
            sorted(f"{tp.topic}:{tp.partition}" for tp in (m.assignment.topic_partitions if m.assignment else [])),
        ]
        for m in d.members
    )
    offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(g)], request_timeout=10)[g].result()
    committed = {
        f"{tp.topic}:{tp.partition}": tp.offset for tp in offsets.topic_partitions if tp.offset >= 0
    }
    ends = {}
    if committed:
        specs = {
            TopicPartition(k.split(":")[0], int(k.split(":")[1])): OffsetSpec.latest() for k in committed
        }
        for tp, f in admin.list_offsets(specs, request_timeout=10).items():
            ends[f"{tp.topic}:{tp.partition}"] = f.result().offset
    out["confluent"][g] = {
        "state": d.state.name,
        "members": members,
        "committed": committed,
        "log_end": ends,
    }

kadmin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="operator-report")
described = kadmin.describe_groups(groups)
offsets = kadmin.list_group_offsets({g: None for g in groups})
for g in groups:
    info = described[g]
    members = []
    for m in info["members"]:
        assignment = []
        for t in (m.get("member_assignment") or {}).get("assigned_partitions", []):
            assignment.extend(f"{t['topic']}:{p}" for p in t["partitions"])
        members.append([m["member_id"], m["client_id"], m["client_host"], sorted(assignment)])
    committed = {f"{tp.topic}:{tp.partition}": om.offset for tp, om in offsets[g].items() if om.offset >= 0}
    ends = {}
    if committed:
        specs = {KTopicPartition(k.split(":")[0], int(k.split(":")[1])): OffsetSpec_k.LATEST for k in committed}
        ends = {f"{tp.topic}:{tp.partition}": r.offset for tp, r in kadmin.list_partition_offsets(specs).items()}
    out["kafka_python"][g] = {
        "state": info["group_state"],
        "members": sorted(members),
        "committed": committed,
        "log_end": ends,
    }
kadmin.close()
print(json.dumps(out, sort_keys=True))
