"""State for the operator tests: topics, records with known timestamps, and an Empty consumer
group with known committed offsets, made with confluent-kafka (librdkafka).

usage: operator_setup.py BOOTSTRAP
Topics: orders (3 partitions, 10 records each), events (1 partition, 5 records). Record i of
every partition has timestamp BASE_MS + i * 1000. Group `billing` (protocol `consumer`, Empty
when this exits) has committed orders-0 at 4 and orders-1 at 7; orders-2 has no commit.
Prints one JSON object.
"""
import json
import sys
import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

BASE_MS = 1_700_000_000_000

bootstrap = sys.argv[1]
admin = AdminClient({"bootstrap.servers": bootstrap})
for name, f in admin.create_topics(
    [NewTopic("orders", 3, 1), NewTopic("events", 1, 1)], operation_timeout=10
).items():
    f.result()

producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
for p in range(3):
    for i in range(10):
        producer.produce("orders", value=b"o%d-%d" % (p, i), partition=p, timestamp=BASE_MS + i * 1000)
for i in range(5):
    producer.produce("events", value=b"e%d" % i, partition=0, timestamp=BASE_MS + i * 1000)
left = producer.flush(15)
assert left == 0, f"{left} records not delivered"

consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": "billing",
        "client.id": "billing-setup",
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
    }
)
consumer.subscribe(["orders"])
deadline = time.time() + 30
while not consumer.assignment() and time.time() < deadline:
    consumer.poll(0.2)
assert consumer.assignment(), "no assignment"
consumer.commit(offsets=[TopicPartition("orders", 0, 4), TopicPartition("orders", 1, 7)], asynchronous=False)
consumer.close()
print(json.dumps({"ok": True}))
