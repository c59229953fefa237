"""A live member of a consumer group (confluent-kafka): joins, reads everything available,
commits it, prints `READY` with its member id, then stays in the group until killed.

usage: operator_hold.py BOOTSTRAP GROUP CLIENT_ID TOPIC...
"""
import sys
import time

from confluent_kafka import Consumer

bootstrap, group, client_id, topics = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
consumer = Consumer(
    {
        "bootstrap.servers": bootstrap,
        "group.id": group,
        "client.id": client_id,
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "session.timeout.ms": 10000,
    }
)
consumer.subscribe(topics)
deadline = time.time() + 30
while not consumer.assignment() and time.time() < deadline:
    consumer.poll(0.2)
assert consumer.assignment(), "no assignment"
# Read until every assigned partition is at its end, then commit the positions.
idle_since = time.time()
while time.time() - idle_since < 1.0 and time.time() < deadline:
    msg = consumer.poll(0.2)
    if msg is not None and not msg.error():
        idle_since = time.time()
consumer.commit(asynchronous=False)
print("READY", consumer.memberid(), flush=True)
while True:
    consumer.poll(0.5)
