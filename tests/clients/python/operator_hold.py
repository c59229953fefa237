"""A live member of a consumer group (confluent-kafka): joins, reads everything available,
commits it, prints `READY` with its member id, then stays in the group until killed.

usage: operator_hold.py BOOTSTRAP GROUP CLIENT_ID TOPIC...
COHORT_GROUP_PROTOCOL=consumer makes it a member of the consumer group protocol (KIP-848),
whose session the broker owns.
"""
import os
import sys
import time

from confluent_kafka import Consumer, KafkaError, KafkaException

bootstrap, group, client_id, topics = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
config = {
    "bootstrap.servers": bootstrap,
    "group.id": group,
    "client.id": client_id,
    "enable.auto.commit": False,
    "auto.offset.reset": "earliest",
}
if os.environ.get("COHORT_GROUP_PROTOCOL") == "consumer":
    config["group.protocol"] = "consumer"
else:
    config["session.timeout.ms"] = 10000
consumer = Consumer(config)
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
try:
    consumer.commit(asynchronous=False)
except KafkaException as e:
    # A member that joined after the group had read everything has nothing to commit.
    if e.args[0].code() != KafkaError._NO_OFFSET:
        raise
print("READY", consumer.memberid(), flush=True)
while True:
    consumer.poll(0.5)
