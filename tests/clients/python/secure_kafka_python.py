"""Produces, consumes in a group and commits with kafka-python over SASL_SSL.

usage: secure_kafka_python.py BOOTSTRAP TOPIC GROUP COUNT MECHANISM USER PASSWORD CAFILE
Prints one JSON line: {"acked": n, "consumed": n, "committed": offset, "errors": [...]}.
"""
import json
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

bootstrap, topic, group, count, mechanism, user, password, cafile = sys.argv[1:9]
count = int(count)
security = {
    "bootstrap_servers": bootstrap,
    "security_protocol": "SASL_SSL",
    "sasl_mechanism": mechanism,
    "sasl_plain_username": user,
    "sasl_plain_password": password,
    "ssl_cafile": cafile,
}
errors = []
producer = KafkaProducer(acks="all", **security)
futures = [producer.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode()) for i in range(count)]
acked = 0
for f in futures:
    try:
        f.get(timeout=60)
        acked += 1
    except Exception as e:
        errors.append(str(e))
producer.close()

consumer = KafkaConsumer(
    topic,
    group_id=group,
    auto_offset_reset="earliest",
    enable_auto_commit=False,
    **security,
)
consumed = 0
deadline = time.time() + 60
while consumed < count and time.time() < deadline:
    for records in consumer.poll(timeout_ms=1000).values():
        for r in records:
            if r.value != f"v{consumed}".encode():
                errors.append(f"record {consumed} is {r.value!r}")
            consumed += 1
consumer.commit()
committed = consumer.committed(TopicPartition(topic, 0))
consumer.close()
print(json.dumps({"acked": acked, "consumed": consumed, "committed": committed, "errors": errors}))
