"""Group administration through kafka-python: commits as a simple consumer, then the admin
client lists, describes (DescribeGroups' authorized operations must not be -1), reads and
deletes offsets (OffsetDelete, which confluent-kafka's Python admin lacks) and deletes groups.
kafka-python 3 builds its requests from Kafka's schemas and takes the highest version both
sides serve: DescribeGroups v6 (a deleted group is GROUP_ID_NOT_FOUND with Kafka's message),
FindCoordinator v6, and ListOffsets v10 for EARLIEST_LOCAL (-4) and LATEST_TIERED (-5), which a
broker without tiered storage answers with the log start and -1.

usage: groups_kafka_python.py BOOTSTRAP TOPIC
Prints one JSON object; the Rust test (tests/groups_clients.rs) checks it.
"""
import json
import sys

import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.protocol.admin import DescribeGroupsRequest
from kafka.protocol.consumer import ListOffsetsRequest, OffsetSpec
from kafka.protocol.metadata import FindCoordinatorRequest
from kafka.structs import OffsetAndMetadata

bootstrap = sys.argv[1]
topic, group = sys.argv[2], "kp-group"
out = {}

admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kp-admin")
admin.create_topics([NewTopic(topic, 2, 1)])

# A simple consumer (no subscription) commits offsets for the group: generation -1.
c = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
c.commit({
    TopicPartition(topic, 0): OffsetAndMetadata(3, "meta", -1),
    TopicPartition(topic, 1): OffsetAndMetadata(4, "", -1),
})
out["committed"] = [c.committed(TopicPartition(topic, p)) for p in (0, 1)]
c.close()

out["listed"] = sorted([g["group_id"], g.get("group_state")] for g in admin.list_groups())
described = admin.describe_groups([group], include_authorized_operations=True)[group]
out["described"] = [described["group_state"], described["protocol_type"], len(described["members"])]
out["offsets"] = sorted(
    (tp.partition, om.offset) for tp, om in admin.list_group_offsets({group: None})[group].items()
)
deleted = admin.delete_group_offsets(group, [TopicPartition(topic, 0)])
out["delete_offsets"] = sorted((tp.partition, err.__name__) for tp, err in deleted.items())
out["offsets_after"] = sorted(
    (tp.partition, om.offset) for tp, om in admin.list_group_offsets({group: None})[group].items()
)
result = admin.delete_groups([group, "never-was"])
pairs = result.items() if isinstance(result, dict) else result
out["delete_groups"] = sorted((g, err if isinstance(err, str) else getattr(err, "__name__", repr(err))) for g, err in pairs)

# The versions negotiated with the broker, and what the newest ones answer.
versions = admin._manager.broker_version_data
out["versions"] = {
    "DescribeGroups": versions.api_version(DescribeGroupsRequest),
    "FindCoordinator": versions.api_version(FindCoordinatorRequest),
    "ListOffsets": versions.api_version(ListOffsetsRequest),
}
gone = admin.describe_groups(["never-was"])["never-was"]
out["described_gone"] = [gone["group_state"], gone["error"]]
p = KafkaProducer(bootstrap_servers=bootstrap)
for i in range(5):
    p.send(topic, b"v%d" % i, partition=0, timestamp_ms=int(time.time() * 1000))
p.flush()
p.close()
tp = TopicPartition(topic, 0)
admin.delete_records({tp: 2})
specs = [OffsetSpec.EARLIEST, OffsetSpec.EARLIEST_LOCAL, OffsetSpec.LATEST_TIERED, OffsetSpec.LATEST]
out["offsets_by_spec"] = [
    [found.offset, found.timestamp]
    for found in (admin.list_partition_offsets({tp: spec})[tp] for spec in specs)
]
print(json.dumps(out))
