"""CreateTopics / DeleteTopics / Metadata through both Python admin clients.

usage: admin_topics.py BOOTSTRAP
Prints one JSON object; the Rust test (tests/topics.rs) checks it.
"""
import json
import sys

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic as CNewTopic
from kafka.admin import KafkaAdminClient, NewTopic as KNewTopic
from kafka.errors import KafkaError

bootstrap = sys.argv[1]
out = {}

# kafka-python (pure Python, its own codec)
k = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="admin-kafka-python")
r = k.create_topics([KNewTopic("kp-topic", 3, 1, topic_configs={"retention.ms": "60000"})])
out["kp_create"] = [(t["name"], t["error_code"], t["num_partitions"]) for t in r["topics"]]
try:
    k.create_topics([KNewTopic("kp-topic", 1, 1)])
    out["kp_again"] = "no error"
except KafkaError as e:
    out["kp_again"] = type(e).__name__
out["kp_describe"] = [
    (t["name"], len(t["partitions"]), t["partitions"][0]["leader_id"]) for t in k.describe_topics(["kp-topic"])
]
k.delete_topics(["kp-topic"])
out["kp_after_delete"] = sorted(k.list_topics())
k.close()

# confluent-kafka (librdkafka)
c = AdminClient({"bootstrap.servers": bootstrap, "client.id": "admin-confluent"})
futures = c.create_topics(
    [
        CNewTopic("ck-topic", 2, 1, config={"cleanup.policy": "compact"}),
        CNewTopic("ck-rf3", 1, 3),
        CNewTopic("ck bad", 1, 1),
        CNewTopic("ck-cfg", 1, 1, config={"not.a.config": "1"}),
    ],
    operation_timeout=10,
)
res = {}
for name, f in futures.items():
    try:
        f.result()
        res[name] = "ok"
    except KafkaException as e:
        res[name] = e.args[0].name()
out["ck_create"] = res
md = c.list_topics(timeout=10)
out["ck_list"] = {name: len(t.partitions) for name, t in md.topics.items()}
futures = c.delete_topics(["ck-topic", "never-was"], operation_timeout=10)
res = {}
for name, f in futures.items():
    try:
        f.result()
        res[name] = "ok"
    except KafkaException as e:
        res[name] = e.args[0].name()
out["ck_delete"] = res
print(json.dumps(out, sort_keys=True))
